/* Validation: energy and momentum conservation of the undamped solid under velocity Verlet.
 *
 * A 0.1 m cube (spacing 0.01: 1000 particles, E = 1e6 Pa, nu = 0.3, volume stiffness 2e5 Pa, rho = 1000,
 * no gravity, no damping, no contact) starts undeformed with a smooth, deterministic velocity field (a few
 * sine modes plus a drift and a spin; peak strains of a few per cent, well into the geometrically nonlinear
 * range).  It runs 2000 steps at the automatic time step.  Velocity Verlet is symplectic: the total energy
 * (kinetic + elastic, from shard_sim_diagnostics) oscillates by O((w dt)^2) around its initial value without a
 * secular drift, so |E(t) - E(0)| / E(0) < 1e-3 throughout (at safety 0.2; < 5e-3 at 0.4; the
 * error is second order in dt) and the largest deviation in the second half of
 * the run is not much larger (< 2x) than in the first.  Linear momentum is conserved to round-off (the solid
 * forces sum to zero bond by bond); angular momentum is conserved exactly by Verlet for a rotation-invariant
 * potential, so it too may change by round-off only. */
#include "validation.h"

#include <stdlib.h>
#include <string.h>

static const char scene[] =
    "run:\n"
    "  gravity: [0, 0, 0]\n"
    "  steps: 2000\n"
    "materials:\n"
    "  soft: {density: 1000, E: 1.0e6, nu: 0.3, volume_stiffness: 2.0e5}\n"
    "bodies:\n"
    "  - name: cube\n"
    "    material: soft\n"
    "    shape: {box: {min: [0, 0, 0], max: [0.1, 0.1, 0.1]}}\n"
    "    spacing: 0.01\n";

static void angular_momentum(const shard_particles *p, double L[3], double *scale)
{
    L[0] = L[1] = L[2] = 0.0;
    *scale = 0.0;
    for (size_t i = 0; i < p->n_owned; i++) {
        const double *x = p->x + 3 * i, *v = p->v + 3 * i;
        double m = p->mass[i];
        L[0] += m * (x[1] * v[2] - x[2] * v[1]);
        L[1] += m * (x[2] * v[0] - x[0] * v[2]);
        L[2] += m * (x[0] * v[1] - x[1] * v[0]);
        *scale += m * sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) * sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
}

typedef struct energy_stats {
    double dt, E0, peak_elastic, dev1, dev2, mean1, mean2, dp, dl;
    long steps;
} energy_stats;

