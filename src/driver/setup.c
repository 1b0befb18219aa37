/* Start-up and restart (see run.h and docs/architecture.md, "From input to state hash").
 *
 * The order: rank 0 reads the scene (or the checkpoint) and broadcasts the text; every rank parses it and
 * gives each body its matter module; the modules and the common force terms compute their per-body state and
 * the time step; rank 0 samples and bonds the bodies (or takes the checkpoint's state); METIS partitions and
 * every rank receives its particles, grouped by module; each module precomputes; the first force evaluation
 * runs through the same path as every step.  Every check that can fail is made before anything is written,
 * and every verdict is shared, so bad input ends the run on every rank with one message.
 */
#include "sim_impl.h"

#include "shard/fileio.h"
#include "shard/geometry.h"
#include "shard/mesh_io.h"
#include "shard/partition.h"
#include "shard/sample.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

shard_overrides shard_default_overrides(void)
{
    return (shard_overrides){.steps = -1, .until = -1.0, .dt = -1.0, .out_dir = NULL, .restart = NULL,
                             .catalyst_every = 1};
}

int shard_sim_kind_of(const shard_scene *sc, const shard_sim_tables *t, int b, shard_error *err)
{
    int m = shard_matter_find(t->modules, t->n_modules, sc->bodies[b].kind);
    if (m >= 0)
        return m;
    char known[256] = "";
    size_t used = 0;
    for (int k = 0; k < t->n_modules; k++)
        shard_list_append(known, sizeof known, &used, t->modules[k]->kind);
    shard_error_at(err, sc->path, &sc->bodies[b].kind_loc, "unknown kind of matter '%s' (this build has: %s)",
                   sc->bodies[b].kind, known);
    return -1;
}

