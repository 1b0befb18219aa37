/* Counts the self-intersections of a triangle mesh: the pairs of triangles that share no vertex and intersect
 * (closed triangles: a pair that only touches, at a point or along a segment, counts).  Written for
 * jobs/bench/cloth_peers.sh, independent of Shard's and Bullet's code; it lives with the tests because
 * tests/validation/test_cloth_collide.c links it too (intersections.h).
 *
 *   intersections [--sphere CX CY CZ R] FILE     FILE: a Shard output file (HDF5: /particles/position,
 *                                                /particles/global_id, /surfaces/triangles) or a mesh dump of
 *                                                bullet_cloth (below)
 *   intersections --self-test                    hand-made cases with known answers; exit 0 when all pass
 * (or, built with INTERSECTIONS_LIBRARY, the function intersections_count below).
 *
 * Prints key=value lines: vertices, triangles, degenerate (triangles of zero area: skipped, see below),
 * candidate_pairs (pairs of vertex-disjoint triangles whose bounding boxes overlap), exact_calls (predicates the
 * floating-point filter could not decide), intersections (the count), triangles_involved, z_min, z_max, and with
 * --sphere the vertices inside the ball and the deepest of them (inside_sphere, sphere_depth_mm).
 *
 * Mesh dump (little-endian, what bullet_cloth writes): the 8 bytes "SHCLOTH1", int64 n_vertices, int64
 * n_triangles, n_vertices x 3 float64 positions, n_triangles x 3 int64 vertex indices (from 0).
 *
 * Broad phase: a uniform grid (hashed cells of twice the median triangle bounding-box extent); every triangle is
 * listed in each cell its bounding box touches, and a pair is examined only in the cell that holds the lower
 * corner of the intersection of the two boxes, so each pair once.  Pairs sharing a vertex index are skipped.
 *
 * Narrow phase: for two triangles T, U that are not coplanar, the closed triangles meet if and only if an edge of
 * one meets the other (their intersection is a segment of the line where the planes cross, whose ends lie on
 * edges).  A segment ab meets a closed triangle pqr when a and b are not strictly on the same side of its plane
 * (orient3d(p, q, r, a), orient3d(p, q, r, b)) and the line ab passes through the closed triangle (the three
 * orient3d(a, b, p, q), (a, b, q, r), (a, b, r, p) do not have strictly opposite signs); a segment in the plane
 * of the triangle, and two coplanar triangles, are decided in 2-D (orient2d after dropping the coordinate of
 * the triangle's largest normal component, chosen by an exact test) by segment-segment crossings and
 * point-in-triangle tests.
 *
 * What is exact: every decision comes from the SIGNS of orient3d and orient2d of the input coordinates (doubles;
 * Bullet's floats are converted exactly).  Each sign is first taken from the plain floating-point determinant if
 * its magnitude exceeds a static error bound (12 eps and 6 eps times the permanent, eps = 2^-53: more than the
 * rounding of the 8 and 4 operations on any path, so a sign it accepts is the exact one); otherwise the
 * determinant is recomputed exactly with floating-point expansion arithmetic (two-sum and an fma-based two-product,
 * nonoverlapping expansions: the exact value, whose sign is that of its largest component).  So the count is
 * exact for the coordinates read, with two limits: products of coordinate differences must not underflow (below
 * about 1e-290 in magnitude: they do not for positions in metres), and degenerate triangles (exactly collinear
 * corners) are counted (`degenerate`) and not tested.  No tolerance is involved anywhere: a pair at a distance of
 * 1e-12 m does not count, one that touches does. */
#include "intersections.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WITH_HDF5
#include <hdf5.h>
#endif

/* ---- exact predicates --------------------------------------------------------------------------------------- */

static long g_exact_calls; /* predicates decided by the exact path */

/* a + b = x + y exactly, |y| <= ulp(x) / 2 */
static void two_sum(double a, double b, double *x, double *y)
{
    double s = a + b, bv = s - a, av = s - bv;
    *x = s;
    *y = (a - av) + (b - bv);
}

/* a * b = x + y exactly (no underflow) */
static void two_prod(double a, double b, double *x, double *y)
{
    double p = a * b;
    *x = p;
    *y = fma(a, b, -p);
}

/* h = e + b; e has m components, nonoverlapping, increasing magnitude; h has m + 1 (zeros kept). */
static int grow(const double *e, int m, double b, double *h)
{
    double q = b;
    for (int i = 0; i < m; i++)
        two_sum(q, e[i], &q, &h[i]);
    h[m] = q;
    return m + 1;
}

static int compress_zeros(double *h, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (h[i] != 0)
            h[k++] = h[i];
    if (k == 0)
        h[k++] = 0;
    return k;
}

