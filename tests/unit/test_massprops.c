/* Mass properties (massprops.h) against closed forms:
 *   - analytic box, sphere and cylinder (axis along z and tilted) against hand-evaluated numbers and against
 *     I = R diag R^T of the same body in its own frame;
 *   - triangle meshes: a rotated, triangulated box equals the analytic box to 1e-12 relative; the same mesh
 *     moved by 1e6 m gives the same inertia to 1e-9 relative; tetrahedra against their closed forms (right-
 *     corner formula and the covariance V/20 sum (v - c)(v - c)^T); a fine prism against the tilted analytic
 *     cylinder; icospheres converge to the ball at second order; shuffling the triangles changes no bit;
 *   - principal axes: a rotated box's axes and moments are recovered with the documented sign rule and a
 *     right-handed frame; tie rules for a cube (R = 1) and a square box (the documented in-plane axis);
 *   - errors: an inside-out mesh, an index out of range, a negative radius. */
#include "shard/massprops.h"
#include "shard/rotation.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* largest |a - b| over a tensor, relative to the largest |b| */
static double tensor_rel(const double a[9], const double b[9])
{
    double d = 0, s = 0;
    for (int k = 0; k < 9; k++)
        d = fmax(d, fabs(a[k] - b[k])), s = fmax(s, fabs(b[k]));
    return d / s;
}

/* I = R diag(m) R^T */
static void from_frame(const double R[9], const double m[3], double I[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            I[3 * i + j] = R[3 * i] * m[0] * R[3 * j] + R[3 * i + 1] * m[1] * R[3 * j + 1] +
                           R[3 * i + 2] * m[2] * R[3 * j + 2];
}

/* A box of sides s centred at c, rotated by R0, as 8 vertices and 12 outward (counter-clockwise) triangles. */
static void box_mesh(const double c[3], const double s[3], const double R0[9], double x[24], int64_t tri[36])
{
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++) {
                double l[3] = {(i - 0.5) * s[0], (j - 0.5) * s[1], (k - 0.5) * s[2]}, w[3];
                shard_mat3_mul_vec(R0, l, w);
                for (int d = 0; d < 3; d++)
                    x[3 * (4 * i + 2 * j + k) + d] = c[d] + w[d];
            }
    /* faces -x, +x, -y, +y, -z, +z, corners (ijk as 4i + 2j + k) counter-clockwise seen from outside */
    static const int quad[6][4] = {{0, 1, 3, 2}, {4, 6, 7, 5}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 5, 7, 3}};
    for (int f = 0; f < 6; f++) {
        const int *v = quad[f];
        int64_t t[6] = {v[0], v[1], v[2], v[0], v[2], v[3]};
        memcpy(tri + 6 * f, t, sizeof t);
    }
}

