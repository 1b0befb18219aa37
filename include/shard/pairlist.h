/* Pair lists (core): per-particle lists of keyed values, the state a force term keeps about each of a particle's
 * contacts (the tangential spring of friction) from one step to the next.
 *
 * A list is a CSR over a rank's owned particles: row i holds entries sorted by an int64 key (a partner's global
 * id, or a negative key for an obstacle), each with `width` doubles.  Because rows are sorted by key, not by
 * where a partner lives, a row reads the same on any number of ranks.  A term reads last step's list and writes
 * this step's, row after row in owned order (shard_pairlist_begin_row / _push), so the driver keeps two and swaps
 * them; buffers only grow.  Lists are state: the driver distributes and checkpoints them (rows by particle, in
 * the order of the owned particles) like bonds.
 */
#ifndef SHARD_PAIRLIST_H
#define SHARD_PAIRLIST_H

#include "shard/base.h"

typedef struct shard_pairlist {
    int width;      /* doubles per entry */
    size_t n;       /* rows: owned particles */
    int64_t *start; /* n + 1 */
    int64_t *key;   /* entries, sorted inside each row */
    double *val;    /* width per entry */
    size_t cap, row_cap;
    size_t closed; /* while filling: rows [0, closed) are complete */
    int64_t fill;  /* while filling: entries written */
} shard_pairlist;

/* An empty list of `width` doubles per entry. Local. */
void shard_pairlist_init(shard_pairlist *l, int width);
/* Starts filling: n rows, none written yet. Local. */
void shard_pairlist_reset(shard_pairlist *l, size_t n);
/* Appends an entry to `row` (rows in non-decreasing order; keys increasing within a row; rows skipped stay
 * empty). Local. */
void shard_pairlist_push(shard_pairlist *l, size_t row, int64_t key, const double *val);
/* Ends the filling: every row not yet complete is closed. Local. */
void shard_pairlist_finish(shard_pairlist *l);
/* Entries in all rows. */
static inline size_t shard_pairlist_size(const shard_pairlist *l) { return l->n ? (size_t)l->start[l->n] : 0; }
void shard_pairlist_free(shard_pairlist *l);

/* A cursor over one row, for a merge with another list sorted by the same keys. */
typedef struct shard_pairlist_cursor {
    const shard_pairlist *l;
    int64_t at, end;
} shard_pairlist_cursor;

static inline shard_pairlist_cursor shard_pairlist_row(const shard_pairlist *l, size_t row)
{
    shard_pairlist_cursor c = {l, 0, 0};
    if (l && row < l->n)
        c.at = l->start[row], c.end = l->start[row + 1];
    return c;
}

/* The values stored under `key` in the cursor's row, or NULL; keys must be asked for in increasing order. */
static inline const double *shard_pairlist_find(shard_pairlist_cursor *c, int64_t key)
{
    while (c->at < c->end && c->l->key[c->at] < key)
        c->at++;
    return c->at < c->end && c->l->key[c->at] == key ? c->l->val + (size_t)c->l->width * (size_t)c->at : NULL;
}

#endif