/* h = e + f (h may not alias e or f); returns the length. */
static int exp_sum(const double *e, int m, const double *f, int n, double *h)
{
    double buf[2][1024];
    int len = m, cur = 0;
    memcpy(buf[0], e, (size_t)m * sizeof *e);
    for (int j = 0; j < n; j++) {
        len = grow(buf[cur], len, f[j], buf[1 - cur]);
        cur = 1 - cur;
        len = compress_zeros(buf[cur], len);
    }
    memcpy(h, buf[cur], (size_t)len * sizeof *h);
    return len;
}

/* h = e * b; returns the length (2 m before removing zeros). */
static int exp_scale(const double *e, int m, double b, double *h)
{
    double q, hi, lo, t;
    two_prod(e[0], b, &q, &h[0]);
    int k = 1;
    for (int i = 1; i < m; i++) {
        two_prod(e[i], b, &hi, &lo);
        two_sum(q, lo, &t, &h[k++]);
        two_sum(hi, t, &q, &h[k++]);
    }
    h[k++] = q;
    return compress_zeros(h, k);
}

/* h = e * f */
static int exp_mul(const double *e, int m, const double *f, int n, double *h)
{
    double acc[1024], part[1024], tmp[1024];
    int len = 1;
    acc[0] = 0;
    for (int j = 0; j < n; j++) {
        int pl = exp_scale(e, m, f[j], part);
        len = exp_sum(acc, len, part, pl, tmp);
        memcpy(acc, tmp, (size_t)len * sizeof *acc);
    }
    memcpy(h, acc, (size_t)len * sizeof *h);
    return len;
}

static int exp_sign(const double *e, int m)
{
    for (int i = m - 1; i >= 0; i--)
        if (e[i] != 0)
            return e[i] > 0 ? 1 : -1;
    return 0;
}

/* a - b as a 2-component expansion */
static int exp_diff(double a, double b, double *h)
{
    two_sum(a, -b, &h[1], &h[0]);
    return compress_zeros(h, 2);
}

static int orient2d_exact(const double *a, const double *b, const double *c)
{
    double acx[2], bcy[2], acy[2], bcx[2], p[64], q[64], d[128];
    int n1 = exp_diff(a[0], c[0], acx), n2 = exp_diff(b[1], c[1], bcy);
    int n3 = exp_diff(a[1], c[1], acy), n4 = exp_diff(b[0], c[0], bcx);
    int np = exp_mul(acx, n1, bcy, n2, p);
    int nq = exp_mul(acy, n3, bcx, n4, q);
    for (int i = 0; i < nq; i++)
        q[i] = -q[i];
    int nd = exp_sum(p, np, q, nq, d);
    return exp_sign(d, nd);
}

/* sign of det [a - d; b - d; c - d] (positive when d lies below the plane of a, b, c seen counter-clockwise) */
static int orient3d_exact(const double *a, const double *b, const double *c, const double *d)
{
    double ad[3][2], bd[3][2], cd[3][2];
    int na[3], nb[3], nc[3];
    for (int k = 0; k < 3; k++) {
        na[k] = exp_diff(a[k], d[k], ad[k]);
        nb[k] = exp_diff(b[k], d[k], bd[k]);
        nc[k] = exp_diff(c[k], d[k], cd[k]);
    }
    /* det = ad_x (bd_y cd_z - bd_z cd_y) + bd_x (cd_y ad_z - cd_z ad_y) + cd_x (ad_y bd_z - ad_z bd_y) */
    const double *rows[3][3] = {{ad[0], ad[1], ad[2]}, {bd[0], bd[1], bd[2]}, {cd[0], cd[1], cd[2]}};
    const int lens[3][3] = {{na[0], na[1], na[2]}, {nb[0], nb[1], nb[2]}, {nc[0], nc[1], nc[2]}};
    double total[1024], t2[1024];
    int nt = 1;
    total[0] = 0;
    for (int r = 0; r < 3; r++) {
        int s = (r + 1) % 3, u = (r + 2) % 3;
        double p[64], q[64], m[128], term[512];
        int np = exp_mul(rows[s][1], lens[s][1], rows[u][2], lens[u][2], p);
        int nq = exp_mul(rows[s][2], lens[s][2], rows[u][1], lens[u][1], q);
        for (int i = 0; i < nq; i++)
            q[i] = -q[i];
        int nm = exp_sum(p, np, q, nq, m);
        int ntm = exp_mul(rows[r][0], lens[r][0], m, nm, term);
        nt = exp_sum(total, nt, term, ntm, t2);
        memcpy(total, t2, (size_t)nt * sizeof *total);
    }
    return exp_sign(total, nt);
}

static const double EPS = 1.1102230246251565e-16; /* 2^-53 */

