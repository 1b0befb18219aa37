/* Validation: cloth collisions (cloth_collide.h; docs/validation.md, "Cloth collisions").  After every step
 * an independent exact counter (tests/support/intersections.c, built as a library: exact orientation
 * predicates, no tolerance) must find no pair of vertex-disjoint triangles that intersect, in:
 *   drape   a 0.6 x 0.6 m cloth dropped onto a sphere: it wraps the sphere and its skirt folds onto itself;
 *   fold    a 0.2 x 0.8 m strip held upright and let go: it crumples onto the ground in folds, layer on layer;
 *   impact  a small patch thrown at 20 m/s onto a thin net (0.2 mm) pinned along two edges: it moves ten
 *           thicknesses a step, so continuous collision detection must stop it; the patch ends above the net;
 *   zones   the impact with the impact zones at once (cloth.collision_passes: 0): the fail-safe alone;
 *   twist   a 0.4 x 0.2 m cloth (no gravity) whose ends are clamped (prescribed with a spin) and turned in
 *           opposite senses about its long axis by half a turn each in 1 s (a whole turn between them) while
 *           they move 0.05 m each towards the middle, and two box jaws close on its middle from 6 to 3 cm
 *           apart: the cloth winds into a rope pressed onto itself and squeezed between the boxes (closed
 *           to 2 cm, a layered band that cannot fit: impact zones held by both jaws cannot move with both);
 *   shirt   the shirt scene of Manén 2010 (jobs/scenes/tshirt_on_body.yaml): a T-shirt-like mesh of two sewn panels
 *           dropped onto a rigid block, for 0.4 s (one resolution: one mesh); it must rest on the block;
 * each at two resolutions.  Without the collision stage the drape and the fold intersect (tens to thousands of
 * pairs) and the patch passes through the net.
 * usage: validation_test_cloth_collide [CASE [K]]: CASE one of the names above, K 0 or 1 the resolution. */
#include "intersections.h"
#include "validation.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Intersecting pairs of the run's cloth's triangles now, by the exact counter: the cloth's own, and with a box
 * [lo, hi]'s twelve triangles (its faces, two each) when lo is not NULL (one rank: gid = index). */
static long intersections_with(shard_sim *sim, const double *lo, const double *hi)
{
    const shard_particles *p = shard_sim_particles(sim);
    int64_t n = shard_sim_total_particles(sim);
    double *x = calloc(3 * (size_t)n + 27, sizeof *x);
    for (size_t i = 0; i < p->n_owned; i++)
        memcpy(x + 3 * p->gid[i], p->x + 3 * i, 3 * sizeof *x);
    int64_t *tri;
    long nt = shard_sim_surface_triangles(sim, &tri);
    tri = realloc(tri, (3 * (size_t)nt + 36) * sizeof *tri);
    for (int c = 0; c < 8 && lo; c++)
        for (int d = 0; d < 3; d++)
            x[3 * (n + c) + d] = (c >> d) & 1 ? hi[d] : lo[d];
    for (int a = 0; a < 3 && lo; a++)
        for (int side = 0; side < 2; side++) {
            int b1 = 1 << ((a + 1) % 3), b2 = 1 << ((a + 2) % 3), f = side ? 1 << a : 0;
            int64_t q[4] = {n + f, n + (f | b1), n + (f | b1 | b2), n + (f | b2)};
            int64_t *t = tri + 3 * nt;
            t[0] = q[0], t[1] = q[1], t[2] = q[2], t[3] = q[0], t[4] = q[2], t[5] = q[3];
            nt += 2;
        }
    long k = intersections_count(x, lo ? n + 8 : n, tri, nt);
    free(x), free(tri);
    return k;
}

/* A box obstacle as the counter sees it: its corners at time t are min, max + velocity t. */
typedef struct moving_box {
    double lo[3], hi[3], vel[3];
} moving_box;

/* Runs to the end, counting intersections after every step (the cloth's own, and its triangles against the
 * faces of the n boxes); returns the largest count seen. */
