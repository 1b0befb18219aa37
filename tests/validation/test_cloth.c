/* Validation: cloth (cloth.h; docs/validation.md, "Cloth").  Every case runs at two resolutions and asserts
 * numbers:
 *   hang     a 1 x 1 m curtain (E = 5e5 Pa, nu = 0.3, 1 mm, 0.3 kg/m^2) held along 0.1 m of its top edge at both
 *            corners, relaxed to static equilibrium (conjugate gradients, 1e-7): the drop of its centre of mass
 *            and of its bottom edge's middle at 80 and 160 divisions within 5 % of the converged reference (the
 *            Richardson extrapolation of 40, 80 and 160 divisions, whose observed order must exceed 0.5);
 *   swing    a 0.5 x 0.5 m cloth held at two corners falls and swings with no damping for 0.4 s: its energy
 *            (kinetic + elastic + gravity's) stays within 0.5 % of the potential energy it released, at 10 and
 *            20 divisions;
 *   incline  a 0.2 x 0.2 m cloth lying on a plane (friction 0.5), gravity turned by theta: at tan theta = 0.9 mu
 *            its centre moves less than 1 % of a cell in 0.5 s; at tan theta = 1.1 mu it slides with
 *            g (sin theta - mu cos theta) within 2 %, at 8 and 16 divisions.
 *   mesh     the incline's kind of cloth falling onto a sphere, given once as a grid and once as an OBJ mesh of
 *            the same vertices and triangles: positions agree within 1e-9 m after 0.05 s, at 8 and 16 divisions.
 *   windows  a corner held still for 0.1 s, lifted at 0.1 m/s until 0.3 s, then let go (Manén 2010's velocity
 *            constraints over time): it does not move while held, rises by exactly 0.1 m/s x its steps, and
 *            falls after, at 8 and 16 divisions.
 * usage: validation_test_cloth [CASE [K]]: CASE one of the names above, K 0 or 1 the resolution (default: all). */
#include "validation.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double G = 9.81;

/* The centre of mass of the owned particles (one rank: every particle). */
static void centre(const shard_sim *sim, double c[3])
{
    const shard_particles *p = shard_sim_particles(sim);
    double m = 0.0;
    c[0] = c[1] = c[2] = 0.0;
    for (size_t i = 0; i < p->n_owned; i++) {
        m += p->mass[i];
        for (int k = 0; k < 3; k++)
            c[k] += p->mass[i] * p->x[3 * i + k];
    }
    for (int k = 0; k < 3; k++)
        c[k] /= m;
}

/* ---- hang ----------------------------------------------------------------------------------------------- */

static void hang_at(shard_comm *comm, int n, double *com_drop, double *edge_drop)
{
    shard_sim *sim = validation_simf(comm, "hang.yaml",
                          "materials:\n"
                          "  cotton: {density: 300, E: 5.0e5, nu: 0.3}\n"
                          "bodies:\n"
                          "  - name: curtain\n"
                          "    kind: cloth\n"
                          "    material: cotton\n"
                          "    shape: {grid: {corner: [0, 0, 0], u: [1, 0, 0], v: [0, 0, -1], divisions: [%d, %d]}}\n"
                          "    thickness: 0.001\n"
                          "    fixed:\n"
                          "      - {box: {min: [-0.01, -0.01, -0.001], max: [0.101, 0.01, 0.001]}}\n"
                          "      - {box: {min: [0.899, -0.01, -0.001], max: [1.01, 0.01, 0.001]}}\n"
                          "relax: {method: cg, tolerance: 1.0e-7, max_steps: 100000}\n"
                          "run: {steps: 1}\n",
                          n, n);
    if (!sim)
        return;
    shard_error err;
    SHARD_ENSURE(shard_sim_relax(sim, 1, &err) == 0);
    double ratio;
    long steps = shard_sim_relax_steps(sim, &ratio);
    double c[3];
    centre(sim, c);
    *com_drop = -0.5 - c[2];
    /* the bottom edge's middle: vertex (n/2, n), global id n (n + 1) + n/2 */
    const shard_particles *p = shard_sim_particles(sim);
    *edge_drop = NAN;
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->gid[i] == (int64_t)n * (n + 1) + n / 2)
            *edge_drop = -1.0 - p->x[3 * i + 2];
    printf("hang %2d x %2d: relaxed in %ld steps (residual %.2e); centre of mass drops %.6f mm, bottom middle "
           "%.6f mm\n",
           n, n, steps, ratio, 1e3 * *com_drop, 1e3 * *edge_drop);
    shard_sim_destroy(&sim);
}

