/* Rigid bodies as a matter module (kind: rigid): the glue between the driver's matter table (matter.h) and the
 * kernels of rigid.c.  Per body it keeps a shard_rigid_body (mass properties, shape, state); per particle its
 * position in the body frame; its module state holds this rank's contacts and the warm starts.
 *
 * Distribution.  Every rank holds every rigid body's state (a few hundred bytes a body) and advances it the same
 * way, bit for bit.  The contact work is shared out: body b's owner is the rank that owns its first particle (the
 * smallest global id of the body: the partition decides, and migration moves it).  An owner finds every contact of
 * its bodies (so a contact between bodies of two owners is found by both, the same way).
 *
 * The impulses are found by projected Gauss-Seidel on a colouring of the body pairs in contact: the pairs of
 * every rank are gathered (a few bytes each), sorted by key and coloured greedily in that order (a pair takes
 * the smallest colour that no earlier pair of either of its dynamic bodies has; obstacles and kinematic bodies
 * never conflict), the same colouring on every rank.  An iteration goes through the colours in order; in a
 * colour, every rank solves its pairs of that colour, point after point in key order, applying each impulse to
 * both bodies at once (no two pairs of a colour share a dynamic body, so the order among them is immaterial and
 * the two ranks that hold a pair compute the same thing), then the owners' bodies that changed are gathered by
 * every rank.  A body's force and torque from its particles are exact sums over the ranks (xsum).  The warm
 * starts of all contacts are gathered too, so that whichever rank owns a body next step starts from the same
 * impulses.  So nothing depends on the number of ranks. */
#include "shard/matter.h"

#include "rigid/rigid.h"
#include "shard/rotation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The module's state on one rank. */
typedef struct shard_rigid_world {
    int init;                    /* the lists below are set up */
    int n_rigid;
    int32_t *rigid;              /* the scene indices of the rigid bodies, increasing */
    int32_t *slot;               /* per scene body: its position in rigid[], or -1 */
    int *own;                    /* per rigid body: scratch of the ownership reduction */
    shard_rigid_contact *c;      /* this rank's contacts (those of its bodies), in key order */
    size_t nc, cc;
    int32_t *cstart, *clist;     /* per rigid body: its contacts (indices into c) in key order, owned bodies only */
    size_t clist_cap;
    shard_rigid_memory *mem;     /* every contact's impulses of the last step (replicated), in key order */
    size_t n_mem, mem_cap;
    int32_t *pair_at;            /* per local contact: the index of its pair's first contact (scratch) */
    int32_t *colour;             /* per local contact: its pair's colour */
    int n_colours;               /* colours of this step (the same on every rank) */
    int32_t *cc_start, *cc_list; /* per colour: its local contacts' first indices of pairs, in key order */
    size_t cc_cap;
    uint64_t *used;              /* per rigid body: the colours of its pairs so far (SHARD_RIGID_COLOUR_WORDS) */
    struct shard_rigid_vel *vel; /* scratch of shard_rigid_share (the owned bodies' records) */
    size_t vel_cap;
    double *sort_x;              /* broad-phase scratch */
    int32_t *sort_i;
    /* Statistics: */
    long steps, iterations, iterations_max, iterations_pos;
    long last_it, last_it_pos;   /* the last step's iterations (velocities, positions) */
    double residual;
    int64_t contacts, contacts_max;
    uint64_t bytes;
} shard_rigid_world;

/* The velocity record one owner sends per body and iteration. */
typedef struct shard_rigid_vel {
    int32_t body;
    int32_t pad;
    double v[3], L[3];
} shard_rigid_vel;

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
                              "kinematic` to move it with its velocity and angular velocity)", bd->name);
    if (bd->n_tractions > 0)
        return shard_error_at(err, sc->path, &bd->tractions[0].loc,
                              "body '%s' is rigid: surface tractions act on deformable bodies", bd->name);
    if (bd->clamp_loc.line > 0)
        return shard_error_at(err, sc->path, &bd->clamp_loc,
                              "body '%s' is rigid: `clamp` is for solids' held regions", bd->name);
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

/* ---- contacts ------------------------------------------------------------------------------------------- */

