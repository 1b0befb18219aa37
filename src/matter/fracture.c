/* Fracture: bond failure criteria and the local part of the fragment analysis (formulation in fracture.h). */
#include "fracture.h"

#include "shard/hash.h"

#include <math.h>
#include <stdlib.h>

/* The lattice sums of fracture.h: S_1 = sum_j w_j |n_j| over a full stencil, S_2 over the bonds that cross a
 * plane between two lattice layers, per particle of a column (|n| in spacings; integer loops over the
 * offsets: the same sums on every rank). */
static void shard_fracture_lattice_sums(double spacing, double horizon, double *S1, double *S2)
{
    double hs = horizon / spacing, h2 = hs * hs;
    int r = (int)ceil(hs);
    double s1 = 0.0, s2 = 0.0;
    for (int a = -r; a <= r; a++)
        for (int b = -r; b <= r; b++)
            for (int c = -r; c <= r; c++) {
                double d2 = (double)a * a + (double)b * b + (double)c * c, q = 1.0 - d2 / h2;
                if (d2 == 0.0 || q <= 0.0)
                    continue;
                double wn = q * q * q * sqrt(d2);
                s1 += wn;
                /* a particle k layers above the plane (k >= 0) reaches below it when c <= -(k + 1) */
                for (int k = 0; k < -c; k++)
                    s2 += wn;
            }
    *S1 = s1, *S2 = s2;
}

double shard_fracture_stretch_from_energy(double G_c, double E, double nu, double spacing, double horizon)
{
    double K = E / (3.0 * (1.0 - 2.0 * nu)), s1, s2;
    shard_fracture_lattice_sums(spacing, horizon, &s1, &s2);
    return sqrt(G_c * s1 / (9.0 * K * spacing * s2));
}

double shard_fracture_micromodulus(double E, double nu, double spacing, double horizon)
{
    double K = E / (3.0 * (1.0 - 2.0 * nu)), s1, s2;
    shard_fracture_lattice_sums(spacing, horizon, &s1, &s2);
    double s4 = spacing * spacing * spacing * spacing;
    return s1 > 0.0 ? 18.0 * K / (s4 * s1) : 0.0;
}

void shard_fracture_params_init(shard_fracture_params *fp, const shard_fracture_def *d, double E, double nu,
                                double spacing, double horizon)
{
    *fp = (shard_fracture_params){.criterion = SHARD_FRACTURE_NONE, .weibull_norm = 1.0};
    switch (d->criterion) {
    case SHARD_FRACTURE_STRETCH:
        fp->criterion = SHARD_FRACTURE_STRETCH;
        fp->threshold = d->value;
        break;
    case SHARD_FRACTURE_ENERGY:
        fp->criterion = SHARD_FRACTURE_STRETCH;
        fp->threshold = shard_fracture_stretch_from_energy(d->value, E, nu, spacing, horizon);
        break;
    case SHARD_FRACTURE_RANKINE:
        fp->criterion = SHARD_FRACTURE_RANKINE;
        fp->threshold = d->value;
        break;
    default:
        return;
    }
    if (d->weibull_modulus > 0.0) {
        fp->weibull_m = d->weibull_modulus;
        fp->weibull_norm = 1.0 / tgamma(1.0 + 1.0 / d->weibull_modulus);
    }
    fp->seed = (uint64_t)d->weibull_seed;
}

double shard_fracture_scatter(const shard_fracture_params *fp, int64_t a, int64_t b)
{
    if (!(fp->weibull_m > 0.0))
        return 1.0;
    int64_t lo = a < b ? a : b, hi = a < b ? b : a;
    uint64_t h = shard_hash_add(shard_hash_add(shard_hash_mix(fp->seed), (uint64_t)lo), (uint64_t)hi);
    double u = ((double)(h >> 11) + 0.5) * 0x1p-53; /* in (0, 1), never 0 or 1 */
    return pow(-log1p(-u), 1.0 / fp->weibull_m) * fp->weibull_norm;
}

int shard_fracture_bond_fails(const shard_fracture_params *fp, const double X[3], const double x[3], const double *si,
                              const double *sj, int64_t gi, int64_t gj, double least)
{
    double r2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    if (fp->criterion == SHARD_FRACTURE_STRETCH) {
        double R2 = X[0] * X[0] + X[1] * X[1] + X[2] * X[2];
        if (!(r2 > R2)) /* compressed or unchanged: never */
            return 0;
        /* |x| / |X| - 1 >= s_ij, squared: the same bits as the solid's pass-1 filter (solid.c) */
        double c = 1.0 + shard_fracture_stretch_of(fp, gi, gj);
        return r2 >= c * c * R2;
    }
    if (fp->criterion == SHARD_FRACTURE_RANKINE) {
        if (!(r2 > 0.0))
            return 0;
        /* x^T ((si + sj) / 2) x / |x|^2, each product written so that -x gives the same bits */
        double s[6];
        for (int k = 0; k < 6; k++)
            s[k] = 0.5 * (si[k] + sj[k]);
        double q = s[0] * (x[0] * x[0]) + s[3] * (x[1] * x[1]) + s[5] * (x[2] * x[2]) +
                   2.0 * (s[1] * (x[0] * x[1]) + s[2] * (x[0] * x[2]) + s[4] * (x[1] * x[2]));
        double tn = q / r2;
        if (!(tn > 0.0) || tn < least)
            return 0;
        return tn >= fp->threshold * shard_fracture_scatter(fp, gi, gj);
    }
    return 0;
}

int shard_fracture_segment_meets_box(const double a[3], const double b[3], const double lo[3], const double hi[3])
{
    /* Slab test on p(t) = a + t (b - a), t in [0, 1]: the parameter interval inside each closed slab. */
    double t0 = 0.0, t1 = 1.0;
    for (int k = 0; k < 3; k++) {
        double d = b[k] - a[k];
        if (d == 0.0) {
            if (a[k] < lo[k] || a[k] > hi[k])
                return 0;
            continue;
        }
        double u0 = (lo[k] - a[k]) / d, u1 = (hi[k] - a[k]) / d;
        if (u0 > u1) {
            double t = u0;
            u0 = u1, u1 = t;
        }
        t0 = fmax(t0, u0);
        t1 = fmin(t1, u1);
        if (t0 > t1)
            return 0;
    }
    return 1;
}
