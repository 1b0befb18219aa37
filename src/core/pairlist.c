/* Pair lists (core): per-particle lists of keyed values (see pairlist.h). */
#include "shard/pairlist.h"

#include <stdlib.h>
#include <string.h>

void shard_pairlist_init(shard_pairlist *l, int width)
{
    memset(l, 0, sizeof *l);
    l->width = width;
}

void shard_pairlist_reset(shard_pairlist *l, size_t n)
{
    shard_reserve((void **)&l->start, &l->row_cap, n + 1, sizeof *l->start);
    l->n = n;
    l->start[0] = 0;
    l->closed = 0;
    l->fill = 0;
}

/* Closes rows [closed, upto): they end where the entries written so far end. */
static void shard_pairlist_close(shard_pairlist *l, size_t upto)
{
    while (l->closed < upto)
        l->start[++l->closed] = l->fill;
}

void shard_pairlist_push(shard_pairlist *l, size_t row, int64_t key, const double *val)
{
    SHARD_ASSERT(row >= l->closed && row < l->n);
    shard_pairlist_close(l, row);
    size_t need = (size_t)l->fill + 1;
    if (need > l->cap || !l->key) {
        size_t cap = l->cap < 64 ? 64 : l->cap;
        while (cap < need)
            cap += cap / 2;
        l->key = shard_realloc(l->key, cap * sizeof *l->key);
        l->val = shard_realloc(l->val, cap * (size_t)l->width * sizeof *l->val);
        l->cap = cap;
    }
    l->key[l->fill] = key;
    memcpy(l->val + (size_t)l->width * (size_t)l->fill, val, (size_t)l->width * sizeof *val);
    l->fill++;
}

void shard_pairlist_finish(shard_pairlist *l) { shard_pairlist_close(l, l->n); }

void shard_pairlist_free(shard_pairlist *l)
{
    if (!l)
        return;
    free(l->start), free(l->key), free(l->val);
    shard_pairlist_init(l, l->width);
}
