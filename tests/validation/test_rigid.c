/* Validation: rigid bodies with non-penetrating contact (Baraff 1989; docs/validation.md, "Rigid bodies").
 *
 * Every case runs at two time steps (the rigid step is the only resolution an exact primitive contact has) and
 * asserts numbers:
 *   incline   a 0.1 m cube (500 kg/m^3, mu = 0.5) on a plane, gravity turned by theta: at tan theta = 0.9 mu it
 *             stays (< 1 % of a spacing in 1 s after it settles) and the contact's normal force is m g cos theta
 *             within 1 % (Baraff 1989's example: not 2 m g cos theta); at tan theta = 1.1 mu it slides with
 *             a = g (sin theta - mu cos theta) within 2 %;
 *   rebound   a ball (e = 0.8) dropped from h = 0.5 m rises to e^2 h within 2 %;
 *   cradle    five touching-but-for-a-gap balls (e = 1), the first moving: the last leaves with the first's
 *             velocity, the others keep < 1 % of it;
 *   stack     ten 0.1 m boxes stacked on the ground stay for 10 s: drift < 1 % of a box, penetration < 1 % of a
 *             spacing;
 *   pyramid   a 15-row pyramid of 0.1 m boxes (Box2D's layout) stays for 10 s with the same bounds;
 *   coupling  a rigid ball (2 m/s) hits an elastic block in no gravity: the momentum of the two (the ball's M v
 *             and the block's particles') stays within 1e-12 of its start, relative, while most of it moves into
 *             the block (the contact forces on the ball's particles summed into its force, both ways);
 *   mesh      an icosphere mesh (OBJ, 320 facets, radius 0.1 m after scale) dropped 5 cm onto the ground,
 *             touching through its surface particles (`sampling: surface`): it comes to rest (|v| < 1 mm/s after
 *             1 s) with its lowest vertex within half a spacing of the ground (its mass properties are those of
 *             the polyhedron, tests/unit/test_massprops.c);
 *   free      a 0.1 x 0.2 x 0.3 m box spinning about its intermediate axis (10 rad/s, perturbed by 1e-3) in no
 *             gravity: its angular momentum in the world stays within 1e-9 (relative) per 1e5 steps over 10 s, and
 *             its intermediate axis turns over (the Dzhanibekov flip) at least twice.
 * usage: validation_test_rigid [CASE [K]]: CASE one of the names above, K 0 or 1 the time step (default: all).
 * RIGID_SECTION in the environment: a `rigid:` section for every scene (to try solver settings); RIGID_DEBUG:
 * print the motion of the incline cases and the penetration of the resting ones as they go. */
#include "validation.h"

#include "shard/rotation.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const double G = 9.81;

/* A rigid scene: the header with gravity g, end time, time step dt and the material, then bodies appended. */
typedef struct scene_text {
    char *s;
    size_t len, cap;
} scene_text;

static void add(scene_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(scene_text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        t->cap = 2 * (t->cap + (size_t)n + 64);
        t->s = realloc(t->s, t->cap);
    }
}

/* dt 0: `dt: auto` (the run's limits). */
static void header(scene_text *t, const double g[3], double end, double dt, double mu, double e)
{
    char step[64] = "auto";
    if (dt > 0)
        snprintf(step, sizeof step, "%.17g", dt);
    add(t,
        "run:\n"
        "  gravity: [%.17g, %.17g, %.17g]\n"
        "  end_time: %.17g\n"
        "  dt: %s\n"
        "materials:\n"
        "  crate: {density: 500, E: 1.0e8, nu: 0.3, contact: {friction: %.17g, restitution: %.17g}}\n"
        "%s",
        g[0], g[1], g[2], end, step, mu, e, getenv("RIGID_SECTION") ? getenv("RIGID_SECTION") : "");
}

static void box(scene_text *t, int k, const double c[3], double half, double spacing, const double v[3])
{
    add(t,
        "  - name: box%d\n"
        "    kind: rigid\n"
        "    material: crate\n"
        "    shape: {box: {min: [%.17g, %.17g, %.17g], max: [%.17g, %.17g, %.17g]}}\n"
        "    spacing: %.17g\n"
        "    velocity: [%.17g, %.17g, %.17g]\n",
        k, c[0] - half, c[1] - half, c[2] - half, c[0] + half, c[1] + half, c[2] + half, spacing, v[0], v[1], v[2]);
}

