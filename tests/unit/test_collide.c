/* Collide (collide.h): contact points of every supported pair against hand-computed values:
 *   - sphere-sphere: depth, normal, midway point; a gap within the margin (negative depth) and beyond it (no
 *     point); coincident centres (n = +z, no NaN);
 *   - sphere-plane; sphere-box in the face, edge and corner regions and with the centre inside; sphere-cylinder
 *     on the side, a cap, the rim and inside;
 *   - box-plane: a cube resting flat (4 bottom corners), a tilted box (its lowest vertex), the swapped order;
 *   - cylinder-plane: upright (4 rim points), slightly tilted (still 4), lying (one point per cap rim);
 *   - box-box: a cube on a larger box (4 points, the same features after a small shift), a cube turned 45 deg on
 *     a cube (the octagon reduced to 4), crossed edges (one point), gaps beyond and within the margin, boxes
 *     aligned edge on edge and concentric (no NaN);
 *   - symmetry: shard_collide(a, b) and (b, a) give the same points, depths and opposite normals, for the cases
 *     above and for 2000 random poses of every pair, which also must give finite unit normals;
 *   - unsupported pairs give 0. */
#include "rigid/collide.h"
#include "shard/rotation.h"
#include "test.h"

#include <math.h>
#include <string.h>

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

static void rot(double ax, double ay, double az, double angle, double R[9])
{
    double axis[3] = {ax, ay, az}, q[4];
    shard_quat_from_axis_angle(axis, angle, q);
    shard_quat_to_matrix(q, R);
}

static shard_collide_shape sphere(double x, double y, double z, double r)
{
    shard_collide_shape s;
    memset(&s, 0, sizeof s);
    s.kind = SHARD_COLLIDE_SPHERE;
    s.pos[0] = x, s.pos[1] = y, s.pos[2] = z;
    memcpy(s.R, I3, sizeof I3);
    s.radius = r;
    return s;
}

static shard_collide_shape box(const double pos[3], const double R[9], double hx, double hy, double hz)
{
    shard_collide_shape s;
    memset(&s, 0, sizeof s);
    s.kind = SHARD_COLLIDE_BOX;
    memcpy(s.pos, pos, sizeof s.pos);
    memcpy(s.R, R, sizeof s.R);
    s.half[0] = hx, s.half[1] = hy, s.half[2] = hz;
    return s;
}

static shard_collide_shape cylinder(const double pos[3], const double R[9], double r, double hh)
{
    shard_collide_shape s;
    memset(&s, 0, sizeof s);
    s.kind = SHARD_COLLIDE_CYLINDER;
    memcpy(s.pos, pos, sizeof s.pos);
    memcpy(s.R, R, sizeof s.R);
    s.radius = r, s.half_height = hh;
    return s;
}

static shard_collide_shape plane(const double pos[3], const double n[3])
{
    shard_collide_shape s;
    memset(&s, 0, sizeof s);
    s.kind = SHARD_COLLIDE_PLANE;
    memcpy(s.pos, pos, sizeof s.pos);
    memcpy(s.R, I3, sizeof I3);
    memcpy(s.normal, n, sizeof s.normal);
    return s;
}

/* world = pos + R l */
static void to_world(const shard_collide_shape *s, const double l[3], double w[3])
{
    shard_mat3_mul_vec(s->R, l, w);
    for (int k = 0; k < 3; k++)
        w[k] += s->pos[k];
}

/* |got - want| <= tol component by component; a failure names the caller's line. */
static void ensure_vec_at(int line, const double got[3], const double want[3], double tol)
{
    for (int k = 0; k < 3; k++)
        if (!(fabs(got[k] - want[k]) <= tol)) {
            fprintf(stderr, "FAIL %s:%d: component %d: got %.17g, want %.17g, tol %.3g\n", __FILE__, line, k, got[k],
                    want[k], tol);
            shard_test_failures++;
        }
}
#define ENSURE_VEC(...) ensure_vec_at(__LINE__, __VA_ARGS__)

/* The point of out[0..n) nearest to p (its index). */
static int nearest(const shard_collide_point *out, int n, const double p[3])
{
    int best = -1;
    double bd = INFINITY;
    for (int m = 0; m < n; m++) {
        double d = 0;
        for (int k = 0; k < 3; k++)
            d += (out[m].p[k] - p[k]) * (out[m].p[k] - p[k]);
        if (d < bd)
            best = m, bd = d;
    }
    return best;
}

/* shard_collide(a, b) against (b, a): same count, each point found with the same depth and the opposite normal. */
static void ensure_symmetric(const shard_collide_shape *a, const shard_collide_shape *b, double margin, double tol)
{
    shard_collide_point p1[SHARD_COLLIDE_MAX_POINTS], p2[SHARD_COLLIDE_MAX_POINTS];
    int n1 = shard_collide(a, b, margin, p1), n2 = shard_collide(b, a, margin, p2);
    SHARD_ENSURE(n1 == n2);
    if (n1 != n2)
        return;
    for (int m = 0; m < n1; m++) {
        int j = nearest(p2, n2, p1[m].p);
        ENSURE_VEC(p2[j].p, p1[m].p, tol);
        double neg[3] = {-p1[m].n[0], -p1[m].n[1], -p1[m].n[2]};
        ENSURE_VEC(p2[j].n, neg, tol);
        SHARD_ENSURE_NEAR(p2[j].depth, p1[m].depth, tol);
    }
}

