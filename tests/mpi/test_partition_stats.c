/* The distributed partition statistics (shard_part_stats_compute_dist, what `shard partition` prints) against
 * the one-process computation on the whole graph (itself checked against a brute-force count by
 * unit.test_partition): a lattice of two bodies spread over the ranks by ranges of global ids, as the start-up
 * shares are, and partitions that scatter the particles over 1, 2, 3, 5 and 16 parts.  Every figure must be
 * equal.  The global ids are moved past 2^32, so nothing on the path is 32-bit.
 *
 * usage: mpiexec -n N test_partition_stats
 * ranks: 1 2 3 4
 * Every rank exits 0 (pass) or 1 (fail). */
#include "shard/comm.h"
#include "shard/hash.h"
#include "shard/neighbor.h"
#include "shard/partition_stats.h"
#include "test.h"
#include "unit/two_blocks.h"

#include <stdlib.h>
#include <string.h>

static const int64_t BIG = (int64_t)1 << 33;

static int32_t part_of(int64_t i, int nparts)
{
    return (int32_t)(shard_hash_mix((uint64_t)i * 7919u + (uint64_t)nparts) % (uint64_t)nparts);
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int rank = shard_comm_rank(c), size = shard_comm_size(c);
    /* Every rank builds the whole graph, the reference (unit/two_blocks.h). */
    size_t n = 0;
    shard_csr g = {0};
    double *X = shard_test_two_blocks(&n, &g);

    /* This rank's range of ids, its ghosts (partners outside it, in increasing id) and local bonds. */
    size_t first = n * (size_t)rank / (size_t)size, end = n * (size_t)(rank + 1) / (size_t)size, own = end - first;
    int32_t *local = malloc(n * sizeof *local);
    for (size_t i = 0; i < n; i++)
        local[i] = -1;
    for (size_t i = first; i < end; i++)
        local[i] = (int32_t)(i - first);
    size_t ng = 0;
    for (size_t j = 0; j < n; j++) {
        if (j >= first && j < end)
            continue;
        int needed = 0;
        for (size_t i = first; i < end && !needed; i++)
            for (int64_t b = g.start[i]; b < g.start[i + 1]; b++)
                needed |= (size_t)g.idx[b] == j;
        if (needed)
            local[j] = (int32_t)(own + ng++);
    }
    shard_particles p;
    memset(&p, 0, sizeof p);
    shard_particles_reserve(&p, own + ng);
    p.n_owned = own, p.n_bond_ghost = ng, p.n_local = own + ng;
    for (size_t j = 0; j < n; j++)
        if (local[j] >= 0)
            p.gid[local[j]] = (int64_t)j + BIG;
    shard_csr bonds = {0};
    shard_csr_reserve(&bonds, own, (size_t)(g.start[end] - g.start[first]) + 1);
    bonds.n = own;
    bonds.start[0] = 0;
    size_t e = 0;
    for (size_t i = first; i < end; i++) {
        for (int64_t b = g.start[i]; b < g.start[i + 1]; b++)
            bonds.idx[e++] = local[g.idx[b]];
        bonds.start[i - first + 1] = (int64_t)e;
    }

    int parts[] = {1, 2, 3, 5, 16};
    double *where = malloc((own + ng + 1) * sizeof *where);
    int32_t *part = malloc(n * sizeof *part);
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        int np = parts[k];
        for (size_t i = 0; i < n; i++)
            part[i] = part_of((int64_t)i, np);
        for (size_t j = 0; j < n; j++)
            if (local[j] >= 0)
                where[local[j]] = (double)part[j];
        shard_part_stats ref, st;
        shard_part_stats_compute(n, &g, np, part, &ref);
        shard_part_stats_compute_dist(c, &p, &bonds, where, np, &st);
        SHARD_ENSURE(st.nparts == np);
        SHARD_ENSURE(st.edge_cut == ref.edge_cut);
        for (int q = 0; q < np; q++) {
            SHARD_ENSURE(st.owned[q] == ref.owned[q]);
            SHARD_ENSURE(st.bonds[q] == ref.bonds[q]);
            SHARD_ENSURE(st.ghosts[q] == ref.ghosts[q]);
            SHARD_ENSURE(st.neighbors[q] == ref.neighbors[q]);
        }
        if (rank == 0)
            printf("%d parts on %d rank(s): edge cut %lld (one process: %lld)\n", np, size, (long long)st.edge_cut,
                   (long long)ref.edge_cut);
        shard_part_stats_free(&ref);
        shard_part_stats_free(&st);
    }
    free(where), free(part), free(local), free(X);
    shard_csr_free(&g);
    shard_csr_free(&bonds);
    shard_particles_free(&p);
    int result = SHARD_TEST_RESULT();
    shard_comm_max_ints(c, &result, 1);
    shard_comm_finalize(&c);
    return result;
}
