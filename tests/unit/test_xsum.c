/* Exact sums (shard/xsum.h) against an independent reference: Shewchuk's expansion sum as in Python's
 * math.fsum (J. R. Shewchuk, "Adaptive precision floating-point arithmetic and fast robust geometric
 * predicates", Discrete Comput. Geom. 18, 1997; the msum recipe with the half-even fix-up across partials),
 * which is correctly rounded while no partial overflows.
 *
 * Checked: hand cases with known answers (cancellation, long runs of the smallest subnormal, ties at every scale,
 * overflow, NaN/inf); random sets of wildly varying exponents and signs, equal to the reference bit for bit;
 * the error bound, |exact - result| <= 0.5 ulp with ties to even, decided exactly from the signs of reference
 * sums; the same bits under 100 permutations split into 1..8 accumulators merged in random order; normalisation
 * of arbitrary limbs and at the 2^31-add limit.  Prints ns per add.  usage: test_xsum [--long] */
#include "shard/xsum.h"
#include "test.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- reference: msum (non-overlapping partials, exact while nothing overflows) ---- */

/* Non-overlapping partials have distinct, increasing exponents: fewer than 2098 of them. */
typedef struct ref_msum {
    double p[2100];
    int n;
} ref_msum;

static void ref_add(ref_msum *r, double x)
{
    int i = 0;
    for (int j = 0; j < r->n; j++) {
        double y = r->p[j];
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y, y = t;
        }
        double hi = x + y, lo = y - (hi - x);
        if (lo != 0.0)
            r->p[i++] = lo;
        x = hi;
    }
    r->n = i;
    if (x != 0.0)
        r->p[r->n++] = x;
}

static double ref_round(const ref_msum *r)
{
    int n = r->n;
    double hi = 0.0, lo = 0.0;
    if (n == 0)
        return 0.0;
    hi = r->p[--n];
    while (n > 0) {
        double x = hi, y = r->p[--n];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0)
            break;
    }
    /* half-even across partials: the rest below lo pushes a tie off its midpoint */
    if (n > 0 && ((lo < 0.0 && r->p[n - 1] < 0.0) || (lo > 0.0 && r->p[n - 1] > 0.0))) {
        double y = lo * 2.0, x = hi + y;
        if (y == x - hi)
            hi = x;
    }
    return hi;
}

static ref_msum ref_acc; /* 17 kB: static rather than on the stack */

/* scale * sum(t) + sum(extra), correctly rounded (scale is 1 or 2, exact while nothing overflows) */
static double ref_sum(const double *t, size_t n, double scale, const double *extra, int ne)
{
    ref_acc.n = 0;
    for (size_t i = 0; i < n; i++)
        ref_add(&ref_acc, scale * t[i]);
    for (int i = 0; i < ne; i++)
        ref_add(&ref_acc, extra[i]);
    return ref_round(&ref_acc);
}

static int sign_of(double v) { return (v > 0) - (v < 0); }

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static double xsum_of(const double *t, size_t n)
{
    shard_xsum a;
    shard_xsum_init(&a);
    shard_xsum_add_n(&a, t, n, 1);
    return shard_xsum_round(&a);
}

/* The error bound, decided exactly: a correctly rounded sum preserves sign and zero, so the signs of
 * sum(t) - res and of 2 sum(t) - 2 res -+ gap say whether |exact - res| <= gap / 2, and a tie needs an even
 * significand.  Returns 0 when res is not the correctly rounded sum, 2 when it is and the sum was an exact tie,
 * 1 otherwise; *err_ulp gets (exact - res) / gap, rounded (so 0.5 also for a sum just off a tie). */
static int ref_check_rounding(const double *t, size_t n, double res, double *err_ulp)
{
    double e1[1] = {-res};
    int dir = sign_of(ref_sum(t, n, 1.0, e1, 1));
    *err_ulp = 0.0;
    if (dir == 0)
        return 1;
    double nb = nextafter(res, dir * INFINITY);
    double gap = isinf(nb) ? ldexp(1.0, 971) : fabs(nb - res);
    *err_ulp = ref_sum(t, n, 1.0, e1, 1) / gap;
    double e2[2] = {-2.0 * res, -dir * gap};
    int q = sign_of(ref_sum(t, n, 2.0, e2, 2));
    if (q == dir)
        return 0; /* beyond half a gap */
    if (q == 0)
        return (bits_of(res) & 1) == 0 ? 2 : 0; /* tie */
    return 1;
}

