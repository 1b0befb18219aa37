/* One time step, the force path and the diagnostics (see run.h and docs/architecture.md).
 *
 * One step is shard_sim_step's list of stages, in order (the timer phase in brackets):
 *   shard_sim_timed_constraints  prescribed velocities of the step's time windows   [Integrate]
 *   shard_sim_kick               v += dt/2 a                                         [Integrate]
 *   shard_sim_collide            the kinds with a collision stage (cloth)            [their phase: Collide]
 *   shard_sim_drift              x += dt v                                           [Integrate]
 *   shard_sim_advance            the kinds whose bodies move as wholes (rigid)       [their phase: Rigid]
 *   shard_sim_forces             the force path, below (start-up runs the same)
 *   shard_sim_kick               v += dt/2 a                                         [Integrate]
 *   shard_sim_settle             the whole-body kinds again, after the last kick     [their phase: Rigid]
 *   shard_sim_fracture           breaking rules and debris (fracture.c)              [Fracture]
 * The run loop (run.c) calls shard_sim_balance [Balance] before each step and its output stage [I/O, In-situ]
 * after it.  The force path ("inner" particles have no bond partner among the ghosts, so they are computed while a
 * halo exchange is in flight):
 *   begin halo of x, v to every module's bond ghosts; pass 1 of the two-pass terms for inner particles
 *   end halo; where a term reads a row at ghosts (the surface normals of smooth contact): it is computed
 *   [the term's phase: Contact] and sent to the bond ghosts [Comm]
 *   skin check (one allreduce, also catches NaN)                                     [Comm]
 *   on a skin violation: contact ghosts and candidate lists rebuilt                  [Neigh]; else forward [Comm]
 *   pass 1 for the other particles                                                   [the term's phase: Solid]
 *   begin halo of the two-pass terms' exchange rows (B); f = 0; pass 2 (add) of inner particles
 *   end halo; pass 2 of the others
 *   the one-pass terms in force order, each f += ...                                 [Contact]
 *   a = f/m + g                                                                      [Integrate]
 * The whole-body kinds overwrite their particles' x and v when they advance and settle.
 * Every particle's force is the sum of the terms in the order of the merged force table (solid, then contact,
 * then obstacles), whatever the partition: every term adds into f and a particle is in exactly one list.
 */
#include "sim_impl.h"

#include "shard/integrate.h"
#include "shard/sample.h"
#include "shard/xsum.h"

#include <math.h>
#include <string.h>

/* The x, v fields of the particle store as a module's halo sees them. */
static void shard_sim_xv_fields(shard_sim *s, const shard_halo *h, shard_halo_field f[2])
{
    f[0] = shard_halo_field_of(h, s->p.x, 3);
    f[1] = shard_halo_field_of(h, s->p.v, 3);
}

void shard_sim_forward_xv(shard_sim *s)
{
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].halo) {
            shard_halo_field f[2];
            shard_sim_xv_fields(s, s->mod[m].halo, f);
            shard_halo_forward(s->mod[m].halo, 2, f);
        }
}

void shard_sim_rebuild(shard_sim *s)
{
    shard_timer_stamp(&s->timer, s->ph_other, shard_wtime());
    shard_halo *halos[SHARD_MATTER_MAX];
    for (int m = 0; m < s->n_modules; m++)
        halos[m] = s->mod[m].halo;
    shard_ghosts_rebuild(s->ghosts, s->comm, &s->p, halos, s->n_modules, s->cutoff);
    shard_neighbor_contacts(&s->p, s->reach_radius, s->frac.self_contact, s->phys.bonds, s->skin, &s->cells, &s->cand);
    shard_sim_fracture_rebuilt(s);
    memcpy(s->p.x_build, s->p.x, 3 * s->p.n_owned * sizeof *s->p.x);
    s->rebuilds++;
    shard_sim_validate(s);
    shard_timer_stamp(&s->timer, s->ph_neigh, shard_wtime());
}

/* A rebuild, and where terms read rows at ghosts (computed for the owned particles: the surface normals of
 * smooth contact) the new contact ghosts' rows, which their records do not carry. Collective. */
