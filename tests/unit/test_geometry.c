/* Geometry (geometry.h): inside tests and bounding boxes of the analytic shapes, and the signed distance and
 * outward normal of the obstacles, against closed forms.  Boundaries are probed one ulp either side
 * (nextafter), so the half-open conventions are checked exactly. */
#include "shard/geometry.h"
#include "test.h"

#include <stdint.h>
#include <string.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double rnd(void) { return shard_test_rnd(&rng_state); }

static int contains3(const shard_shape *s, double x, double y, double z)
{
    double p[3] = {x, y, z};
    return shard_shape_contains(s, p);
}

static void test_box(void)
{
    shard_shape s = {.kind = SHARD_SHAPE_BOX, .min = {-1, 0, 2}, .max = {1, 3, 5}};
    SHARD_ENSURE(contains3(&s, 0, 1, 3));
    int on_min = 0, on_max = 0, below_min = 0, below_max = 0;
    for (int ax = 0; ax < 3; ax++) {
        double p[3] = {0, 1, 3};
        p[ax] = s.min[ax];
        on_min += shard_shape_contains(&s, p);            /* min face belongs to the box */
        p[ax] = nextafter(s.min[ax], -INFINITY);
        below_min += shard_shape_contains(&s, p);         /* one ulp outside: not */
        p[ax] = s.max[ax];
        on_max += shard_shape_contains(&s, p);            /* max face does not */
        p[ax] = nextafter(s.max[ax], -INFINITY);
        below_max += shard_shape_contains(&s, p);         /* one ulp inside: does */
    }
    SHARD_ENSURE(on_min == 3 && below_min == 0 && on_max == 0 && below_max == 3);
    SHARD_ENSURE(contains3(&s, -1, 0, 2));                /* the min corner */
    SHARD_ENSURE(!contains3(&s, 1, 3, 5));                /* the max corner */
    SHARD_ENSURE(!contains3(&s, 0, 1, 6) && !contains3(&s, 0, -0.5, 3) && !contains3(&s, -2, 1, 3));
    printf("box: min faces inside %d/3, max faces inside %d/3, one ulp below min %d/3, below max %d/3\n", on_min,
           on_max, below_min, below_max);

    /* two boxes sharing the face x = 1: every lattice point of the union belongs to exactly one */
    shard_shape t = {.kind = SHARD_SHAPE_BOX, .min = {1, 0, 2}, .max = {2, 3, 5}};
    int both = 0, one = 0;
    for (int i = -4; i <= 8; i++)
        for (int j = 0; j < 12; j++) {
            double p[3] = {0.25 * i, 0.25 * j, 3.0};
            int a = shard_shape_contains(&s, p), b = shard_shape_contains(&t, p);
            both += a && b;
            one += a != b;
        }
    SHARD_ENSURE(both == 0 && one == 12 * 12);
    printf("two boxes sharing a face: %d lattice points in one, %d in both\n", one, both);

    double lo[3], hi[3];
    shard_shape_bounds(&s, lo, hi);
    SHARD_ENSURE(memcmp(lo, s.min, sizeof lo) == 0 && memcmp(hi, s.max, sizeof hi) == 0);
}

static void test_sphere(void)
{
    shard_shape s = {.kind = SHARD_SHAPE_SPHERE, .center = {1, 2, 3}, .radius = 0.5};
    SHARD_ENSURE(contains3(&s, 1, 2, 3));
    /* on the surface along each axis (r^2 = 0.25 exactly): outside; one ulp in: inside */
    int on = 0, in = 0;
    for (int ax = 0; ax < 3; ax++)
        for (int sg = -1; sg <= 1; sg += 2) {
            double p[3] = {1, 2, 3};
            p[ax] = s.center[ax] + sg * 0.5;
            on += shard_shape_contains(&s, p);
            p[ax] = nextafter(p[ax], s.center[ax]);
            in += shard_shape_contains(&s, p);
        }
    SHARD_ENSURE(on == 0 && in == 6);
    SHARD_ENSURE(contains3(&s, 1.28, 2.28, 3.28) && !contains3(&s, 1.29, 2.29, 3.29)); /* 0.485, 0.502 */
    printf("sphere: %d/6 axis surface points inside, %d/6 one ulp in\n", on, in);
    double lo[3], hi[3];
    shard_shape_bounds(&s, lo, hi);
    SHARD_ENSURE(lo[0] == 0.5 && lo[1] == 1.5 && lo[2] == 2.5 && hi[0] == 1.5 && hi[1] == 2.5 && hi[2] == 3.5);
}