static void ball(scene_text *t, int k, const double c[3], double r, double spacing, const double v[3])
{
    add(t,
        "  - name: ball%d\n"
        "    kind: rigid\n"
        "    material: crate\n"
        "    shape: {sphere: {center: [%.17g, %.17g, %.17g], radius: %.17g}}\n"
        "    spacing: %.17g\n"
        "    velocity: [%.17g, %.17g, %.17g]\n",
        k, c[0], c[1], c[2], r, spacing, v[0], v[1], v[2]);
}

static void ground(scene_text *t, double mu, double e)
{
    add(t,
        "obstacles:\n"
        "  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
        "    friction: %.17g\n"
        "    restitution: %.17g\n",
        mu, e);
}

static shard_sim *make(shard_comm *comm, const char *name, scene_text *t)
{
    shard_sim *sim = validation_sim(comm, name, t->s, t->len);
    free(t->s);
    memset(t, 0, sizeof *t);
    return sim;
}

static shard_frame *frames_of(shard_sim *sim, size_t *n)
{
    size_t max = (size_t)shard_sim_scene(sim)->n_bodies;
    shard_frame *f = malloc((max + 1) * sizeof *f);
    *n = shard_sim_frames(sim, f, max);
    return f;
}

/* ---- incline -------------------------------------------------------------------------------------------- */

static void incline(shard_comm *comm, double dt)
{
    const double mu = 0.5, half = 0.05, spacing = 0.025, m = 500.0 * 0.001;
    for (int slide = 0; slide < 2; slide++) {
        double tan_th = slide ? 1.1 * mu : 0.9 * mu, th = atan(tan_th);
        double g[3] = {G * sin(th), 0.0, -G * cos(th)};
        double T = 1.2, settle = 0.2;
        scene_text t = {0};
        header(&t, g, T, dt, mu, 0.0);
        add(&t, "bodies:\n");
        box(&t, 0, (double[3]){0, 0, half}, half, spacing, (double[3]){0, 0, 0});
        ground(&t, mu, 0.0);
        shard_sim *sim = make(comm, "incline.yaml", &t);
        if (!sim)
            return;
        long steps = shard_sim_total_steps(sim);
        double xs = NAN, drift = 0.0, fn = 0.0, ft = 0.0, v_q = 0.0, t_q = 0.0, v = 0.0;
        long nf = 0;
        for (long n = 1; n <= steps; n++) {
            shard_sim_step(sim);
            size_t nb;
            shard_frame *f = frames_of(sim, &nb);
            double tt = shard_sim_time(sim);
            v = f[0].v[0];
            if (tt > settle) {
                if (isnan(xs))
                    xs = f[0].x[0];
                drift = fmax(drift, fabs(f[0].x[0] - xs));
                fn += f[0].force[2], ft += f[0].force[0], nf++;
            }
            if (n == steps / 4)
                v_q = v, t_q = tt;
            if (getenv("RIGID_DEBUG") && n % 100 == 0)
                printf("  t %.3f x %.6g %.6g %.6g v %.6g %.6g %.6g w %.3g %.3g %.3g F %.6g %.6g %.6g T %.3g %.3g %.3g\n", tt,
                       f[0].x[0], f[0].x[1], f[0].x[2], f[0].v[0], f[0].v[1], f[0].v[2], f[0].w[0], f[0].w[1],
                       f[0].w[2], f[0].force[0], f[0].force[1], f[0].force[2], f[0].torque[0], f[0].torque[1],
                       f[0].torque[2]);
            free(f);
        }
        fn /= (double)nf, ft /= (double)nf;
        if (!slide) {
            double want = m * G * cos(th);
            printf("incline dt %g, tan theta = 0.9 mu: drift %.3g m (%.3g %% of a spacing) in %g s; normal force %.6g "
                   "N, m g cos theta %.6g N (ratio %.5f); friction %.6g N, m g sin theta %.6g N\n",
                   dt, drift, 100.0 * drift / spacing, T - settle, fn, want, fn / want, -ft, m * G * sin(th));
            SHARD_ENSURE(drift < 0.01 * spacing);
            SHARD_ENSURE(fabs(fn / want - 1.0) < 0.01);
            SHARD_ENSURE(fabs(-ft / (m * G * sin(th)) - 1.0) < 0.01);
        } else {
            double a = (v - v_q) / (shard_sim_time(sim) - t_q), want = G * (sin(th) - mu * cos(th));
            printf("incline dt %g, tan theta = 1.1 mu: normal %.6g N, friction %.6g N (ratio %.5f)\n", dt, fn, -ft, -ft / fn);
            printf("incline dt %g, tan theta = 1.1 mu: a = %.6g m/s^2, g (sin - mu cos) = %.6g (ratio %.5f)\n", dt,
                   a, want, a / want);
            SHARD_ENSURE(fabs(a / want - 1.0) < 0.02);
        }
        shard_sim_destroy(&sim);
    }
}

