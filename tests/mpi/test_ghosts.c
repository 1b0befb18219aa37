/* Contact ghosts (ghosts.h) against a global arrangement that every rank computes.
 *
 * usage: mpiexec -n N test_ghosts
 * ranks: 1 2 3
 * Two bodies: a plate (12 x 3 x 3 particles, spacing 0.1, z in [0, 0.2]) and a block above it (6 x 3 x 2,
 * z in [0.28, 0.38]: 0.08 above the plate), global ids plate first.  The plate is owned by x slabs, the block
 * by the next rank's slab, so that contact partners often live on other ranks.  Bond ghosts (same body,
 * |x_j - x_i| < 0.15) are filled from the global arrangement behind a plan made with shard_halo_create, and
 * must not be sent again as contact ghosts.  Checked after each rebuild (cutoff 0.15), every rank, exactly:
 * the received ghosts are the particles of other ranks within cutoff of this rank's box of another body, in
 * neighbour order, with the owner's gid, body, flags, x, v and mass bit for bit; no global id is held twice;
 * every particle of another body within cutoff of an owned particle is held; the bytes counted grow by the
 * box exchange, the counts and sum(SHARD_FIELD_CONTACT row bytes) per sent particle.  After owned particles
 * move, shard_ghosts_forward brings ghost x and v exactly; a second rebuild at the moved positions keeps the
 * plan's graph communicator.  A plate alone (one body on every rank) sends nothing.  Boxes are per cluster of a
 * rank's owned particles: two pieces of a body far apart on one rank, with another body between them on
 * another rank, send nothing either.
 * Every rank exits 0 (pass) or 1 (fail). */
#include "shard/comm.h"
#include "shard/ghosts.h"
#include "shard/halo.h"
#include "test.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { NB = 2, NX0 = 12, NY0 = 3, NZ0 = 3, NX1 = 6, NY1 = 3, NZ1 = 2 };
enum { N0 = NX0 * NY0 * NZ0, N1 = NX1 * NY1 * NZ1, N = N0 + N1 };
static const double CUTOFF = 0.15, H_BOND = 0.15;

/* The global arrangement (the same on every rank). */
typedef struct world {
    int n;              /* particles (N, or N0 for the plate alone) */
    int owner[N];
    int32_t body[N];
    uint32_t flags[N];
    double x[3 * N], v[3 * N], mass[N];
    unsigned char bonded[N][16]; /* [j][q]: j is a bond partner of a particle of rank q (at set-up, fixed) */
} world;