int shard_sim_load_meshes(shard_scene *sc, shard_error *err)
{
    for (int b = 0; b < sc->n_bodies; b++) {
        shard_body_def *bd = &sc->bodies[b];
        /* a solid's or rigid body's mesh bounds it; a surface's (cloth) may be open */
        int rc = shard_mesh_load_shape(&bd->shape, !SHARD_BODY_IS_SURFACE(bd), sc->path, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* The module of every body from its `kind`.  Every rank sees the same scene, so the verdict needs no
 * communication. */
static int shard_sim_resolve_kinds(shard_sim *s, const shard_sim_tables *t, shard_error *err)
{
    const shard_scene *sc = &s->scene;
    s->body_module = shard_calloc((size_t)sc->n_bodies + 1, sizeof *s->body_module);
    for (int b = 0; b < sc->n_bodies; b++)
        if ((s->body_module[b] = shard_sim_kind_of(sc, t, b, err)) < 0)
            return err->code;
    /* Breaking and notches need bonds: a body of a kind without them cannot have either. */
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_body_def *bd = &sc->bodies[b];
        const shard_matter *m = t->modules[s->body_module[b]];
        int bonds = m->bond_radius && m->bond_radius(sc, b) > 0.0;
        const shard_material *mat = &sc->materials[bd->material];
        if (mat->fracture.criterion != SHARD_FRACTURE_NONE && (!bonds || !m->break_bonds))
            return shard_error_at(err, sc->path, &mat->fracture.loc,
                                  "body '%s' is of kind '%s', whose particles have no bonds to break: a material "
                                  "with a fracture rule needs a kind with bonds (solid)", bd->name, m->kind);
        if (bd->motion_loc.line > 0 && !(m->flags & SHARD_MATTER_SLAVED))
            return shard_error_at(err, sc->path, &bd->motion_loc,
                                  "body '%s' is of kind '%s': `motion` is for bodies that move as wholes (kind: "
                                  "rigid)", bd->name, m->kind);
        int surface = (m->flags & SHARD_MATTER_SURFACE) != 0;
        if (SHARD_BODY_IS_SURFACE(bd) != surface)
            return shard_error_at(err, sc->path, &bd->shape.loc,
                                  surface ? "body '%s' is of kind '%s', a surface: its shape must be a `grid`, or a "
                                            "`mesh` with a `thickness`"
                                          : "body '%s' is of kind '%s', but its shape is a surface (a `grid`, or a "
                                            "`mesh` with a `thickness`): surfaces are cloth (kind: cloth)",
                                  bd->name, m->kind);
        if (bd->n_notches > 0 && !bonds)
            return shard_error_at(err, sc->path, &bd->notches[0].loc,
                                  "body '%s' is of kind '%s', whose particles have no bonds: a notch cuts bonds",
                                  bd->name, m->kind);
    }
    if (t->n_modules > SHARD_CHECKPOINT_MAX_SECTIONS)
        shard_fatal(SHARD_EXIT_INTERNAL, "%d matter modules: a checkpoint holds at most %d sections", t->n_modules,
                    SHARD_CHECKPOINT_MAX_SECTIONS);
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
                                  "of deformable bodies only", sc->bodies[b].name, sc->bodies[b].kind);
    return 0;
}

shard_matter_ctx shard_sim_module_ctx(shard_sim *s, int m)
{
    return (shard_matter_ctx){.ph = &s->phys, .block = &s->mod[m].block, .bodies = s->mod[m].bodies,
                              .state = s->mod[m].state};
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
        shard_fatal(SHARD_EXIT_INTERNAL, "force term '%s' has two passes but comes after the one-pass term '%s' in "
                    "the force order", s->term[last_two_pass].def->name, s->term[first_one_pass].def->name);
}

/* Per-body state of the modules (their own bodies) and of the common terms (every body). */
static int shard_sim_body_state(shard_sim *s, shard_error *err)
{
    const shard_scene *sc = &s->scene;
    for (int b = 0; b < sc->n_bodies; b++) {
        shard_sim_module *md = shard_sim_module_of(s, b);
        if (md->def->body_init &&
            md->def->body_init(sc, b, (char *)md->bodies + md->def->body_bytes * (size_t)b, err))
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
static int shard_sim_plan_steps(shard_sim *s, const shard_overrides *ov, shard_error *err)
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
            return ov->steps > 0 ? shard_error_set(err, SHARD_EXIT_USAGE, "--steps: %ld steps, more than the %lld a "
                                                   "run may take", sc->run.steps, (long long)SHARD_MAX_STEPS)
                                 : shard_error_at(err, sc->path, &sc->run.steps_loc, "%ld steps, more than the %lld a "
                                                  "run may take", sc->run.steps, (long long)SHARD_MAX_STEPS);
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
        return shard_error_at(err, sc->path, &sc->run.end_time_loc, "%s is %.3g steps, more than the %lld a run "
                              "may take", why, n, (long long)SHARD_MAX_STEPS);
    }
    if (n < 1.0 - 1e-9) {
        if (opt)
            return shard_error_set(err, SHARD_EXIT_USAGE, "%s: %s is shorter than one step", opt, why);
        return shard_error_at(err, sc->path, &sc->run.end_time_loc, "%s is shorter than one step", why);
    }
    s->total_steps = (long)ceil(n - 1e-9);
    return 0;
}

static int shard_sim_apply_overrides(shard_scene *sc, const shard_overrides *ov, shard_error *err)
{
    if (ov->steps >= 0) {
        sc->run.steps = ov->steps;
        sc->run.end_time = 0.0;
    }
    if (ov->until >= 0.0) {
        sc->run.end_time = ov->until;
        sc->run.steps = 0;
    }
    if (ov->dt > 0.0)
        sc->run.dt = ov->dt;
    if (ov->out_dir) {
        if (strlen(ov->out_dir) >= sizeof sc->run.output_dir)
            return shard_error_set(err, SHARD_EXIT_USAGE, "--out: path too long");
        snprintf(sc->run.output_dir, sizeof sc->run.output_dir, "%s", ov->out_dir);
    }
    return 0;
}

/* Contact distances: each body's largest contact radius and candidate reach over the terms that have one, the
 * skin (in units of the smallest spacing) and the contact-ghost cutoff (from the reach). */
static void shard_sim_contact_range(shard_sim *s)
{
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
                if (t->def->uses_normals && t->def->uses_normals(bs))
                    s->normals = 1;
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
            s->cutoff = fmax(s->cutoff, md->def->contact_reach(sc, b, (char *)md->bodies + md->def->body_bytes *
                                                                                               (size_t)b) +
                                            2.0 * s->skin);
    }
    /* The domain a run can hold: 2^40 spacings either way keeps every cell list far below SHARD_DOMAIN_CELLS. */
    s->domain = shard_sample_domain(sc);
}

/* Every rank of a restart: its range of the loaded state must fit the scene it is restarted with (the first
 * failure in id order is the lowest failing rank's first, which shard_comm_any_error passes on). */
