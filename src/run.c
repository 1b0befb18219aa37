/* Run: start-up, the time loop, and the end-of-run report (see run.h and docs/architecture.md).
 *
 * One step, in order (the timer phase in brackets; "inner" particles have no bond ghost partner, so they are
 * computed while a halo exchange is in flight):
 *   kick v += dt/2 a, drift x += dt v                                   [Integrate]
 *   begin halo of x, v; solid pass 1 of inner particles                 [Comm, Solid]
 *   end halo; skin check (one allreduce, also catches NaN)              [Comm]
 *   on a skin violation: contact ghosts and candidate lists rebuilt     [Neigh]
 *   solid pass 1 (gradients, strain, plasticity, stress -> B) of the rest [Solid]
 *   begin halo of B; solid pass 2 (gather forces) of inner particles    [Comm, Solid]
 *   end halo; solid pass 2 of the rest                                  [Comm, Solid]
 *   contacts: particle pairs, obstacles                                 [Contact]
 *   a = f/m + g, kick v += dt/2 a                                       [Integrate]
 */
#include "shard/run.h"

#include "shard/checkpoint.h"
#include "shard/contact.h"
#include "shard/fileio.h"
#include "shard/ghosts.h"
#include "shard/halo.h"
#include "shard/insitu.h"
#include "shard/integrate.h"
#include "shard/neighbor.h"
#include "shard/output.h"
#include "shard/partition.h"
#include "shard/sample.h"
#include "shard/solid.h"
#include "shard/timer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

struct shard_sim {
    shard_comm *comm;
    shard_insitu *insitu;         /* Catalyst scripts, or NULL */
    shard_scene scene;
    shard_particles p;
    shard_csr bonds, cand;
    uint8_t *bond_broken;         /* per bond entry of `bonds`: 1 = broken (none yet: fracture will set them) */
    shard_cells cells;
    shard_halo *bond_halo, *contact_halo;
    shard_solid_params *solid;    /* per body */
    shard_contact_params *contact;/* per body */
    double *f;                    /* force scratch, 3 per owned */
    int32_t *inner, *outer;       /* owned particles without / with a bond ghost partner */
    size_t n_inner, n_outer;
    size_t f_cap;
    double dt, skin, cutoff;
    const char *dt_limit;         /* which limit set dt ("wave speed", "contact", "given") */
    long step, total_steps;
    int64_t n_global, n_bonds_global, edge_cut;
    int64_t *body_count;          /* particles per body */
    int64_t contacts_local;
    long rebuilds;
    shard_timer timer;
    double loop_wall;
    uint64_t comm_bytes_setup;
    shard_output *out;            /* NULL: no output section (or no HDF5) */
    shard_checkpoint *ckpt;       /* NULL: no checkpoint section (or no HDF5) */
    long last_output;             /* step of the last output written or inherited from a restart, or -1 */
    long restarted_at;            /* step of the checkpoint this run restarted from, or -1 */
    double *io_d;                 /* derived output columns (grow-only) */
    size_t io_d_cap;
    int32_t *io_i;
    size_t io_i_cap;
};

shard_overrides shard_default_overrides(void)
{
    return (shard_overrides){.steps = -1, .until = -1.0, .dt = -1.0, .out_dir = NULL, .restart = NULL,
                             .catalyst_every = 1};
}

const shard_particles *shard_sim_particles(const shard_sim *s) { return &s->p; }
const shard_csr *shard_sim_bonds(const shard_sim *s) { return &s->bonds; }
const char *shard_sim_last_checkpoint(const shard_sim *s) { return shard_checkpoint_last_path(s->ckpt); }
const shard_scene *shard_sim_scene(const shard_sim *s) { return &s->scene; }
double shard_sim_time(const shard_sim *s) { return (double)s->step * s->dt; }
double shard_sim_dt(const shard_sim *s) { return s->dt; }
long shard_sim_step_index(const shard_sim *s) { return s->step; }
long shard_sim_total_steps(const shard_sim *s) { return s->total_steps; }
int64_t shard_sim_total_particles(const shard_sim *s) { return s->n_global; }

/* Per-body constants from the materials. */
static void shard_sim_body_params(shard_sim *s)
{
    const shard_scene *sc = &s->scene;
    s->solid = shard_calloc((size_t)sc->n_bodies, sizeof *s->solid);
    s->contact = shard_calloc((size_t)sc->n_bodies, sizeof *s->contact);
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_body_def *bd = &sc->bodies[b];
        const shard_material *m = &sc->materials[bd->material];
        double h = bd->support * bd->spacing;
        shard_solid_params_init(&s->solid[b], m->E, m->nu, m->volume_stiffness, m->damping, m->yield, m->creep,
                                m->max_plastic, h);
        s->contact[b].radius = 0.5 * bd->spacing;
        /* auto: the stiffness of a cube of side `spacing` under uniaxial load, E * spacing */
        s->contact[b].k = m->contact_stiffness > 0.0 ? m->contact_stiffness : m->E * bd->spacing;
        s->contact[b].zeta = m->contact_damping;
        s->contact[b].mu = m->friction;
    }
}

/* The CFL time step from scene data alone (identical on every rank, no reduction needed):
 * solid: dt <= h_lattice / c_p with c_p = sqrt((lambda + 2 mu + k_v) / rho), reduced for stiffness-
 * proportional damping (dt <= 2/w (sqrt(1 + z^2) - z), z = beta w / 2, w = 2 c_p / spacing);
 * contact: a pair of particles is an oscillator with w^2 = k / m_eff <= max_i k_i / m_i, same damping rule. */