/* An independent bounding box of a cylinder: the extremes of densely sampled points of its two cap circles. */
static void cylinder_sampled_bounds(const shard_shape *s, double lo[3], double hi[3])
{
    double a[3], L = 0.0;
    for (int k = 0; k < 3; k++)
        a[k] = s->p1[k] - s->p0[k], L += a[k] * a[k];
    L = sqrt(L);
    for (int k = 0; k < 3; k++)
        a[k] /= L;
    /* two unit vectors orthogonal to the axis */
    double e[3] = {1, 0, 0};
    if (fabs(a[0]) > 0.9)
        e[0] = 0, e[1] = 1;
    double d = e[0] * a[0] + e[1] * a[1] + e[2] * a[2], u[3], w[3], nu = 0.0;
    for (int k = 0; k < 3; k++)
        u[k] = e[k] - d * a[k], nu += u[k] * u[k];
    for (int k = 0; k < 3; k++)
        u[k] /= sqrt(nu);
    w[0] = a[1] * u[2] - a[2] * u[1], w[1] = a[2] * u[0] - a[0] * u[2], w[2] = a[0] * u[1] - a[1] * u[0];
    for (int k = 0; k < 3; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    enum { NS = 40000 };
    for (int m = 0; m < NS; m++) {
        double th = 2.0 * M_PI * m / NS, c = cos(th), sn = sin(th);
        for (int cap = 0; cap < 2; cap++)
            for (int k = 0; k < 3; k++) {
                double x = (cap ? s->p1[k] : s->p0[k]) + s->radius * (c * u[k] + sn * w[k]);
                lo[k] = fmin(lo[k], x), hi[k] = fmax(hi[k], x);
            }
    }
}

static void test_cylinder(void)
{
    shard_shape s = {.kind = SHARD_SHAPE_CYLINDER, .p0 = {0, 0, 1}, .p1 = {0, 0, 3}, .radius = 0.5};
    /* axis fraction half-open [0, 1): the p0 cap belongs to the cylinder, the p1 cap does not */
    SHARD_ENSURE(contains3(&s, 0, 0, 1));
    SHARD_ENSURE(!contains3(&s, 0, 0, 3));
    SHARD_ENSURE(contains3(&s, 0, 0, nextafter(3.0, 0.0)));
    SHARD_ENSURE(!contains3(&s, 0, 0, nextafter(1.0, 0.0)));
    SHARD_ENSURE(contains3(&s, 0.3, 0.3, 2.0));
    /* radius: r^2 < R^2, strict */
    SHARD_ENSURE(!contains3(&s, 0.5, 0, 2.0) && !contains3(&s, 0, -0.5, 2.0));
    SHARD_ENSURE(contains3(&s, nextafter(0.5, 0.0), 0, 2.0));
    SHARD_ENSURE(!contains3(&s, 0.36, 0.36, 2.0)); /* r = 0.509 */

    /* an oblique cylinder from (1, 1, 1) along (1, 2, 2) (length 3): points at 0.4 and 0.6 off the axis */
    shard_shape o = {.kind = SHARD_SHAPE_CYLINDER, .p0 = {1, 1, 1}, .p1 = {2, 3, 3}, .radius = 0.5};
    const double a[3] = {1.0 / 3, 2.0 / 3, 2.0 / 3}, perp[3] = {2.0 / sqrt(5.0), -1.0 / sqrt(5.0), 0.0};
    int ins = 0, outs = 0;
    for (int m = 0; m < 9; m++) {
        double along = 0.15 + 0.3 * m; /* 0.15 .. 2.55 of 3 */
        double pin[3], pout[3];
        for (int k = 0; k < 3; k++) {
            pin[k] = o.p0[k] + along * a[k] + 0.4 * perp[k];
            pout[k] = o.p0[k] + along * a[k] + 0.6 * perp[k];
        }
        ins += shard_shape_contains(&o, pin);
        outs += shard_shape_contains(&o, pout);
    }
    double before[3] = {1 - 0.01 * a[0], 1 - 0.01 * a[1], 1 - 0.01 * a[2]};
    double after[3] = {2 + 0.01 * a[0], 3 + 0.01 * a[1], 3 + 0.01 * a[2]};
    SHARD_ENSURE(ins == 9 && outs == 0);
    SHARD_ENSURE(!shard_shape_contains(&o, before) && !shard_shape_contains(&o, after));
    SHARD_ENSURE(shard_shape_contains(&o, o.p0) && !shard_shape_contains(&o, o.p1));
    printf("oblique cylinder: %d/9 points at 0.4 R-units inside, %d/9 at 0.6 inside\n", ins, outs);

    /* a degenerate axis contains nothing */
    shard_shape d = {.kind = SHARD_SHAPE_CYLINDER, .p0 = {1, 1, 1}, .p1 = {1, 1, 1}, .radius = 0.5};
    SHARD_ENSURE(!contains3(&d, 1, 1, 1));

    /* bounds: closed form for the axis-aligned one, sampled cap circles for the oblique one */
    double lo[3], hi[3], slo[3], shi[3];
    shard_shape_bounds(&s, lo, hi);
    SHARD_ENSURE(lo[0] == -0.5 && lo[1] == -0.5 && lo[2] == 1.0 && hi[0] == 0.5 && hi[1] == 0.5 && hi[2] == 3.0);
    shard_shape_bounds(&o, lo, hi);
    cylinder_sampled_bounds(&o, slo, shi);
    double err = 0.0;
    for (int k = 0; k < 3; k++)
        err = fmax(err, fmax(fabs(lo[k] - slo[k]), fabs(hi[k] - shi[k])));
    SHARD_ENSURE_NEAR(err, 0.0, 1e-8);
    /* closed form: r sqrt(1 - a_k^2) beyond the end caps */
    SHARD_ENSURE_NEAR(lo[0], 1 - 0.5 * sqrt(1 - 1.0 / 9), 1e-15);
    SHARD_ENSURE_NEAR(hi[2], 3 + 0.5 * sqrt(1 - 4.0 / 9), 1e-15);
    printf("oblique cylinder bounds: lo (%.12g, %.12g, %.12g) hi (%.12g, %.12g, %.12g), max |diff| to the sampled"
           " caps %.3g\n",
           lo[0], lo[1], lo[2], hi[0], hi[1], hi[2], err);
}

/* Every point a shape contains lies in its bounding box (random points in a box 20% larger). */
static void test_bounds_contain_shapes(void)
{
    shard_shape shapes[3] = {
        {.kind = SHARD_SHAPE_BOX, .min = {-1, 0, 2}, .max = {1, 3, 5}},
        {.kind = SHARD_SHAPE_SPHERE, .center = {1, 2, 3}, .radius = 0.5},
        {.kind = SHARD_SHAPE_CYLINDER, .p0 = {1, 1, 1}, .p1 = {2, 3, 3}, .radius = 0.5},
    };
    for (int s = 0; s < 3; s++) {
        double lo[3], hi[3];
        shard_shape_bounds(&shapes[s], lo, hi);
        int in = 0, escaped = 0;
        for (int m = 0; m < 20000; m++) {
            double p[3];
            for (int k = 0; k < 3; k++) {
                double c = 0.5 * (lo[k] + hi[k]), h = 0.6 * (hi[k] - lo[k]);
                p[k] = c + h * rnd();
            }
            if (!shard_shape_contains(&shapes[s], p))
                continue;
            in++;
            for (int k = 0; k < 3; k++)
                escaped += p[k] < lo[k] || p[k] > hi[k];
        }
        SHARD_ENSURE(in > 1000 && escaped == 0);
        printf("shape %d: %d of 20000 random points inside, %d outside its bounds\n", s, in, escaped);
    }
}

static void test_mesh(void)
{
    shard_shape s = {.kind = SHARD_SHAPE_MESH, .scale = 1.0, .translate = {1, 1, 1}};
    strcpy(s.file, "bunny.stl");
    int any = 0;
    for (int m = 0; m < 1000; m++) {
        double p[3] = {2 * rnd(), 2 * rnd(), 2 * rnd()};
        any += shard_shape_contains(&s, p);
    }
    double lo[3] = {9, 9, 9}, hi[3] = {9, 9, 9};
    shard_shape_bounds(&s, lo, hi);
    SHARD_ENSURE(any == 0);
    SHARD_ENSURE(lo[0] == 0 && lo[1] == 0 && lo[2] == 0 && hi[0] == 0 && hi[1] == 0 && hi[2] == 0);
}

/* Signed distance and normal against the expected values. */
static void ensure_distance(const char *what, const shard_obstacle_def *o, double t, const double p[3],
                            double d_expect, const double n_expect[3], double tol)
{
    double n[3] = {NAN, NAN, NAN};
    double d = shard_obstacle_distance(o, t, p, n);
    double nerr = fabs(n[0] - n_expect[0]) + fabs(n[1] - n_expect[1]) + fabs(n[2] - n_expect[2]);
    double unit = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    SHARD_ENSURE_NEAR(d, d_expect, tol);
    SHARD_ENSURE_NEAR(nerr, 0.0, tol);
    SHARD_ENSURE_NEAR(unit, 1.0, 1e-15);
    printf("%-30s d = %.15g (expected %.15g), n = (%.12g, %.12g, %.12g), |n - n_exp|_1 = %.2g\n", what, d, d_expect,
           n[0], n[1], n[2], nerr);
}

static void test_obstacle_plane(void)
{
    shard_obstacle_def o = {.kind = SHARD_OBSTACLE_PLANE, .point = {1, 2, 3}, .normal = {0, 0.6, 0.8},
                            .velocity = {0.5, -1, 2}};
    /* at t = 0.25 the plane passes through (1.125, 1.75, 3.5): (4,5,6) - q = (2.875, 3.25, 2.5) */
    ensure_distance("plane, moving, above:", &o, 0.25, (double[3]){4, 5, 6}, 3.25 * 0.6 + 2.5 * 0.8, o.normal,
                    1e-14);
    ensure_distance("plane, moving, below:", &o, 0.25, (double[3]){1.125, 1.75 - 0.6, 3.5 - 0.8}, -1.0, o.normal,
                    1e-14);
    ensure_distance("plane, at t = 0:", &o, 0.0, (double[3]){4, 5, 6}, 3.0 * 0.6 + 3.0 * 0.8, o.normal, 1e-14);
    /* in-plane motion of the point along the plane changes nothing */
    shard_obstacle_def s = {.kind = SHARD_OBSTACLE_PLANE, .point = {0, 0, 0}, .normal = {0, 0, 1},
                            .velocity = {3, -7, 0}};
    ensure_distance("plane, sliding in its plane:", &s, 10.0, (double[3]){0.1, 0.2, 0.3}, 0.3,
                    (double[3]){0, 0, 1}, 1e-15);
}

static void test_obstacle_sphere(void)
{
    shard_obstacle_def o = {.kind = SHARD_OBSTACLE_SPHERE, .center = {1, 1, 1}, .radius = 2.0,
                            .velocity = {1, 0, 0}};
    /* at t = 2 the centre is (3, 1, 1) */
    const double u[3] = {0.36, 0.48, 0.8};
    ensure_distance("sphere, moving, outside:", &o, 2.0, (double[3]){3 + 5 * u[0], 1 + 5 * u[1], 1 + 5 * u[2]}, 3.0,
                    u, 1e-14);
    ensure_distance("sphere, inside:", &o, 2.0, (double[3]){3, 1, 1.5}, -1.5, (double[3]){0, 0, 1}, 1e-15);
    ensure_distance("sphere, on the surface:", &o, 2.0, (double[3]){3, -1, 1}, 0.0, (double[3]){0, -1, 0}, 1e-15);
    /* at the centre the direction is arbitrary but must be a unit vector; d = -radius */
    double n[3];
    double d = shard_obstacle_distance(&o, 2.0, (double[3]){3, 1, 1}, n);
    SHARD_ENSURE(d == -2.0);
    SHARD_ENSURE_NEAR(sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), 1.0, 1e-15);
    printf("sphere, at the centre: d = %g, n = (%g, %g, %g)\n", d, n[0], n[1], n[2]);
}