/* The pins are segments of the free edge: the stress is singular at their ends, so the drop converges slowly
 * (order p ~ 0.9 in the spacing: 40 divisions are still 5.5 % short); the converged reference is the Richardson
 * extrapolation of 40, 80 and 160 divisions. */
static void hang(shard_comm *comm, int k)
{
    static double c[3], e[3];
    static int done = 0;
    if (!done) {
        for (int q = 0; q < 3; q++)
            hang_at(comm, 40 << q, &c[q], &e[q]);
        done = 1;
    }
    double pc = log2((c[1] - c[0]) / (c[2] - c[1])), pe = log2((e[1] - e[0]) / (e[2] - e[1]));
    double ref_c = c[2] + (c[2] - c[1]) / (exp2(pc) - 1.0), ref_e = e[2] + (e[2] - e[1]) / (exp2(pe) - 1.0);
    int q = k + 1; /* 80 and 160 divisions */
    printf("hang %d: centre drop %.4f, bottom drop %.4f of the extrapolated reference (%.4f, %.4f mm; orders %.2f, "
           "%.2f)\n",
           40 << q, c[q] / ref_c, e[q] / ref_e, 1e3 * ref_c, 1e3 * ref_e, pc, pe);
    SHARD_ENSURE(pc > 0.5 && pe > 0.5);
    SHARD_ENSURE(fabs(c[q] / ref_c - 1.0) < 0.05);
    SHARD_ENSURE(fabs(e[q] / ref_e - 1.0) < 0.05);
}

/* ---- swing ---------------------------------------------------------------------------------------------- */

static double potential(const shard_sim *sim)
{
    const shard_particles *p = shard_sim_particles(sim);
    double u = 0.0;
    for (size_t i = 0; i < p->n_owned; i++)
        u += p->mass[i] * G * p->x[3 * i + 2];
    return u;
}

static void swing(shard_comm *comm, int k)
{
    int n = k == 0 ? 10 : 20;
    shard_sim *sim = validation_simf(comm, "swing.yaml",
                          "materials:\n"
                          "  silk: {density: 300, E: 1.0e6, nu: 0.3}\n"
                          "bodies:\n"
                          "  - name: sheet\n"
                          "    kind: cloth\n"
                          "    material: silk\n"
                          "    shape: {grid: {corner: [0, 0, 0], u: [0.5, 0, 0], v: [0, 0.5, 0], divisions: [%d, %d]}}\n"
                          "    thickness: 0.001\n"
                          "    fixed:\n"
                          "      - {sphere: {center: [0, 0.5, 0], radius: 0.001}}\n"
                          "      - {sphere: {center: [0.5, 0.5, 0], radius: 0.001}}\n"
                          "run: {end_time: 0.4}\n",
                          n, n);
    if (!sim)
        return;
    shard_diag d = shard_sim_diagnostics(sim);
    double e0 = d.kinetic + d.elastic + potential(sim), u0 = potential(sim), worst = 0.0, released = 0.0;
    long steps = shard_sim_total_steps(sim);
    for (long s = 0; s < steps; s++) {
        shard_sim_step(sim);
        if (s % 50 == 49 || s + 1 == steps) {
            d = shard_sim_diagnostics(sim);
            double u = potential(sim), e = d.kinetic + d.elastic + u;
            released = fmax(released, u0 - u);
            worst = fmax(worst, fabs(e - e0));
        }
    }
    printf("swing %d x %d: %ld steps, released %.4f J, largest energy change %.3e of it\n", n, n, steps, released,
           worst / released);
    SHARD_ENSURE(released > 0.05);
    SHARD_ENSURE(worst < 0.005 * released);
    shard_sim_destroy(&sim);
}

/* ---- incline -------------------------------------------------------------------------------------------- */

