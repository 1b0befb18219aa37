/* The run's matter modules and force terms from the scene and the tables, all from scene data alone (the
 * same on every rank, no communication): each body's module, the merged force table, the per-body state, the
 * time step and the number of steps, the contact distances, and the force terms' memories as checkpoint lists.
 */
#include "sim_impl.h"

#include "shard/sample.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The module of every body (the scene's reader found it from its `kind`, in the same table), and what a kind's
 * bodies cannot have.  Every rank sees the same scene, so the verdict needs no communication. */
static int shard_sim_resolve_kinds(shard_sim *s, const shard_sim_tables *t, shard_error *err)
{
    const shard_scene *sc = &s->scene;
    s->body_module = shard_calloc((size_t)sc->n_bodies + 1, sizeof *s->body_module);
    for (int b = 0; b < sc->n_bodies; b++)
        s->body_module[b] = sc->bodies[b].module;
    /* Breaking and notches need bonds: a body of a kind without them cannot have either. */
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_body_def *bd = &sc->bodies[b];
        const shard_matter *m = t->modules[s->body_module[b]];
        int bonds = m->bond_radius && m->bond_radius(sc, b) > 0.0;
        const shard_material *mat = &sc->materials[bd->material];
        if (mat->fracture.criterion != SHARD_FRACTURE_NONE && (!bonds || !m->fracture))
            return shard_error_at(err, sc->path, &mat->fracture.loc,
                                  "body '%s' is of kind '%s', whose particles have no bonds to break: a material "
                                  "with a fracture rule needs a kind with bonds (solid)",
                                  bd->name, m->kind);
        if (bd->n_notches > 0 && !bonds)
            return shard_error_at(err, sc->path, &bd->notches[0].loc,
                                  "body '%s' is of kind '%s', whose particles have no bonds: a notch cuts bonds",
                                  bd->name, m->kind);
    }
    _Static_assert(SHARD_MATTER_MAX <= SHARD_CHECKPOINT_MAX_SECTIONS, "a checkpoint section for every module");
    if (t->n_modules > SHARD_MATTER_MAX)
        shard_fatal(SHARD_EXIT_INTERNAL, "%d matter modules: a run holds at most %d (SHARD_MATTER_MAX)", t->n_modules,
                    SHARD_MATTER_MAX);
    s->n_modules = t->n_modules;
    s->mod = shard_calloc((size_t)t->n_modules, sizeof *s->mod);
    for (int m = 0; m < t->n_modules; m++) {
        shard_sim_module *md = &s->mod[m];
        md->def = t->modules[m];
        shard_block_init(&md->block, md->def->rows, md->def->n_rows);
        md->bodies = shard_calloc((size_t)sc->n_bodies + 1, md->def->body_bytes ? md->def->body_bytes : 1);
        md->state = md->def->state_bytes ? shard_calloc(1, md->def->state_bytes) : NULL;
        md->phase = -1;
        for (int b = 0; b < sc->n_bodies; b++)
            md->used |= s->body_module[b] == m;
    }
    /* Bodies whose module resolves their contacts: the common contact terms leave their pairs to it. */
    s->own_contact = shard_calloc((size_t)sc->n_bodies + 1, sizeof *s->own_contact);
    for (int b = 0; b < sc->n_bodies; b++)
        s->own_contact[b] = (t->modules[s->body_module[b]]->flags & SHARD_MATTER_OWN_CONTACT) != 0;
    /* The relaxation stage moves particles by their forces alone: a kind that moves its particles itself has no
     * place in it. */
    for (int b = 0; b < sc->n_bodies && sc->relax.enabled; b++)
        if (t->modules[s->body_module[b]]->flags & SHARD_MATTER_SLAVED)
            return shard_error_at(err, sc->path, &sc->relax.loc,
                                  "body '%s' is of kind '%s', which the relax stage cannot move: relax a scene "
                                  "of deformable bodies only",
                                  sc->bodies[b].name, sc->bodies[b].kind);
    return 0;
}