static long run_checked_boxes(shard_sim *sim, long *steps, const moving_box *box, int nb)
{
    long worst = intersections_with(sim, NULL, NULL), n = shard_sim_total_steps(sim);
    double dt = shard_sim_dt(sim);
    for (long s = 0; s < n; s++) {
        shard_sim_step(sim);
        long self = intersections_with(sim, NULL, NULL), k = self;
        for (int b = 0; b < nb; b++) { /* (the count with a box holds the cloth's own pairs too) */
            double t = (double)(s + 1) * dt, lo[3], hi[3];
            for (int d = 0; d < 3; d++)
                lo[d] = box[b].lo[d] + box[b].vel[d] * t, hi[d] = box[b].hi[d] + box[b].vel[d] * t;
            k += intersections_with(sim, lo, hi) - self;
        }
        if (k > worst) {
            fprintf(stderr, "  step %ld: %ld intersecting pairs (%ld of the cloth's own)\n", s + 1, k, self);
            worst = k;
        }
    }
    *steps = n;
    return worst;
}

static long run_checked(shard_sim *sim, long *steps) { return run_checked_boxes(sim, steps, NULL, 0); }

static double lowest(const shard_sim *sim)
{
    const shard_particles *p = shard_sim_particles(sim);
    double z = INFINITY;
    for (size_t i = 0; i < p->n_owned; i++)
        z = fmin(z, p->x[3 * i + 2]);
    return z;
}

static void report_line(const char *name, int n, long steps, long worst, shard_sim *sim)
{
    shard_diag d = shard_sim_diagnostics(sim);
    printf("%s %d: %ld steps, at most %ld intersecting pairs after a step, lowest vertex %.4g m, kinetic %.4g J\n",
           name, n, steps, worst, lowest(sim), d.kinetic);
}

static const char *cotton = "  cotton: {density: 300, E: 2.0e6, nu: 0.3, damping: 2.0e-4, contact: {friction: 0.3}}\n";

static void drape(shard_comm *comm, int k)
{
    int n = k ? 24 : 20;
    shard_sim *sim = validation_simf(comm, "drape.yaml",
                          "run: {end_time: %g}\n"
                          "materials:\n%s"
                          "bodies:\n"
                          "  - name: sheet\n"
                          "    kind: cloth\n"
                          "    material: cotton\n"
                          "    shape: {grid: {corner: [-0.33, -0.45, 0.16], u: [0.9, 0, 0], v: [0, 0.9, 0], divisions: "
                          "[%d, %d]}}\n"
                          "    thickness: 0.002\n"
                          "    velocity: [0, 0, -1]\n"
                          "obstacles:\n"
                          "  - sphere: {center: [0, 0, 0], radius: 0.15}\n"
                          "    friction: 0.3\n"
                          "  - plane: {point: [0, 0, -0.15], normal: [0, 0, 1]}\n",
                          0.8, cotton, n, n);
    if (!sim)
        return;
    long steps, worst = run_checked(sim, &steps);
    report_line("drape", n, steps, worst, sim);
    SHARD_ENSURE(worst == 0);
    shard_sim_destroy(&sim);
}

static void fold(shard_comm *comm, int k)
{
    int n = k ? 8 : 6;
    shard_sim *sim = validation_simf(comm, "fold.yaml",
                          "run: {end_time: %g}\n"
                          "materials:\n%s"
                          "bodies:\n"
                          "  - name: strip\n"
                          "    kind: cloth\n"
                          "    material: cotton\n"
                          "    shape: {grid: {corner: [-0.1, 0, 0.01], u: [0.2, 0, 0], v: [0, 0.03, 0.8], divisions: "
                          "[%d, %d]}}\n"
                          "    thickness: 0.002\n"
                          "    bending_stiffness: 1.0e-5\n"
                          "    velocity: [0, 0, -2]\n"
                          "obstacles:\n"
                          "  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
                          "    friction: 0.5\n",
                          0.5, cotton, n, 4 * n);
    if (!sim)
        return;
    long steps, worst = run_checked(sim, &steps);
    report_line("fold", n, steps, worst, sim);
    SHARD_ENSURE(worst == 0);
    shard_sim_destroy(&sim);
}

/* The centre height of body b (one rank). */
static double body_z(const shard_sim *sim, int b)
{
    const shard_particles *p = shard_sim_particles(sim);
    double m = 0.0, z = 0.0;
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->body[i] == b)
            m += p->mass[i], z += p->mass[i] * p->x[3 * i + 2];
    return z / m;
}