static void shard_sim_rebuild_with_rows(shard_sim *s)
{
    shard_sim_rebuild(s);
    if (s->n_ghost_rows > 2) {
        shard_ghosts_forward(s->ghosts, &s->p, s->ghost_rows + 2, s->n_ghost_rows - 2);
        shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime());
    }
}

/* Once the bond ghosts hold the new x and v: the skin check (one allreduce that also carries "a particle is
 * lost": not finite, or beyond the run's domain), then either a contact-ghost rebuild or the forward exchange of
 * the contact ghosts. Collective. */
static void shard_sim_after_positions(shard_sim *s, int force_rebuild)
{
    shard_particles *p = &s->p;
    double m2 = 0.0;
    long bad = shard_integrate_scan(p, s->domain, &m2);
    int flags[2] = {m2 > 0.25 * s->skin * s->skin || force_rebuild, bad >= 0};
    shard_comm_max_ints(s->comm, flags, 2);
    shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime());
    if (flags[1]) {
        /* The lowest rank with a lost particle names its first one. */
        shard_error e = {0};
        if (bad >= 0) {
            const double *x = p->x + 3 * bad;
            const shard_body_def *bd = &s->scene.bodies[p->body[bad]];
            if (isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]))
                shard_error_set(&e, SHARD_EXIT_RUNTIME,
                                "step %ld: particle %lld of body '%s' is at (%g, %g, %g) m, outside the %g m (2^40 "
                                "spacings) a run can hold: the run is invalid (a time step too large for the "
                                "material or contact stiffness, a velocity in the wrong unit, or a body started "
                                "inside an obstacle?)",
                                s->step, (long long)p->gid[bad], bd->name, x[0], x[1], x[2], s->domain);
            else
                shard_error_set(&e, SHARD_EXIT_RUNTIME,
                                "step %ld: particle %lld of body '%s' has a position that is not finite (the time "
                                "step is too large for the material or contact stiffness; try a smaller "
                                "run.dt_safety)",
                                s->step, (long long)p->gid[bad], bd->name);
        }
        shard_comm_any_error(s->comm, &e);
        shard_fail_all(s->comm, SHARD_EXIT_RUNTIME, e.msg);
    }
    if (flags[0]) {
        shard_sim_rebuild_with_rows(s);
    } else {
        shard_ghosts_forward(s->ghosts, p, s->ghost_rows, s->n_ghost_rows);
        shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime());
        shard_sim_fracture_reopen(s);
    }
}

/* The rows terms read at ghosts (matter.h, ghost_row: the surface normals of smooth contact), filled for the
 * owned particles once the bond ghosts hold the new positions and forwarded to the bond ghosts here (the contact
 * ghosts get them with x and v next). Collective over the neighbourhood. */
static void shard_sim_ghost_rows(shard_sim *s)
{
    for (int k = 0; k < s->n_terms; k++)
        if (s->term[k].def->fill_ghost_row) {
            s->term[k].def->fill_ghost_row(&s->term[k].ctx);
            shard_timer_stamp(&s->timer, s->term[k].phase, shard_wtime());
        }
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].halo) {
            shard_halo_field f[SHARD_GHOSTS_MAX_ROWS];
            for (int r = 2; r < s->n_ghost_rows; r++)
                f[r - 2] = shard_halo_field_of(s->mod[m].halo, shard_particles_array(&s->p, s->ghost_rows[r]),
                                               s->ghost_rows[r]->ncomp);
            shard_halo_forward(s->mod[m].halo, s->n_ghost_rows - 2, f);
        }
    shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime());
}

void shard_sim_restart_ghosts(shard_sim *s)
{
    if (s->n_ghost_rows > 2)
        shard_sim_ghost_rows(s);
    shard_sim_rebuild_with_rows(s);
}

