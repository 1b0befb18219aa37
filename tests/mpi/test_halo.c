/* Halo exchange plans (halo.h) built by hand on every rank, checked value by value.
 *
 * usage: mpiexec -n N test_halo
 * ranks: 1 2 3 4
 * Rank r owns 6 + 3r particles; owned particle i has global id base(r) + i.  A plan sends to every other rank
 * (all to all) the owned particles i >= 2 that a fixed rule picks, so counts are uneven, and rank 0 sends
 * nothing to the last rank although the two are neighbours.  Ghosts land after two padding slots, which must
 * stay untouched.  Three fields travel together: a scalar and a 3-vector of the particle store
 * (shard_halo_field_of) and a 2-component array of a "module block" whose owned slots start at local index 2
 * (send_base 2) and whose ghost slots follow its owned ones (recv_at = its owned count).  Values are exact
 * functions of the global id and the exchange number, so every received value is compared exactly; the bytes
 * counted must be the bytes sent; shard_halo_update with the same neighbour sets keeps the graph communicator,
 * and a change on some ranks only (ranks 0 and 1 stop being neighbours; at 1 rank, rank 0 becomes its own
 * neighbour) re-creates it on all.  Every rank exits 0 (pass) or 1 (fail). */
#include "shard/comm.h"
#include "shard/halo.h"
#include "test.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { PAD = 2, BLOCK_FIRST = 2, NPHASE = 4 };
static const double SENTINEL = -1.0e300;
static long n_compared = 0; /* values compared, for the summary line */

static int n_own(int r) { return 6 + 3 * r; }
static int base(int r) { return r * 6 + 3 * r * (r - 1) / 2; }

/* Phases 0, 1: all to all (no neighbours at 1 rank).  Phases 2, 3: ranks 0 and 1 drop each other (at 1 rank:
 * rank 0 is its own neighbour).  Phases 1 and 3 change only the counts of the phase before. */
static int is_nbr(int size, int r, int q, int ph)
{
    if (size == 1)
        return ph >= 2;
    if (q == r)
        return 0;
    if (ph >= 2 && ((r == 0 && q == 1) || (r == 1 && q == 0)))
        return 0;
    return 1;
}

static int sends(int size, int r, int q, int i, int ph)
{
    if (!is_nbr(size, r, q, ph) || i < BLOCK_FIRST)
        return 0;
    if (ph == 0 && size >= 2 && r == 0 && q == size - 1)
        return 0; /* a neighbour that receives nothing */
    return (i * 7 + r * 3 + q * 5 + ph) % 4 < 2;
}

/* the values of global id g at exchange `it` */
static double val_a(int g, int it) { return g * 10.0 + it + 0.5; }
static double val_b(int g, int it, int k) { return g + 0.25 * k + 1000.0 * (k + 1) + 1.0e5 * it; }
static double val_c(int g, int it, int k) { return k == 0 ? -(double)g - it : (double)g * g + 0.5 * it; }

typedef struct plan {
    int n_nbr, nbr[64], send_count[64], recv_count[64];
    int32_t send_idx[4096];
    int n_send, n_recv;
    int ghost_gid[4096]; /* expected global id of each ghost, in neighbour order */
} plan;

static void make_plan(int size, int r, int ph, plan *pl)
{
    memset(pl, 0, sizeof *pl);
    for (int q = 0; q < size; q++) {
        if (!is_nbr(size, r, q, ph))
            continue;
        int k = pl->n_nbr++;
        pl->nbr[k] = q;
        for (int i = 0; i < n_own(r); i++)
            if (sends(size, r, q, i, ph))
                pl->send_idx[pl->n_send++] = i, pl->send_count[k]++;
        for (int i = 0; i < n_own(q); i++)
            if (sends(size, q, r, i, ph))
                pl->ghost_gid[pl->n_recv++] = base(q) + i, pl->recv_count[k]++;
    }
}

/* Local store: owned [0, n), padding [n, n + PAD), ghosts, 3 spare slots; block: owned [0, n - 2), ghosts, 3
 * spare slots. */
typedef struct arrays {
    int n;
    size_t slots, bslots;
    double *a, *b, *c;
} arrays;

