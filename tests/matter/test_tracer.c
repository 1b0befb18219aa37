/* A kind of matter built here, outside the source tree, through the module table: "tracer" particles that only
 * drift (no forces of their own, no per-particle arrays, no bonds).  It proves that a new kind needs a module and
 * a table row and no driver edit: the run below mixes tracers with a meshless solid, on any number of ranks.
 *
 * Checks: every tracer moves on x = X + n dt v (to round-off of n additions), the solid's block holds exactly
 * the solid's particles (tracers carry none of its arrays), tracers have no bonds, and the state hash is printed
 * for tests/matter/tracer.sh, which requires the same hash at 1 and 3 ranks.
 * usage: mpiexec -n N test_tracer
 */
#include "shard/comm.h"
#include "shard/forces.h"
#include "shard/matter.h"
#include "shard/run.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *tracer_about_describe = "drifts";

static void tracer_describe(const shard_scene *sc, int b, char *buf, size_t len)
{
    (void)sc, (void)b;
    snprintf(buf, len, "%s", tracer_about_describe);
}

/* The whole module: a kind name and what it does not do. */
static const shard_matter tracer = {
    .kind = "tracer",
    .about = "massive points that drift with their initial velocity",
    .describe = tracer_describe,
};

static const char scene[] = "run:\n"
                            "  steps: 50\n"
                            "  gravity: [0, 0, 0]\n"
                            "materials:\n"
                            "  rubber: {density: 1100, E: 2.0e6, nu: 0.45}\n"
                            "bodies:\n"
                            "  - name: slab\n"
                            "    material: rubber\n"
                            "    shape: {box: {min: [0, 0, 0], max: [0.2, 0.1, 0.05]}}\n"
                            "    spacing: 0.0125\n"
                            "    velocity: [0, 0, 0.5]\n"
                            "    angular_velocity: [0, 0, 3]\n"
                            "  - name: dust\n"
                            "    kind: tracer\n"
                            "    material: rubber\n"
                            "    shape: {sphere: {center: [2, 0, 0], radius: 0.1}}\n"
                            "    spacing: 0.02\n"
                            "    velocity: [1.5, -0.25, 0.125]\n";

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int n_default = 0;
    const shard_matter *const *def = shard_matter_table(&n_default);
    const shard_matter *modules[SHARD_MATTER_MAX];
    for (int k = 0; k < n_default; k++)
        modules[k] = def[k];
    modules[n_default] = &tracer;
    shard_sim_tables tables = {.modules = modules, .n_modules = n_default + 1};
    shard_overrides ov = shard_default_overrides();
    shard_error err;
    shard_sim *s = shard_sim_create_with(c, "tracer.yaml", scene, strlen(scene), &ov, &tables, &err);
    if (!s)
        shard_fail_all(c, err.code ? err.code : 1, err.msg);
    long steps = shard_sim_total_steps(s);
    for (long k = 0; k < steps; k++)
        shard_sim_step(s);

    const shard_particles *p = shard_sim_particles(s);
    const shard_block *solid = shard_sim_block(s, "solid"), *tr = shard_sim_block(s, "tracer");
    const shard_csr *bonds = shard_sim_bonds(s);
    double dt = shard_sim_dt(s), v0[3] = {1.5, -0.25, 0.125};
    int64_t counts[3] = {0, 0, 0}; /* solid particles, solid block slots, tracers */
    double worst = 0.0;
    long bonded_tracers = 0;
    for (size_t i = 0; i < p->n_owned; i++) {
        if (p->body[i] == 0) {
            counts[0]++;
            continue;
        }
        counts[2]++;
        bonded_tracers += bonds->start[i + 1] > bonds->start[i];
        for (int k = 0; k < 3; k++) {
            double want = p->X[3 * i + k] + (double)steps * dt * v0[k];
            worst = fmax(worst, fabs(p->x[3 * i + k] - want));
            SHARD_ENSURE(p->v[3 * i + k] == v0[k]);
        }
    }
    counts[1] = solid ? (int64_t)solid->n_owned : -1;
    SHARD_ENSURE(solid && tr && tr->n_rows == 0 && tr->n_owned == (size_t)counts[2]);
    /* The solid's slots are its own particles, in front of the tracers in the store. */
    SHARD_ENSURE(solid && solid->first == 0 && tr && tr->first == solid->n_owned);
    SHARD_ENSURE(bonded_tracers == 0);
    for (int k = 0; k < 3; k++)
        counts[k] = shard_comm_sum_i64(c, counts[k]);
    worst = shard_comm_max(c, worst);
    uint64_t hash = shard_sim_hash(s);
    shard_diag d = shard_sim_diagnostics(s);
    /* x = X + n dt v by n additions of dt v: a few ulps of 2 m per step at most. */
    SHARD_ENSURE(worst < 1e-12);
    SHARD_ENSURE(counts[0] == counts[1] && counts[2] > 0 && counts[0] > 0);
    SHARD_ENSURE(counts[0] + counts[2] == shard_sim_total_particles(s));
    int fails = shard_test_failures;
    shard_comm_max_ints(c, &fails, 1);
    if (shard_comm_rank(c) == 0) {
        printf("tracers %lld, solid particles %lld (solid block slots %lld), drift error %.3g m\n",
               (long long)counts[2], (long long)counts[0], (long long)counts[1], worst);
        printf("kinetic %.17g J, momentum %.17g %.17g %.17g\n", d.kinetic, d.momentum[0], d.momentum[1],
               d.momentum[2]);
        printf("State hash: %016llx\n", (unsigned long long)hash);
        printf("%s: tracer kind through the module table on %d rank(s)\n", fails ? "FAIL" : "PASS",
               shard_comm_size(c));
    }
    shard_sim_destroy(&s);
    shard_comm_finalize(&c);
    return fails ? 1 : 0;
}
