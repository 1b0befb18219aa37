/* Relaxation: the scene's `relax` stage, which brings the bodies to static equilibrium before the dynamic run
 * (see run.h), by dynamic relaxation (method dynamic, below) or by conjugate gradients (method cg, at
 * shard_sim_relax_cg).
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
 * to `tolerance` times its value at the start, both under the pseudo-dynamics and statically (the forces again
 * with every velocity 0: a body drifting at the terminal speed of its mass damping is not at rest).  The
 * relaxation is elastic: the plastic strain is held as it is (phys.elastic for the stage), and the dynamic run
 * starts from the relaxed positions, at rest, with the static accelerations.  Every sum is exact
 * (shard_comm_xsum), so c, the residual and the step at which the stage ends are the same on any number of
 * ranks.
 * The step: the pseudo-dynamics is stable for dt < 2 / omega_max, omega_max^2 the largest eigenvalue of M^-1 K.
 * The run's CFL rule (h / c_p) is a safe estimate of that for dynamics, about 0.8 of it for a lattice solid;
 * relaxation, whose step count is proportional to 1 / dt, measures it instead: power iteration on K z =
 * -M (a(x0 + eps z) - a(x0)) / eps (every force term at the start, velocities 0, nothing advanced), 40
 * iterations from a +-1 pattern hashed from the global ids, Rayleigh quotient z.M y / z.M z in exact sums,
 * which approaches omega_max^2 from below (within about 1 % at 40 iterations for a lattice).  The step is
 * relax.dt_safety x the smaller of 2 / omega_max (times sqrt(1 + z^2) - z, z = beta omega_max / 2, for the
 * largest stiffness-proportional damping time beta of the materials) and the common force terms' limits
 * (contact springs that are not yet closed at the start, mass damping), so a contact that closes later is
 * still resolved.  A given run.dt is used as it is.  Its steps are not time steps of the run: time and step stay 0, and
 * the dynamic run starts from the relaxed positions at rest.
 * Before any of this, shard_sim_relax_check refuses from scene data a scene that nothing can support (below).
 */
#include "sim_impl.h"

#include "shard/hash.h"
#include "shard/sample.h"
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

/* The finest particle spacing of the scene's bodies. */
static double shard_sim_relax_spacing(const shard_sim *s)
{
    double spacing = INFINITY;
    for (int b = 0; b < s->scene.n_bodies; b++)
        spacing = fmin(spacing, s->scene.bodies[b].spacing);
    return spacing;
}

/* omega_max^2 of M^-1 K at the current positions (the start, where the forces are current and every velocity
 * is 0), by power iteration (above); x and a are as they were afterwards. */
