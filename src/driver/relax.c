/* Dynamic relaxation: the scene's `relax` stage, which brings the bodies to static equilibrium before the
 * dynamic run (see run.h).
 *
 * Adaptive dynamic relaxation (Underwood 1983, in the form of Kilic & Madenci 2010, the method of Peridigm's
 * quasi-static solver): the forces of the run (every term, gravity; prescribed particles held still) drive a
 * damped pseudo-dynamics with the particles' masses,
 *   v(n+1/2) = ((2 - c dt) v(n-1/2) + 2 dt a(n)) / (2 + c dt),   x(n+1) = x(n) + dt v(n+1/2),
 * started from rest with v(1/2) = dt a(0) / 2, where the damping c(n) = 2 sqrt(u.K u / u.u) follows the lowest
 * mode still moving: u = x(n) - x(0) and K the local diagonal stiffness K_ii = -(a_i(n) - a_i(n-1)) /
 * (dt v_i(n-1/2)) (mass-normalised, per component; components at rest are left out).  Critical damping of the
 * slowest mode is what makes the method converge in a number of steps of the order of (highest / lowest
 * frequency), not of its square.  The run stops when the unbalanced force |m a| over the free particles falls
 * to `tolerance` times its value at the start.  Every sum is exact (shard_comm_xsum), so c, the residual and the
 * step at which the stage ends are the same on any number of ranks.  The relaxation's time step is the run's
 * CFL step with relax.dt_safety in place of run.dt_safety (a given run.dt is used as it is); its steps are not
 * time steps of the run: time and step stay 0, and the dynamic run starts from the relaxed positions at rest.
 */
#include "sim_impl.h"

#include "shard/xsum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The exact sums of one relaxation step over the free owned particles: |m a|^2, u.K u and u.u. */
enum { RELAX_RES = 0, RELAX_UKU, RELAX_UU, RELAX_N };

static void shard_sim_relax_sums(shard_sim *s, const double *x0, const double *a_prev, double dt, int first,
                                 double out[RELAX_N])
{
    const shard_particles *p = &s->p;
    shard_xsum acc[RELAX_N];
    for (int k = 0; k < RELAX_N; k++)
        shard_xsum_init(&acc[k]);
    for (size_t i = 0; i < p->n_owned; i++) {
        if (p->flags[i] & SHARD_PF_PRESCRIBED)
            continue;
        for (int c = 0; c < 3; c++) {
            size_t q = 3 * i + (size_t)c;
            double ma = p->mass[i] * p->a[q];
            shard_xsum_add(&acc[RELAX_RES], ma * ma);
            if (first || p->v[q] == 0.0)
                continue;
            double u = p->x[q] - x0[q], kii = -(p->a[q] - a_prev[q]) / (dt * p->v[q]);
            shard_xsum_add(&acc[RELAX_UKU], kii * u * u);
            shard_xsum_add(&acc[RELAX_UU], u * u);
        }
    }
    shard_comm_xsum(s->comm, acc, RELAX_N);
    for (int k = 0; k < RELAX_N; k++)
        out[k] = shard_xsum_round(&acc[k]);
}

int shard_sim_relax(shard_sim *s, int quiet, shard_error *err)
{
    memset(err, 0, sizeof *err);
    const shard_relax_def *rd = &s->scene.relax;
    if (!rd->enabled || s->step != 0 || s->restarted_at >= 0 || s->relax_steps >= 0)
        return 0;
    shard_particles *p = &s->p;
    int rank = shard_comm_rank(s->comm);
    double wall0 = shard_wtime();
    size_t n3 = 3 * p->n_owned;
    double dt = s->scene.run.dt > 0.0 ? s->dt : s->dt / s->scene.run.dt_safety * rd->dt_safety;
    double *x0 = shard_malloc((n3 + 1) * sizeof *x0), *a_prev = shard_malloc((n3 + 1) * sizeof *a_prev);
    memcpy(x0, p->x, n3 * sizeof *x0);
    /* From rest: the forces again with every velocity zero (damping terms see the state it starts from). */
    memset(p->v, 0, n3 * sizeof *p->v);
    s->phys.dt_motion = 0.0;
    shard_sim_forces(s, 0);
    if (rank == 0 && !quiet)
        printf("Relaxing to static equilibrium: steps of %.6g s, tolerance %g, at most %ld steps\n", dt,
               rd->tolerance, rd->max_steps);
    long every = s->scene.run.diagnostics_every, k = 0;
    double r0 = 0.0, res = 0.0, c = 0.0;
    for (;; k++) {
        double sum[RELAX_N];
        shard_sim_relax_sums(s, x0, a_prev, dt, k == 0, sum);
        res = sqrt(sum[RELAX_RES]);
        if (k == 0)
            r0 = res;
        if (k > 0)
            c = sum[RELAX_UKU] > 0.0 && sum[RELAX_UU] > 0.0 ? 2.0 * sqrt(sum[RELAX_UKU] / sum[RELAX_UU]) : 0.0;
        /* the damping never more than critical for the highest mode the step can carry */
        c = fmin(c, 1.9 / dt);
        if (rank == 0 && !quiet && every > 0 && k % every == 0)
            printf("relax step %ld  unbalanced force %.6e N (%.3e of the start)  damping %.4g 1/s\n", k, res,
                   r0 > 0.0 ? res / r0 : 0.0, c);
        if (res <= rd->tolerance * r0 || k == rd->max_steps)
            break;
        for (size_t i = 0; i < p->n_owned; i++) {
            double *v = p->v + 3 * i;
            const double *a = p->a + 3 * i;
            for (int q = 0; q < 3; q++) {
                if (p->flags[i] & SHARD_PF_PRESCRIBED)
                    v[q] = 0.0;
                else if (k == 0)
                    v[q] = 0.5 * dt * a[q];
                else
                    v[q] = ((2.0 - c * dt) * v[q] + 2.0 * dt * a[q]) / (2.0 + c * dt);
            }
        }
        memcpy(a_prev, p->a, n3 * sizeof *a_prev);
        for (size_t q = 0; q < n3; q++)
            p->x[q] += dt * p->v[q];
        s->phys.dt_motion = dt;
        shard_sim_forces(s, 0);
    }
    free(x0), free(a_prev);
    s->relax_steps = k;
    s->relax_residual = res;
    s->relax_ratio = r0 > 0.0 ? res / r0 : 0.0;
    /* The dynamic run starts at rest from here; its first half kick uses these accelerations. */
    memset(p->v, 0, n3 * sizeof *p->v);
    s->phys.dt_motion = 0.0;
    if (res > rd->tolerance * r0) {
        shard_error_set(err, SHARD_EXIT_RUNTIME,
                        "relax: the unbalanced force is still %.3e of its start (%.6g N) after %ld steps, above "
                        "the tolerance %g: raise relax.max_steps (or relax.tolerance), or check that the bodies "
                        "are supported",
                        s->relax_ratio, res, k, rd->tolerance);
        return err->code;
    }
    if (rank == 0 && !quiet)
        printf("Relaxed in %ld steps (%.3g s): unbalanced force %.6e N (%.3e of the start)\n", k,
               shard_wtime() - wall0, res, s->relax_ratio);
    return 0;
}

long shard_sim_relax_steps(const shard_sim *s, double *ratio)
{
    if (ratio)
        *ratio = s->relax_ratio;
    return s->relax_steps;
}