static int shard_sim_check_restart(const shard_sim *s, const shard_checkpoint_data *ck, const char *ck_path,
                                   shard_error *err)
{
    if (ck->dt != s->dt)
        return shard_error_set(err, SHARD_EXIT_INPUT,
                               "%s: written with the time step %.17g s, but this run's is %.17g s (a different "
                               "--dt?); a restart continues with the same time step",
                               ck_path, ck->dt, s->dt);
    for (int64_t i = 0; i < ck->n_local; i++) {
        int b = ck->p.body[i];
        if (b < 0 || b >= s->scene.n_bodies)
            return shard_error_set(err, SHARD_EXIT_INPUT, "%s: particle %lld belongs to body %d, but the scene has "
                                   "%d bodies", ck_path, (long long)(ck->first + i), b, s->scene.n_bodies);
        /* A module with state rows must hold each of its particles in its section, and no other. */
        int m = s->body_module[b], stateful = 0;
        for (int r = 0; r < s->mod[m].block.n_rows; r++)
            stateful |= (s->mod[m].block.rows[r].flags & SHARD_FIELD_STATE) != 0;
        int want = stateful ? m : -1;
        if (ck->section_of[i] != want)
            return shard_error_set(err, SHARD_EXIT_INPUT, "%s: particle %lld (body '%s', kind %s) is %s section "
                                   "/%s", ck_path, (long long)(ck->first + i), s->scene.bodies[b].name, s->scene.bodies[b].kind,
                                   want >= 0 ? "missing from" : "in", want >= 0 ? s->mod[m].def->kind :
                                   ck->section_of[i] >= 0 ? s->mod[ck->section_of[i]].def->kind : "?");
    }
    return 0;
}

/* The sections of the checkpoint: one per module, in module order (the writer skips those without a STATE
 * row). */
static void shard_sim_sections(const shard_sim *s, shard_checkpoint_section *sec)
{
    for (int m = 0; m < s->n_modules; m++)
        sec[m] = (shard_checkpoint_section){.name = s->mod[m].def->kind, .block = &s->mod[m].block};
}

/* Splits each module's owned particles into those whose bond partners are all owned (computable while a halo
 * exchange is in flight) and the others. */
static void shard_sim_split_owned(shard_sim *s)
{
    for (int m = 0; m < s->n_modules; m++) {
        shard_sim_module *md = &s->mod[m];
        const shard_block *b = &md->block;
        md->inner = shard_realloc(md->inner, (b->n_owned + 1) * sizeof *md->inner);
        md->outer = shard_realloc(md->outer, (b->n_owned + 1) * sizeof *md->outer);
        md->n_inner = md->n_outer = 0;
        for (size_t i = b->first; i < b->first + b->n_owned; i++) {
            int ghost = 0;
            for (int64_t e = s->bonds.start[i]; e < s->bonds.start[i + 1] && !ghost; e++)
                ghost = (size_t)s->bonds.idx[e] >= s->p.n_owned;
            if (ghost)
                md->outer[md->n_outer++] = (int32_t)i;
            else
                md->inner[md->n_inner++] = (int32_t)i;
        }
    }
}

void shard_sim_masses(shard_sim *s)
{
    /* Each particle stands for one lattice cell of its body (see docs/architecture.md for why not the
     * kernel-density estimate of the paper's §2.6). */
    const shard_scene *sc = &s->scene;
    shard_particles *p = &s->p;
    for (size_t i = 0; i < p->n_local; i++) {
        int b = p->body[i];
        const shard_body_def *bd = &sc->bodies[b];
        const shard_sim_module *md = &s->mod[s->body_module[b]];
        double vol = bd->spacing * bd->spacing * bd->spacing;
        if (md->def->particle_volume) /* a surface's vertices: their share of its area x thickness */
            vol = md->def->particle_volume(sc, b, p->gid[i] - s->body_first[b],
                                           (const char *)md->bodies + (size_t)b * md->def->body_bytes);
        p->volume[i] = vol;
        p->mass[i] = sc->materials[bd->material].density * vol;
    }
}

void shard_sim_prepare_local(shard_sim *s)
{
    s->phys.broken = s->bond_broken; /* a migration reallocates the flags */
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].def->prepare) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            s->mod[m].def->prepare(&mc);
        }
    if (s->fracture) /* a restart's broken bonds may have made particles bond-based */
        shard_sim_fracture_sync(s);
    shard_sim_split_owned(s);
    shard_reserve((void **)&s->f, &s->f_cap, 3 * s->p.n_owned + 3, sizeof *s->f);
}

/* The hooks' views and the timer phases (Neigh first, then the force terms' phases in force order, then the
 * driver's own: the timing table reads in the order of a step). */