/* One point: count, depth, normal, point (a failure names the caller's line). */
static void ensure_one_at(int line, const shard_collide_shape *a, const shard_collide_shape *b, double margin,
                          double depth, const double n[3], const double p[3], uint32_t *feature)
{
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS];
    int cnt = shard_collide(a, b, margin, out);
    if (cnt != 1) {
        fprintf(stderr, "FAIL %s:%d: %d points, want 1\n", __FILE__, line, cnt);
        shard_test_failures++;
        return;
    }
    double dd[3] = {out[0].depth, 0, 0}, dw[3] = {depth, 0, 0};
    ensure_vec_at(line, dd, dw, 1e-12);
    ensure_vec_at(line, out[0].n, n, 1e-12);
    ensure_vec_at(line, out[0].p, p, 1e-12);
    SHARD_ENSURE(out[0].feature < 65536);
    if (feature)
        *feature = out[0].feature;
    ensure_symmetric(a, b, margin, 1e-14);
}
#define ensure_one(...) ensure_one_at(__LINE__, __VA_ARGS__)

static void test_sphere_sphere(void)
{
    shard_collide_shape a = sphere(0, 0, 1.9, 1), b = sphere(0, 0, 0, 1);
    ensure_one(&a, &b, 0, 0.1, (double[3]){0, 0, 1}, (double[3]){0, 0, 0.95}, NULL);
    /* along a diagonal, different radii: the point midway between the two surfaces */
    a = sphere(1, 2, 2, 0.5), b = sphere(0, 0, 0, 2.4); /* distance 3, depth 2.9 - 3 = -0.1 */
    ensure_one(&a, &b, 0.2, -0.1, (double[3]){1.0 / 3, 2.0 / 3, 2.0 / 3},
               (double[3]){2.45 / 3, 4.9 / 3, 4.9 / 3}, NULL); /* (2.4 + 2.5) / 2 = 2.45 from b's centre */
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS];
    SHARD_ENSURE(shard_collide(&a, &b, 0.09, out) == 0); /* beyond the margin */
    SHARD_ENSURE(shard_collide(&a, &b, 0, out) == 0);
    a = sphere(0, 0, 2.05, 1), b = sphere(0, 0, 0, 1);
    ensure_one(&a, &b, 0.1, -0.05, (double[3]){0, 0, 1}, (double[3]){0, 0, 1.025}, NULL);
    a = sphere(1, 1, 1, 0.5), b = sphere(1, 1, 1, 0.25);
    int n = shard_collide(&a, &b, 0, out);
    SHARD_ENSURE(n == 1);
    SHARD_ENSURE_NEAR(out[0].depth, 0.75, 1e-15);
    ENSURE_VEC(out[0].n, (double[3]){0, 0, 1}, 0);
    for (int k = 0; k < 3; k++)
        SHARD_ENSURE(isfinite(out[0].p[k]));
}

static void test_sphere_plane(void)
{
    shard_collide_shape a = sphere(3, -2, 0.4, 0.5), b = plane((double[3]){0, 0, 0}, (double[3]){0, 0, 1});
    ensure_one(&a, &b, 0, 0.1, (double[3]){0, 0, 1}, (double[3]){3, -2, -0.05}, NULL);
    /* a tilted plane through (1, 2, 3), normal (0, 3, 4)/5 given unnormalised: height of the centre 0.3 */
    b = plane((double[3]){1, 2, 3}, (double[3]){0, 0.6, 0.8});
    a = sphere(5, 2 + 0.18, 3 + 0.24, 0.25);
    double n[3] = {0, 0.6, 0.8};
    double p[3] = {5, 2 + 0.18 - 0.6 * 0.275, 3 + 0.24 - 0.8 * 0.275}; /* centre - n (0.25 + 0.3) / 2 */
    ensure_one(&a, &b, 0.1, -0.05, n, p, NULL);
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS];
    SHARD_ENSURE(shard_collide(&a, &b, 0.04, out) == 0);
    SHARD_ENSURE(shard_collide(&b, &a, 0.06, out) == 1 && out[0].n[2] < 0);
    b = plane((double[3]){0, 0, 0}, (double[3]){0, 0, 0}); /* no normal: no contact */
    SHARD_ENSURE(shard_collide(&a, &b, 10, out) == 0);
}