static double body_top(const shard_sim *sim, int b)
{
    const shard_particles *p = shard_sim_particles(sim);
    double z = -INFINITY;
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->body[i] == b)
            z = fmax(z, p->x[3 * i + 2]);
    return z;
}

static void impact_with(shard_comm *comm, int k, int passes)
{
    int n = k ? 24 : 16, np = k ? 10 : 7;
    shard_sim *sim = validation_simf(comm, "impact.yaml",
                          "run: {end_time: 0.05}\n"
                          "cloth: {collision_passes: %d}\n"
                          "materials:\n"
                          "  silk: {density: 1000, E: 1.0e6, nu: 0.3, damping: 2.0e-4, contact: {friction: 0.3}}\n"
                          "bodies:\n"
                          "  - name: net\n"
                          "    kind: cloth\n"
                          "    material: silk\n"
                          "    shape: {grid: {corner: [-0.2, -0.2, 0], u: [0.4, 0, 0], v: [0, 0.4, 0], divisions: [%d, %d]}}\n"
                          "    thickness: 0.0002\n"
                          "    fixed:\n"
                          "      - {box: {min: [-0.21, -0.21, -0.01], max: [0.21, -0.19, 0.01]}}\n"
                          "      - {box: {min: [-0.21, 0.19, -0.01], max: [0.21, 0.21, 0.01]}}\n"
                          "  - name: patch\n"
                          "    kind: cloth\n"
                          "    material: silk\n"
                          "    shape: {grid: {corner: [-0.08, -0.07, 0.004], u: [0.15, 0.02, 0], v: [-0.02, 0.15, 0], "
                          "divisions: [%d, %d]}}\n"
                          "    thickness: 0.0002\n"
                          "    velocity: [0, 0, -20]\n",
                          passes, n, n, np, np);
    if (!sim)
        return;
    long steps, worst = run_checked(sim, &steps);
    const char *name = passes ? "impact" : "zones";
    report_line(name, n, steps, worst, sim);
    double zn = body_z(sim, 0), zp = body_z(sim, 1);
    printf("%s %d: the patch's centre %.4g m above the net's\n", name, n, zp - zn);
    SHARD_ENSURE(worst == 0);
    SHARD_ENSURE(zp > zn);
    shard_sim_destroy(&sim);
}

static void twist(shard_comm *comm, int k)
{
    int n = k ? 10 : 8;
    shard_sim *sim = validation_simf(
        comm, "twist.yaml",
        "run: {end_time: 1.0, gravity: [0, 0, 0]}\n"
        "materials:\n%s"
        "bodies:\n"
        "  - name: cloth\n"
        "    kind: cloth\n"
        "    material: cotton\n"
        "    shape: {grid: {corner: [0, -0.1, 0], u: [0.4, 0, 0], v: [0, 0.2, 0], divisions: [%d, %d]}}\n"
        "    thickness: 0.002\n"
        "    bending_stiffness: 1.0e-5\n"
        "    prescribed:\n"
        "      - {region: {box: {min: [-0.01, -0.11, -0.01], max: [0.011, 0.11, 0.01]}}, velocity: [0.05, 0, 0],\n"
        "         spin: [3.14159265358979, 0, 0], center: [0, 0, 0]}\n"
        "      - {region: {box: {min: [0.389, -0.11, -0.01], max: [0.41, 0.11, 0.01]}}, velocity: [-0.05, 0, 0],\n"
        "         spin: [-3.14159265358979, 0, 0], center: [0.4, 0, 0]}\n"
        "obstacles:\n"
        "  - {box: {min: [0.15, -0.2, 0.03], max: [0.25, 0.2, 0.08]}, velocity: [0, 0, -0.015], friction: 0.3}\n"
        "  - {box: {min: [0.15, -0.2, -0.08], max: [0.25, 0.2, -0.03]}, velocity: [0, 0, 0.015], friction: 0.3}\n",
        cotton, 2 * n, n);
    if (!sim)
        return;
    const moving_box jaws[2] = {{{0.15, -0.2, 0.03}, {0.25, 0.2, 0.08}, {0, 0, -0.015}},
                                {{0.15, -0.2, -0.08}, {0.25, 0.2, -0.03}, {0, 0, 0.015}}};
    long steps, worst = run_checked_boxes(sim, &steps, jaws, 2);
    report_line("twist", n, steps, worst, sim);
    /* the jaws end 3 cm apart: the rope between them is pressed to that */
    const shard_particles *pp = shard_sim_particles(sim);
    double zlo = INFINITY, zhi = -INFINITY;
    for (size_t i = 0; i < pp->n_owned; i++)
        if (pp->x[3 * i] > 0.16 && pp->x[3 * i] < 0.24 && fabs(pp->x[3 * i + 1]) < 0.19)
            zlo = fmin(zlo, pp->x[3 * i + 2]), zhi = fmax(zhi, pp->x[3 * i + 2]);
    printf("twist %d: between the jaws the cloth spans z = %.4g .. %.4g m (jaws at -0.015 .. 0.015)\n", n, zlo, zhi);
    /* the clamps turned half a turn each, in opposite senses: a held vertex of the first is where it started
     * turned by pi about the x axis and moved 0.05 m along it */
    const shard_particles *p = shard_sim_particles(sim);
    double err = 0.0;
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->X[3 * i] < 0.005) {
            const double *x = p->x + 3 * i, *X = p->X + 3 * i;
            double want[3] = {X[0] + 0.05, -X[1], -X[2]};
            for (int c = 0; c < 3; c++)
                err = fmax(err, fabs(x[c] - want[c]));
        }
    printf("twist %d: the first clamp is within %.3g m of half a turn\n", n, err);
    SHARD_ENSURE(worst == 0);
    SHARD_ENSURE(err < 1e-3);
    SHARD_ENSURE(zlo > -0.015 && zhi < 0.015); /* held between the jaws */
    shard_sim_destroy(&sim);
}

