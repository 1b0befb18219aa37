/* Start-up and restart (see run.h and docs/architecture.md, "From input to state hash").
 *
 * The order: rank 0 reads the scene (or every rank its range of the checkpoint) and broadcasts the text; every
 * rank parses it; the modules and the common force terms take their bodies, compute their per-body state and the
 * time step (modules.c); every rank samples its share of the lattice planes and bonds it, or holds its range of
 * the checkpoint; the shares are partitioned and every rank receives its particles, grouped by module
 * (startup.c); each module precomputes; the first force evaluation runs through the same path as every step.
 * shard_sim_build holds the order: a common part, a fresh start's or a restart's part, the common rest, and one
 * failure path.  Every check that can fail is made before anything is written, and every verdict is shared, so
 * bad input ends the run on every rank with one message.
 */
#include "sim_impl.h"

#include "shard/fileio.h"
#include "shard/geometry.h"
#include "shard/mesh_io.h"
#include "shard/partition.h"
#include "shard/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

shard_overrides shard_default_overrides(void)
{
    return (shard_overrides){
        .steps = -1, .until = -1.0, .dt = -1.0, .out_dir = NULL, .restart = NULL, .catalyst_every = 1};
}

int shard_sim_load_meshes(shard_scene *sc, shard_error *err)
{
    for (int b = 0; b < sc->n_bodies; b++) {
        shard_body_def *bd = &sc->bodies[b];
        /* a solid's or rigid body's mesh bounds it; a surface's (cloth) may be open */
        int rc = shard_mesh_load_shape(&bd->shape, !bd->surface, sc->path, err);
        if (rc)
            return rc;
    }
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
    if (ov->out_dir) { /* every folder the run writes into: the scene's own for output and checkpoints too */
        if (strlen(ov->out_dir) >= sizeof sc->run.output_dir)
            return shard_error_set(err, SHARD_EXIT_USAGE, "--out: path too long");
        snprintf(sc->run.output_dir, sizeof sc->run.output_dir, "%s", ov->out_dir);
        sc->output.dir[0] = sc->checkpoint.dir[0] = '\0'; /* "": run.output_dir */
    }
    return 0;
}

/* The hooks' views and the timer phases (Neigh first, then the force terms' phases in force order, then the
 * driver's own: the timing table reads in the order of a step). */