static void test_sphere_box(void)
{
    double R[9], pos[3] = {0.5, -1, 2};
    rot(1, 2, 3, 0.7, R);
    shard_collide_shape b = box(pos, R, 1, 2, 3);
    uint32_t f_face, f_edge, f_corner, f_inside;
    double c[3], n[3], p[3];
    /* face region: 0.3 off the +x face, radius 0.5 */
    to_world(&b, (double[3]){1.3, 0.5, 0.5}, c);
    shard_collide_shape a = sphere(c[0], c[1], c[2], 0.5);
    shard_mat3_mul_vec(R, (double[3]){1, 0, 0}, n);
    to_world(&b, (double[3]){0.9, 0.5, 0.5}, p); /* midway between x = 1 (box) and 1.3 - 0.5 = 0.8 (sphere) */
    ensure_one(&a, &b, 0, 0.2, n, p, &f_face);
    /* edge region (+x, +y): offset (0.3, 0.4) from the edge, radius 0.6 */
    to_world(&b, (double[3]){1.3, 2.4, -1}, c);
    a = sphere(c[0], c[1], c[2], 0.6);
    shard_mat3_mul_vec(R, (double[3]){0.6, 0.8, 0}, n);
    to_world(&b, (double[3]){1 - 0.6 * 0.05, 2 - 0.8 * 0.05, -1}, p); /* closest point - n depth/2 */
    ensure_one(&a, &b, 0, 0.1, n, p, &f_edge);
    /* corner region (-x, +y, -z): offset (-0.2, 0.2, -0.1), distance 0.3, radius 0.5 */
    to_world(&b, (double[3]){-1.2, 2.2, -3.1}, c);
    a = sphere(c[0], c[1], c[2], 0.5);
    shard_mat3_mul_vec(R, (double[3]){-2.0 / 3, 2.0 / 3, -1.0 / 3}, n);
    to_world(&b, (double[3]){-1 + 0.1 * 2 / 3, 2 - 0.1 * 2 / 3, -3 + 0.1 / 3}, p); /* corner - n depth/2 */
    ensure_one(&a, &b, 0, 0.2, n, p, &f_corner);
    /* centre inside, 0.1 from the -y face (nearer than the others): out through -y */
    to_world(&b, (double[3]){0.2, -1.9, 1}, c);
    a = sphere(c[0], c[1], c[2], 0.5);
    shard_mat3_mul_vec(R, (double[3]){0, -1, 0}, n);
    to_world(&b, (double[3]){0.2, (-2 + -1.4) / 2, 1}, p); /* box face y = -2, sphere surface at -1.9 + 0.5 */
    ensure_one(&a, &b, 0, 0.6, n, p, &f_inside);
    SHARD_ENSURE(f_face != f_edge && f_face != f_corner && f_edge != f_corner && f_inside != f_face);
    /* the centre exactly on a face: depth = radius, no NaN */
    to_world(&b, (double[3]){1, 0, 0}, c);
    a = sphere(c[0], c[1], c[2], 0.5);
    shard_mat3_mul_vec(R, (double[3]){1, 0, 0}, n);
    to_world(&b, (double[3]){0.75, 0, 0}, p);
    ensure_one(&a, &b, 0, 0.5, n, p, NULL);
    /* beyond the margin in the corner region (distance 0.3, radius 0.2, margin 0.05): none */
    to_world(&b, (double[3]){-1.2, 2.2, -3.1}, c);
    a = sphere(c[0], c[1], c[2], 0.2);
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS];
    SHARD_ENSURE(shard_collide(&a, &b, 0.05, out) == 0);
    SHARD_ENSURE(shard_collide(&a, &b, 0.15, out) == 1 && fabs(out[0].depth + 0.1) < 1e-12);
}

