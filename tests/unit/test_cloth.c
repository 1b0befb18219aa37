/* Cloth (cloth.h) kernels and grid topology:
 *   - a mesh cloth: the grid given as a mesh has the grid's hinges, vertex areas and time step; a flipped
 *     triangle, an edge of three triangles, an unused vertex and a triangle without area are refused;
 *   - topology: triangle and hinge counts, every vertex's triangles and hinges contain it (and every element
 *     containing it is listed), hinge vertex order (the two triangles exist, opposite orientation of the shared
 *     edge), vertex areas summing to the grid's area, the stencil radius covering every hinge;
 *   - membrane: zero force and energy for rigid motions; a uniaxial stretch with the lateral strain held stores
 *     A t (mu + lambda/2) G_xx^2 (plane stress) and its stretch (output field) is G_xx, turned or not; forces are
 *     -dW/dx (central differences) on random deformations; damping forces do no positive work;
 *   - dihedral angle: 0 flat, +-the fold angle of a folded hinge, its gradient against central differences
 *     and summing to zero, with torque zero;
 *   - bending: forces are -dW/dx; a grid bent isometrically onto a cylinder of curvature k about an axis along
 *     u or v stores D k^2 / 2 per area (0.975 of it: the boundary has no hinges), and 2.95 times that about
 *     the diagonal (the hinge energy's anisotropy on this grid, cloth.h);
 *   - the time step: finite, positive, shrinking with the cell size like the membrane CFL;
 *   - a cloth mesh body whose file could not be read: the module's hooks free nothing they did not allocate. */
#include "cloth/cloth.h"
#include "shard/matter.h"
#include "shard/scene.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const shard_matter shard_matter_cloth;

static shard_shape grid_shape(double lu, double lv, long nu, long nv)
{
    shard_shape g;
    memset(&g, 0, sizeof g);
    g.kind = SHARD_SHAPE_GRID;
    g.u[0] = lu, g.v[1] = lv;
    g.divisions[0] = nu, g.divisions[1] = nv;
    return g;
}

static void test_topology(void)
{
    shard_shape g = grid_shape(1.0, 0.6, 5, 4);
    shard_cloth_params cp;
    shard_cloth_params_init(&cp, &g, NULL, 1e6, 0.3, 300, 1e-3, -1, 0);
    int64_t nvx = shard_cloth_n_vertices(&cp), nt = shard_cloth_n_triangles(&cp), nh = shard_cloth_n_hinges(&cp);
    SHARD_ENSURE(nvx == 30 && nt == 40);
    /* interior edges = all edges - boundary edges */
    int64_t edges = 5 * 5 + 4 * 6 + 20, boundary = 2 * 5 + 2 * 4;
    SHARD_ENSURE(nh == edges - boundary);
    double area = 0.0;
    for (int64_t k = 0; k < nvx; k++) {
        int64_t t[6], h[12];
        int n = shard_cloth_vertex_triangles(&cp, k, t), m = shard_cloth_vertex_hinges(&cp, k, h);
        int count_t = 0, count_h = 0;
        for (int64_t q = 0; q < nt; q++) {
            int64_t v[3];
            shard_cloth_triangle(&cp, q, v);
            count_t += v[0] == k || v[1] == k || v[2] == k;
        }
        for (int64_t q = 0; q < nh; q++) {
            int64_t v[4];
            shard_cloth_hinge(&cp, q, v);
            count_h += v[0] == k || v[1] == k || v[2] == k || v[3] == k;
        }
        SHARD_ENSURE(n == count_t);
        SHARD_ENSURE(m == count_h);
        for (int a = 1; a < n; a++)
            SHARD_ENSURE(t[a - 1] < t[a]);
        area += shard_cloth_vertex_area(&cp, k);
    }
    SHARD_ENSURE_NEAR(area, 0.6, 1e-12);
    double r = shard_cloth_stencil_radius(&cp);
    for (int64_t q = 0; q < nh; q++) {
        int64_t v[4];
        shard_cloth_hinge(&cp, q, v);
        /* the two triangles: (v0, v1, v2) and (v1, v0, v3) appear among the triangles, up to rotation */
        int found = 0;
        for (int64_t t = 0; t < nt; t++) {
            int64_t w[3];
            shard_cloth_triangle(&cp, t, w);
            for (int rot = 0; rot < 3; rot++) {
                found += w[rot] == v[0] && w[(rot + 1) % 3] == v[1] && w[(rot + 2) % 3] == v[2];
                found += w[rot] == v[1] && w[(rot + 1) % 3] == v[0] && w[(rot + 2) % 3] == v[3];
            }
        }
        SHARD_ENSURE(found == 2);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                double xa = (double)(v[a] % 6) * 0.2, ya = (double)(v[a] / 6) * 0.15;
                double xb = (double)(v[b] % 6) * 0.2, yb = (double)(v[b] / 6) * 0.15;
                SHARD_ENSURE(hypot(xa - xb, ya - yb) <= r * (1 + 1e-12));
            }
    }
}