/* ---- random terms ---- */

static uint64_t rng_next(uint64_t *s) { return shard_test_next(s); }

static uint64_t rng_below(uint64_t *s, uint64_t n) { return rng_next(s) % n; }

/* random sign and significand, exponent field uniform in [emin, emax] (0 = subnormal) */
static double rng_double(uint64_t *s, int emin, int emax)
{
    uint64_t r = rng_next(s);
    uint64_t e = (uint64_t)emin + rng_below(s, (uint64_t)(emax - emin + 1));
    return from_bits((r & 0x800fffffffffffffull) | e << 52);
}

static void shuffle(uint64_t *s, double *t, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rng_below(s, i);
        double x = t[i - 1];
        t[i - 1] = t[j], t[j] = x;
    }
}

/* Exponent fields up to 2023 (2^1000): no partial of the reference overflows with these counts. */
enum { EMAX = 2023 };

/* Fills t (capacity cap) with one of several kinds of set; returns the count. */
static size_t make_set(uint64_t *s, int kind, double *t, size_t cap)
{
    size_t n = 1 + (size_t)rng_below(s, cap / 4);
    size_t m = 0;
    switch (kind) {
    case 0: /* wild: any exponent */
        for (; m < n; m++)
            t[m] = rng_double(s, 0, EMAX);
        break;
    case 1: /* big terms that cancel exactly, leaving the small ones */
        for (; m < n; m++)
            t[m] = rng_double(s, 1200, EMAX), t[n + m] = -t[m];
        m = 2 * n;
        for (size_t i = 0; i < n; i++)
            t[m++] = rng_double(s, 0, 1150);
        break;
    case 2: /* subnormals and the smallest normals */
        for (; m < n; m++)
            t[m] = rng_double(s, 0, 3);
        break;
    case 3: { /* exact ties: b + ulp(b)/2 in three pieces, maybe one more tiny term, cancelling big pairs */
        double b = rng_double(s, 60, 1900);
        double h = (nextafter(fabs(b), INFINITY) - fabs(b)) / 2 * (b < 0 ? -1 : 1);
        t[m++] = b, t[m++] = h / 2, t[m++] = h / 4, t[m++] = h / 4;
        uint64_t tweak = rng_below(s, 3);
        if (tweak)
            t[m++] = (tweak == 1 ? 1 : -1) * ldexp(1.0, -1074 + (int)rng_below(s, 40));
        for (size_t i = 0; i < n && m + 2 <= cap; i++) {
            t[m] = rng_double(s, 1950, EMAX), t[m + 1] = -t[m];
            m += 2;
        }
        break;
    }
    case 4: /* similar magnitudes, random signs: the total is far below the terms */
        for (; m < 2 * n; m++)
            t[m] = rng_double(s, 1023, 1024);
        break;
    default: /* one huge term, many small ones, and its negative */
        t[m++] = ldexp(1.0, 1000);
        for (size_t i = 0; i < n; i++)
            t[m++] = rng_double(s, 900, 1100);
        t[m++] = -ldexp(1.0, 1000);
        break;
    }
    shuffle(s, t, m);
    return m;
}

/* ---- tests ---- */

static void ensure_bits(const char *what, const double *t, size_t n, double expect)
{
    double got = xsum_of(t, n);
    if (bits_of(got) != bits_of(expect) && !(isnan(got) && isnan(expect))) {
        fprintf(stderr, "FAIL %s: got %a (0x%016llx), expected %a (0x%016llx)\n", what, got,
                (unsigned long long)bits_of(got), expect, (unsigned long long)bits_of(expect));
        shard_test_failures++;
    }
}