/* ---- rebound -------------------------------------------------------------------------------------------- */

static void rebound(shard_comm *comm, double dt)
{
    const double e = 0.8, r = 0.05, h = 0.5;
    scene_text t = {0};
    header(&t, (double[3]){0, 0, -G}, 0.9, dt, 0.5, e);
    add(&t, "bodies:\n");
    ball(&t, 0, (double[3]){0, 0, r + h}, r, 0.0125, (double[3]){0, 0, 0});
    ground(&t, 0.5, 0.0);
    shard_sim *sim = make(comm, "rebound.yaml", &t);
    if (!sim)
        return;
    long steps = shard_sim_total_steps(sim);
    double apex = 0.0, lowest = INFINITY;
    int bounced = 0;
    for (long n = 1; n <= steps; n++) {
        shard_sim_step(sim);
        size_t nb;
        shard_frame *f = frames_of(sim, &nb);
        double z = f[0].x[2] - r;
        lowest = fmin(lowest, z);
        if (f[0].v[2] > 0.0)
            bounced = 1;
        if (bounced)
            apex = fmax(apex, z);
        free(f);
    }
    printf("rebound dt %g: apex %.6g m after a drop of %g m, e^2 h = %.6g m (ratio %.5f); deepest %.3g m\n", dt, apex,
           h, e * e * h, apex / (e * e * h), -lowest);
    SHARD_ENSURE(fabs(apex / (e * e * h) - 1.0) < 0.02);
    shard_sim_destroy(&sim);
}

/* ---- Newton's cradle ------------------------------------------------------------------------------------ */

static void cradle(shard_comm *comm, double dt)
{
    const double r = 0.05, gap = 0.002, v0 = 1.0;
    scene_text t = {0};
    header(&t, (double[3]){0, 0, 0}, 0.1, dt, 0.0, 1.0);
    add(&t, "bodies:\n");
    for (int k = 0; k < 5; k++)
        ball(&t, k, (double[3]){k * (2 * r + gap), 0, 0}, r, 0.0125, (double[3]){k == 0 ? v0 : 0.0, 0, 0});
    shard_sim *sim = make(comm, "cradle.yaml", &t);
    if (!sim)
        return;
    long steps = shard_sim_total_steps(sim);
    for (long n = 1; n <= steps; n++)
        shard_sim_step(sim);
    size_t nb;
    shard_frame *f = frames_of(sim, &nb);
    printf("cradle dt %g: velocities", dt);
    double others = 0.0;
    for (size_t k = 0; k < nb; k++) {
        printf(" %.6g", f[k].v[0]);
        if (k + 1 < nb)
            others = fmax(others, fabs(f[k].v[0]));
    }
    printf(" m/s; the last ball %.6g of v0, the others at most %.3g of it\n", f[nb - 1].v[0] / v0, others / v0);
    SHARD_ENSURE(nb == 5);
    SHARD_ENSURE(fabs(f[nb - 1].v[0] / v0 - 1.0) < 0.01);
    SHARD_ENSURE(others < 0.01 * v0);
    free(f);
    shard_sim_destroy(&sim);
}

/* ---- resting stacks ------------------------------------------------------------------------------------- */

/* The lowest corner height of box frame f (half size h) and its highest. */
static void corners(const shard_frame *f, double h, double *lo, double *hi)
{
    double R[9];
    shard_quat_to_matrix(f->q, R);
    *lo = INFINITY, *hi = -INFINITY;
    for (int c = 0; c < 8; c++) {
        double d[3] = {(c & 1) ? h : -h, (c & 2) ? h : -h, (c & 4) ? h : -h}, w[3];
        shard_mat3_mul_vec(R, d, w);
        *lo = fmin(*lo, f->x[2] + w[2]), *hi = fmax(*hi, f->x[2] + w[2]);
    }
}

