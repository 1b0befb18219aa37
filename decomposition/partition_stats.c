/* Partition statistics (see partition_stats.h).  Sort-based, so P = 1024 parts of 10^6 particles needs memory
 * proportional to the cut, not to P x N. */
#include "shard/partition_stats.h"

#include <stdlib.h>
#include <string.h>

static int shard_part_stats_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts keys, and counts the distinct ones per part (part = key / stride). */
static void shard_part_stats_count_distinct(int64_t *keys, size_t n, int64_t stride, int64_t *per_part)
{
    if (n > 1)
        qsort(keys, n, sizeof *keys, shard_part_stats_cmp);
    for (size_t k = 0; k < n; k++)
        if (k == 0 || keys[k] != keys[k - 1])
            per_part[keys[k] / stride]++;
}

void shard_part_stats_compute(size_t n, const shard_csr *graph, int nparts, const int32_t *part,
                              shard_part_stats *st)
{
    memset(st, 0, sizeof *st);
    st->nparts = nparts;
    st->owned = shard_calloc((size_t)nparts, sizeof *st->owned);
    st->ghosts = shard_calloc((size_t)nparts, sizeof *st->ghosts);
    st->neighbors = shard_calloc((size_t)nparts, sizeof *st->neighbors);
    st->bonds = shard_calloc((size_t)nparts, sizeof *st->bonds);
    size_t cut = 0;
    for (size_t i = 0; i < n; i++) {
        st->owned[part[i]]++;
        st->bonds[part[i]] += graph->start[i + 1] - graph->start[i];
        for (int64_t b = graph->start[i]; b < graph->start[i + 1]; b++)
            cut += part[graph->idx[b]] != part[i];
    }
    st->edge_cut = (int64_t)(cut / 2);
    /* (part of i, j) for every cut bond: distinct pairs are the ghosts of each part; (part i, part j) pairs are
     * its neighbours. */
    int64_t *gk = shard_malloc((cut + 1) * sizeof *gk), *nk = shard_malloc((cut + 1) * sizeof *nk);
    size_t m = 0;
    int64_t N = (int64_t)n;
    for (size_t i = 0; i < n; i++)
        for (int64_t b = graph->start[i]; b < graph->start[i + 1]; b++) {
            int32_t j = graph->idx[b];
            if (part[j] == part[i])
                continue;
            gk[m] = (int64_t)part[i] * N + j;
            nk[m++] = (int64_t)part[i] * nparts + part[j];
        }
    shard_part_stats_count_distinct(gk, m, N, st->ghosts);
    shard_part_stats_count_distinct(nk, m, nparts, st->neighbors);
    free(gk);
    free(nk);
}

void shard_part_stats_free(shard_part_stats *st)
{
    if (!st)
        return;
    free(st->owned), free(st->ghosts), free(st->neighbors), free(st->bonds);
    memset(st, 0, sizeof *st);
}