static int shard_rigid_cmp_contact(const void *x, const void *y)
{
    return shard_rigid_key_cmp(&((const shard_rigid_contact *)x)->key, &((const shard_rigid_contact *)y)->key);
}

static int shard_rigid_cmp_memory(const void *x, const void *y)
{
    return shard_rigid_key_cmp(&((const shard_rigid_memory *)x)->key, &((const shard_rigid_memory *)y)->key);
}

/* Broad phase over bounding spheres, sorted by their lowest x (ties by index): the pairs with an owned body. */
typedef struct shard_rigid_sortkey {
    double lo;
    int32_t slot;
} shard_rigid_sortkey;

static int shard_rigid_cmp_sortkey(const void *x, const void *y)
{
    const shard_rigid_sortkey *a = x, *b = y;
    if (a->lo != b->lo)
        return (a->lo > b->lo) - (a->lo < b->lo);
    return (a->slot > b->slot) - (a->slot < b->slot);
}

static double shard_rigid_smaller_spacing(const shard_rigid_body *a, const shard_rigid_body *b)
{
    return b ? fmin(a->spacing, b->spacing) : a->spacing;
}

/* The obstacle's velocity (translation only). */
static const double *shard_rigid_obstacle_velocity(const shard_scene *sc, int key_b, int n_bodies)
{
    return sc->obstacles[key_b - n_bodies].velocity;
}

static void shard_rigid_find_contacts(const shard_matter_ctx *c, shard_rigid_world *W, int rank)
{
    const shard_scene *sc = c->ph->scene;
    shard_rigid_body *B = c->bodies;
    const shard_rigid_def *rd = &sc->rigid;
    W->nc = 0;
    shard_rigid_sortkey *keys = shard_malloc(((size_t)W->n_rigid + 1) * sizeof *keys);
    for (int s = 0; s < W->n_rigid; s++) {
        const shard_rigid_body *rb = &B[W->rigid[s]];
        keys[s] = (shard_rigid_sortkey){rb->x[0] - rb->bound, s};
    }
    qsort(keys, (size_t)W->n_rigid, sizeof *keys, shard_rigid_cmp_sortkey);
    for (int u = 0; u < W->n_rigid; u++) {
        int sa = keys[u].slot;
        shard_rigid_body *a = &B[W->rigid[sa]];
        double hi = a->x[0] + a->bound;
        for (int v = u + 1; v < W->n_rigid && keys[v].lo <= hi + rd->margin * a->spacing; v++) {
            int sb = keys[v].slot;
            shard_rigid_body *b = &B[W->rigid[sb]];
            if (b->owner != rank && a->owner != rank)
                continue;
            if (a->kinematic && b->kinematic)
                continue;
            double margin = rd->margin * shard_rigid_smaller_spacing(a, b);
            double d[3] = {a->x[0] - b->x[0], a->x[1] - b->x[1], a->x[2] - b->x[2]};
            double reach = a->bound + b->bound + margin;
            if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > reach * reach)
                continue;
            int ia = W->rigid[sa], ib = W->rigid[sb];
            if (ia < ib)
                shard_rigid_collide(a, ia, b, ib, NULL, 0.0, margin, &W->c, &W->nc, &W->cc);
            else
                shard_rigid_collide(b, ib, a, ia, NULL, 0.0, margin, &W->c, &W->nc, &W->cc);
        }
    }
    free(keys);
    for (int s = 0; s < W->n_rigid; s++) {
        shard_rigid_body *a = &B[W->rigid[s]];
        if (a->owner != rank || a->kinematic)
            continue;
        for (int o = 0; o < sc->n_obstacles; o++)
            shard_rigid_collide(a, W->rigid[s], NULL, sc->n_bodies + o, &sc->obstacles[o], c->ph->t,
                                rd->margin * a->spacing, &W->c, &W->nc, &W->cc);
    }
    /* A speculative contact approaching fast is left out: it will collide, with its restitution, once it
     * touches (the same verdict on every rank that finds it). */
    size_t m = 0;
    for (size_t q = 0; q < W->nc; q++) {
        shard_rigid_contact *k = &W->c[q];
        if (k->depth < 0.0) {
            const shard_rigid_body *a = &B[k->key.a];
            const shard_rigid_body *b = k->key.b < sc->n_bodies ? &B[k->key.b] : NULL;
            double va[3], vb[3] = {0, 0, 0};
            shard_rigid_point_velocity(a, k->p, 0, va);
            if (b)
                shard_rigid_point_velocity(b, k->p, 0, vb);
            else
                memcpy(vb, shard_rigid_obstacle_velocity(sc, k->key.b, sc->n_bodies), sizeof vb);
            double un = (va[0] - vb[0]) * k->n[0] + (va[1] - vb[1]) * k->n[1] + (va[2] - vb[2]) * k->n[2];
            if (un < -rd->restitution_threshold)
                continue;
        }
        W->c[m++] = *k;
    }
    W->nc = m;
    if (W->nc > 1)
        qsort(W->c, W->nc, sizeof *W->c, shard_rigid_cmp_contact);
}

