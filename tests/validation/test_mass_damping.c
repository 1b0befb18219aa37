/* Validation: mass-proportional (Rayleigh alpha) damping on a free body.
 *
 * A free elastic block (0.1 m cube, E = 1 MPa, nu = 0.3, rho = 1000 kg/m^3, no gravity, nothing to touch)
 * moving at v0 = (1, 0.5, 0) m/s with `mass_damping` alpha = 20 1/s: the force -alpha m v slows every particle
 * alike, so the body stays undeformed and its velocity is v0 exp(-alpha t).  Checked at the end, t = 0.1 s
 * (alpha t = 2): the mean velocity (momentum / mass) against v0 exp(-alpha t) within alpha^2 t dt, twice the
 * integrator's error (the force sees the half-step velocity, so a step multiplies v by 1 - alpha dt instead of
 * exp(-alpha dt): a relative error alpha t (alpha dt) / 2 at time t, 0.4 % here); at two spacings (0.02 and
 * 0.0125 m, so two time steps: the error must shrink with dt), the direction kept, and the elastic energy at
 * round-off (no deformation).  The same block without damping keeps v0 to round-off. */
#include "validation.h"

#include <string.h>

static double run_case(shard_comm *comm, double spacing, double alpha, double *elastic, double *t, double *dt)
{
    char text[1024];
    int len = snprintf(text, sizeof text,
                       "run:\n"
                       "  end_time: 0.1\n"
                       "  gravity: [0, 0, 0]\n"
                       "materials:\n"
                       "  soft: {density: 1000, E: 1.0e6, nu: 0.3, mass_damping: %.17g}\n"
                       "bodies:\n"
                       "  - name: block\n"
                       "    material: soft\n"
                       "    shape: {box: {min: [0, 0, 0], max: [0.1, 0.1, 0.1]}}\n"
                       "    spacing: %.17g\n"
                       "    velocity: [1, 0.5, 0]\n",
                       alpha, spacing);
    shard_sim *sim = validation_sim(comm, "mass_damping.yaml", text, (size_t)len);
    if (!sim) {
        return 0.0;
    }
    long steps = shard_sim_total_steps(sim);
    for (long n = 1; n <= steps; n++)
        shard_sim_step(sim);
    shard_diag d = shard_sim_diagnostics(sim);
    double mass = validation_mass(sim);
    *elastic = d.elastic;
    *t = shard_sim_time(sim), *dt = *t / (double)steps;
    double vx = d.momentum[0] / mass, vy = d.momentum[1] / mass;
    SHARD_ENSURE_NEAR(vy / vx, 0.5, 1e-12); /* the direction is kept */
    printf("spacing %g, alpha %g 1/s: %ld steps, mean velocity (%.8f, %.8f) m/s at t = %.4g s", spacing, alpha,
           steps, vx, vy, shard_sim_time(sim));
    shard_sim_destroy(&sim);
    return vx;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    const double alpha = 20.0, spacings[2] = {0.02, 0.0125};
    double err_prev = 0.0;
    for (int k = 0; k < 2; k++) {
        double elastic, t, dt;
        double v = run_case(comm, spacings[k], alpha, &elastic, &t, &dt), expect = exp(-alpha * t);
        double tol = alpha * alpha * t * dt;
        printf(": exp(-alpha t) = %.8f, ratio %.6f (tolerance %.2g); elastic energy %.3g J\n", expect, v / expect,
               tol, elastic);
        SHARD_ENSURE_NEAR(v / expect, 1.0, tol);
        if (k > 0)
            SHARD_ENSURE(fabs(v / expect - 1.0) < err_prev);
        err_prev = fabs(v / expect - 1.0);
        SHARD_ENSURE(elastic < 1e-12);
        v = run_case(comm, spacings[k], 0.0, &elastic, &t, &dt);
        printf(": undamped\n");
        SHARD_ENSURE_NEAR(v, 1.0, 1e-12);
    }
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