/* checks: hand-evaluated box, sphere, cylinder; tilted cylinder = R diag R^T; bad sizes rejected */
static void test_analytic(void)
{
    shard_massprops p;
    double lo[3] = {0, 0, 0}, hi[3] = {1, 2, 3};
    SHARD_ENSURE(shard_massprops_box(2, lo, hi, &p) == SHARD_MASSPROPS_OK);
    /* m = 2 * 6 = 12, I = 12/12 diag(4 + 9, 1 + 9, 1 + 4) */
    SHARD_ENSURE(p.mass == 12 && p.volume == 6 && p.com[0] == 0.5 && p.com[1] == 1 && p.com[2] == 1.5);
    SHARD_ENSURE(p.inertia[0] == 13 && p.inertia[4] == 10 && p.inertia[8] == 5 && p.inertia[1] == 0);

    double c[3] = {1, -2, 3};
    SHARD_ENSURE(shard_massprops_sphere(3, c, 2, &p) == SHARD_MASSPROPS_OK);
    /* V = 32 pi / 3, m = 32 pi, I = 2/5 m r^2 = 51.2 pi */
    SHARD_ENSURE_NEAR(p.mass, 32 * M_PI, 1e-13);
    SHARD_ENSURE_NEAR(p.inertia[0], 51.2 * M_PI, 1e-12);
    SHARD_ENSURE(p.inertia[0] == p.inertia[4] && p.inertia[4] == p.inertia[8] && p.inertia[5] == 0);

    double p0[3] = {0, 0, 0}, p1[3] = {0, 0, 2};
    SHARD_ENSURE(shard_massprops_cylinder(1.5, p0, p1, 1, &p) == SHARD_MASSPROPS_OK);
    /* m = 1.5 * 2 pi = 3 pi; axial m/2; across m (3 + 4)/12 */
    SHARD_ENSURE_NEAR(p.mass, 3 * M_PI, 1e-14);
    SHARD_ENSURE_NEAR(p.inertia[8], 1.5 * M_PI, 1e-14);
    SHARD_ENSURE_NEAR(p.inertia[0], 3 * M_PI * 7 / 12, 1e-14);
    SHARD_ENSURE_NEAR(p.inertia[4], 3 * M_PI * 7 / 12, 1e-14);
    SHARD_ENSURE(p.com[2] == 1 && p.inertia[1] == 0 && p.inertia[2] == 0);

    /* tilted: the same cylinder with its axis along R0 e_z must have I = R0 diag(across, across, axial) R0^T */
    double axis[3] = {0.3, -0.5, 0.8}, q0[4], R0[9], ez[3] = {0, 0, 2}, d[3];
    shard_quat_from_axis_angle(axis, 1.1, q0);
    shard_quat_to_matrix(q0, R0);
    shard_mat3_mul_vec(R0, ez, d);
    double a0[3] = {5, 6, 7}, a1[3] = {5 + d[0], 6 + d[1], 7 + d[2]};
    shard_massprops t;
    SHARD_ENSURE(shard_massprops_cylinder(1.5, a0, a1, 1, &t) == SHARD_MASSPROPS_OK);
    double m3[3] = {p.inertia[0], p.inertia[4], p.inertia[8]}, want[9];
    from_frame(R0, m3, want);
    double rel = tensor_rel(t.inertia, want);
    printf("analytic: box, sphere, cylinder exact; tilted cylinder vs R diag R^T: %.2e relative\n", rel);
    SHARD_ENSURE(rel < 1e-14);
    SHARD_ENSURE_NEAR(t.com[0], 5 + 0.5 * d[0], 1e-14);

    SHARD_ENSURE(shard_massprops_sphere(1, c, -1, &p) == SHARD_MASSPROPS_BAD_INPUT);
    SHARD_ENSURE(shard_massprops_box(1, hi, lo, &p) == SHARD_MASSPROPS_BAD_INPUT);
    SHARD_ENSURE(shard_massprops_cylinder(1, a0, a0, 1, &p) == SHARD_MASSPROPS_BAD_INPUT);
    SHARD_ENSURE(shard_massprops_box(NAN, lo, hi, &p) == SHARD_MASSPROPS_BAD_INPUT);
}

/* checks: triangulated rotated box vs analytic (1e-12), the same moved by 1e6 m (1e-9), triangle order
 * independence (bitwise), inside-out and bad index errors */