static void test_sphere_cylinder(void)
{
    double R[9], pos[3] = {-1, 0.5, 0.25}, c[3], n[3], p[3];
    rot(-1, 0.5, 2, 1.1, R);
    shard_collide_shape b = cylinder(pos, R, 1, 2);
    uint32_t f[6];
    /* side: 0.3 beyond the radius, sphere radius 0.5 */
    to_world(&b, (double[3]){0, 1.3, 0.5}, c);
    shard_collide_shape a = sphere(c[0], c[1], c[2], 0.5);
    shard_mat3_mul_vec(R, (double[3]){0, 1, 0}, n);
    to_world(&b, (double[3]){0, 0.9, 0.5}, p);
    ensure_one(&a, &b, 0, 0.2, n, p, &f[0]);
    /* top cap: 0.4 above, radius 0.5 */
    to_world(&b, (double[3]){0.3, 0.2, 2.4}, c);
    a = sphere(c[0], c[1], c[2], 0.5);
    shard_mat3_mul_vec(R, (double[3]){0, 0, 1}, n);
    to_world(&b, (double[3]){0.3, 0.2, 1.95}, p);
    ensure_one(&a, &b, 0, 0.1, n, p, &f[1]);
    /* bottom rim: radial direction (0.6, 0.8), 0.3 out and 0.4 below the rim, radius 0.6 */
    to_world(&b, (double[3]){0.6 * 1.3, 0.8 * 1.3, -2.4}, c);
    a = sphere(c[0], c[1], c[2], 0.6);
    shard_mat3_mul_vec(R, (double[3]){0.6 * 0.6, 0.8 * 0.6, -0.8}, n);
    double rimp[3] = {0.6, 0.8, -2}, nl[3] = {0.36, 0.48, -0.8};
    double pl[3] = {rimp[0] - 0.05 * nl[0], rimp[1] - 0.05 * nl[1], rimp[2] - 0.05 * nl[2]};
    to_world(&b, pl, p);
    ensure_one(&a, &b, 0, 0.1, n, p, &f[2]);
    /* inside, near the top cap (gap 0.1 < side gap 0.8) */
    to_world(&b, (double[3]){0.2, 0, 1.9}, c);
    a = sphere(c[0], c[1], c[2], 0.3);
    shard_mat3_mul_vec(R, (double[3]){0, 0, 1}, n);
    to_world(&b, (double[3]){0.2, 0, (2 + 1.6) / 2}, p);
    ensure_one(&a, &b, 0, 0.4, n, p, &f[3]);
    /* inside, near the side (gap 0.05) */
    to_world(&b, (double[3]){-0.95, 0, -0.5}, c);
    a = sphere(c[0], c[1], c[2], 0.3);
    shard_mat3_mul_vec(R, (double[3]){-1, 0, 0}, n);
    to_world(&b, (double[3]){(-1 - 0.65) / 2, 0, -0.5}, p);
    ensure_one(&a, &b, 0, 0.35, n, p, &f[4]);
    /* exactly on the axis (no radial direction; an axis-aligned cylinder so that rho is 0 to the bit): out
     * through the side along local x, no NaN */
    shard_collide_shape b0 = cylinder(pos, I3, 1, 2);
    a = sphere(pos[0], pos[1], pos[2] + 0.5, 0.3);
    ensure_one(&a, &b0, 0, 1.3, (double[3]){1, 0, 0}, (double[3]){pos[0] + 0.35, pos[1], pos[2] + 0.5}, &f[5]);
    SHARD_ENSURE(f[0] != f[1] && f[1] != f[2] && f[0] != f[2] && f[3] == f[1] && f[4] == f[0]);
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS];
    to_world(&b, (double[3]){0, 1.3, 0.5}, c);
    a = sphere(c[0], c[1], c[2], 0.2);
    SHARD_ENSURE(shard_collide(&a, &b, 0.05, out) == 0);
}

static void test_box_plane(void)
{
    shard_collide_shape pl = plane((double[3]){0, 0, 0}, (double[3]){0, 0, 1});
    shard_collide_shape a = box((double[3]){0.2, 0.3, 0.49}, I3, 0.5, 0.5, 0.5);
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS], sw[SHARD_COLLIDE_MAX_POINTS];
    int n = shard_collide(&a, &pl, 0.001, out);
    SHARD_ENSURE(n == 4);
    for (int m = 0; m < n; m++) {
        SHARD_ENSURE_NEAR(out[m].depth, 0.01, 1e-12);
        ENSURE_VEC(out[m].n, (double[3]){0, 0, 1}, 0);
        SHARD_ENSURE_NEAR(out[m].p[2], -0.005, 1e-12);
        SHARD_ENSURE_NEAR(fabs(out[m].p[0] - 0.2), 0.5, 1e-12);
        SHARD_ENSURE_NEAR(fabs(out[m].p[1] - 0.3), 0.5, 1e-12);
        SHARD_ENSURE(out[m].feature == (uint32_t)m); /* the bottom corners 0..3, by index */
    }
    /* swapped: the same points, negated normals */
    SHARD_ENSURE(shard_collide(&pl, &a, 0.001, sw) == 4);
    for (int m = 0; m < 4; m++) {
        ENSURE_VEC(sw[m].p, out[m].p, 0);
        ENSURE_VEC(sw[m].n, (double[3]){0, 0, -1}, 0);
        SHARD_ENSURE(sw[m].feature == out[m].feature);
    }
    /* tilted: the lowest vertex only */
    double R[9];
    rot(1, 1, 0.3, 0.5, R);
    a = box((double[3]){1, 2, 0}, R, 0.5, 0.3, 0.2);
    double low = 0;
    int vk = 0;
    for (int k = 0; k < 8; k++) {
        double l[3] = {(k & 1) ? 0.5 : -0.5, (k & 2) ? 0.3 : -0.3, (k & 4) ? 0.2 : -0.2}, w[3];
        shard_mat3_mul_vec(R, l, w);
        if (w[2] < low)
            low = w[2], vk = k;
    }
    a.pos[2] = -low - 0.01;
    n = shard_collide(&a, &pl, 0, out);
    SHARD_ENSURE(n == 1);
    SHARD_ENSURE_NEAR(out[0].depth, 0.01, 1e-12);
    SHARD_ENSURE(out[0].feature == (uint32_t)vk);
    double v[3], l[3] = {(vk & 1) ? 0.5 : -0.5, (vk & 2) ? 0.3 : -0.3, (vk & 4) ? 0.2 : -0.2};
    to_world(&a, l, v);
    ENSURE_VEC(out[0].p, (double[3]){v[0], v[1], -0.005}, 1e-12);
    ensure_symmetric(&a, &pl, 0, 0);
    /* a big margin takes the 4 deepest of the 8 */
    SHARD_ENSURE(shard_collide(&a, &pl, 10, out) == 4);
}

