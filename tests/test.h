/* Minimal test macros: each test program returns 0 on success, 1 on the first failed check's summary. */
#ifndef SHARD_TEST_H
#define SHARD_TEST_H
#include <math.h>
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

#define SHARD_TEST_RESULT() (shard_test_failures ? (fprintf(stderr, "%d check(s) failed\n", shard_test_failures), 1) : 0)

#endif