static int cmp4(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    for (int k = 0; k < 4; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* The grid as a mesh: the same vertices and triangles give the same hinges (as vertex quadruples), vertex
 * areas, stencil radius bound and time step; bad meshes are refused with their reason. */
static void test_mesh(void)
{
    shard_shape g = grid_shape(1.0, 0.6, 5, 4);
    shard_cloth_params gp, mp;
    shard_cloth_params_init(&gp, &g, NULL, 1e6, 0.3, 300, 1e-3, -1, 1e-4);
    int64_t nv = shard_cloth_n_vertices(&gp), nt = shard_cloth_n_triangles(&gp), nh = shard_cloth_n_hinges(&gp);
    double X[30][3];
    int64_t T[40][3];
    for (int64_t k = 0; k < nv; k++)
        X[k][0] = (double)(k % 6) / 5.0, X[k][1] = 0.6 * (double)(k / 6) / 4.0, X[k][2] = 0.0;
    for (int64_t t = 0; t < nt; t++)
        shard_cloth_triangle(&gp, t, T[t]);
    shard_cloth_mesh cm;
    char why[256];
    SHARD_ENSURE(shard_cloth_mesh_build(&X[0][0], nv, &T[0][0], nt, &cm, why, sizeof why) == 0);
    shard_cloth_params_init(&mp, &g, &cm, 1e6, 0.3, 300, 1e-3, -1, 1e-4);
    SHARD_ENSURE(shard_cloth_n_hinges(&mp) == nh);
    int64_t a[64][4], b[64][4];
    for (int64_t h = 0; h < nh && h < 64; h++) {
        shard_cloth_hinge(&gp, h, a[h]);
        shard_cloth_hinge(&mp, h, b[h]);
    }
    for (int64_t h = 0; h < nh; h++) /* (v0, v1, v2, v3) and (v1, v0, v3, v2) are the same hinge */
        for (int64_t *q = a[h]; q; q = q == a[h] ? b[h] : NULL)
            if (q[0] > q[1]) {
                int64_t t0 = q[0], t2 = q[2];
                q[0] = q[1], q[1] = t0, q[2] = q[3], q[3] = t2;
            }
    qsort(a, (size_t)nh, sizeof a[0], cmp4);
    qsort(b, (size_t)nh, sizeof b[0], cmp4);
    SHARD_ENSURE(memcmp(a, b, (size_t)nh * sizeof a[0]) == 0);
    for (int64_t k = 0; k < nv; k++)
        SHARD_ENSURE_NEAR(shard_cloth_vertex_area(&mp, k), shard_cloth_vertex_area(&gp, k), 1e-15);
    SHARD_ENSURE(shard_cloth_stencil_radius(&mp) >= shard_cloth_stencil_radius(&gp) * (1 - 1e-12));
    SHARD_ENSURE_NEAR(mp.dt, gp.dt, 1e-12 * gp.dt);
    shard_cloth_mesh_free(&cm);
    /* refusals */
    int64_t flipped[40][3];
    memcpy(flipped, T, sizeof T);
    int64_t s = flipped[7][1];
    flipped[7][1] = flipped[7][2], flipped[7][2] = s;
    SHARD_ENSURE(shard_cloth_mesh_build(&X[0][0], nv, &flipped[0][0], nt, &cm, why, sizeof why) != 0);
    SHARD_ENSURE(strstr(why, "orientation") != NULL);
    int64_t fan[3][3] = {{0, 1, 7}, {1, 0, 8}, {0, 1, 9}};
    SHARD_ENSURE(shard_cloth_mesh_build(&X[0][0], 10, &fan[0][0], 3, &cm, why, sizeof why) != 0);
    SHARD_ENSURE(strstr(why, "more than two") != NULL);
    int64_t one[1][3] = {{0, 1, 6}};
    SHARD_ENSURE(shard_cloth_mesh_build(&X[0][0], 8, &one[0][0], 1, &cm, why, sizeof why) != 0);
    SHARD_ENSURE(strstr(why, "vertex 3 ") != NULL);
    int64_t flat[1][3] = {{0, 1, 2}};
    SHARD_ENSURE(shard_cloth_mesh_build(&X[0][0], 3, &flat[0][0], 1, &cm, why, sizeof why) != 0);
    SHARD_ENSURE(strstr(why, "no area") != NULL);
}

static void rest_triangle(double X[3][3])
{
    double P[3][3] = {{0.1, 0.2, 0.0}, {0.35, 0.15, 0.05}, {0.2, 0.45, -0.02}};
    memcpy(X, P, sizeof P);
}

static double membrane_energy(const shard_cloth_params *cp, const shard_cloth_tri *r, const double x[3][3])
{
    double f[9] = {0}, z[3] = {0, 0, 0};
    return shard_cloth_membrane(cp, r, x[0], x[1], x[2], z, z, z, f);
}

static void test_membrane(void)
{
    shard_shape g = grid_shape(1, 1, 4, 4);
    shard_cloth_params cp;
    const double E = 2e6, nu = 0.3, t = 1e-3;
    shard_cloth_params_init(&cp, &g, NULL, E, nu, 300, t, -1, 0);
    double X[3][3];
    rest_triangle(X);
    shard_cloth_tri r;
    shard_cloth_tri_rest(X[0], X[1], X[2], &r);
    /* rigid motion: rotation about a skew axis + translation */
    double c = cos(0.7), s = sin(0.7), x[3][3];
    for (int q = 0; q < 3; q++) {
        x[q][0] = c * X[q][0] - s * X[q][2] + 0.3;
        x[q][1] = X[q][1] - 1.0;
        x[q][2] = s * X[q][0] + c * X[q][2] + 2.0;
    }
    double f[9] = {0}, z[3] = {0, 0, 0};
    double W = shard_cloth_membrane(&cp, &r, x[0], x[1], x[2], z, z, z, f);
    SHARD_ENSURE(fabs(W) < 1e-12);
    for (int q = 0; q < 9; q++)
        SHARD_ENSURE(fabs(f[q]) < 1e-6);
    /* a flat square-ish triangle in xy stretched along x by 1 + e, y unchanged: G = diag(e + e^2/2, 0),
     * W = A t (mu + lambda/2) G_xx^2 with the plane-stress constants */
    double Y[3][3] = {{0, 0, 0}, {0.1, 0, 0}, {0, 0.1, 0}}, y[3][3];
    shard_cloth_tri_rest(Y[0], Y[1], Y[2], &r);
    const double e = 0.01;
    for (int q = 0; q < 3; q++)
        y[q][0] = (1 + e) * Y[q][0], y[q][1] = Y[q][1], y[q][2] = 0;
    double Gxx = e + 0.5 * e * e, lam = E * nu / (1 - nu * nu), mu = E / (2 * (1 + nu));
    SHARD_ENSURE_NEAR(membrane_energy(&cp, &r, y), 0.005 * t * (mu + 0.5 * lam) * Gxx * Gxx, 1e-15);
    /* its stretch (the largest principal Green strain) is G_xx, rotated or not */
    SHARD_ENSURE_NEAR(shard_cloth_stretch(&r, y[0], y[1], y[2]), Gxx, 1e-15);
    double yr[3][3];
    for (int q = 0; q < 3; q++)
        yr[q][0] = 0.6 * y[q][0] - 0.8 * y[q][1], yr[q][1] = 0.8 * y[q][0] + 0.6 * y[q][1], yr[q][2] = 0.0;
    SHARD_ENSURE_NEAR(shard_cloth_stretch(&r, yr[0], yr[1], yr[2]), Gxx, 1e-14);
    /* forces = -dW/dx on random deformations */
    uint64_t seed = 7;
    for (int trial = 0; trial < 20; trial++) {
        for (int q = 0; q < 3; q++)
            for (int k = 0; k < 3; k++)
                x[q][k] = X[q][k] * (1.0 + 0.1 * shard_test_rnd(&seed)) + 0.02 * shard_test_rnd(&seed);
        shard_cloth_tri_rest(X[0], X[1], X[2], &r);
        double fa[9] = {0};
        shard_cloth_membrane(&cp, &r, x[0], x[1], x[2], z, z, z, fa);
        double scale = 0.0, worst = 0.0;
        for (int q = 0; q < 9; q++) {
            const double h = 1e-7;
            double xp[3][3], xm[3][3];
            memcpy(xp, x, sizeof xp), memcpy(xm, x, sizeof xm);
            xp[q / 3][q % 3] += h, xm[q / 3][q % 3] -= h;
            double d = -(membrane_energy(&cp, &r, xp) - membrane_energy(&cp, &r, xm)) / (2 * h);
            worst = fmax(worst, fabs(d - fa[q]));
            scale = fmax(scale, fabs(fa[q]));
        }
        SHARD_ENSURE(worst <= 1e-5 * scale + 1e-9);
        /* damping: the forces of a strain rate do negative work */
        shard_cloth_params cd = cp;
        cd.beta = 1e-3;
        double v[3][3], fd[9] = {0}, fe[9] = {0};
        for (int q = 0; q < 3; q++)
            for (int k = 0; k < 3; k++)
                v[q][k] = shard_test_rnd(&seed);
        shard_cloth_membrane(&cd, &r, x[0], x[1], x[2], v[0], v[1], v[2], fd);
        shard_cloth_membrane(&cp, &r, x[0], x[1], x[2], v[0], v[1], v[2], fe);
        double power = 0.0;
        for (int q = 0; q < 9; q++)
            power += (fd[q] - fe[q]) * v[q / 3][q % 3];
        SHARD_ENSURE(power <= 1e-12);
    }
}

static void test_dihedral(void)
{
    double x0[3] = {0, 0, 0}, x1[3] = {1, 0, 0}, x2[3] = {0.4, 1, 0}, x3[3] = {0.7, -1, 0};
    SHARD_ENSURE(fabs(shard_cloth_dihedral(x0, x1, x2, x3, NULL)) < 1e-15);
    /* fold x3 up about the edge (the x axis) by 0.5 rad: |theta| = 0.5 */
    double y3[3] = {0.7, -cos(0.5), sin(0.5)};
    SHARD_ENSURE_NEAR(fabs(shard_cloth_dihedral(x0, x1, x2, y3, NULL)), 0.5, 1e-12);
    uint64_t seed = 11;
    for (int trial = 0; trial < 50; trial++) {
        double x[4][3], g[12];
        const double *base[4] = {x0, x1, x2, x3};
        for (int q = 0; q < 4; q++)
            for (int k = 0; k < 3; k++)
                x[q][k] = base[q][k] + 0.3 * shard_test_rnd(&seed);
        double th = shard_cloth_dihedral(x[0], x[1], x[2], x[3], g);
        SHARD_ENSURE(fabs(th) < M_PI);
        double sum[3] = {0, 0, 0}, worst = 0.0, scale = 0.0;
        for (int q = 0; q < 12; q++) {
            const double h = 1e-7;
            double xp[4][3], xm[4][3];
            memcpy(xp, x, sizeof xp), memcpy(xm, x, sizeof xm);
            xp[q / 3][q % 3] += h, xm[q / 3][q % 3] -= h;
            double d = (shard_cloth_dihedral(xp[0], xp[1], xp[2], xp[3], NULL) -
                        shard_cloth_dihedral(xm[0], xm[1], xm[2], xm[3], NULL)) / (2 * h);
            worst = fmax(worst, fabs(d - g[q]));
            scale = fmax(scale, fabs(g[q]));
            sum[q % 3] += g[q];
        }
        SHARD_ENSURE(worst <= 1e-6 * scale);
        for (int k = 0; k < 3; k++)
            SHARD_ENSURE(fabs(sum[k]) <= 1e-12 * scale);
    }
}

static double bend_energy(const shard_cloth_params *cp, const shard_cloth_hinge_rest *r, double x[4][3])
{
    const double *xs[4] = {x[0], x[1], x[2], x[3]}, z[3] = {0, 0, 0}, *vs[4] = {z, z, z, z};
    double f[12] = {0};
    return shard_cloth_bending(cp, r, xs, vs, f);
}

static void test_bending(void)
{
    shard_shape g = grid_shape(1, 1, 10, 10);
    shard_cloth_params cp;
    const double E = 2e6, nu = 0.3, t = 1e-3;
    shard_cloth_params_init(&cp, &g, NULL, E, nu, 300, t, -1, 0);
    SHARD_ENSURE_NEAR(cp.D, E * t * t * t / (12 * (1 - nu * nu)), 1e-18);
    double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {0.4, 1, 0.1}, {0.7, -1, 0.2}};
    shard_cloth_hinge_rest r;
    shard_cloth_hinge_rest_init(&cp, X[0], X[1], X[2], X[3], &r);
    uint64_t seed = 5;
    for (int trial = 0; trial < 20; trial++) {
        double x[4][3];
        for (int q = 0; q < 4; q++)
            for (int k = 0; k < 3; k++)
                x[q][k] = X[q][k] + 0.2 * shard_test_rnd(&seed);
        const double *xs[4] = {x[0], x[1], x[2], x[3]}, z[3] = {0, 0, 0}, *vs[4] = {z, z, z, z};
        double f[12] = {0};
        shard_cloth_bending(&cp, &r, xs, vs, f);
        double worst = 0.0, scale = 0.0;
        for (int q = 0; q < 12; q++) {
            const double h = 1e-7;
            double xp[4][3], xm[4][3];
            memcpy(xp, x, sizeof xp), memcpy(xm, x, sizeof xm);
            xp[q / 3][q % 3] += h, xm[q / 3][q % 3] -= h;
            double d = -(bend_energy(&cp, &r, xp) - bend_energy(&cp, &r, xm)) / (2 * h);
            worst = fmax(worst, fabs(d - f[q]));
            scale = fmax(scale, fabs(f[q]));
        }
        SHARD_ENSURE(worst <= 1e-5 * scale + 1e-15);
    }
    /* a 40 x 40 grid of side 1 m on a cylinder of radius R, its axis along v (bending along u), along u, and
     * along the diagonal u + v */
    shard_shape g2 = grid_shape(1, 1, 40, 40);
    shard_cloth_params_init(&cp, &g2, NULL, E, nu, 300, t, -1, 0);
    const double R = 0.8;
    double W[3] = {0, 0, 0};
    for (int64_t h = 0; h < shard_cloth_n_hinges(&cp); h++) {
        int64_t v[4];
        shard_cloth_hinge(&cp, h, v);
        double Xr[4][3], x[4][3];
        for (int q = 0; q < 4; q++)
            Xr[q][0] = (double)(v[q] % 41) / 40.0, Xr[q][1] = (double)(v[q] / 41) / 40.0, Xr[q][2] = 0;
        shard_cloth_hinge_rest_init(&cp, Xr[0], Xr[1], Xr[2], Xr[3], &r);
        for (int dir = 0; dir < 3; dir++) {
            /* (s, w): the coordinate along the bend and along the axis */
            double ex[2] = {1, 0}, ey[2] = {0, 1};
            if (dir == 1)
                ex[0] = 0, ex[1] = 1, ey[0] = 1, ey[1] = 0;
            if (dir == 2)
                ex[0] = ex[1] = ey[1] = M_SQRT1_2, ey[0] = -M_SQRT1_2;
            for (int q = 0; q < 4; q++) {
                double sa = Xr[q][0] * ex[0] + Xr[q][1] * ex[1], wa = Xr[q][0] * ey[0] + Xr[q][1] * ey[1];
                double sx = R * sin(sa / R), sz = R * (1 - cos(sa / R));
                x[q][0] = sx * ex[0] + wa * ey[0];
                x[q][1] = sx * ex[1] + wa * ey[1];
                x[q][2] = sz;
            }
            W[dir] += bend_energy(&cp, &r, x);
        }
    }
    double exact = 0.5 * cp.D / (R * R) * 1.0;
    printf("cylinder bend: energy / (D k^2 A / 2) = %.4f along u, %.4f along v, %.4f along the diagonal\n",
           W[0] / exact, W[1] / exact, W[2] / exact);
    /* exact along the grid's axes but for the hinges the boundary lacks (1/40 of them) */
    SHARD_ENSURE(fabs(W[0] / exact - 1.0) < 0.03);
    SHARD_ENSURE(fabs(W[1] / exact - 1.0) < 0.03);
    /* the hinge energy's anisotropy on this grid (cloth.h): 3 times stiffer across the diagonal */
    SHARD_ENSURE(fabs(W[2] / exact - 2.95) < 0.05);
}

static void test_dt(void)
{
    shard_shape g = grid_shape(1, 1, 20, 20), g2 = grid_shape(1, 1, 40, 40);
    shard_cloth_params a, b;
    shard_cloth_params_init(&a, &g, NULL, 5e6, 0.3, 300, 1e-3, -1, 0);
    shard_cloth_params_init(&b, &g2, NULL, 5e6, 0.3, 300, 1e-3, -1, 0);
    SHARD_ENSURE(isfinite(a.dt) && a.dt > 0.0);
    /* membrane-limited: halving the cell halves the step */
    SHARD_ENSURE_NEAR(b.dt / a.dt, 0.5, 1e-9);
    double c = sqrt(5e6 / (300 * (1 - 0.09)));
    SHARD_ENSURE_NEAR(a.dt, 0.05 / sqrt(2.0) / c, 1e-12);
}

/* Fills the stack below the caller with non-zero bytes, so that a hook that reads a local it never set reads
 * garbage (and frees it), not the zeros of a fresh stack. */
static void __attribute__((noinline)) poison_stack(void)
{
    volatile unsigned char junk[16384];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = 0x5a;
}

/* A cloth mesh body whose mesh is not loaded (its file could not be read): the module's hooks answer without
 * touching a mesh; the bond radius is 0, and body_init refuses the body with its file's location. */
static void test_mesh_not_loaded(void)
{
    const char *text = "run: {steps: 1}\nmaterials:\n  cotton: {density: 300, E: 1.0e6, nu: 0.3}\nbodies:\n"
                       "  - kind: cloth\n    material: cotton\n    shape: {mesh: {file: missing.obj}}\n"
                       "    spacing: 0.5\n    thickness: 0.001\n";
    shard_scene sc;
    shard_error err;
    memset(&err, 0, sizeof err);
    SHARD_ENSURE(shard_scene_parse("cloth.yaml", text, strlen(text), &sc, &err) == 0);
    SHARD_ENSURE(sc.n_bodies == 1 && sc.bodies[0].shape.kind == SHARD_SHAPE_MESH && !sc.bodies[0].shape.mesh);
    for (int k = 0; k < 3; k++) {
        poison_stack();
        SHARD_ENSURE(shard_matter_cloth.bond_radius(&sc, 0) == 0.0);
    }
    shard_cloth_params cp;
    memset(&cp, 0, sizeof cp);
    poison_stack();
    SHARD_ENSURE(shard_matter_cloth.body_init(&sc, 0, &cp, &err) == SHARD_EXIT_INPUT);
    SHARD_ENSURE(strstr(err.msg, "cloth.yaml:7:26: bodies[0].shape.mesh.file: 'missing.obj': the mesh was not loaded"));
    SHARD_ENSURE(cp.mesh == NULL);
    shard_scene_free(&sc);
}

int main(void)
{
    test_topology();
    test_mesh();
    test_mesh_not_loaded();
    test_membrane();
    test_dihedral();
    test_bending();
    test_dt();
    return SHARD_TEST_RESULT();
}