#define SHARD_RELAX_POWER_ITERATIONS 40
static double shard_sim_relax_lambda_max(shard_sim *s)
{
    shard_particles *p = &s->p;
    size_t n3 = 3 * p->n_owned;
    double *x0 = shard_malloc((n3 + 1) * sizeof *x0), *a0 = shard_malloc((n3 + 1) * sizeof *a0);
    double *z = shard_malloc((n3 + 1) * sizeof *z);
    memcpy(x0, p->x, n3 * sizeof *x0);
    memcpy(a0, p->a, n3 * sizeof *a0);
    double spacing = shard_sim_relax_spacing(s);
    for (size_t i = 0; i < p->n_owned; i++)
        for (int c = 0; c < 3; c++)
            z[3 * i + c] = (p->flags[i] & SHARD_PF_PRESCRIBED)                             ? 0.0
                           : (shard_hash_mix(3 * (uint64_t)p->gid[i] + (uint64_t)c) >> 63) ? 1.0
                                                                                           : -1.0;
    int elastic_saved = s->phys.elastic;
    double lambda = 0.0;
    s->phys.elastic = 1; /* no plastic flow while probing */
    s->phys.dt_motion = 0.0;
    for (int it = 0; it < SHARD_RELAX_POWER_ITERATIONS; it++) {
        /* z scaled to an rms of 1, then x = x0 + eps z with eps a millionth of the finest spacing */
        shard_xsum acc[2];
        shard_xsum_init(&acc[0]), shard_xsum_init(&acc[1]);
        for (size_t q = 0; q < n3; q++)
            shard_xsum_add(&acc[0], z[q] * z[q]), shard_xsum_add(&acc[1], z[q] != 0.0 ? 1.0 : 0.0);
        shard_comm_xsum(s->comm, acc, 2);
        double zz = shard_xsum_round(&acc[0]), cnt = shard_xsum_round(&acc[1]);
        if (!(zz > 0.0))
            break;
        double scale = sqrt(cnt / zz), eps = 1e-6 * spacing;
        for (size_t q = 0; q < n3; q++) {
            z[q] *= scale;
            p->x[q] = x0[q] + eps * z[q];
        }
        shard_sim_forces(s, 0);
        /* y = M^-1 K z into z; the Rayleigh quotient z.M y / z.M z */
        shard_xsum_init(&acc[0]), shard_xsum_init(&acc[1]);
        for (size_t i = 0; i < p->n_owned; i++)
            for (int c = 0; c < 3; c++) {
                size_t q = 3 * i + (size_t)c;
                double y = (p->flags[i] & SHARD_PF_PRESCRIBED) ? 0.0 : -(p->a[q] - a0[q]) / eps;
                shard_xsum_add(&acc[0], p->mass[i] * z[q] * y);
                shard_xsum_add(&acc[1], p->mass[i] * z[q] * z[q]);
                z[q] = y;
            }
        shard_comm_xsum(s->comm, acc, 2);
        double zmy = shard_xsum_round(&acc[0]), zmz = shard_xsum_round(&acc[1]);
        lambda = zmz > 0.0 ? zmy / zmz : 0.0;
    }
    memcpy(p->x, x0, n3 * sizeof *x0);
    shard_sim_forces(s, 0);
    s->phys.elastic = elastic_saved;
    free(x0), free(a0), free(z);
    return lambda;
}

/* The forces with every velocity 0 (no damping term acts, no contact memory advances: the static residual)
 * and the unbalanced force |m a| they leave. */
static double shard_sim_relax_static(shard_sim *s, const double *x0)
{
    memset(s->p.v, 0, 3 * s->p.n_owned * sizeof *s->p.v);
    s->phys.dt_motion = 0.0;
    shard_sim_forces(s, 0);
    double sum[RELAX_N];
    shard_sim_relax_sums(s, x0, NULL, 0.0, 1, sum);
    return sqrt(sum[RELAX_RES]);
}

/* Adaptive dynamic relaxation (above) from the static state at x0: the number of steps, the final and the
 * starting unbalanced force in *res and *r0; the forces are current and static on return. */
static long shard_sim_relax_dynamic(shard_sim *s, const double *x0, int quiet, double *res_out, double *r0_out)
{
    const shard_relax_def *rd = &s->scene.relax;
    shard_particles *p = &s->p;
    int rank = shard_comm_rank(s->comm);
    size_t n3 = 3 * p->n_owned;
    double *a_prev = shard_malloc((n3 + 1) * sizeof *a_prev), *v_keep = shard_malloc((n3 + 1) * sizeof *v_keep);
    double dt = s->dt, lambda = 0.0;
    if (!(s->scene.run.dt > 0.0)) {
        const char *why;
        int body;
        double common = shard_sim_step_limit(s, 0, &why, &body);
        lambda = shard_sim_relax_lambda_max(s);
        /* Stiffness-proportional damping (a time beta) lowers the limit to (2 / w)(sqrt(1 + z^2) - z),
         * z = beta w / 2, for the largest beta of the scene's materials. */
        double beta = 0.0, w = sqrt(lambda);
        for (int b = 0; b < s->scene.n_bodies; b++)
            beta = fmax(beta, s->scene.materials[s->scene.bodies[b].material].damping);
        double z = 0.5 * beta * w;
        double limit = lambda > 0.0 ? fmin(2.0 / w * (sqrt(1.0 + z * z) - z), common) : s->dt / s->scene.run.dt_safety;
        dt = rd->dt_safety * limit;
    }
    if (rank == 0 && !quiet)
        printf("Relaxing to static equilibrium (dynamic relaxation): steps of %.6g s (highest frequency %.6g "
               "rad/s), tolerance %g, at most %ld steps\n",
               dt, sqrt(lambda), rd->tolerance, rd->max_steps);
    long every = s->scene.run.diagnostics_every, k = 0;
    double r0 = 0.0, res = 0.0, c = 0.0;
    int is_static = 1; /* the last force evaluation had every velocity 0 */
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
        if (k == rd->max_steps)
            break;
        if (res <= rd->tolerance * r0) {
            /* Converged under the pseudo-dynamics, whose residual includes the damping terms' forces on the
             * pseudo-velocities (a body falling freely against mass damping has a = 0 too): it counts only if
             * the static residual, every velocity 0, is within the tolerance as well. */
            if (!is_static) {
                memcpy(v_keep, p->v, n3 * sizeof *v_keep);
                res = shard_sim_relax_static(s, x0);
                is_static = 1;
            }
            if (res <= rd->tolerance * r0)
                break;
            memcpy(p->v, v_keep, n3 * sizeof *v_keep);
        }
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
        is_static = 0;
    }
    /* The dynamic run starts at rest from here: its first half kick uses accelerations with every velocity 0. */
    if (!is_static)
        res = shard_sim_relax_static(s, x0);
    free(a_prev), free(v_keep);
    *res_out = res, *r0_out = r0;
    return k;
}

