/* Validation: a fast elastic ball hitting a plane must not turn particles inside out, and must rebound.
 *
 * A ball of radius R = 0.1 m (E = 1 MPa, nu = 0.3, rho = 1000 kg/m^3: c0 = sqrt(E / rho) = 31.6 m/s, no
 * gravity) hits a plane obstacle at v = 0.32 c0 and 0.5 c0 with the default material (volume_barrier 1: the
 * inversion barrier at the bulk modulus).  Over the whole impact (30 ms, about ten contact times R / c0) the
 * number of particles with det J <= 0 must stay 0 at every check (every 10 steps), the ball must leave the
 * plane (mean velocity upwards at the end), and every output column must be finite.  The same impact with
 * volume_barrier 0 (St Venant-Kirchhoff alone, the material before the barrier) is run too: it must invert
 * particles (the failure this test guards against is real and is counted) while still writing finite output,
 * with the inverted particles flagged.  Two spacings: R / 10 (4224 particles) and R / 7. */
#include "validation.h"

#include <stdlib.h>
#include <string.h>

static const double R = 0.1, C0 = 31.6227766016838;

typedef struct result {
    int64_t max_inverted, flagged;
    double vz_end, vz0;
    int finite;
    long steps;
} result;

static result run_case(shard_comm *comm, double spacing, double v, double barrier)
{
    char text[2048];
    int len = snprintf(text, sizeof text,
                       "run:\n"
                       "  end_time: 0.03\n"
                       "  gravity: [0, 0, 0]\n"
                       "materials:\n"
                       "  soft: {density: 1000, E: 1.0e6, nu: 0.3, volume_barrier: %.17g}\n"
                       "bodies:\n"
                       "  - name: ball\n"
                       "    material: soft\n"
                       "    shape: {sphere: {center: [0, 0, %.17g], radius: %.17g}}\n"
                       "    spacing: %.17g\n"
                       "    velocity: [0, 0, %.17g]\n"
                       "obstacles:\n"
                       "  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n",
                       barrier, R + 1e-4, R, spacing, -v);
    result r = {.finite = 1, .vz0 = -v};
    shard_sim *sim = validation_sim(comm, "inversion.yaml", text, (size_t)len);
    if (!sim) {
        return r;
    }
    long steps = shard_sim_total_steps(sim);
    for (long n = 1; n <= steps; n++) {
        shard_sim_step(sim);
        if (n % 10 == 0 || n == steps) {
            shard_diag d = shard_sim_diagnostics(sim);
            if (d.inverted > r.max_inverted)
                r.max_inverted = d.inverted;
        }
    }
    shard_diag d = shard_sim_diagnostics(sim);
    r.vz_end = d.momentum[2];
    shard_column cols[SHARD_OUTPUT_MAX];
    int nc = shard_sim_output_columns(sim, cols, SHARD_OUTPUT_MAX); /* every field */
    const shard_particles *p = shard_sim_particles(sim);
    double mass = validation_mass(sim);
    r.vz_end /= mass;
    for (int c = 0; c < nc; c++) {
        size_t n = p->n_owned * (size_t)cols[c].ncomp;
        if (cols[c].type == SHARD_TYPE_F64)
            for (size_t k = 0; k < n; k++)
                r.finite &= isfinite(((const double *)cols[c].data)[k]) != 0;
        if (strcmp(cols[c].name, "inverted") == 0)
            for (size_t k = 0; k < n; k++)
                r.flagged += ((const int32_t *)cols[c].data)[k];
    }
    SHARD_ENSURE(r.flagged == d.inverted);
    r.steps = steps;
    shard_sim_destroy(&sim);
    return r;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    const double spacings[2] = {R / 10, R / 7}, speeds[2] = {0.32, 0.5};
    for (int k = 0; k < 2; k++)
        for (int q = 0; q < 2; q++) {
            double v = speeds[q] * C0;
            result safe = run_case(comm, spacings[k], v, 1.0);
            printf("spacing R/%.0f, v = %.2f c0: inverted at most %lld, final mean v_z = %.4g m/s (restitution "
                   "%.3f), output finite: %d (%ld steps)\n",
                   R / spacings[k], speeds[q], (long long)safe.max_inverted, safe.vz_end, -safe.vz_end / safe.vz0,
                   safe.finite, safe.steps);
            SHARD_ENSURE(safe.max_inverted == 0);
            SHARD_ENSURE(safe.vz_end > 0.0);
            SHARD_ENSURE(safe.finite);
            result svk = run_case(comm, spacings[k], v, 0.0);
            printf("   volume_barrier 0: inverted at most %lld (%lld flagged at the end), final mean v_z = %.4g m/s, "
                   "output finite: %d\n",
                   (long long)svk.max_inverted, (long long)svk.flagged, svk.vz_end, svk.finite);
            SHARD_ENSURE(svk.max_inverted > 0);
            SHARD_ENSURE(svk.finite);
        }
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