static void test_hand_cases(void)
{
    const double tiny = ldexp(1.0, -1074), inf = INFINITY;
    ensure_bits("empty", NULL, 0, 0.0);
    ensure_bits("[1e308, 1, -1e308]", (double[]){1e308, 1, -1e308}, 3, 1.0);
    ensure_bits("[1, 1e100, 1, -1e100]", (double[]){1, 1e100, 1, -1e100}, 4, 2.0);
    ensure_bits("[1 + 2^-52, -1]", (double[]){1 + DBL_EPSILON, -1}, 2, DBL_EPSILON);
    ensure_bits("[0.1] * 10", (double[]){.1, .1, .1, .1, .1, .1, .1, .1, .1, .1}, 10, 1.0);

    /* the smallest subnormal a million times, and subnormals into the normal range */
    static double many[1000000];
    for (int i = 0; i < 1000000; i++)
        many[i] = tiny;
    ensure_bits("2^-1074 * 10^6", many, 1000000, ldexp(1e6, -1074));
    double maxsub = nextafter(DBL_MIN, 0);
    ensure_bits("2 * max subnormal", (double[]){maxsub, maxsub}, 2, ldexp(0x1.ffffffffffffep0, -1022));
    ensure_bits("DBL_MIN - 2^-1074", (double[]){DBL_MIN, -tiny}, 2, maxsub);
    ensure_bits("1.5 DBL_MIN - DBL_MIN", (double[]){1.5 * DBL_MIN, -DBL_MIN}, 2, DBL_MIN / 2);

    /* ties to even at 1, with and without a far-away tiny term deciding them */
    const double h = ldexp(1.0, -53);
    ensure_bits("1 + 2^-53 (tie, down)", (double[]){1, h}, 2, 1.0);
    ensure_bits("1 + 2^-52 + 2^-53 (tie, up)", (double[]){1 + DBL_EPSILON, h}, 2, 1 + 2 * DBL_EPSILON);
    ensure_bits("1 + 2^-53 + 2^-1074", (double[]){1, h, tiny}, 3, 1 + DBL_EPSILON);
    ensure_bits("1 + 2^-53 - 2^-1074", (double[]){tiny * -1, 1, h}, 3, 1.0);
    ensure_bits("-1 - 2^-53 - 2^-1074", (double[]){-1, -h, -tiny}, 3, -1 - DBL_EPSILON);
    ensure_bits("[1e-16, 1, 1e16]", (double[]){1e-16, 1, 1e16}, 3, 1e16 + 2);
    /* ties where the round bit is the last bit of the accumulator */
    ensure_bits("2^-1021 + 2^-1074 (tie)", (double[]){ldexp(1, -1021), tiny}, 2, ldexp(1, -1021));
    ensure_bits("2^-1021 + 3 * 2^-1074 (tie, up)", (double[]){ldexp(1, -1021), 3 * tiny}, 2,
                ldexp(1, -1021) + 4 * tiny);

    /* overflow: only when the rounded exact sum is out of range */
    const double half_ulp_max = ldexp(1.0, 970);
    ensure_bits("DBL_MAX + DBL_MAX", (double[]){DBL_MAX, DBL_MAX}, 2, inf);
    ensure_bits("-DBL_MAX - DBL_MAX", (double[]){-DBL_MAX, -DBL_MAX}, 2, -inf);
    ensure_bits("DBL_MAX + DBL_MAX - DBL_MAX", (double[]){DBL_MAX, DBL_MAX, -DBL_MAX}, 3, DBL_MAX);
    ensure_bits("DBL_MAX + 2^970 (tie, to inf)", (double[]){DBL_MAX, half_ulp_max}, 2, inf);
    ensure_bits("DBL_MAX + 2^969", (double[]){DBL_MAX, half_ulp_max / 2}, 2, DBL_MAX);
    ensure_bits("DBL_MAX + 2^970 - 2^-1074", (double[]){DBL_MAX, half_ulp_max, -tiny}, 3, DBL_MAX);
    static double big[2 * 4096];
    for (int i = 0; i < 4096; i++)
        big[i] = DBL_MAX, big[4096 + i] = -DBL_MAX;
    big[4096] = 1.0; /* 4096 DBL_MAX, 4095 -DBL_MAX, 1 */
    ensure_bits("4096 DBL_MAX - 4095 DBL_MAX + 1", big, 8192, DBL_MAX);

    /* non-finite terms, as IEEE addition would treat them */
    ensure_bits("inf + 1", (double[]){inf, 1}, 2, inf);
    ensure_bits("-inf + 1", (double[]){1, -inf}, 2, -inf);
    ensure_bits("inf + inf", (double[]){inf, inf}, 2, inf);
    ensure_bits("inf - inf", (double[]){inf, 2, -inf}, 3, NAN);
    ensure_bits("nan + 1", (double[]){1, NAN}, 2, NAN);
    ensure_bits("-inf + 2 DBL_MAX", (double[]){-inf, DBL_MAX, DBL_MAX}, 3, -inf);
    /* an exact zero is +0 (documented: IEEE would give -0 here) */
    ensure_bits("-0", (double[]){-0.0}, 1, 0.0);
    ensure_bits("1 - 1", (double[]){1, -1}, 2, 0.0);

    /* the finite hand cases against the reference as well */
    double r[3] = {1e-16, 1, 1e16};
    SHARD_ENSURE(bits_of(ref_sum(r, 3, 1.0, NULL, 0)) == bits_of(xsum_of(r, 3)));
    SHARD_ENSURE(bits_of(ref_sum(many, 1000, 1.0, NULL, 0)) == bits_of(xsum_of(many, 1000)));
}

