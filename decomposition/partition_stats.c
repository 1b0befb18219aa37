/* Partition statistics (see partition_stats.h).  Sort-based, so P = 1024 parts of 10^6 particles needs memory
 * proportional to the cut, not to P x N. */
#include "shard/partition_stats.h"

#include "comm_impl.h"

#include "shard/sorted.h"

#include <stdlib.h>
#include <string.h>

/* Sorts keys, and counts the distinct ones per part (part = key / stride). */
static void shard_part_stats_count_distinct(int64_t *keys, size_t n, int64_t stride, int64_t *per_part)
{
    if (n > 1)
        qsort(keys, n, sizeof *keys, shard_sorted_cmp_i64);
    for (size_t k = 0; k < n; k++)
        if (k == 0 || keys[k] != keys[k - 1])
            per_part[keys[k] / stride]++;
}

static void shard_part_stats_alloc(shard_part_stats *st, int nparts)
{
    memset(st, 0, sizeof *st);
    st->nparts = nparts;
    st->owned = shard_calloc((size_t)nparts, sizeof *st->owned);
    st->ghosts = shard_calloc((size_t)nparts, sizeof *st->ghosts);
    st->neighbors = shard_calloc((size_t)nparts, sizeof *st->neighbors);
    st->bonds = shard_calloc((size_t)nparts, sizeof *st->bonds);
}

void shard_part_stats_compute(size_t n, const shard_csr *graph, int nparts, const int32_t *part, shard_part_stats *st)
{
    shard_part_stats_alloc(st, nparts);
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

/* Sorts pairs (a, b) and counts the distinct ones per a. */
static void shard_part_stats_count_pairs(int64_t *pairs, size_t n, int64_t *per_part)
{
    if (n > 1)
        qsort(pairs, n, 2 * sizeof *pairs, shard_sorted_cmp_i64_pair);
    for (size_t k = 0; k < n; k++)
        if (k == 0 || shard_sorted_cmp_i64_pair(pairs + 2 * k, pairs + 2 * (k - 1)) != 0)
            per_part[pairs[2 * k]]++;
}

void shard_part_stats_compute_dist(shard_comm *c, const shard_particles *p, const shard_csr *bonds, const double *part,
                                   int nparts, shard_part_stats *st)
{
    shard_part_stats_alloc(st, nparts);
    int np = c->size;
    size_t n_own = p->n_owned;
    int64_t cut = 0;
    /* Per cut bond entry i -> j: (part i, gid j), to be counted distinct per part, and (part i, part j).  Each
     * goes to the rank that counts part i's: part mod np. */
    size_t *count = shard_calloc((size_t)np + 1, sizeof *count), *at = shard_calloc((size_t)np + 1, sizeof *at);
    for (size_t i = 0; i < n_own; i++) {
        int64_t pi = (int64_t)part[i];
        st->owned[pi]++;
        st->bonds[pi] += bonds->start[i + 1] - bonds->start[i];
        for (int64_t e = bonds->start[i]; e < bonds->start[i + 1]; e++)
            if ((int64_t)part[bonds->idx[e]] != pi) {
                cut++;
                count[pi % np] += 4;
            }
    }
    for (int r = 1; r < np; r++)
        at[r] = at[r - 1] + count[r - 1];
    int64_t *send = shard_malloc((at[np - 1] + count[np - 1] + 1) * sizeof *send);
    for (size_t i = 0; i < n_own; i++) {
        int64_t pi = (int64_t)part[i];
        for (int64_t e = bonds->start[i]; e < bonds->start[i + 1]; e++) {
            size_t j = (size_t)bonds->idx[e];
            if ((int64_t)part[j] == pi)
                continue;
            int64_t *w = send + at[pi % np];
            w[0] = pi, w[1] = p->gid[j], w[2] = pi, w[3] = (int64_t)part[j];
            at[pi % np] += 4;
        }
    }
    size_t n_recv = 0;
    int64_t *recv = shard_comm_exchange_i64(c, send, count, &n_recv);
    free(send), free(count), free(at);
    size_t m = n_recv / 4;
    int64_t *gk = shard_malloc((2 * m + 1) * sizeof *gk), *nk = shard_malloc((2 * m + 1) * sizeof *nk);
    for (size_t k = 0; k < m; k++) {
        gk[2 * k] = recv[4 * k], gk[2 * k + 1] = recv[4 * k + 1];
        nk[2 * k] = recv[4 * k + 2], nk[2 * k + 1] = recv[4 * k + 3];
    }
    free(recv);
    shard_part_stats_count_pairs(gk, m, st->ghosts);
    shard_part_stats_count_pairs(nk, m, st->neighbors);
    free(gk), free(nk);
    shard_comm_sum_i64s(c, st->owned, (size_t)nparts);
    shard_comm_sum_i64s(c, st->bonds, (size_t)nparts);
    shard_comm_sum_i64s(c, st->ghosts, (size_t)nparts);
    shard_comm_sum_i64s(c, st->neighbors, (size_t)nparts);
    /* Every cut bond is held by both of its ends. */
    st->edge_cut = shard_comm_sum_i64(c, cut) / 2;
}

void shard_part_stats_free(shard_part_stats *st)
{
    if (!st)
        return;
    free(st->owned), free(st->ghosts), free(st->neighbors), free(st->bonds);
    memset(st, 0, sizeof *st);
}
