/* Rigid bodies as a matter module (kind: rigid): the glue between the driver's matter table (matter.h) and the
 * kernels of rigid.c.  Per body it keeps a shard_rigid_body (mass properties, shape, state); per particle its
 * position in the body frame; its module state (shard_rigid_world, rigid_contact.h) holds this rank's contacts
 * and the warm starts.
 *
 * Every rank holds every rigid body's state and advances it the same way, bit for bit.  The advance hook kicks
 * the bodies, takes the impulses of other kinds' collision stages, names each body's owner (the rank of its
 * first particle) and hands the contacts to the contact solver (rigid_contact.c), then drifts the bodies and
 * places their particles; the settle hook sums the particles' forces on each body exactly over the ranks (xsum)
 * and kicks.  The module also saves and loads the replicated state in checkpoints and gives the bodies' frames,
 * diagnostics and report. */
#include "shard/matter.h"

#include "rigid/rigid.h"
#include "rigid/rigid_contact.h"
#include "scene_bodies.h"
#include "scene_keys.h"
#include "shard/rotation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const shard_field_desc shard_matter_rigid_rows[] = {
    SHARD_BLOCK_ROW(0, double, 3, 0, "body_position") /* r_i: the rest position in the body frame (derived) */
};

static shard_rigid_body *shard_rigid_bodies(const shard_matter_ctx *c) { return c->bodies; }

static int shard_matter_rigid_init(const shard_scene *sc, int b, void *state, shard_error *err)
{
    const shard_body_def *bd = &sc->bodies[b];
    if (bd->n_constraints > 0)
        return shard_error_at(err, sc->path, &bd->constraints[0].loc,
                              "body '%s' is rigid: it cannot have fixed or prescribed regions (give it `motion: "
                              "kinematic` to move it with its velocity and angular velocity)",
                              bd->name);
    if (bd->n_tractions > 0)
        return shard_error_at(err, sc->path, &bd->tractions[0].loc,
                              "body '%s' is rigid: surface tractions act on deformable bodies", bd->name);
    return shard_rigid_body_init(sc, b, state, err);
}

static void shard_matter_rigid_finish(const shard_scene *sc, void *bodies)
{
    shard_rigid_body *B = bodies;
    for (int b = 0; b < sc->n_bodies; b++)
        shard_rigid_body_free(&B[b]);
}

/* Accuracy, not stability (the contact impulses are stable at any step): a tenth of the time a body at rest
 * takes to fall one particle spacing. */
static double shard_matter_rigid_dt(const shard_scene *sc, int b, const void *state)
{
    (void)state;
    const double *g = sc->run.gravity;
    double gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    return gn > 0.0 ? 0.1 * sqrt(2.0 * sc->bodies[b].spacing / gn) : INFINITY;
}

/* The world's lists, once: the rigid bodies in scene order. */
static shard_rigid_world *shard_rigid_world_of(const shard_matter_ctx *c)
{
    shard_rigid_world *W = c->state;
    if (W->init)
        return W;
    const shard_scene *sc = c->ph->scene;
    const shard_rigid_body *B = shard_rigid_bodies(c);
    W->slot = shard_malloc(((size_t)sc->n_bodies + 1) * sizeof *W->slot);
    W->rigid = shard_malloc(((size_t)sc->n_bodies + 1) * sizeof *W->rigid);
    for (int b = 0; b < sc->n_bodies; b++) {
        W->slot[b] = -1;
        if (B[b].rigid) {
            W->slot[b] = W->n_rigid;
            W->rigid[W->n_rigid++] = b;
        }
    }
    size_t nr = (size_t)W->n_rigid + 1;
    W->own = shard_malloc(nr * sizeof *W->own);
    W->cstart = shard_malloc((nr + 1) * sizeof *W->cstart);
    W->sort_x = shard_malloc(nr * sizeof *W->sort_x);
    W->sort_i = shard_malloc(nr * sizeof *W->sort_i);
    W->init = 1;
    return W;
}

static void shard_matter_rigid_state_free(void *state)
{
    shard_rigid_world *W = state;
    free(W->rigid), free(W->slot), free(W->own), free(W->c), free(W->cstart), free(W->clist);
    free(W->mem), free(W->sort_x), free(W->sort_i), free(W->pair_at), free(W->colour), free(W->cc_start);
    free(W->cc_list), free(W->used), free(W->vel);
    memset(W, 0, sizeof *W);
}

