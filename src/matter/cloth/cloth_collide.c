/* Cloth collisions: geometric kernels, impulses, impact zones and the bounding-volume hierarchy (model in
 * cloth_collide.h). */
#include "cloth/cloth_collide.h"

#include "shard/base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* min and max without libm's NaN rules (the arguments are finite here), so that they inline */
static inline double cc_min(double a, double b) { return a < b ? a : b; }
static inline double cc_max(double a, double b) { return a > b ? a : b; }

static inline double cc_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void cc_sub(const double *a, const double *b, double *r)
{
    r[0] = a[0] - b[0], r[1] = a[1] - b[1], r[2] = a[2] - b[2];
}

static inline void cc_cross(const double *a, const double *b, double *r)
{
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double cc_norm(const double *a) { return sqrt(cc_dot(a, a)); }

static inline double cc_clamp01(double s) { return s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s); }

/* ---- closest points ------------------------------------------------------------------------------------ */

/* The closest point of triangle (a, b, c) to p as barycentric weights w (Voronoi regions of the vertices,
 * edges and face). */
static void cc_closest_on_triangle(const double *p, const double *a, const double *b, const double *c, double w[3])
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    cc_sub(b, a, ab), cc_sub(c, a, ac), cc_sub(p, a, ap);
    double d1 = cc_dot(ab, ap), d2 = cc_dot(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) {
        w[0] = 1.0, w[1] = w[2] = 0.0;
        return;
    }
    cc_sub(p, b, bp);
    double d3 = cc_dot(ab, bp), d4 = cc_dot(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) {
        w[1] = 1.0, w[0] = w[2] = 0.0;
        return;
    }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        double s = d1 / (d1 - d3);
        w[0] = 1.0 - s, w[1] = s, w[2] = 0.0;
        return;
    }
    cc_sub(p, c, cp);
    double d5 = cc_dot(ab, cp), d6 = cc_dot(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) {
        w[2] = 1.0, w[0] = w[1] = 0.0;
        return;
    }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        double s = d2 / (d2 - d6);
        w[0] = 1.0 - s, w[2] = s, w[1] = 0.0;
        return;
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        double s = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        w[1] = 1.0 - s, w[2] = s, w[0] = 0.0;
        return;
    }
    double den = 1.0 / (va + vb + vc);
    w[1] = vb * den, w[2] = vc * den, w[0] = 1.0 - w[1] - w[2];
}

/* The closest points x0 + s (x1 - x0) and x2 + t (x3 - x2) of two segments. */
static void cc_closest_segments(const double *x0, const double *x1, const double *x2, const double *x3, double *s_out,
                                double *t_out)
{
    double d1[3], d2[3], r[3];
    cc_sub(x1, x0, d1), cc_sub(x3, x2, d2), cc_sub(x0, x2, r);
    double a = cc_dot(d1, d1), e = cc_dot(d2, d2), f = cc_dot(d2, r);
    double s = 0.0, t = 0.0;
    if (a <= 0.0 && e <= 0.0) {
        /* both points */
    } else if (a <= 0.0) {
        t = cc_clamp01(f / e);
    } else {
        double c = cc_dot(d1, r);
        if (e <= 0.0) {
            s = cc_clamp01(-c / a);
        } else {
            double b = cc_dot(d1, d2), den = a * e - b * b;
            s = den > 1e-14 * a * e ? cc_clamp01((b * f - c * e) / den) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0)
                t = 0.0, s = cc_clamp01(-c / a);
            else if (t > 1.0)
                t = 1.0, s = cc_clamp01((b - c) / a);
        }
    }
    *s_out = s, *t_out = t;
}

/* ---- proximity ---------------------------------------------------------------------------------------- */

