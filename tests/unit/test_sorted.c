/* Unit: sorted keys (sorted.h) against a linear scan on random arrays with repeats, and the global-id map. */
#include "shard/sorted.h"
#include "test.h"

#include <stdlib.h>

int main(void)
{
    uint64_t seed = 7;
    for (int trial = 0; trial < 200; trial++) {
        size_t n = (size_t)(shard_test_next(&seed) % 40);
        int64_t a[40];
        int32_t b[40];
        int c[40];
        for (size_t i = 0; i < n; i++)
            a[i] = (int64_t)(shard_test_next(&seed) % 25) - 5;
        qsort(a, n, sizeof *a, shard_sorted_cmp_i64);
        for (size_t i = 0; i < n; i++) {
            SHARD_ENSURE(i == 0 || a[i - 1] <= a[i]);
            b[i] = (int32_t)a[i], c[i] = (int)a[i];
        }
        for (int64_t key = -7; key <= 21; key++) {
            size_t lo = 0, up = 0;
            while (lo < n && a[lo] < key)
                lo++;
            while (up < n && a[up] <= key)
                up++;
            SHARD_ENSURE(shard_sorted_lower_i64(a, n, key) == lo);
            SHARD_ENSURE(shard_sorted_upper_i64(a, n, key) == up);
            SHARD_ENSURE(shard_sorted_lower_i32(b, n, (int32_t)key) == lo);
            SHARD_ENSURE(shard_sorted_lower_int(c, n, (int)key) == lo);
            SHARD_ENSURE(shard_sorted_lower_i64_at(a, n, sizeof *a, 0, key) == lo);
            int64_t f = shard_sorted_find_i64(a, n, key);
            SHARD_ENSURE(lo < up ? f == (int64_t)lo : f == -1);
            SHARD_ENSURE(shard_sorted_find_int(c, n, (int)key) == (lo < up ? (int)lo : -1));
        }
    }
    int64_t key[5] = {50, 10, 40, 20, 30};
    int32_t via[5] = {1, 3, 4, 2, 0}; /* keys 10 20 30 40 50 */
    for (int k = 0; k < 5; k++)
        SHARD_ENSURE(shard_sorted_find_i64_via(key, via, 5, key[via[k]]) == k);
    SHARD_ENSURE(shard_sorted_find_i64_via(key, via, 5, 35) == -1 && shard_sorted_find_i64_via(key, via, 0, 10) == -1);
    int64_t p[4][2] = {{3, 1}, {1, 9}, {3, 0}, {1, 2}};
    qsort(p, 4, sizeof p[0], shard_sorted_cmp_i64_pair);
    SHARD_ENSURE(p[0][0] == 1 && p[0][1] == 2 && p[1][1] == 9 && p[2][0] == 3 && p[2][1] == 0 && p[3][1] == 1);
    double d[3] = {2.5, -1.0, 0.0};
    qsort(d, 3, sizeof *d, shard_sorted_cmp_double);
    SHARD_ENSURE(d[0] == -1.0 && d[1] == 0.0 && d[2] == 2.5);

    int64_t gid[6] = {40, 7, 1000000000000LL, -3, 12, 8};
    shard_gidmap m = {0};
    shard_gidmap_build(&m, gid, 6);
    for (int i = 0; i < 6; i++)
        SHARD_ENSURE(shard_gidmap_find(&m, gid[i]) == i);
    SHARD_ENSURE(shard_gidmap_find(&m, 9) == -1 && shard_gidmap_find(&m, 2000000000000LL) == -1);
    shard_gidmap_build(&m, gid, 2); /* rebuilt smaller: the rest is gone */
    SHARD_ENSURE(shard_gidmap_find(&m, 40) == 0 && shard_gidmap_find(&m, 12) == -1);
    shard_gidmap_free(&m);
    SHARD_ENSURE(shard_gidmap_find(&m, 40) == -1); /* an empty map (no storage) finds nothing */
    SHARD_ENSURE(shard_sorted_lower_i64_at(NULL, 0, 16, 0, 5) == 0);
    return SHARD_TEST_RESULT();
}
