/* Partition statistics against an independent brute-force count, for partitions that scatter the particles
 * over the parts (a hash of the particle: every part gets particles of both bodies and many ghosts), and the
 * reference bonds they count (symmetric, sorted).  The distributed statistics are checked against these at
 * 1-4 ranks by mpi.partition_stats. */
#include "shard/hash.h"
#include "shard/neighbor.h"
#include "shard/partition_stats.h"
#include "test.h"
#include "unit/two_blocks.h"

#include <stdlib.h>
#include <string.h>

static void test_counts(size_t n, const shard_csr *g, int nparts)
{
    int32_t *part = malloc(n * sizeof *part);
    for (size_t i = 0; i < n; i++)
        part[i] = (int32_t)(shard_hash_mix((uint64_t)i * 7919u + (uint64_t)nparts) % (uint64_t)nparts);
    shard_part_stats st;
    shard_part_stats_compute(n, g, nparts, part, &st);

    /* brute force: a flag per (part, particle) and per (part, part) */
    char *is_ghost = calloc((size_t)nparts * n, 1), *is_nbr = calloc((size_t)nparts * (size_t)nparts, 1);
    int64_t owned_sum = 0, cut2 = 0;
    for (int p = 0; p < nparts; p++) {
        int64_t owned = 0, ghosts = 0, nbrs = 0, bonds = 0;
        for (size_t i = 0; i < n; i++) {
            if (part[i] != p)
                continue;
            owned++;
            for (int64_t b = g->start[i]; b < g->start[i + 1]; b++) {
                int32_t j = g->idx[b];
                bonds++;
                if (part[j] == p)
                    continue;
                cut2++;
                if (!is_ghost[(size_t)p * n + (size_t)j])
                    is_ghost[(size_t)p * n + (size_t)j] = 1, ghosts++;
                if (!is_nbr[p * nparts + part[j]])
                    is_nbr[p * nparts + part[j]] = 1, nbrs++;
            }
        }
        owned_sum += owned;
        SHARD_ENSURE(st.owned[p] == owned);
        SHARD_ENSURE(st.ghosts[p] == ghosts);
        SHARD_ENSURE(st.neighbors[p] == nbrs);
        SHARD_ENSURE(st.bonds[p] == bonds);
        SHARD_ENSURE(owned > 0);
    }
    SHARD_ENSURE(owned_sum == (int64_t)n);
    SHARD_ENSURE(st.edge_cut * 2 == cut2);
    if (nparts == 1)
        SHARD_ENSURE(st.edge_cut == 0);
    else
        SHARD_ENSURE(st.edge_cut > 0);
    printf("%d parts: edge cut %lld, owned %lld..%lld\n", nparts, (long long)st.edge_cut, (long long)st.owned[0],
           (long long)st.owned[nparts - 1]);
    free(is_ghost), free(is_nbr), free(part);
    shard_part_stats_free(&st);
}

int main(void)
{
    size_t n = 0;
    shard_csr g = {0};
    double *X = shard_test_two_blocks(&n, &g);
    /* bonds are symmetric and sorted */
    for (size_t i = 0; i < n; i++)
        for (int64_t b = g.start[i]; b < g.start[i + 1]; b++) {
            int32_t j = g.idx[b];
            if (b > g.start[i])
                SHARD_ENSURE(g.idx[b - 1] < j);
            int found = 0;
            for (int64_t c = g.start[j]; c < g.start[j + 1]; c++)
                found |= g.idx[c] == (int32_t)i;
            SHARD_ENSURE(found);
        }
    SHARD_ENSURE(g.start[1] - g.start[0] == 10); /* a corner: 3 + 3 + 1 + 3 lattice points at |r| < 2.2 a */
    SHARD_ENSURE(g.start[12 * 9 * 3 + 12 * 4 + 6 + 1] - g.start[12 * 9 * 3 + 12 * 4 + 6] == 32); /* interior */
    int parts[] = {1, 2, 3, 5, 16};
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
        test_counts(n, &g, parts[k]);
    shard_csr_free(&g);
    free(X);
    return SHARD_TEST_RESULT();
}
