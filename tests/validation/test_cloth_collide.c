/* Validation: cloth collisions (cloth_collide.h; docs/validation.md, "Cloth collisions").  After every step
 * an independent exact counter (jobs/bench/cloth_peers/intersections.c, built as a library: exact orientation
 * predicates, no tolerance) must find no pair of vertex-disjoint triangles that intersect, in:
 *   drape   a 0.6 x 0.6 m cloth dropped onto a sphere: it wraps the sphere and its skirt folds onto itself;
 *   fold    a 0.2 x 0.8 m strip held upright and let go: it crumples onto the ground in folds, layer on layer;
 *   impact  a small patch thrown at 20 m/s onto a thin net (0.2 mm) pinned along two edges: it moves ten
 *           thicknesses a step, so continuous collision detection must stop it; the patch ends above the net;
 *   zones   the impact with the impact zones at once (run.collision_passes: 0): the fail-safe alone;
 *   twist   a 0.4 x 0.2 m cloth (no gravity) whose ends are clamped (prescribed with a spin) and turned in
 *           opposite senses about its long axis by half a turn each in 1 s (a whole turn between them) while
 *           they move 0.05 m each towards the middle: the cloth winds into a rope pressed onto itself;
 *   shirt   the seed's shirt scene (jobs/scenes/tshirt_on_body.yaml): a T-shirt-like mesh of two sewn panels
 *           dropped onto a rigid block, for 0.4 s (one resolution: one mesh); it must rest on the block;
 * each at two resolutions.  Without the collision stage the drape and the fold intersect (tens to thousands of
 * pairs) and the patch passes through the net.
 * usage: validation_test_cloth_collide [CASE [K]]: CASE one of the names above, K 0 or 1 the resolution. */
#include "validation.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long intersections_count(const double *x, int64_t nv, const int64_t *tri, int64_t nt);

/* Intersecting pairs of the run's cloth now (one rank: every particle is owned, gid = index). */
static long intersections(shard_sim *sim)
{
    const shard_particles *p = shard_sim_particles(sim);
    int64_t n = shard_sim_total_particles(sim);
    double *x = calloc(3 * (size_t)n + 3, sizeof *x);
    for (size_t i = 0; i < p->n_owned; i++)
        memcpy(x + 3 * p->gid[i], p->x + 3 * i, 3 * sizeof *x);
    int64_t *tri;
    long nt = shard_sim_surface_triangles(sim, &tri);
    long k = intersections_count(x, n, tri, nt);
    free(x), free(tri);
    return k;
}

/* Runs to the end, counting intersections after every step; returns the largest count seen. */
static long run_checked(shard_sim *sim, long *steps)
{
    long worst = intersections(sim), n = shard_sim_total_steps(sim);
    for (long s = 0; s < n; s++) {
        shard_sim_step(sim);
        long k = intersections(sim);
        if (k > worst) {
            fprintf(stderr, "  step %ld: %ld intersecting pairs\n", s + 1, k);
            worst = k;
        }
    }
    *steps = n;
    return worst;
}

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

static void impact_with(shard_comm *comm, int k, int passes)
{
    int n = k ? 24 : 16, np = k ? 10 : 7;
    shard_sim *sim = validation_simf(comm, "impact.yaml",
                          "run: {end_time: 0.05, collision_passes: %d}\n"
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
        "         spin: [-3.14159265358979, 0, 0], center: [0.4, 0, 0]}\n",
        cotton, 2 * n, n);
    if (!sim)
        return;
    long steps, worst = run_checked(sim, &steps);
    report_line("twist", n, steps, worst, sim);
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
    shard_sim_destroy(&sim);
}

/* The seed's shirt scene (jobs/scenes/tshirt_on_body.yaml, its mesh tshirt.obj) for 0.4 s, at its one
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

static void impact(shard_comm *comm, int k) { impact_with(comm, k, 8); }
/* the same with the impact zones at once (run.collision_passes: 0): the fail-safe alone */
static void zones(shard_comm *comm, int k) { impact_with(comm, k, 0); }

typedef void (*case_fn)(shard_comm *, int);
static const struct {
    const char *name;
    case_fn fn;
} cases[] = {{"drape", drape}, {"fold", fold}, {"impact", impact}, {"zones", zones}, {"twist", twist}, {"shirt", shirt}};

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