/* Per owned body, its contacts in key order (the warm start applies them). */
static void shard_rigid_lists(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc)
{
    shard_rigid_body *B = c->bodies;
    int nb = c->ph->scene->n_bodies;
    /* Per owned body, its contacts in key order. */
    memset(W->cstart, 0, ((size_t)W->n_rigid + 1) * sizeof *W->cstart);
    for (size_t q = 0; q < W->nc; q++) {
        const shard_rigid_key *k = &W->c[q].key;
        if (B[k->a].owner == svc->rank)
            W->cstart[W->slot[k->a] + 1]++;
        if (k->b < nb && B[k->b].owner == svc->rank)
            W->cstart[W->slot[k->b] + 1]++;
    }
    for (int s = 0; s < W->n_rigid; s++)
        W->cstart[s + 1] += W->cstart[s];
    shard_reserve((void **)&W->clist, &W->clist_cap, (size_t)W->cstart[W->n_rigid] + 1, sizeof *W->clist);
    int32_t *fill = shard_malloc(((size_t)W->n_rigid + 1) * sizeof *fill);
    memcpy(fill, W->cstart, (size_t)W->n_rigid * sizeof *fill);
    for (size_t q = 0; q < W->nc; q++) {
        const shard_rigid_key *k = &W->c[q].key;
        if (B[k->a].owner == svc->rank)
            W->clist[fill[W->slot[k->a]]++] = (int32_t)q;
        if (k->b < nb && B[k->b].owner == svc->rank)
            W->clist[fill[W->slot[k->b]]++] = (int32_t)q;
    }
    free(fill);
}

static const shard_rigid_memory *shard_rigid_find_memory(const shard_rigid_world *W, const shard_rigid_key *k)
{
    shard_rigid_memory q = {.key = *k};
    return W->n_mem ? bsearch(&q, W->mem, W->n_mem, sizeof q, shard_rigid_cmp_memory) : NULL;
}

static void shard_rigid_setup_contacts(const shard_matter_ctx *c, shard_rigid_world *W)
{
    const shard_scene *sc = c->ph->scene;
    shard_rigid_body *B = c->bodies;
    const shard_rigid_def *rd = &sc->rigid;
    double dt = c->ph->dt;
    for (size_t q = 0; q < W->nc; q++) {
        shard_rigid_contact *k = &W->c[q];
        const shard_rigid_body *a = &B[k->key.a];
        const shard_rigid_body *b = k->key.b < sc->n_bodies ? &B[k->key.b] : NULL;
        const shard_obstacle_def *o = b ? NULL : &sc->obstacles[k->key.b - sc->n_bodies];
        double e = b ? fmax(a->restitution, b->restitution) : fmax(a->restitution, o->restitution);
        double mu = b ? sqrt(a->friction * b->friction) : o->friction;
        double slop = rd->slop * shard_rigid_smaller_spacing(a, b);
        shard_rigid_contact_setup(k, a, b, b ? NULL : o->velocity, e, mu, dt, rd->restitution_threshold,
                                  rd->position_correction, slop, shard_rigid_find_memory(W, &k->key));
    }
}

/* ---- the iterations ------------------------------------------------------------------------------------- */