static void test_box_mesh(void)
{
    double axis[3] = {1, 2, 3}, q0[4], R0[9];
    shard_quat_from_axis_angle(axis, 0.7, q0);
    shard_quat_to_matrix(q0, R0);
    double c[3] = {0.3, -0.2, 0.1}, s[3] = {1.1, 0.7, 2.3}, rho = 2700;
    double x[24];
    int64_t tri[36];
    box_mesh(c, s, R0, x, tri);
    shard_massprops p, a;
    SHARD_ENSURE(shard_massprops_mesh(rho, x, 8, tri, 12, &p) == SHARD_MASSPROPS_OK);
    double lo[3] = {-0.5 * s[0], -0.5 * s[1], -0.5 * s[2]}, hi[3] = {0.5 * s[0], 0.5 * s[1], 0.5 * s[2]};
    SHARD_ENSURE(shard_massprops_box(rho, lo, hi, &a) == SHARD_MASSPROPS_OK);
    double m3[3] = {a.inertia[0], a.inertia[4], a.inertia[8]}, want[9];
    from_frame(R0, m3, want);
    double rel = tensor_rel(p.inertia, want), drel = fabs(p.mass / a.mass - 1), dc = 0;
    for (int k = 0; k < 3; k++)
        dc = fmax(dc, fabs(p.com[k] - c[k]));
    printf("box mesh (rotated): mass %.3e rel, com %.2e m, inertia %.2e rel vs analytic\n", drel, dc, rel);
    SHARD_ENSURE(drel < 1e-12 && dc < 1e-14 && rel < 1e-12);

    /* moved by (1e6, -1e6, 1e6) m: the vertex coordinates are rounded to ulp(1e6) = 1.2e-10 m, nothing else is
     * lost; integrals about the origin would lose about 1e12 * 1e-16 relative */
    double off[3] = {1e6, -1e6, 1e6}, y[24];
    for (int i = 0; i < 24; i++)
        y[i] = x[i] + off[i % 3];
    shard_massprops f;
    SHARD_ENSURE(shard_massprops_mesh(rho, y, 8, tri, 12, &f) == SHARD_MASSPROPS_OK);
    double frel = tensor_rel(f.inertia, p.inertia), fc = 0;
    for (int k = 0; k < 3; k++)
        fc = fmax(fc, fabs(f.com[k] - off[k] - p.com[k]));
    printf("box mesh moved by 1e6 m: inertia %.2e rel, mass %.2e rel, com %.2e m\n", frel, fabs(f.mass / p.mass - 1),
           fc);
    SHARD_ENSURE(frel < 1e-9 && fabs(f.mass / p.mass - 1) < 1e-9 && fc < 1e-9);

    /* the triangles in reverse order are the same terms in another order: every bit equal (exact sums) */
    int64_t rev[36];
    for (int t = 0; t < 12; t++)
        memcpy(rev + 3 * t, tri + 3 * (11 - t), 3 * sizeof(int64_t));
    shard_massprops r;
    SHARD_ENSURE(shard_massprops_mesh(rho, x, 8, rev, 12, &r) == SHARD_MASSPROPS_OK);
    SHARD_ENSURE(memcmp(&r, &p, sizeof r) == 0);

    /* inside out: swap two vertices of every triangle */
    int64_t inv[36];
    for (int t = 0; t < 12; t++)
        inv[3 * t] = tri[3 * t], inv[3 * t + 1] = tri[3 * t + 2], inv[3 * t + 2] = tri[3 * t + 1];
    SHARD_ENSURE(shard_massprops_mesh(rho, x, 8, inv, 12, &r) == SHARD_MASSPROPS_NONPOSITIVE_VOLUME);
    inv[5] = 8;
    SHARD_ENSURE(shard_massprops_mesh(rho, x, 8, inv, 12, &r) == SHARD_MASSPROPS_BAD_INPUT);
    inv[5] = -1;
    SHARD_ENSURE(shard_massprops_mesh(rho, x, 8, inv, 12, &r) == SHARD_MASSPROPS_BAD_INPUT);
    SHARD_ENSURE(strcmp(shard_massprops_status_name(SHARD_MASSPROPS_NONPOSITIVE_VOLUME), "non-positive volume") == 0);
}

/* Outward triangles of the tetrahedron v (4 vertices, det(v1 - v0, v2 - v0, v3 - v0) > 0). */
static const int64_t tet_tri[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};

/* checks: right-corner tetrahedron (I_xx = 3m(b^2 + c^2)/80, I_xy = m a b / 80) and a general one against the
 * covariance formula C = V/20 sum_k (v_k - c)(v_k - c)^T, I = rho (tr C 1 - C) */
