/* Migration (migrate.h) against a global arrangement that every rank computes.
 *
 * usage: mpiexec -n N test_migrate
 * ranks: 1 2 3 4
 * Two kinds: module 0, a bonded lattice (10 x 4 x 3, spacing 1, bonds within 1.5, every row of the particle
 * registry set from the global id, a block with a STATE + GHOST row of 3 doubles, a STATE row of bytes and a
 * derived row), and module 1, 17 loose particles without bonds (a block with one STATE row).  Bonds are broken
 * by a symmetric rule of the pair; one pair list (width 2) holds entries keyed by partner global ids.  Every
 * rank holds a share of it (a range of global ids) and the start-up distribution sends the particles to their
 * parts (shard_partition_share_store, shard_partition_distribute_share), then four migrations run: to
 * scattered ranks, all to the last rank, back by a rotation, scattered again, each in rounds of at most 64
 * words per rank (kinds.round_words), so that a record never waits for the last round.  After each, on every rank, exactly: every global id is owned
 * once; owned particles are by module, then global id; every state row, block row, bond (partner id and broken
 * flag) and pair-list row is the arrangement's; every partner not owned is a bond ghost with its GHOST rows
 * (particle and block) bit for bit; the halo plans bring a fresh field to the ghosts; the counts of moved
 * particles agree (sent = received, summed) and bytes are counted.  Every global id is past 2^32 (2^33 added
 * to the arrangement's): nothing on the start-up partition (Zoltan's ids are two words), the ghost queries or
 * the migrations is 32-bit.
 * Every rank exits 0 (pass) or 1 (fail). */
#include "shard/comm.h"
#include "shard/migrate.h"
#include "shard/partition.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

enum { NX = 10, NY = 4, NZ = 3, N0 = NX * NY * NZ, N1 = 17, N = N0 + N1, NMOD = 2, W = 2 };

static const shard_field_desc rows0[] = {
    SHARD_BLOCK_ROW(0, double, 3, SHARD_FIELD_STATE | SHARD_FIELD_GHOST, "alpha")
    SHARD_BLOCK_ROW(1, uint8_t, 1, SHARD_FIELD_STATE, "mode")
    SHARD_BLOCK_ROW(2, double, 1, 0, "derived")
};
static const shard_field_desc rows1[] = {
    SHARD_BLOCK_ROW(0, int32_t, 2, SHARD_FIELD_STATE, "tag")
};

/* Added to every global id, so that everything runs with ids past 2^32 (the arrangement's functions take the id
 * less it). */
static const int64_t OFF = (int64_t)1 << 33;

static void pos(int64_t g, double *x)
{
    if (g < N0) {
        x[0] = (double)(g % NX), x[1] = (double)(g / NX % NY), x[2] = (double)(g / (NX * NY));
    } else {
        x[0] = 20.0 + (double)(g - N0), x[1] = 0.5, x[2] = -3.0;
    }
}

static double val(int64_t g, int k) { return 0.37 * (double)g - 1.25 * k + (double)(g % 7) / 3.0; }
static int is_broken(int64_t a, int64_t b)
{
    uint64_t lo = (uint64_t)(a < b ? a : b), hi = (uint64_t)(a < b ? b : a);
    return ((lo * 2654435761u + hi * 40503u) >> 3) % 5 == 0;
}
static int bonded(int64_t a, int64_t b)
{
    if (a == b || a >= N0 || b >= N0)
        return 0;
    double xa[3], xb[3];
    pos(a, xa), pos(b, xb);
    double d2 = 0;
    for (int k = 0; k < 3; k++)
        d2 += (xa[k] - xb[k]) * (xa[k] - xb[k]);
    return d2 < 1.5 * 1.5;
}
/* The pair list's row of particle g: partners g+1 .. g+ (g % 3), keys in increasing order. */
static int list_len(int64_t g) { return (int)(g % 3); }
static double list_val(int64_t g, int64_t key, int k) { return (double)g * 1e-3 + (double)key + 0.5 * k; }