static void test_obstacle_box(void)
{
    /* (0,0,0)-(1,2,3) moving up at 1 m/s: at t = 0.5 it spans z in [0.5, 3.5] */
    shard_obstacle_def o = {.kind = SHARD_OBSTACLE_BOX, .min = {0, 0, 0}, .max = {1, 2, 3}, .velocity = {0, 0, 1}};
    const double t = 0.5, lo[3] = {0, 0, 0.5}, hi[3] = {1, 2, 3.5}, c[3] = {0.5, 1.0, 2.0};
    /* outside each face by 0.2, and inside each face by 0.1 (the nearest face decides) */
    for (int face = 0; face < 6; face++) {
        int ax = face / 2, up = face % 2;
        double p[3] = {c[0], c[1], c[2]}, n[3] = {0, 0, 0};
        n[ax] = up ? 1.0 : -1.0;
        char what[64];
        p[ax] = up ? hi[ax] + 0.2 : lo[ax] - 0.2;
        snprintf(what, sizeof what, "box, 0.2 outside %c%c:", up ? '+' : '-', "xyz"[ax]);
        ensure_distance(what, &o, t, p, 0.2, n, 1e-14);
        p[ax] = up ? hi[ax] - 0.1 : lo[ax] + 0.1;
        snprintf(what, sizeof what, "box, 0.1 inside %c%c:", up ? '+' : '-', "xyz"[ax]);
        ensure_distance(what, &o, t, p, -0.1, n, 1e-14);
        p[ax] = up ? hi[ax] : lo[ax];
        snprintf(what, sizeof what, "box, on face %c%c:", up ? '+' : '-', "xyz"[ax]);
        ensure_distance(what, &o, t, p, 0.0, n, 0.0);
    }
    /* near an edge (x = 1, y = 2) and a corner (0, 0, 0.5), outside */
    ensure_distance("box, near an edge:", &o, t, (double[3]){1.3, 2.4, 2.0}, 0.5, (double[3]){0.6, 0.8, 0}, 1e-14);
    ensure_distance("box, near a corner:", &o, t, (double[3]){-0.2, -0.2, 0.4}, 0.3,
                    (double[3]){-2.0 / 3, -2.0 / 3, -1.0 / 3}, 1e-14);
    /* the centre: nearest faces are x = 0 and x = 1 at 0.5 (a tie; either is a valid answer) */
    double n[3];
    double d = shard_obstacle_distance(&o, t, c, n);
    SHARD_ENSURE(d == -0.5 && fabs(n[0]) == 1.0 && n[1] == 0.0 && n[2] == 0.0);
    printf("box, at the centre: d = %g, n = (%g, %g, %g)\n", d, n[0], n[1], n[2]);
    /* the same points at t = 0 (box z in [0, 3]): the point 0.2 above the moving box is 0.7 above the static one */
    ensure_distance("box, static time:", &o, 0.0, (double[3]){0.5, 1.0, 3.7}, 0.7, (double[3]){0, 0, 1}, 1e-14);

    /* random points: |d| against an independent nearest-point computation over the box's 6 faces */
    double worst = 0.0;
    for (int m = 0; m < 5000; m++) {
        double p[3] = {0.5 + 1.5 * rnd(), 1.0 + 2.5 * rnd(), 2.0 + 3.0 * rnd()}, nn[3];
        double dist = shard_obstacle_distance(&o, t, p, nn);
        int inside = 1;
        for (int k = 0; k < 3; k++)
            inside &= p[k] >= lo[k] && p[k] <= hi[k];
        double ref;
        if (inside) {
            ref = INFINITY;
            for (int k = 0; k < 3; k++)
                ref = fmin(ref, fmin(p[k] - lo[k], hi[k] - p[k]));
            ref = -ref;
        } else {
            double s = 0.0;
            for (int k = 0; k < 3; k++) {
                double g = fmax(fmax(lo[k] - p[k], p[k] - hi[k]), 0.0);
                s += g * g;
            }
            ref = sqrt(s);
        }
        worst = fmax(worst, fabs(dist - ref));
        /* p - d n lies on the box surface */
        double q[3] = {p[0] - dist * nn[0], p[1] - dist * nn[1], p[2] - dist * nn[2]};
        double out = 0.0;
        for (int k = 0; k < 3; k++)
            out = fmax(out, fmax(lo[k] - q[k], q[k] - hi[k]));
        worst = fmax(worst, fabs(out));
    }
    SHARD_ENSURE_NEAR(worst, 0.0, 1e-14);
    printf("box, 5000 random points: max |d - d_ref| (and distance of p - d n off the box) = %.3g\n", worst);
}