static double work[40000];

static void test_random_sets(void)
{
    uint64_t s = 20240601;
    int sets = 0, ties = 0;
    double max_err = 0.0;
    for (int it = 0; it < 600; it++) {
        int kind = it % 6;
        size_t n = make_set(&s, kind, work, 8000);
        double got = xsum_of(work, n), ref = ref_sum(work, n, 1.0, NULL, 0), err = 0.0;
        if (bits_of(got) != bits_of(ref)) {
            fprintf(stderr, "FAIL set %d (kind %d, %zu terms): xsum %a, reference %a\n", it, kind, n, got, ref);
            shard_test_failures++;
        }
        int ok = ref_check_rounding(work, n, got, &err);
        if (!ok) {
            fprintf(stderr, "FAIL set %d (kind %d): %a is not the correctly rounded sum (error %.3g ulp)\n", it,
                    kind, got, err);
            shard_test_failures++;
        }
        ties += ok == 2;
        if (fabs(err) > max_err)
            max_err = fabs(err);
        sets++;
    }
    printf("random sets: %d, all equal to the reference; max |error| %.3f ulp (bound 0.5), %d exact ties\n", sets,
           max_err, ties);
    SHARD_ENSURE(max_err <= 0.5);
    SHARD_ENSURE(ties >= 20); /* kind 3 without a tiny term is a tie (about 33 sets) */
}

/* The same bits whatever the order and however the terms are split among accumulators. */
static void test_order_and_splits(void)
{
    uint64_t s = 77;
    size_t n = 0;
    for (int kind = 0; kind < 6; kind++)
        n += make_set(&s, kind, work + n, 4000);
    double ref = ref_sum(work, n, 1.0, NULL, 0);
    uint64_t want = bits_of(xsum_of(work, n));
    SHARD_ENSURE(want == bits_of(ref));
    int bad = 0;
    for (int it = 0; it < 100; it++) {
        shuffle(&s, work, n);
        int parts = 1 + (int)rng_below(&s, 8);
        shard_xsum acc[8];
        for (int p = 0; p < parts; p++)
            shard_xsum_init(&acc[p]);
        if (it % 2) { /* random owner per term */
            for (size_t i = 0; i < n; i++)
                shard_xsum_add(&acc[rng_below(&s, (uint64_t)parts)], work[i]);
        } else { /* contiguous blocks at random cuts, through add_n */
            size_t start = 0;
            for (int p = 0; p < parts; p++) {
                size_t end = p == parts - 1 ? n : start + (size_t)rng_below(&s, n - start + 1);
                shard_xsum_add_n(&acc[p], work + start, end - start, 1);
                start = end;
            }
        }
        int order[8];
        for (int p = 0; p < parts; p++)
            order[p] = p;
        for (int p = parts; p > 1; p--) {
            int j = (int)rng_below(&s, (uint64_t)p), x = order[p - 1];
            order[p - 1] = order[j], order[j] = x;
        }
        shard_xsum total;
        shard_xsum_init(&total);
        for (int p = 0; p < parts; p++)
            shard_xsum_merge(&total, &acc[order[p]]);
        bad += bits_of(shard_xsum_round(&total)) != want;
    }
    printf("order and splits: %zu terms, 100 permutations into 1..8 accumulators, %d differ (result %a)\n", n,
           bad, from_bits(want));
    SHARD_ENSURE(bad == 0);

    /* strided adds: component k of 3-vectors */
    size_t nv = n / 3;
    shard_xsum a, b;
    shard_xsum_init(&a), shard_xsum_init(&b);
    shard_xsum_add_n(&a, work + 1, nv, 3);
    for (size_t i = 0; i < nv; i++)
        shard_xsum_add(&b, work[3 * i + 1]);
    SHARD_ENSURE(memcmp(&a, &b, sizeof a) == 0);
}

