/* Xsum: exact sums of doubles, rounded once, so that a total has the same bits whatever the order of its terms
 * and however they are split among ranks (src/core/xsum.c; the reduction over ranks is shard_comm_xsum in
 * shard/comm.h, decomposition/xsum_comm.c).
 *
 * A shard_xsum is a Kulisch long accumulator (U. Kulisch & W. Miranker, "Computer Arithmetic in Theory and
 * Practice", Academic Press 1981), kept in carry-save form as in ExBLAS (S. Collange, D. Defour, S. Graillat &
 * R. Iakymchuk, "Numerical reproducibility for the parallel reduction on multi- and many-core architectures",
 * Parallel Computing 49, 2015): a fixed-point number whose last bit is 2^-1074 (the smallest subnormal) and
 * whose range reaches far beyond DBL_MAX, held as 68 signed 64-bit limbs of 32-bit digits.  Every finite double
 * is such a number, so each shard_xsum_add is exact, and so is every merge: the accumulator always holds the
 * exact sum of its finite terms.  shard_xsum_round rounds that exact sum once to the nearest double, ties to
 * even, so the error is at most 0.5 ulp of the result (a tie is exactly 0.5 ulp), the result is correctly
 * rounded even when the exact sum is subnormal, and it becomes +-inf only when the rounded exact sum is out of
 * range, not when an intermediate sum would have been ([DBL_MAX, DBL_MAX, -DBL_MAX] gives DBL_MAX).
 *
 * Non-finite terms are counted apart, as IEEE addition treats them: any NaN term, or +inf and -inf together,
 * gives NaN; otherwise a +inf (-inf) term gives +inf (-inf), whatever the finite terms add up to.  An exact sum
 * of zero gives +0.0 (IEEE gives -0.0 when every term is -0.0; this accumulator does not track it).
 *
 * Cost: sizeof(shard_xsum) = 576 bytes (checked in xsum.c), no allocation.  shard_xsum_add is a handful of integer
 * operations on three limbs (unpack the exponent, shift the 53-bit significand, add three 32-bit chunks with the
 * sign); tests/unit/test_xsum.c prints the measured times: on an AMD EPYC core, about 3 ns per add (2.6 through
 * shard_xsum_add_n) against 0.95 ns for a plain double +=, 25 ns per merge and 0.2-0.4 us per rounding, which
 * carries through all limbs twice.
 *
 * Limits: each add puts at most 2^32 - 1 into a limb, and a normalised limb lies in [-2^31, 2^31), so a limb
 * (int64) can take 2^31 adds between normalisations; `pending` counts them and shard_xsum_add (and _add_n)
 * normalises when it reaches SHARD_XSUM_PENDING_MAX, so callers never have to.  Merges add pending counts (plus one)
 * and normalise first where needed.  The reduction over ranks sums normalised limbs, exact for any rank count below
 * 2^32.  The top limb (weight 2^1070) is a whole int64, so the exact sum may reach 2^1133 in magnitude: 2^109
 * terms of DBL_MAX, far more than any int64 count of terms; the NaN/inf counters are int64.
 */
#ifndef SHARD_XSUM_H
#define SHARD_XSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Limb k has weight 2^(32k - 1074).  A finite double's significand starts at bit 0..2045 (2^-1074..2^971), so
 * its three chunks land in limbs 0..65; limbs 66 and 67 take carries (the top limb is not reduced to a digit). */
#define SHARD_XSUM_LIMBS 68
#define SHARD_XSUM_PENDING_MAX ((int64_t)1 << 31)
/* int64 words in one shard_xsum: the limbs, then nan, pinf, ninf, pending (what the MPI reduction sends). */
#define SHARD_XSUM_WORDS (SHARD_XSUM_LIMBS + 4)

typedef struct shard_xsum {
    int64_t limb[SHARD_XSUM_LIMBS]; /* carry-save digits, sum of limb[k] * 2^(32k - 1074) */
    int64_t nan, pinf, ninf;        /* counts of NaN, +inf, -inf terms */
    int64_t pending;                /* adds since the last normalisation: each limb's growth, in chunks */
} shard_xsum;

/* Local: an empty accumulator (exact sum 0). */
void shard_xsum_init(shard_xsum *acc);
/* Local: brings every limb but the top one back to a digit in [-2^31, 2^31) without changing the value;
 * sets pending to 0.  Called by add, merge and round when needed; callers may, but need not. */
void shard_xsum_normalise(shard_xsum *acc);
/* Local: adds n terms x[0], x[stride], ..., x[(n-1) * stride] (stride 3 and x + k: component k of 3-vectors). */
void shard_xsum_add_n(shard_xsum *acc, const double *x, size_t n, size_t stride);
/* Local: acc += src exactly (src is not changed). */
void shard_xsum_merge(shard_xsum *acc, const shard_xsum *src);
/* Local: the exact sum rounded to the nearest double, ties to even (see the top of this file for NaN and inf). */
double shard_xsum_round(const shard_xsum *acc);

/* Out of line: the NaN / inf counters (shard_xsum_add's rare path). */
void shard_xsum_add_special(shard_xsum *acc, uint64_t bits);

/* Local, internal to add and add_n: adds finite x into the limbs (non-finite x into the counters) without
 * counting it in pending. */
static inline void shard_xsum_deposit(shard_xsum *acc, double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    uint64_t e = (b >> 52) & 0x7ff;
    if (e == 0x7ff) {
        shard_xsum_add_special(acc, b);
        return;
    }
    /* x = m * 2^(p - 1074): subnormals (e = 0) have no hidden bit and the same scale as e = 1 */
    uint64_t normal = e != 0;
    uint64_t m = (b & 0xfffffffffffffull) | normal << 52;
    uint64_t p = e - normal;
    unsigned s = (unsigned)(p & 31);
    int64_t *l = acc->limb + (p >> 5);
    int64_t neg = -(int64_t)(b >> 63); /* 0 or -1: (v ^ neg) - neg is v or -v */
    uint64_t hi = m >> (32 - s);       /* bits 32.. of m << s (s = 0 shifts by 32, fine for 64 bits) */
    int64_t c0 = (int64_t)((m << s) & 0xffffffffu), c1 = (int64_t)(hi & 0xffffffffu), c2 = (int64_t)(hi >> 32);
    l[0] += (c0 ^ neg) - neg;
    l[1] += (c1 ^ neg) - neg;
    l[2] += (c2 ^ neg) - neg;
}

/* Local: acc += x exactly.  Inline so that kernels can add per-particle terms without a call. */
static inline void shard_xsum_add(shard_xsum *acc, double x)
{
    shard_xsum_deposit(acc, x);
    if (++acc->pending >= SHARD_XSUM_PENDING_MAX)
        shard_xsum_normalise(acc);
}

#endif