static void test_cylinder_plane(void)
{
    shard_collide_shape pl = plane((double[3]){0, 0, 0}, (double[3]){0, 0, 1});
    shard_collide_shape a = cylinder((double[3]){1, -1, 0.98}, I3, 0.5, 1);
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS];
    int n = shard_collide(&a, &pl, 0.01, out);
    SHARD_ENSURE(n == 4);
    double want[4][2] = {{1.5, -1}, {1, -0.5}, {0.5, -1}, {1, -1.5}};
    for (int m = 0; m < n; m++) {
        SHARD_ENSURE_NEAR(out[m].depth, 0.02, 1e-12);
        ENSURE_VEC(out[m].n, (double[3]){0, 0, 1}, 0);
        ENSURE_VEC(out[m].p, (double[3]){want[m][0], want[m][1], -0.01}, 1e-12);
        SHARD_ENSURE(out[m].feature == 4u + (uint32_t)m); /* bottom cap (1), k = 0..3 */
    }
    ensure_symmetric(&a, &pl, 0.01, 0);
    /* tilted by 0.005 rad (< SHARD_COLLIDE_CYL_FLAT): the same 4 ids, depths r sin(t) apart */
    rot(0, 1, 0, 0.005, a.R);
    uint32_t f0[4];
    for (int m = 0; m < 4; m++)
        f0[m] = out[m].feature;
    n = shard_collide(&a, &pl, 0.01, out);
    SHARD_ENSURE(n == 4);
    for (int m = 0; m < n && n == 4; m++)
        SHARD_ENSURE(out[m].feature == f0[m]);
    if (n == 4)
        SHARD_ENSURE_NEAR(out[0].depth - out[2].depth, 2 * 0.5 * sin(0.005), 1e-12); /* +x went down */
    /* lying along y: one point per cap rim on the lowest line */
    rot(1, 0, 0, M_PI / 2, a.R);
    a.pos[0] = 0, a.pos[1] = 0, a.pos[2] = 0.48;
    n = shard_collide(&a, &pl, 0, out);
    SHARD_ENSURE(n == 2);
    for (int m = 0; m < n; m++) {
        SHARD_ENSURE_NEAR(out[m].depth, 0.02, 1e-12);
        ENSURE_VEC(out[m].n, (double[3]){0, 0, 1}, 1e-15);
        SHARD_ENSURE_NEAR(out[m].p[0], 0, 1e-12);
        SHARD_ENSURE_NEAR(fabs(out[m].p[1]), 1, 1e-12);
        SHARD_ENSURE_NEAR(out[m].p[2], -0.01, 1e-12);
    }
    if (n == 2)
        SHARD_ENSURE(out[0].feature != out[1].feature && out[0].p[1] * out[1].p[1] < 0);
    ensure_symmetric(&a, &pl, 0, 0);
    /* tilted 30 deg about x, lowest rim point of the bottom cap only */
    rot(1, 0, 0, M_PI / 6, a.R);
    double low = -1 * cos(M_PI / 6) - 0.5 * sin(M_PI / 6); /* z of the lowest rim point below the centre */
    a.pos[2] = -low - 0.03;
    n = shard_collide(&a, &pl, 0, out);
    SHARD_ENSURE(n == 1);
    SHARD_ENSURE_NEAR(out[0].depth, 0.03, 1e-12);
    SHARD_ENSURE(out[0].feature == 9);
}

static int count_box_box(const shard_collide_shape *a, const shard_collide_shape *b, double margin,
                         shard_collide_point *out)
{
    int n = shard_collide(a, b, margin, out);
    for (int m = 0; m < n; m++) {
        for (int k = 0; k < 3; k++)
            SHARD_ENSURE(isfinite(out[m].p[k]) && isfinite(out[m].n[k]));
        SHARD_ENSURE(isfinite(out[m].depth) && out[m].feature < 65536);
    }
    return n;
}