/* Normalisation keeps the value for any limb contents, and merges keep the pending bound. */
static void test_normalise(void)
{
    uint64_t s = 5;
    for (int it = 0; it < 50; it++) {
        shard_xsum a;
        shard_xsum_init(&a);
        double pieces[2 * 60];
        for (int k = 0; k < 60; k++) {
            uint64_t r = rng_next(&s);
            int64_t v = it % 3 == 0 ? (k % 2 ? INT64_MAX : INT64_MIN) : (int64_t)r;
            a.limb[k] = v;
            /* v = hi * 2^32 + lo, both exact doubles; limb k weighs 2^(32k - 1074) */
            pieces[2 * k] = ldexp((double)(v >> 32), 32 * (k + 1) - 1074);
            pieces[2 * k + 1] = ldexp((double)(v & 0xffffffff), 32 * k - 1074);
        }
        a.pending = SHARD_XSUM_PENDING_MAX;
        double ref = ref_sum(pieces, 120, 1.0, NULL, 0);
        SHARD_ENSURE(bits_of(shard_xsum_round(&a)) == bits_of(ref));
        shard_xsum_normalise(&a);
        SHARD_ENSURE(a.pending == 0);
        for (int k = 0; k < SHARD_XSUM_LIMBS - 1; k++)
            SHARD_ENSURE(a.limb[k] >= -((int64_t)1 << 31) && a.limb[k] < ((int64_t)1 << 31));
        SHARD_ENSURE(bits_of(shard_xsum_round(&a)) == bits_of(ref));
    }

    /* merges: pending counts add up, and a merge that would pass the limit normalises first */
    shard_xsum a, b;
    shard_xsum_init(&a), shard_xsum_init(&b);
    shard_xsum_add(&a, 3.0), shard_xsum_add(&b, 0.25);
    a.pending = SHARD_XSUM_PENDING_MAX - 2, b.pending = SHARD_XSUM_PENDING_MAX - 1; /* as if after many adds */
    shard_xsum_merge(&a, &b);
    SHARD_ENSURE(a.pending < SHARD_XSUM_PENDING_MAX);
    SHARD_ENSURE(shard_xsum_round(&a) == 3.25);
    SHARD_ENSURE(b.pending == SHARD_XSUM_PENDING_MAX - 1); /* src untouched */
    shard_xsum_init(&a);
    for (int i = 0; i < 10000; i++)
        shard_xsum_merge(&a, &b);
    SHARD_ENSURE(a.pending < SHARD_XSUM_PENDING_MAX);
    SHARD_ENSURE(shard_xsum_round(&a) == 2500.0);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The automatic normalisation at the limit, in the worst case: x = (2^53 - 1) 2^-1074 puts 2^32 - 1 into limb 0
 * at every add, on top of a digit at its maximum 2^31 - 1, so limb 0 reaches 2^63 - 1 at the 2^31st add.  By
 * default the test starts from the state 1000 adds short of the limit (what 2^31 - 1000 real adds leave, built
 * directly); with --long it makes every one of the 2^31 + 3 adds (about 10 s). */
static void test_limit(int full)
{
    const double x = from_bits(0x001fffffffffffffull);
    const int64_t base = ((int64_t)1 << 31) - 1, N = SHARD_XSUM_PENDING_MAX + 3, K = N - 1003;
    static double buf[4096];
    for (int i = 0; i < 4096; i++)
        buf[i] = x;
    shard_xsum a;
    shard_xsum_init(&a);
    shard_xsum_add(&a, ldexp((double)base, -1074));
    shard_xsum_normalise(&a);
    SHARD_ENSURE(a.limb[0] == base);
    int64_t done = 0;
    if (!full) {
        a.limb[0] += K * (((int64_t)1 << 32) - 1), a.limb[1] += K * (((int64_t)1 << 21) - 1), a.pending = K;
        done = K;
    }
    double t0 = now();
    while (done + 4096 <= N)
        shard_xsum_add_n(&a, buf, 4096, 1), done += 4096;
    while (done < N) /* the last ones through the inline add */
        shard_xsum_add(&a, x), done++;
    double t = now() - t0;
    /* base 2^-1074 + N (2^53 - 1) 2^-1074 = N 2^-1021 - (N - base) 2^-1074: two exact doubles, and one IEEE
     * addition rounds their sum correctly */
    double expect = ldexp((double)N, -1021) - ldexp((double)(N - base), -1074);
    SHARD_ENSURE(bits_of(shard_xsum_round(&a)) == bits_of(expect));
    SHARD_ENSURE(a.pending < 4096);
    if (full)
        printf("2^31 + 3 worst-case adds: exact (%.2f s, %.2f ns/add)\n", t, 1e9 * t / (double)N);
    else
        printf("last 1003 worst-case adds across the 2^31 limit: exact\n");
}

/* Time per add, per round and per merge. */
static void test_speed(void)
{
    static double buf[4096];
    shard_xsum a;
    double t0;
    /* random terms of all exponents, through the inline add, add_n, and a plain double sum */
    uint64_t s = 99;
    for (int i = 0; i < 4096; i++)
        buf[i] = rng_double(&s, 0, 2046);
    const int reps = 1024;
    double best_add = 1e9, best_n = 1e9, best_plain = 1e9;
    volatile double sink = 0.0;
    for (int trial = 0; trial < 5; trial++) {
        shard_xsum_init(&a);
        t0 = now();
        for (int r = 0; r < reps; r++)
            for (int i = 0; i < 4096; i++)
                shard_xsum_add(&a, buf[i]);
        double t = now() - t0;
        sink += shard_xsum_round(&a);
        best_add = t < best_add ? t : best_add;
        shard_xsum_init(&a);
        t0 = now();
        for (int r = 0; r < reps; r++)
            shard_xsum_add_n(&a, buf, 4096, 1);
        t = now() - t0;
        sink += shard_xsum_round(&a);
        best_n = t < best_n ? t : best_n;
        double plain = 0.0;
        t0 = now();
        for (int r = 0; r < reps; r++)
            for (int i = 0; i < 4096; i++)
                plain += buf[i];
        t = now() - t0;
        sink += plain;
        best_plain = t < best_plain ? t : best_plain;
    }
    const double adds = 4096.0 * reps;
    t0 = now(); /* a holds the last sum of random terms */
    for (int r = 0; r < 100000; r++)
        sink += shard_xsum_round(&a);
    double t_round = (now() - t0) / 100000;
    shard_xsum b = a;
    t0 = now();
    for (int r = 0; r < 100000; r++)
        shard_xsum_merge(&a, &b);
    double t_merge = (now() - t0) / 100000;
    printf("ns per add (random exponents, best of 5): shard_xsum_add %.2f, shard_xsum_add_n %.2f, plain += %.2f\n",
           1e9 * best_add / adds, 1e9 * best_n / adds, 1e9 * best_plain / adds);
    printf("ns per round %.1f, per merge %.1f; sizeof(shard_xsum) = %zu bytes\n", 1e9 * t_round, 1e9 * t_merge,
           sizeof(shard_xsum));
    (void)sink;
}

int main(int argc, char **argv)
{
    test_hand_cases();
    test_random_sets();
    test_order_and_splits();
    test_normalise();
    test_limit(argc > 1 && strcmp(argv[1], "--long") == 0);
    test_speed();
    return SHARD_TEST_RESULT();
}