static void test_tetrahedron(void)
{
    double a = 1.3, b = 0.7, cc = 2.1, rho = 1000;
    double v[12] = {0, 0, 0, a, 0, 0, 0, b, 0, 0, 0, cc};
    shard_massprops p;
    SHARD_ENSURE(shard_massprops_mesh(rho, v, 4, tet_tri, 4, &p) == SHARD_MASSPROPS_OK);
    double V = a * b * cc / 6, m = rho * V;
    double want[9] = {3 * m * (b * b + cc * cc) / 80, m * a * b / 80, m * a * cc / 80,
                      m * a * b / 80, 3 * m * (a * a + cc * cc) / 80, m * b * cc / 80,
                      m * a * cc / 80, m * b * cc / 80, 3 * m * (a * a + b * b) / 80};
    double rel1 = tensor_rel(p.inertia, want);
    SHARD_ENSURE_NEAR(p.volume, V, 1e-15);
    SHARD_ENSURE_NEAR(p.com[0], a / 4, 1e-15);
    SHARD_ENSURE_NEAR(p.com[2], cc / 4, 1e-15);

    double g[12] = {0.2, -0.1, 0.4, 1.7, 0.3, -0.2, 0.5, 1.9, 0.1, 0.4, 0.6, 1.5};
    SHARD_ENSURE(shard_massprops_mesh(rho, g, 4, tet_tri, 4, &p) == SHARD_MASSPROPS_OK);
    double e1[3], e2[3], e3[3], ctr[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        e1[k] = g[3 + k] - g[k], e2[k] = g[6 + k] - g[k], e3[k] = g[9 + k] - g[k];
        for (int j = 0; j < 4; j++)
            ctr[k] += 0.25 * g[3 * j + k];
    }
    double gv = (e1[0] * (e2[1] * e3[2] - e2[2] * e3[1]) - e1[1] * (e2[0] * e3[2] - e2[2] * e3[0]) +
                 e1[2] * (e2[0] * e3[1] - e2[1] * e3[0])) / 6;
    double C[9] = {0};
    for (int j = 0; j < 4; j++)
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 3; s++)
                C[3 * r + s] += gv / 20 * (g[3 * j + r] - ctr[r]) * (g[3 * j + s] - ctr[s]);
    double tr = C[0] + C[4] + C[8], gw[9];
    for (int k = 0; k < 9; k++)
        gw[k] = rho * ((k % 4 == 0 ? tr : 0) - C[k]);
    double rel2 = tensor_rel(p.inertia, gw);
    printf("tetrahedra: right-corner inertia %.2e rel, general (covariance formula) %.2e rel, volume %.2e rel\n",
           rel1, rel2, fabs(p.volume / gv - 1));
    SHARD_ENSURE(rel1 < 1e-14 && rel2 < 1e-13 && fabs(p.volume / gv - 1) < 1e-14);
    for (int k = 0; k < 3; k++)
        SHARD_ENSURE_NEAR(p.com[k], ctr[k], 1e-15);
}

/* A prism of n sides inscribed in the cylinder (p0, p1, r), as a triangle soup (3 fresh vertices per
 * triangle); returns the number of triangles.  x holds 9 doubles, tri 3 indices per triangle. */
static int64_t prism_mesh(const double p0[3], const double p1[3], double r, int n, double *x, int64_t *tri)
{
    double a[3], h = 0;
    for (int k = 0; k < 3; k++)
        a[k] = p1[k] - p0[k], h += a[k] * a[k];
    h = sqrt(h);
    for (int k = 0; k < 3; k++)
        a[k] /= h;
    /* u, v: an orthonormal pair normal to a with u x v = a */
    double t[3] = {1, 0, 0};
    if (fabs(a[0]) > 0.6)
        t[0] = 0, t[1] = 1;
    double u[3], v[3], d = t[0] * a[0] + t[1] * a[1] + t[2] * a[2], nu = 0;
    for (int k = 0; k < 3; k++)
        u[k] = t[k] - d * a[k], nu += u[k] * u[k];
    for (int k = 0; k < 3; k++)
        u[k] /= sqrt(nu);
    v[0] = a[1] * u[2] - a[2] * u[1], v[1] = a[2] * u[0] - a[0] * u[2], v[2] = a[0] * u[1] - a[1] * u[0];
    int64_t nt = 0;
    for (int i = 0; i < n; i++) {
        double b0[3], b1[3], t0[3], t1[3];
        double c0 = cos(2 * M_PI * i / n), s0 = sin(2 * M_PI * i / n);
        double c1 = cos(2 * M_PI * (i + 1) / n), s1 = sin(2 * M_PI * (i + 1) / n);
        for (int k = 0; k < 3; k++) {
            b0[k] = p0[k] + r * (c0 * u[k] + s0 * v[k]), b1[k] = p0[k] + r * (c1 * u[k] + s1 * v[k]);
            t0[k] = p1[k] + r * (c0 * u[k] + s0 * v[k]), t1[k] = p1[k] + r * (c1 * u[k] + s1 * v[k]);
        }
        const double *tris[4][3] = {{p0, b1, b0}, {p1, t0, t1}, {b0, b1, t1}, {b0, t1, t0}};
        for (int j = 0; j < 4; j++, nt++)
            for (int w = 0; w < 3; w++) {
                memcpy(x + 9 * nt + 3 * w, tris[j][w], 3 * sizeof(double));
                tri[3 * nt + w] = 3 * nt + w;
            }
    }
    return nt;
}