static void incline(shard_comm *comm, int k)
{
    int n = k == 0 ? 8 : 16;
    const double mu = 0.5;
    for (int slide = 0; slide < 2; slide++) {
        double th = atan((slide ? 1.1 : 0.9) * mu);
        shard_sim *sim = validation_simf(comm, "incline.yaml",
                              "materials:\n"
                              "  cotton: {density: 300, E: 5.0e6, nu: 0.3, damping: 1.0e-4}\n"
                              "bodies:\n"
                              "  - name: sheet\n"
                              "    kind: cloth\n"
                              "    material: cotton\n"
                              "    shape: {grid: {corner: [0, 0, 0.0005], u: [0.2, 0, 0], v: [0, 0.2, 0], "
                              "divisions: [%d, %d]}}\n"
                              "    thickness: 0.001\n"
                              "obstacles:\n"
                              "  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
                              "    friction: %.17g\n"
                              "run: {end_time: 0.6, gravity: [%.17g, 0, %.17g]}\n",
                              n, n, mu, G * sin(th), -G * cos(th));
        if (!sim)
            return;
        long steps = shard_sim_total_steps(sim);
        double c0[3], c1[3], t1 = 0.0, v1 = 0.0, t2 = 0.0, v2 = 0.0;
        for (long s = 0; s < steps; s++) {
            shard_sim_step(sim);
            double t = shard_sim_time(sim);
            if (t >= 0.1 && t1 == 0.0) { /* settled onto the plane: start measuring */
                centre(sim, c0);
                t1 = t;
                v1 = shard_sim_diagnostics(sim).momentum[0];
            }
        }
        centre(sim, c1);
        t2 = shard_sim_time(sim);
        v2 = shard_sim_diagnostics(sim).momentum[0];
        double mass = validation_mass(sim), cell = 0.2 / n;
        if (!slide) {
            printf("incline %d x %d, tan theta = 0.9 mu: moved %.3e of a cell in %.2f s\n", n, n,
                   fabs(c1[0] - c0[0]) / cell, t2 - t1);
            SHARD_ENSURE(fabs(c1[0] - c0[0]) < 0.01 * cell);
        } else {
            double a = (v2 - v1) / mass / (t2 - t1), want = G * (sin(th) - mu * cos(th));
            printf("incline %d x %d, tan theta = 1.1 mu: a = %.5f m/s^2, g (sin - mu cos) = %.5f (%.4f)\n", n, n, a,
                   want, a / want);
            SHARD_ENSURE(fabs(a / want - 1.0) < 0.02);
        }
        shard_sim_destroy(&sim);
    }
}

/* ---- windows -------------------------------------------------------------------------------------------- */

/* Manén 2010's velocity constraints over time: a corner held still for 0.1 s, then lifted at 0.1 m/s until
 * 0.3 s, then let go.  It does not move while held, rises by 0.1 m/s x the steps of the window x dt (to
 * round-off) while lifted, and falls once free. */
static void windows(shard_comm *comm, int k)
{
    int n = k == 0 ? 8 : 16;
    shard_sim *sim = validation_simf(comm, "windows.yaml",
                          "materials:\n"
                          "  silk: {density: 300, E: 1.0e6, nu: 0.3, damping: 1.0e-4}\n"
                          "bodies:\n"
                          "  - name: sheet\n"
                          "    kind: cloth\n"
                          "    material: silk\n"
                          "    shape: {grid: {corner: [0, 0, 1], u: [0.3, 0, 0], v: [0, 0.3, 0], divisions: [%d, %d]}}\n"
                          "    thickness: 0.001\n"
                          "    fixed:\n"
                          "      - {sphere: {center: [0.3, 0.3, 1], radius: 0.001}}\n"
                          "    prescribed:\n"
                          "      - {region: {sphere: {center: [0, 0, 1], radius: 0.001}}, velocity: [0, 0, 0], end: 0.1}\n"
                          "      - {region: {sphere: {center: [0, 0, 1], radius: 0.001}}, velocity: [0, 0, 0.1],\n"
                          "         start: 0.1, end: 0.3}\n"
                          "run: {end_time: 0.45}\n",
                          n, n);
    if (!sim)
        return;
    long steps = shard_sim_total_steps(sim), lifted = 0;
    double dt = shard_sim_dt(sim), z_lift = NAN, z_end = NAN, worst_held = 0.0;
    for (long q = 0; q < steps; q++) {
        double t = (double)q * dt; /* the step's start decides */
        lifted += t >= 0.1 && t < 0.3;
        shard_sim_step(sim);
        const shard_particles *p = shard_sim_particles(sim);
        for (size_t i = 0; i < p->n_owned; i++)
            if (p->gid[i] == 0) {
                if (t < 0.1)
                    worst_held = fmax(worst_held, fabs(p->x[3 * i + 2] - 1.0));
                if (t < 0.3)
                    z_lift = p->x[3 * i + 2];
                z_end = p->x[3 * i + 2];
            }
    }
    double want = 1.0 + 0.1 * dt * (double)lifted;
    printf("windows %d x %d: held within %.1e m, lifted to %.15f m (0.1 m/s x %ld steps x dt: %.15f), %.4f m at "
           "the end\n",
           n, n, worst_held, z_lift, lifted, want, z_end);
    SHARD_ENSURE(worst_held == 0.0);
    SHARD_ENSURE(fabs(z_lift - want) < 1e-12);
    SHARD_ENSURE(z_end < z_lift - 1e-3);
    shard_sim_destroy(&sim);
}