static void shard_matter_rigid_prepare(const shard_matter_ctx *c)
{
    const shard_particles *p = c->ph->p;
    const shard_rigid_body *B = shard_rigid_bodies(c);
    shard_block *blk = c->block;
    double *r = blk->col[0];
    double R0[9];
    for (size_t s = 0; s < blk->n_owned; s++) {
        size_t i = blk->first + s;
        const shard_rigid_body *rb = &B[p->body[i]];
        shard_quat_to_matrix(rb->q0, R0);
        double d[3] = {p->X[3 * i] - rb->x0[0], p->X[3 * i + 1] - rb->x0[1], p->X[3 * i + 2] - rb->x0[2]};
        shard_mat3_tmul_vec(R0, d, r + 3 * s);
    }
    shard_rigid_world_of(c);
}

/* The owned particles' positions and velocities (and accelerations, a = dv/dt of their point: the body's
 * linear acceleration only) from their bodies. */
static void shard_matter_rigid_place(const shard_matter_ctx *c, int positions)
{
    shard_particles *p = c->ph->p;
    const shard_rigid_body *B = shard_rigid_bodies(c);
    const shard_block *blk = c->block;
    const double *r = blk->col[0];
    for (size_t s = 0; s < blk->n_owned; s++) {
        size_t i = blk->first + s;
        const shard_rigid_body *rb = &B[p->body[i]];
        double off[3];
        shard_mat3_mul_vec(rb->R, r + 3 * s, off);
        if (positions)
            for (int k = 0; k < 3; k++)
                p->x[3 * i + k] = rb->x[k] + off[k];
        double wr[3] = {rb->w[1] * off[2] - rb->w[2] * off[1], rb->w[2] * off[0] - rb->w[0] * off[2],
                        rb->w[0] * off[1] - rb->w[1] * off[0]};
        for (int k = 0; k < 3; k++) {
            p->v[3 * i + k] = rb->v[k] + wr[k];
            p->a[3 * i + k] = rb->kinematic ? 0.0 : rb->F[k] * rb->inv_mass + c->ph->scene->run.gravity[k];
        }
    }
}

static void shard_rigid_take_impulses(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc);

static void shard_matter_rigid_advance(const shard_matter_ctx *c, const shard_collective *svc)
{
    shard_rigid_world *W = shard_rigid_world_of(c);
    const shard_scene *sc = c->ph->scene;
    const shard_particles *p = c->ph->p;
    shard_rigid_body *B = c->bodies;
    double h = 0.5 * c->ph->dt;
    /* 1. Half kick with the last forces. */
    for (int s = 0; s < W->n_rigid; s++)
        shard_rigid_kick(&B[W->rigid[s]], sc->run.gravity, h);
    /* and the impulses of other kinds' collision stages (a cloth's triangles pushed back) */
    shard_rigid_take_impulses(c, W, svc);
    /* 2. Owners: the rank of each body's first particle. */
    for (int s = 0; s < W->n_rigid; s++)
        W->own[s] = -1;
    for (size_t q = 0; q < c->block->n_owned; q++) {
        size_t i = c->block->first + q;
        int b = p->body[i];
        if (p->gid[i] == c->ph->body_first[b])
            W->own[W->slot[b]] = svc->rank;
    }
    svc->max_ints(svc->impl, W->own, W->n_rigid);
    for (int s = 0; s < W->n_rigid; s++)
        B[W->rigid[s]].owner = W->own[s];
    /* 3. to 5.: the contacts, their impulses and the position correction (rigid_contact.c). */
    double res = 0.0;
    long it_pos = 0, it = shard_rigid_solve_contacts(c, W, svc, &it_pos, &res);
    /* 6. Drift, dropping the pseudo-velocities. */
    for (int s = 0; s < W->n_rigid; s++) {
        shard_rigid_body *rb = &B[W->rigid[s]];
        shard_rigid_drift(rb, c->ph->dt);
        memset(rb->vp, 0, sizeof rb->vp), memset(rb->Lp, 0, sizeof rb->Lp), memset(rb->wp, 0, sizeof rb->wp);
    }
    shard_rigid_remember(c, W, svc);
    shard_matter_rigid_place(c, 1);
    W->steps++;
    W->iterations += it;
    W->iterations_pos += it_pos;
    if (it > W->iterations_max)
        W->iterations_max = it;
    W->residual = res;
    W->last_it = it, W->last_it_pos = it_pos;
}

/* ---- forces from the particles -------------------------------------------------------------------------- */