static double dist2(const double *a, const double *b)
{
    double d0 = b[0] - a[0], d1 = b[1] - a[1], d2 = b[2] - a[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

static int bonded_to_rank(const world *w, int j, int r);

static int slab(double x, int size)
{
    int s = (int)(x * size / 1.2);
    return s < size - 1 ? s : size - 1;
}

static void make_world(world *w, int size, int plate_only)
{
    memset(w, 0, sizeof *w);
    int g = 0;
    for (int k = 0; k < NZ0; k++)
        for (int j = 0; j < NY0; j++)
            for (int i = 0; i < NX0; i++, g++) {
                w->x[3 * g] = 0.05 + 0.1 * i, w->x[3 * g + 1] = 0.1 * j, w->x[3 * g + 2] = 0.1 * k;
                w->body[g] = 0;
                w->owner[g] = slab(w->x[3 * g], size);
            }
    if (!plate_only)
        for (int k = 0; k < NZ1; k++)
            for (int j = 0; j < NY1; j++)
                for (int i = 0; i < NX1; i++, g++) {
                    w->x[3 * g] = 0.3 + 0.1 * i, w->x[3 * g + 1] = 0.1 * j, w->x[3 * g + 2] = 0.28 + 0.1 * k;
                    w->body[g] = 1;
                    w->owner[g] = (slab(w->x[3 * g], size) + 1) % size;
                }
    w->n = g;
    for (g = 0; g < w->n; g++) {
        w->flags[g] = 0x9e3779b9u * (uint32_t)(g + 1); /* every bit pattern travels */
        w->mass[g] = 1.0 + g / 256.0;
        w->v[3 * g] = 0.5 * g, w->v[3 * g + 1] = -0.25 * g, w->v[3 * g + 2] = 1.0 + g / 8.0;
    }
    for (g = 0; g < w->n; g++)
        for (int q = 0; q < size; q++)
            w->bonded[g][q] = (unsigned char)bonded_to_rank(w, g, q);
}

/* Is global id j a bond partner of some particle owned by rank r (same body, |x| < H_BOND)? */
static int bonded_to_rank(const world *w, int j, int r)
{
    for (int i = 0; i < w->n; i++)
        if (w->owner[i] == r && w->body[i] == w->body[j] && i != j &&
            dist2(w->x + 3 * i, w->x + 3 * j) < H_BOND * H_BOND)
            return 1;
    return 0;
}

/* Moves every particle by a few mm (a deterministic pattern), the block 5 cm along x on top (so that the set of
 * contact ghosts changes), and changes every velocity. */
static void move_world(world *w)
{
    for (int g = 0; g < w->n; g++)
        for (int k = 0; k < 3; k++) {
            w->x[3 * g + k] += 0.001 * (double)((g * (k + 3)) % 7 - 3) + (k == 0 && w->body[g] == 1 ? 0.05 : 0.0);
            w->v[3 * g + k] = w->v[3 * g + k] * 1.5 - k;
        }
}

/* Per rank and body: the box of the owned particles (empty: lo > hi), as ghosts.h defines it. */
static void world_boxes(const world *w, int size, double *box)
{
    for (int r = 0; r < size; r++)
        for (int b = 0; b < NB; b++)
            for (int k = 0; k < 3; k++)
                box[(r * NB + b) * 6 + k] = INFINITY, box[(r * NB + b) * 6 + 3 + k] = -INFINITY;
    for (int g = 0; g < w->n; g++) {
        double *bb = box + (w->owner[g] * NB + w->body[g]) * 6;
        for (int k = 0; k < 3; k++)
            bb[k] = fmin(bb[k], w->x[3 * g + k]), bb[3 + k] = fmax(bb[3 + k], w->x[3 * g + k]);
    }
}

/* Squared gap between a point and a box (0 inside). */
static double point_gap2(const double *box, const double *x)
{
    double g2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double g = fmax(box[k] - x[k], x[k] - box[3 + k]);
        if (g > 0.0)
            g2 += g * g;
    }
    return g2;
}

static double box_gap2(const double *a, const double *b)
{
    double g2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double g = fmax(b[k] - a[3 + k], a[k] - b[3 + k]);
        if (g > 0.0)
            g2 += g * g;
    }
    return g2;
}

static int box_nonempty(const double *b) { return b[0] <= b[3]; }

/* Bytes a rebuild's box exchange sends from rank r: its box count and its boxes (7 doubles: body, lo, hi) to
 * every other rank.  Each body's owned particles of a rank are one compact piece here, so one cluster box per
 * body it owns particles of, the same box as the body's box of the rank. */
static uint64_t box_bytes_of(const world *w, int size, int r)
{
    int has[NB] = {0}, n = 0;
    for (int g = 0; g < w->n; g++)
        if (w->owner[g] == r && !has[w->body[g]])
            has[w->body[g]] = 1, n++;
    return (uint64_t)(size - 1) * (sizeof(int) + (uint64_t)n * 7 * sizeof(double));
}

/* What rank r must hold: owned particles in gid order, bond ghosts (by owner rank, then gid), contact ghosts
 * (by owner rank, then gid); the bond plan; and the figures of a rebuild. */
typedef struct expect {
    int n_own, n_bond, n_contact;
    int own[N], bond[N], contact[N];
    int local_of[N];                         /* -1: not held */
    /* bond plan */
    int b_nbr_n, b_nbr[16], b_send_count[16], b_recv_count[16];
    int32_t b_send_idx[16 * N];
    /* rebuild */
    int c_nbr_n, c_nbr[16];
    int n_send;                              /* contact records this rank sends */
    int n_excluded;                          /* near this rank's boxes but already held as bond ghosts */
} expect;