static void fill(arrays *A, int rank, int it)
{
    for (size_t s = 0; s < A->slots; s++) {
        A->a[s] = SENTINEL;
        for (int k = 0; k < 3; k++)
            A->b[3 * s + k] = SENTINEL;
    }
    for (size_t s = 0; s < A->bslots; s++)
        A->c[2 * s] = A->c[2 * s + 1] = SENTINEL;
    for (int i = 0; i < A->n; i++) {
        int g = base(rank) + i;
        A->a[i] = val_a(g, it);
        for (int k = 0; k < 3; k++)
            A->b[3 * i + k] = val_b(g, it, k);
        if (i >= BLOCK_FIRST)
            for (int k = 0; k < 2; k++)
                A->c[2 * (i - BLOCK_FIRST) + k] = val_c(g, it, k);
    }
}

/* Compares every slot with what it must hold after exchange `it` of fields (a, b, c as flagged); returns the
 * number of wrong values (printing the first few). */
static int check(const arrays *A, const plan *pl, int rank, int it, int with_a, int with_c, const char *what)
{
    int bad = 0;
#define HALO_CMP(got, want, slot, field)                                                                          \
    do {                                                                                                         \
        double g_ = (got), w_ = (want);                                                                          \
        n_compared++;                                                                                            \
        if (memcmp(&g_, &w_, sizeof g_) != 0) {                                                                  \
            if (bad < 5)                                                                                         \
                fprintf(stderr, "FAIL rank %d, %s: %s slot %zu = %.17g, expected %.17g\n", rank, what, field,    \
                        (size_t)(slot), g_, w_);                                                                 \
            bad++;                                                                                               \
        }                                                                                                        \
    } while (0)
    size_t first = (size_t)A->n + PAD, bfirst = (size_t)(A->n - BLOCK_FIRST);
    for (size_t s = 0; s < A->slots; s++) {
        int g = -1; /* global id the slot holds, -1: must be untouched */
        if (s < (size_t)A->n)
            g = base(rank) + (int)s;
        else if (s >= first && s < first + (size_t)pl->n_recv)
            g = pl->ghost_gid[s - first];
        int owned = s < (size_t)A->n;
        int recv_a = with_a && g >= 0, recv_b = g >= 0;
        HALO_CMP(A->a[s], owned || recv_a ? val_a(g, it) : SENTINEL, s, "a");
        for (int k = 0; k < 3; k++)
            HALO_CMP(A->b[3 * s + k], recv_b ? val_b(g, it, k) : SENTINEL, s, "b");
    }
    for (size_t s = 0; s < A->bslots; s++) {
        int g = -1;
        if (s < bfirst)
            g = base(rank) + BLOCK_FIRST + (int)s;
        else if (s < bfirst + (size_t)pl->n_recv && with_c)
            g = pl->ghost_gid[s - bfirst];
        for (int k = 0; k < 2; k++)
            HALO_CMP(A->c[2 * s + k], g >= 0 ? val_c(g, it, k) : SENTINEL, s, "c");
    }
#undef HALO_CMP
    return bad;
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int rank = shard_comm_rank(c), size = shard_comm_size(c);
    static plan pl[NPHASE];
    int max_recv = 0;
    for (int ph = 0; ph < NPHASE; ph++) {
        make_plan(size, rank, ph, &pl[ph]);
        if (pl[ph].n_recv > max_recv)
            max_recv = pl[ph].n_recv;
    }
    arrays A = {.n = n_own(rank)};
    A.slots = (size_t)A.n + PAD + (size_t)max_recv + 3;
    A.bslots = (size_t)(A.n - BLOCK_FIRST) + (size_t)max_recv + 3;
    A.a = malloc(A.slots * sizeof *A.a), A.b = malloc(3 * A.slots * sizeof *A.b);
    A.c = malloc(2 * A.bslots * sizeof *A.c);
    size_t recv_first = (size_t)A.n + PAD;
    int bad = 0;
    uint64_t bytes_expect = 0;

    /* phase 0: create, forward three fields at once */
    const plan *P = &pl[0];
    shard_halo *h = shard_halo_create(c, P->n_nbr, P->nbr, P->send_count, P->send_idx, P->recv_count, recv_first);
    SHARD_ENSURE(shard_halo_graphs(h) == 1);
    SHARD_ENSURE(shard_halo_bytes(h) == 0);
    int it = 0;
    fill(&A, rank, it);
    shard_halo_field f3[3] = {shard_halo_field_of(h, A.a, 1), shard_halo_field_of(h, A.b, 3),
                              {.data = A.c, .ncomp = 2, .send_base = BLOCK_FIRST,
                               .recv_at = (size_t)(A.n - BLOCK_FIRST)}};
    SHARD_ENSURE(f3[0].send_base == 0 && f3[0].recv_at == recv_first && f3[1].ncomp == 3);
    shard_halo_forward(h, 3, f3);
    bad += check(&A, P, rank, it, 1, 1, "phase 0, forward of a, b, c");
    bytes_expect += (uint64_t)P->n_send * 6 * sizeof(double);
    SHARD_ENSURE(shard_halo_bytes(h) == bytes_expect);
    printf("%d ranks, rank %d, phase 0: %d neighbours, sends %d, receives %d (counts", size, rank, P->n_nbr,
           P->n_send, P->n_recv);
    for (int k = 0; k < P->n_nbr; k++)
        printf(" %d:%d/%d", P->nbr[k], P->send_count[k], P->recv_count[k]);
    printf("), bytes %" PRIu64 " (expected %" PRIu64 ")\n", shard_halo_bytes(h), bytes_expect);

    /* begin / end, with b and c only (width 5) and new values; a's ghosts are reset to the sentinel by fill()
     * and must stay so */
    it = 1;
    fill(&A, rank, it);
    shard_halo_field f2[2] = {f3[1], f3[2]};
    shard_halo_forward_begin(h, 2, f2);
    shard_halo_forward_end(h, 2, f2);
    bad += check(&A, P, rank, it, 0, 1, "phase 0, begin/end of b, c");
    bytes_expect += (uint64_t)P->n_send * 5 * sizeof(double);
    SHARD_ENSURE(shard_halo_bytes(h) == bytes_expect);

    /* phases 1-3: update, then forward a, b, c (begin / end in phases 2 and 3) */
    const long graphs_expect[NPHASE] = {1, 1, 2, 2};
    for (int ph = 1; ph < NPHASE; ph++) {
        P = &pl[ph];
        shard_halo_update(&h, c, P->n_nbr, P->nbr, P->send_count, P->send_idx, P->recv_count, recv_first);
        SHARD_ENSURE(shard_halo_bytes(h) == bytes_expect); /* the count is kept */
        SHARD_ENSURE(shard_halo_graphs(h) == graphs_expect[ph]);
        it = 1 + ph;
        fill(&A, rank, it);
        if (ph == 1) {
            shard_halo_forward(h, 3, f3);
        } else {
            shard_halo_forward_begin(h, 3, f3);
            shard_halo_forward_end(h, 3, f3);
        }
        char what[64];
        snprintf(what, sizeof what, "phase %d, forward of a, b, c", ph);
        bad += check(&A, P, rank, it, 1, 1, what);
        bytes_expect += (uint64_t)P->n_send * 6 * sizeof(double);
        SHARD_ENSURE(shard_halo_bytes(h) == bytes_expect);
        printf("%d ranks, rank %d, phase %d: %d neighbours, sends %d, receives %d, graphs %ld (expected %ld),"
               " bytes %" PRIu64 " (expected %" PRIu64 ")\n",
               size, rank, ph, P->n_nbr, P->n_send, P->n_recv, shard_halo_graphs(h), graphs_expect[ph],
               shard_halo_bytes(h), bytes_expect);
    }

    /* update of a NULL plan creates it */
    shard_halo *h2 = NULL;
    P = &pl[0];
    shard_halo_update(&h2, c, P->n_nbr, P->nbr, P->send_count, P->send_idx, P->recv_count, recv_first);
    SHARD_ENSURE(h2 != NULL && shard_halo_graphs(h2) == 1 && shard_halo_bytes(h2) == 0);
    fill(&A, rank, 9);
    shard_halo_forward(h2, 3, f3);
    bad += check(&A, P, rank, 9, 1, 1, "plan created by update");

    shard_halo_destroy(&h);
    shard_halo_destroy(&h2);
    SHARD_ENSURE(h == NULL && h2 == NULL);
    shard_halo_destroy(&h); /* NULL-safe */
    shard_halo_destroy(NULL);
    SHARD_ENSURE(shard_halo_graphs(NULL) == 0 && shard_halo_bytes(NULL) == 0);

    SHARD_ENSURE(bad == 0);
    free(A.a), free(A.b), free(A.c);
    int fail = shard_test_failures ? 1 : 0;
    if (fail)
        fprintf(stderr, "rank %d: %d check(s) failed, %d wrong values of %ld\n", rank, shard_test_failures, bad,
                n_compared);
    printf("%d ranks, rank %d: %ld values compared exactly (owned, padding, ghosts, spare slots), %d wrong\n", size,
           rank, n_compared, bad);
    shard_comm_max_ints(c, &fail, 1);
    if (rank == 0)
        printf("%d ranks: %s\n", size, fail ? "FAILED" : "passed");
    shard_comm_finalize(&c);
    return fail;
}