static void expect_particle(const shard_particles *p, size_t i, int ghost)
{
    int64_t g = p->gid[i] - OFF;
    double x[3];
    pos(g, x);
    SHARD_ENSURE(p->body[i] == (g < N0 ? 0 : 1));
    SHARD_ENSURE(p->flags[i] == (uint32_t)(0x9e3779b9u * (uint32_t)(g + 1)));
    for (int k = 0; k < 3; k++) {
        SHARD_ENSURE(p->X[3 * i + k] == x[k]);
        SHARD_ENSURE(p->x[3 * i + k] == x[k] + val(g, k) * 1e-3);
        SHARD_ENSURE(p->v[3 * i + k] == val(g, k + 3));
        if (!ghost) {
            SHARD_ENSURE(p->a[3 * i + k] == val(g, k + 6));
            SHARD_ENSURE(p->vpres[3 * i + k] == val(g, k + 9));
            SHARD_ENSURE(p->x_build[3 * i + k] == p->x[3 * i + k]);
        }
    }
}

static int check(shard_comm *c, const shard_particles *p, const shard_block *blocks, const shard_csr *bonds,
                 const uint8_t *broken, shard_halo **halos, const shard_pairlist *list, const int32_t *expect_owner)
{
    int rank = shard_comm_rank(c);
    int before = shard_test_failures;
    /* owned: ordered, each on the rank it was sent to */
    int64_t mine = 0;
    for (size_t i = 0; i < p->n_owned; i++) {
        int64_t g = p->gid[i] - OFF;
        SHARD_ENSURE(g >= 0 && g < N);
        SHARD_ENSURE(expect_owner[g] == rank);
        if (i > 0) {
            int64_t h = p->gid[i - 1] - OFF;
            int mh = h >= N0, mg = g >= N0;
            SHARD_ENSURE(mh < mg || (mh == mg && h < g));
        }
        expect_particle(p, i, 0);
        mine += expect_owner[g] == rank;
    }
    int64_t total = shard_comm_sum_i64(c, (int64_t)p->n_owned);
    SHARD_ENSURE(total == N);
    SHARD_ENSURE(p->n_local == p->n_owned + p->n_bond_ghost);
    /* blocks */
    SHARD_ENSURE(blocks[0].first == 0 && blocks[1].first == blocks[0].n_owned);
    SHARD_ENSURE(blocks[0].n_owned + blocks[1].n_owned == p->n_owned);
    SHARD_ENSURE(blocks[1].n_ghost == 0);
    SHARD_ENSURE(blocks[0].ghost_first == p->n_owned && blocks[0].n_ghost == p->n_bond_ghost);
    const double *alpha = blocks[0].col[0];
    const uint8_t *mode = blocks[0].col[1];
    for (size_t s = 0; s < blocks[0].n_owned + blocks[0].n_ghost; s++) {
        size_t i = s < blocks[0].n_owned ? blocks[0].first + s : blocks[0].ghost_first + s - blocks[0].n_owned;
        int64_t g = p->gid[i] - OFF;
        for (int k = 0; k < 3; k++)
            SHARD_ENSURE(alpha[3 * s + k] == val(g, 20 + k));
        if (s < blocks[0].n_owned)
            SHARD_ENSURE(mode[s] == (uint8_t)(g * 13));
    }
    const int32_t *tag = blocks[1].col[0];
    for (size_t s = 0; s < blocks[1].n_owned; s++) {
        int64_t g = p->gid[blocks[1].first + s] - OFF;
        SHARD_ENSURE(tag[2 * s] == (int32_t)(g * 3) && tag[2 * s + 1] == -(int32_t)g);
    }
    /* bonds, broken flags and ghosts */
    for (size_t i = 0; i < p->n_owned; i++) {
        int64_t g = p->gid[i] - OFF, e = bonds->start[i];
        for (int64_t q = 0; q < N; q++) {
            if (!bonded(g, q))
                continue;
            SHARD_ENSURE(e < bonds->start[i + 1]);
            if (e >= bonds->start[i + 1])
                break;
            size_t j = (size_t)bonds->idx[e];
            SHARD_ENSURE(j < p->n_local && p->gid[j] - OFF == q);
            SHARD_ENSURE(broken[e] == is_broken(g, q));
            SHARD_ENSURE((j < p->n_owned) == (expect_owner[q] == rank));
            e++;
        }
        SHARD_ENSURE(e == bonds->start[i + 1]);
    }
    for (size_t i = p->n_owned; i < p->n_local; i++) {
        expect_particle(p, i, 1);
        SHARD_ENSURE(expect_owner[p->gid[i] - OFF] != rank);
    }
    /* a fresh field through the plans */
    double *f = calloc(p->n_local + 1, sizeof *f);
    for (size_t i = 0; i < p->n_owned; i++)
        f[i] = 3.0 * (double)p->gid[i] + 1.0;
    for (int m = 0; m < NMOD; m++)
        if (halos[m]) {
            shard_halo_field hf = shard_halo_field_of(halos[m], f, 1);
            shard_halo_forward(halos[m], 1, &hf);
        }
    for (size_t i = p->n_owned; i < p->n_local; i++)
        SHARD_ENSURE(f[i] == 3.0 * (double)p->gid[i] + 1.0);
    free(f);
    SHARD_ENSURE(halos[1] == NULL);
    /* the pair list */
    SHARD_ENSURE(list->n == p->n_owned);
    for (size_t i = 0; i < p->n_owned; i++) {
        int64_t g = p->gid[i] - OFF;
        SHARD_ENSURE(list->start[i + 1] - list->start[i] == list_len(g));
        for (int64_t e = list->start[i]; e < list->start[i + 1]; e++) {
            int64_t key = g + 1 + (e - list->start[i]);
            SHARD_ENSURE(list->key[e] - OFF == key);
            for (int k = 0; k < W; k++)
                SHARD_ENSURE(list->val[W * e + k] == list_val(g, key, k));
        }
    }
    (void)mine;
    int bad = shard_test_failures > before;
    shard_comm_max_ints(c, &bad, 1);
    return bad;
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int rank = shard_comm_rank(c), size = shard_comm_size(c);
    int32_t body_module[2] = {0, 1};
    int has_halo[NMOD] = {1, 0};
    shard_pairlist shape;
    shard_pairlist_init(&shape, W);
    /* This rank's share: the global ids [first, end), every row set from the id. */
    int64_t first = (int64_t)N * rank / size, end = (int64_t)N * (rank + 1) / size, n = end - first;
    shard_share sh;
    memset(&sh, 0, sizeof sh);
    shard_particles_alloc_rows(&sh.p, (size_t)n, SHARD_FIELD_STATE);
    shard_block share_blocks[NMOD];
    memset(share_blocks, 0, sizeof share_blocks);
    shard_block_init(&share_blocks[0], rows0, 3);
    shard_block_init(&share_blocks[1], rows1, 1);
    shard_block_reserve(&share_blocks[0], (size_t)n);
    shard_block_reserve(&share_blocks[1], (size_t)n);
    double *alpha = share_blocks[0].col[0];
    uint8_t *mode = share_blocks[0].col[1];
    int32_t *tag = share_blocks[1].col[0];
    sh.bstart = malloc(((size_t)n + 1) * sizeof *sh.bstart);
    sh.partner = malloc((64 * (size_t)n + 1) * sizeof *sh.partner);
    uint8_t *share_broken = malloc(64 * (size_t)n + 1);
    shard_pairlist share_list;
    shard_pairlist_init(&share_list, W);
    shard_pairlist_reset(&share_list, (size_t)n);
    sh.bstart[0] = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t q = first + k;
        double x[3];
        pos(q, x);
        sh.p.gid[k] = q + OFF;
        sh.p.body[k] = q < N0 ? 0 : 1;
        sh.p.flags[k] = 0x9e3779b9u * (uint32_t)(q + 1);
        for (int d = 0; d < 3; d++) {
            sh.p.X[3 * k + d] = x[d];
            sh.p.x[3 * k + d] = x[d] + val(q, d) * 1e-3;
            sh.p.v[3 * k + d] = val(q, d + 3);
            sh.p.a[3 * k + d] = val(q, d + 6);
            sh.p.vpres[3 * k + d] = val(q, d + 9);
            alpha[3 * k + d] = val(q, 20 + d);
        }
        mode[k] = (uint8_t)(q * 13);
        tag[2 * k] = (int32_t)(q * 3), tag[2 * k + 1] = -(int32_t)q;
        int64_t e = sh.bstart[k];
        for (int64_t b = 0; b < N; b++)
            if (bonded(q, b)) {
                share_broken[e] = (uint8_t)is_broken(q, b);
                sh.partner[e++] = b + OFF;
            }
        sh.bstart[k + 1] = e;
        for (int t = 0; t < list_len(q); t++) {
            double v[W];
            for (int d = 0; d < W; d++)
                v[d] = list_val(q, q + 1 + t, d);
            shard_pairlist_push(&share_list, (size_t)k, q + 1 + t + OFF, v);
        }
    }
    shard_pairlist_finish(&share_list);
    sh.mod_rows = share_blocks;
    sh.broken = share_broken;
    sh.lists = &share_list;
    shard_partition_kinds kinds = {.n_modules = NMOD, .body_module = body_module, .has_halo = has_halo,
                                   .n_lists = 1, .round_words = 64};
    shard_particles p;
    memset(&p, 0, sizeof p);
    shard_block blocks[NMOD];
    memset(blocks, 0, sizeof blocks);
    shard_block_init(&blocks[0], rows0, 3);
    shard_block_init(&blocks[1], rows1, 1);
    shard_csr bonds = {0};
    uint8_t *broken = NULL;
    shard_halo *halos[NMOD] = {NULL, NULL};
    shard_pairlist list = shape;
    int64_t cut = 0;
    shard_error err;
    int32_t *ghost_owner = NULL;
    shard_partition_share_store(c, &sh, NULL, NULL, &kinds, &p, blocks, &bonds, &broken, &list, &ghost_owner);
    shard_share_free(&sh);
    free(share_broken);
    shard_pairlist_free(&share_list);
    for (int m = 0; m < NMOD; m++)
        shard_block_free(&share_blocks[m]);
    shard_migrate_stats st0;
    int rc = shard_partition_distribute_share(c, &kinds, ghost_owner, &p, blocks, &bonds, &broken, halos, &list,
                                              &cut, &st0, &err);
    free(ghost_owner);
    SHARD_ENSURE(rc == 0);
    SHARD_ENSURE(size == 1 || cut > 0);
    /* who owns what now: gather from the distribution */
    int32_t owner[N];
    double own_of[N];
    for (int q = 0; q < N; q++)
        own_of[q] = 0.0;
    for (size_t i = 0; i < p.n_owned; i++)
        own_of[p.gid[i] - OFF] = (double)rank + 1.0;
    shard_comm_sum(c, own_of, N);
    for (int q = 0; q < N; q++)
        owner[q] = (int32_t)own_of[q] - 1;
    int failed = check(c, &p, blocks, &bonds, broken, halos, &list, owner);
    for (int round = 0; round < 4 && !failed; round++) {
        int32_t next[N];
        for (int64_t q = 0; q < N; q++) {
            uint64_t s = (uint64_t)q * 7919u + (uint64_t)round * 104729u;
            next[q] = round == 1 ? size - 1 : round == 2 ? (owner[q] + 1) % size
                                                        : (int32_t)(shard_test_next(&s) % (uint64_t)size);
        }
        int32_t *dest = malloc((p.n_owned + 1) * sizeof *dest);
        int64_t expect_moved = 0;
        for (int q = 0; q < N; q++)
            expect_moved += next[q] != owner[q];
        for (size_t i = 0; i < p.n_owned; i++)
            dest[i] = next[p.gid[i] - OFF];
        shard_migrate_stats st;
        shard_migrate(c, &kinds, dest, &p, blocks, &bonds, &broken, halos, &list, &st);
        free(dest);
        memcpy(owner, next, sizeof owner);
        int64_t sent = shard_comm_sum_i64(c, st.sent), recvd = shard_comm_sum_i64(c, st.received);
        SHARD_ENSURE(sent == expect_moved);
        SHARD_ENSURE(recvd == expect_moved);
        SHARD_ENSURE(size == 1 || expect_moved == 0 || shard_comm_sum_u64(c, st.bytes) > 0);
        failed = check(c, &p, blocks, &bonds, broken, halos, &list, owner);
        if (rank == 0)
            printf("migration %d on %d rank(s): %lld of %d particles moved, %llu bytes on rank 0: %s\n", round, size,
                   (long long)sent, N, (unsigned long long)st.bytes, failed ? "FAIL" : "ok");
    }
    for (int m = 0; m < NMOD; m++) {
        shard_halo_destroy(&halos[m]);
        shard_block_free(&blocks[m]);
    }
    shard_particles_free(&p);
    shard_csr_free(&bonds);
    shard_pairlist_free(&list);
    free(broken);
    int result = SHARD_TEST_RESULT() || failed;
    shard_comm_max_ints(c, &result, 1);
    shard_comm_finalize(&c);
    return result;
}