int shard_cc_pt_near(const double *x0, const double *x1, const double *x2, const double *x3, double h,
                     shard_cc_stencil *s)
{
    double e1[3], e2[3], r[3], n[3];
    cc_sub(x2, x1, e1), cc_sub(x3, x1, e2), cc_sub(x0, x1, r);
    cc_cross(e1, e2, n);
    double a2 = cc_norm(n);
    if (!(a2 > 0.0))
        return 0;
    for (int k = 0; k < 3; k++)
        n[k] /= a2;
    double dist = cc_dot(r, n);
    if (fabs(dist) >= h)
        return 0;
    /* barycentric weights of the projection (here relative to x1) */
    double d11 = cc_dot(e1, e1), d12 = cc_dot(e1, e2), d22 = cc_dot(e2, e2), r1 = cc_dot(e1, r), r2 = cc_dot(e2, r);
    double det = d11 * d22 - d12 * d12;
    double w2 = (d22 * r1 - d12 * r2) / det, w3 = (d11 * r2 - d12 * r1) / det, w1 = 1.0 - w2 - w3;
    double tol = h / sqrt(a2); /* a point over an edge, within the thickness, belongs to both sides */
    if (w1 < -tol || w2 < -tol || w3 < -tol)
        return 0;
    /* and its distance from the triangle itself is below 1.5 h, whatever the triangle's shape (so that boxes
     * grown by 1.5 h hold every such pair) */
    double bw[3], q[3];
    cc_closest_on_triangle(x0, x1, x2, x3, bw);
    for (int k = 0; k < 3; k++)
        q[k] = x0[k] - (bw[0] * x1[k] + bw[1] * x2[k] + bw[2] * x3[k]);
    if (cc_dot(q, q) >= 2.25 * h * h)
        return 0;
    w1 = cc_max(w1, 0.0), w2 = cc_max(w2, 0.0), w3 = cc_max(w3, 0.0);
    double sum = w1 + w2 + w3;
    w1 /= sum, w2 /= sum, w3 /= sum;
    double sg = dist < 0.0 ? -1.0 : 1.0;
    s->c[0] = 1.0, s->c[1] = -w1, s->c[2] = -w2, s->c[3] = -w3;
    for (int k = 0; k < 3; k++)
        s->n[k] = sg * n[k];
    s->gap = fabs(dist);
    s->t = 0.0;
    return 1;
}

int shard_cc_ball_near(const double *x0, const double *x1, const double *x2, const double *x3, double h,
                       shard_cc_stencil *s)
{
    double w[3], q[3];
    cc_closest_on_triangle(x0, x1, x2, x3, w);
    for (int k = 0; k < 3; k++)
        q[k] = x0[k] - (w[0] * x1[k] + w[1] * x2[k] + w[2] * x3[k]);
    double d = cc_norm(q);
    if (!(d < h) || !(d > 0.0))
        return 0;
    s->c[0] = 1.0, s->c[1] = -w[0], s->c[2] = -w[1], s->c[3] = -w[2];
    for (int k = 0; k < 3; k++)
        s->n[k] = q[k] / d;
    s->gap = d;
    s->t = 0.0;
    return 1;
}

int shard_cc_ee_near(const double *x0, const double *x1, const double *x2, const double *x3, double h,
                     shard_cc_stencil *s)
{
    double a, b;
    cc_closest_segments(x0, x1, x2, x3, &a, &b);
    double d[3];
    for (int k = 0; k < 3; k++)
        d[k] = (x0[k] + a * (x1[k] - x0[k])) - (x2[k] + b * (x3[k] - x2[k]));
    double dist = cc_norm(d);
    if (dist >= h)
        return 0;
    double d1[3], d2[3], n[3];
    cc_sub(x1, x0, d1), cc_sub(x3, x2, d2);
    double scale = cc_max(cc_norm(d1), cc_norm(d2));
    if (dist > 1e-9 * scale) {
        for (int k = 0; k < 3; k++)
            n[k] = d[k] / dist;
    } else {
        /* touching: the normal of the two edges' plane */
        cc_cross(d1, d2, n);
        double l = cc_norm(n);
        if (!(l > 0.0))
            return 0;
        for (int k = 0; k < 3; k++)
            n[k] /= l;
    }
    s->c[0] = 1.0 - a, s->c[1] = a, s->c[2] = -(1.0 - b), s->c[3] = -b;
    memcpy(s->n, n, sizeof n);
    s->gap = dist;
    s->t = 0.0;
    return 1;
}

/* ---- continuous collision detection ------------------------------------------------------------------ */

static double cc_poly(const double a[4], double t) { return ((a[3] * t + a[2]) * t + a[1]) * t + a[0]; }