static void test_box_box_face(void)
{
    shard_collide_shape big = box((double[3]){0, 0, 0}, I3, 2, 2, 0.5);
    shard_collide_shape cube = box((double[3]){0.1, 0.2, 0.99}, I3, 0.5, 0.5, 0.5);
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS], out2[SHARD_COLLIDE_MAX_POINTS];
    int n = count_box_box(&cube, &big, 0.005, out);
    SHARD_ENSURE(n == 4);
    for (int m = 0; m < n; m++) {
        SHARD_ENSURE_NEAR(out[m].depth, 0.01, 1e-12);
        ENSURE_VEC(out[m].n, (double[3]){0, 0, 1}, 0);
        SHARD_ENSURE_NEAR(fabs(out[m].p[0] - 0.1), 0.5, 1e-12);
        SHARD_ENSURE_NEAR(fabs(out[m].p[1] - 0.2), 0.5, 1e-12);
        SHARD_ENSURE_NEAR(out[m].p[2], 0.495, 1e-12);
        for (int j = 0; j < m; j++)
            SHARD_ENSURE(out[j].feature != out[m].feature);
    }
    ensure_symmetric(&cube, &big, 0.005, 0);
    /* shifted a little (and turned 0.01 rad about z): the same features for the same corners */
    cube.pos[0] += 0.003, cube.pos[1] -= 0.002, cube.pos[2] += 0.0005;
    rot(0, 0, 1, 0.01, cube.R);
    int n2 = count_box_box(&cube, &big, 0.005, out2);
    SHARD_ENSURE(n2 == 4);
    for (int m = 0; m < n && n2 == n; m++) {
        SHARD_ENSURE(out2[m].feature == out[m].feature);
        SHARD_ENSURE_NEAR(out2[m].depth, 0.0095, 1e-12);
        SHARD_ENSURE(fabs(out2[m].p[0] - out[m].p[0]) < 0.01 && fabs(out2[m].p[1] - out[m].p[1]) < 0.01);
    }
    /* swapped: still the same corners with the same ids, the normal down */
    n2 = count_box_box(&big, &cube, 0.005, out2);
    SHARD_ENSURE(n2 == 4);
    for (int m = 0; m < n2; m++)
        SHARD_ENSURE(out2[m].n[2] == -1 && (out2[m].feature & 0x1fff) == (out[m].feature & 0x1fff));

    /* a cube turned 45 deg about z on an equal cube: the octagon of the overlap, reduced to at most 4 points */
    shard_collide_shape lower = box((double[3]){0, 0, 0}, I3, 0.5, 0.5, 0.5);
    double R45[9];
    rot(0, 0, 1, M_PI / 4, R45);
    shard_collide_shape upper = box((double[3]){0, 0, 0.99}, R45, 0.5, 0.5, 0.5);
    n = count_box_box(&upper, &lower, 0, out);
    SHARD_ENSURE(n >= 3 && n <= 4);
    double minx = 0, maxx = 0, miny = 0, maxy = 0;
    for (int m = 0; m < n; m++) {
        SHARD_ENSURE_NEAR(out[m].depth, 0.01, 1e-12);
        ENSURE_VEC(out[m].n, (double[3]){0, 0, 1}, 1e-15);
        SHARD_ENSURE_NEAR(out[m].p[2], 0.495, 1e-12);
        /* on the octagon's boundary: inside the lower square and the turned one, on one of their edges */
        double x = out[m].p[0], y = out[m].p[1];
        SHARD_ENSURE(fabs(x) <= 0.5 + 1e-12 && fabs(y) <= 0.5 + 1e-12);
        SHARD_ENSURE(fabs(x) + fabs(y) <= 0.5 * sqrt(2) + 1e-12);
        SHARD_ENSURE(fabs(fabs(x) - 0.5) < 1e-12 || fabs(fabs(y) - 0.5) < 1e-12);
        minx = fmin(minx, x), maxx = fmax(maxx, x), miny = fmin(miny, y), maxy = fmax(maxy, y);
    }
    SHARD_ENSURE(maxx - minx > 0.9 && maxy - miny > 0.5); /* spread over the octagon, not bunched */
    ensure_symmetric(&upper, &lower, 0, 0);

    /* gaps: beyond the margin none, within it the 4 corners of the facing faces with negative depth */
    shard_collide_shape left = box((double[3]){0, 0, 0}, I3, 0.5, 0.5, 0.5);
    shard_collide_shape right = box((double[3]){1.2, 0.3, 0.1}, I3, 0.5, 0.5, 0.5);
    SHARD_ENSURE(count_box_box(&right, &left, 0.1, out) == 0);
    right.pos[0] = 1.05;
    n = count_box_box(&right, &left, 0.1, out);
    SHARD_ENSURE(n == 4);
    for (int m = 0; m < n; m++) {
        SHARD_ENSURE_NEAR(out[m].depth, -0.05, 1e-12);
        ENSURE_VEC(out[m].n, (double[3]){1, 0, 0}, 0);
        SHARD_ENSURE_NEAR(out[m].p[0], 0.525, 1e-12);
    }
    ensure_symmetric(&right, &left, 0.1, 0);
    SHARD_ENSURE(count_box_box(&right, &left, 0.04, out) == 0);

    /* boxes exactly aligned edge on edge, touching (depth 0); concentric boxes: finite, no NaN */
    shard_collide_shape top = box((double[3]){0, 0, 1}, I3, 0.5, 0.5, 0.5);
    n = count_box_box(&top, &left, 0, out);
    SHARD_ENSURE(n == 4);
    for (int m = 0; m < n; m++) {
        SHARD_ENSURE_NEAR(out[m].depth, 0, 1e-15);
        SHARD_ENSURE_NEAR(fabs(out[m].p[0]), 0.5, 1e-15);
        SHARD_ENSURE_NEAR(fabs(out[m].p[1]), 0.5, 1e-15);
        SHARD_ENSURE((out[m].feature & 63) < 4); /* incident vertices 0-3, no clipped crossings */
    }
    ensure_symmetric(&top, &left, 0, 0);
    shard_collide_shape same = box((double[3]){0, 0, 0}, I3, 0.5, 0.5, 0.5);
    n = count_box_box(&same, &left, 0, out);
    SHARD_ENSURE(n >= 1 && n <= 4);
    for (int m = 0; m < n; m++)
        SHARD_ENSURE_NEAR(out[m].depth, 1, 1e-15);
}