/* The distance to a shape's own surface (shard_shape_surface) for random points inside box, sphere and
 * cylinder: p + d n lies on the surface, d is the smallest distance to any of its faces, n is a unit vector. */
static void test_shape_surface(void)
{
    shard_shape shapes[3] = {
        {.kind = SHARD_SHAPE_BOX, .min = {-1, 0, 2}, .max = {1, 3, 5}},
        {.kind = SHARD_SHAPE_SPHERE, .center = {1, 2, 3}, .radius = 0.5},
        {.kind = SHARD_SHAPE_CYLINDER, .p0 = {0, 0, 0}, .p1 = {1, 2, 2}, .radius = 0.4},
    };
    for (int s = 0; s < 3; s++) {
        double lo[3], hi[3], worst = 0.0;
        shard_shape_bounds(&shapes[s], lo, hi);
        int tried = 0;
        while (tried < 2000) {
            double p[3], n[3];
            for (int k = 0; k < 3; k++)
                p[k] = lo[k] + (hi[k] - lo[k]) * (0.5 + 0.5 * rnd());
            if (!shard_shape_contains(&shapes[s], p))
                continue;
            tried++;
            double d = shard_shape_surface(&shapes[s], p, n), q[3];
            SHARD_ENSURE(d >= 0.0);
            SHARD_ENSURE_NEAR(sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), 1.0, 1e-14);
            for (int k = 0; k < 3; k++)
                q[k] = p[k] + d * n[k];
            /* q on the surface: just inside one step before, just outside one step after */
            double in[3], out[3];
            for (int k = 0; k < 3; k++)
                in[k] = q[k] - 1e-9 * n[k], out[k] = q[k] + 1e-9 * n[k];
            SHARD_ENSURE(shard_shape_contains(&shapes[s], in) && !shard_shape_contains(&shapes[s], out));
            /* nothing outside the shape is nearer: points at distance 0.999 d are all inside */
            for (int m = 0; m < 8; m++) {
                double u[3] = {rnd(), rnd(), rnd()}, l = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), r[3];
                for (int k = 0; k < 3; k++)
                    r[k] = p[k] + 0.999 * d * u[k] / l;
                SHARD_ENSURE(shard_shape_contains(&shapes[s], r));
            }
            worst = fmax(worst, fabs(d));
        }
        printf("shape %d: 2000 inside points, p + d n on the surface, no nearer surface point (largest d %.3g)\n", s,
               worst);
    }
}

int main(void)
{
    test_box();
    test_sphere();
    test_cylinder();
    test_bounds_contain_shapes();
    test_mesh();
    test_obstacle_plane();
    test_obstacle_sphere();
    test_obstacle_box();
    test_shape_surface();
    return SHARD_TEST_RESULT();
}