/* Pass 1 of the two-pass terms for the inner particles (first) or the others, each into its term's phase. */
static void shard_sim_pass1(shard_sim *s, int inner)
{
    for (int k = 0; k < s->n_terms; k++) {
        const shard_sim_term *t = &s->term[k];
        if (t->def->pass1) {
            const shard_sim_module *md = &s->mod[t->module];
            if (inner)
                t->def->pass1(&t->ctx, md->inner, md->n_inner);
            else
                t->def->pass1(&t->ctx, md->outer, md->n_outer);
            shard_timer_stamp(&s->timer, t->phase, shard_wtime());
        }
    }
}

/* Begins the forward of the two-pass terms' exchange rows to the bond ghosts (read after a possible
 * contact-ghost rebuild, which may move the store's arrays; the blocks never move) and clears f. */
static void shard_sim_exchange_begin(shard_sim *s, shard_halo_field *ex)
{
    for (int k = 0; k < s->n_terms; k++) {
        const shard_sim_term *t = &s->term[k];
        if (t->def->pass1 && s->mod[t->module].halo) {
            ex[k] = shard_sim_block_field(&s->mod[t->module], t->def->exchange_row);
            shard_halo_forward_begin(s->mod[t->module].halo, 1, &ex[k]);
        }
    }
    memset(s->f, 0, 3 * s->p.n_owned * sizeof *s->f);
    shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime());
}

/* Pass 2 (add) of the two-pass terms for the inner particles, while the exchange is in flight. */
static void shard_sim_pass2_inner(shard_sim *s)
{
    for (int k = 0; k < s->n_terms; k++) {
        const shard_sim_term *t = &s->term[k];
        if (t->def->pass1) {
            const shard_sim_module *md = &s->mod[t->module];
            t->def->add(&t->ctx, s->f, md->inner, md->n_inner, 0);
            shard_timer_stamp(&s->timer, t->phase, shard_wtime());
        }
    }
}

/* Ends the exchange begun by shard_sim_exchange_begin. */
static void shard_sim_exchange_end(shard_sim *s, shard_halo_field *ex)
{
    for (int k = 0; k < s->n_terms; k++) {
        const shard_sim_term *t = &s->term[k];
        if (t->def->pass1 && s->mod[t->module].halo)
            shard_halo_forward_end(s->mod[t->module].halo, 1, &ex[k]);
    }
    shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime());
}

/* In force order: pass 2 of the two-pass terms for the other particles, and the one-pass terms (each with its
 * memory: the latest in, the next out).  Returns the contacts the terms counted. */
static int64_t shard_sim_pass2_rest(shard_sim *s)
{
    int64_t contacts = 0;
    for (int k = 0; k < s->n_terms; k++) {
        const shard_sim_term *t = &s->term[k];
        if (t->def->pass1) {
            const shard_sim_module *md = &s->mod[t->module];
            t->def->add(&t->ctx, s->f, md->outer, md->n_outer, 1);
        } else {
            shard_sim_term *tm = &s->term[k];
            tm->ctx.memory_in = &tm->memory[tm->cur];
            tm->ctx.memory_out = &tm->memory[1 - tm->cur];
            contacts += (int64_t)t->def->add(&t->ctx, s->f, NULL, s->p.n_owned, 1);
            if (t->def->memory_width > 0)
                tm->cur = 1 - tm->cur;
        }
        shard_timer_stamp(&s->timer, t->phase, shard_wtime());
    }
    return contacts;
}

void shard_sim_forces(shard_sim *s, int force_rebuild)
{
    s->phys.t = shard_sim_now(s);
    shard_timer_stamp(&s->timer, s->ph_other, shard_wtime());
    /* Each halo exchange is overlapped with the particles that need no ghost; every particle is computed
     * exactly once per pass, from the same inputs as without the overlap, so the state does not change. */
    shard_halo_field xv[SHARD_MATTER_MAX][2];
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].halo) {
            shard_sim_xv_fields(s, s->mod[m].halo, xv[m]);
            shard_halo_forward_begin(s->mod[m].halo, 2, xv[m]);
        }
    shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime());
    shard_sim_pass1(s, 1);
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].halo)
            shard_halo_forward_end(s->mod[m].halo, 2, xv[m]);
    if (s->n_ghost_rows > 2)
        shard_sim_ghost_rows(s);
    shard_sim_after_positions(s, force_rebuild);
    shard_sim_pass1(s, 0);
    shard_halo_field ex[SHARD_SIM_MAX_TERMS];
    shard_sim_exchange_begin(s, ex);
    shard_sim_pass2_inner(s);
    shard_sim_exchange_end(s, ex);
    s->contacts_local = shard_sim_pass2_rest(s);
    shard_integrate_accel(&s->p, s->f, s->scene.run.gravity);
    s->phys.f = s->f;
    shard_timer_stamp(&s->timer, s->ph_integrate, shard_wtime());
}