/* The shirt scene of Manén 2010 (jobs/scenes/tshirt_on_body.yaml, its mesh tshirt.obj) for 0.4 s, at its one
 * resolution: the front panel falls onto the back one and both drape over a rigid block. */
static void shirt(shard_comm *comm, int k)
{
    if (k)
        return; /* one mesh */
    shard_sim *sim = validation_simf(
        comm, "../jobs/scenes/shirt.yaml",
        "run: {end_time: 0.4}\n"
        "materials:\n"
        "  cotton: {density: 300, E: 1.0e6, nu: 0.3, damping: 2.0e-4, contact: {friction: 0.4}}\n"
        "  wood: {density: 600, E: 1.0e7, nu: 0.3, contact: {friction: 0.4}}\n"
        "bodies:\n"
        "  - {name: shirt, kind: cloth, material: cotton, spacing: 0.025, thickness: 0.002,\n"
        "     shape: {mesh: {file: tshirt.obj, translate: [0, -0.3, 0.33]}}}\n"
        "  - {name: block, kind: rigid, material: wood, spacing: 0.025,\n"
        "     shape: {box: {min: [-0.15, -0.15, 0], max: [0.15, 0.15, 0.3]}}}\n"
        "obstacles:\n"
        "  - {plane: {point: [0, 0, 0], normal: [0, 0, 1]}, friction: 0.5}\n");
    if (!sim)
        return;
    long steps, worst = run_checked(sim, &steps);
    report_line("shirt", 1190, steps, worst, sim);
    /* the shirt rests on the block (its particles 1.25 cm inside the faces: 0.2875 m the top layer) */
    const shard_particles *p = shard_sim_particles(sim);
    double top = -INFINITY, low_on_top = INFINITY;
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->body[i] == 1)
            top = fmax(top, p->x[3 * i + 2]);
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->body[i] == 0 && fabs(p->x[3 * i]) < 0.1 && fabs(p->x[3 * i + 1]) < 0.1)
            low_on_top = fmin(low_on_top, p->x[3 * i + 2]);
    printf("shirt: over the block's middle its lowest vertex is %.4g m above the top particles' centres\n",
           low_on_top - top);
    SHARD_ENSURE(worst == 0);
    SHARD_ENSURE(low_on_top > top);
    shard_sim_destroy(&sim);
}