int shard_cc_cubic_candidates(const double a[4], double T, double eps, double *roots)
{
    double br[4];
    int nb = 0;
    br[nb++] = 0.0;
    /* the derivative's roots 3 a3 t^2 + 2 a2 t + a1 = 0 inside (0, T), increasing */
    double qa = 3.0 * a[3], qb = 2.0 * a[2], qc = a[1], ext[2];
    int ne = 0;
    if (qa != 0.0) {
        double disc = qb * qb - 4.0 * qa * qc;
        if (disc >= 0.0) {
            double q = -0.5 * (qb + copysign(sqrt(disc), qb));
            if (q != 0.0)
                ext[ne++] = q / qa, ext[ne++] = qc / q;
            else
                ext[ne++] = 0.0;
        }
    } else if (qb != 0.0) {
        ext[ne++] = -qc / qb;
    }
    if (ne == 2 && ext[0] > ext[1]) {
        double tmp = ext[0];
        ext[0] = ext[1], ext[1] = tmp;
    }
    for (int k = 0; k < ne; k++)
        if (ext[k] > 0.0 && ext[k] < T)
            br[nb++] = ext[k];
    br[nb++] = T;
    int n = 0;
    for (int k = 0; k + 1 < nb; k++) {
        double lo = br[k], hi = br[k + 1], flo = cc_poly(a, lo), fhi = cc_poly(a, hi);
        if (fabs(flo) <= eps)
            roots[n++] = lo;
        if ((flo < 0.0 && fhi > 0.0) || (flo > 0.0 && fhi < 0.0)) {
            for (int it = 0; it < 200; it++) {
                double mid = 0.5 * (lo + hi);
                if (!(mid > lo && mid < hi))
                    break;
                double fm = cc_poly(a, mid);
                if ((fm < 0.0) == (flo < 0.0) && fm != 0.0)
                    lo = mid, flo = fm;
                else
                    hi = mid;
            }
            roots[n++] = hi;
        }
    }
    if (fabs(cc_poly(a, T)) <= eps)
        roots[n++] = T;
    /* increasing, without repeats */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && roots[j] < roots[j - 1]; j--) {
            double tmp = roots[j];
            roots[j] = roots[j - 1], roots[j - 1] = tmp;
        }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || roots[i] > roots[m - 1])
            roots[m++] = roots[i];
    return m;
}

/* The coplanarity cubic of the points y0 + t w0 .. y3 + t w3: ((y1 - y0) x (y2 - y0)) . (y3 - y0), with its
 * rounding bound. */
static void cc_coplanarity(const double *const y[4], const double *const w[4], double T, double a[4], double *eps)
{
    double A[3], Ad[3], B[3], Bd[3], C[3], Cd[3];
    cc_sub(y[1], y[0], A), cc_sub(w[1], w[0], Ad);
    cc_sub(y[2], y[0], B), cc_sub(w[2], w[0], Bd);
    cc_sub(y[3], y[0], C), cc_sub(w[3], w[0], Cd);
    double AxB[3], AxBd[3], AdxB[3], AdxBd[3];
    cc_cross(A, B, AxB), cc_cross(A, Bd, AxBd), cc_cross(Ad, B, AdxB), cc_cross(Ad, Bd, AdxBd);
    double mid[3] = {AxBd[0] + AdxB[0], AxBd[1] + AdxB[1], AxBd[2] + AdxB[2]};
    a[3] = cc_dot(AdxBd, Cd);
    a[2] = cc_dot(mid, Cd) + cc_dot(AdxBd, C);
    a[1] = cc_dot(AxB, Cd) + cc_dot(mid, C);
    a[0] = cc_dot(AxB, C);
    double scale = (cc_norm(A) + cc_norm(Ad) * T) * (cc_norm(B) + cc_norm(Bd) * T) * (cc_norm(C) + cc_norm(Cd) * T);
    *eps = 1e-12 * scale;
}

static void cc_at(const double *x, const double *v, double t, double *r)
{
    r[0] = x[0] + t * v[0], r[1] = x[1] + t * v[1], r[2] = x[2] + t * v[2];
}