/* checks: a 2048-sided prism along a tilted axis matches the analytic tilted cylinder to 1e-5 relative (the
 * inscribed polygon's area deficit is (2 pi / n)^2 / 6 = 1.6e-6) */
static void test_cylinder_mesh(void)
{
    int n = 2048;
    double *x = malloc(sizeof(double) * 9 * 4 * n);
    int64_t *tri = malloc(sizeof(int64_t) * 3 * 4 * n);
    double p0[3] = {1, 2, 3}, p1[3] = {1.4, 1.1, 4.9}, r = 0.35;
    int64_t nt = prism_mesh(p0, p1, r, n, x, tri);
    shard_massprops m, a;
    SHARD_ENSURE(shard_massprops_mesh(7800, x, 3 * nt, tri, nt, &m) == SHARD_MASSPROPS_OK);
    SHARD_ENSURE(shard_massprops_cylinder(7800, p0, p1, r, &a) == SHARD_MASSPROPS_OK);
    double rel = tensor_rel(m.inertia, a.inertia);
    printf("tilted cylinder: %d-sided prism mesh vs analytic: inertia %.2e rel, mass %.2e rel\n", n, rel,
           fabs(m.mass / a.mass - 1));
    SHARD_ENSURE(rel < 1e-5 && fabs(m.mass / a.mass - 1) < 1e-5);
    free(x);
    free(tri);
}

/* Icosphere of subdivision level `level` on the unit sphere as a triangle soup (20 * 4^level triangles; shared
 * vertices are computed identically from the same endpoints, so the soup is closed bit for bit). */
static int64_t icosphere(int level, double *x, int64_t *tri)
{
    const double g = (1 + sqrt(5.0)) / 2;
    double v[12][3] = {{-1, g, 0}, {1, g, 0}, {-1, -g, 0}, {1, -g, 0}, {0, -1, g}, {0, 1, g},
                       {0, -1, -g}, {0, 1, -g}, {g, 0, -1}, {g, 0, 1}, {-g, 0, -1}, {-g, 0, 1}};
    static const int f[20][3] = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                                 {11, 10, 2}, {10, 7, 6}, {7, 1, 8}, {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8},
                                 {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
    for (int i = 0; i < 12; i++) {
        double n = sqrt(v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2]);
        for (int k = 0; k < 3; k++)
            v[i][k] /= n;
    }
    int64_t nt = 20;
    for (int t = 0; t < 20; t++)
        for (int j = 0; j < 3; j++)
            memcpy(x + 9 * t + 3 * j, v[f[t][j]], 3 * sizeof(double));
    for (int l = 0; l < level; l++) {
        /* in place from the last triangle down: triangle t becomes 4t .. 4t+3 */
        for (int64_t t = nt - 1; t >= 0; t--) {
            double a[3], b[3], c[3], ab[3], bc[3], ca[3];
            memcpy(a, x + 9 * t, sizeof a), memcpy(b, x + 9 * t + 3, sizeof b), memcpy(c, x + 9 * t + 6, sizeof c);
            double na = 0, nb = 0, nc = 0;
            for (int k = 0; k < 3; k++) {
                ab[k] = a[k] + b[k], bc[k] = b[k] + c[k], ca[k] = c[k] + a[k];
                na += ab[k] * ab[k], nb += bc[k] * bc[k], nc += ca[k] * ca[k];
            }
            for (int k = 0; k < 3; k++)
                ab[k] /= sqrt(na), bc[k] /= sqrt(nb), ca[k] /= sqrt(nc);
            const double *sub[4][3] = {{a, ab, ca}, {ab, b, bc}, {ca, bc, c}, {ab, bc, ca}};
            for (int s = 3; s >= 0; s--)
                for (int j = 0; j < 3; j++)
                    memcpy(x + 9 * (4 * t + s) + 3 * j, sub[s][j], 3 * sizeof(double));
        }
        nt *= 4;
    }
    for (int64_t i = 0; i < 3 * nt; i++)
        tri[i] = i;
    return nt;
}