/* The smallest distance from c to the cloth's triangles (closest points; one rank). */
static double sphere_clearance(shard_sim *sim, const double c[3])
{
    const shard_particles *p = shard_sim_particles(sim);
    int64_t *tri;
    long nt = shard_sim_surface_triangles(sim, &tri);
    double best = INFINITY;
    for (long t = 0; t < nt; t++) {
        const double *a = p->x + 3 * tri[3 * t], *b = p->x + 3 * tri[3 * t + 1], *e = p->x + 3 * tri[3 * t + 2];
        /* the closest point over a fine barycentric grid refined twice around the best sample */
        double w0 = 1.0 / 3.0, w1 = 1.0 / 3.0, span = 1.0;
        for (int level = 0; level < 6; level++, span *= 0.25) {
            double bw0 = w0, bw1 = w1, bd = INFINITY;
            for (int i = -8; i <= 8; i++)
                for (int j = -8; j <= 8; j++) {
                    double u = w0 + span * i / 8.0, v = w1 + span * j / 8.0;
                    if (u < 0.0 || v < 0.0 || u + v > 1.0)
                        continue;
                    double d2 = 0.0;
                    for (int k = 0; k < 3; k++) {
                        double q = u * a[k] + v * b[k] + (1.0 - u - v) * e[k] - c[k];
                        d2 += q * q;
                    }
                    if (d2 < bd)
                        bd = d2, bw0 = u, bw1 = v;
                }
            w0 = bw0, w1 = bw1;
            best = fmin(best, sqrt(bd));
        }
    }
    free(tri);
    return best;
}

/* Obstacles thinner than the cloth's cells: a box beam 2 cm wide rising at 0.3 m/s into a coarse cloth that
 * falls onto it with its vertex rows either side of the beam (they never touch it), and a ball of 1.5 cm
 * radius rising at 0.5 m/s into a second cloth falling onto it, under the middle of a cell.  Only the obstacles'
 * corners, edges, faces and sphere against the cloth's triangles and edges can stop them: after every step no
 * cloth triangle may cross the beam's faces (exact counter) or come within the ball's radius of its centre,
 * the towel ends hanging over the beam, and the ball carries the sheet up (before it slides off the ball's
 * top, as a cloth balanced on a point does). */
static void obstacles(shard_comm *comm, int k)
{
    int n = k ? 8 : 6;
    double s = 0.6 / n, T = 0.6;
    shard_sim *sim = validation_simf(
        comm, "obstacles.yaml",
        "run: {end_time: %g}\n"
        "materials:\n%s"
        "bodies:\n"
        "  - name: towel\n"
        "    kind: cloth\n"
        "    material: cotton\n"
        "    shape: {grid: {corner: [-0.3, %.17g, 0.05], u: [0.6, 0, 0], v: [0, 0.6, 0], divisions: [%d, %d]}}\n"
        "    thickness: 0.002\n"
        "    velocity: [0, 0, -1]\n"
        "  - name: sheet\n"
        "    kind: cloth\n"
        "    material: cotton\n"
        "    shape: {grid: {corner: [%.17g, %.17g, 0.5], u: [0.6, 0, 0], v: [0, 0.6, 0], divisions: [%d, %d]}}\n"
        "    thickness: 0.002\n"
        "obstacles:\n"
        "  - box: {min: [-0.5, -0.01, -0.04], max: [0.5, 0.01, 0]}\n"
        "    velocity: [0, 0, 0.3]\n"
        "    friction: 0.3\n"
        "  - sphere: {center: [2, 0, 0.45], radius: 0.015}\n"
        "    velocity: [0, 0, 0.5]\n"
        "    friction: 0.3\n",
        T, cotton, -0.3 - 0.5 * s, n, n, 2.0 - 0.3 - 0.5 * s, -0.3 - 0.5 * s, n, n);
    if (!sim)
        return;
    long steps = shard_sim_total_steps(sim), worst = 0;
    double dt = shard_sim_dt(sim), clear = INFINITY, lift = -INFINITY;
    for (long st = 0; st < steps; st++) {
        shard_sim_step(sim);
        double t = (double)(st + 1) * dt;
        double lo[3] = {-0.5, -0.01, -0.04 + 0.3 * t}, hi[3] = {0.5, 0.01, 0.3 * t};
        long kb = intersections_with(sim, lo, hi);
        double c[3] = {2.0, 0.0, 0.45 + 0.5 * t};
        clear = fmin(clear, sphere_clearance(sim, c) - 0.015);
        lift = fmax(lift, body_top(sim, 1) - 0.5);
        if (kb > worst) {
            fprintf(stderr, "  step %ld: %ld intersecting pairs\n", st + 1, kb);
            worst = kb;
        }
    }
    double zt = body_z(sim, 0);
    printf("obstacles %d: %ld steps, at most %ld intersecting pairs after a step (cloth and beam), the triangles "
           "at least %.3g m outside the ball; the towel's centre of mass %.4g m above the beam's top at the end, "
           "the sheet lifted up to %.4g m above where it started\n",
           n, steps, worst, clear, zt - 0.3 * T, lift);
    SHARD_ENSURE(worst == 0);
    SHARD_ENSURE(clear > 0.0);
    SHARD_ENSURE(zt > 0.3 * T - 0.3); /* it hangs over the beam (its half length below) */
    SHARD_ENSURE(lift > 0.05); /* carried up by the ball (falling, it would never rise) */
    shard_sim_destroy(&sim);
}