/* Orients s->n from B to A as the sides stood at t = 0 (c the stencil's weights), or, when they started in
 * one plane along n, against their relative velocity. */
static void cc_orient(const double *const x[4], const double *const v[4], shard_cc_stencil *s)
{
    double d0[3] = {0, 0, 0}, vr[3] = {0, 0, 0};
    double scale = 0.0;
    for (int q = 0; q < 4; q++)
        for (int k = 0; k < 3; k++) {
            d0[k] += s->c[q] * x[q][k], vr[k] += s->c[q] * v[q][k];
            scale = cc_max(scale, fabs(x[q][k] - x[0][k]));
        }
    double sep = cc_dot(d0, s->n);
    int flip = fabs(sep) > 1e-12 * scale ? sep < 0.0 : cc_dot(vr, s->n) > 0.0;
    if (flip)
        for (int k = 0; k < 3; k++)
            s->n[k] = -s->n[k];
}

/* The most the closest points of the two sides can approach in time T: their relative motion is
 * sum c_k (v_k - v_0) T, at most 2 T max |v_k - v_0| (each side's weights sum to one in magnitude). */
static double cc_reach(const double *const v[4], double T)
{
    double m = 0.0;
    for (int q = 1; q < 4; q++) {
        double d[3];
        cc_sub(v[q], v[0], d);
        m = cc_max(m, cc_dot(d, d));
    }
    return 2.0 * T * sqrt(m);
}

int shard_cc_pt_ccd(const double *const x[4], const double *const v[4], double T, double tol, shard_cc_stencil *s)
{
    /* too far apart to meet within the step */
    double w0[3], r0[3];
    cc_closest_on_triangle(x[0], x[1], x[2], x[3], w0);
    for (int k = 0; k < 3; k++)
        r0[k] = x[0][k] - (w0[0] * x[1][k] + w0[1] * x[2][k] + w0[2] * x[3][k]);
    if (cc_norm(r0) > cc_reach(v, T) + tol)
        return 0;
    /* coplanarity of the triangle's vertices and the point: (x2 - x1) x (x3 - x1) . (x0 - x1) */
    const double *y[4] = {x[1], x[2], x[3], x[0]}, *w[4] = {v[1], v[2], v[3], v[0]};
    double a[4], eps, roots[8];
    cc_coplanarity(y, w, T, a, &eps);
    int nr = shard_cc_cubic_candidates(a, T, eps, roots);
    for (int r = 0; r < nr; r++) {
        double p[4][3];
        for (int q = 0; q < 4; q++)
            cc_at(x[q], v[q], roots[r], p[q]);
        double bw[3];
        cc_closest_on_triangle(p[0], p[1], p[2], p[3], bw);
        double d[3];
        for (int k = 0; k < 3; k++)
            d[k] = p[0][k] - (bw[0] * p[1][k] + bw[1] * p[2][k] + bw[2] * p[3][k]);
        if (cc_norm(d) > tol)
            continue;
        double e1[3], e2[3], n[3];
        cc_sub(p[2], p[1], e1), cc_sub(p[3], p[1], e2);
        cc_cross(e1, e2, n);
        double l = cc_norm(n);
        if (!(l > 0.0))
            continue; /* a degenerate triangle: its edges' tests take it */
        for (int k = 0; k < 3; k++)
            s->n[k] = n[k] / l;
        s->c[0] = 1.0, s->c[1] = -bw[0], s->c[2] = -bw[1], s->c[3] = -bw[2];
        s->gap = 0.0, s->t = roots[r];
        cc_orient(x, v, s);
        return 1;
    }
    return 0;
}