/* Every module that moves its bodies as wholes (matter.h): advance after the particles' kick and drift. */
static void shard_sim_advance(shard_sim *s)
{
    for (int m = 0; m < s->n_modules; m++)
        if (shard_sim_whole(s, m) && shard_sim_whole(s, m)->advance) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            shard_sim_whole(s, m)->advance(&mc, &s->svc);
            shard_timer_stamp(&s->timer, s->mod[m].phase, shard_wtime());
        }
}

/* Every module with a collision stage (matter.h, collision): between the first kick and the drift. */
static void shard_sim_collide(shard_sim *s)
{
    s->impulses.n = 0;
    for (int m = 0; m < s->n_modules; m++)
        if (shard_sim_collision(s, m)) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            shard_error e = {0};
            if (shard_sim_collision(s, m)->collide(&mc, &s->svc, &e))
                shard_fail_all(s->comm, e.code ? e.code : SHARD_EXIT_RUNTIME, e.msg);
            shard_timer_stamp(&s->timer, s->mod[m].phase, shard_wtime());
        }
}

void shard_sim_settle(shard_sim *s, int kick)
{
    s->phys.f = s->f;
    for (int m = 0; m < s->n_modules; m++)
        if (shard_sim_whole(s, m) && shard_sim_whole(s, m)->settle) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            shard_sim_whole(s, m)->settle(&mc, &s->svc, kick);
            shard_timer_stamp(&s->timer, s->mod[m].phase, shard_wtime());
        }
}

/* Prescribed velocities over time windows (bodies[i].prescribed[k].start, end): which hold each particle of such
 * a body is decided at the start of every step, from its rest position and the step's time (the same on every
 * rank; flags and vpres are state, so a restart continues with them). */
static void shard_sim_timed_constraints(shard_sim *s)
{
    if (!s->any_timed)
        return;
    shard_particles *p = &s->p;
    double t = shard_sim_now(s);
    for (size_t i = 0; i < p->n_owned; i++)
        if (s->timed[p->body[i]])
            shard_sample_constraints(&s->scene.bodies[p->body[i]], p->X + 3 * i, p->x + 3 * i, t, p->vpres + 3 * i,
                                     &p->flags[i]);
}

/* Half a kick, v += dt/2 a [Integrate]; the first of a step sets the time the collide and advance hooks see (the
 * start of the step). */
static void shard_sim_kick(shard_sim *s, int first)
{
    shard_integrate_kick(&s->p, 0.5 * s->dt);
    if (first)
        s->phys.t = shard_sim_now(s);
    shard_timer_stamp(&s->timer, s->ph_integrate, shard_wtime());
}

/* The drift, x += dt v [Integrate]. */
static void shard_sim_drift(shard_sim *s)
{
    shard_integrate_drift(&s->p, s->dt);
    s->phys.dt_motion = s->dt;
    shard_timer_stamp(&s->timer, s->ph_integrate, shard_wtime());
}

void shard_sim_step(shard_sim *s)
{
    shard_timer_stamp(&s->timer, s->ph_other, shard_wtime());
    shard_sim_timed_constraints(s); /* prescribed velocities of this step's time windows */
    shard_sim_kick(s, 1);
    shard_sim_collide(s); /* [the colliding kinds' phases] */
    shard_sim_drift(s);
    shard_sim_advance(s); /* [the whole-body kinds' phases: Rigid] */
    s->step++;            /* the positions are the next step's */
    s->phys.step = s->step;
    shard_sim_forces(s, 0); /* [Comm, Neigh, the force terms' phases, Integrate] */
    shard_sim_kick(s, 0);
    shard_sim_settle(s, 1); /* [the whole-body kinds' phases] */
    shard_sim_fracture(s);  /* [Fracture] */
}