/* The position correction's iterations stop at this relative change (or a looser rigid.tolerance), or after
 * this many (or fewer rigid.iterations): it removes only a fraction of each penetration per step anyway, and
 * what one step leaves the next removes. */
#define SHARD_RIGID_POSITION_TOLERANCE 1e-3
#define SHARD_RIGID_POSITION_ITERATIONS 30
/* At most 64 x this many colours (a body in contact with more than 4095 others is refused). */
#define SHARD_RIGID_COLOUR_WORDS 64

typedef struct shard_rigid_pair {
    int32_t a, b;
} shard_rigid_pair;

static int shard_rigid_cmp_pair(const void *x, const void *y)
{
    const shard_rigid_pair *p = x, *q = y;
    if (p->a != q->a)
        return (p->a > q->a) - (p->a < q->a);
    return (p->b > q->b) - (p->b < q->b);
}

/* The colouring of this step's pairs (top of this file) and, per colour, this rank's pairs in key order. */
static void shard_rigid_colour(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc)
{
    const shard_scene *sc = c->ph->scene;
    const shard_rigid_body *B = c->bodies;
    int nb = sc->n_bodies;
    /* This rank's pairs (contacts are in key order, so a pair's points are consecutive). */
    shard_rigid_pair *mine = shard_malloc((W->nc + 1) * sizeof *mine);
    W->pair_at = shard_realloc(W->pair_at, (W->nc + 1) * sizeof *W->pair_at);
    W->colour = shard_realloc(W->colour, (W->nc + 1) * sizeof *W->colour);
    size_t n = 0;
    for (size_t q = 0; q < W->nc; q++) {
        const shard_rigid_key *k = &W->c[q].key;
        if (q == 0 || k->a != W->c[q - 1].key.a || k->b != W->c[q - 1].key.b)
            mine[n++] = (shard_rigid_pair){k->a, k->b};
        W->pair_at[q] = q > 0 && k->a == W->c[q - 1].key.a && k->b == W->c[q - 1].key.b ? W->pair_at[q - 1]
                                                                                           : (int32_t)q;
    }
    size_t total = 0;
    shard_rigid_pair *all = svc->allgather(svc->impl, mine, n * sizeof *mine, &total);
    W->bytes += (uint64_t)(n * sizeof *mine) * (uint64_t)(svc->size - 1);
    size_t na = total / sizeof *all, m = 0;
    qsort(all, na, sizeof *all, shard_rigid_cmp_pair);
    for (size_t q = 0; q < na; q++) /* a pair held by two ranks came twice */
        if (m == 0 || shard_rigid_cmp_pair(&all[q], &all[m - 1]) != 0)
            all[m++] = all[q];
    na = m;
    /* Greedy colours in key order. */
    W->used = shard_realloc(W->used, ((size_t)W->n_rigid + 1) * SHARD_RIGID_COLOUR_WORDS * sizeof *W->used);
    memset(W->used, 0, ((size_t)W->n_rigid + 1) * SHARD_RIGID_COLOUR_WORDS * sizeof *W->used);
    int32_t *pc = shard_malloc((na + 1) * sizeof *pc);
    W->n_colours = 0;
    for (size_t q = 0; q < na; q++) {
        int sa = W->slot[all[q].a];
        int sb = all[q].b < nb && !B[all[q].b].kinematic ? W->slot[all[q].b] : -1;
        uint64_t *ua = B[all[q].a].kinematic ? NULL : W->used + (size_t)sa * SHARD_RIGID_COLOUR_WORDS;
        uint64_t *ub = sb >= 0 ? W->used + (size_t)sb * SHARD_RIGID_COLOUR_WORDS : NULL;
        int col = 0;
        for (int w = 0; w < SHARD_RIGID_COLOUR_WORDS; w++) {
            uint64_t busy = (ua ? ua[w] : 0) | (ub ? ub[w] : 0);
            if (busy != UINT64_MAX) {
                int bit = 0;
                while (busy >> bit & 1u)
                    bit++;
                col = 64 * w + bit;
                break;
            }
            if (w == SHARD_RIGID_COLOUR_WORDS - 1)
                shard_fatal(SHARD_EXIT_RUNTIME, "rigid body '%s' touches more than %d others at once",
                            sc->bodies[all[q].a].name, 64 * SHARD_RIGID_COLOUR_WORDS);
        }
        if (ua)
            ua[col / 64] |= UINT64_C(1) << (col % 64);
        if (ub)
            ub[col / 64] |= UINT64_C(1) << (col % 64);
        pc[q] = col;
        if (col + 1 > W->n_colours)
            W->n_colours = col + 1;
    }
    /* Per colour, this rank's pairs (their first contacts), in key order. */
    W->cc_start = shard_realloc(W->cc_start, ((size_t)W->n_colours + 2) * sizeof *W->cc_start);
    memset(W->cc_start, 0, ((size_t)W->n_colours + 2) * sizeof *W->cc_start);
    for (size_t q = 0; q < W->nc; q++) {
        shard_rigid_pair key = {W->c[q].key.a, W->c[q].key.b};
        const shard_rigid_pair *f = bsearch(&key, all, na, sizeof *all, shard_rigid_cmp_pair);
        W->colour[q] = pc[f - all];
        if (W->pair_at[q] == (int32_t)q)
            W->cc_start[W->colour[q] + 1]++;
    }
    for (int k = 0; k < W->n_colours; k++)
        W->cc_start[k + 1] += W->cc_start[k];
    shard_reserve((void **)&W->cc_list, &W->cc_cap, (size_t)W->cc_start[W->n_colours] + 1, sizeof *W->cc_list);
    int32_t *fill = shard_malloc(((size_t)W->n_colours + 1) * sizeof *fill);
    memcpy(fill, W->cc_start, (size_t)W->n_colours * sizeof *fill);
    for (size_t q = 0; q < W->nc; q++)
        if (W->pair_at[q] == (int32_t)q)
            W->cc_list[fill[W->colour[q]]++] = (int32_t)q;
    free(fill), free(pc), free(all), free(mine);
}