static int orient2d(const double *a, const double *b, const double *c)
{
    double acx = a[0] - c[0], bcy = b[1] - c[1], acy = a[1] - c[1], bcx = b[0] - c[0];
    double l = acx * bcy, r = acy * bcx, det = l - r;
    double bound = 6 * EPS * (fabs(l) + fabs(r));
    if (det > bound)
        return 1;
    if (-det > bound)
        return -1;
    g_exact_calls++;
    return orient2d_exact(a, b, c);
}

static int orient3d(const double *a, const double *b, const double *c, const double *d)
{
    double adx = a[0] - d[0], ady = a[1] - d[1], adz = a[2] - d[2];
    double bdx = b[0] - d[0], bdy = b[1] - d[1], bdz = b[2] - d[2];
    double cdx = c[0] - d[0], cdy = c[1] - d[1], cdz = c[2] - d[2];
    double m1 = bdy * cdz - bdz * cdy, m2 = cdy * adz - cdz * ady, m3 = ady * bdz - adz * bdy;
    double det = adx * m1 + bdx * m2 + cdx * m3;
    double perm = fabs(adx) * (fabs(bdy * cdz) + fabs(bdz * cdy)) + fabs(bdx) * (fabs(cdy * adz) + fabs(cdz * ady)) +
                  fabs(cdx) * (fabs(ady * bdz) + fabs(adz * bdy));
    double bound = 12 * EPS * perm;
    if (det > bound)
        return 1;
    if (-det > bound)
        return -1;
    g_exact_calls++;
    return orient3d_exact(a, b, c, d);
}

/* ---- geometry ------------------------------------------------------------------------------------------------ */