static void shard_sim_wire(shard_sim *s)
{
    s->phys = (shard_phys){.scene = &s->scene,
                           .p = &s->p,
                           .bonds = s->frac.on ? &s->frac.active : &s->bonds,
                           .ref_bonds = &s->bonds,
                           .broken = s->bond_broken,
                           .cand = &s->cand,
                           .dt = s->dt,
                           .own_contact = s->own_contact,
                           .body_first = s->body_first,
                           .impulses = NULL,
                           .reach_slack = 0.5 * s->skin};
    /* the impulses' hand-over only where some kind in the scene has a collision stage (none: no collective) */
    for (int m = 0; m < s->n_modules; m++)
        if (shard_sim_collision(s, m))
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

static void shard_sim_release_share(void *share) { shard_share_free(share); }
static void shard_sim_release_checkpoint(void *ck) { shard_checkpoint_data_free(ck); }

/* A simulation record with nothing built yet: every "none yet" step marker set. */
static shard_sim *shard_sim_alloc(shard_comm *c)
{
    shard_sim *s = shard_calloc(1, sizeof *s);
    s->comm = c;
    s->restarted_at = -1;
    return s;
}

/* The common start of both paths: rank 0's scene text to every rank, which parses it (every rank parses the same
 * text and so reaches the same verdict: no communication needed), the command line's overrides, Catalyst scripts
 * that this build cannot run, the meshes, the modules and force terms (modules.c), a relax section that cannot
 * settle (relax.c), the sizes, the time step and the contact distances.  0 or the same error on
 * every rank.  Collective (the text's broadcast). */
static int shard_sim_build_scene(shard_sim *s, const char *path, const char *text, size_t len,
                                 const shard_overrides *ov, const shard_sim_tables *tables, shard_error *err)
{
    shard_comm *c = s->comm;
    uint64_t n64 = len;
    shard_comm_bcast(c, &n64, sizeof n64, 0);
    char *buf = shard_malloc((size_t)n64 + 1);
    if (shard_comm_rank(c) == 0)
        memcpy(buf, text, (size_t)n64);
    shard_comm_bcast(c, buf, (size_t)n64, 0);
    buf[n64] = '\0';
    int rc = shard_scene_parse_with(path, buf, (size_t)n64, tables->modules, tables->n_modules, &s->scene, err);
    free(buf);
    if (!rc)
        rc = shard_sim_apply_overrides(&s->scene, ov, err);
    if (!rc)
        rc = shard_sim_insitu_check(&s->scene, err);
    if (!rc)
        rc = shard_sim_load_meshes(&s->scene, err);
    if (!rc)
        rc = shard_sim_modules_build(s, tables, err);
    if (!rc)
        rc = shard_sim_relax_check(&s->scene, err);
    /* Absurd sizes first (a spacing of 1e-200 is a size problem before it is a time-step one). */
    if (!rc)
        rc = shard_sample_check_sizes(&s->scene, shard_comm_size(c), err);
    if (!rc)
        rc = shard_sim_plan_steps(s, ov, err);
    if (!rc)
        shard_sim_contact_range(s);
    return rc;
}

/* The restart part: this rank's range of the checkpoint ck must fit the scene (the verdict agreed by all ranks);
 * the share borrows it, the run continues from its step, and the modules' own state records are taken from it
 * (the distribution frees the range).  A run that would end before the checkpoint's step has nothing to do: it is
 * refused (every rank knows both).  Collective. */
static int shard_sim_build_restart(shard_sim *s, shard_checkpoint_data *ck, const shard_overrides *ov,
                                   shard_share *share, shard_error *err)
{
    shard_comm *c = s->comm;
    const shard_scene *sc = &s->scene;
    int size = shard_comm_size(c);
    if ((int64_t)size > ck->n)
        return shard_error_set(err, SHARD_EXIT_INPUT,
                               "%s: the checkpoint has %lld particle(s), fewer than the %d ranks it is restarted on",
                               ov->restart, (long long)ck->n, size);
    /* Its particles against the scene (restart.c): the body counts from the data, the bodies' identities. */
    int rc = shard_sim_restart_check(s, ck, ov->restart, err);
    if (rc)
        return rc;
    /* The share is the checkpoint's range, borrowed: its sections are in module order (run.c,
     * shard_sim_checkpoint_sections). */
    share->p = ck->p;
    share->mod_rows = ck->blocks;
    share->bstart = ck->bonds.start;
    share->partner = ck->partner;
    share->broken = ck->broken;
    share->lists = ck->lists;
    s->n_global = ck->n;
    s->n_bonds_global = ck->n_bonds;
    s->run_id = ck->run_id; /* the run goes on: it owns the checkpoints of the run it continues */
    s->step = s->restarted_at = ck->step;
    s->contacts_local = shard_comm_rank(c) == 0 ? ck->contacts : 0;
    for (int m = 0; m < SHARD_CHECKPOINT_MAX_SECTIONS; m++) /* the distribution frees ck */
        s->restart_blob[m] = ck->blob[m], s->restart_blob_bytes[m] = ck->blob_bytes[m], ck->blob[m] = NULL;
    if (s->total_steps < s->step) {
        if (ov->steps > 0 || ov->until >= 0.0)
            return shard_error_set(err, SHARD_EXIT_USAGE,
                                   "%s: the run would end at step %ld, before the "
                                   "checkpoint's step %ld (steps count from the start of the run: give more)",
                                   ov->steps > 0 ? "--steps" : "--until", s->total_steps, s->step);
        return shard_error_at(err, sc->path, sc->run.steps > 0 ? &sc->run.steps_loc : &sc->run.end_time_loc,
                              "the run ends at step %ld, before step %ld of the checkpoint %s", s->total_steps, s->step,
                              ov->restart);
    }
    return 0;
}

/* Per body, from the particle counts of either start: whether a constraint has a time window, and its first
 * global id. */
static void shard_sim_body_ranges(shard_sim *s)
{
    const shard_scene *sc = &s->scene;
    s->timed = shard_calloc((size_t)sc->n_bodies + 1, sizeof *s->timed);
    for (int b = 0; b < sc->n_bodies; b++)
        s->any_timed |= s->timed[b] = (uint8_t)shard_sample_constraints_timed(&sc->bodies[b]);
    s->body_first = shard_malloc(((size_t)sc->n_bodies + 1) * sizeof *s->body_first);
    s->body_first[0] = 0;
    for (int b = 0; b < sc->n_bodies; b++)
        s->body_first[b + 1] = s->body_first[b] + s->body_count[b];
}

/* The share becomes this rank's particles (startup.c), grouped by module, with the bond halos and the force
 * terms' memories.  ck: the checkpoint range the share borrows (a restart), or NULL (the share is its own); either
 * is freed as soon as the store holds its rows.  Collective. */
static int shard_sim_build_distribute(shard_sim *s, const shard_sim_tables *tables, shard_share *share,
                                      shard_checkpoint_data *ck, shard_error *err)
{
    const shard_scene *sc = &s->scene;
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
    shard_partition_kinds kinds = {
        .n_modules = s->n_modules, .body_module = s->body_module, .has_halo = has_halo, .n_lists = n_mem};
    shard_block *blocks = shard_calloc((size_t)s->n_modules + 1, sizeof *blocks);
    for (int m = 0; m < s->n_modules; m++)
        blocks[m] = s->mod[m].block;
    double t_part = shard_wtime();
    int rc =
        ck ? shard_sim_share_distribute(s, share, shard_sim_release_checkpoint, ck, &kinds, blocks, halos, mem_mine,
                                        err)
           : shard_sim_share_distribute(s, share, shard_sim_release_share, share, &kinds, blocks, halos, mem_mine, err);
    s->startup_seconds[1] = shard_wtime() - t_part;
    for (int q = 0; q < n_mem; q++)
        mem_term[q]->memory[mem_term[q]->cur] = mem_mine[q];
    for (int m = 0; m < s->n_modules; m++) {
        s->mod[m].block = blocks[m];
        s->mod[m].halo = halos[m];
    }
    free(blocks), free(halos), free(has_halo);
    return rc;
}

/* A particle that starts deeper inside an obstacle than its contact radius would be thrown out at any speed the
 * penalty gives it: a scene error.  Each rank measures its own particles; the deepest overlap of every (body,
 * obstacle) pair is reduced (a maximum: the same on every rank), and the first pair in scene order that is too
 * deep is named.  Collective. */
static int shard_sim_check_depths(shard_sim *s, shard_error *err)
{
    const shard_scene *sc = &s->scene;
    const shard_particles *p = &s->p;
    if (sc->n_obstacles <= 0)
        return 0;
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
    shard_comm_max_doubles(s->comm, depth, (int)nbo);
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
    return err->code;
}

/* A restart: the modules' own state records from the checkpoint ck_path (before prepare, which may derive from
 * them), then freed.  Local. */
static int shard_sim_load_states(shard_sim *s, const char *ck_path, shard_error *err)
{
    for (int m = 0; m < s->n_modules && !err->code; m++)
        if (shard_sim_whole(s, m) && shard_sim_whole(s, m)->state_load) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            shard_error e;
            memset(&e, 0, sizeof e);
            if (shard_sim_whole(s, m)->state_load(&mc, s->restart_blob[m],
                                                  s->restart_blob[m] ? s->restart_blob_bytes[m] : 0, &e))
                shard_error_set(err, SHARD_EXIT_INPUT, "%s: %s", ck_path, e.msg);
        }
    for (int m = 0; m < SHARD_CHECKPOINT_MAX_SECTIONS; m++)
        free(s->restart_blob[m]), s->restart_blob[m] = NULL;
    return err->code;
}