static void test_box_box_edge(void)
{
    /* a bar along x turned 45 deg about x (an edge down), a bar along y turned 45 deg about y (an edge up), the
     * edges crossing at right angles above the origin: overlap 0.02 */
    double Ra[9], Rb[9], e = 0.2 * sqrt(2); /* centre to edge of a 0.4 x 0.4 section turned 45 deg */
    rot(1, 0, 0, M_PI / 4, Ra);
    rot(0, 1, 0, M_PI / 4, Rb);
    shard_collide_shape a = box((double[3]){0.1, -0.2, 2 * e - 0.02}, Ra, 1, 0.2, 0.2);
    shard_collide_shape b = box((double[3]){0, 0, 0}, Rb, 0.2, 1, 0.2);
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS];
    int n = count_box_box(&a, &b, 0, out);
    SHARD_ENSURE(n == 1);
    SHARD_ENSURE_NEAR(out[0].depth, 0.02, 1e-12);
    ENSURE_VEC(out[0].n, (double[3]){0, 0, 1}, 1e-12);
    ENSURE_VEC(out[0].p, (double[3]){0, -0.2, e - 0.01}, 1e-12);
    SHARD_ENSURE(out[0].feature >> 14 == 1);
    uint32_t f = out[0].feature;
    ensure_symmetric(&a, &b, 0, 0);
    /* moved a little along both edges: the same feature */
    a.pos[0] += 0.05, a.pos[1] += 0.03;
    n = count_box_box(&a, &b, 0, out);
    SHARD_ENSURE(n == 1 && out[0].feature == f);
    /* apart by 0.03: none with margin 0.02, one at depth -0.03 with margin 0.05 */
    a.pos[2] = 2 * e + 0.03;
    SHARD_ENSURE(count_box_box(&a, &b, 0.02, out) == 0);
    n = count_box_box(&a, &b, 0.05, out);
    SHARD_ENSURE(n == 1);
    SHARD_ENSURE_NEAR(out[0].depth, -0.03, 1e-12);
    SHARD_ENSURE_NEAR(out[0].p[2], e + 0.015, 1e-12);
}

static void random_rotation(uint64_t *st, double R[9])
{
    double q[4];
    for (int k = 0; k < 4; k++)
        q[k] = shard_test_rnd(st);
    shard_quat_normalise(q);
    shard_quat_to_matrix(q, R);
}

static shard_collide_shape random_shape(uint64_t *st, shard_collide_kind kind)
{
    double pos[3], R[9];
    for (int k = 0; k < 3; k++)
        pos[k] = 0.8 * shard_test_rnd(st);
    random_rotation(st, R);
    switch (kind) {
    case SHARD_COLLIDE_SPHERE:
        return sphere(pos[0], pos[1], pos[2], 0.3 + 0.3 * fabs(shard_test_rnd(st)));
    case SHARD_COLLIDE_BOX:
        return box(pos, R, 0.1 + 0.5 * fabs(shard_test_rnd(st)), 0.1 + 0.5 * fabs(shard_test_rnd(st)),
                   0.1 + 0.5 * fabs(shard_test_rnd(st)));
    case SHARD_COLLIDE_CYLINDER:
        return cylinder(pos, R, 0.1 + 0.5 * fabs(shard_test_rnd(st)), 0.1 + 0.5 * fabs(shard_test_rnd(st)));
    default: {
        double n[3] = {shard_test_rnd(st), shard_test_rnd(st), shard_test_rnd(st)};
        return plane(pos, n);
    }
    }
}

/* Signed distance from x to the surface of s (> 0 outside). */
static double sdf(const shard_collide_shape *s, const double x[3])
{
    double r[3] = {x[0] - s->pos[0], x[1] - s->pos[1], x[2] - s->pos[2]}, q[3];
    shard_mat3_tmul_vec(s->R, r, q);
    switch (s->kind) {
    case SHARD_COLLIDE_SPHERE:
        return sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) - s->radius;
    case SHARD_COLLIDE_BOX: {
        double o[3], in = -INFINITY;
        for (int k = 0; k < 3; k++) {
            double e = fabs(q[k]) - s->half[k];
            o[k] = fmax(e, 0), in = fmax(in, e);
        }
        return in > 0 ? sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]) : in;
    }
    case SHARD_COLLIDE_CYLINDER: {
        double er = sqrt(q[0] * q[0] + q[1] * q[1]) - s->radius, ez = fabs(q[2]) - s->half_height;
        return er > 0 && ez > 0 ? sqrt(er * er + ez * ez) : fmax(er, ez);
    }
    default: {
        double len = sqrt(s->normal[0] * s->normal[0] + s->normal[1] * s->normal[1] + s->normal[2] * s->normal[2]);
        return (r[0] * s->normal[0] + r[1] * s->normal[1] + r[2] * s->normal[2]) / len;
    }
    }
}