int shard_cc_ee_ccd(const double *const x[4], const double *const v[4], double T, double tol, shard_cc_stencil *s)
{
    double s0, t0, r0[3];
    cc_closest_segments(x[0], x[1], x[2], x[3], &s0, &t0);
    for (int k = 0; k < 3; k++)
        r0[k] = (x[0][k] + s0 * (x[1][k] - x[0][k])) - (x[2][k] + t0 * (x[3][k] - x[2][k]));
    if (cc_norm(r0) > cc_reach(v, T) + tol)
        return 0;
    double a[4], eps, roots[8];
    cc_coplanarity(x, v, T, a, &eps);
    int nr = shard_cc_cubic_candidates(a, T, eps, roots);
    for (int r = 0; r < nr; r++) {
        double p[4][3];
        for (int q = 0; q < 4; q++)
            cc_at(x[q], v[q], roots[r], p[q]);
        double sa, sb;
        cc_closest_segments(p[0], p[1], p[2], p[3], &sa, &sb);
        double d[3];
        for (int k = 0; k < 3; k++)
            d[k] = (p[0][k] + sa * (p[1][k] - p[0][k])) - (p[2][k] + sb * (p[3][k] - p[2][k]));
        if (cc_norm(d) > tol)
            continue;
        double d1[3], d2[3], n[3];
        cc_sub(p[1], p[0], d1), cc_sub(p[3], p[2], d2);
        cc_cross(d1, d2, n);
        double l = cc_norm(n);
        if (!(l > 1e-9 * cc_norm(d1) * cc_norm(d2))) {
            /* parallel edges: the direction between their closest points at the start */
            for (int k = 0; k < 3; k++)
                n[k] = r0[k];
            l = cc_norm(n);
            if (!(l > 0.0))
                continue;
        }
        for (int k = 0; k < 3; k++)
            s->n[k] = n[k] / l;
        s->c[0] = 1.0 - sa, s->c[1] = sa, s->c[2] = -(1.0 - sb), s->c[3] = -sb;
        s->gap = 0.0, s->t = roots[r];
        cc_orient(x, v, s);
        return 1;
    }
    return 0;
}

/* ---- impulses ----------------------------------------------------------------------------------------- */

/* Applies a normal velocity change dvn (relative, along n) and the friction it allows to the stencil. */
static int cc_impulse(const shard_cc_stencil *s, const double vrel[3], double vn, const double inv_m[4], double S2,
                      double dvn, double mu, double dv[12])
{
    double vt[3] = {vrel[0] - vn * s->n[0], vrel[1] - vn * s->n[1], vrel[2] - vn * s->n[2]};
    double lt = cc_norm(vt), dvt = mu > 0.0 && lt > 0.0 ? cc_min(mu * dvn, lt) : 0.0;
    double J[3];
    for (int k = 0; k < 3; k++)
        J[k] = (dvn * s->n[k] - (dvt > 0.0 ? dvt * vt[k] / lt : 0.0)) / S2;
    for (int q = 0; q < 4; q++)
        for (int k = 0; k < 3; k++)
            dv[3 * q + k] = s->c[q] * inv_m[q] * J[k];
    return 1;
}

static double cc_relative(const shard_cc_stencil *s, const double *const v[4], const double inv_m[4], double vrel[3],
                          double *S1, double *S2)
{
    vrel[0] = vrel[1] = vrel[2] = 0.0;
    *S1 = *S2 = 0.0;
    for (int q = 0; q < 4; q++) {
        for (int k = 0; k < 3; k++)
            vrel[k] += s->c[q] * v[q][k];
        *S1 += fabs(s->c[q]) * inv_m[q];
        *S2 += s->c[q] * s->c[q] * inv_m[q];
    }
    return cc_dot(vrel, s->n);
}

int shard_cc_repel(const shard_cc_stencil *s, const double *const v[4], const double inv_m[4], double h, double k,
                   double mu, double dt, double dv[12])
{
    double vrel[3], S1, S2;
    double vn = cc_relative(s, v, inv_m, vrel, &S1, &S2);
    double d = h - s->gap;
    if (!(d > 0.0) || !(S2 > 0.0))
        return 0;
    double dvn = vn < 0.0 ? -vn : 0.0;
    double lim = 0.1 * d / dt - (vn + dvn);
    if (lim > 0.0)
        dvn += cc_min(dt * k * d * S1, lim);
    if (!(dvn > 0.0))
        return 0;
    return cc_impulse(s, vrel, vn, inv_m, S2, dvn, mu, dv);
}

int shard_cc_stop(const shard_cc_stencil *s, const double *const v[4], const double inv_m[4], double mu, double dv[12])
{
    double vrel[3], S1, S2;
    double vn = cc_relative(s, v, inv_m, vrel, &S1, &S2);
    if (!(vn < 0.0) || !(S2 > 0.0))
        return 0;
    return cc_impulse(s, vrel, vn, inv_m, S2, -vn, mu, dv);
}