/* Boxes at centres c[0..n) (rows: row[k] the row of box k, 0 at the bottom); 10 s of rest. */
static void rest(shard_comm *comm, const char *what, double dt, int n, const double *c, const int *row)
{
    const double half = 0.05, spacing = 0.025, T = 10.0;
    scene_text t = {0};
    header(&t, (double[3]){0, 0, -G}, T, dt, 0.5, 0.0);
    add(&t, "bodies:\n");
    for (int k = 0; k < n; k++)
        box(&t, k, c + 3 * k, half, spacing, (double[3]){0, 0, 0});
    ground(&t, 0.5, 0.0);
    shard_sim *sim = make(comm, what, &t);
    if (!sim)
        return;
    long steps = shard_sim_total_steps(sim);
    double pen = 0.0;
    for (long s = 1; s <= steps; s++) {
        shard_sim_step(sim);
        if (s % 10 && s != steps && s > 20)
            continue;
        size_t nb;
        shard_frame *f = frames_of(sim, &nb);
        /* penetration: into the ground by the bottom row, into the box below by the rows above (the boxes
         * stay level, so the lowest corner of a box against the highest of the one under it) */
        for (int k = 0; k < n; k++) {
            double lo, hi;
            corners(&f[k], half, &lo, &hi);
            if (row[k] == 0) {
                pen = fmax(pen, -lo);
                continue;
            }
            for (int j = 0; j < n; j++)
                if (row[j] == row[k] - 1 && fabs(f[j].x[0] - f[k].x[0]) < 2 * half && fabs(f[j].x[1] - f[k].x[1]) < 2 * half) {
                    double lo2, hi2;
                    corners(&f[j], half, &lo2, &hi2);
                    pen = fmax(pen, hi2 - lo);
                }
        }
        if (getenv("RIGID_DEBUG"))
            printf("  step %ld penetration %.3g\n", s, pen);
        free(f);
    }
    size_t nb;
    shard_frame *f = frames_of(sim, &nb);
    double drift = 0.0;
    for (int k = 0; k < n; k++) {
        double d[3] = {f[k].x[0] - c[3 * k], f[k].x[1] - c[3 * k + 1], f[k].x[2] - c[3 * k + 2]};
        drift = fmax(drift, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    }
    printf("%s dt %g: %d boxes, %g s: largest drift %.3g m (%.3g %% of a box), deepest penetration %.3g m (%.3g %% "
           "of a spacing)\n",
           what, dt, n, T, drift, 100.0 * drift / (2 * half), pen, 100.0 * pen / spacing);
    SHARD_ENSURE(drift < 0.01 * 2 * half);
    SHARD_ENSURE(pen < 0.01 * spacing);
    free(f);
    shard_sim_destroy(&sim);
}

static void stack(shard_comm *comm, double dt)
{
    double c[30];
    int row[10];
    for (int k = 0; k < 10; k++)
        c[3 * k] = 0.0, c[3 * k + 1] = 0.0, c[3 * k + 2] = 0.05 + 0.1 * k, row[k] = k;
    rest(comm, "stack", dt, 10, c, row);
}

static void pyramid(shard_comm *comm, double dt)
{
    enum { ROWS = 15, N = ROWS * (ROWS + 1) / 2 };
    double c[3 * N];
    int row[N], k = 0;
    const double pitch = 0.1125; /* Box2D's pyramid: boxes 1 apart at 1.125 */
    for (int r = 0; r < ROWS; r++)
        for (int j = 0; j < ROWS - r; j++, k++) {
            c[3 * k] = (j - 0.5 * (ROWS - r - 1)) * pitch;
            c[3 * k + 1] = 0.0;
            c[3 * k + 2] = 0.05 + 0.1 * r;
            row[k] = r;
        }
    rest(comm, "pyramid", dt, N, c, row);
}

/* ---- a free body ---------------------------------------------------------------------------------------- */

/* L = R(t) R0^T I0 R0 R(t)^T w: the body's inertia in the world (I0 at the start, diagonal in the world axes)
 * turned with it. */
static void angular_momentum(const shard_frame *f, const double R0[9], const double I0[3], double L[3])
{
    double R[9], A[9], u[3], v[3];
    shard_quat_to_matrix(f->q, R);
    for (int i = 0; i < 3; i++) /* A = R R0^T: the turn since the start */
        for (int j = 0; j < 3; j++)
            A[3 * i + j] = R[3 * i] * R0[3 * j] + R[3 * i + 1] * R0[3 * j + 1] + R[3 * i + 2] * R0[3 * j + 2];
    shard_mat3_tmul_vec(A, f->w, u);
    for (int k = 0; k < 3; k++)
        v[k] = I0[k] * u[k];
    shard_mat3_mul_vec(A, v, L);
}

static void free_body(shard_comm *comm, double dt)
{
    const double a = 0.1, b = 0.2, c = 0.3, rho = 500.0, m = rho * a * b * c;
    const double I0[3] = {m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12};
    const long steps = (long)(10.0 / dt + 0.5); /* 10 s: 1e5 steps at the coarser step */
    scene_text t = {0};
    header(&t, (double[3]){0, 0, 0}, steps * dt, dt, 0.5, 0.0);
    add(&t,
        "bodies:\n"
        "  - name: brick\n"
        "    kind: rigid\n"
        "    material: crate\n"
        "    shape: {box: {min: [0, 0, 0], max: [%g, %g, %g]}}\n"
        "    spacing: 0.05\n"
        "    angular_velocity: [1.0e-3, 10, 1.0e-3]\n",
        a, b, c);
    shard_sim *sim = make(comm, "free.yaml", &t);
    if (!sim)
        return;
    size_t nb;
    shard_frame *f = frames_of(sim, &nb);
    double R0[9], L0[3], L[3];
    shard_quat_to_matrix(f[0].q, R0);
    angular_momentum(&f[0], R0, I0, L0);
    free(f);
    double n0 = sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]), err = 0.0, last = 1.0;
    int flips = 0;
    for (long n = 1; n <= steps; n++) {
        shard_sim_step(sim);
        if (n % 100)
            continue;
        f = frames_of(sim, &nb);
        angular_momentum(&f[0], R0, I0, L);
        double d[3] = {L[0] - L0[0], L[1] - L0[1], L[2] - L0[2]};
        err = fmax(err, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / n0);
        /* the body's y axis (its intermediate one) along L: +1 at the start, -1 once turned over */
        double R[9];
        shard_quat_to_matrix(f[0].q, R);
        double A1 = R[3] * R0[3] + R[4] * R0[4] + R[5] * R0[5]; /* (R R0^T)_yy: the y axis now along it then */
        double s = A1 > 0.0 ? 1.0 : -1.0;
        if (s != last)
            flips++, last = s;
        free(f);
    }
    printf("free body dt %g: %ld steps, largest |L - L0| / |L0| %.3e; the intermediate axis turned over %d times\n",
           dt, steps, err, flips);
    SHARD_ENSURE(err < 1e-9 * (double)steps / 1e5);
    SHARD_ENSURE(flips >= 2);
    shard_sim_destroy(&sim);
}