static void shard_sim_wire(shard_sim *s)
{
    s->phys = (shard_phys){.scene = &s->scene, .p = &s->p, .bonds = s->fracture ? &s->active : &s->bonds,
                           .ref_bonds = &s->bonds, .broken = s->bond_broken, .cand = &s->cand, .dt = s->dt,
                           .own_contact = s->own_contact, .body_first = s->body_first, .impulses = NULL,
                           .reach_slack = 0.5 * s->skin};
    /* the impulses' hand-over only where some kind in the scene has a collision stage (none: no collective) */
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].def->collide && s->mod[m].used)
            s->phys.impulses = &s->impulses;
    shard_sim_collective_init(s);
    memset(&s->timer, 0, sizeof s->timer);
    s->ph_neigh = shard_timer_phase(&s->timer, "Neigh");
    for (int k = 0; k < s->n_terms; k++) {
        shard_sim_term *t = &s->term[k];
        t->phase = shard_timer_phase(&s->timer, t->def->phase);
        if (t->module >= 0)
            t->ctx = shard_sim_module_ctx(s, t->module);
        else
            t->ctx = (shard_matter_ctx){.ph = &s->phys, .block = NULL, .bodies = t->own_bodies};
    }
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].def->phase && s->mod[m].used)
            s->mod[m].phase = shard_timer_phase(&s->timer, s->mod[m].def->phase);
    s->ph_comm = shard_timer_phase(&s->timer, "Comm");
    s->ph_integrate = shard_timer_phase(&s->timer, "Integrate");
    s->ph_io = shard_timer_phase(&s->timer, "I/O");
    s->ph_insitu = shard_timer_phase(&s->timer, "In-situ");
    s->ph_fracture = shard_timer_phase(&s->timer, "Fracture");
    s->ph_balance = shard_timer_phase(&s->timer, "Balance");
    s->ph_other = shard_timer_phase(&s->timer, "Other");
}

static int shard_sim_insitu_setup(shard_sim *s, const shard_overrides *ov, shard_error *err);