shard_matter_ctx shard_sim_module_ctx(shard_sim *s, int m)
{
    return (shard_matter_ctx){
        .ph = &s->phys, .block = &s->mod[m].block, .bodies = s->mod[m].bodies, .state = s->mod[m].state};
}

shard_halo_field shard_sim_block_field(shard_sim_module *md, int row)
{
    shard_block *b = &md->block;
    const shard_field_desc *d = &b->rows[row];
    return (shard_halo_field){
        .data = shard_field_array(b, d), .ncomp = d->ncomp, .send_base = b->first, .recv_at = b->n_owned};
}

/* The merged force table: every module's terms and the common ones, by order (ties keep table order: module
 * terms in module order, then common terms).  Two-pass terms run before the one-pass terms of a step, so
 * their orders must come first. */
static void shard_sim_merge_terms(shard_sim *s, const shard_sim_tables *t)
{
    int n = t->n_terms;
    for (int m = 0; m < s->n_modules; m++)
        n += s->mod[m].def->n_terms;
    if (n > SHARD_SIM_MAX_TERMS)
        shard_fatal(SHARD_EXIT_INTERNAL, "%d force terms: at most %d (SHARD_SIM_MAX_TERMS)", n, SHARD_SIM_MAX_TERMS);
    s->term = shard_calloc((size_t)n + 1, sizeof *s->term);
    int k = 0;
    for (int m = 0; m < s->n_modules; m++)
        for (int q = 0; q < s->mod[m].def->n_terms; q++)
            s->term[k++] = (shard_sim_term){.def = s->mod[m].def->terms[q], .module = m};
    for (int q = 0; q < t->n_terms; q++)
        s->term[k++] = (shard_sim_term){.def = t->terms[q], .module = -1};
    s->n_terms = n;
    /* Insertion sort: stable, and the table is a handful of rows. */
    for (int i = 1; i < n; i++) {
        shard_sim_term x = s->term[i];
        int j = i - 1;
        while (j >= 0 && s->term[j].def->order > x.def->order) {
            s->term[j + 1] = s->term[j];
            j--;
        }
        s->term[j + 1] = x;
    }
    int last_two_pass = -1, first_one_pass = n;
    for (int i = 0; i < n; i++) {
        if (s->term[i].def->pass1)
            last_two_pass = i;
        else if (first_one_pass == n)
            first_one_pass = i;
    }
    for (int i = 0; i < n; i++) {
        shard_sim_term *tm = &s->term[i];
        if (tm->def->memory_width > 0 && tm->def->pass1)
            shard_fatal(SHARD_EXIT_INTERNAL, "force term '%s': a memory is for one-pass terms", tm->def->name);
        shard_pairlist_init(&tm->memory[0], tm->def->memory_width);
        shard_pairlist_init(&tm->memory[1], tm->def->memory_width);
    }
    if (last_two_pass > first_one_pass)
        shard_fatal(SHARD_EXIT_INTERNAL,
                    "force term '%s' has two passes but comes after the one-pass term '%s' in "
                    "the force order",
                    s->term[last_two_pass].def->name, s->term[first_one_pass].def->name);
}

/* Per-body state of the modules (their own bodies) and of the common terms (every body). */
static int shard_sim_body_state(shard_sim *s, shard_error *err)
{
    const shard_scene *sc = &s->scene;
    for (int b = 0; b < sc->n_bodies; b++) {
        shard_sim_module *md = shard_sim_module_of(s, b);
        if (md->def->body_init && md->def->body_init(sc, b, (char *)md->bodies + md->def->body_bytes * (size_t)b, err))
            return err->code;
    }
    for (int k = 0; k < s->n_terms; k++) {
        shard_sim_term *t = &s->term[k];
        if (t->module >= 0)
            continue;
        t->own_bodies = shard_calloc((size_t)sc->n_bodies + 1, t->def->body_bytes ? t->def->body_bytes : 1);
        for (int b = 0; b < sc->n_bodies && t->def->body_init; b++)
            if (t->def->body_init(sc, b, (char *)t->own_bodies + t->def->body_bytes * (size_t)b, err))
                return err->code;
    }
    return 0;
}