/* ---- impact zones ------------------------------------------------------------------------------------- */

void shard_cc_zone_rigid(size_t n, const double *m, const double *x, double *v)
{
    double M = 0.0, xc[3] = {0, 0, 0}, vc[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        M += m[i];
        for (int k = 0; k < 3; k++)
            xc[k] += m[i] * x[3 * i + k], vc[k] += m[i] * v[3 * i + k];
    }
    if (!(M > 0.0))
        return;
    for (int k = 0; k < 3; k++)
        xc[k] /= M, vc[k] /= M;
    double L[3] = {0, 0, 0}, I[9] = {0};
    for (size_t i = 0; i < n; i++) {
        double r[3], u[3], rxu[3];
        cc_sub(x + 3 * i, xc, r), cc_sub(v + 3 * i, vc, u);
        cc_cross(r, u, rxu);
        double r2 = cc_dot(r, r);
        for (int a = 0; a < 3; a++) {
            L[a] += m[i] * rxu[a];
            for (int b = 0; b < 3; b++)
                I[3 * a + b] += m[i] * ((a == b ? r2 : 0.0) - r[a] * r[b]);
        }
    }
    /* w = I^-1 L; a zone on one line has no inertia about it: a small isotropic term keeps I invertible
     * (the spin about the line is then zero, which no vertex can tell) */
    double tr = I[0] + I[4] + I[8], w[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++)
        I[4 * a] += 1e-12 * tr + 1e-300;
    double c00 = I[4] * I[8] - I[5] * I[7], c01 = I[5] * I[6] - I[3] * I[8], c02 = I[3] * I[7] - I[4] * I[6];
    double det = I[0] * c00 + I[1] * c01 + I[2] * c02;
    if (det > 0.0) {
        double inv[9] = {c00, I[2] * I[7] - I[1] * I[8], I[1] * I[5] - I[2] * I[4],
                         c01, I[0] * I[8] - I[2] * I[6], I[2] * I[3] - I[0] * I[5],
                         c02, I[1] * I[6] - I[0] * I[7], I[0] * I[4] - I[1] * I[3]};
        for (int a = 0; a < 3; a++)
            w[a] = (inv[3 * a] * L[0] + inv[3 * a + 1] * L[1] + inv[3 * a + 2] * L[2]) / det;
    }
    for (size_t i = 0; i < n; i++) {
        double r[3], wr[3];
        cc_sub(x + 3 * i, xc, r);
        cc_cross(w, r, wr);
        for (int k = 0; k < 3; k++)
            v[3 * i + k] = vc[k] + wr[k];
    }
}

/* ---- bounding-volume hierarchy ------------------------------------------------------------------------ */