/* Exact sums over the free owned components q of the products m^mass[k] a[k][q] b[k][q] (k < n, m the
 * particle's mass, mass[k] = 0, 1 or 2) into out[k]; a NULL a[k] counts the components. Collective. */
static void shard_sim_relax_dots(shard_sim *s, int n, const double *const *a, const double *const *b, const int *mass,
                                 double *out)
{
    const shard_particles *p = &s->p;
    shard_xsum acc[8];
    for (int k = 0; k < n; k++)
        shard_xsum_init(&acc[k]);
    for (size_t i = 0; i < p->n_owned; i++) {
        if (p->flags[i] & SHARD_PF_PRESCRIBED)
            continue;
        const double m[3] = {1.0, p->mass[i], p->mass[i] * p->mass[i]};
        for (size_t q = 3 * i; q < 3 * i + 3; q++)
            for (int k = 0; k < n; k++)
                shard_xsum_add(&acc[k], a[k] ? m[mass[k]] * a[k][q] * b[k][q] : 1.0);
    }
    shard_comm_xsum(s->comm, acc, n);
    for (int k = 0; k < n; k++)
        out[k] = shard_xsum_round(&acc[k]);
}

/* d = a + beta d on the free particles, 0 on the prescribed ones; beta = 0 (a restart) never reads d, which
 * may hold anything then (its first use: 0 times a NaN left in the memory is a NaN). */
static void shard_sim_relax_direction(const shard_particles *p, double beta, double *d)
{
    for (size_t i = 0; i < p->n_owned; i++)
        for (size_t q = 3 * i; q < 3 * i + 3; q++)
            d[q] = (p->flags[i] & SHARD_PF_PRESCRIBED) ? 0.0 : beta == 0.0 ? p->a[q] : p->a[q] + beta * d[q];
}

/* Nonlinear conjugate gradients on the potential energy (the method of LAMMPS's `minimize cg`): the gradient is
 * minus the static force m a of every term (velocities 0, no contact memory advanced), preconditioned by the
 * masses, so the search direction starts as the accelerations; Polak-Ribiere with restarts (beta >= 0, and the
 * steepest direction again whenever d is not downhill).  The line search is one secant (Newton) step: the
 * curvature d.K d from the forces at x + sigma d (sigma d a millionth of the finest spacing, rms), the step
 * alpha = d.f / d.K d, at most a quarter spacing for the particle that moves most (a body falling freely has no
 * curvature along its fall; contacts then close gradually).  Two force evaluations per iteration; they are the
 * stage's steps.  Unlike dynamic relaxation, CG's convergence is governed by the spread of the stiffness
 * spectrum once its few lowest modes are resolved, not by the slowest mode: for the cantilever of
 * docs/validation.md it needs a third (5 layers) to a sixth (8 layers) of the steps. */
