/* Validation passes over the store's invariants (see validate.h). */
#include "shard/validate.h"

#include "shard/sorted.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int shard_validate_fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int shard_validate_fail(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return 1;
}

int shard_validate_csr(const shard_csr *c, size_t rows, size_t cols, const int64_t *gid, int self_ok, char *why,
                       size_t len)
{
    if (c->n != rows)
        return shard_validate_fail(why, len, "CSR list has %zu rows, expected %zu", c->n, rows);
    if (rows == 0)
        return 0;
    if (!c->start || c->start[0] != 0)
        return shard_validate_fail(why, len, "CSR list does not start at 0");
    for (size_t i = 0; i < rows; i++) {
        int64_t s = c->start[i], e = c->start[i + 1];
        if (e < s)
            return shard_validate_fail(why, len, "CSR row %zu ends (%" PRId64 ") before it starts (%" PRId64 ")", i, e,
                                       s);
        for (int64_t k = s; k < e; k++) {
            int32_t j = c->idx[k];
            if (j < 0 || (size_t)j >= cols)
                return shard_validate_fail(why, len, "CSR row %zu: partner %d out of [0, %zu)", i, (int)j, cols);
            if (!self_ok && (size_t)j == i)
                return shard_validate_fail(why, len, "CSR row %zu lists itself", i);
            if (gid && k > s && !(gid[c->idx[k - 1]] < gid[j]))
                return shard_validate_fail(
                    why, len, "CSR row %zu: partners not in increasing global id (%" PRId64 " then %" PRId64 ")", i,
                    gid[c->idx[k - 1]], gid[j]);
        }
    }
    if ((size_t)c->start[rows] > c->cap)
        return shard_validate_fail(why, len, "CSR list holds %" PRId64 " entries, more than its capacity %zu",
                                   c->start[rows], c->cap);
    return 0;
}

int shard_validate_particles(const shard_particles *p, int64_t n_total, int n_bodies, char *why, size_t len)
{
    if (p->n_owned + p->n_bond_ghost > p->n_local || p->n_local > p->capacity)
        return shard_validate_fail(why, len, "store split broken: owned %zu + bond ghosts %zu, local %zu, capacity %zu",
                                   p->n_owned, p->n_bond_ghost, p->n_local, p->capacity);
    for (size_t i = 0; i < p->n_local; i++) {
        if (p->gid[i] < 0 || p->gid[i] >= n_total)
            return shard_validate_fail(why, len, "particle %zu: global id %" PRId64 " out of [0, %" PRId64 ")", i,
                                       p->gid[i], n_total);
        if (p->body[i] < 0 || p->body[i] >= n_bodies)
            return shard_validate_fail(why, len, "particle %zu (id %" PRId64 "): body %d out of [0, %d)", i, p->gid[i],
                                       (int)p->body[i], n_bodies);
        for (int k = 0; k < 3; k++)
            if (!isfinite(p->x[3 * i + k]))
                return shard_validate_fail(why, len, "particle %zu (id %" PRId64 "): position not finite", i,
                                           p->gid[i]);
    }
    /* Owned ids distinct and none of them also a ghost here. */
    int64_t *own = shard_malloc((p->n_owned + 1) * sizeof *own);
    for (size_t i = 0; i < p->n_owned; i++)
        own[i] = p->gid[i];
    qsort(own, p->n_owned, sizeof *own, shard_sorted_cmp_i64);
    int rc = 0;
    for (size_t i = 1; i < p->n_owned && !rc; i++)
        if (own[i] == own[i - 1])
            rc = shard_validate_fail(why, len, "global id %" PRId64 " owned twice", own[i]);
    for (size_t i = p->n_owned; i < p->n_local && !rc; i++)
        if (shard_sorted_find_i64(own, p->n_owned, p->gid[i]) >= 0)
            rc = shard_validate_fail(why, len, "ghost %zu has the id %" PRId64 " of an owned particle", i, p->gid[i]);
    free(own);
    return rc;
}