int shard_sim_modules_build(shard_sim *s, const shard_sim_tables *t, shard_error *err)
{
    int rc = shard_sim_resolve_kinds(s, t, err);
    if (!rc) {
        shard_sim_merge_terms(s, t);
        rc = shard_sim_body_state(s, err);
    }
    return rc;
}

double shard_sim_step_limit(const shard_sim *s, int modules, const char **why_out, int *limit_body)
{
    const shard_scene *sc = &s->scene;
    double best = INFINITY;
    const char *why = "none";
    *limit_body = -1;
    for (int b = 0; b < sc->n_bodies && modules; b++) {
        const shard_sim_module *md = shard_sim_module_of((shard_sim *)s, b);
        if (!md->def->dt_limit)
            continue;
        double d = md->def->dt_limit(sc, b, (char *)md->bodies + md->def->body_bytes * (size_t)b);
        if (d < best || (isnan(d) && *limit_body < 0))
            best = d, why = md->def->dt_name, *limit_body = b;
    }
    for (int k = 0; k < s->n_terms; k++) {
        const shard_sim_term *t = &s->term[k];
        if (t->module >= 0 || !t->def->dt_limit)
            continue;
        for (int b = 0; b < sc->n_bodies; b++) {
            /* A module that resolves its bodies' contacts sets their step; their particles touch other kinds'
             * through this term, whose own bodies' limits cover that contact (the lighter side sets it). */
            if (s->own_contact && s->own_contact[b])
                continue;
            double d = t->def->dt_limit(sc, b, (char *)t->own_bodies + t->def->body_bytes * (size_t)b);
            if (d < best || (isnan(d) && *limit_body < 0))
                best = d, why = t->def->dt_name, *limit_body = b;
        }
    }
    *why_out = why;
    return best;
}

/* The time step from scene data alone (identical on every rank, no reduction needed): the smallest limit,
 * times run.dt_safety.  *limit_body is the body whose limit set it (-1: given). */
static void shard_sim_time_step(shard_sim *s, int *limit_body)
{
    const shard_scene *sc = &s->scene;
    const char *why;
    double best = shard_sim_step_limit(s, 1, &why, limit_body);
    if (sc->run.dt > 0.0) {
        s->dt = sc->run.dt;
        s->dt_limit = "given";
        *limit_body = -1;
    } else {
        s->dt = sc->run.dt_safety * best;
        s->dt_limit = why;
    }
}

/* The time step and the number of steps, refused when they cannot make a run: a step that is not a positive
 * normal number (a density of 1e-300, an E of 1e300, a dt_safety of 1e-300), an end time shorter than one step,
 * or more than SHARD_MAX_STEPS steps.  The message names the key that caused it: the command-line option
 * (exit 2) or the scene key (exit 3). */