/* Is j within cutoff of one of rank q's boxes of another body? */
static int contact_near(const world *w, const double *box, int j, int q)
{
    int near = 0;
    for (int b = 0; b < NB && !near; b++)
        near = b != w->body[j] && box_nonempty(box + (q * NB + b) * 6) &&
               point_gap2(box + (q * NB + b) * 6, w->x + 3 * j) < CUTOFF * CUTOFF;
    return near;
}

/* Would rank q (!= owner of j) receive j as a contact ghost?  Near, and not already a bond ghost there. */
static int contact_sent(const world *w, const double *box, int size, int j, int q)
{
    (void)size;
    return contact_near(w, box, j, q) && !w->bonded[j][q];
}

static int ranks_near(const double *box, int r, int q)
{
    int lo = r < q ? r : q, hi = r < q ? q : r;
    for (int a = 0; a < NB; a++)
        for (int b = 0; b < NB; b++)
            if (a != b && box_nonempty(box + (lo * NB + a) * 6) && box_nonempty(box + (hi * NB + b) * 6) &&
                box_gap2(box + (lo * NB + a) * 6, box + (hi * NB + b) * 6) < CUTOFF * CUTOFF)
                return 1;
    return 0;
}

/* The bond part of the expectation (positions at set-up; bond ghosts stay until particles migrate). */
static void expect_bonds(const world *w, int size, int r, expect *e)
{
    memset(e, 0, sizeof *e);
    for (int g = 0; g < w->n; g++)
        e->local_of[g] = -1;
    for (int g = 0; g < w->n; g++)
        if (w->owner[g] == r)
            e->local_of[g] = e->n_own, e->own[e->n_own++] = g;
    int ns = 0;
    for (int q = 0; q < size; q++) {
        if (q == r)
            continue;
        int sc = 0, rc = 0;
        for (int k = 0; k < e->n_own; k++) /* owned particles of r bonded to some particle of q */
            if (w->bonded[e->own[k]][q])
                e->b_send_idx[ns + sc++] = k;
        for (int g = 0; g < w->n; g++)
            if (w->owner[g] == q && w->bonded[g][r])
                e->local_of[g] = e->n_own + e->n_bond, e->bond[e->n_bond++] = g, rc++;
        if (sc || rc) {
            int m = e->b_nbr_n++;
            e->b_nbr[m] = q, e->b_send_count[m] = sc, e->b_recv_count[m] = rc;
            ns += sc;
        }
    }
}

/* The contact part, for the world's current positions. */
static void expect_contacts(const world *w, int size, int r, expect *e)
{
    double box[16 * NB * 6];
    world_boxes(w, size, box);
    for (int k = 0; k < e->n_contact; k++)
        e->local_of[e->contact[k]] = -1;
    e->n_contact = e->c_nbr_n = e->n_send = e->n_excluded = 0;
    for (int q = 0; q < size; q++) {
        if (q == r || !ranks_near(box, r, q))
            continue;
        e->c_nbr[e->c_nbr_n++] = q;
        for (int g = 0; g < w->n; g++) {
            if (w->owner[g] == q && contact_sent(w, box, size, g, r)) {
                e->local_of[g] = e->n_own + e->n_bond + e->n_contact;
                e->contact[e->n_contact++] = g;
            }
            if (w->owner[g] == r && contact_sent(w, box, size, g, q))
                e->n_send++;
            if (w->owner[g] == q && w->bonded[g][r] && contact_near(w, box, g, r))
                e->n_excluded++;
        }
    }
}