shard_diag shard_sim_diagnostics(shard_sim *s)
{
    const shard_particles *p = &s->p;
    enum { KIN = 0, ELASTIC, MOM, N_ACC = MOM + 3 };
    shard_xsum acc[N_ACC];
    for (int k = 0; k < N_ACC; k++)
        shard_xsum_init(&acc[k]);
    double vmax = 0.0;
    for (size_t i = 0; i < p->n_owned; i++) {
        const double *vi = p->v + 3 * i;
        double v2 = vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2];
        vmax = fmax(vmax, v2);
        const shard_matter_whole *wh = s->mod[s->body_module[p->body[i]]].def->whole;
        if (wh && wh->body_diag) /* its bodies count whole, below */
            continue;
        shard_xsum_add(&acc[KIN], 0.5 * p->mass[i] * v2);
        for (int k = 0; k < 3; k++)
            shard_xsum_add(&acc[MOM + k], p->mass[i] * vi[k]);
    }
    for (int k = 0; k < s->n_terms; k++)
        if (s->term[k].def->energy) {
            shard_sim_term *t = &s->term[k];
            /* the latest memory (the last evaluation's, or the checkpoint's right after a restart) */
            t->ctx.memory_in = t->def->memory_width > 0 ? &t->memory[t->cur] : NULL;
            t->def->energy(&t->ctx, &acc[ELASTIC]);
        }
    /* Bodies that move as wholes: their state is the same on every rank, so one rank adds it. */
    for (int m = 0; m < s->n_modules && shard_comm_rank(s->comm) == 0; m++)
        if (shard_sim_whole(s, m) && shard_sim_whole(s, m)->body_diag) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            shard_sim_whole(s, m)->body_diag(&mc, &acc[KIN], &acc[MOM]);
        }
    shard_comm_xsum(s->comm, acc, N_ACC);
    shard_diag d = {.kinetic = shard_xsum_round(&acc[KIN]), .elastic = shard_xsum_round(&acc[ELASTIC])};
    for (int k = 0; k < 3; k++)
        d.momentum[k] = shard_xsum_round(&acc[MOM + k]);
    d.contacts = shard_comm_sum_i64(s->comm, s->contacts_local);
    d.max_speed = sqrt(shard_comm_max(s->comm, vmax));
    /* Inverted particles: how many, and where the one with the smallest global id is (its owner alone adds
     * its position and body into an exact sum, so every rank gets them bit for bit). */
    int64_t inverted = 0;
    size_t first = 0;
    for (int m = 0; m < s->n_modules; m++) {
        shard_sim_module *md = &s->mod[m];
        if (!md->def->inverted)
            continue;
        shard_matter_ctx mc = shard_sim_module_ctx(s, m);
        size_t f = 0, n = md->def->inverted(&mc, &f);
        if (n && (inverted == 0 || p->gid[f] < p->gid[first]))
            first = f;
        inverted += (int64_t)n;
    }
    d.inverted = shard_comm_sum_i64(s->comm, inverted);
    d.broken_bonds = s->frac.on ? shard_sim_broken_bonds(s) : 0;
    d.inverted_first = -1;
    if (d.inverted > 0) {
        double mine = inverted ? -(double)p->gid[first] : -INFINITY;
        double lowest = -shard_comm_max(s->comm, mine);
        int owner = inverted && -mine == lowest;
        double where[4] = {owner ? p->x[3 * first] : 0.0, owner ? p->x[3 * first + 1] : 0.0,
                           owner ? p->x[3 * first + 2] : 0.0, owner ? (double)p->body[first] : 0.0};
        double got[4];
        shard_comm_sum_exact(s->comm, where, owner ? 1 : 0, 4, got);
        d.inverted_first = (int64_t)lowest;
        memcpy(d.inverted_x, got, sizeof d.inverted_x);
        d.inverted_body = (int)got[3];
    }
    return d;
}
