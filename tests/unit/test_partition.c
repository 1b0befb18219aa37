/* Partition statistics against an independent brute-force count, and METIS partitions that cover every
 * particle exactly once. */
#include "shard/neighbor.h"
#include "shard/partition.h"
#include "shard/partition_stats.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static void test_counts(size_t n, const shard_csr *g, int nparts)
{
    int32_t *part = malloc(n * sizeof *part);
    int64_t cut = -1;
    shard_error err = {0};
    SHARD_ENSURE(shard_partition_graph(n, g, nparts, part, &cut, &err) == 0 && err.code == 0);
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
    SHARD_ENSURE(st.edge_cut == cut);
    if (nparts == 1)
        SHARD_ENSURE(cut == 0);
    else
        SHARD_ENSURE(cut > 0);
    printf("%d parts: edge cut %lld, owned %lld..%lld\n", nparts, (long long)cut, (long long)st.owned[0],
           (long long)st.owned[nparts - 1]);
    free(is_ghost), free(is_nbr), free(part);
    shard_part_stats_free(&st);
}

int main(void)
{
    /* Two bodies: a 12 x 9 x 7 block and a 5 x 5 x 5 block (no bonds between them). */
    size_t n = 12 * 9 * 7 + 125;
    double *X = malloc(3 * n * sizeof *X);
    size_t m = 0;
    for (int k = 0; k < 7; k++)
        for (int j = 0; j < 9; j++)
            for (int i = 0; i < 12; i++, m++)
                X[3 * m] = i * 0.1, X[3 * m + 1] = j * 0.1, X[3 * m + 2] = k * 0.1;
    for (int k = 0; k < 5; k++)
        for (int j = 0; j < 5; j++)
            for (int i = 0; i < 5; i++, m++)
                X[3 * m] = 5 + i * 0.2, X[3 * m + 1] = j * 0.2, X[3 * m + 2] = k * 0.2;
    int64_t body_start[3] = {0, 12 * 9 * 7, (int64_t)n};
    double h[2] = {0.22, 0.44};
    shard_csr g = {0};
    shard_neighbor_bonds(n, X, 2, body_start, h, &g);
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