/* Store of rank r: owned and bond ghosts from the world. */
static void fill_store(const world *w, const expect *e, shard_particles *p)
{
    shard_particles_reserve(p, (size_t)(e->n_own + e->n_bond));
    p->n_owned = (size_t)e->n_own, p->n_bond_ghost = (size_t)e->n_bond, p->n_local = p->n_owned + p->n_bond_ghost;
    for (int s = 0; s < e->n_own + e->n_bond; s++) {
        int g = s < e->n_own ? e->own[s] : e->bond[s - e->n_own];
        p->gid[s] = g, p->body[s] = w->body[g], p->flags[s] = w->flags[g], p->mass[s] = w->mass[g];
        p->volume[s] = 1e-3;
        memcpy(p->X + 3 * s, w->x + 3 * g, 3 * sizeof(double));
        memcpy(p->x + 3 * s, w->x + 3 * g, 3 * sizeof(double));
        memcpy(p->v + 3 * s, w->v + 3 * g, 3 * sizeof(double));
    }
}

/* Compares the store with the expectation; returns the number of wrong items (printing the first few). */
static int check_store(const world *w, const expect *e, const shard_particles *p, int rank, const char *what,
                       int *pairs_out)
{
    int bad = 0;
#define GH_FAIL(...)                                                                                             \
    do {                                                                                                         \
        if (bad++ < 8) {                                                                                         \
            fprintf(stderr, "FAIL rank %d, %s: ", rank, what);                                                   \
            fprintf(stderr, __VA_ARGS__);                                                                        \
            fputc('\n', stderr);                                                                                 \
        }                                                                                                        \
    } while (0)
    if (p->n_owned != (size_t)e->n_own || p->n_bond_ghost != (size_t)e->n_bond)
        GH_FAIL("n_owned %zu, n_bond_ghost %zu, expected %d, %d", p->n_owned, p->n_bond_ghost, e->n_own, e->n_bond);
    size_t n_expect = (size_t)(e->n_own + e->n_bond + e->n_contact);
    if (p->n_local != n_expect)
        GH_FAIL("n_local %zu, expected %zu (%d contact ghosts)", p->n_local, n_expect, e->n_contact);
    size_t n = p->n_local < n_expect ? p->n_local : n_expect;
    for (size_t s = 0; s < n; s++) {
        int g = (int)s < e->n_own ? e->own[s]
                : (int)s < e->n_own + e->n_bond ? e->bond[s - (size_t)e->n_own]
                                                : e->contact[s - (size_t)(e->n_own + e->n_bond)];
        if (p->gid[s] != g) {
            GH_FAIL("slot %zu holds gid %" PRId64 ", expected %d", s, p->gid[s], g);
            continue;
        }
        if (p->body[s] != w->body[g] || p->flags[s] != w->flags[g] ||
            memcmp(&p->mass[s], &w->mass[g], sizeof(double)) != 0)
            GH_FAIL("gid %d: body %d flags %08x mass %.17g, expected %d %08x %.17g", g, p->body[s], p->flags[s],
                    p->mass[s], w->body[g], w->flags[g], w->mass[g]);
        if (memcmp(p->x + 3 * s, w->x + 3 * g, 3 * sizeof(double)) != 0 ||
            memcmp(p->v + 3 * s, w->v + 3 * g, 3 * sizeof(double)) != 0)
            GH_FAIL("gid %d (slot %zu): x (%.17g, %.17g, %.17g) v (%.17g, %.17g, %.17g), expected x (%.17g, %.17g,"
                    " %.17g) v (%.17g, %.17g, %.17g)",
                    g, s, p->x[3 * s], p->x[3 * s + 1], p->x[3 * s + 2], p->v[3 * s], p->v[3 * s + 1],
                    p->v[3 * s + 2], w->x[3 * g], w->x[3 * g + 1], w->x[3 * g + 2], w->v[3 * g], w->v[3 * g + 1],
                    w->v[3 * g + 2]);
    }
    /* no global id held twice */
    int held[N] = {0};
    for (size_t s = 0; s < p->n_local; s++)
        if (p->gid[s] >= 0 && p->gid[s] < w->n && held[p->gid[s]]++)
            GH_FAIL("gid %" PRId64 " held twice", p->gid[s]);
    /* every particle of another body within cutoff of an owned one is held (owned, bond or contact ghost) */
    int pairs = 0;
    for (int a = 0; a < e->n_own; a++)
        for (int g = 0; g < w->n; g++) {
            int i = e->own[a];
            if (w->body[g] == w->body[i] || dist2(w->x + 3 * i, w->x + 3 * g) >= CUTOFF * CUTOFF)
                continue;
            pairs++;
            if (!held[g])
                GH_FAIL("gid %d (body %d, rank %d) within cutoff of owned gid %d is not held", g, w->body[g],
                        w->owner[g], i);
        }
    *pairs_out = pairs;
#undef GH_FAIL
    return bad;
}