/* Output and checkpoint writers for the scene's sections (nothing is created on disk yet). */
static void shard_sim_io_setup(shard_sim *s)
{
    const shard_scene *sc = &s->scene;
    if (!sc->output.enabled && !sc->checkpoint.enabled)
        return;
#ifndef SHARD_HAVE_HDF5
    if (shard_comm_rank(s->comm) == 0) {
        fprintf(stderr, "shard: warning: %s asks for %s, but this shard was built without parallel HDF5: output "
                        "and checkpoints are disabled\n",
                sc->path, sc->output.enabled ? "output" : "checkpoints");
        fflush(stderr);
    }
    return;
#else
    if (sc->output.enabled) {
        s->out = shard_output_create(sc->output.dir[0] ? sc->output.dir : sc->run.output_dir, sc->path, sc->text,
                                     sc->text_len);
        if (s->restarted_at >= 0)
            shard_output_resume(s->out, s->comm, &sc->output.interval, s->restarted_at, s->dt);
    }
    if (sc->checkpoint.enabled)
        s->ckpt = shard_checkpoint_create(sc->checkpoint.dir[0] ? sc->checkpoint.dir : sc->run.output_dir,
                                          sc->checkpoint.keep);
#endif
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

static void shard_sim_release_share(void *share) { shard_share_free(share); }
static void shard_sim_release_checkpoint(void *ck) { shard_checkpoint_data_free(ck); }

/* Builds a simulation from scene text; ck (a restart: this rank's range of the checkpoint, every rank; NULL
 * otherwise) supplies the state instead of sampling.  Collective. */
static shard_sim *shard_sim_build(shard_comm *c, const char *path, const char *text, size_t len,
                                  const shard_overrides *ov, const shard_sim_tables *tables, int restart,
                                  shard_checkpoint_data *ck, shard_error *err)
{
    int rank = shard_comm_rank(c), size = shard_comm_size(c);
    memset(err, 0, sizeof *err);
    uint64_t n64 = len;
    shard_comm_bcast(c, &n64, sizeof n64, 0);
    char *buf = shard_malloc((size_t)n64 + 1);
    if (rank == 0)
        memcpy(buf, text, (size_t)n64);
    shard_comm_bcast(c, buf, (size_t)n64, 0);
    buf[n64] = '\0';

    shard_sim *s = shard_calloc(1, sizeof *s);
    s->comm = c;
    s->last_output = -1;
    s->restarted_at = -1;
    s->relax_steps = -1;
    s->frag_step = -1;
    s->balance_last = -1;
    s->dec_prev_step = -1;
    /* Every rank parses the same text and so reaches the same verdict: no communication needed. */
    int rc = shard_scene_parse(path, buf, (size_t)n64, &s->scene, err);
    free(buf);
    if (!rc)
        rc = shard_sim_apply_overrides(&s->scene, ov, err);
    if (!rc)
        rc = shard_sim_load_meshes(&s->scene, err);
    if (!rc)
        rc = shard_sim_resolve_kinds(s, tables, err);
    if (!rc) {
        shard_sim_merge_terms(s, tables);
        rc = shard_sim_body_state(s, err);
    }
    if (rc) {
        shard_sim_destroy(&s);
        return NULL;
    }
    shard_scene *sc = &s->scene;
    /* Absurd sizes first (a spacing of 1e-200 is a size problem before it is a time-step one). */
    if (shard_sample_check_sizes(sc, size, err) || shard_sim_plan_steps(s, ov, err)) {
        shard_sim_destroy(&s);
        return NULL;
    }
    shard_sim_contact_range(s);

    /* Every rank samples its share of the lattice planes (startup.c), or holds its range of the checkpoint's
     * particles; the verdicts on the input are agreed by all ranks. */
    shard_share share;
    memset(&share, 0, sizeof share);
    s->body_count = shard_calloc((size_t)sc->n_bodies + 1, sizeof *s->body_count);
    double t_sample = shard_wtime();
    if (!restart) {
        if (shard_sim_share_sample(s, &share, err)) {
            shard_sim_destroy(&s);
            return NULL;
        }
    } else {
        shard_sim_check_restart(s, ck, ov->restart, err);
        if (!err->code && (int64_t)size > ck->n)
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: the checkpoint has %lld particle(s), fewer than the %d "
                            "ranks it is restarted on", ov->restart, (long long)ck->n, size);
        if (shard_comm_any_error(c, err)) {
            shard_sim_destroy(&s);
            return NULL;
        }
        /* The share is the checkpoint's range, borrowed: its sections are in module order (shard_sim_sections). */
        share.p = ck->p;
        share.mod_rows = ck->blocks;
        share.bstart = ck->bonds.start;
        share.partner = ck->partner;
        share.broken = ck->broken;
        share.lists = ck->lists;
        s->n_global = ck->n;
        s->n_bonds_global = ck->n_bonds;
        for (int64_t i = 0; i < ck->n_local; i++)
            s->body_count[ck->p.body[i]]++;
        shard_comm_sum_i64s(c, s->body_count, (size_t)sc->n_bodies);
    }
    s->startup_seconds[0] = shard_wtime() - t_sample;
    s->timed = shard_calloc((size_t)sc->n_bodies + 1, sizeof *s->timed);
    for (int b = 0; b < sc->n_bodies; b++)
        s->any_timed |= s->timed[b] = (uint8_t)shard_sample_constraints_timed(&sc->bodies[b]);
    s->body_first = shard_malloc(((size_t)sc->n_bodies + 1) * sizeof *s->body_first);
    s->body_first[0] = 0;
    for (int b = 0; b < sc->n_bodies; b++)
        s->body_first[b + 1] = s->body_first[b] + s->body_count[b];
    if (restart) {
        s->step = s->restarted_at = s->last_output = ck->step;
        s->contacts_local = rank == 0 ? ck->contacts : 0;
        for (int m = 0; m < SHARD_CHECKPOINT_MAX_SECTIONS; m++) /* the distribution below frees ck */
            s->restart_blob[m] = ck->blob[m], s->restart_blob_bytes[m] = ck->blob_bytes[m], ck->blob[m] = NULL;
        /* A run that would end before the checkpoint's step has nothing to do: say so (every rank knows both). */
        if (s->total_steps < s->step) {
            if (ov->steps > 0 || ov->until >= 0.0)
                shard_error_set(err, SHARD_EXIT_USAGE, "%s: the run would end at step %ld, before the checkpoint's "
                                "step %ld (steps count from the start of the run: give more)",
                                ov->steps > 0 ? "--steps" : "--until", s->total_steps, s->step);
            else
                shard_error_at(err, sc->path, sc->run.steps > 0 ? &sc->run.steps_loc : &sc->run.end_time_loc,
                               "the run ends at step %ld, before step %ld of the checkpoint %s", s->total_steps,
                               s->step, ov->restart);
            shard_sim_destroy(&s);
            return NULL;
        }
    }

    /* A module has a halo when one of its bodies has bonds (the same verdict on every rank: scene data). */
    int *has_halo = shard_calloc((size_t)s->n_modules + 1, sizeof *has_halo);
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_matter *m = shard_sim_module_of(s, b)->def;
        if (m->bond_radius && m->bond_radius(sc, b) > 0.0)
            has_halo[s->body_module[b]] = 1;
    }
    for (int m = 0; m < s->n_modules; m++)
        s->mod[m].has_bonds = has_halo[m];
    shard_halo **halos = shard_calloc((size_t)s->n_modules + 1, sizeof *halos);
    /* The force terms' memories travel with the particles: empty at a start, the checkpoint's at a restart. */
    shard_checkpoint_list mem_desc[SHARD_CHECKPOINT_MAX_LISTS];
    shard_pairlist mem_shape[SHARD_CHECKPOINT_MAX_LISTS], mem_mine[SHARD_CHECKPOINT_MAX_LISTS];
    shard_sim_term **mem_term = s->mem_term; /* kept: checkpoints write the lists in this order */
    int n_mem = s->n_mem = shard_sim_memory_descs(tables, mem_desc, mem_shape);
    shard_sim_memory_terms(s, mem_desc, n_mem, mem_term);
    for (int q = 0; q < n_mem; q++) {
        mem_mine[q] = mem_term[q]->memory[mem_term[q]->cur];
    }
    shard_partition_kinds kinds = {.n_modules = s->n_modules, .body_module = s->body_module, .has_halo = has_halo,
                                   .n_lists = n_mem};
    shard_block *blocks = shard_calloc((size_t)s->n_modules + 1, sizeof *blocks);
    for (int m = 0; m < s->n_modules; m++)
        blocks[m] = s->mod[m].block;
    double t_part = shard_wtime();
    /* The share is freed (or the checkpoint range it borrows) once the store holds its rows. */
    rc = restart ? shard_sim_share_distribute(s, &share, shard_sim_release_checkpoint, ck, &kinds, blocks, halos,
                                              mem_mine, err)
                 : shard_sim_share_distribute(s, &share, shard_sim_release_share, &share, &kinds, blocks, halos,
                                              mem_mine, err);
    s->startup_seconds[1] = shard_wtime() - t_part;
    for (int q = 0; q < n_mem; q++)
        mem_term[q]->memory[mem_term[q]->cur] = mem_mine[q];
    for (int m = 0; m < s->n_modules; m++) {
        s->mod[m].block = blocks[m];
        s->mod[m].halo = halos[m];
    }
    free(blocks), free(halos), free(has_halo);
    if (rc) {
        shard_sim_destroy(&s);
        return NULL;
    }

    shard_particles *p = &s->p;
    shard_sim_masses(s);
    /* A particle that starts deeper inside an obstacle than its contact radius would be thrown out at any speed
     * the penalty gives it: a scene error.  Each rank measures its own particles; the deepest overlap of every
     * (body, obstacle) pair is reduced (a maximum: the same on every rank), and the first pair in scene order
     * that is too deep is named. */
    if (sc->n_obstacles > 0) {
        size_t nbo = (size_t)sc->n_bodies * (size_t)sc->n_obstacles;
        double *depth = shard_malloc((nbo + 1) * sizeof *depth);
        for (size_t k = 0; k < nbo; k++)
            depth[k] = -INFINITY;
        for (size_t i = 0; i < p->n_owned; i++)
            for (int o = 0; o < sc->n_obstacles; o++) {
                double n[3], d = -shard_obstacle_distance(&sc->obstacles[o], 0.0, p->x + 3 * i, n);
                double *dk = &depth[(size_t)p->body[i] * (size_t)sc->n_obstacles + (size_t)o];
                *dk = fmax(*dk, d);
            }
        shard_comm_max_doubles(c, depth, (int)nbo);
        for (int b = 0; b < sc->n_bodies && !err->code; b++)
            for (int o = 0; o < sc->n_obstacles && !err->code; o++) {
                double d = depth[(size_t)b * (size_t)sc->n_obstacles + (size_t)o];
                if (d > s->contact_radius[b])
                    shard_error_at(err, sc->path, &sc->bodies[b].loc,
                                   "body '%s' starts inside obstacle '%s' (up to %g m deep, more than its contact "
                                   "radius %g m): move the body or the obstacle",
                                   sc->bodies[b].name, sc->obstacles[o].name, d, s->contact_radius[b]);
            }
        free(depth);
        if (err->code) {
            shard_sim_destroy(&s);
            return NULL;
        }
    }
    shard_sim_fracture_setup(s);
    shard_sim_wire(s);
    /* A restart: the modules' own state (before prepare, which may derive from it). */
    for (int m = 0; m < s->n_modules && restart && !err->code; m++)
        if (s->mod[m].def->state_load && s->mod[m].used) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            shard_error e;
            memset(&e, 0, sizeof e);
            if (s->mod[m].def->state_load(&mc, s->restart_blob[m], s->restart_blob[m] ? s->restart_blob_bytes[m] : 0,
                                          &e))
                shard_error_set(err, SHARD_EXIT_INPUT, "%s: %s", ov->restart, e.msg);
        }
    for (int m = 0; m < SHARD_CHECKPOINT_MAX_SECTIONS; m++)
        free(s->restart_blob[m]), s->restart_blob[m] = NULL;
    if (err->code) {
        shard_sim_destroy(&s);
        return NULL;
    }
    shard_sim_prepare_local(s);
    s->ghosts = shard_ghosts_create(sc->n_bodies, s->self_contact);

    shard_timer_start(&s->timer, shard_wtime());
    /* A restart has the accelerations of the last force evaluation (made with the half-step velocities, so
     * they cannot be recomputed from the state) and the plastic strain after it: evaluating the forces again
     * would advance the plastic strain a second time.  It only needs the contact ghosts (and the surface
     * normals, which the energy of smooth contacts reads). */
    s->phys.dt_motion = 0.0; /* the start-up evaluation: nothing has moved yet */
    if (restart) {
        shard_sim_restart_ghosts(s);
    } else {
        shard_sim_forces(s, 1);
        shard_sim_settle(s, 0);
    }
    shard_timer_clear(&s->timer);
    s->rebuilds = 0;
    s->startup_rss = shard_sim_peak_rss_bytes();
    shard_sim_io_setup(s);
    shard_sim_balance_setup(s);
    if (shard_sim_insitu_setup(s, ov, err)) {
        shard_sim_destroy(&s);
        return NULL;
    }
    return s;
}

