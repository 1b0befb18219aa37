/* Mass properties (core): closed forms, mesh integrals and the principal frame (see massprops.h). */
#include "shard/massprops.h"

#include "shard/rotation.h"
#include "shard/xsum.h"

#include <math.h>
#include <string.h>

const char *shard_massprops_status_name(shard_massprops_status status)
{
    switch (status) {
    case SHARD_MASSPROPS_OK:
        return "ok";
    case SHARD_MASSPROPS_BAD_INPUT:
        return "bad input";
    case SHARD_MASSPROPS_NONPOSITIVE_VOLUME:
        return "non-positive volume";
    }
    return "unknown status";
}

static int shard_massprops_positive(double v) { return v > 0 && isfinite(v); }

/* I = d (1 - a a^T) + x a a^T for a unit axis a: a body of revolution about a with moments x (axial), d (across). */
static void shard_massprops_axial(double d, double x, const double a[3], double I[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            I[3 * i + j] = (i == j ? d : 0.0) + (x - d) * a[i] * a[j];
}

shard_massprops_status shard_massprops_box(double rho, const double lo[3], const double hi[3], shard_massprops *out)
{
    double s[3];
    for (int k = 0; k < 3; k++)
        s[k] = hi[k] - lo[k];
    if (!shard_massprops_positive(rho) || !shard_massprops_positive(s[0]) || !shard_massprops_positive(s[1]) ||
        !shard_massprops_positive(s[2]))
        return SHARD_MASSPROPS_BAD_INPUT;
    double v = s[0] * s[1] * s[2], m = rho * v;
    memset(out, 0, sizeof *out);
    out->volume = v, out->mass = m;
    for (int k = 0; k < 3; k++)
        out->com[k] = 0.5 * (lo[k] + hi[k]);
    out->inertia[0] = m / 12 * (s[1] * s[1] + s[2] * s[2]);
    out->inertia[4] = m / 12 * (s[0] * s[0] + s[2] * s[2]);
    out->inertia[8] = m / 12 * (s[0] * s[0] + s[1] * s[1]);
    return SHARD_MASSPROPS_OK;
}

shard_massprops_status shard_massprops_sphere(double rho, const double c[3], double r, shard_massprops *out)
{
    if (!shard_massprops_positive(rho) || !shard_massprops_positive(r))
        return SHARD_MASSPROPS_BAD_INPUT;
    double v = 4.0 / 3.0 * M_PI * r * r * r, m = rho * v;
    memset(out, 0, sizeof *out);
    out->volume = v, out->mass = m;
    memcpy(out->com, c, sizeof out->com);
    out->inertia[0] = out->inertia[4] = out->inertia[8] = 0.4 * m * r * r;
    return SHARD_MASSPROPS_OK;
}

shard_massprops_status shard_massprops_cylinder(double rho, const double p0[3], const double p1[3], double r,
                                                shard_massprops *out)
{
    double a[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    double h = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    if (!shard_massprops_positive(rho) || !shard_massprops_positive(r) || !shard_massprops_positive(h))
        return SHARD_MASSPROPS_BAD_INPUT;
    for (int k = 0; k < 3; k++)
        a[k] /= h;
    double v = M_PI * r * r * h, m = rho * v;
    memset(out, 0, sizeof *out);
    out->volume = v, out->mass = m;
    for (int k = 0; k < 3; k++)
        out->com[k] = 0.5 * (p0[k] + p1[k]);
    shard_massprops_axial(m * (3 * r * r + h * h) / 12, 0.5 * m * r * r, a, out->inertia);
    return SHARD_MASSPROPS_OK;
}

/* Integrals over the solid, in the order of the accumulators and with their factors (Eberly 2002):
 * 1 (1/6), x, y, z (1/24), x^2, y^2, z^2 (1/60), xy, yz, zx (1/120). */
enum {
    SHARD_MP_VOL,
    SHARD_MP_X,
    SHARD_MP_Y,
    SHARD_MP_Z,
    SHARD_MP_XX,
    SHARD_MP_YY,
    SHARD_MP_ZZ,
    SHARD_MP_XY,
    SHARD_MP_YZ,
    SHARD_MP_ZX,
    SHARD_MP_COUNT
};

/* For one coordinate w over a triangle (w0, w1, w2): f1 = sum w_i, f2 = the complete homogeneous polynomial of
 * degree 2 in them, f3 of degree 3, and g_i = f2 + w_i (f1 + w_i) (the partial derivative of f3 by w_i).  By the
 * divergence theorem the triangle with (unnormalised, outward) normal N = (x1 - x0) x (x2 - x0) adds
 * N_x f1 / 6 to the volume, N_x f2 / 24 to the integral of x, N_x f3 / 60 to that of x^2, and
 * N_x (y0 g0 + y1 g1 + y2 g2) / 120 to that of xy (the integrals of x^k y^l over the triangle in its barycentric
 * parametrisation). */
typedef struct shard_mp_sub {
    double f1, f2, f3, g[3];
} shard_mp_sub;

static shard_mp_sub shard_massprops_sub(double w0, double w1, double w2)
{
    shard_mp_sub s;
    double t0 = w0 + w1, t1 = w0 * w0, t2 = t1 + w1 * t0;
    s.f1 = t0 + w2;
    s.f2 = t2 + w2 * s.f1;
    s.f3 = w0 * t1 + w1 * t2 + w2 * s.f2;
    s.g[0] = s.f2 + w0 * (s.f1 + w0);
    s.g[1] = s.f2 + w1 * (s.f1 + w1);
    s.g[2] = s.f2 + w2 * (s.f1 + w2);
    return s;
}

shard_massprops_status shard_massprops_mesh(double rho, const double *x, int64_t nv, const int64_t *tri, int64_t nt,
                                            shard_massprops *out)
{
    if (!shard_massprops_positive(rho) || nv < 3 || nt < 1)
        return SHARD_MASSPROPS_BAD_INPUT;
    for (int64_t i = 0; i < 3 * nt; i++)
        if (tri[i] < 0 || tri[i] >= nv)
            return SHARD_MASSPROPS_BAD_INPUT;
    /* the reference point: the centre of the bounding box of the vertices the triangles use */
    double lo[3], hi[3], ref[3];
    for (int k = 0; k < 3; k++)
        lo[k] = hi[k] = x[3 * tri[0] + k];
    for (int64_t i = 0; i < 3 * nt; i++)
        for (int k = 0; k < 3; k++) {
            double c = x[3 * tri[i] + k];
            if (!isfinite(c))
                return SHARD_MASSPROPS_BAD_INPUT;
            lo[k] = fmin(lo[k], c), hi[k] = fmax(hi[k], c);
        }
    for (int k = 0; k < 3; k++)
        ref[k] = 0.5 * (lo[k] + hi[k]);

    shard_xsum acc[SHARD_MP_COUNT];
    for (int k = 0; k < SHARD_MP_COUNT; k++)
        shard_xsum_init(&acc[k]);
    for (int64_t t = 0; t < nt; t++) {
        double p[3][3];
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                p[j][k] = x[3 * tri[3 * t + j] + k] - ref[k];
        double e1[3], e2[3];
        for (int k = 0; k < 3; k++)
            e1[k] = p[1][k] - p[0][k], e2[k] = p[2][k] - p[0][k];
        double d0 = e1[1] * e2[2] - e2[1] * e1[2];
        double d1 = e2[0] * e1[2] - e1[0] * e2[2];
        double d2 = e1[0] * e2[1] - e2[0] * e1[1];
        shard_mp_sub sx = shard_massprops_sub(p[0][0], p[1][0], p[2][0]);
        shard_mp_sub sy = shard_massprops_sub(p[0][1], p[1][1], p[2][1]);
        shard_mp_sub sz = shard_massprops_sub(p[0][2], p[1][2], p[2][2]);
        shard_xsum_add(&acc[SHARD_MP_VOL], d0 * sx.f1);
        shard_xsum_add(&acc[SHARD_MP_X], d0 * sx.f2);
        shard_xsum_add(&acc[SHARD_MP_Y], d1 * sy.f2);
        shard_xsum_add(&acc[SHARD_MP_Z], d2 * sz.f2);
        shard_xsum_add(&acc[SHARD_MP_XX], d0 * sx.f3);
        shard_xsum_add(&acc[SHARD_MP_YY], d1 * sy.f3);
        shard_xsum_add(&acc[SHARD_MP_ZZ], d2 * sz.f3);
        shard_xsum_add(&acc[SHARD_MP_XY], d0 * (p[0][1] * sx.g[0] + p[1][1] * sx.g[1] + p[2][1] * sx.g[2]));
        shard_xsum_add(&acc[SHARD_MP_YZ], d1 * (p[0][2] * sy.g[0] + p[1][2] * sy.g[1] + p[2][2] * sy.g[2]));
        shard_xsum_add(&acc[SHARD_MP_ZX], d2 * (p[0][0] * sz.g[0] + p[1][0] * sz.g[1] + p[2][0] * sz.g[2]));
    }
    static const double factor[SHARD_MP_COUNT] = {1.0 / 6,  1.0 / 24, 1.0 / 24,  1.0 / 24,  1.0 / 60,
                                                  1.0 / 60, 1.0 / 60, 1.0 / 120, 1.0 / 120, 1.0 / 120};
    double in[SHARD_MP_COUNT];
    for (int k = 0; k < SHARD_MP_COUNT; k++)
        in[k] = shard_xsum_round(&acc[k]) * factor[k];
    double v = in[SHARD_MP_VOL];
    if (!(v > 0) || !isfinite(v))
        return SHARD_MASSPROPS_NONPOSITIVE_VOLUME;

    /* centre of mass relative to ref, then the second moments about it: S = int r r^T - V c c^T */
    double c[3] = {in[SHARD_MP_X] / v, in[SHARD_MP_Y] / v, in[SHARD_MP_Z] / v};
    double sxx = in[SHARD_MP_XX] - v * c[0] * c[0], syy = in[SHARD_MP_YY] - v * c[1] * c[1];
    double szz = in[SHARD_MP_ZZ] - v * c[2] * c[2];
    double sxy = in[SHARD_MP_XY] - v * c[0] * c[1], syz = in[SHARD_MP_YZ] - v * c[1] * c[2];
    double szx = in[SHARD_MP_ZX] - v * c[2] * c[0];
    memset(out, 0, sizeof *out);
    out->volume = v;
    out->mass = rho * v;
    for (int k = 0; k < 3; k++)
        out->com[k] = ref[k] + c[k];
    double *I = out->inertia;
    I[0] = rho * (syy + szz), I[4] = rho * (sxx + szz), I[8] = rho * (sxx + syy);
    I[1] = I[3] = -rho * sxy;
    I[5] = I[7] = -rho * syz;
    I[2] = I[6] = -rho * szx;
    return SHARD_MASSPROPS_OK;
}

/* Cyclic Jacobi (Golub & Van Loan section 8.5): rotations in the planes (0,1), (0,2), (1,2) until the
 * off-diagonal part is below rounding; a 3x3 matrix needs a handful of sweeps (quadratic convergence).  On return
 * a[] is diagonal (the eigenvalues) and the columns of v[] are the eigenvectors. */
static void shard_massprops_jacobi(double a[9], double v[9])
{
    static const int plane[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (int k = 0; k < 9; k++)
        v[k] = k % 4 == 0;
    for (int sweep = 0; sweep < 64; sweep++) {
        int rotated = 0;
        for (int pl = 0; pl < 3; pl++) {
            int p = plane[pl][0], q = plane[pl][1], r = 3 - p - q;
            double apq = a[3 * p + q];
            if (apq == 0)
                continue;
            double app = a[3 * p + p], aqq = a[3 * q + q];
            /* below 1e-18 of the diagonal the rotation would change nothing that rounding has not */
            if (fabs(apq) <= 1e-18 * (fabs(app) + fabs(aqq))) {
                a[3 * p + q] = a[3 * q + p] = 0;
                continue;
            }
            rotated = 1;
            /* the smaller root t = tan(angle) of t^2 + 2 theta t - 1 = 0 annihilates a_pq */
            double theta = (aqq - app) / (2 * apq), t;
            if (fabs(theta) > 1e150)
                t = 0.5 / theta;
            else
                t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
            double c = 1 / sqrt(t * t + 1), s = t * c;
            a[3 * p + p] = app - t * apq;
            a[3 * q + q] = aqq + t * apq;
            a[3 * p + q] = a[3 * q + p] = 0;
            double arp = a[3 * r + p], arq = a[3 * r + q];
            a[3 * r + p] = a[3 * p + r] = c * arp - s * arq;
            a[3 * r + q] = a[3 * q + r] = s * arp + c * arq;
            for (int i = 0; i < 3; i++) {
                double vip = v[3 * i + p], viq = v[3 * i + q];
                v[3 * i + p] = c * vip - s * viq;
                v[3 * i + q] = s * vip + c * viq;
            }
        }
        if (!rotated)
            break;
    }
}

static void shard_massprops_cross(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* e /= |e|, then the sign that makes the component of largest magnitude positive (the first on a tie). */
static void shard_massprops_sign(double e[3])
{
    double n = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    int big = 0;
    for (int k = 1; k < 3; k++)
        if (fabs(e[k]) > fabs(e[big]))
            big = k;
    double s = (e[big] < 0 ? -1.0 : 1.0) / n;
    for (int k = 0; k < 3; k++)
        e[k] *= s;
}

/* The world axis least aligned with the unit vector e (lowest index on a tie), projected onto the plane normal
 * to e and normalised. */
static void shard_massprops_plane_axis(const double e[3], double u[3])
{
    int k = 0;
    for (int i = 1; i < 3; i++)
        if (fabs(e[i]) < fabs(e[k]))
            k = i;
    for (int i = 0; i < 3; i++)
        u[i] = (i == k) - e[k] * e[i];
    double n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (int i = 0; i < 3; i++)
        u[i] /= n;
}

shard_massprops_status shard_massprops_principal(const double inertia[9], double moments[3], double R[9], double q[4])
{
    double a[9], v[9];
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) {
            if (!isfinite(inertia[3 * i + j]))
                return SHARD_MASSPROPS_BAD_INPUT;
            a[3 * i + j] = a[3 * j + i] = inertia[3 * i + j];
        }
    shard_massprops_jacobi(a, v);

    /* ascending, stable on exact ties (index order) */
    int ord[3] = {0, 1, 2};
    for (int i = 1; i < 3; i++)
        for (int j = i; j > 0 && a[4 * ord[j]] < a[4 * ord[j - 1]]; j--) {
            int t = ord[j];
            ord[j] = ord[j - 1], ord[j - 1] = t;
        }
    double m[3], e[3][3]; /* e[k]: the axis of moment m[k] */
    for (int k = 0; k < 3; k++) {
        m[k] = a[4 * ord[k]];
        for (int i = 0; i < 3; i++)
            e[k][i] = v[3 * i + ord[k]];
    }

    double width = SHARD_MASSPROPS_TIE_RTOL * fmax(fabs(m[0]), fabs(m[2]));
    int tie01 = m[1] - m[0] <= width, tie12 = m[2] - m[1] <= width;
    if (tie01 && tie12) {
        memset(e, 0, sizeof e);
        e[0][0] = e[1][1] = e[2][2] = 1;
    } else if (tie01) {
        shard_massprops_sign(e[2]);
        shard_massprops_plane_axis(e[2], e[0]);
        shard_massprops_cross(e[2], e[0], e[1]);
    } else if (tie12) {
        shard_massprops_sign(e[0]);
        shard_massprops_plane_axis(e[0], e[1]);
        shard_massprops_cross(e[0], e[1], e[2]);
    } else {
        shard_massprops_sign(e[0]);
        shard_massprops_sign(e[1]);
        shard_massprops_cross(e[0], e[1], e[2]);
    }

    double rot[9];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            rot[3 * i + k] = e[k][i];
    if (moments)
        memcpy(moments, m, sizeof m);
    if (R)
        memcpy(R, rot, sizeof rot);
    if (q)
        shard_quat_from_matrix(rot, q);
    return SHARD_MASSPROPS_OK;
}