int shard_sim_plan_steps(shard_sim *s, const shard_overrides *ov, shard_error *err)
{
    const shard_scene *sc = &s->scene;
    int limit_body;
    shard_sim_time_step(s, &limit_body);
    if (!(s->dt >= DBL_MIN) || !isfinite(s->dt)) {
        char dt[40];
        if (isnan(s->dt))
            snprintf(dt, sizeof dt, "not a number");
        else
            snprintf(dt, sizeof dt, "%g s", s->dt);
        if (ov->dt > 0.0)
            return shard_error_set(err, SHARD_EXIT_USAGE, "--dt: %s is not a usable time step", dt);
        if (limit_body < 0)
            return shard_error_at(err, sc->path, &sc->run.dt_loc, "%s is not a usable time step", dt);
        const shard_body_def *bd = &sc->bodies[limit_body];
        const shard_material *m = &sc->materials[bd->material];
        return shard_error_at(err, sc->path, &m->loc,
                              "the time step body '%s' allows (%s limit, times run.dt_safety %g) is %s, which "
                              "cannot run: check the body's spacing (%g m) and the material's density (%g kg/m^3), E "
                              "(%g Pa), volume_stiffness (%g Pa) and contact.stiffness (%s%g N/m) for their units",
                              bd->name, s->dt_limit, sc->run.dt_safety, dt, bd->spacing, m->density, m->E,
                              m->volume_stiffness, m->contact_stiffness > 0 ? "" : "auto ", m->contact_stiffness);
    }
    if (sc->run.steps > 0) {
        s->total_steps = sc->run.steps;
        if (sc->run.steps > SHARD_MAX_STEPS)
            return ov->steps > 0 ? shard_error_set(err, SHARD_EXIT_USAGE,
                                                   "--steps: %ld steps, more than the %lld a "
                                                   "run may take",
                                                   sc->run.steps, (long long)SHARD_MAX_STEPS)
                                 : shard_error_at(err, sc->path, &sc->run.steps_loc,
                                                  "%ld steps, more than the %lld a "
                                                  "run may take",
                                                  sc->run.steps, (long long)SHARD_MAX_STEPS);
        return 0;
    }
    double n = sc->run.end_time / s->dt;
    const char *opt = ov->dt > 0.0 ? "--dt" : ov->until >= 0.0 ? "--until" : NULL;
    char why[160];
    if (limit_body >= 0)
        snprintf(why, sizeof why, "an end time of %g s at a time step of %g s (%s limit times run.dt_safety %g)",
                 sc->run.end_time, s->dt, s->dt_limit, sc->run.dt_safety);
    else
        snprintf(why, sizeof why, "an end time of %g s at a time step of %g s (given)", sc->run.end_time, s->dt);
    if (!(n <= (double)SHARD_MAX_STEPS)) {
        if (opt)
            return shard_error_set(err, SHARD_EXIT_USAGE, "%s: %s is %.3g steps, more than the %lld a run may take",
                                   opt, why, n, (long long)SHARD_MAX_STEPS);
        return shard_error_at(err, sc->path, &sc->run.end_time_loc,
                              "%s is %.3g steps, more than the %lld a run "
                              "may take",
                              why, n, (long long)SHARD_MAX_STEPS);
    }
    if (n < 1.0 - 1e-9) {
        if (opt)
            return shard_error_set(err, SHARD_EXIT_USAGE, "%s: %s is shorter than one step", opt, why);
        return shard_error_at(err, sc->path, &sc->run.end_time_loc, "%s is shorter than one step", why);
    }
    s->total_steps = (long)ceil(n - 1e-9);
    return 0;
}

/* Adds the particle-store row `name` to what the contact ghosts get (once). */
static void shard_sim_add_ghost_row(shard_sim *s, const char *name)
{
    const shard_field_desc *row = shard_particles_row(name);
    if (!row || row->type != SHARD_TYPE_F64)
        shard_fatal(SHARD_EXIT_INTERNAL,
                    "a force term reads the row '%s' at ghosts, which the particle store has not "
                    "(as doubles)",
                    name);
    for (int k = 0; k < s->n_ghost_rows; k++)
        if (s->ghost_rows[k] == row)
            return;
    if (s->n_ghost_rows >= SHARD_GHOSTS_MAX_ROWS)
        shard_fatal(SHARD_EXIT_INTERNAL, "more than %d rows forwarded to contact ghosts", SHARD_GHOSTS_MAX_ROWS);
    s->ghost_rows[s->n_ghost_rows++] = row;
}

/* Contact distances: each body's largest contact radius and candidate reach over the terms that have one, the
 * skin (in units of the smallest spacing) and the contact-ghost cutoff (from the reach); what the contact ghosts
 * get in a forward (x, v and the rows terms read at ghosts). */