/* Every rank gets the (pseudo-)momenta of the owned bodies in changed[] (scene indices, n of them). */
static void shard_rigid_share(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc,
                              const int32_t *changed, size_t n, int pseudo)
{
    shard_rigid_body *B = c->bodies;
    shard_reserve((void **)&W->vel, &W->vel_cap, n + 1, sizeof *W->vel);
    shard_rigid_vel *mine = W->vel;
    size_t k = 0;
    for (size_t q = 0; q < n; q++) {
        shard_rigid_body *rb = &B[changed[q]];
        if (rb->owner != svc->rank || rb->kinematic)
            continue;
        shard_rigid_vel *r = &mine[k++];
        memset(r, 0, sizeof *r);
        r->body = changed[q];
        memcpy(r->v, pseudo ? rb->vp : rb->v, sizeof r->v);
        memcpy(r->L, pseudo ? rb->Lp : rb->L, sizeof r->L);
    }
    size_t total = 0;
    shard_rigid_vel *all = svc->allgather(svc->impl, mine, k * sizeof *mine, &total);
    W->bytes += (uint64_t)(k * sizeof *mine) * (uint64_t)(svc->size - 1);
    for (size_t q = 0; q < total / sizeof *all; q++) {
        shard_rigid_body *rb = &B[all[q].body];
        if (rb->owner == svc->rank)
            continue;
        memcpy(pseudo ? rb->vp : rb->v, all[q].v, sizeof all[q].v);
        memcpy(pseudo ? rb->Lp : rb->L, all[q].L, sizeof all[q].L);
        shard_rigid_omega(rb);
    }
    free(all);
}

/* The warm start: each owner applies its bodies' contacts' remembered impulses (in key order); every rank
 * gets the result. */