static void shard_sim_time_step(shard_sim *s)
{
    const shard_scene *sc = &s->scene;
    double dt_wave = INFINITY, dt_contact = INFINITY;
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_body_def *bd = &sc->bodies[b];
        const shard_material *m = &sc->materials[bd->material];
        const shard_solid_params *sp = &s->solid[b];
        double cp = sqrt((sp->lambda + 2.0 * sp->mu + m->volume_stiffness) / m->density);
        double w = 2.0 * cp / bd->spacing, z = 0.5 * m->damping * w;
        dt_wave = fmin(dt_wave, 2.0 / w * (sqrt(1.0 + z * z) - z));
        double mass = m->density * bd->spacing * bd->spacing * bd->spacing;
        double wc = sqrt(s->contact[b].k / mass), zc = m->contact_damping;
        for (int o = 0; o < sc->n_obstacles; o++) {
            const shard_obstacle_def *ob = &sc->obstacles[o];
            double k = ob->stiffness > 0.0 ? ob->stiffness : s->contact[b].k;
            double wo = sqrt(k / mass);
            dt_contact = fmin(dt_contact, 2.0 / wo * (sqrt(1.0 + ob->damping * ob->damping) - ob->damping));
        }
        dt_contact = fmin(dt_contact, 2.0 / wc * (sqrt(1.0 + zc * zc) - zc));
    }
    if (sc->run.dt > 0.0) {
        s->dt = sc->run.dt;
        s->dt_limit = "given";
    } else if (dt_wave <= dt_contact) {
        s->dt = sc->run.dt_safety * dt_wave;
        s->dt_limit = "wave speed";
    } else {
        s->dt = sc->run.dt_safety * dt_contact;
        s->dt_limit = "contact";
    }
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

/* Rebuilds contact ghosts and candidate lists from the current positions. Collective. */
static void shard_sim_rebuild(shard_sim *s)
{
    shard_timer_stamp(&s->timer, SHARD_PHASE_OTHER, shard_wtime());
    shard_ghosts_rebuild(s->comm, &s->p, s->scene.n_bodies, s->bond_halo, s->cutoff, &s->contact_halo);
    double *rad = shard_malloc((size_t)s->scene.n_bodies * sizeof *rad);
    for (int b = 0; b < s->scene.n_bodies; b++)
        rad[b] = s->contact[b].radius;
    shard_neighbor_contacts(&s->p, rad, s->skin, &s->cells, &s->cand);
    free(rad);
    memcpy(s->p.x_build, s->p.x, 3 * s->p.n_owned * sizeof *s->p.x);
    s->rebuilds++;
    shard_timer_stamp(&s->timer, SHARD_PHASE_NEIGH, shard_wtime());
}

/* Contact forces added to the solid forces, then a = f/m + g. Local. */
static void shard_sim_contacts(shard_sim *s)
{
    shard_particles *p = &s->p;
    size_t nc = shard_contact_pairs(p, &s->cand, s->contact, s->f);
    double t = (double)s->step * s->dt;
    nc += shard_contact_obstacles(p, s->contact, s->scene.n_obstacles, s->scene.obstacles, t, s->f);
    s->contacts_local = (int64_t)nc;
    shard_timer_stamp(&s->timer, SHARD_PHASE_CONTACT, shard_wtime());
    shard_integrate_accel(p, s->f, s->scene.run.gravity);
}

/* Splits the owned particles into those whose bond partners are all owned (computable while a halo exchange
 * is in flight) and the others. */
static void shard_sim_split_owned(shard_sim *s)
{
    const shard_particles *p = &s->p;
    s->inner = shard_malloc((p->n_owned + 1) * sizeof *s->inner);
    s->outer = shard_malloc((p->n_owned + 1) * sizeof *s->outer);
    s->n_inner = s->n_outer = 0;
    for (size_t i = 0; i < p->n_owned; i++) {
        int ghost = 0;
        for (int64_t b = s->bonds.start[i]; b < s->bonds.start[i + 1] && !ghost; b++)
            ghost = (size_t)s->bonds.idx[b] >= p->n_owned;
        if (ghost)
            s->outer[s->n_outer++] = (int32_t)i;
        else
            s->inner[s->n_inner++] = (int32_t)i;
    }
}

/* Forces at the current x, v of owned and ghost particles -> p.a. Collective (one halo exchange of B). */
static void shard_sim_forces(shard_sim *s)
{
    shard_particles *p = &s->p;
    shard_solid_stress(p, &s->bonds, s->solid, s->dt);
    shard_timer_stamp(&s->timer, SHARD_PHASE_SOLID, shard_wtime());
    double *fields[1] = {p->B};
    int ncomp[1] = {9};
    shard_halo_forward(s->bond_halo, 1, fields, ncomp);
    shard_timer_stamp(&s->timer, SHARD_PHASE_COMM, shard_wtime());
    shard_solid_forces(p, &s->bonds, s->solid, s->f);
    shard_timer_stamp(&s->timer, SHARD_PHASE_SOLID, shard_wtime());
    shard_sim_contacts(s);
}

/* Once the bond ghosts hold the new x and v: the skin check (one allreduce that also carries "a position is
 * not finite"), then either a contact-ghost rebuild or the forward exchange of the contact ghosts. Collective. */
static void shard_sim_after_positions(shard_sim *s, int force_rebuild)
{
    shard_particles *p = &s->p;
    double *fields[2] = {p->x, p->v};
    int ncomp[2] = {3, 3};
    double m2 = shard_integrate_max_move2(p);
    int flags[2] = {m2 > 0.25 * s->skin * s->skin || force_rebuild, !isfinite(m2)};
    shard_comm_max_ints(s->comm, flags, 2);
    shard_timer_stamp(&s->timer, SHARD_PHASE_COMM, shard_wtime());
    if (flags[1]) {
        shard_error e = {0};
        if (!isfinite(m2))
            shard_error_set(&e, SHARD_EXIT_RUNTIME,
                            "step %ld: a particle position is not finite (the time step is too large for the "
                            "material or contact stiffness; try a smaller run.dt_safety)",
                            s->step);
        shard_comm_any_error(s->comm, &e);
        shard_fail_all(s->comm, SHARD_EXIT_RUNTIME, e.msg);
    }
    if (flags[0]) {
        shard_sim_rebuild(s);
    } else if (s->contact_halo) {
        shard_halo_forward(s->contact_halo, 2, fields, ncomp);
        shard_timer_stamp(&s->timer, SHARD_PHASE_COMM, shard_wtime());
    }
}