/* A light free rigid box (64 particles 2.5 cm apart) struck by a cloth patch thrown at it at 3 m/s, without
 * gravity: the box's particles stop the patch's triangles (they would pass between its vertices) and the
 * triangles push back on the box (two-way), so the total momentum stays the patch's initial one; no
 * intersection after any step. */
static void catch_box(shard_comm *comm, int k)
{
    int n = k ? 14 : 10;
    shard_sim *sim = validation_simf(
        comm, "catch.yaml",
        "run: {end_time: 0.1, gravity: [0, 0, 0]}\n"
        "materials:\n%s"
        "  balsa: {density: 100, E: 1.0e7, nu: 0.3, contact: {friction: 0.3}}\n"
        "bodies:\n"
        "  - name: patch\n"
        "    kind: cloth\n"
        "    material: cotton\n"
        "    shape: {grid: {corner: [-0.15, -0.14, 0.11], u: [0.3, 0, 0], v: [0, 0.3, 0], divisions: [%d, %d]}}\n"
        "    thickness: 0.002\n"
        "    velocity: [0, 0, -3]\n"
        "  - {name: box, kind: rigid, material: balsa, spacing: 0.025,\n"
        "     shape: {box: {min: [-0.05, -0.05, 0], max: [0.05, 0.05, 0.1]}}}\n",
        cotton, n, n);
    if (!sim)
        return;
    shard_diag d0 = shard_sim_diagnostics(sim);
    long steps, worst = run_checked(sim, &steps);
    shard_diag d1 = shard_sim_diagnostics(sim);
    const shard_particles *p = shard_sim_particles(sim);
    double pbox = 0.0;
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->body[i] == 1)
            pbox += p->mass[i] * p->v[3 * i + 2];
    double err = 0.0;
    for (int c = 0; c < 3; c++)
        err = fmax(err, fabs(d1.momentum[c] - d0.momentum[c]));
    report_line("catch", n, steps, worst, sim);
    printf("catch %d: momentum %.6g kg m/s at the start, changed by %.3g (relative %.3g); the box took %.4g\n", n,
           d0.momentum[2], err, err / fabs(d0.momentum[2]), pbox);
    SHARD_ENSURE(worst == 0);
    SHARD_ENSURE(err < 1e-9 * fabs(d0.momentum[2]));
    SHARD_ENSURE(pbox < 0.2 * d0.momentum[2]); /* the box moves with the patch (momentum along -z) */
    shard_sim_destroy(&sim);
}

static void impact(shard_comm *comm, int k) { impact_with(comm, k, 8); }
/* the same with the impact zones at once (cloth.collision_passes: 0): the fail-safe alone */
static void zones(shard_comm *comm, int k) { impact_with(comm, k, 0); }

typedef void (*case_fn)(shard_comm *, int);
static const struct {
    const char *name;
    case_fn fn;
} cases[] = {{"drape", drape}, {"fold", fold}, {"impact", impact}, {"zones", zones}, {"twist", twist}, {"shirt", shirt}, {"obstacles", obstacles},
             {"catch", catch_box}};

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    const char *only = argc > 1 ? argv[1] : NULL;
    int kk = argc > 2 ? atoi(argv[2]) : -1;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        if (!only || strcmp(only, cases[c].name) == 0)
            for (int k = 0; k < 2; k++)
                if (kk < 0 || kk == k)
                    cases[c].fn(comm, k);
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
