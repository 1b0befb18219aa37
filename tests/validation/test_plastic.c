/* Validation: permanent set of a plastic ball, none for an elastic one, and the cap on plastic strain.
 *
 * A ball (radius 0.05 m, spacing 0.00625 m, E = 1e6 Pa, nu = 0.3, rho = 1000 kg/m^3, Rayleigh damping
 * 2e-4 s, no gravity) hits a frictionless ground plane at 3 m/s, bounces off and rings down.  Its shape is
 * measured by the extent of its particles along z (the impact direction) over the mean of its extents along x
 * and y, relative to the same ratio at rest (2176 particles, ~3200 steps, 0.08 s: the impact lasts ~12 ms and
 * the lowest vibration modes, ~1000 rad/s with damping ratio ~0.1, ring down in the rest of the run).  With plasticity {yield 0.01, creep 200 1/s, max 0.3} the ball
 * keeps a flat: the ratio stays below 0.97 (more than 3 % height reduction).  The identical elastic ball
 * (max 0) returns round within 0.5 %.  With max 0.03 the permanent set is smaller than with 0.3 (the cap
 * limits it) but still present (> 1 %), and plastic flow dissipates energy: the plastic balls rebound slower. */
#include "validation.h"

#include <stdlib.h>
#include <string.h>

static const char scene_fmt[] =
    "run:\n"
    "  gravity: [0, 0, 0]\n"
    "  end_time: %g\n"
    "materials:\n"
    "  clay:\n"
    "    density: 1000\n"
    "    E: 1.0e6\n"
    "    nu: 0.3\n"
    "    damping: 2.0e-4\n"
    "    plasticity: {yield: 0.01, creep: %g, max: %g}\n"
    "bodies:\n"
    "  - name: ball\n"
    "    material: clay\n"
    "    shape: {sphere: {center: [0, 0, 0.06], radius: 0.05}}\n"
    "    spacing: 0.00625\n"
    "    velocity: [0, 0, -3]\n"
    "obstacles:\n"
    "  - name: ground\n"
    "    plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
    "    friction: 0\n";

/* extent along z over the mean extent along x and y */
static double shape_ratio(const shard_particles *p)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < p->n_owned; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], p->x[3 * i + k]);
            hi[k] = fmax(hi[k], p->x[3 * i + k]);
        }
    return (hi[2] - lo[2]) / (0.5 * ((hi[0] - lo[0]) + (hi[1] - lo[1])));
}

typedef struct shape_result {
    double ratio;            /* final height / width over the same at rest */
    double tail_lo, tail_hi; /* range of the ratio over the last 10 % of the run (settled: narrow) */
    double rebound;          /* final vertical momentum over the initial one (minus: it bounced) */
} shape_result;

static shape_result run(shard_comm *comm, double creep, double max_plastic, double end_time)
{
    shape_result res = {NAN, NAN, NAN, NAN};
    char text[2048];
    snprintf(text, sizeof text, scene_fmt, end_time, creep, max_plastic);
    shard_sim *sim = validation_sim(comm, "plastic.yaml", text, strlen(text));
    if (!sim) {
        return res;
    }
    const shard_particles *p = shard_sim_particles(sim);
    double r0 = shape_ratio(p), rmin = INFINITY, pz0 = shard_sim_diagnostics(sim).momentum[2];
    long steps = shard_sim_total_steps(sim);
    double tail_lo = INFINITY, tail_hi = -INFINITY;
    for (long n = 1; n <= steps; n++) {
        shard_sim_step(sim);
        double r = shape_ratio(p) / r0;
        rmin = fmin(rmin, r);
        if (n > steps * 9 / 10)
            tail_lo = fmin(tail_lo, r), tail_hi = fmax(tail_hi, r);
        if (n % (steps / 10) == 0) {
            shard_diag d = shard_sim_diagnostics(sim);
            printf("  t %.4f s  height/width %.5f  p_z %.4f kg m/s  kinetic %.4g J  elastic %.4g J  contacts %lld\n",
                   shard_sim_time(sim), r, d.momentum[2], d.kinetic, d.elastic, (long long)d.contacts);
        }
    }
    res.ratio = shape_ratio(p) / r0;
    res.tail_lo = tail_lo, res.tail_hi = tail_hi;
    res.rebound = shard_sim_diagnostics(sim).momentum[2] / pz0;
    printf("plastic (creep %g, max %g): %lld particles, %ld steps of %.4g s; min height/width during impact %.4f, "
           "final %.4f (last 10 %% of the run: %.4f .. %.4f); rebound p_z / p_z0 = %.3f\n",
           creep, max_plastic, (long long)shard_sim_total_particles(sim), steps, shard_sim_dt(sim), rmin, res.ratio,
           tail_lo, tail_hi, res.rebound);
    shard_sim_destroy(&sim);
    return res;
}

int main(int argc, char **argv)
{
    shard_comm *comm = shard_comm_init(&argc, &argv);
    const double T = 0.08;
    shape_result elastic = run(comm, 200.0, 0.0, T);
    shape_result plastic = run(comm, 200.0, 0.3, T);
    shape_result capped = run(comm, 200.0, 0.03, T);
    /* every ball has bounced off and rung down: the shape changes by < 0.2 % over the last 10 % of the run */
    SHARD_ENSURE(elastic.tail_hi - elastic.tail_lo < 0.002);
    SHARD_ENSURE(plastic.tail_hi - plastic.tail_lo < 0.002);
    SHARD_ENSURE(capped.tail_hi - capped.tail_lo < 0.002);
    SHARD_ENSURE(elastic.rebound < 0.0 && plastic.rebound < 0.0 && capped.rebound < 0.0);
    SHARD_ENSURE(fabs(elastic.ratio - 1.0) < 0.005);          /* round again */
    SHARD_ENSURE(plastic.ratio < 0.97);                        /* a permanent flat of more than 3 % */
    SHARD_ENSURE(capped.ratio > plastic.ratio + 0.02);         /* the cap limits the set ... */
    SHARD_ENSURE(capped.ratio < 1.0 - 0.01);                   /* ... which is still there */
    /* plastic flow dissipates: the plastic balls rebound slower than the elastic one */
    SHARD_ENSURE(-plastic.rebound < -capped.rebound && -capped.rebound < -elastic.rebound);
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