/* Rank 0 of a restart: the loaded state must fit the scene it is restarted with. */
static int shard_sim_check_restart(const shard_sim *s, const shard_checkpoint_data *ck, const char *ck_path,
                                   shard_error *err)
{
    if (ck->dt != s->dt)
        return shard_error_set(err, SHARD_EXIT_INPUT,
                               "%s: written with the time step %.17g s, but this run's is %.17g s (a different "
                               "--dt?); a restart continues with the same time step",
                               ck_path, ck->dt, s->dt);
    for (int64_t i = 0; i < ck->n; i++)
        if (ck->p.body[i] < 0 || ck->p.body[i] >= s->scene.n_bodies)
            return shard_error_set(err, SHARD_EXIT_INPUT, "%s: particle %lld belongs to body %d, but the scene has "
                                   "%d bodies", ck_path, (long long)i, ck->p.body[i], s->scene.n_bodies);
    return 0;
}

/* The whole run as rank 0 hands it to the distribution: the sampled particles, row = global id, x = X. */
static shard_particles shard_sim_sampled_view(const shard_sampled *g)
{
    shard_particles all;
    memset(&all, 0, sizeof all);
    all.n_owned = all.n_local = all.capacity = g->n;
    all.X = g->X;
    all.x = g->X;
    all.v = g->v;
    all.vpres = g->vpres;
    all.body = g->body;
    all.flags = g->flags;
    return all;
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

/* Builds a simulation from scene text; ck (rank 0 of a restart; NULL otherwise, and on other ranks) supplies
 * the state instead of sampling.  Collective. */
static shard_sim *shard_sim_build(shard_comm *c, const char *path, const char *text, size_t len,
                                  const shard_overrides *ov, int restart, const shard_checkpoint_data *ck,
                                  shard_error *err)
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
    /* Every rank parses the same text and so reaches the same verdict: no communication needed. */
    int rc = shard_scene_parse(path, buf, (size_t)n64, &s->scene, err);
    free(buf);
    if (!rc)
        rc = shard_sim_apply_overrides(&s->scene, ov, err);
    if (rc) {
        shard_sim_destroy(&s);
        return NULL;
    }
    shard_scene *sc = &s->scene;
    shard_sim_body_params(s);
    shard_sim_time_step(s);
    if (sc->run.steps > 0)
        s->total_steps = sc->run.steps;
    else
        s->total_steps = (long)ceil(sc->run.end_time / s->dt - 1e-9);

    double min_spacing = INFINITY, max_radius = 0.0;
    for (int b = 0; b < sc->n_bodies; b++) {
        min_spacing = fmin(min_spacing, sc->bodies[b].spacing);
        max_radius = fmax(max_radius, s->contact[b].radius);
    }
    s->skin = sc->run.skin * min_spacing;
    s->cutoff = 2.0 * max_radius + s->skin;

    /* Rank 0 samples and bonds the whole scene, or takes the checkpoint's state; its verdict on the input is
     * shared with every rank. */
    shard_sampled g = {0};
    shard_csr gb = {0};
    shard_particles all;
    memset(&all, 0, sizeof all);
    const shard_csr *graph = &gb;
    const uint8_t *graph_broken = NULL;
    if (rank == 0 && restart) {
        if (shard_sim_check_restart(s, ck, ov->restart, err) == 0) {
            all = ck->p;
            graph = &ck->bonds;
            graph_broken = ck->broken;
            s->n_global = ck->n;
            s->n_bonds_global = ck->n_bonds;
            if ((int64_t)size > s->n_global)
                shard_error_set(err, SHARD_EXIT_INPUT, "%s: the checkpoint has %lld particle(s), fewer than the %d "
                                "ranks it is restarted on", ov->restart, (long long)s->n_global, size);
        }
    } else if (rank == 0 && shard_sample_scene(sc, &g, err) == 0) {
        double *h = shard_malloc((size_t)sc->n_bodies * sizeof *h);
        for (int b = 0; b < sc->n_bodies; b++)
            h[b] = sc->bodies[b].support * sc->bodies[b].spacing;
        shard_neighbor_bonds(g.n, g.X, sc->n_bodies, g.body_start, h, &gb);
        free(h);
        all = shard_sim_sampled_view(&g);
        s->n_global = (int64_t)g.n;
        s->n_bonds_global = gb.start[g.n];
        if (g.n > (size_t)INT32_MAX || gb.start[g.n] > (int64_t)INT32_MAX)
            shard_error_at(err, sc->path, &sc->bodies[0].loc,
                           "%zu particles / %lld bonds exceed what one rank can partition (2^31)", g.n,
                           (long long)gb.start[g.n]);
        else if ((int64_t)size > s->n_global)
            shard_error_at(err, sc->path, &sc->bodies[0].loc,
                           "the scene has %lld particle(s) in total, fewer than the %d ranks it runs on",
                           (long long)s->n_global, size);
    }
    if (shard_comm_agree(c, err, 0)) {
        shard_sampled_free(&g);
        shard_csr_free(&gb);
        shard_sim_destroy(&s);
        return NULL;
    }
    s->body_count = shard_calloc((size_t)sc->n_bodies, sizeof *s->body_count);
    if (rank == 0)
        for (size_t i = 0; i < all.n_owned; i++)
            s->body_count[all.body[i]]++;
    shard_comm_bcast(c, s->body_count, (size_t)sc->n_bodies * sizeof *s->body_count, 0);
    shard_comm_bcast(c, &s->n_global, sizeof s->n_global, 0);
    shard_comm_bcast(c, &s->n_bonds_global, sizeof s->n_bonds_global, 0);
    if (restart) {
        int64_t hdr[2] = {rank == 0 ? ck->step : 0, rank == 0 ? ck->contacts : 0};
        shard_comm_bcast(c, hdr, sizeof hdr, 0);
        s->step = s->restarted_at = s->last_output = (long)hdr[0];
        s->contacts_local = rank == 0 ? hdr[1] : 0;
    }

    shard_partition_distribute(c, rank == 0 ? &all : NULL, rank == 0 ? graph : NULL, graph_broken, &s->p,
                               &s->bonds, &s->bond_broken, &s->bond_halo, &s->edge_cut);
    shard_sampled_free(&g);
    shard_csr_free(&gb);

    /* Masses and volumes: each particle stands for one lattice cell of its body (see docs/architecture.md for
     * why not the kernel-density estimate of the paper's §2.6). */
    shard_particles *p = &s->p;
    for (size_t i = 0; i < p->n_local; i++) {
        const shard_body_def *bd = &sc->bodies[p->body[i]];
        double vol = bd->spacing * bd->spacing * bd->spacing;
        p->volume[i] = vol;
        p->mass[i] = sc->materials[bd->material].density * vol;
    }
    shard_solid_moments(p, &s->bonds, s->solid, sc->run.svd_threshold);
    shard_sim_split_owned(s);
    shard_reserve((void **)&s->f, &s->f_cap, 3 * p->n_owned + 3, sizeof *s->f);

    shard_timer_start(&s->timer, shard_wtime());
    shard_sim_rebuild(s);
    /* A restart has the accelerations of the last force evaluation (made with the half-step velocities, so
     * they cannot be recomputed from the state) and the plastic strain after it: evaluating the forces again
     * would advance the plastic strain a second time. */
    if (!restart)
        shard_sim_forces(s);
    memset(&s->timer, 0, sizeof s->timer);
    s->rebuilds = 0;
    shard_sim_io_setup(s);
    if (shard_sim_insitu_setup(s, ov, err)) {
        shard_sim_destroy(&s);
        return NULL;
    }
    return s;
}