/* Random poses of every pair: finite, unit normals, at most 4 points for box-box, the margin kept, the two orders
 * agreeing, and p -+ depth/2 n on the surfaces of a and b (edge-edge points excepted: their depth is the
 * separating axis's, the closest points of the edges need not be depth apart along it). */
static void test_random(void)
{
    uint64_t st = 0x9e3779b97f4a7c15ull;
    static const shard_collide_kind pairs[7][2] = {
        {SHARD_COLLIDE_SPHERE, SHARD_COLLIDE_SPHERE}, {SHARD_COLLIDE_SPHERE, SHARD_COLLIDE_BOX},
        {SHARD_COLLIDE_SPHERE, SHARD_COLLIDE_CYLINDER}, {SHARD_COLLIDE_SPHERE, SHARD_COLLIDE_PLANE},
        {SHARD_COLLIDE_BOX, SHARD_COLLIDE_BOX}, {SHARD_COLLIDE_BOX, SHARD_COLLIDE_PLANE},
        {SHARD_COLLIDE_CYLINDER, SHARD_COLLIDE_PLANE}};
    int contacts = 0, bad = 0;
    for (int trial = 0; trial < 2000; trial++) {
        const shard_collide_kind *kp = pairs[trial % 7];
        shard_collide_shape a = random_shape(&st, kp[0]), b = random_shape(&st, kp[1]);
        double margin = trial % 3 == 0 ? 0 : 0.1 * fabs(shard_test_rnd(&st));
        shard_collide_point out[SHARD_COLLIDE_MAX_POINTS];
        int n = shard_collide(&a, &b, margin, out);
        contacts += n > 0;
        if (kp[0] == SHARD_COLLIDE_BOX && kp[1] == SHARD_COLLIDE_BOX && n > 4)
            bad++;
        for (int m = 0; m < n; m++) {
            double len = sqrt(out[m].n[0] * out[m].n[0] + out[m].n[1] * out[m].n[1] + out[m].n[2] * out[m].n[2]);
            if (!(fabs(len - 1) < 1e-12) || !(out[m].depth >= -margin - 1e-12) || !(out[m].feature < 65536) ||
                !isfinite(out[m].p[0] + out[m].p[1] + out[m].p[2] + out[m].depth))
                bad++;
            if (out[m].feature >> 14)
                continue;
            double pa[3], pb[3];
            for (int k = 0; k < 3; k++)
                pa[k] = out[m].p[k] - 0.5 * out[m].depth * out[m].n[k],
                pb[k] = out[m].p[k] + 0.5 * out[m].depth * out[m].n[k];
            if (!(fabs(sdf(&a, pa)) < 1e-9 && fabs(sdf(&b, pb)) < 1e-9))
                bad++, fprintf(stderr, "trial %d (%d %d) point %d: off the surfaces by %g, %g\n", trial, kp[0], kp[1],
                               m, sdf(&a, pa), sdf(&b, pb));
        }
        ensure_symmetric(&a, &b, margin, 1e-12);
    }
    SHARD_ENSURE(bad == 0);
    SHARD_ENSURE(contacts > 500); /* the poses overlap often enough to test something */
}

static void test_unsupported(void)
{
    double pos[3] = {0, 0, 0};
    shard_collide_shape bx = box(pos, I3, 1, 1, 1), cy = cylinder(pos, I3, 1, 1);
    shard_collide_shape pl = plane(pos, (double[3]){0, 0, 1}), pl2 = plane(pos, (double[3]){0, 1, 0});
    shard_collide_point out[SHARD_COLLIDE_MAX_POINTS];
    SHARD_ENSURE(shard_collide(&bx, &cy, 1, out) == 0);
    SHARD_ENSURE(shard_collide(&cy, &bx, 1, out) == 0);
    SHARD_ENSURE(shard_collide(&cy, &cy, 1, out) == 0);
    SHARD_ENSURE(shard_collide(&pl, &pl2, 1, out) == 0);
    bx.half[0] = NAN;
    SHARD_ENSURE(shard_collide(&bx, &pl, 1, out) == 0);
}

int main(void)
{
    test_sphere_sphere();
    test_sphere_plane();
    test_sphere_box();
    test_sphere_cylinder();
    test_box_plane();
    test_cylinder_plane();
    test_box_box_face();
    test_box_box_edge();
    test_random();
    test_unsupported();
    return SHARD_TEST_RESULT();
}