shard_sim *shard_sim_create_with(shard_comm *c, const char *path, const char *text, size_t len,
                                 const shard_overrides *ov, const shard_sim_tables *tables, shard_error *err)
{
    shard_sim_tables t;
    return shard_sim_build(c, path, text, len, ov, shard_sim_default_tables(tables, &t), 0, NULL, err);
}

shard_sim *shard_sim_create(shard_comm *c, const char *path, const char *text, size_t len,
                            const shard_overrides *ov, shard_error *err)
{
    return shard_sim_create_with(c, path, text, len, ov, NULL, err);
}

/* Collective: the restart path of shard_sim_open.  Every rank loads and validates its range of the checkpoint,
 * then rank 0 compares the scene text; nothing is created or written before every check has passed. */
static shard_sim *shard_sim_restart(shard_comm *c, const char *path, const shard_overrides *ov,
                                    const shard_sim_tables *t, shard_error *err)
{
    int rank = shard_comm_rank(c);
    shard_checkpoint_data ck;
    memset(&ck, 0, sizeof ck);
    memset(err, 0, sizeof *err);
    char *text = NULL;
    size_t len = 0;
    char scene_path[SHARD_PATH_MAX];
    snprintf(scene_path, sizeof scene_path, "%s", path ? path : "");
    /* The sections to read: one per module of the tables, rows from the module (a scratch block each); and the
     * memories of the force terms (shard_sim_memory_descs). */
    shard_checkpoint_section sec[SHARD_CHECKPOINT_MAX_SECTIONS];
    shard_block rows[SHARD_CHECKPOINT_MAX_SECTIONS];
    int n_sec = t->n_modules < SHARD_CHECKPOINT_MAX_SECTIONS ? t->n_modules : SHARD_CHECKPOINT_MAX_SECTIONS;
    for (int m = 0; m < n_sec; m++) {
        shard_block_init(&rows[m], t->modules[m]->rows, t->modules[m]->n_rows);
        sec[m] = (shard_checkpoint_section){.name = t->modules[m]->kind, .block = &rows[m]};
    }
    shard_checkpoint_list lists[SHARD_CHECKPOINT_MAX_LISTS];
    shard_pairlist shapes[SHARD_CHECKPOINT_MAX_LISTS];
    int n_lists = shard_sim_memory_descs(t, lists, shapes);
    /* Every rank reads its range of the particles (checkpoint.h); rank 0 compares the scenes. */
    if (shard_checkpoint_load_range(c, ov->restart, n_sec, sec, n_lists, lists, &ck, err) == 0 && rank == 0) {
        if (path) {
            if (shard_file_read_all(path, "scene file", SHARD_SCENE_MAX_BYTES, &text, &len, err) == 0 &&
                (len != ck.scene_len || memcmp(text, ck.scene_text, len) != 0))
                shard_error_set(err, SHARD_EXIT_INPUT,
                                "%s: written for a different scene: its copy of '%s' differs from %s (restart "
                                "with the scene file it was written with, or omit the scene to use its copy)",
                                ov->restart, ck.scene_path[0] ? ck.scene_path : "the scene", path);
        } else {
            len = ck.scene_len;
            text = shard_malloc(len + 1);
            memcpy(text, ck.scene_text, len + 1);
            snprintf(scene_path, sizeof scene_path, "%s", ck.scene_path[0] ? ck.scene_path : ov->restart);
        }
    }
    shard_sim *s = NULL;
    if (!shard_comm_agree(c, err, 0)) {
        shard_comm_bcast(c, scene_path, sizeof scene_path, 0);
        s = shard_sim_build(c, scene_path, text, len, ov, t, 1, &ck, err);
    }
    free(text);
    shard_checkpoint_data_free(&ck);
    return s;
}