static long shard_sim_relax_cg(shard_sim *s, int quiet, double *res_out, double *r0_out)
{
    const shard_relax_def *rd = &s->scene.relax;
    shard_particles *p = &s->p;
    int rank = shard_comm_rank(s->comm);
    size_t n3 = 3 * p->n_owned;
    double *xk = shard_malloc((n3 + 1) * sizeof *xk), *d = shard_calloc(n3 + 1, sizeof *d);
    double *a_old = shard_malloc((n3 + 1) * sizeof *a_old);
    double spacing = shard_sim_relax_spacing(s);
    /* the start: r = m a, z = a, d = z */
    double sum[3];
    shard_sim_relax_dots(s, 3, (const double *const[]){p->a, p->a, NULL}, (const double *const[]){p->a, p->a, NULL},
                         (const int[]){1, 2, 0}, sum);
    double rz = sum[0], res = sqrt(sum[1]), cnt = sum[2], r0 = res;
    shard_sim_relax_direction(p, 0.0, d);
    if (rank == 0 && !quiet)
        printf("Relaxing to static equilibrium (conjugate gradients): tolerance %g, at most %ld steps (two per "
               "iteration)\n",
               rd->tolerance, rd->max_steps);
    long every = s->scene.run.diagnostics_every, evals = 0, it = 0;
    s->phys.dt_motion = 0.0;
    for (;; it++) {
        if (rank == 0 && !quiet && every > 0 && it % every == 0)
            printf("relax iteration %ld (step %ld)  unbalanced force %.6e N (%.3e of the start)\n", it, evals, res,
                   r0 > 0.0 ? res / r0 : 0.0);
        if (res <= rd->tolerance * r0 || evals + 2 > rd->max_steps)
            break;
        /* the trial point x + sigma d */
        double dd[1];
        shard_sim_relax_dots(s, 1, (const double *const[]){d}, (const double *const[]){d}, (const int[]){0}, dd);
        double dmax = 0.0;
        for (size_t i = 0; i < p->n_owned; i++)
            for (size_t q = 3 * i; q < 3 * i + 3; q++)
                dmax = fmax(dmax, fabs(d[q]));
        dmax = shard_comm_max(s->comm, dmax);
        if (!(dmax > 0.0))
            break;
        double sigma = 1e-6 * spacing / sqrt(dd[0] / cnt);
        memcpy(xk, p->x, n3 * sizeof *xk);
        memcpy(a_old, p->a, n3 * sizeof *a_old);
        for (size_t q = 0; q < n3; q++)
            p->x[q] = xk[q] + sigma * d[q];
        shard_sim_forces(s, 0);
        evals++;
        /* d.f at x and d.K d = d.(f(x) - f(x + sigma d)) / sigma, f = m a */
        for (size_t q = 0; q < n3; q++)
            p->a[q] = a_old[q] - p->a[q];
        shard_sim_relax_dots(s, 2, (const double *const[]){d, d}, (const double *const[]){a_old, p->a},
                             (const int[]){1, 1}, sum);
        double df = sum[0], dKd = sum[1] / sigma;
        double cap = 0.25 * spacing / dmax;
        double alpha = dKd > 0.0 ? fmin(df / dKd, cap) : cap;
        for (size_t q = 0; q < n3; q++)
            p->x[q] = xk[q] + alpha * d[q];
        shard_sim_forces(s, 0);
        evals++;
        /* Polak-Ribiere: beta = z.(r - r_old) / (z_old.r_old), z = a, r = m a; and |r| */
        double pr[4];
        shard_sim_relax_dots(s, 4, (const double *const[]){p->a, p->a, d, p->a},
                             (const double *const[]){p->a, a_old, p->a, p->a}, (const int[]){1, 1, 1, 2}, pr);
        double beta = rz > 0.0 ? fmax(0.0, (pr[0] - pr[1]) / rz) : 0.0;
        if (!(pr[0] + beta * pr[2] > 0.0)) /* d.r of the new direction: not downhill, restart */
            beta = 0.0;
        shard_sim_relax_direction(p, beta, d);
        rz = pr[0];
        res = sqrt(pr[3]);
    }
    free(xk), free(d), free(a_old);
    s->relax.iterations = it;
    *res_out = res, *r0_out = r0;
    return evals;
}