static void shard_rigid_warm_start(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc)
{
    shard_rigid_body *B = c->bodies;
    int32_t *changed = shard_malloc(((size_t)W->n_rigid + 1) * sizeof *changed);
    size_t n = 0;
    for (int s = 0; s < W->n_rigid; s++) {
        int b = W->rigid[s];
        shard_rigid_body *rb = &B[b];
        if (rb->owner != svc->rank || W->cstart[s] == W->cstart[s + 1] || rb->kinematic)
            continue;
        double dP[3] = {0, 0, 0}, dL[3] = {0, 0, 0};
        for (int32_t q = W->cstart[s]; q < W->cstart[s + 1]; q++) {
            const shard_rigid_contact *k = &W->c[W->clist[q]];
            shard_rigid_contact_total(k, k->key.a == b ? 0 : 1, dP, dL);
        }
        shard_rigid_apply(rb, dP, dL, 0);
        changed[n++] = b;
    }
    shard_rigid_share(c, W, svc, changed, n, 0);
    free(changed);
}

/* Projected Gauss-Seidel over the colours (top of this file), until no impulse changed by more than
 * tolerance x the largest impulse in an iteration (a maximum over the ranks: every rank stops together).
 * Returns the iterations made and the last relative change in *res. */
static long shard_rigid_iterate(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc,
                                int pseudo, double *res)
{
    const shard_scene *sc = c->ph->scene;
    shard_rigid_body *B = c->bodies;
    long it;
    *res = 0.0;
    if (!pseudo)
        shard_rigid_warm_start(c, W, svc);
    long cap = pseudo ? (sc->rigid.iterations < SHARD_RIGID_POSITION_ITERATIONS ? sc->rigid.iterations
                                                                                : SHARD_RIGID_POSITION_ITERATIONS)
                      : sc->rigid.iterations;
    double tol = pseudo ? fmax(sc->rigid.tolerance, SHARD_RIGID_POSITION_TOLERANCE) : sc->rigid.tolerance;
    int32_t *changed = shard_malloc((2 * W->nc + 1) * sizeof *changed);
    for (it = 1; it <= cap; it++) {
        double m[2] = {0.0, 0.0}; /* largest change, largest impulse */
        for (int col = 0; col < W->n_colours; col++) {
            size_t n = 0;
            for (int32_t u = W->cc_start[col]; u < W->cc_start[col + 1]; u++) {
                int32_t q0 = W->cc_list[u];
                shard_rigid_body *a = &B[W->c[q0].key.a];
                shard_rigid_body *b = W->c[q0].key.b < sc->n_bodies ? &B[W->c[q0].key.b] : NULL;
                const double *vo = b ? NULL : shard_rigid_obstacle_velocity(sc, W->c[q0].key.b, sc->n_bodies);
                for (size_t q = (size_t)q0; q < W->nc && W->pair_at[q] == q0; q++) {
                    shard_rigid_contact *k = &W->c[q];
                    m[0] = fmax(m[0], shard_rigid_contact_solve(k, a, b, vo, pseudo));
                    m[1] = fmax(m[1], pseudo ? k->lp : fmax(k->ln, sqrt(k->lt1 * k->lt1 + k->lt2 * k->lt2)));
                    double dP[3] = {0, 0, 0}, dL[3] = {0, 0, 0};
                    shard_rigid_contact_impulse(k, 0, pseudo, dP, dL);
                    shard_rigid_apply(a, dP, dL, pseudo);
                    if (b) {
                        double eP[3] = {0, 0, 0}, eL[3] = {0, 0, 0};
                        shard_rigid_contact_impulse(k, 1, pseudo, eP, eL);
                        shard_rigid_apply(b, eP, eL, pseudo);
                    }
                }
                changed[n++] = W->c[q0].key.a;
                if (b)
                    changed[n++] = W->c[q0].key.b;
            }
            shard_rigid_share(c, W, svc, changed, n, pseudo);
        }
        svc->max_doubles(svc->impl, m, 2);
        *res = m[1] > 0.0 ? m[0] / m[1] : 0.0;
        if (*res <= tol)
            break;
    }
    free(changed);
    return it > cap ? cap : it;
}