/* ---- a mesh body ------------------------------------------------------------------------------------------ */

static void mesh_body(shard_comm *comm, double dt)
{
    const double R = 0.1, spacing = 0.02, h = 0.05;
    scene_text t = {0};
    header(&t, (double[3]){0, 0, -G}, 1.0, dt, 0.5, 0.0);
    add(&t,
        "bodies:\n"
        "  - name: pebble\n"
        "    kind: rigid\n"
        "    material: crate\n"
        "    shape: {mesh: {file: ../jobs/scenes/meshes/icosphere.obj, scale: %g, translate: [0, 0, %g]}}\n"
        "    spacing: %g\n"
        "    sampling: surface\n",
        2 * R, R + h, spacing);
    ground(&t, 0.5, 0.0);
    shard_sim *sim = make(comm, "mesh.yaml", &t);
    if (!sim)
        return;
    long steps = shard_sim_total_steps(sim);
    for (long n = 1; n <= steps; n++)
        shard_sim_step(sim);
    size_t nb;
    shard_frame *f = frames_of(sim, &nb);
    /* the vertices' radius is R exactly (the mesh's are on the unit sphere of radius 0.5, scaled by 2R): the
     * lowest one is at the centre of mass's height less R, whatever the turn (the mesh is convex and round to
     * within its facets) */
    double v = sqrt(f[0].v[0] * f[0].v[0] + f[0].v[1] * f[0].v[1] + (f[0].v[2] + 0.5 * G * dt) * (f[0].v[2] + 0.5 * G * dt));
    double bottom = f[0].x[2] - R;
    printf("mesh dt %g: at rest after 1 s with |v| %.3g m/s (less the last half kick of gravity), centre %.5f m, "
           "bottom %.3g m from the ground (%.2f spacings)\n",
           dt, v, f[0].x[2], bottom, bottom / spacing);
    SHARD_ENSURE(v < 1e-3);
    SHARD_ENSURE(fabs(bottom) < 0.5 * spacing);
    free(f);
    shard_sim_destroy(&sim);
}