/* The total force on the free particles is the sum of the external forces (the internal ones cancel): with
 * nothing that can push back (no obstacle, no held region) and no traction at the start, it is M g, so a scene
 * with gravity falls as a whole for ever.  Held regions and tractions count when they are in force at the start,
 * whatever they hold (scene data cannot tell, and a traction might balance gravity); the stage itself finds
 * what this cannot decide (it stops at max_steps). */
int shard_sim_relax_check(const shard_scene *sc, shard_error *err)
{
    const double *g = sc->run.gravity;
    if (!sc->relax.enabled || sc->n_obstacles > 0 || (g[0] == 0.0 && g[1] == 0.0 && g[2] == 0.0))
        return 0;
    char names[256] = "";
    size_t used = 0;
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_body_def *bd = &sc->bodies[b];
        if (shard_sample_holds_at(bd, 0.0))
            return 0;
        for (int k = 0; k < bd->n_tractions; k++)
            if (bd->tractions[k].start <= 0.0)
                return 0;
        int w = snprintf(names + used, sizeof names - used, "%s'%s'", b ? ", " : "", bd->name);
        used += w > 0 && (size_t)w < sizeof names - used ? (size_t)w : 0;
    }
    if (sc->n_bodies == 1)
        return shard_error_at(err, sc->path, &sc->relax.loc,
                              "body %s cannot reach static equilibrium: nothing holds it (no fixed or prescribed "
                              "region, no obstacle, no other body to rest on) while gravity pulls it, so it would "
                              "fall for ever: give it a support (an obstacle or a fixed region) or leave out the "
                              "relax section",
                              names);
    return shard_error_at(err, sc->path, &sc->relax.loc,
                          "bodies %s cannot reach static equilibrium: nothing holds them (no fixed or prescribed "
                          "region, no obstacle) while gravity pulls them, so they would fall for ever together: "
                          "give them a support (an obstacle or a fixed region) or leave out the relax section",
                          names);
}

int shard_sim_relax(shard_sim *s, int quiet, shard_error *err)
{
    memset(err, 0, sizeof *err);
    const shard_relax_def *rd = &s->scene.relax;
    if (!rd->enabled || s->step != 0 || s->restarted_at >= 0 || s->relax.ran)
        return 0;
    shard_particles *p = &s->p;
    int rank = shard_comm_rank(s->comm);
    double wall0 = shard_wtime();
    size_t n3 = 3 * p->n_owned;
    double *x0 = shard_malloc((n3 + 1) * sizeof *x0);
    memcpy(x0, p->x, n3 * sizeof *x0);
    /* The relaxation is elastic: no plastic flow while it runs, the plastic strain held as it is. */
    s->phys.elastic = 1;
    /* From rest: the forces again with every velocity zero (damping terms see the state it starts from). */
    shard_sim_relax_static(s, x0);
    double res = 0.0, r0 = 0.0;
    long k = rd->method == SHARD_RELAX_CG ? shard_sim_relax_cg(s, quiet, &res, &r0)
                                          : shard_sim_relax_dynamic(s, x0, quiet, &res, &r0);
    s->phys.elastic = 0;
    free(x0);
    s->relax.ran = 1;
    s->relax.steps = k;
    s->relax.residual = res;
    s->relax.ratio = r0 > 0.0 ? res / r0 : 0.0;
    if (res > rd->tolerance * r0) {
        shard_error_set(err, SHARD_EXIT_RUNTIME,
                        "relax: the unbalanced force is still %.3e of its start (%.6g N) after %ld steps, above "
                        "the tolerance %g: raise relax.max_steps (or relax.tolerance), or check that the bodies "
                        "are supported",
                        s->relax.ratio, res, k, rd->tolerance);
        return err->code;
    }
    if (rank == 0 && !quiet) {
        char iters[64] = "";
        if (rd->method == SHARD_RELAX_CG)
            snprintf(iters, sizeof iters, ", %ld iterations", s->relax.iterations);
        printf("Relaxed in %ld steps%s (%.3g s): unbalanced force %.6e N (%.3e of the start)\n", k, iters,
               shard_wtime() - wall0, res, s->relax.ratio);
    }
    return 0;
}

long shard_sim_relax_steps(const shard_sim *s, double *ratio)
{
    if (ratio)
        *ratio = s->relax.ratio;
    return s->relax.ran ? s->relax.steps : -1;
}