/* The coordinate axis to drop so that triangle pqr stays non-degenerate in 2-D (exact), or -1 if degenerate. */
static int drop_axis(const double *p, const double *q, const double *r)
{
    /* prefer the axis of the largest normal component (float estimate), then check exactly */
    double u[3], v[3], n[3];
    for (int k = 0; k < 3; k++)
        u[k] = q[k] - p[k], v[k] = r[k] - p[k];
    n[0] = fabs(u[1] * v[2] - u[2] * v[1]);
    n[1] = fabs(u[2] * v[0] - u[0] * v[2]);
    n[2] = fabs(u[0] * v[1] - u[1] * v[0]);
    int order[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (n[order[j]] > n[order[i]]) {
                int t = order[i];
                order[i] = order[j], order[j] = t;
            }
    for (int i = 0; i < 3; i++) {
        int ax = order[i];
        double p2[2], q2[2], r2[2];
        int a0 = (ax + 1) % 3, a1 = (ax + 2) % 3;
        p2[0] = p[a0], p2[1] = p[a1], q2[0] = q[a0], q2[1] = q[a1], r2[0] = r[a0], r2[1] = r[a1];
        if (orient2d(p2, q2, r2) != 0)
            return ax;
    }
    return -1;
}

static void proj(const double *x, int ax, double *out)
{
    out[0] = x[(ax + 1) % 3], out[1] = x[(ax + 2) % 3];
}

/* closed 2-D point c on closed segment ab, given orient2d(a, b, c) == 0 */
static int on_segment2(const double *a, const double *b, const double *c)
{
    for (int k = 0; k < 2; k++) {
        double lo = a[k] < b[k] ? a[k] : b[k], hi = a[k] < b[k] ? b[k] : a[k];
        if (c[k] < lo || c[k] > hi)
            return 0;
    }
    return 1;
}

/* closed 2-D segments ab and cd meet */
static int segments2(const double *a, const double *b, const double *c, const double *d)
{
    int o1 = orient2d(a, b, c), o2 = orient2d(a, b, d), o3 = orient2d(c, d, a), o4 = orient2d(c, d, b);
    if (o1 * o2 < 0 && o3 * o4 < 0)
        return 1;
    if (o1 == 0 && on_segment2(a, b, c))
        return 1;
    if (o2 == 0 && on_segment2(a, b, d))
        return 1;
    if (o3 == 0 && on_segment2(c, d, a))
        return 1;
    if (o4 == 0 && on_segment2(c, d, b))
        return 1;
    return 0;
}

/* closed 2-D point x in the closed non-degenerate triangle pqr */
static int point_in_tri2(const double *x, const double *p, const double *q, const double *r)
{
    int a = orient2d(p, q, x), b = orient2d(q, r, x), c = orient2d(r, p, x);
    return !((a < 0 || b < 0 || c < 0) && (a > 0 || b > 0 || c > 0));
}

/* closed 2-D segment ab meets the closed non-degenerate triangle pqr */
static int segment_tri2(const double *a, const double *b, const double *p, const double *q, const double *r)
{
    return point_in_tri2(a, p, q, r) || point_in_tri2(b, p, q, r) || segments2(a, b, p, q) ||
           segments2(a, b, q, r) || segments2(a, b, r, p);
}

/* closed 3-D segment ab meets the closed non-degenerate triangle pqr (ax: its drop axis) */
static int segment_tri3(const double *a, const double *b, const double *p, const double *q, const double *r, int ax)
{
    int sa = orient3d(p, q, r, a), sb = orient3d(p, q, r, b);
    if (sa * sb > 0)
        return 0;
    if (sa == 0 && sb == 0) { /* the segment lies in the triangle's plane */
        double a2[2], b2[2], p2[2], q2[2], r2[2];
        proj(a, ax, a2), proj(b, ax, b2), proj(p, ax, p2), proj(q, ax, q2), proj(r, ax, r2);
        return segment_tri2(a2, b2, p2, q2, r2);
    }
    /* the segment crosses or touches the plane at one point: is it in the closed triangle?  The line ab passes
     * the edges on one side each (orientations of one sign or zero); all three zero cannot happen here */
    int o1 = orient3d(a, b, p, q), o2 = orient3d(a, b, q, r), o3 = orient3d(a, b, r, p);
    return !((o1 < 0 || o2 < 0 || o3 < 0) && (o1 > 0 || o2 > 0 || o3 > 0));
}

/* closed triangles T = t0 t1 t2 (drop axis at) and U = u0 u1 u2 (drop axis au) meet; both non-degenerate */
static int tri_tri(const double *const *t, int at, const double *const *u, int au)
{
    int s0 = orient3d(t[0], t[1], t[2], u[0]), s1 = orient3d(t[0], t[1], t[2], u[1]),
        s2 = orient3d(t[0], t[1], t[2], u[2]);
    if ((s0 > 0 && s1 > 0 && s2 > 0) || (s0 < 0 && s1 < 0 && s2 < 0))
        return 0;
    if (s0 == 0 && s1 == 0 && s2 == 0) { /* coplanar: 2-D in T's projection, which keeps U non-degenerate too */
        double t2[3][2], u2[3][2];
        for (int k = 0; k < 3; k++)
            proj(t[k], at, t2[k]), proj(u[k], at, u2[k]);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                if (segments2(t2[i], t2[(i + 1) % 3], u2[j], u2[(j + 1) % 3]))
                    return 1;
        return point_in_tri2(t2[0], u2[0], u2[1], u2[2]) || point_in_tri2(u2[0], t2[0], t2[1], t2[2]);
    }
    int r0 = orient3d(u[0], u[1], u[2], t[0]), r1 = orient3d(u[0], u[1], u[2], t[1]),
        r2 = orient3d(u[0], u[1], u[2], t[2]);
    if ((r0 > 0 && r1 > 0 && r2 > 0) || (r0 < 0 && r1 < 0 && r2 < 0))
        return 0;
    for (int i = 0; i < 3; i++)
        if (segment_tri3(t[i], t[(i + 1) % 3], u[0], u[1], u[2], au))
            return 1;
    for (int i = 0; i < 3; i++)
        if (segment_tri3(u[i], u[(i + 1) % 3], t[0], t[1], t[2], at))
            return 1;
    return 0;
}

/* ---- the mesh and the count ------------------------------------------------------------------------------------ */

typedef struct mesh {
    int64_t nv, nt;
    double *x;   /* 3 nv */
    int64_t *tri; /* 3 nt */
} mesh;

typedef struct result {
    long degenerate, candidates, intersections, involved;
} result;

typedef struct cell_entry {
    uint64_t key;
    int64_t tri;
} cell_entry;

static int cmp_entry(const void *a, const void *b)
{
    const cell_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->tri < y->tri ? -1 : x->tri > y->tri;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "error: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

static int shares_vertex(const int64_t *a, const int64_t *b)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (a[i] == b[j])
                return 1;
    return 0;
}

/* Counts; brute = 1 tests every pair (for the self-test's cross-check). */
static void count(const mesh *m, int brute, result *res, unsigned char *hit)
{
    int64_t nt = m->nt;
    double *lo = xmalloc((size_t)nt * 3 * sizeof *lo), *hi = xmalloc((size_t)nt * 3 * sizeof *hi);
    int *ax = xmalloc((size_t)nt * sizeof *ax);
    memset(res, 0, sizeof *res);
    memset(hit, 0, (size_t)nt);
    double glo[3] = {INFINITY, INFINITY, INFINITY};
    double *ext = xmalloc((size_t)nt * sizeof *ext);
    for (int64_t t = 0; t < nt; t++) {
        const int64_t *v = m->tri + 3 * t;
        const double *p = m->x + 3 * v[0], *q = m->x + 3 * v[1], *r = m->x + 3 * v[2];
        ax[t] = drop_axis(p, q, r);
        if (ax[t] < 0)
            res->degenerate++;
        ext[t] = 0;
        for (int k = 0; k < 3; k++) {
            lo[3 * t + k] = fmin(p[k], fmin(q[k], r[k]));
            hi[3 * t + k] = fmax(p[k], fmax(q[k], r[k]));
            ext[t] = fmax(ext[t], hi[3 * t + k] - lo[3 * t + k]);
            glo[k] = fmin(glo[k], lo[3 * t + k]);
        }
    }
    /* the pair test, shared by both modes */
#define PAIR_TEST(i, j)                                                                                              \
    do {                                                                                                             \
        const int64_t *vi = m->tri + 3 * (i), *vj = m->tri + 3 * (j);                                                \
        if (ax[i] < 0 || ax[j] < 0 || shares_vertex(vi, vj))                                                         \
            break;                                                                                                   \
        int apart = 0;                                                                                               \
        for (int k = 0; k < 3; k++)                                                                                  \
            if (lo[3 * (i) + k] > hi[3 * (j) + k] || lo[3 * (j) + k] > hi[3 * (i) + k])                              \
                apart = 1;                                                                                           \
        if (apart)                                                                                                   \
            break;                                                                                                   \
        res->candidates++;                                                                                           \
        const double *ti[3] = {m->x + 3 * vi[0], m->x + 3 * vi[1], m->x + 3 * vi[2]};                                \
        const double *tj[3] = {m->x + 3 * vj[0], m->x + 3 * vj[1], m->x + 3 * vj[2]};                                \
        if (tri_tri(ti, ax[i], tj, ax[j])) {                                                                         \
            res->intersections++;                                                                                    \
            hit[i] = hit[j] = 1;                                                                                     \
        }                                                                                                            \
    } while (0)

    if (brute) {
        for (int64_t i = 0; i < nt; i++)
            for (int64_t j = i + 1; j < nt; j++)
                PAIR_TEST(i, j);
    } else if (nt > 0) {
        /* cell size: twice the median extent of the triangles' boxes */
        double *e = xmalloc((size_t)nt * sizeof *e);
        memcpy(e, ext, (size_t)nt * sizeof *e);
        qsort(e, (size_t)nt, sizeof *e, cmp_double);
        double h = 2 * e[nt / 2];
        free(e);
        if (!(h > 0))
            h = 1;
        double span = 0;
        for (int64_t t = 0; t < nt; t++)
            for (int k = 0; k < 3; k++)
                span = fmax(span, hi[3 * t + k] - glo[k]);
        if (span / h > 1.0e6) /* keep cell indices within 21 bits */
            h = span / 1.0e6;
        size_t cap = (size_t)nt * 8, n = 0;
        cell_entry *ent = xmalloc(cap * sizeof *ent);
        for (int64_t t = 0; t < nt; t++) {
            if (ax[t] < 0)
                continue;
            int64_t c0[3], c1[3];
            for (int k = 0; k < 3; k++)
                c0[k] = (int64_t)floor((lo[3 * t + k] - glo[k]) / h),
                c1[k] = (int64_t)floor((hi[3 * t + k] - glo[k]) / h);
            for (int64_t a = c0[0]; a <= c1[0]; a++)
                for (int64_t b = c0[1]; b <= c1[1]; b++)
                    for (int64_t c = c0[2]; c <= c1[2]; c++) {
                        if (n == cap) {
                            cap *= 2;
                            cell_entry *ne = realloc(ent, cap * sizeof *ent);
                            if (!ne) {
                                fprintf(stderr, "error: out of memory\n");
                                exit(2);
                            }
                            ent = ne;
                        }
                        ent[n].key = ((uint64_t)a << 42) | ((uint64_t)b << 21) | (uint64_t)c;
                        ent[n].tri = t;
                        n++;
                    }
        }
        qsort(ent, n, sizeof *ent, cmp_entry);
        for (size_t s = 0; s < n;) {
            size_t f = s;
            while (f < n && ent[f].key == ent[s].key)
                f++;
            uint64_t key = ent[s].key;
            for (size_t x = s; x < f; x++)
                for (size_t y = x + 1; y < f; y++) {
                    int64_t i = ent[x].tri, j = ent[y].tri;
                    /* the pair belongs to the cell of the lower corner of the boxes' intersection */
                    uint64_t own = 0;
                    for (int k = 0; k < 3; k++) {
                        double c = fmax(lo[3 * i + k], lo[3 * j + k]);
                        own = (own << 21) | (uint64_t)(int64_t)floor((c - glo[k]) / h);
                    }
                    if (own != key)
                        continue;
                    PAIR_TEST(i, j);
                }
            s = f;
        }
        free(ent);
    }
#undef PAIR_TEST
    for (int64_t t = 0; t < nt; t++)
        res->involved += hit[t];
    free(lo), free(hi), free(ax), free(ext);
}

/* Built with INTERSECTIONS_LIBRARY defined, this file is a library of one function (the tests'
 * zero-intersection checks, tests/validation/test_cloth_collide.c): the number of intersecting pairs of
 * vertex-disjoint triangles of the mesh x (3 per vertex) and tri (3 vertex indices per triangle). */
long intersections_count(const double *x, int64_t nv, const int64_t *tri, int64_t nt)
{
    mesh m = {nv, nt, (double *)x, (int64_t *)tri};
    result res;
    unsigned char *hit = xmalloc((size_t)nt + 1);
    count(&m, 0, &res, hit);
    free(hit);
    return res.intersections;
}

#ifndef INTERSECTIONS_LIBRARY
/* ---- reading ---------------------------------------------------------------------------------------------------- */

static int read_dump(const char *path, mesh *m)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "error: cannot open %s: %s\n", path, strerror(errno));
        return 2;
    }
    char magic[8];
    int64_t n[2];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "SHCLOTH1", 8) != 0 || fread(n, sizeof *n, 2, f) != 2 ||
        n[0] < 0 || n[1] < 0) {
        fprintf(stderr, "error: %s is not a mesh dump\n", path);
        fclose(f);
        return 2;
    }
    m->nv = n[0], m->nt = n[1];
    m->x = xmalloc((size_t)m->nv * 3 * sizeof *m->x);
    m->tri = xmalloc((size_t)m->nt * 3 * sizeof *m->tri);
    if (fread(m->x, sizeof *m->x, (size_t)m->nv * 3, f) != (size_t)m->nv * 3 ||
        fread(m->tri, sizeof *m->tri, (size_t)m->nt * 3, f) != (size_t)m->nt * 3) {
        fprintf(stderr, "error: %s is truncated\n", path);
        fclose(f);
        return 2;
    }
    fclose(f);
    return 0;
}