/* ---- two-way coupling with a deformable body ------------------------------------------------------------ */

static void coupling(shard_comm *comm, double dt)
{
    scene_text t = {0};
    header(&t, (double[3]){0, 0, 0}, 0.04, dt, 0.3, 0.0);
    add(&t,
        "  rubber: {density: 1000, E: 2.0e6, nu: 0.3, volume_stiffness: 1.0e6}\n"
        "bodies:\n"
        "  - name: ball\n"
        "    kind: rigid\n"
        "    material: crate\n"
        "    shape: {sphere: {center: [-0.08, 0.01, 0.0], radius: 0.04}}\n"
        "    spacing: 0.01\n"
        "    velocity: [2, 0, 0]\n"
        "    angular_velocity: [0, 0, 5]\n"
        "  - name: block\n"
        "    material: rubber\n"
        "    shape: {box: {min: [-0.0351, -0.05, -0.05], max: [0.0649, 0.05, 0.05]}}\n"
        "    spacing: 0.01\n");
    shard_sim *sim = make(comm, "coupling.yaml", &t);
    if (!sim)
        return;
    shard_diag d0 = shard_sim_diagnostics(sim);
    double p0 = sqrt(d0.momentum[0] * d0.momentum[0] + d0.momentum[1] * d0.momentum[1] + d0.momentum[2] * d0.momentum[2]);
    long steps = shard_sim_total_steps(sim);
    double err = 0.0;
    for (long n = 1; n <= steps; n++) {
        shard_sim_step(sim);
        shard_diag d = shard_sim_diagnostics(sim);
        for (int k = 0; k < 3; k++)
            err = fmax(err, fabs(d.momentum[k] - d0.momentum[k]) / p0);
    }
    size_t nb;
    shard_frame *f = frames_of(sim, &nb);
    const shard_particles *p = shard_sim_particles(sim);
    double block_px = 0.0;
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->body[i] == 1)
            block_px += p->mass[i] * p->v[3 * i];
    char label[32] = "auto";
    if (dt > 0)
        snprintf(label, sizeof label, "%g", dt);
    printf("coupling dt %s: %ld steps; largest momentum change %.3e of |P0| = %.6g kg m/s; the block took %.3f of it, "
           "the ball keeps v_x = %.4g m/s\n",
           label, steps, err, p0, block_px / p0, f[0].v[0]);
    SHARD_ENSURE(err < 1e-12);
    SHARD_ENSURE(block_px > 0.3 * p0);
    SHARD_ENSURE(f[0].v[0] < 1.5);
    free(f);
    shard_sim_destroy(&sim);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    static const struct {
        const char *name;
        void (*run)(shard_comm *, double);
        double dt[2];
    } cases[] = {
        {"incline", incline, {2e-3, 5e-4}},
        {"rebound", rebound, {2e-4, 1e-4}},
        {"cradle", cradle, {1e-4, 5e-5}},
        {"stack", stack, {5e-3, 2.5e-3}},
        {"pyramid", pyramid, {5e-3, 4e-3}},
        {"free", free_body, {1e-4, 5e-5}},
        {"mesh", mesh_body, {1e-3, 5e-4}},
        {"coupling", coupling, {0, 2e-5}},
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        if (argc > 1 && strcmp(argv[1], cases[q].name) != 0)
            continue;
        for (int k = 0; k < 2; k++)
            if (argc <= 2 || atoi(argv[2]) == k)
                cases[q].run(comm, cases[q].dt[k]);
    }
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