static void bvh_box_of(const shard_bvh *t, const double *box, int32_t first, int32_t count, double *lo, double *hi)
{
    for (int k = 0; k < 3; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (int32_t i = first; i < first + count; i++) {
        const double *b = box + 6 * (size_t)t->perm[i];
        for (int k = 0; k < 3; k++)
            lo[k] = cc_min(lo[k], b[k]), hi[k] = cc_max(hi[k], b[3 + k]);
    }
}

static double bvh_area(const double *lo, const double *hi)
{
    double e[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    return e[0] * e[1] + e[1] * e[2] + e[2] * e[0];
}

static double bvh_centre(const double *box, int32_t item, int axis)
{
    return box[6 * (size_t)item + axis] + box[6 * (size_t)item + 3 + axis];
}

/* Puts the k-th smallest centre (along axis) of perm[lo .. hi) at perm[k], smaller ones before it. */
static void bvh_select(int32_t *perm, int32_t lo, int32_t hi, int32_t k, const double *box, int axis)
{
    while (hi - lo > 1) {
        double pivot = bvh_centre(box, perm[lo + (hi - lo) / 2], axis);
        int32_t i = lo, j = hi - 1;
        while (i <= j) {
            while (bvh_centre(box, perm[i], axis) < pivot)
                i++;
            while (bvh_centre(box, perm[j], axis) > pivot)
                j--;
            if (i <= j) {
                int32_t tmp = perm[i];
                perm[i] = perm[j], perm[j] = tmp;
                i++, j--;
            }
        }
        if (k <= j)
            hi = j + 1;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

static void bvh_node_new(shard_bvh *t)
{
    shard_reserve((void **)&t->node, &t->cap_nodes, t->n_nodes + 2, sizeof *t->node);
}

static void bvh_build_node(shard_bvh *t, const double *box, int32_t ni, int32_t first, int32_t count)
{
    shard_bvh_node *nd = &t->node[ni];
    bvh_box_of(t, box, first, count, nd->lo, nd->hi);
    nd->first = first, nd->count = count, nd->left = -1;
    if (count <= 4)
        return;
    double clo[3] = {INFINITY, INFINITY, INFINITY}, chi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = first; i < first + count; i++)
        for (int k = 0; k < 3; k++) {
            double c = bvh_centre(box, t->perm[i], k);
            clo[k] = cc_min(clo[k], c), chi[k] = cc_max(chi[k], c);
        }
    int axis = 0;
    for (int k = 1; k < 3; k++)
        if (chi[k] - clo[k] > chi[axis] - clo[axis])
            axis = k;
    int32_t half = count / 2;
    bvh_select(t->perm, first, first + count, first + half, box, axis);
    bvh_node_new(t);
    int32_t left = (int32_t)t->n_nodes;
    t->n_nodes += 2;
    t->node[ni].left = left;
    bvh_build_node(t, box, left, first, half);
    bvh_build_node(t, box, left + 1, first + half, count - half);
}

static double bvh_cost(const shard_bvh *t)
{
    double c = 0.0;
    for (size_t i = 0; i < t->n_nodes; i++)
        if (t->node[i].left >= 0)
            c += bvh_area(t->node[i].lo, t->node[i].hi);
    return c;
}

void shard_bvh_build(shard_bvh *t, const double *box, size_t n)
{
    shard_reserve((void **)&t->perm, &t->cap_items, n + 1, sizeof *t->perm);
    for (size_t i = 0; i < n; i++)
        t->perm[i] = (int32_t)i;
    t->n_items = n;
    t->n_nodes = 0;
    bvh_node_new(t);
    t->n_nodes = 1;
    if (n > 0)
        bvh_build_node(t, box, 0, 0, (int32_t)n);
    else
        t->node[0] =
            (shard_bvh_node){.left = -1, .lo = {INFINITY, INFINITY, INFINITY}, .hi = {-INFINITY, -INFINITY, -INFINITY}};
    t->built_cost = bvh_cost(t);
    t->builds++;
}

int shard_bvh_refit(shard_bvh *t, const double *box, size_t n)
{
    if (n != t->n_items || t->n_nodes == 0) {
        shard_bvh_build(t, box, n);
        return 1;
    }
    /* children come after their parent: one backward sweep */
    for (size_t i = t->n_nodes; i-- > 0;) {
        shard_bvh_node *nd = &t->node[i];
        if (nd->left < 0) {
            if (n > 0)
                bvh_box_of(t, box, nd->first, nd->count, nd->lo, nd->hi);
        } else {
            const shard_bvh_node *a = &t->node[nd->left], *b = &t->node[nd->left + 1];
            for (int k = 0; k < 3; k++)
                nd->lo[k] = cc_min(a->lo[k], b->lo[k]), nd->hi[k] = cc_max(a->hi[k], b->hi[k]);
        }
    }
    t->refits++;
    if (bvh_cost(t) > 2.0 * t->built_cost) {
        shard_bvh_build(t, box, n);
        return 1;
    }
    return 0;
}

size_t shard_bvh_query(const shard_bvh *t, const double *box, const double q[6], int32_t **out, size_t *cap)
{
    size_t n = 0;
    if (t->n_items == 0)
        return 0;
    int32_t stack[128];
    int sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const shard_bvh_node *nd = &t->node[stack[--sp]];
        if (nd->lo[0] > q[3] || nd->hi[0] < q[0] || nd->lo[1] > q[4] || nd->hi[1] < q[1] || nd->lo[2] > q[5] ||
            nd->hi[2] < q[2])
            continue;
        if (nd->left >= 0) {
            stack[sp++] = nd->left;
            stack[sp++] = nd->left + 1;
            continue;
        }
        for (int32_t i = nd->first; i < nd->first + nd->count; i++) {
            int32_t it = t->perm[i];
            const double *b = box + 6 * (size_t)it;
            if (b[0] > q[3] || b[3] < q[0] || b[1] > q[4] || b[4] < q[1] || b[2] > q[5] || b[5] < q[2])
                continue;
            shard_reserve((void **)out, cap, n + 1, sizeof **out);
            (*out)[n++] = it;
        }
    }
    return n;
}

static int bvh_overlap(const double *lo, const double *hi, const double *b)
{
    return !(lo[0] > b[3] || hi[0] < b[0] || lo[1] > b[4] || hi[1] < b[1] || lo[2] > b[5] || hi[2] < b[2]);
}

void shard_bvh_pairs(const shard_bvh *a, const double *abox, const shard_bvh *b, const double *bbox,
                     void (*fn)(void *ctx, int32_t i, int32_t j), void *ctx)
{
    if (a->n_items == 0 || b->n_items == 0)
        return;
    int self = a == b;
    /* Node pairs to visit.  The trees are balanced (median splits of at most 2^31 items: depth <= 32), and a
     * pair popped pushes at most 3, so a depth-first descent never holds more than 3 x (32 + 32) + 3. */
    enum { CAP = 256 };
    int32_t stack[2 * CAP];
    size_t sp = 1;
    stack[0] = 0, stack[1] = 0;
    while (sp > 0) {
        sp--;
        int32_t ia = stack[2 * sp], ib = stack[2 * sp + 1];
        const shard_bvh_node *na = &a->node[ia], *nb = &b->node[ib];
        int same = self && ia == ib;
        if (!same) {
            double bb[6] = {nb->lo[0], nb->lo[1], nb->lo[2], nb->hi[0], nb->hi[1], nb->hi[2]};
            if (!bvh_overlap(na->lo, na->hi, bb))
                continue;
        }
        if (sp + 3 > CAP)
            shard_fatal(SHARD_EXIT_INTERNAL, "bvh: descent deeper than %d node pairs", CAP);
        if (same) {
            if (na->left >= 0) {
                int32_t l = na->left, r = na->left + 1;
                int32_t push[6] = {l, l, r, r, l, r};
                memcpy(stack + 2 * sp, push, sizeof push);
                sp += 3;
                continue;
            }
            for (int32_t x = na->first; x < na->first + na->count; x++)
                for (int32_t y = x + 1; y < na->first + na->count; y++) {
                    int32_t i = a->perm[x], j = a->perm[y];
                    if (bvh_overlap(abox + 6 * (size_t)i, abox + 6 * (size_t)i + 3, abox + 6 * (size_t)j))
                        fn(ctx, i < j ? i : j, i < j ? j : i);
                }
            continue;
        }
        /* descend the larger node (or the one that is not a leaf) */
        int down_a = na->left >= 0 && (nb->left < 0 || bvh_area(na->lo, na->hi) >= bvh_area(nb->lo, nb->hi));
        if (down_a) {
            int32_t push[4] = {na->left, ib, na->left + 1, ib};
            memcpy(stack + 2 * sp, push, sizeof push);
            sp += 2;
        } else if (nb->left >= 0) {
            int32_t push[4] = {ia, nb->left, ia, nb->left + 1};
            memcpy(stack + 2 * sp, push, sizeof push);
            sp += 2;
        } else {
            for (int32_t x = na->first; x < na->first + na->count; x++) {
                int32_t i = a->perm[x];
                const double *bi = abox + 6 * (size_t)i;
                for (int32_t y = nb->first; y < nb->first + nb->count; y++) {
                    int32_t j = b->perm[y];
                    if (!bvh_overlap(bi, bi + 3, bbox + 6 * (size_t)j))
                        continue;
                    if (self)
                        fn(ctx, i < j ? i : j, i < j ? j : i);
                    else
                        fn(ctx, i, j);
                }
            }
        }
    }
}

void shard_bvh_free(shard_bvh *t)
{
    free(t->node), free(t->perm);
    memset(t, 0, sizeof *t);
}