static size_t contact_record_bytes(void)
{
    size_t rb = 0;
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (shard_particle_fields[f].flags & SHARD_FIELD_CONTACT)
            rb += shard_field_row_bytes(&shard_particle_fields[f]);
    return rb;
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int rank = shard_comm_rank(c), size = shard_comm_size(c);
    if (size > 16) {
        if (rank == 0)
            fprintf(stderr, "test_ghosts: at most 16 ranks\n");
        shard_comm_finalize(&c);
        return 1;
    }
    static world w;
    static expect e;
    make_world(&w, size, 0);
    expect_bonds(&w, size, rank, &e);
    expect_contacts(&w, size, rank, &e);
    const size_t rb = contact_record_bytes();
    const uint64_t box_bytes = box_bytes_of(&w, size, rank);
    int bad = 0, pairs = 0;

    shard_particles p = {0};
    fill_store(&w, &e, &p);
    shard_halo *bond = shard_halo_create(c, e.b_nbr_n, e.b_nbr, e.b_send_count, e.b_send_idx, e.b_recv_count,
                                         (size_t)e.n_own);
    shard_ghosts *g = shard_ghosts_create(NB, NULL);
    SHARD_ENSURE(shard_ghosts_halo(g) == NULL && shard_ghosts_bytes(g) == 0);

    /* first rebuild */
    shard_ghosts_rebuild(g, c, &p, &bond, 1, CUTOFF);
    bad += check_store(&w, &e, &p, rank, "first rebuild", &pairs);
    uint64_t bytes_expect = box_bytes + (uint64_t)e.c_nbr_n * sizeof(int) + (uint64_t)e.n_send * rb;
    SHARD_ENSURE(shard_ghosts_bytes(g) == bytes_expect);
    SHARD_ENSURE(shard_halo_graphs(shard_ghosts_halo(g)) == 1);
    printf("%d ranks, rank %d, rebuild 1: %d owned, %d bond ghosts, %d contact ghosts (held %zu; %d more near but"
           " bond ghosts already), sends %d records of %zu bytes to %d ranks; %d cross-body pairs within cutoff of"
           " owned particles; bytes %" PRIu64 " (expected %" PRIu64 ")\n",
           size, rank, e.n_own, e.n_bond, e.n_contact, p.n_local - p.n_owned - p.n_bond_ghost, e.n_excluded,
           e.n_send, rb, e.c_nbr_n, pairs, shard_ghosts_bytes(g), bytes_expect);
    int64_t excluded = shard_comm_sum_i64(c, e.n_excluded), received = shard_comm_sum_i64(c, e.n_contact);
    if (size > 1)
        SHARD_ENSURE(excluded > 0 && received > 0); /* the arrangement exercises both */
    int first_set[N], first_n = e.n_contact;
    memcpy(first_set, e.contact, sizeof first_set);

    /* move, forward x and v (owned particles only on this side; bond ghosts by their own plan) */
    int prev_nbr_n = e.c_nbr_n, prev_nbr[16];
    memcpy(prev_nbr, e.c_nbr, sizeof prev_nbr);
    int sent_before = e.n_send;
    move_world(&w);
    for (int s = 0; s < e.n_own; s++) {
        memcpy(p.x + 3 * s, w.x + 3 * e.own[s], 3 * sizeof(double));
        memcpy(p.v + 3 * s, w.v + 3 * e.own[s], 3 * sizeof(double));
    }
    const shard_field_desc *xv[2] = {shard_particles_row("position"), shard_particles_row("velocity")};
    shard_ghosts_forward(g, &p, xv, 2);
    bytes_expect += (uint64_t)sent_before * 6 * sizeof(double);
    SHARD_ENSURE(shard_ghosts_bytes(g) == bytes_expect);
    int fwd_bad = 0;
    for (int k = 0; k < e.n_contact; k++) {
        size_t s = (size_t)(e.n_own + e.n_bond + k);
        int gg = e.contact[k];
        if (s < p.n_local && (memcmp(p.x + 3 * s, w.x + 3 * gg, 3 * sizeof(double)) != 0 ||
                              memcmp(p.v + 3 * s, w.v + 3 * gg, 3 * sizeof(double)) != 0)) {
            if (fwd_bad++ < 5)
                fprintf(stderr, "FAIL rank %d, forward: gid %d x (%.17g, %.17g, %.17g), expected (%.17g, %.17g,"
                        " %.17g)\n", rank, gg, p.x[3 * s], p.x[3 * s + 1], p.x[3 * s + 2], w.x[3 * gg],
                        w.x[3 * gg + 1], w.x[3 * gg + 2]);
        }
    }
    SHARD_ENSURE(fwd_bad == 0);
    bad += fwd_bad;
    shard_halo_field bf[2] = {shard_halo_field_of(bond, p.x, 3), shard_halo_field_of(bond, p.v, 3)};
    shard_halo_forward(bond, 2, bf);
    printf("%d ranks, rank %d, forward: %d contact ghosts updated, %d wrong; bytes %" PRIu64 " (expected %" PRIu64
           ")\n", size, rank, e.n_contact, fwd_bad, shard_ghosts_bytes(g), bytes_expect);

    /* second rebuild at the moved positions: the same neighbour ranks, so the same graph communicator */
    expect_contacts(&w, size, rank, &e);
    int same_nbrs = e.c_nbr_n == prev_nbr_n && memcmp(prev_nbr, e.c_nbr, (size_t)prev_nbr_n * sizeof(int)) == 0;
    SHARD_ENSURE(same_nbrs); /* the arrangement is made so */
    int changed = first_n != e.n_contact || memcmp(first_set, e.contact, (size_t)first_n * sizeof(int)) != 0;
    int64_t n_changed = shard_comm_sum_i64(c, changed);
    if (size > 1)
        SHARD_ENSURE(n_changed > 0); /* ... and the ghosts change with the same neighbours */
    uint64_t before = shard_ghosts_bytes(g);
    shard_ghosts_rebuild(g, c, &p, &bond, 1, CUTOFF);
    bad += check_store(&w, &e, &p, rank, "second rebuild", &pairs);
    bytes_expect = before + box_bytes + (uint64_t)e.c_nbr_n * sizeof(int) + (uint64_t)e.n_send * rb;
    SHARD_ENSURE(shard_ghosts_bytes(g) == bytes_expect);
    SHARD_ENSURE(shard_halo_graphs(shard_ghosts_halo(g)) == 1);
    printf("%d ranks, rank %d, rebuild 2: %d contact ghosts (%s), sends %d records, graphs %ld (expected 1),"
           " bytes grew by %" PRIu64 " (expected %" PRIu64 ")\n",
           size, rank, e.n_contact, changed ? "a different set" : "the same set", e.n_send,
           shard_halo_graphs(shard_ghosts_halo(g)), shard_ghosts_bytes(g) - before, bytes_expect - before);

    /* the plate alone, no bond plans: one body everywhere, nothing is sent but the boxes */
    static world wp;
    static expect ep;
    make_world(&wp, size, 1);
    expect_bonds(&wp, size, rank, &ep);
    ep.n_bond = 0;
    shard_particles q = {0};
    fill_store(&wp, &ep, &q);
    shard_ghosts *gp = shard_ghosts_create(NB, NULL);
    shard_ghosts_rebuild(gp, c, &q, NULL, 0, CUTOFF);
    SHARD_ENSURE(q.n_local == q.n_owned);
    SHARD_ENSURE(shard_ghosts_bytes(gp) == box_bytes_of(&wp, size, rank));
    SHARD_ENSURE(shard_halo_graphs(shard_ghosts_halo(gp)) == 1);
    printf("%d ranks, rank %d, plate alone: %zu owned, %zu held after the rebuild, bytes %" PRIu64 " (expected %"
           PRIu64 ", the boxes alone)\n",
           size, rank, q.n_owned, q.n_local, shard_ghosts_bytes(gp), box_bytes_of(&wp, size, rank));

    /* Pieces apart: rank 0 owns two plates of body 0 far apart (x in [0, 0.3] and [1.0, 1.3]), the last rank a
     * block of body 1 between them (x in [0.5, 0.8], 0.2 from each: more than the cutoff).  One box per body
     * would stretch rank 0's box over the block; one box per cluster leaves every rank without a neighbour. */
    if (size >= 2) {
        shard_particles a = {0};
        size_t n = 0;
        shard_particles_reserve(&a, 64);
        for (int piece = 0; piece < 3; piece++) {
            int mine = piece == 1 ? rank == size - 1 : rank == 0;
            for (int k = 0; mine && k < 4; k++)
                for (int j = 0; j < 2; j++, n++) {
                    double x0 = piece == 0 ? 0.0 : piece == 1 ? 0.5 : 1.0;
                    a.gid[n] = 100 * piece + 10 * k + j, a.body[n] = piece == 1, a.flags[n] = 0, a.mass[n] = 1.0;
                    a.volume[n] = 1e-3;
                    double x[3] = {x0 + 0.1 * k, 0.1 * j, 0.0};
                    memcpy(a.X + 3 * n, x, sizeof x), memcpy(a.x + 3 * n, x, sizeof x);
                    memset(a.v + 3 * n, 0, 3 * sizeof(double));
                }
        }
        a.n_owned = a.n_local = n, a.n_bond_ghost = 0;
        shard_ghosts *ga = shard_ghosts_create(NB, NULL);
        shard_ghosts_rebuild(ga, c, &a, NULL, 0, CUTOFF);
        SHARD_ENSURE(a.n_local == a.n_owned);
        int n_boxes = rank == 0 ? 2 : rank == size - 1 ? 1 : 0; /* one per piece */
        uint64_t want = (uint64_t)(size - 1) * (sizeof(int) + (uint64_t)n_boxes * 7 * sizeof(double));
        SHARD_ENSURE(shard_ghosts_bytes(ga) == want);
        printf("%d ranks, rank %d, pieces apart: %zu owned, %zu contact ghosts (expected 0), bytes %" PRIu64
               " (expected %" PRIu64 ": %d box(es))\n", size, rank, a.n_owned, a.n_local - a.n_owned,
               shard_ghosts_bytes(ga), want, n_boxes);
        shard_ghosts_destroy(&ga);
        shard_particles_free(&a);
    }

    shard_ghosts_destroy(&g);
    shard_ghosts_destroy(&gp);
    SHARD_ENSURE(g == NULL && gp == NULL);
    shard_ghosts_destroy(&g); /* NULL-safe */
    shard_halo_destroy(&bond);
    shard_particles_free(&p);
    shard_particles_free(&q);

    SHARD_ENSURE(bad == 0);
    int fail = shard_test_failures ? 1 : 0;
    if (fail)
        fprintf(stderr, "rank %d: %d check(s) failed, %d wrong items\n", rank, shard_test_failures, bad);
    shard_comm_max_ints(c, &fail, 1);
    if (rank == 0)
        printf("%d ranks: %s\n", size, fail ? "FAILED" : "passed");
    shard_comm_finalize(&c);
    return fail;
}