shard_sim *shard_sim_create(shard_comm *c, const char *path, const char *text, size_t len,
                            const shard_overrides *ov, shard_error *err)
{
    return shard_sim_build(c, path, text, len, ov, 0, NULL, err);
}

/* Collective: the restart path of shard_sim_open.  Rank 0 loads and validates the checkpoint, then compares the
 * scene text; nothing is created or written before every check has passed. */
static shard_sim *shard_sim_restart(shard_comm *c, const char *path, const shard_overrides *ov, shard_error *err)
{
    int rank = shard_comm_rank(c);
    shard_checkpoint_data ck;
    memset(&ck, 0, sizeof ck);
    memset(err, 0, sizeof *err);
    char *text = NULL;
    size_t len = 0;
    char scene_path[SHARD_PATH_MAX];
    snprintf(scene_path, sizeof scene_path, "%s", path ? path : "");
    if (rank == 0 && shard_checkpoint_load(ov->restart, &ck, err) == 0) {
        if (path) {
            if (shard_file_read_all(path, "scene file", &text, &len, err) == 0 &&
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
        s = shard_sim_build(c, scene_path, text, len, ov, 1, rank == 0 ? &ck : NULL, err);
    }
    free(text);
    shard_checkpoint_data_free(&ck);
    return s;
}

shard_sim *shard_sim_open(shard_comm *c, const char *path, const shard_overrides *ov, shard_error *err)
{
    if (ov->restart)
        return shard_sim_restart(c, path, ov, err);
    char *text = NULL;
    size_t len = 0;
    memset(err, 0, sizeof *err);
    if (shard_comm_rank(c) == 0) {
        FILE *fp = fopen(path, "rb");
        if (!fp) {
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot open scene file: %s", path, strerror(errno));
        } else {
            size_t cap = 0;
            for (;;) {
                shard_reserve((void **)&text, &cap, len + 65536, 1);
                size_t got = fread(text + len, 1, cap - len, fp);
                len += got;
                if (got == 0)
                    break;
            }
            if (ferror(fp))
                shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot read scene file: %s", path, strerror(errno));
            fclose(fp);
        }
    }
    if (shard_comm_agree(c, err, 0)) {
        free(text);
        return NULL;
    }
    shard_sim *s = shard_sim_create(c, path, text, len, ov, err);
    free(text);
    return s;
}


void shard_sim_step(shard_sim *s)
{
    shard_particles *p = &s->p;
    shard_timer_stamp(&s->timer, SHARD_PHASE_OTHER, shard_wtime());
    double h = 0.5 * s->dt;
    shard_integrate_kick(p, h);
    shard_integrate_drift(p, s->dt);
    s->step++;
    shard_timer_stamp(&s->timer, SHARD_PHASE_INTEGRATE, shard_wtime());
    /* Each halo exchange is overlapped with the particles that need no ghost; every particle is computed
     * exactly once per pass, from the same inputs as without the overlap, so the state does not change. */
    double *xv[2] = {p->x, p->v};
    int n_xv[2] = {3, 3}, n_b[1] = {9};
    shard_halo_forward_begin(s->bond_halo, 2, xv, n_xv);
    shard_timer_stamp(&s->timer, SHARD_PHASE_COMM, shard_wtime());
    shard_solid_stress_list(p, &s->bonds, s->solid, s->dt, s->inner, s->n_inner);
    shard_timer_stamp(&s->timer, SHARD_PHASE_SOLID, shard_wtime());
    shard_halo_forward_end(s->bond_halo, 2, xv, n_xv);
    shard_sim_after_positions(s, 0);
    shard_solid_stress_list(p, &s->bonds, s->solid, s->dt, s->outer, s->n_outer);
    shard_timer_stamp(&s->timer, SHARD_PHASE_SOLID, shard_wtime());
    double *bf[1] = {p->B}; /* after a possible contact-ghost rebuild, which may move the arrays */
    shard_halo_forward_begin(s->bond_halo, 1, bf, n_b);
    shard_timer_stamp(&s->timer, SHARD_PHASE_COMM, shard_wtime());
    shard_solid_forces_list(p, &s->bonds, s->solid, s->f, s->inner, s->n_inner);
    shard_timer_stamp(&s->timer, SHARD_PHASE_SOLID, shard_wtime());
    shard_halo_forward_end(s->bond_halo, 1, bf, n_b);
    shard_timer_stamp(&s->timer, SHARD_PHASE_COMM, shard_wtime());
    shard_solid_forces_list(p, &s->bonds, s->solid, s->f, s->outer, s->n_outer);
    shard_timer_stamp(&s->timer, SHARD_PHASE_SOLID, shard_wtime());
    shard_sim_contacts(s);
    shard_integrate_kick(p, h);
    shard_timer_stamp(&s->timer, SHARD_PHASE_INTEGRATE, shard_wtime());
}

shard_diag shard_sim_diagnostics(shard_sim *s)
{
    const shard_particles *p = &s->p;
    double v[7] = {0};
    double vmax = 0.0;
    for (size_t i = 0; i < p->n_owned; i++) {
        const double *vi = p->v + 3 * i;
        double v2 = vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2];
        v[0] += 0.5 * p->mass[i] * v2;
        for (int k = 0; k < 3; k++)
            v[2 + k] += p->mass[i] * vi[k];
        vmax = fmax(vmax, v2);
    }
    v[1] = shard_solid_energy(p, &s->bonds, s->solid);
    v[5] = (double)s->contacts_local;
    shard_comm_sum(s->comm, v, 6);
    shard_diag d = {.kinetic = v[0], .elastic = v[1], .momentum = {v[2], v[3], v[4]}};
    d.contacts = (int64_t)v[5];
    d.max_speed = sqrt(shard_comm_max(s->comm, vmax));
    return d;
}

static void shard_sim_format_duration(double sec, char *buf, size_t len)
{
    if (sec < 120.0)
        snprintf(buf, len, "%.1f s", sec);
    else if (sec < 7200.0)
        snprintf(buf, len, "%.1f min", sec / 60.0);
    else
        snprintf(buf, len, "%.1f h", sec / 3600.0);
}

/* The output columns of the fields in `want` (a mask of shard_output_field), derived ones computed now. */
static int shard_sim_columns(shard_sim *s, unsigned want, shard_output_column *cols, int max)
{
    shard_particles *p = &s->p;
    size_t n = p->n_owned;
    want |= 1u << SHARD_OUT_POSITION | 1u << SHARD_OUT_GLOBAL_ID;
    /* Gradients need the bond ghosts' current x and v (they hold the half-step values between steps).  The
     * next step overwrites ghosts before reading them, so this exchange never changes the state. */
    if (want & (1u << SHARD_OUT_STRESS | 1u << SHARD_OUT_VON_MISES)) {
        double *fields[2] = {p->x, p->v};
        int ncomp[2] = {3, 3};
        shard_halo_forward(s->bond_halo, 2, fields, ncomp);
    }
    shard_reserve((void **)&s->io_d, &s->io_d_cap, 12 * n + 1, sizeof *s->io_d);
    shard_reserve((void **)&s->io_i, &s->io_i_cap, 2 * n + 1, sizeof *s->io_i);
    double *disp = s->io_d, *sigma = s->io_d + 3 * n, *vm = s->io_d + 9 * n, *plastic = s->io_d + 10 * n,
           *damage = s->io_d + 11 * n;
    int32_t *material = s->io_i, *rank = s->io_i + n;
    int me = shard_comm_rank(s->comm);
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            disp[3 * i + k] = p->x[3 * i + k] - p->X[3 * i + k];
        material[i] = s->scene.bodies[p->body[i]].material;
        rank[i] = me;
        int64_t b0 = s->bonds.start[i], b1 = s->bonds.start[i + 1], broken = 0;
        for (int64_t b = b0; b < b1; b++)
            broken += s->bond_broken[b];
        damage[i] = b1 > b0 ? (double)broken / (double)(b1 - b0) : 0.0;
    }
    shard_solid_output(p, &s->bonds, s->solid, (want & 1u << SHARD_OUT_STRESS) ? sigma : NULL,
                       (want & 1u << SHARD_OUT_VON_MISES) ? vm : NULL,
                       (want & 1u << SHARD_OUT_PLASTIC_STRAIN) ? plastic : NULL);
    const shard_output_column all[SHARD_OUT_COUNT] = {
        [SHARD_OUT_POSITION] = {"position", SHARD_TYPE_F64, 3, p->x},
        [SHARD_OUT_VELOCITY] = {"velocity", SHARD_TYPE_F64, 3, p->v},
        [SHARD_OUT_DISPLACEMENT] = {"displacement", SHARD_TYPE_F64, 3, disp},
        [SHARD_OUT_STRESS] = {"stress", SHARD_TYPE_F64, 6, sigma},
        [SHARD_OUT_VON_MISES] = {"von_mises", SHARD_TYPE_F64, 1, vm},
        [SHARD_OUT_PLASTIC_STRAIN] = {"plastic_strain", SHARD_TYPE_F64, 1, plastic},
        [SHARD_OUT_DAMAGE] = {"damage", SHARD_TYPE_F64, 1, damage},
        [SHARD_OUT_BODY] = {"body", SHARD_TYPE_I32, 1, p->body},
        [SHARD_OUT_MATERIAL] = {"material", SHARD_TYPE_I32, 1, material},
        [SHARD_OUT_RANK] = {"rank", SHARD_TYPE_I32, 1, rank},
        [SHARD_OUT_GLOBAL_ID] = {"global_id", SHARD_TYPE_I64, 1, p->gid},
    };
    int m = 0;
    for (int f = 0; f < SHARD_OUT_COUNT && m < max; f++)
        if (want & 1u << f)
            cols[m++] = all[f];
    return m;
}