/* The particles on their ranks become a run: masses, the depth check, the unbroken bonds, the hooks' views and
 * timer phases, a restart's module state (ck_path: its checkpoint; NULL at a fresh start), the modules'
 * precomputation and the contact ghosts.  Collective. */
static int shard_sim_build_local(shard_sim *s, const char *ck_path, shard_error *err)
{
    shard_sim_masses(s);
    int rc = ck_path ? shard_sim_restart_check_masses(s, ck_path, err) : 0;
    if (!rc)
        rc = shard_sim_check_depths(s, err);
    if (rc)
        return rc;
    shard_sim_fracture_setup(s);
    shard_sim_wire(s);
    if (ck_path)
        rc = shard_sim_load_states(s, ck_path, err);
    if (rc)
        return rc;
    shard_sim_prepare_local(s);
    s->ghosts = shard_ghosts_create(s->scene.n_bodies, s->frac.self_contact);
    return 0;
}

/* The first force evaluation, through the same path as every step; its time is the start-up's, not the run's.
 * A restart has the accelerations of the last force evaluation (made with the half-step velocities, so they
 * cannot be recomputed from the state) and the plastic strain after it: evaluating the forces again would advance
 * the plastic strain a second time.  It only needs the contact ghosts (and the surface normals, which the energy
 * of smooth contacts reads).  Collective. */