/* The record of a body's force and torque from one rank's particles: exact accumulators. */
typedef struct shard_rigid_load {
    int32_t body, pad;
    shard_xsum acc[6];
} shard_rigid_load;

/* One push on a body (a particle's force, or an impulse handed over by a collision stage): its body (-1: none),
 * where it acts and what it is. */
typedef int (*shard_rigid_push_fn)(const shard_matter_ctx *c, size_t k, const double **x, const double **f);

/* The sums over the ranks of pushes 0 .. n (push(k)) per body: out[6 s ..] = the sum of f and of the torques
 * (x - x_body) x f for the body in slot s, exact (xsum), so the same for any partition and order.  Only bodies
 * pushed somewhere travel. */
static void shard_rigid_sum_pushes(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc,
                                   size_t n_push, shard_rigid_push_fn push, double *out)
{
    shard_rigid_body *B = c->bodies;
    shard_rigid_load *mine = shard_malloc(((size_t)W->n_rigid + 1) * sizeof *mine);
    int32_t *at = shard_malloc(((size_t)W->n_rigid + 1) * sizeof *at);
    for (int s = 0; s < W->n_rigid; s++)
        at[s] = -1;
    size_t n = 0;
    for (size_t q = 0; q < n_push; q++) {
        const double *xi, *fi;
        int b = push(c, q, &xi, &fi);
        if (b < 0 || (fi[0] == 0.0 && fi[1] == 0.0 && fi[2] == 0.0))
            continue;
        int s = W->slot[b];
        if (at[s] < 0) {
            at[s] = (int32_t)n;
            memset(&mine[n], 0, sizeof mine[n]);
            mine[n].body = b;
            for (int k = 0; k < 6; k++)
                shard_xsum_init(&mine[n].acc[k]);
            n++;
        }
        const double *x = B[b].x;
        double r[3] = {xi[0] - x[0], xi[1] - x[1], xi[2] - x[2]};
        double t[3] = {r[1] * fi[2] - r[2] * fi[1], r[2] * fi[0] - r[0] * fi[2], r[0] * fi[1] - r[1] * fi[0]};
        shard_rigid_load *L = &mine[at[s]];
        for (int k = 0; k < 3; k++)
            shard_xsum_add(&L->acc[k], fi[k]), shard_xsum_add(&L->acc[3 + k], t[k]);
    }
    for (size_t q = 0; q < n; q++)
        for (int k = 0; k < 6; k++)
            shard_xsum_normalise(&mine[q].acc[k]);
    size_t total = 0;
    shard_rigid_load *all = svc->allgather(svc->impl, mine, n * sizeof *mine, &total);
    W->bytes += (uint64_t)(n * sizeof *mine) * (uint64_t)(svc->size - 1);
    shard_xsum *sum = shard_malloc(((size_t)W->n_rigid * 6 + 1) * sizeof *sum);
    for (int k = 0; k < 6 * W->n_rigid; k++)
        shard_xsum_init(&sum[k]);
    for (size_t q = 0; q < total / sizeof *all; q++)
        for (int k = 0; k < 6; k++)
            shard_xsum_merge(&sum[6 * W->slot[all[q].body] + k], &all[q].acc[k]);
    for (int k = 0; k < 6 * W->n_rigid; k++)
        out[k] = shard_xsum_round(&sum[k]);
    free(sum), free(all), free(at), free(mine);
}

/* The owned particles' forces (the module's block). */
static int shard_rigid_particle_force(const shard_matter_ctx *c, size_t k, const double **x, const double **f)
{
    size_t i = c->block->first + k;
    *x = c->ph->p->x + 3 * i, *f = c->ph->f + 3 * i;
    return c->ph->p->body[i];
}

/* The impulses a collision stage handed over this step (matter.h). */
static int shard_rigid_handed_impulse(const shard_matter_ctx *c, size_t k, const double **x, const double **f)
{
    const shard_impulse *e = &c->ph->impulses->at[k];
    *x = e->x, *f = e->J;
    return shard_rigid_bodies(c)[e->body].rigid ? e->body : -1; /* (another kind's whole bodies: theirs) */
}

/* The impulses of other kinds' collision stages on the bodies (matter.h, shard_impulse): added to their momenta
 * at the start of the step (every rank the same exact sums; only when some rank has any). */