/* ---- mesh ----------------------------------------------------------------------------------------------- */

/* The same cloth as a grid and as an OBJ file of the grid's vertices (in the grid's order) and triangles: the
 * two runs agree to round-off (their elements are numbered and oriented differently, so not bit for bit). */
static void mesh_cloth(shard_comm *comm, int k)
{
    int n = k == 0 ? 8 : 16;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char obj[512];
    snprintf(obj, sizeof obj, "%s/shard-cloth-grid-%d-%ld.obj", dir, n, (long)getpid());
    FILE *f = fopen(obj, "w");
    SHARD_ENSURE(f != NULL);
    if (!f)
        return;
    for (int j = 0; j <= n; j++)
        for (int i = 0; i <= n; i++)
            fprintf(f, "v %.17g %.17g %.17g\n", 0.4 * i / n - 0.2, 0.4 * j / n - 0.2, 0.12);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            int a = j * (n + 1) + i + 1, b = a + 1, c = a + n + 2, d = a + n + 1; /* OBJ counts from 1 */
            fprintf(f, "f %d %d %d\nf %d %d %d\n", a, b, c, a, c, d);
        }
    fclose(f);
    const char *common = "materials:\n"
                         "  cotton: {density: 300, E: 2.0e6, nu: 0.3, damping: 1.0e-4}\n"
                         "obstacles:\n"
                         "  - sphere: {center: [0, 0, 0], radius: 0.1}\n"
                         "run: {end_time: 0.05, dt: 2.0e-5}\n"
                         "bodies:\n"
                         "  - name: sheet\n"
                         "    kind: cloth\n"
                         "    material: cotton\n"
                         "    thickness: 0.001\n"
                         "    velocity: [0, 0, -0.5]\n";
    shard_sim *a = validation_simf(comm, "grid.yaml",
                        "%s    shape: {grid: {corner: [-0.2, -0.2, 0.12], u: [0.4, 0, 0], v: [0, 0.4, 0], "
                        "divisions: [%d, %d]}}\n",
                        common, n, n);
    shard_sim *b = validation_simf(comm, "mesh.yaml", "%s    shape: {mesh: {file: '%s'}}\n    spacing: %.17g\n", common, obj,
                        0.4 / n);
    remove(obj);
    if (!a || !b)
        return;
    long steps = shard_sim_total_steps(a);
    SHARD_ENSURE(steps == shard_sim_total_steps(b));
    for (long q = 0; q < steps; q++)
        shard_sim_step(a), shard_sim_step(b);
    const shard_particles *pa = shard_sim_particles(a), *pb = shard_sim_particles(b);
    double worst = 0.0, moved = 0.0;
    SHARD_ENSURE(pa->n_owned == pb->n_owned);
    for (size_t i = 0; i < pa->n_owned && i < pb->n_owned; i++)
        for (int c = 0; c < 3; c++) {
            worst = fmax(worst, fabs(pa->x[3 * i + c] - pb->x[3 * i + c]));
            moved = fmax(moved, fabs(pa->x[3 * i + c] - pa->X[3 * i + c]));
        }
    shard_diag da = shard_sim_diagnostics(a), db = shard_sim_diagnostics(b);
    printf("mesh %d x %d: grid and OBJ cloth differ by %.2e m after %ld steps (largest motion %.3f m; contacts %lld "
           "/ %lld)\n",
           n, n, worst, steps, moved, (long long)da.contacts, (long long)db.contacts);
    SHARD_ENSURE(moved > 0.01);
    SHARD_ENSURE(worst < 1e-9);
    shard_sim_destroy(&a);
    shard_sim_destroy(&b);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    static const struct {
        const char *name;
        void (*run)(shard_comm *, int);
    } cases[] = {{"hang", hang}, {"swing", swing}, {"incline", incline}, {"mesh", mesh_cloth},
                   {"windows", windows}};
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        if (argc > 1 && strcmp(argv[1], cases[q].name) != 0)
            continue;
        for (int k = 0; k < 2; k++)
            if (argc <= 2 || atoi(argv[2]) == k)
                cases[q].run(comm, k);
    }
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