/* checks: icosphere levels 0..5: volume and I/(m r^2) converge to 4/3 pi and 2/5, the error falling by
 * 4 (+-10 %) per level from level 2 on (second order in the edge length), below 1e-3 at level 5; the tensor is
 * isotropic (icosahedral symmetry), so the principal frame falls on the three-way tie: R = 1, q = (1, 0, 0, 0) */
static void test_icosphere(void)
{
    int64_t cap = 20 * 1024;
    double *x = malloc(sizeof(double) * 9 * cap);
    int64_t *tri = malloc(sizeof(int64_t) * 3 * cap);
    double prev = 0;
    for (int level = 0; level <= 5; level++) {
        int64_t nt = icosphere(level, x, tri);
        shard_massprops p;
        SHARD_ENSURE(shard_massprops_mesh(1, x, 3 * nt, tri, nt, &p) == SHARD_MASSPROPS_OK);
        double ratio = p.inertia[0] / p.mass; /* 2/5 r^2 for the ball */
        double err_v = 1 - p.volume / (4.0 / 3.0 * M_PI), err_i = 1 - ratio / 0.4;
        double aniso = fmax(fabs(p.inertia[4] / p.inertia[0] - 1), fabs(p.inertia[8] / p.inertia[0] - 1));
        for (int k = 0; k < 9; k++)
            if (k % 4)
                aniso = fmax(aniso, fabs(p.inertia[k] / p.inertia[0]));
        double moments[3], R[9], q[4];
        SHARD_ENSURE(shard_massprops_principal(p.inertia, moments, R, q) == SHARD_MASSPROPS_OK);
        int identity = q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0 && R[0] == 1 && R[4] == 1 && R[8] == 1;
        printf("icosphere level %d (%6lld triangles): volume error %.3e, I/(m r^2) error %.3e, anisotropy %.1e, "
               "R = 1: %s\n",
               level, (long long)nt, err_v, err_i, aniso, identity ? "yes" : "no");
        if (level >= 2)
            SHARD_ENSURE_NEAR(prev / err_i, 4, 0.4);
        SHARD_ENSURE(err_v > 0 && err_i > 0 && aniso < 1e-13 && identity);
        prev = err_i;
    }
    SHARD_ENSURE(prev < 1e-3);
    free(x);
    free(tri);
}

static double det3(const double A[9])
{
    return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
           A[2] * (A[3] * A[7] - A[4] * A[6]);
}

/* checks: the principal frame of a rotated box (sides 1.1, 0.7, 2.3: moments ascending are about the long side,
 * then the middle, then the short one); columns equal the box axes up to the documented sign; det +1; q and R
 * agree; reconstruction; the same from the mesh of the box; the tie rules for a square box and a cube */