static void shard_rigid_take_impulses(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc)
{
    const shard_impulses *im = c->ph->impulses;
    if (!im) /* no kind in the scene has a collision stage: the same on every rank */
        return;
    int any[1] = {im->n > 0};
    svc->max_ints(svc->impl, any, 1);
    if (!any[0])
        return;
    shard_rigid_body *B = c->bodies;
    double *sum = shard_malloc(((size_t)W->n_rigid * 6 + 1) * sizeof *sum);
    shard_rigid_sum_pushes(c, W, svc, im->n, shard_rigid_handed_impulse, sum);
    for (int s = 0; s < W->n_rigid; s++) {
        shard_rigid_body *rb = &B[W->rigid[s]];
        if (rb->kinematic)
            continue;
        for (int k = 0; k < 3; k++)
            rb->v[k] += rb->inv_mass * sum[6 * s + k], rb->L[k] += sum[6 * s + 3 + k];
    }
    free(sum);
}

static void shard_matter_rigid_settle(const shard_matter_ctx *c, const shard_collective *svc, int kick)
{
    shard_rigid_world *W = shard_rigid_world_of(c);
    const shard_scene *sc = c->ph->scene;
    shard_rigid_body *B = c->bodies;
    /* F and tau about x from the owned particles, as exact sums; only bodies with a force travel. */
    double *sum = shard_malloc(((size_t)W->n_rigid * 6 + 1) * sizeof *sum);
    shard_rigid_sum_pushes(c, W, svc, c->ph->f ? c->block->n_owned : 0, shard_rigid_particle_force, sum);
    for (int s = 0; s < W->n_rigid; s++) {
        shard_rigid_body *rb = &B[W->rigid[s]];
        for (int k = 0; k < 3; k++)
            rb->F[k] = sum[6 * s + k], rb->tau[k] = sum[6 * s + 3 + k];
        if (kick)
            shard_rigid_kick(rb, sc->run.gravity, 0.5 * c->ph->dt);
    }
    free(sum);
    shard_matter_rigid_place(c, !kick);
}

/* ---- checkpoint, output, diagnostics -------------------------------------------------------------------- */

enum { SHARD_RIGID_STATE_DOUBLES = 19 };                               /* x 3, q 4, v 3, L 3, F 3, tau 3 */
static const uint64_t shard_rigid_state_magic = 0x3152444952444853ull; /* "SHRDRIG1" */

static size_t shard_matter_rigid_state_size(const shard_matter_ctx *c)
{
    const shard_rigid_world *W = shard_rigid_world_of(c);
    return 3 * sizeof(uint64_t) + (size_t)W->n_rigid * SHARD_RIGID_STATE_DOUBLES * sizeof(double) +
           W->n_mem * sizeof(shard_rigid_memory);
}

static void shard_matter_rigid_state_save(const shard_matter_ctx *c, void *buf)
{
    const shard_rigid_world *W = shard_rigid_world_of(c);
    const shard_rigid_body *B = c->bodies;
    uint64_t head[3] = {shard_rigid_state_magic, (uint64_t)W->n_rigid, (uint64_t)W->n_mem};
    char *w = buf;
    memcpy(w, head, sizeof head);
    w += sizeof head;
    for (int s = 0; s < W->n_rigid; s++) {
        const shard_rigid_body *rb = &B[W->rigid[s]];
        const double *parts[6] = {rb->x, rb->q, rb->v, rb->L, rb->F, rb->tau};
        const size_t len[6] = {3, 4, 3, 3, 3, 3};
        for (int k = 0; k < 6; k++) {
            memcpy(w, parts[k], len[k] * sizeof(double));
            w += len[k] * sizeof(double);
        }
    }
    if (W->n_mem)
        memcpy(w, W->mem, W->n_mem * sizeof *W->mem);
}

static int shard_matter_rigid_state_load(const shard_matter_ctx *c, const void *buf, size_t bytes, shard_error *err)
{
    shard_rigid_world *W = shard_rigid_world_of(c);
    shard_rigid_body *B = c->bodies;
    uint64_t head[3] = {0, 0, 0};
    if (bytes >= sizeof head)
        memcpy(head, buf, sizeof head);
    size_t want = 3 * sizeof(uint64_t) + (size_t)W->n_rigid * SHARD_RIGID_STATE_DOUBLES * sizeof(double);
    if (bytes < sizeof head || head[0] != shard_rigid_state_magic || head[1] != (uint64_t)W->n_rigid ||
        head[2] > (bytes - want) / sizeof(shard_rigid_memory) || bytes != want + head[2] * sizeof(shard_rigid_memory))
        return shard_error_set(err, SHARD_EXIT_INPUT,
                               "its rigid-body state (%zu bytes) is not that of the scene's "
                               "%d rigid bodies",
                               bytes, W->n_rigid);
    const char *r = (const char *)buf + sizeof head;
    for (int s = 0; s < W->n_rigid; s++) {
        shard_rigid_body *rb = &B[W->rigid[s]];
        double *parts[6] = {rb->x, rb->q, rb->v, rb->L, rb->F, rb->tau};
        const size_t len[6] = {3, 4, 3, 3, 3, 3};
        for (int k = 0; k < 6; k++) {
            memcpy(parts[k], r, len[k] * sizeof(double));
            r += len[k] * sizeof(double);
        }
        shard_rigid_derive(rb);
    }
    free(W->mem);
    W->n_mem = W->mem_cap = (size_t)head[2];
    W->mem = shard_malloc((W->n_mem + 1) * sizeof *W->mem);
    if (W->n_mem)
        memcpy(W->mem, r, W->n_mem * sizeof *W->mem);
    W->contacts = (int64_t)W->n_mem;
    return 0;
}

