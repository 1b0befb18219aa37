/* Xsum: the exact long accumulator (see shard/xsum.h): normalisation, merging, and the one rounding to double.
 * No MPI here; decomposition/xsum_comm.c reduces accumulators over the ranks. */
#include "shard/xsum.h"

#include <math.h>

_Static_assert(sizeof(shard_xsum) == SHARD_XSUM_WORDS * sizeof(int64_t), "shard_xsum must be a flat int64 array");
_Static_assert(sizeof(shard_xsum) == 576, "the size documented in shard/xsum.h");
/* The carry code shifts negative int64 right and expects floor division (GCC and Clang do, on every target). */
_Static_assert((-1 >> 1) == -1, "arithmetic right shift");

#define SHARD_XSUM_TOP (SHARD_XSUM_LIMBS - 1)

/* The low 32 bits of x read as a signed digit in [-2^31, 2^31). */
static inline int64_t shard_xsum_sext32(int64_t x)
{
    return (int64_t)(((uint64_t)x & 0xffffffffu) ^ 0x80000000u) - 0x80000000;
}

/* Signed digits in limbs 0..TOP-1, the rest in the top limb.  No intermediate overflows: hi and the carry stay
 * within 2^31 + 1 in magnitude, y within 2^32 + 2^31. */
static void shard_xsum_carry_signed(int64_t *limb)
{
    int64_t carry = 0;
    for (int k = 0; k < SHARD_XSUM_TOP; k++) {
        int64_t x = limb[k];
        int64_t lo = shard_xsum_sext32(x);
        int64_t hi = (x >> 32) + (lo < 0); /* x = hi * 2^32 + lo */
        int64_t y = lo + carry;
        int64_t d = shard_xsum_sext32(y);
        carry = hi + ((y - d) >> 32);
        limb[k] = d;
    }
    limb[SHARD_XSUM_TOP] += carry;
}

void shard_xsum_init(shard_xsum *acc) { memset(acc, 0, sizeof *acc); }

void shard_xsum_normalise(shard_xsum *acc)
{
    shard_xsum_carry_signed(acc->limb);
    acc->pending = 0;
}

void shard_xsum_add_special(shard_xsum *acc, uint64_t bits)
{
    if (bits & 0xfffffffffffffull)
        acc->nan++;
    else if (bits >> 63)
        acc->ninf++;
    else
        acc->pinf++;
}

void shard_xsum_add_n(shard_xsum *acc, const double *x, size_t n, size_t stride)
{
    /* in batches that keep pending within the limit, so that the loop itself carries no counter through memory */
    while (n > 0) {
        size_t batch = (size_t)(SHARD_XSUM_PENDING_MAX - acc->pending);
        batch = batch < n ? batch : n;
        for (size_t i = 0; i < batch; i++)
            shard_xsum_deposit(acc, x[i * stride]);
        acc->pending += (int64_t)batch;
        if (acc->pending >= SHARD_XSUM_PENDING_MAX)
            shard_xsum_normalise(acc);
        n -= batch;
        if (n > 0) /* (never past the last term: x + k * stride may point beyond the array) */
            x += batch * stride;
    }
}

void shard_xsum_merge(shard_xsum *acc, const shard_xsum *src)
{
    /* Each operand's limbs are a normalised digit plus at most `pending` chunks below 2^32; their sum is within
     * the bound of a normalised digit plus pending_a + pending_b + 1 chunks, which must not pass the limit.  At
     * rest pending stays below the limit (shard_xsum_add adds one chunk before it checks). */
    shard_xsum copy;
    if (acc->pending + src->pending + 1 > SHARD_XSUM_PENDING_MAX) {
        shard_xsum_normalise(acc);
        if (src->pending + 1 > SHARD_XSUM_PENDING_MAX) {
            copy = *src;
            shard_xsum_normalise(&copy);
            src = &copy;
        }
    }
    for (int k = 0; k < SHARD_XSUM_LIMBS; k++)
        acc->limb[k] += src->limb[k];
    acc->nan += src->nan;
    acc->pinf += src->pinf;
    acc->ninf += src->ninf;
    acc->pending += src->pending + 1;
    if (acc->pending >= SHARD_XSUM_PENDING_MAX)
        shard_xsum_normalise(acc);
}

double shard_xsum_round(const shard_xsum *acc)
{
    if (acc->nan > 0 || (acc->pinf > 0 && acc->ninf > 0))
        return NAN;
    if (acc->pinf > 0)
        return INFINITY;
    if (acc->ninf > 0)
        return -INFINITY;

    /* Signed digits first: the sign of the value is the sign of the highest non-zero digit (the digits below it
     * add up to less than 2^(32j) in magnitude). */
    int64_t d[SHARD_XSUM_LIMBS];
    memcpy(d, acc->limb, sizeof d);
    shard_xsum_carry_signed(d);
    int j = SHARD_XSUM_TOP;
    while (j >= 0 && d[j] == 0)
        j--;
    if (j < 0)
        return 0.0;
    uint64_t sign = 0;
    if (d[j] < 0) {
        sign = 1ull << 63;
        for (int k = 0; k <= j; k++)
            d[k] = -d[k];
    }
    /* Now the magnitude, as unsigned digits in [0, 2^32) (the top limb keeps any excess). */
    int64_t carry = 0;
    for (int k = 0; k < SHARD_XSUM_TOP; k++) {
        int64_t x = d[k] + carry;
        d[k] = x & 0xffffffff;
        carry = x >> 32;
    }
    d[SHARD_XSUM_TOP] += carry;
    while (d[j] == 0)
        j--;
    int msb = 32 * j + 63 - __builtin_clzll((uint64_t)d[j]); /* value in [2^(msb-1074), 2^(msb-1073)) */
    uint64_t bits;
    if (msb >= 1024 + 1074) {
        bits = 0x7ff0000000000000ull;
    } else if (msb < 53) {
        /* below 2^-1021: an integer multiple of 2^-1074 under 2^53, whose bits are exactly the double's (the
         * subnormals, and the binade of DBL_MIN with exponent field 1) */
        bits = (uint64_t)d[0] | (uint64_t)d[1] << 32;
    } else {
        int shift = msb - 52; /* the result is M * 2^(shift - 1074), M in [2^52, 2^53]; shift <= 2045 */
        int k = shift >> 5, s = shift & 31;
        uint64_t w = ((uint64_t)d[k] | (uint64_t)d[k + 1] << 32) >> s;
        if (s)
            w |= (uint64_t)d[k + 2] << (64 - s);
        uint64_t M = w & 0x1fffffffffffffull;
        int r = shift - 1, kr = r >> 5, sr = r & 31;
        uint64_t round = ((uint64_t)d[kr] >> sr) & 1;
        int sticky = ((uint64_t)d[kr] & ((1ull << sr) - 1)) != 0;
        for (int q = 0; q < kr && !sticky; q++)
            sticky = d[q] != 0;
        M += round & (sticky | (M & 1));
        /* exponent field shift + 1 plus the hidden bit; M = 2^53 carries into the exponent by itself */
        bits = ((uint64_t)shift << 52) + M; /* at most 0x7ff0000000000000, inf when DBL_MAX rounds up */
    }
    bits |= sign;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}