#ifdef WITH_HDF5
/* Reads a 1-D or 2-D dataset of n rows and `cols` columns into a new array of the given memory type. */
static void *h5_read(hid_t file, const char *name, hid_t type, size_t elem, int cols, int64_t *rows)
{
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0) {
        fprintf(stderr, "error: no dataset %s\n", name);
        return NULL;
    }
    hid_t s = H5Dget_space(d);
    hsize_t dims[2] = {0, 1};
    int nd = H5Sget_simple_extent_ndims(s);
    H5Sget_simple_extent_dims(s, dims, NULL);
    H5Sclose(s);
    if (nd < 1 || nd > 2 || (nd == 2 ? (int)dims[1] : 1) != cols) {
        fprintf(stderr, "error: dataset %s has the wrong shape (expected %d column(s))\n", name, cols);
        H5Dclose(d);
        return NULL;
    }
    void *buf = xmalloc((size_t)dims[0] * (size_t)cols * elem);
    if (dims[0] > 0 && H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        fprintf(stderr, "error: reading %s failed\n", name);
        H5Dclose(d);
        free(buf);
        return NULL;
    }
    H5Dclose(d);
    *rows = (int64_t)dims[0];
    return buf;
}

static int read_shard(const char *path, mesh *m)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        fprintf(stderr, "error: cannot open %s as HDF5\n", path);
        return 2;
    }
    int64_t nid = 0;
    int64_t *gid = NULL;
    m->x = h5_read(f, "/particles/position", H5T_NATIVE_DOUBLE, sizeof(double), 3, &m->nv);
    if (m->x)
        gid = h5_read(f, "/particles/global_id", H5T_NATIVE_INT64, sizeof(int64_t), 1, &nid);
    if (gid)
        m->tri = h5_read(f, "/surfaces/triangles", H5T_NATIVE_INT64, sizeof(int64_t), 3, &m->nt);
    H5Fclose(f);
    if (!m->x || !gid || !m->tri)
        return 2;
    if (nid != m->nv) {
        fprintf(stderr, "error: %s: %lld global ids for %lld positions\n", path, (long long)nid, (long long)m->nv);
        return 2;
    }
    /* /surfaces/triangles holds rows of /particles; the global ids only say which particles they are */
    int64_t gmin = m->nv ? gid[0] : 0, gmax = gmin;
    for (int64_t i = 0; i < nid; i++)
        gmin = gid[i] < gmin ? gid[i] : gmin, gmax = gid[i] > gmax ? gid[i] : gmax;
    printf("global_id_range=%lld..%lld\n", (long long)gmin, (long long)gmax);
    free(gid);
    return 0;
}
#endif