static size_t shard_matter_rigid_frames(const shard_matter_ctx *c, shard_frame *out)
{
    const shard_rigid_world *W = shard_rigid_world_of(c);
    const shard_rigid_body *B = c->bodies;
    for (int s = 0; s < W->n_rigid; s++) {
        const shard_rigid_body *rb = &B[W->rigid[s]];
        shard_frame *f = &out[s];
        f->body = W->rigid[s];
        memcpy(f->x, rb->x, sizeof f->x), memcpy(f->q, rb->q, sizeof f->q);
        memcpy(f->v, rb->v, sizeof f->v), memcpy(f->w, rb->w, sizeof f->w);
        memcpy(f->force, rb->Fc, sizeof f->force), memcpy(f->torque, rb->tauc, sizeof f->torque);
    }
    return (size_t)W->n_rigid;
}

/* Kinetic energy 1/2 M v^2 + 1/2 w . L and momentum M v of the dynamic bodies (kinematic ones have no mass to
 * count). */
static void shard_matter_rigid_body_diag(const shard_matter_ctx *c, shard_xsum *kinetic, shard_xsum momentum[3])
{
    const shard_rigid_world *W = shard_rigid_world_of(c);
    const shard_rigid_body *B = c->bodies;
    for (int s = 0; s < W->n_rigid; s++) {
        const shard_rigid_body *rb = &B[W->rigid[s]];
        if (rb->kinematic)
            continue;
        double v2 = rb->v[0] * rb->v[0] + rb->v[1] * rb->v[1] + rb->v[2] * rb->v[2];
        double wl = rb->w[0] * rb->L[0] + rb->w[1] * rb->L[1] + rb->w[2] * rb->L[2];
        shard_xsum_add(kinetic, 0.5 * rb->mass * v2);
        shard_xsum_add(kinetic, 0.5 * wl);
        for (int k = 0; k < 3; k++)
            shard_xsum_add(&momentum[k], rb->mass * rb->v[k]);
    }
}

static void shard_matter_rigid_diag_line(const shard_matter_ctx *c, char *buf, size_t len)
{
    const shard_rigid_world *W = shard_rigid_world_of(c);
    snprintf(buf, len, "rigid contacts %lld, iterations %ld + %ld, residual %.2e", (long long)W->contacts, W->last_it,
             W->last_it_pos, W->residual);
}

static void shard_matter_rigid_report(const shard_matter_ctx *c, char *buf, size_t len)
{
    const shard_rigid_world *W = shard_rigid_world_of(c);
    const shard_rigid_body *B = c->bodies;
    int kin = 0;
    for (int s = 0; s < W->n_rigid; s++)
        kin += B[W->rigid[s]].kinematic;
    double mean = W->steps ? (double)W->iterations / (double)W->steps : 0.0;
    double mean_pos = W->steps ? (double)W->iterations_pos / (double)W->steps : 0.0;
    snprintf(buf, len,
             "Rigid bodies: %d (%d kinematic); contacts at the end %lld, largest %lld; Gauss-Seidel "
             "iterations per step mean %.1f, largest %ld (position correction %.1f); last relative change %.2e; "
             "%.0f bytes sent by this rank",
             W->n_rigid, kin, (long long)W->contacts, (long long)W->contacts_max, mean, W->iterations_max, mean_pos,
             W->residual, (double)W->bytes);
}