int shard_sim_output_columns(shard_sim *s, shard_output_column *cols, int max)
{
    unsigned want = s->scene.output.enabled ? s->scene.output.fields : (1u << SHARD_OUT_COUNT) - 1u;
    return shard_sim_columns(s, want, cols, max);
}

/* Runs the Catalyst scripts due at this step with every output field. Collective. */
static void shard_sim_insitu(shard_sim *s)
{
    shard_output_column cols[SHARD_OUT_COUNT];
    shard_sim_columns(s, (1u << SHARD_OUT_COUNT) - 1u, cols, SHARD_OUT_COUNT);
    /* With every field requested, cols[f] is field f. */
    shard_insitu_fields f = {
        .n = s->p.n_owned,
        .position = cols[SHARD_OUT_POSITION].data,
        .global_id = cols[SHARD_OUT_GLOBAL_ID].data,
        .velocity = cols[SHARD_OUT_VELOCITY].data,
        .displacement = cols[SHARD_OUT_DISPLACEMENT].data,
        .stress = cols[SHARD_OUT_STRESS].data,
        .von_mises = cols[SHARD_OUT_VON_MISES].data,
        .plastic_strain = cols[SHARD_OUT_PLASTIC_STRAIN].data,
        .damage = cols[SHARD_OUT_DAMAGE].data,
        .body = cols[SHARD_OUT_BODY].data,
        .material = cols[SHARD_OUT_MATERIAL].data,
    };
    shard_error e;
    if (shard_insitu_execute(s->insitu, s->step, shard_sim_time(s), &f, &e))
        shard_fail_all(s->comm, e.code, e.msg);
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

int shard_sim_write_output(shard_sim *s, shard_error *err)
{
    memset(err, 0, sizeof *err);
    if (!s->out)
        return 0;
    shard_output_column cols[SHARD_OUT_COUNT];
    int m = shard_sim_output_columns(s, cols, SHARD_OUT_COUNT);
    int rc = shard_output_write(s->out, s->comm, s->step, shard_sim_time(s), s->p.n_owned, m, cols, err);
    if (!rc)
        s->last_output = s->step;
    return rc;
}

int shard_sim_write_checkpoint(shard_sim *s, shard_error *err)
{
    memset(err, 0, sizeof *err);
    if (!s->ckpt)
        return 0;
    int64_t contacts = shard_comm_sum_i64(s->comm, s->contacts_local);
    shard_checkpoint_state st = {
        .p = &s->p, .bonds = &s->bonds, .broken = s->bond_broken, .step = s->step, .dt = s->dt,
        .contacts = contacts, .state_hash = shard_sim_hash(s), .scene_path = s->scene.path,
        .scene_text = s->scene.text, .scene_len = s->scene.text_len,
    };
    return shard_checkpoint_write(s->ckpt, s->comm, &st, err);
}

/* Output and checkpoint due at the current step, each on its own interval.  Output comes first, so a
 * checkpoint at step k implies that the output of step k (if due) is complete.  Collective. */
static void shard_sim_io(shard_sim *s, int final)
{
    shard_error e;
    const shard_scene *sc = &s->scene;
    shard_timer_stamp(&s->timer, SHARD_PHASE_OTHER, shard_wtime());
    if (s->out && s->last_output != s->step &&
        (final || shard_interval_due(&sc->output.interval, s->step, s->dt))) {
        if (shard_sim_write_output(s, &e))
            shard_fail_all(s->comm, e.code, e.msg);
    }
    if (s->ckpt && !final && s->step != s->restarted_at &&
        shard_interval_due(&sc->checkpoint.interval, s->step, s->dt) && s->step > 0) {
        if (shard_sim_write_checkpoint(s, &e))
            shard_fail_all(s->comm, e.code, e.msg);
    }
    shard_timer_stamp(&s->timer, SHARD_PHASE_IO, shard_wtime());
    if (!final && shard_insitu_wants(s->insitu, s->step)) {
        shard_sim_insitu(s);
        shard_timer_stamp(&s->timer, SHARD_PHASE_INSITU, shard_wtime());
    }
}

void shard_sim_run(shard_sim *s, int quiet)
{
    int rank = shard_comm_rank(s->comm);
    long every = s->scene.run.diagnostics_every;
    double t0 = shard_wtime(), last_print = t0;
    shard_timer_start(&s->timer, t0);
    if (rank == 0 && !quiet)
        printf("Running %ld steps of %.6g s (%lld particles, %d ranks)\n", s->total_steps - s->step, s->dt,
               (long long)s->n_global, shard_comm_size(s->comm));
    long first = s->step;
    shard_sim_io(s, 0);
    while (s->step < s->total_steps) {
        shard_sim_step(s);
        shard_sim_io(s, 0);
        if (every > 0 && s->step % every == 0) {
            shard_diag d = shard_sim_diagnostics(s);
            if (rank == 0 && !quiet)
                printf("diag step %ld t %.6e  kinetic %.6e J  elastic %.6e J  momentum %.3e %.3e %.3e  "
                       "max|v| %.3e  contacts %lld\n",
                       s->step, shard_sim_time(s), d.kinetic, d.elastic, d.momentum[0], d.momentum[1],
                       d.momentum[2], d.max_speed, (long long)d.contacts);
            shard_timer_stamp(&s->timer, SHARD_PHASE_OTHER, shard_wtime());
        }
        if (rank == 0 && !quiet) {
            double now = shard_wtime();
            if (now - last_print >= 1.0 || s->step == s->total_steps) {
                last_print = now;
                double done = (double)(s->step - first), left = (double)(s->total_steps - s->step);
                char wall[32], eta[32];
                shard_sim_format_duration(now - t0, wall, sizeof wall);
                shard_sim_format_duration(done > 0 ? (now - t0) / done * left : 0.0, eta, sizeof eta);
                printf("step %ld/%ld  t = %.4e s  wall %s  ETA %s\n", s->step, s->total_steps, shard_sim_time(s),
                       wall, eta);
                fflush(stdout);
            }
            shard_timer_stamp(&s->timer, SHARD_PHASE_OTHER, shard_wtime());
        }
    }
    shard_sim_io(s, 1);
    shard_timer_stamp(&s->timer, SHARD_PHASE_OTHER, shard_wtime());
    s->loop_wall += shard_wtime() - t0;
}

uint64_t shard_sim_hash(shard_sim *s) { return shard_comm_sum_u64(s->comm, shard_state_hash_local(&s->p)); }

/* Per body: mass, centre of mass (3), mean velocity (3), bounding box (6).  Collective; diagnostics only. */
enum { SHARD_BODY_STATS = 13 };
static double *shard_sim_body_stats(shard_sim *s)
{
    int nb = s->scene.n_bodies;
    double *sum = shard_calloc((size_t)nb * 7, sizeof *sum), *ext = shard_malloc((size_t)nb * 6 * sizeof *ext);
    for (int b = 0; b < nb; b++)
        for (int k = 0; k < 6; k++)
            ext[6 * b + k] = -INFINITY; /* max of x and of -x */
    const shard_particles *p = &s->p;
    for (size_t i = 0; i < p->n_owned; i++) {
        int b = p->body[i];
        double m = p->mass[i];
        sum[7 * b] += m;
        for (int k = 0; k < 3; k++) {
            sum[7 * b + 1 + k] += m * p->x[3 * i + k];
            sum[7 * b + 4 + k] += m * p->v[3 * i + k];
            ext[6 * b + k] = fmax(ext[6 * b + k], -p->x[3 * i + k]);
            ext[6 * b + 3 + k] = fmax(ext[6 * b + 3 + k], p->x[3 * i + k]);
        }
    }
    shard_comm_sum(s->comm, sum, 7 * nb);
    shard_comm_max_doubles(s->comm, ext, 6 * nb);
    double *out = shard_malloc((size_t)nb * SHARD_BODY_STATS * sizeof *out);
    for (int b = 0; b < nb; b++) {
        double *o = out + SHARD_BODY_STATS * b, m = sum[7 * b];
        o[0] = m;
        for (int k = 0; k < 3; k++) {
            o[1 + k] = sum[7 * b + 1 + k] / m;
            o[4 + k] = sum[7 * b + 4 + k] / m;
            o[7 + k] = -ext[6 * b + k];
            o[10 + k] = ext[6 * b + 3 + k];
        }
    }
    free(sum), free(ext);
    return out;
}

static void shard_sim_print_bodies(const shard_sim *s, const double *st)
{
    printf("Bodies at the end:\n");
    printf("  %-16s %10s %32s %32s %32s\n", "body", "mass (kg)", "centre of mass (m)", "mean velocity (m/s)",
           "extent (m)");
    for (int b = 0; b < s->scene.n_bodies; b++) {
        const double *o = st + SHARD_BODY_STATS * b;
        printf("  %-16s %10.4g   %9.4g %9.4g %9.4g   %9.4g %9.4g %9.4g   %9.4g %9.4g %9.4g\n",
               s->scene.bodies[b].name, o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[10] - o[7], o[11] - o[8],
               o[12] - o[9]);
    }
}

static double shard_sim_peak_rss_bytes(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss * 1024.0;
}

void shard_sim_report(shard_sim *s)
{
    int rank = shard_comm_rank(s->comm), size = shard_comm_size(s->comm);
    /* Per-rank values gathered on rank 0: phases, loop wall time, peak RSS, owned, ghosts, halo bytes. */
    enum { NV = SHARD_PHASE_COUNT + 9 };
    double mine[NV];
    for (int k = 0; k < SHARD_PHASE_COUNT; k++)
        mine[k] = s->timer.t[k];
    mine[SHARD_PHASE_COUNT] = s->loop_wall;
    mine[SHARD_PHASE_COUNT + 1] = shard_sim_peak_rss_bytes();
    mine[SHARD_PHASE_COUNT + 2] = (double)s->p.n_owned;
    mine[SHARD_PHASE_COUNT + 3] = (double)(s->p.n_local - s->p.n_owned);
    mine[SHARD_PHASE_COUNT + 4] = (double)(shard_halo_bytes(s->bond_halo) + shard_halo_bytes(s->contact_halo));
    mine[SHARD_PHASE_COUNT + 5] = (double)s->bonds.start[s->p.n_owned];
    long n_out = 0, n_ck = 0;
    uint64_t b_out = 0, b_ck = 0;
    double t_out = 0.0, t_ck = 0.0;
    shard_output_stats(s->out, &n_out, &b_out, &t_out);
    shard_checkpoint_stats(s->ckpt, &n_ck, &b_ck, &t_ck);
    mine[SHARD_PHASE_COUNT + 6] = t_out + t_ck; /* seconds in file writes */
    mine[SHARD_PHASE_COUNT + 7] = (double)(b_out + b_ck);
    mine[SHARD_PHASE_COUNT + 8] = (double)s->p.n_bond_ghost;
    double *all = rank == 0 ? shard_malloc((size_t)size * NV * sizeof *all) : NULL;
    shard_comm_gather(s->comm, mine, NV, all);
    uint64_t hash = shard_sim_hash(s);
    shard_diag d = shard_sim_diagnostics(s);
    double *bodies = shard_sim_body_stats(s);
    if (rank != 0) {
        free(bodies);
        return;
    }
    double st[NV][4]; /* min, avg, max, argmax */
    for (int k = 0; k < NV; k++) {
        st[k][0] = INFINITY, st[k][1] = 0.0, st[k][2] = -INFINITY, st[k][3] = 0;
        for (int r = 0; r < size; r++) {
            double v = all[(size_t)r * NV + (size_t)k];
            st[k][0] = fmin(st[k][0], v);
            st[k][1] += v / size;
            if (v > st[k][2])
                st[k][2] = v, st[k][3] = r;
        }
    }
    free(all);
    double loop = st[SHARD_PHASE_COUNT][2];
    long steps = s->step - (s->restarted_at >= 0 ? s->restarted_at : 0); /* steps this process ran */
    printf("\nLoop time of %.6g s on %d rank(s) for %ld steps with %lld particles\n", loop, size, steps,
           (long long)s->n_global);
    printf("\n%-10s | %10s | %10s | %10s | %8s | %7s | %6s\n", "Phase", "min (s)", "avg (s)", "max (s)", "max rank",
           "%varavg", "%total");
    printf("-----------+------------+------------+------------+----------+---------+-------\n");
    for (int k = 0; k < SHARD_PHASE_COUNT; k++) {
        double var = st[k][1] > 0.0 ? 100.0 * (st[k][2] - st[k][0]) / st[k][1] : 0.0;
        printf("%-10s | %10.4g | %10.4g | %10.4g | %8d | %7.1f | %6.2f\n", shard_phase_names[k], st[k][0], st[k][1],
               st[k][2], (int)st[k][3], var, loop > 0.0 ? 100.0 * st[k][1] / loop : 0.0);
    }
    double ps = loop > 0.0 ? (double)s->n_global * (double)steps / loop : 0.0;
    printf("\nPerformance: %.4g particle-steps/s, %.4g particle-steps/s/core\n", ps, ps / size);
    const int MEM = SHARD_PHASE_COUNT + 1, OWN = SHARD_PHASE_COUNT + 2, GH = SHARD_PHASE_COUNT + 3,
              BY = SHARD_PHASE_COUNT + 4, BO = SHARD_PHASE_COUNT + 5;
    printf("Peak memory per rank: min %.1f MiB, avg %.1f MiB, max %.1f MiB (%.0f bytes per particle over all ranks)\n",
           st[MEM][0] / 1048576.0, st[MEM][1] / 1048576.0, st[MEM][2] / 1048576.0,
           st[MEM][1] * size / (double)s->n_global);
    printf("Owned per rank: min %.0f avg %.1f max %.0f (imbalance %.3f); ghosts per rank: min %.0f avg %.1f max %.0f\n",
           st[OWN][0], st[OWN][1], st[OWN][2], st[OWN][1] > 0 ? st[OWN][2] / st[OWN][1] : 0.0, st[GH][0], st[GH][1],
           st[GH][2]);
    const int BG = SHARD_PHASE_COUNT + 8;
    printf("Bond ghosts per rank: min %.0f avg %.1f max %.0f (the halo lists; contact ghosts: the rest)\n", st[BG][0],
           st[BG][1], st[BG][2]);
    printf("Bonds: %lld (%.2f per particle), edge cut %lld; halo bytes sent: %.4g total; contact rebuilds %ld; "
           "active contacts %lld\n",
           (long long)s->n_bonds_global, (double)s->n_bonds_global / (double)s->n_global, (long long)s->edge_cut,
           st[BY][1] * size, s->rebuilds, (long long)d.contacts);
    (void)BO;
    if (s->out || s->ckpt) {
        const int IOT = SHARD_PHASE_COUNT + 6, IOB = SHARD_PHASE_COUNT + 7;
        double bytes = st[IOB][1] * size, secs = st[IOT][2];
        printf("I/O: %ld output file(s), %ld checkpoint(s), %.4g MB written in %.4g s (slowest rank): write "
               "bandwidth %.4g MB/s; I/O phase %.2f %% of the loop time\n",
               n_out, n_ck, bytes / 1e6, secs, secs > 0.0 ? bytes / 1e6 / secs : 0.0,
               loop > 0.0 ? 100.0 * st[SHARD_PHASE_IO][1] / loop : 0.0);
        if (n_ck > 0)
            printf("Last checkpoint: %s\n", shard_checkpoint_last_path(s->ckpt));
    }
    printf("Final: t = %.6e s, kinetic %.6e J, elastic %.6e J, momentum %.6e %.6e %.6e\n", shard_sim_time(s),
           d.kinetic, d.elastic, d.momentum[0], d.momentum[1], d.momentum[2]);
    shard_sim_print_bodies(s, bodies);
    free(bodies);
    printf("State hash: %016llx\n", (unsigned long long)hash);
    fflush(stdout);
}

void shard_sim_summary(shard_sim *s)
{
    if (shard_comm_rank(s->comm) != 0)
        return;
    const shard_scene *sc = &s->scene;
    static const char *shape_names[] = {"box", "sphere", "cylinder", "mesh"};
    static const char *obstacle_names[] = {"plane", "sphere", "box"};
    printf("Scene %s: OK\n", sc->path);
    printf("Materials (%d):\n", sc->n_materials);
    for (int m = 0; m < sc->n_materials; m++) {
        const shard_material *mt = &sc->materials[m];
        printf("  %-16s density %g kg/m^3, E %g Pa, nu %g, k_v %g Pa, damping %g s, plasticity yield %g creep %g "
               "1/s max %g, contact stiffness %s%g, damping %g, friction %g\n",
               mt->name, mt->density, mt->E, mt->nu, mt->volume_stiffness, mt->damping, mt->yield, mt->creep,
               mt->max_plastic, mt->contact_stiffness > 0 ? "" : "auto ", mt->contact_stiffness, mt->contact_damping,
               mt->friction);
    }
    printf("Bodies (%d):\n", sc->n_bodies);
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_body_def *bd = &sc->bodies[b];
        long long n = (long long)s->body_count[b];
        printf("  %-16s %-8s material %-12s spacing %g m, support %g (h = %g m), %lld particles\n", bd->name,
               shape_names[bd->shape.kind], sc->materials[bd->material].name, bd->spacing, bd->support,
               bd->support * bd->spacing, n);
    }
    printf("Obstacles (%d):\n", sc->n_obstacles);
    for (int o = 0; o < sc->n_obstacles; o++)
        printf("  %-16s %s, friction %g\n", sc->obstacles[o].name, obstacle_names[sc->obstacles[o].kind],
               sc->obstacles[o].friction);
    printf("Particles: %lld, bonds: %lld (%.2f per particle)\n", (long long)s->n_global,
           (long long)s->n_bonds_global, (double)s->n_bonds_global / (double)s->n_global);
    printf("Time step: %.6g s (%s limit, safety %g), %ld steps to t = %.6g s\n", s->dt, s->dt_limit,
           sc->run.dt_safety, s->total_steps, (double)s->total_steps * s->dt);
    printf("Output directory: %s\n", sc->run.output_dir);
    if (sc->output.enabled) {
        printf("Output: %s/particles_<step>.h5 and particles.xmf, every ",
               sc->output.dir[0] ? sc->output.dir : sc->run.output_dir);
        if (sc->output.interval.every > 0)
            printf("%ld steps;", sc->output.interval.every);
        else
            printf("%g s;", sc->output.interval.every_time);
        for (int f = 0; f < SHARD_OUT_COUNT; f++)
            if (sc->output.fields & 1u << f)
                printf(" %s", shard_output_field_names[f]);
        printf("\n");
    }
    if (sc->checkpoint.enabled) {
        printf("Checkpoints: %s/checkpoint_<step>.h5, every ",
               sc->checkpoint.dir[0] ? sc->checkpoint.dir : sc->run.output_dir);
        if (sc->checkpoint.interval.every > 0)
            printf("%ld steps", sc->checkpoint.interval.every);
        else
            printf("%g s", sc->checkpoint.interval.every_time);
        printf(", keeping %ld\n", sc->checkpoint.keep);
    }
    fflush(stdout);
}

void shard_sim_destroy(shard_sim **sp)
{
    if (!sp || !*sp)
        return;
    shard_sim *s = *sp;
    shard_insitu_destroy(&s->insitu);
    shard_scene_free(&s->scene);
    shard_particles_free(&s->p);
    shard_csr_free(&s->bonds);
    shard_csr_free(&s->cand);
    shard_cells_free(&s->cells);
    shard_halo_destroy(&s->bond_halo);
    shard_halo_destroy(&s->contact_halo);
    free(s->solid), free(s->contact), free(s->f), free(s->inner), free(s->outer), free(s->body_count);
    free(s->bond_broken), free(s->io_d), free(s->io_i);
    shard_output_destroy(&s->out);
    shard_checkpoint_destroy(&s->ckpt);
    free(s);
    *sp = NULL;
}
