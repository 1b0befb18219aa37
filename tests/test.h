/* Minimal test macros: each test program returns 0 on success, 1 on the first failed check's summary. */
#ifndef SHARD_TEST_H
#define SHARD_TEST_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int shard_test_failures = 0;

#define SHARD_ENSURE(c)                                                                                          \
    do {                                                                                                         \
        if (!(c)) {                                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);                                      \
            shard_test_failures++;                                                                               \
        }                                                                                                        \
    } while (0)

#define SHARD_ENSURE_NEAR(a, b, tol)                                                                             \
    do {                                                                                                         \
        double shard_a_ = (a), shard_b_ = (b);                                                                   \
        if (!(fabs(shard_a_ - shard_b_) <= (tol))) {                                                             \
            fprintf(stderr, "FAIL %s:%d: %s = %.17g, %s = %.17g, |diff| = %.3g > %.3g\n", __FILE__, __LINE__,  \
                    #a, shard_a_, #b, shard_b_, fabs(shard_a_ - shard_b_), (double)(tol));                     \
            shard_test_failures++;                                                                               \
        }                                                                                                        \
    } while (0)

/* The splitmix64 sequence of a seed (Steele, Lea & Flood 2014), so that every failure reproduces:
 * shard_test_next(&state) gives 64 random bits, shard_test_rnd(&state) a uniform number in [-1, 1). */
static inline uint64_t shard_test_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double shard_test_rnd(uint64_t *state) { return (double)(shard_test_next(state) >> 11) * 0x1.0p-52 - 1.0; }

#define SHARD_TEST_RESULT() (shard_test_failures ? (fprintf(stderr, "%d check(s) failed\n", shard_test_failures), 1) : 0)

#endif