static energy_stats run(shard_comm *comm, double dt_safety)
{
    energy_stats st = {0};
    char text[sizeof scene + 64];
    snprintf(text, sizeof text, "%s", scene);
    char *at = strstr(text, "  steps:");
    char tail[sizeof scene];
    snprintf(tail, sizeof tail, "%s", at);
    snprintf(at, sizeof text - (size_t)(at - text), "  dt_safety: %g\n%s", dt_safety, tail);
    shard_sim *sim = validation_sim(comm, "energy.yaml", text, strlen(text));
    if (!sim) {
        return st;
    }
    shard_particles *p = (shard_particles *)shard_sim_particles(sim);
    const double a = 0.1, V = 0.3; /* V / c_p ~ 0.3 / 37: strains of order 1 % */
    double pscale = 0.0;
    for (size_t i = 0; i < p->n_owned; i++) {
        const double *X = p->X + 3 * i;
        double u = X[0] / a, w = X[1] / a, z = X[2] / a;
        double *v = p->v + 3 * i;
        v[0] = V * (sin(M_PI * u + 0.3) * cos(2.0 * M_PI * w) + 0.4 * sin(3.0 * M_PI * z)) + 0.05;
        v[1] = V * (0.7 * cos(M_PI * z + 1.0) * sin(M_PI * u) - 0.3 * sin(2.0 * M_PI * w + 0.5)) - 0.02;
        v[2] = V * (0.5 * sin(2.0 * M_PI * u) * sin(M_PI * w + 0.2) + 0.2 * cos(M_PI * z)) + 0.03;
        /* spin about the cube's centre */
        double d[3] = {X[0] - 0.5 * a, X[1] - 0.5 * a, X[2] - 0.5 * a}, om[3] = {2.0, -1.0, 3.0};
        v[0] += om[1] * d[2] - om[2] * d[1];
        v[1] += om[2] * d[0] - om[0] * d[2];
        v[2] += om[0] * d[1] - om[1] * d[0];
        pscale += p->mass[i] * sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    shard_diag d0 = shard_sim_diagnostics(sim);
    double L0[3], lscale;
    st.E0 = d0.kinetic + d0.elastic;
    angular_momentum(p, L0, &lscale);
    SHARD_ENSURE(d0.elastic == 0.0);
    st.steps = shard_sim_total_steps(sim);
    st.dt = shard_sim_dt(sim);
    for (long n = 1; n <= st.steps; n++) {
        shard_sim_step(sim);
        shard_diag d = shard_sim_diagnostics(sim);
        double dE = (d.kinetic + d.elastic - st.E0) / st.E0;
        st.peak_elastic = fmax(st.peak_elastic, d.elastic);
        if (2 * n <= st.steps)
            st.dev1 = fmax(st.dev1, fabs(dE)), st.mean1 += dE / (0.5 * (double)st.steps);
        else
            st.dev2 = fmax(st.dev2, fabs(dE)), st.mean2 += dE / (0.5 * (double)st.steps);
        for (int k = 0; k < 3; k++)
            st.dp = fmax(st.dp, fabs(d.momentum[k] - d0.momentum[k]) / pscale);
        double L[3], ls;
        angular_momentum(p, L, &ls);
        for (int k = 0; k < 3; k++)
            st.dl = fmax(st.dl, fabs(L[k] - L0[k]) / lscale);
    }
    printf("energy (dt_safety %g): %ld steps of %.4g s, E0 = %.6g J (peak elastic %.3g J); max |dE|/E0 first "
           "half %.3g, second half %.3g; mean dE/E0 first half %.3g, second half %.3g; momentum drift %.3g of "
           "sum m|v|; angular momentum drift %.3g of sum m|x||v|\n",
           dt_safety, st.steps, st.dt, st.E0, st.peak_elastic, st.dev1, st.dev2, st.mean1, st.mean2, st.dp, st.dl);
    SHARD_ENSURE(st.peak_elastic > 0.05 * st.E0); /* the field really deforms the cube */
    SHARD_ENSURE(st.dev2 < 2.0 * st.dev1);          /* bounded: no growth from the first half to the second */
    SHARD_ENSURE(fabs(st.mean2 - st.mean1) < 0.1 * st.dev1); /* no secular drift of the mean */
    SHARD_ENSURE(st.dp < 1e-12);
    SHARD_ENSURE(st.dl < 1e-12);
    shard_sim_destroy(&sim);
    return st;
}

int main(int argc, char **argv)
{
    shard_comm *comm = shard_comm_init(&argc, &argv);
    /* At the default CFL safety 0.4 the lowest modes of the cube have w dt ~ 0.12 and Verlet's energy error,
     * ~(w dt)^2 / 4, is a few 1e-3; at safety 0.2 it is four times smaller and within the 1e-3 bound. */
    energy_stats coarse = run(comm, 0.4), fine = run(comm, 0.2);
    SHARD_ENSURE(coarse.dev1 < 5e-3 && coarse.dev2 < 5e-3);
    SHARD_ENSURE(fine.dev1 < 1e-3 && fine.dev2 < 1e-3);
    /* second order: halving dt divides the energy error by ~4 (3 to 5 allows for the different sampling) */
    double order = log(fmax(coarse.dev1, coarse.dev2) / fmax(fine.dev1, fine.dev2)) / log(coarse.dt / fine.dt);
    printf("energy: error order in dt %.3f\n", order);
    SHARD_ENSURE(order > 1.6 && order < 2.4);
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