static void shard_matter_rigid_describe(const shard_scene *sc, int b, char *buf, size_t len)
{
    const shard_body_def *bd = &sc->bodies[b];
    int kinematic = ((const shard_rigid_body_def *)bd->kind_def)->motion == SHARD_MOTION_KINEMATIC;
    snprintf(buf, len, "rigid%s, restitution %g, friction %g", kinematic ? " kinematic" : "",
             sc->materials[bd->material].restitution, sc->materials[bd->material].friction);
}

/* The keys of a rigid body (shard_rigid_body_def) and the section `rigid` (shard_rigid_def). */
static const shard_scene_field shard_matter_rigid_body_rows[] = {
    {.key = "motion",
     .kind = SHARD_KEY_CHOICE,
     .offset = offsetof(shard_rigid_body_def, motion),
     SHARD_KEY_CHOICES([SHARD_MOTION_DYNAMIC] = "dynamic", [SHARD_MOTION_KINEMATIC] = "kinematic")},
};
static const shard_scene_section shard_matter_rigid_body_keys =
    SHARD_KEY_SECTION(shard_matter_rigid_body_rows, 0, NULL);
static const shard_scene_field shard_matter_rigid_section_rows[] = {
    {.key = "iterations",
     .kind = SHARD_KEY_INT,
     .offset = offsetof(shard_rigid_def, iterations),
     .r = SHARD_KEY_GE(1),
     .def = {300}},
    {.key = "tolerance",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_rigid_def, tolerance),
     .r = SHARD_KEY_GT(0),
     .def = {1e-6}},
    {.key = "restitution_threshold",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_rigid_def, restitution_threshold),
     .r = SHARD_KEY_GE(0),
     .def = {0.05}},
    {.key = "position_correction",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_rigid_def, position_correction),
     .r = SHARD_KEY_IN('[', 0, 1, ']'),
     .def = {0.2}},
    {.key = "slop",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_rigid_def, slop),
     .r = SHARD_KEY_GE(0),
     .def = {0.001}},
    {.key = "margin",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_rigid_def, margin),
     .r = SHARD_KEY_GE(0),
     .def = {0.5}},
};
static const shard_scene_section shard_matter_rigid_section_keys =
    SHARD_KEY_SECTION(shard_matter_rigid_section_rows, 0, NULL);
/* The material keys only rigid bodies read: the restitution of their collisions (penalty contact does not use it). */
static const char *const shard_matter_rigid_material_keys[] = {"contact.restitution", NULL};
static const shard_matter_keys shard_matter_rigid_keys = {.body = &shard_matter_rigid_body_keys,
                                                          .body_bytes = sizeof(shard_rigid_body_def),
                                                          .body_shared = &shard_scene_lattice_keys,
                                                          .material_keys = shard_matter_rigid_material_keys,
                                                          .section = "rigid",
                                                          .scene_keys = &shard_matter_rigid_section_keys,
                                                          .section_bytes = sizeof(shard_rigid_def)};

extern const shard_matter shard_matter_rigid;

const shard_rigid_def *shard_rigid_settings_of(const shard_scene *sc)
{
    return shard_matter_section(sc, &shard_matter_rigid);
}

static const shard_matter_whole shard_matter_rigid_whole = {
    .advance = shard_matter_rigid_advance,
    .settle = shard_matter_rigid_settle,
    .state_size = shard_matter_rigid_state_size,
    .state_save = shard_matter_rigid_state_save,
    .state_load = shard_matter_rigid_state_load,
    .frames = shard_matter_rigid_frames,
    .body_diag = shard_matter_rigid_body_diag,
};

const shard_matter shard_matter_rigid = {
    .kind = "rigid",
    .about = "rigid body: exact mass properties, Newton-Euler motion, contact impulses with restitution and "
             "Coulomb friction (Baraff 1989)",
    .keys = &shard_matter_rigid_keys,
    .rows = shard_matter_rigid_rows,
    .n_rows = 1,
    .body_bytes = sizeof(shard_rigid_body),
    .body_init = shard_matter_rigid_init,
    .dt_limit = shard_matter_rigid_dt,
    .dt_name = "rigid fall",
    .prepare = shard_matter_rigid_prepare,
    .describe = shard_matter_rigid_describe,
    .flags = SHARD_MATTER_SLAVED | SHARD_MATTER_OWN_CONTACT,
    .phase = "Rigid",
    .state_bytes = sizeof(shard_rigid_world),
    .state_free = shard_matter_rigid_state_free,
    .finish = shard_matter_rigid_finish,
    .report = shard_matter_rigid_report,
    .diag_line = shard_matter_rigid_diag_line,
    .whole = &shard_matter_rigid_whole,
};