static void test_principal(void)
{
    double axis[3] = {1, 2, 3}, q0[4], R0[9];
    shard_quat_from_axis_angle(axis, 0.7, q0);
    shard_quat_to_matrix(q0, R0);
    double s[3] = {1.1, 0.7, 2.3}, rho = 2700, m = rho * s[0] * s[1] * s[2];
    double Ib[3] = {m / 12 * (s[1] * s[1] + s[2] * s[2]), m / 12 * (s[0] * s[0] + s[2] * s[2]),
                    m / 12 * (s[0] * s[0] + s[1] * s[1])};
    double I[9];
    from_frame(R0, Ib, I);
    /* ascending: the moment about the long side (2.3, body axis 2) is the smallest, then axis 0, then axis 1 */
    int want_axis[3] = {2, 0, 1};
    double mom[3], R[9], q[4], Rq[9];
    SHARD_ENSURE(shard_massprops_principal(I, mom, R, q) == SHARD_MASSPROPS_OK);
    double worst_axis = 0, worst_mom = 0;
    for (int k = 0; k < 3; k++) {
        worst_mom = fmax(worst_mom, fabs(mom[k] / Ib[want_axis[k]] - 1));
        /* column k = +- column want_axis[k] of R0 */
        double dp = 0;
        for (int i = 0; i < 3; i++)
            dp += R[3 * i + k] * R0[3 * i + want_axis[k]];
        worst_axis = fmax(worst_axis, 1 - fabs(dp));
    }
    /* sign rule on the first two columns: the largest component is positive */
    for (int k = 0; k < 2; k++) {
        int big = 0;
        for (int i = 1; i < 3; i++)
            if (fabs(R[3 * i + k]) > fabs(R[3 * big + k]))
                big = i;
        SHARD_ENSURE(R[3 * big + k] > 0);
    }
    shard_quat_to_matrix(q, Rq);
    double rec[9];
    from_frame(R, mom, rec);
    printf("principal (rotated box): moments %.2e rel, axes 1 - |cos| %.2e, det %.17g, |R(q) - R| %.1e, "
           "reconstruction %.1e rel\n",
           worst_mom, worst_axis, det3(R), tensor_rel(Rq, R), tensor_rel(rec, I));
    SHARD_ENSURE(worst_mom < 1e-14 && worst_axis < 1e-15 && fabs(det3(R) - 1) < 1e-15);
    SHARD_ENSURE(tensor_rel(Rq, R) < 1e-15 && tensor_rel(rec, I) < 1e-15);
    SHARD_ENSURE(mom[0] <= mom[1] && mom[1] <= mom[2]);

    /* the same body as a mesh: the same frame to 1e-12 */
    double x[24], c[3] = {5, 5, 5}, Rm[9], mm[3];
    int64_t tri[36];
    box_mesh(c, s, R0, x, tri);
    shard_massprops p;
    SHARD_ENSURE(shard_massprops_mesh(rho, x, 8, tri, 12, &p) == SHARD_MASSPROPS_OK);
    SHARD_ENSURE(shard_massprops_principal(p.inertia, mm, Rm, NULL) == SHARD_MASSPROPS_OK);
    double dR = 0;
    for (int k = 0; k < 9; k++)
        dR = fmax(dR, fabs(Rm[k] - R[k]));
    printf("principal (rotated box mesh): |R_mesh - R_analytic| = %.2e\n", dR);
    SHARD_ENSURE(dR < 1e-12);

    /* a square box (sides 0.6, 0.6, 2): the two large moments tie; the distinct axis (smallest moment) is the
     * long side; the first tied axis is the world axis least aligned with it, projected and normalised */
    double Iq[3] = {(0.36 + 4) / 12, (0.36 + 4) / 12, 0.72 / 12}, Is[9];
    from_frame(R0, Iq, Is);
    SHARD_ENSURE(shard_massprops_principal(Is, mom, R, q) == SHARD_MASSPROPS_OK);
    double e[3] = {R[0], R[3], R[6]}, d = fabs(e[0] * R0[2] + e[1] * R0[5] + e[2] * R0[8]);
    int kmin = 0;
    for (int i = 1; i < 3; i++)
        if (fabs(e[i]) < fabs(e[kmin]))
            kmin = i;
    double u[3], nu = 0;
    for (int i = 0; i < 3; i++)
        u[i] = (i == kmin) - e[kmin] * e[i], nu += u[i] * u[i];
    double du = 0;
    for (int i = 0; i < 3; i++)
        du = fmax(du, fabs(u[i] / sqrt(nu) - R[3 * i + 1]));
    from_frame(R, mom, rec);
    printf("principal (square box, tied pair): distinct axis |cos| = %.17g, first tied axis vs rule %.1e, det "
           "%.17g, reconstruction %.1e rel\n",
           d, du, det3(R), tensor_rel(rec, Is));
    SHARD_ENSURE(fabs(d - 1) < 1e-15 && du < 1e-15 && fabs(det3(R) - 1) < 1e-15 && tensor_rel(rec, Is) < 1e-14);

    /* a cube, rotated: three tied moments, R = 1 */
    double Ic[3] = {1, 1, 1}, Icube[9];
    from_frame(R0, Ic, Icube);
    SHARD_ENSURE(shard_massprops_principal(Icube, mom, R, q) == SHARD_MASSPROPS_OK);
    SHARD_ENSURE(R[0] == 1 && R[4] == 1 && R[8] == 1 && R[1] == 0 && q[0] == 1 && q[3] == 0);
    double bad[9] = {1, NAN, 0, NAN, 1, 0, 0, 0, 1};
    SHARD_ENSURE(shard_massprops_principal(bad, mom, R, q) == SHARD_MASSPROPS_BAD_INPUT);
}

int main(void)
{
    test_analytic();
    test_box_mesh();
    test_tetrahedron();
    test_cylinder_mesh();
    test_icosphere();
    test_principal();
    return SHARD_TEST_RESULT();
}