void shard_sim_contact_range(shard_sim *s)
{
    s->n_ghost_rows = 0;
    shard_sim_add_ghost_row(s, "position");
    shard_sim_add_ghost_row(s, "velocity");
    const shard_scene *sc = &s->scene;
    s->contact_radius = shard_calloc((size_t)sc->n_bodies + 1, sizeof *s->contact_radius);
    s->reach_radius = shard_calloc((size_t)sc->n_bodies + 1, sizeof *s->reach_radius);
    double min_spacing = INFINITY, max_radius = 0.0;
    for (int b = 0; b < sc->n_bodies; b++) {
        min_spacing = fmin(min_spacing, sc->bodies[b].spacing);
        for (int k = 0; k < s->n_terms; k++) {
            const shard_sim_term *t = &s->term[k];
            if (t->module < 0 && t->def->contact_radius) {
                const void *bs = (char *)t->own_bodies + t->def->body_bytes * (size_t)b;
                double r = t->def->contact_radius(bs);
                s->contact_radius[b] = fmax(s->contact_radius[b], r);
                double reach = t->def->candidate_radius ? t->def->candidate_radius(bs) : r;
                s->reach_radius[b] = fmax(s->reach_radius[b], reach);
                if (t->def->ghost_row && t->def->ghost_row_used && t->def->ghost_row_used(bs))
                    shard_sim_add_ghost_row(s, t->def->ghost_row);
            }
        }
        max_radius = fmax(max_radius, s->reach_radius[b]);
    }
    s->skin = sc->run.skin * min_spacing;
    s->cutoff = 2.0 * max_radius + s->skin;
    /* Modules that need their particles within a reach (cloth collisions): the ghosts' age and one step's
     * motion, a skin each (matter.h, contact_reach). */
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_sim_module *md = shard_sim_module_of(s, b);
        if (md->def->contact_reach)
            s->cutoff =
                fmax(s->cutoff, md->def->contact_reach(sc, b, (char *)md->bodies + md->def->body_bytes * (size_t)b) +
                                    2.0 * s->skin);
    }
    /* The domain a run can hold: 2^40 spacings either way keeps every cell list far below SHARD_DOMAIN_CELLS. */
    s->domain = shard_sample_domain(sc);
}

/* Appends term ft's memory (if it has one) as list *n. */
static void shard_sim_memory_desc(const shard_force_term *ft, shard_checkpoint_list *lists, shard_pairlist *shapes,
                                  int *n)
{
    if (ft->memory_width <= 0 || *n >= SHARD_CHECKPOINT_MAX_LISTS)
        return;
    shard_pairlist_init(&shapes[*n], ft->memory_width);
    lists[*n] = (shard_checkpoint_list){.name = ft->memory_name, .list = &shapes[*n]};
    (*n)++;
}

int shard_sim_memory_descs(const shard_sim_tables *t, shard_checkpoint_list *lists, shard_pairlist *shapes)
{
    int n = 0;
    for (int m = 0; m < t->n_modules; m++)
        for (int q = 0; q < t->modules[m]->n_terms; q++)
            shard_sim_memory_desc(t->modules[m]->terms[q], lists, shapes, &n);
    for (int q = 0; q < t->n_terms; q++)
        shard_sim_memory_desc(t->terms[q], lists, shapes, &n);
    return n;
}

int shard_sim_memory_terms(shard_sim *s, const shard_checkpoint_list *lists, int n, shard_sim_term **out)
{
    for (int q = 0; q < n; q++) {
        out[q] = NULL;
        for (int k = 0; k < s->n_terms; k++)
            if (s->term[k].def->memory_width > 0 && strcmp(s->term[k].def->memory_name, lists[q].name) == 0)
                out[q] = &s->term[k];
    }
    return n;
}

const shard_sim_tables *shard_sim_default_tables(const shard_sim_tables *t, shard_sim_tables *buf)
{
    *buf = t ? *t : (shard_sim_tables){0};
    if (!buf->modules)
        buf->modules = shard_matter_table(&buf->n_modules);
    if (!buf->terms)
        buf->terms = shard_force_table(&buf->n_terms);
    return buf;
}
