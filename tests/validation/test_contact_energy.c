/* Validation: the diagnostics' energy includes the contact springs, so an elastic impact conserves it.
 *
 * Elastic balls (radius 0.05 m, E = 1 MPa, nu = 0.3, rho = 1000 kg/m^3, contact damping 0, friction 0, no
 * gravity): one hits a plane obstacle at 1 m/s, and two hit each other head-on at 1 m/s each.  Reference: with
 * no damping anywhere the total energy kinetic + elastic (the solid's strain energy and the contact springs'
 * 1/2 k delta^2 + 1/2 k_t |xi|^2) is conserved through the impact, up to the time-integration error.  It is
 * checked every 5 steps over 40 ms (the impact and the flight after it) and must stay within 0.5 % of its value
 * before the impact.  Two spacings: 0.01 and 0.005 m. */
#include "validation.h"

#include <stdlib.h>
#include <string.h>

static void run_case(shard_comm *comm, double spacing, int pair, double *lo, double *hi, int64_t *max_contacts)
{
    char text[2048];
    int len;
    if (pair)
        len = snprintf(text, sizeof text,
                       "run: {end_time: 0.04, gravity: [0, 0, 0]}\n"
                       "materials:\n"
                       "  soft: {density: 1000, E: 1.0e6, nu: 0.3, contact: {damping: 0, friction: 0}}\n"
                       "bodies:\n"
                       "  - {name: left, material: soft, spacing: %.17g, velocity: [1, 0, 0],\n"
                       "     shape: {sphere: {center: [-0.0501, 0, 0], radius: 0.05}}}\n"
                       "  - {name: right, material: soft, spacing: %.17g, velocity: [-1, 0, 0],\n"
                       "     shape: {sphere: {center: [0.0501, 0, 0], radius: 0.05}}}\n",
                       spacing, spacing);
    else
        len = snprintf(text, sizeof text,
                       "run: {end_time: 0.04, gravity: [0, 0, 0]}\n"
                       "materials:\n"
                       "  soft: {density: 1000, E: 1.0e6, nu: 0.3, contact: {damping: 0, friction: 0}}\n"
                       "bodies:\n"
                       "  - {name: ball, material: soft, spacing: %.17g, velocity: [0, 0, -1],\n"
                       "     shape: {sphere: {center: [0, 0, 0.0501], radius: 0.05}}}\n"
                       "obstacles:\n"
                       "  - {plane: {point: [0, 0, 0], normal: [0, 0, 1]}, damping: 0, friction: 0}\n",
                       spacing);
    shard_sim *sim = validation_sim(comm, "contact_energy.yaml", text, (size_t)len);
    if (!sim) {
        return;
    }
    shard_diag d = shard_sim_diagnostics(sim);
    double e0 = d.kinetic + d.elastic;
    SHARD_ENSURE(d.contacts == 0);
    *lo = *hi = 1.0;
    *max_contacts = 0;
    long steps = shard_sim_total_steps(sim);
    for (long n = 5; n <= steps; n += 5) {
        for (int k = 0; k < 5; k++)
            shard_sim_step(sim);
        d = shard_sim_diagnostics(sim);
        double e = (d.kinetic + d.elastic) / e0;
        *lo = fmin(*lo, e), *hi = fmax(*hi, e);
        if (d.contacts > *max_contacts)
            *max_contacts = d.contacts;
    }
    shard_sim_destroy(&sim);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    const double spacings[2] = {0.01, 0.005};
    for (int pair = 0; pair < 2; pair++)
        for (int k = 0; k < 2; k++) {
            double lo, hi;
            int64_t nc;
            run_case(comm, spacings[k], pair, &lo, &hi, &nc);
            printf("%s, spacing %g m: total energy / before the impact in [%.6f, %.6f] (up to %lld contacts)\n",
                   pair ? "two balls head-on" : "ball on a plane", spacings[k], lo, hi, (long long)nc);
            SHARD_ENSURE(nc > 0);
            SHARD_ENSURE(lo > 0.995 && hi < 1.005);
        }
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