static int read_mesh(const char *path, mesh *m)
{
    unsigned char head[8] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "error: cannot open %s: %s\n", path, strerror(errno));
        return 2;
    }
    size_t got = fread(head, 1, 8, f);
    fclose(f);
    int rc;
    if (got == 8 && memcmp(head, "\x89HDF\r\n\x1a\n", 8) == 0) {
#ifdef WITH_HDF5
        rc = read_shard(path, m);
#else
        fprintf(stderr, "error: %s is HDF5, and this build has no HDF5 (compile with -DWITH_HDF5)\n", path);
        return 2;
#endif
    } else {
        rc = read_dump(path, m);
    }
    if (rc)
        return rc;
    for (int64_t i = 0; i < 3 * m->nt; i++)
        if (m->tri[i] < 0 || m->tri[i] >= m->nv) {
            fprintf(stderr, "error: %s: triangle %lld refers to vertex %lld of %lld\n", path, (long long)(i / 3),
                    (long long)m->tri[i], (long long)m->nv);
            return 2;
        }
    for (int64_t i = 0; i < 3 * m->nv; i++)
        if (!isfinite(m->x[i])) {
            fprintf(stderr, "error: %s: vertex %lld is not finite\n", path, (long long)(i / 3));
            return 3;
        }
    return 0;
}