static void shard_sim_first_forces(shard_sim *s, int restart)
{
    shard_timer_start(&s->timer, shard_wtime());
    s->phys.dt_motion = 0.0; /* the start-up evaluation: nothing has moved yet */
    if (restart) {
        shard_sim_restart_ghosts(s);
    } else {
        shard_sim_forces(s, 1);
        shard_sim_settle(s, 0);
    }
    shard_sim_validate(s);
    shard_timer_clear(&s->timer);
    s->rebuilds = 0;
    s->startup_rss = shard_sim_peak_rss_bytes();
}

/* Builds a simulation from scene text: the common part, then a fresh start's sampling or a restart's checkpoint
 * range (ck: this rank's range of the checkpoint, every rank; NULL at a fresh start), then the common
 * distribution, the first force evaluation and the writers.  Every failure, on every rank at once, ends in the one
 * path at the end.  Collective. */
static shard_sim *shard_sim_build(shard_comm *c, const char *path, const char *text, size_t len,
                                  const shard_overrides *ov, const shard_sim_tables *tables, shard_checkpoint_data *ck,
                                  shard_error *err)
{
    memset(err, 0, sizeof *err);
    shard_sim *s = shard_sim_alloc(c);
    int rc = shard_sim_build_scene(s, path, text, len, ov, tables, err);
    shard_share share;
    memset(&share, 0, sizeof share);
    if (!rc) {
        /* Every rank samples its share of the lattice planes (startup.c), or holds its range of the checkpoint's
         * particles; the verdicts on the input are agreed by all ranks. */
        s->body_count = shard_calloc((size_t)s->scene.n_bodies + 1, sizeof *s->body_count);
        double t_sample = shard_wtime();
        rc = ck ? shard_sim_build_restart(s, ck, ov, &share, err) : shard_sim_share_sample(s, &share, err);
        s->startup_seconds[0] = shard_wtime() - t_sample;
    }
    if (!rc) {
        shard_sim_body_ranges(s);
        rc = shard_sim_build_distribute(s, tables, &share, ck, err);
    }
    if (!rc)
        rc = shard_sim_build_local(s, ck ? ov->restart : NULL, err);
    if (!rc) {
        shard_sim_first_forces(s, ck != NULL);
        shard_sim_balance_setup(s);
        if (!ck)
            s->run_id = shard_checkpoint_new_run_id(c);
        rc = shard_sim_output_setup(s, ov, err);
    }
    if (rc)
        shard_sim_destroy(&s);
    return s;
}

shard_sim *shard_sim_create_with(shard_comm *c, const char *path, const char *text, size_t len,
                                 const shard_overrides *ov, const shard_sim_tables *tables, shard_error *err)
{
    shard_sim_tables t;
    return shard_sim_build(c, path, text, len, ov, shard_sim_default_tables(tables, &t), NULL, err);
}

shard_sim *shard_sim_create(shard_comm *c, const char *path, const char *text, size_t len, const shard_overrides *ov,
                            shard_error *err)
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
        s = shard_sim_build(c, scene_path, text, len, ov, t, &ck, err);
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
    shard_sim *s = shard_sim_build(c, path, text, len, ov, &t, NULL, err);
    free(text);
    return s;
}

shard_sim *shard_sim_open(shard_comm *c, const char *path, const shard_overrides *ov, shard_error *err)
{
    return shard_sim_open_with(c, path, ov, NULL, err);
}

const shard_block *shard_sim_block(const shard_sim *s, const char *kind)
{
    for (int m = 0; m < s->n_modules; m++)
        if (strcmp(s->mod[m].def->kind, kind) == 0)
            return &s->mod[m].block;
    return NULL;
}

void shard_sim_destroy(shard_sim **sp)
{
    if (!sp || !*sp)
        return;
    shard_sim *s = *sp;
    shard_sim_balance_free(s);
    for (int m = 0; m < SHARD_CHECKPOINT_MAX_SECTIONS; m++)
        free(s->restart_blob[m]);
    free(s->restart_mass);
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
    shard_sim_fracture_free(s);
    shard_sim_output_free(s);
    free(s);
    *sp = NULL;
}