shard_sim *shard_sim_open_with(shard_comm *c, const char *path, const shard_overrides *ov,
                               const shard_sim_tables *tables, shard_error *err)
{
    shard_sim_tables t;
    shard_sim_default_tables(tables, &t);
    if (ov->restart)
        return shard_sim_restart(c, path, ov, &t, err);
    char *text = NULL;
    size_t len = 0;
    memset(err, 0, sizeof *err);
    if (shard_comm_rank(c) == 0)
        shard_file_read_all(path, "scene file", SHARD_SCENE_MAX_BYTES, &text, &len, err);
    if (shard_comm_agree(c, err, 0)) {
        free(text);
        return NULL;
    }
    shard_sim *s = shard_sim_build(c, path, text, len, ov, &t, 0, NULL, err);
    free(text);
    return s;
}

shard_sim *shard_sim_open(shard_comm *c, const char *path, const shard_overrides *ov, shard_error *err)
{
    return shard_sim_open_with(c, path, ov, NULL, err);
}

/* Starts Catalyst with the scene's scripts and the command line's.  Collective; 0 or an error on every rank. */
static int shard_sim_insitu_setup(shard_sim *s, const shard_overrides *ov, shard_error *err)
{
    const shard_scene *sc = &s->scene;
    const char *scripts[SHARD_INSITU_MAX_SCRIPTS];
    long every[SHARD_INSITU_MAX_SCRIPTS];
    int n = 0;
    for (int k = 0; k < sc->n_catalyst && n < SHARD_INSITU_MAX_SCRIPTS; k++, n++)
        scripts[n] = sc->catalyst[k].script, every[n] = sc->catalyst[k].every;
    for (int k = 0; k < ov->n_catalyst; k++, n++) {
        if (n == SHARD_INSITU_MAX_SCRIPTS)
            return shard_error_set(err, SHARD_EXIT_USAGE, "--catalyst: at most %d scripts in all (scene and command "
                                   "line)", SHARD_INSITU_MAX_SCRIPTS);
        scripts[n] = ov->catalyst[k], every[n] = ov->catalyst_every > 0 ? ov->catalyst_every : 1;
    }
    memset(err, 0, sizeof *err);
    s->insitu = shard_insitu_create(s->comm, n, scripts, every, sc->run.output_dir, err);
    return err->code;
}