/* Every contact's impulses, gathered from the rank that owns its first body, for the next step's warm start. */
static void shard_rigid_remember(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc)
{
    shard_rigid_body *B = c->bodies;
    shard_rigid_memory *mine = shard_malloc((W->nc + 1) * sizeof *mine);
    size_t n = 0;
    for (size_t q = 0; q < W->nc; q++) {
        const shard_rigid_contact *k = &W->c[q];
        if (B[k->key.a].owner != svc->rank)
            continue;
        shard_rigid_memory *m = &mine[n++];
        memset(m, 0, sizeof *m);
        m->key = k->key;
        m->ln = k->ln;
        for (int j = 0; j < 3; j++)
            m->lt[j] = k->lt1 * k->t1[j] + k->lt2 * k->t2[j];
    }
    size_t total = 0;
    free(W->mem);
    W->mem = svc->allgather(svc->impl, mine, n * sizeof *mine, &total);
    W->bytes += (uint64_t)(n * sizeof *mine) * (uint64_t)(svc->size - 1);
    W->n_mem = total / sizeof *W->mem;
    W->mem_cap = W->n_mem;
    qsort(W->mem, W->n_mem, sizeof *W->mem, shard_rigid_cmp_memory);
    free(mine);
    W->contacts = (int64_t)W->n_mem;
    if (W->contacts > W->contacts_max)
        W->contacts_max = W->contacts;
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
    /* 3. Contacts, the owned bodies' lists, the colouring and set-up; 4. impulses; 5. position correction. */
    shard_rigid_find_contacts(c, W, svc->rank);
    shard_rigid_lists(c, W, svc);
    shard_rigid_colour(c, W, svc);
    shard_rigid_setup_contacts(c, W);
    double res = 0.0, res_pos = 0.0;
    for (int s = 0; s < W->n_rigid; s++) {
        shard_rigid_body *rb = &B[W->rigid[s]];
        for (int k = 0; k < 3; k++)
            rb->Fc[k] = rb->v[k], rb->tauc[k] = rb->L[k];
    }
    long it = shard_rigid_iterate(c, W, svc, 0, &res);
    for (int s = 0; s < W->n_rigid; s++) {
        shard_rigid_body *rb = &B[W->rigid[s]];
        for (int k = 0; k < 3; k++) {
            rb->Fc[k] = rb->kinematic ? 0.0 : rb->mass * (rb->v[k] - rb->Fc[k]) / c->ph->dt;
            rb->tauc[k] = rb->kinematic ? 0.0 : (rb->L[k] - rb->tauc[k]) / c->ph->dt;
        }
    }
    long it_pos = shard_rigid_iterate(c, W, svc, 1, &res_pos);
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

enum { SHARD_RIGID_STATE_DOUBLES = 19 }; /* x 3, q 4, v 3, L 3, F 3, tau 3 */
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
        return shard_error_set(err, SHARD_EXIT_INPUT, "its rigid-body state (%zu bytes) is not that of the scene's "
                               "%d rigid bodies", bytes, W->n_rigid);
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
    snprintf(buf, len, "Rigid bodies: %d (%d kinematic); contacts at the end %lld, largest %lld; Gauss-Seidel "
             "iterations per step mean %.1f, largest %ld (position correction %.1f); last relative change %.2e; "
             "%.0f bytes sent by this rank",
             W->n_rigid, kin, (long long)W->contacts, (long long)W->contacts_max, mean, W->iterations_max, mean_pos,
             W->residual, (double)W->bytes);
}

static void shard_matter_rigid_describe(const shard_scene *sc, int b, char *buf, size_t len)
{
    const shard_body_def *bd = &sc->bodies[b];
    snprintf(buf, len, "rigid%s, restitution %g, friction %g", bd->motion == SHARD_MOTION_KINEMATIC ? " kinematic" : "",
             sc->materials[bd->material].restitution, sc->materials[bd->material].friction);
}

const shard_matter shard_matter_rigid = {
    .kind = "rigid",
    .about = "rigid body: exact mass properties, Newton-Euler motion, contact impulses with restitution and "
             "Coulomb friction (Baraff 1989)",
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
    .advance = shard_matter_rigid_advance,
    .settle = shard_matter_rigid_settle,
    .state_size = shard_matter_rigid_state_size,
    .state_save = shard_matter_rigid_state_save,
    .state_load = shard_matter_rigid_state_load,
    .finish = shard_matter_rigid_finish,
    .frames = shard_matter_rigid_frames,
    .body_diag = shard_matter_rigid_body_diag,
    .diag_line = shard_matter_rigid_diag_line,
    .report = shard_matter_rigid_report,
};