/* ---- self-test -------------------------------------------------------------------------------------------------- */

static int check_case(const char *name, const double *x, int nv, const int64_t *tri, int nt, long expect)
{
    mesh m = {nv, nt, (double *)x, (int64_t *)tri};
    result g, b;
    unsigned char *hit = xmalloc((size_t)nt + 1);
    count(&m, 0, &g, hit);
    count(&m, 1, &b, hit);
    free(hit);
    int ok = g.intersections == expect && b.intersections == expect;
    printf("  %-44s expected %ld, grid %ld, all pairs %ld: %s\n", name, expect, g.intersections, b.intersections,
           ok ? "ok" : "FAILED");
    return ok;
}

/* A strip of quads along a polyline in the x-z plane, width 1 along y, each quad split along its diagonal like a
 * Shard grid cell: (i, 0), (i + 1, 0), (i + 1, 1) and (i, 0), (i + 1, 1), (i, 1). */
static int strip_case(const char *name, const double (*pts)[2], int np, long expect)
{
    double x[64 * 3];
    int64_t tri[64 * 3];
    for (int i = 0; i < np; i++)
        for (int j = 0; j < 2; j++) {
            double *v = x + 3 * (j * np + i);
            v[0] = pts[i][0], v[1] = j, v[2] = pts[i][1];
        }
    int nt = 0;
    for (int i = 0; i + 1 < np; i++) {
        int64_t a = i, b = i + 1, c = np + i + 1, d = np + i;
        tri[3 * nt] = a, tri[3 * nt + 1] = b, tri[3 * nt + 2] = c, nt++;
        tri[3 * nt] = a, tri[3 * nt + 1] = c, tri[3 * nt + 2] = d, nt++;
    }
    return check_case(name, x, 2 * np, tri, nt, expect);
}

static unsigned long long g_rng = 88172645463325252ull;
static double rnd(void)
{
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) / 9007199254740992.0;
}

