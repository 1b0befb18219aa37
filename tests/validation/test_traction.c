/* Validation: surface tractions (src/matter/traction.c).  A free block 0.1 x 0.02 x 0.02 m (no gravity) carries a
 * traction of 1 kPa along x on its x = 0.1 face (the region of its last lattice layer) from t0 = 2 dt on, and
 * -0.5 kPa along y on its y = 0 face until t1 = 40 dt: its momentum must be exactly the impulse of the face
 * forces, P = (sigma_x A_x (t - t0), -sigma_y A_y min(t, t1), 0) with A the faces' areas, to round-off, at two
 * spacings; and a body without tractions next to it must not feel anything (its momentum stays 0). */
#include "validation.h"

#include <math.h>

/* The scene at spacing s with the loads' start t0 and end t1 (s). */
static int scene(char *text, size_t cap, double s, double t0, double t1)
{
    return snprintf(text, cap,
                    "run:\n"
                    "  steps: 60\n"
                    "  gravity: [0, 0, 0]\n"
                    "materials:\n"
                    "  gel: {density: 1000, E: 1.0e6, nu: 0.3}\n"
                    "bodies:\n"
                    "  - name: block\n"
                    "    material: gel\n"
                    "    shape: {box: {min: [0, 0, 0], max: [0.1, 0.02, 0.02]}}\n"
                    "    spacing: %.17g\n"
                    "    tractions:\n"
                    "      - {region: {box: {min: [%.17g, -1, -1], max: [1, 1, 1]}}, stress: [1000, 0, 0], start: %.17g}\n"
                    "      - {region: {box: {min: [-1, -1, -1], max: [1, %.17g, 1]}}, stress: [0, -500, 0], end: %.17g}\n"
                    "  - name: other\n"
                    "    material: gel\n"
                    "    shape: {box: {min: [0, 0.5, 0], max: [0.1, 0.52, 0.02]}}\n"
                    "    spacing: %.17g\n",
                    s, 0.1 - s, t0, s, t1, s);
}

static void run_case(shard_comm *comm, double s)
{
    char text[2048];
    /* the time step first, then the loads' times between whole steps */
    int len = scene(text, sizeof text, s, 0.0, 0.0);
    shard_sim *probe = validation_sim(comm, "traction.yaml", text, (size_t)len);
    if (!probe)
        return;
    double dt = shard_sim_dt(probe);
    shard_sim_destroy(&probe);
    len = scene(text, sizeof text, s, 2.5 * dt, 40.5 * dt);
    shard_sim *sim = validation_sim(comm, "traction.yaml", text, (size_t)len);
    if (!sim)
        return;
    long steps = shard_sim_total_steps(sim);
    for (long n = 0; n < steps; n++)
        shard_sim_step(sim);
    /* the momentum of each body, from the particles (one rank holds all) */
    const shard_particles *p = shard_sim_particles(sim);
    double P[2][3] = {{0, 0, 0}, {0, 0, 0}};
    for (size_t i = 0; i < p->n_owned; i++)
        for (int k = 0; k < 3; k++)
            P[p->body[i]][k] += p->mass[i] * p->v[3 * i + k];
    /* the loads act on the forces of steps 1..steps (force at t = n dt); velocity Verlet's kicks give the
     * impulse dt/2 f(0) + dt (f(dt) + ... + f((N-1) dt)) + dt/2 f(N dt) */
    double Ax = 0.02 * 0.02, Ay = 0.1 * 0.02, jx = 0.0, jy = 0.0;
    for (long n = 0; n <= steps; n++) {
        double w = (n == 0 || n == steps) ? 0.5 * dt : dt, t = (double)n * dt;
        if (t >= 2.5 * dt)
            jx += w * 1000.0 * Ax;
        if (t < 40.5 * dt)
            jy -= w * 500.0 * Ay;
    }
    printf("spacing %g: momentum (%.10g, %.10g, %.3g) N s, impulse of the tractions (%.10g, %.10g, 0); the other "
           "body's (%.3g, %.3g, %.3g)\n",
           s, P[0][0], P[0][1], P[0][2], jx, jy, P[1][0], P[1][1], P[1][2]);
    SHARD_ENSURE_NEAR(P[0][0], jx, 1e-10 * fabs(jx));
    SHARD_ENSURE_NEAR(P[0][1], jy, 1e-10 * fabs(jy));
    SHARD_ENSURE(fabs(P[0][2]) <= 1e-12 * fabs(jx));
    SHARD_ENSURE(P[1][0] == 0.0 && P[1][1] == 0.0 && P[1][2] == 0.0);
    shard_sim_destroy(&sim);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    run_case(comm, 0.005);
    run_case(comm, 0.0025);
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
