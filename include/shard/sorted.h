/* Sorted (core): searches over sorted keys, comparators for qsort, and the global-id map (a sorted table of
 * (global id, local index) pairs).  Every binary search and every plain comparator of the code is one of these,
 * so that an off-by-one lives in one place and is tested once (tests/unit/test_sorted.c).  Local; no MPI.
 */
#ifndef SHARD_SORTED_H
#define SHARD_SORTED_H

#include "shard/base.h"

/* The first index i in [0, n] with a[i] >= key (lower bound) or a[i] > key (upper bound), for a[] ascending. */
size_t shard_sorted_lower_i64(const int64_t *a, size_t n, int64_t key);
size_t shard_sorted_upper_i64(const int64_t *a, size_t n, int64_t key);
size_t shard_sorted_lower_i32(const int32_t *a, size_t n, int32_t key);
size_t shard_sorted_lower_int(const int *a, size_t n, int key);
/* The same over records: the int64 key of record i is at (char *)base + i * stride + offset. */
size_t shard_sorted_lower_i64_at(const void *base, size_t n, size_t stride, size_t offset, int64_t key);

/* The index of key in a[0..n) ascending, or -1 when it is absent. */
int64_t shard_sorted_find_i64(const int64_t *a, size_t n, int64_t key);
int shard_sorted_find_int(const int *a, size_t n, int key);
/* The same through an index: the k in [0, n) with key[idx[k]] == want, for idx[] ascending by key[] (a CSR row of
 * local indices sorted by partner global id), or -1. */
int64_t shard_sorted_find_i64_via(const int64_t *key, const int32_t *idx, size_t n, int64_t want);

/* Ascending comparators for qsort and bsearch. */
int shard_sorted_cmp_i64(const void *a, const void *b);
int shard_sorted_cmp_i32(const void *a, const void *b);
int shard_sorted_cmp_double(const void *a, const void *b);
/* Records whose first member is an int64 key (a global id), then a second int64 (ties). */
int shard_sorted_cmp_i64_pair(const void *a, const void *b);

/* The global-id map: local indices by global id. */
typedef struct shard_gidmap_entry {
    int64_t gid;
    int32_t local, pad;
} shard_gidmap_entry;

typedef struct shard_gidmap {
    shard_gidmap_entry *at; /* n entries, ascending by gid */
    size_t n, cap;
} shard_gidmap;

/* Builds the map of gid[0..n) (local index i for gid[i]; the gids distinct), reusing the map's storage. */
void shard_gidmap_build(shard_gidmap *m, const int64_t *gid, size_t n);
/* The local index of gid, or -1. */
int32_t shard_gidmap_find(const shard_gidmap *m, int64_t gid);
void shard_gidmap_free(shard_gidmap *m);

#endif