const shard_block *shard_sim_block(const shard_sim *s, const char *kind)
{
    for (int m = 0; m < s->n_modules; m++)
        if (strcmp(s->mod[m].def->kind, kind) == 0)
            return &s->mod[m].block;
    return NULL;
}

int shard_sim_checkpoint_sections(const shard_sim *s, shard_checkpoint_section *sec)
{
    shard_sim_sections(s, sec);
    return s->n_modules;
}

void shard_sim_destroy(shard_sim **sp)
{
    if (!sp || !*sp)
        return;
    shard_sim *s = *sp;
    shard_insitu_destroy(&s->insitu);
    shard_balancer_destroy(&s->balancer);
    for (int m = 0; m < SHARD_CHECKPOINT_MAX_SECTIONS; m++)
        free(s->restart_blob[m]);
    shard_particles_free(&s->p);
    shard_csr_free(&s->bonds);
    shard_csr_free(&s->cand);
    shard_cells_free(&s->cells);
    shard_ghosts_destroy(&s->ghosts);
    for (int m = 0; m < s->n_modules; m++) {
        shard_sim_module *md = &s->mod[m];
        shard_block_free(&md->block);
        shard_halo_destroy(&md->halo);
        if (md->def->finish && md->bodies)
            md->def->finish(&s->scene, md->bodies);
        if (md->def->state_free && md->state)
            md->def->state_free(md->state);
        free(md->bodies), free(md->state), free(md->inner), free(md->outer);
    }
    for (int k = 0; k < s->n_terms; k++) {
        free(s->term[k].own_bodies);
        shard_pairlist_free(&s->term[k].memory[0]);
        shard_pairlist_free(&s->term[k].memory[1]);
    }
    free(s->mod), free(s->term), free(s->body_module), free(s->contact_radius), free(s->reach_radius);
    free(s->own_contact);
    free(s->impulses.at);
    free(s->body_first), free(s->timed);
    shard_scene_free(&s->scene);
    free(s->f), free(s->body_count), free(s->bond_broken);
    shard_csr_free(&s->active);
    free(s->frag_label), free(s->frags);
    free(s->self_contact), free(s->frac_changed), free(s->frac_debris), free(s->frac_flag), free(s->frac_lost);
    for (int f = 0; f < SHARD_OUT_COUNT; f++)
        free(s->col_buf[f]);
    shard_output_destroy(&s->out);
    shard_checkpoint_destroy(&s->ckpt);
    free(s);
    *sp = NULL;
}