static int self_test(void)
{
    int ok = 1;
    printf("self-test (closed triangles; pairs sharing a vertex index are never counted):\n");
    { /* two triangles crossing through each other */
        double x[] = {0, 0, 0, 2, 0, 0, 0, 2, 0, 0.5, 0.5, -1, 0.5, 0.5, 1, 1.5, 0.2, 0};
        int64_t t[] = {0, 1, 2, 3, 4, 5};
        ok &= check_case("two crossing triangles", x, 6, t, 2, 1);
    }
    { /* two triangles meeting only at a shared vertex (one index) */
        double x[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, -1, 0, 0.5, 0, -1, -0.5};
        int64_t t[] = {0, 1, 2, 0, 3, 4};
        ok &= check_case("touching only at a shared vertex", x, 5, t, 2, 0);
    }
    { /* the same point, but two vertex indices: closed triangles touch, so it counts */
        double x[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, -1, 0, 0.5, 0, -1, -0.5};
        int64_t t[] = {0, 1, 2, 3, 4, 5};
        ok &= check_case("touching at a point, distinct vertices", x, 6, t, 2, 1);
    }
    { /* parallel, offset by 1e-9 */
        double x[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1e-9, 1, 0, 1e-9, 0, 1, 1e-9};
        int64_t t[] = {0, 1, 2, 3, 4, 5};
        ok &= check_case("parallel, 1e-9 apart", x, 6, t, 2, 0);
    }
    { /* coplanar: overlapping, then disjoint */
        double x[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0.2, 0.2, 0, 1.2, 0.2, 0, 0.2, 1.2, 0};
        int64_t t[] = {0, 1, 2, 3, 4, 5};
        ok &= check_case("coplanar, overlapping", x, 6, t, 2, 1);
        double y[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0.6, 0.6, 0, 1.6, 0.6, 0, 0.6, 1.6, 0};
        ok &= check_case("coplanar, disjoint", y, 6, t, 2, 0);
    }
    { /* a vertex exactly on the other triangle's tilted plane (x + y + z = 1), inside it: touches */
        double x[] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.25, 0.25, 0.5, 0.25, 0.25, 2, 1, 1, 2};
        int64_t t[] = {0, 1, 2, 3, 4, 5};
        ok &= check_case("vertex exactly on a tilted plane", x, 6, t, 2, 1);
        x[11] = nextafter(0.5, 1.0); /* one ulp above the plane: apart */
        ok &= check_case("the same, one ulp off the plane", x, 6, t, 2, 0);
    }
    { /* a flat strip: neighbours share vertices, nothing else touches */
        const double p[][2] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}};
        ok &= strip_case("flat strip", p, 5, 0);
    }
    { /* a strip folded over itself without passing through (a hairpin, 0.1 apart) */
        const double p[][2] = {{0, 0}, {1, 0}, {2, 0}, {2.05, 0.05}, {2, 0.1}, {1, 0.1}, {0, 0.1}};
        ok &= strip_case("hairpin fold, 0.1 apart", p, 7, 0);
    }
    { /* a strip folded back through itself: the quad from (1.3, 1) down to (1.3, -0.6) cuts the quad from x = 1
       * to 2 along x = 1.3, z = 0; their diagonals cross that line at y = 0.3 and y = 0.625, so three of the
       * four triangle pairs meet */
        const double p[][2] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {3, 1}, {1.3, 1}, {1.3, -0.6}};
        ok &= strip_case("strip folded through itself", p, 7, 3);
    }
    { /* random triangles: the grid and the all-pairs count agree */
        enum { NT = 300 };
        static double x[3 * 3 * NT];
        static int64_t t[3 * NT];
        for (int i = 0; i < NT; i++) {
            double c[3] = {rnd() * 4, rnd() * 4, rnd() * 4};
            for (int k = 0; k < 3; k++) {
                for (int d = 0; d < 3; d++)
                    x[9 * i + 3 * k + d] = c[d] + (rnd() - 0.5) * (i % 7 == 0 ? 2.0 : 0.6);
                t[3 * i + k] = 3 * i + k;
            }
        }
        mesh m = {3 * NT, NT, x, t};
        result g, b;
        unsigned char hit[NT];
        count(&m, 0, &g, hit);
        count(&m, 1, &b, hit);
        int same = g.intersections == b.intersections && g.candidates == b.candidates;
        printf("  %-44s grid %ld, all pairs %ld (candidates %ld, %ld): %s\n", "300 random triangles",
               g.intersections, b.intersections, g.candidates, b.candidates, same ? "ok" : "FAILED");
        ok &= same;
    }
    printf("exact_calls=%ld\nself_test=%s\n", g_exact_calls, ok ? "passed" : "FAILED");
    return ok ? 0 : 1;
}

/* ---- main -------------------------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *path = NULL;
    int with_sphere = 0;
    double sphere[4] = {0, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--self-test") == 0)
            return self_test();
        if (strcmp(argv[i], "--sphere") == 0 && i + 4 < argc) {
            for (int k = 0; k < 4; k++)
                sphere[k] = atof(argv[i + 1 + k]);
            with_sphere = 1;
            i += 4;
        } else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "usage: %s [--sphere CX CY CZ R] FILE | --self-test\n", argv[0]);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "usage: %s [--sphere CX CY CZ R] FILE | --self-test\n", argv[0]);
        return 2;
    }
    mesh m = {0, 0, NULL, NULL};
    int rc = read_mesh(path, &m);
    if (rc)
        return rc;
    result res;
    unsigned char *hit = xmalloc((size_t)m.nt + 1);
    count(&m, 0, &res, hit);
    double zmin = INFINITY, zmax = -INFINITY, depth = 0;
    long inside = 0;
    for (int64_t i = 0; i < m.nv; i++) {
        const double *p = m.x + 3 * i;
        zmin = fmin(zmin, p[2]), zmax = fmax(zmax, p[2]);
        if (with_sphere) {
            double dx = p[0] - sphere[0], dy = p[1] - sphere[1], dz = p[2] - sphere[2];
            double d = sphere[3] - sqrt(dx * dx + dy * dy + dz * dz);
            if (d > 0)
                inside++, depth = fmax(depth, d);
        }
    }
    printf("vertices=%lld\ntriangles=%lld\ndegenerate=%ld\ncandidate_pairs=%ld\nexact_calls=%ld\n", (long long)m.nv,
           (long long)m.nt, res.degenerate, res.candidates, g_exact_calls);
    printf("intersections=%ld\ntriangles_involved=%ld\nz_min=%.6g\nz_max=%.6g\n", res.intersections, res.involved,
           zmin, zmax);
    if (with_sphere)
        printf("inside_sphere=%ld\nsphere_depth_mm=%.4g\n", inside, 1e3 * depth);
    free(hit), free(m.x), free(m.tri);
    return 0;
}
#endif
