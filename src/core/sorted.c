/* Sorted keys, comparators and the global-id map (see sorted.h). */
#include "shard/sorted.h"

#include <stdlib.h>
#include <string.h>

#define SHARD_SORTED_BOUND(a, n, key, before)                                                                          \
    do {                                                                                                               \
        size_t lo_ = 0, hi_ = (n);                                                                                     \
        while (lo_ < hi_) {                                                                                            \
            size_t mid_ = lo_ + (hi_ - lo_) / 2;                                                                       \
            if (before((a)[mid_], (key)))                                                                              \
                lo_ = mid_ + 1;                                                                                        \
            else                                                                                                       \
                hi_ = mid_;                                                                                            \
        }                                                                                                              \
        return lo_;                                                                                                    \
    } while (0)
#define SHARD_SORTED_LESS(x, k) ((x) < (k))
#define SHARD_SORTED_LEQ(x, k) ((x) <= (k))

size_t shard_sorted_lower_i64(const int64_t *a, size_t n, int64_t key)
{
    SHARD_SORTED_BOUND(a, n, key, SHARD_SORTED_LESS);
}
size_t shard_sorted_upper_i64(const int64_t *a, size_t n, int64_t key)
{
    SHARD_SORTED_BOUND(a, n, key, SHARD_SORTED_LEQ);
}
size_t shard_sorted_lower_i32(const int32_t *a, size_t n, int32_t key)
{
    SHARD_SORTED_BOUND(a, n, key, SHARD_SORTED_LESS);
}
size_t shard_sorted_lower_int(const int *a, size_t n, int key) { SHARD_SORTED_BOUND(a, n, key, SHARD_SORTED_LESS); }

size_t shard_sorted_lower_i64_at(const void *base, size_t n, size_t stride, size_t offset, int64_t key)
{
    if (n == 0) /* base may be NULL then: no pointer arithmetic on it */
        return 0;
    const char *b = (const char *)base + offset;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t k;
        memcpy(&k, b + mid * stride, sizeof k);
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t shard_sorted_find_i64(const int64_t *a, size_t n, int64_t key)
{
    size_t i = shard_sorted_lower_i64(a, n, key);
    return i < n && a[i] == key ? (int64_t)i : -1;
}

int64_t shard_sorted_find_i64_via(const int64_t *key, const int32_t *idx, size_t n, int64_t want)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key[idx[mid]] < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && key[idx[lo]] == want ? (int64_t)lo : -1;
}

int shard_sorted_find_int(const int *a, size_t n, int key)
{
    size_t i = shard_sorted_lower_int(a, n, key);
    return i < n && a[i] == key ? (int)i : -1;
}

#define SHARD_SORTED_CMP(T, a, b)                                                                                      \
    do {                                                                                                               \
        T x_, y_;                                                                                                      \
        memcpy(&x_, (a), sizeof x_);                                                                                   \
        memcpy(&y_, (b), sizeof y_);                                                                                   \
        return (x_ > y_) - (x_ < y_);                                                                                  \
    } while (0)

int shard_sorted_cmp_i64(const void *a, const void *b) { SHARD_SORTED_CMP(int64_t, a, b); }
int shard_sorted_cmp_i32(const void *a, const void *b) { SHARD_SORTED_CMP(int32_t, a, b); }
int shard_sorted_cmp_double(const void *a, const void *b) { SHARD_SORTED_CMP(double, a, b); }

int shard_sorted_cmp_i64_pair(const void *a, const void *b)
{
    int c = shard_sorted_cmp_i64(a, b);
    return c ? c : shard_sorted_cmp_i64((const int64_t *)a + 1, (const int64_t *)b + 1);
}

void shard_gidmap_build(shard_gidmap *m, const int64_t *gid, size_t n)
{
    shard_reserve((void **)&m->at, &m->cap, n + 1, sizeof *m->at);
    for (size_t i = 0; i < n; i++)
        m->at[i] = (shard_gidmap_entry){.gid = gid[i], .local = (int32_t)i};
    qsort(m->at, n, sizeof *m->at, shard_sorted_cmp_i64);
    m->n = n;
}

int32_t shard_gidmap_find(const shard_gidmap *m, int64_t gid)
{
    size_t i = shard_sorted_lower_i64_at(m->at, m->n, sizeof *m->at, offsetof(shard_gidmap_entry, gid), gid);
    return i < m->n && m->at[i].gid == gid ? m->at[i].local : -1;
}

void shard_gidmap_free(shard_gidmap *m)
{
    free(m->at);
    memset(m, 0, sizeof *m);
}
