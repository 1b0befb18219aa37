/* The rigid bodies' contact solver, run by the rigid module's advance hook (rigid_module.c) over the kernels of
 * rigid.c: it finds the contacts of the bodies a rank owns, colours the body pairs in contact, sweeps the
 * impulses and the position correction as projected Gauss-Seidel over the colours, and keeps every contact's
 * impulses for the next step's warm start (its contact memory).
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
 * every rank.  The warm starts of all contacts are gathered too, so that whichever rank owns a body next step
 * starts from the same impulses.  So nothing depends on the number of ranks.  MPI-free: the exchanges go
 * through the driver's collective services (matter.h). */
#include "rigid/rigid_contact.h"

#include "contact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The velocity record one owner sends per body and iteration. */
typedef struct shard_rigid_vel {
    int32_t body;
    int32_t pad;
    double v[3], L[3];
} shard_rigid_vel;

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
    const shard_rigid_def *rd = shard_rigid_settings_of(sc);
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
    const shard_rigid_def *rd = shard_rigid_settings_of(sc);
    double dt = c->ph->dt;
    for (size_t q = 0; q < W->nc; q++) {
        shard_rigid_contact *k = &W->c[q];
        const shard_rigid_body *a = &B[k->key.a];
        const shard_rigid_body *b = k->key.b < sc->n_bodies ? &B[k->key.b] : NULL;
        const shard_obstacle_def *o = b ? NULL : &sc->obstacles[k->key.b - sc->n_bodies];
        shard_contact_mixed mix =
            shard_contact_mix(shard_contact_body_side(sc, k->key.a),
                              b ? shard_contact_body_side(sc, k->key.b) : shard_contact_obstacle_side(o));
        double slop = rd->slop * shard_rigid_smaller_spacing(a, b);
        shard_rigid_contact_setup(k, a, b, b ? NULL : o->velocity, mix.restitution, mix.friction, dt,
                                  rd->restitution_threshold, rd->position_correction, slop,
                                  shard_rigid_find_memory(W, &k->key));
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
        W->pair_at[q] =
            q > 0 && k->a == W->c[q - 1].key.a && k->b == W->c[q - 1].key.b ? W->pair_at[q - 1] : (int32_t)q;
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
    const shard_rigid_def *rd = shard_rigid_settings_of(sc);
    long cap =
        pseudo ? (rd->iterations < SHARD_RIGID_POSITION_ITERATIONS ? rd->iterations : SHARD_RIGID_POSITION_ITERATIONS)
               : rd->iterations;
    double tol = pseudo ? fmax(rd->tolerance, SHARD_RIGID_POSITION_TOLERANCE) : rd->tolerance;
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

long shard_rigid_solve_contacts(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc,
                                long *it_pos, double *res)
{
    shard_rigid_body *B = c->bodies;
    /* 3. Contacts, the owned bodies' lists, the colouring and set-up; 4. impulses; 5. position correction. */
    shard_rigid_find_contacts(c, W, svc->rank);
    shard_rigid_lists(c, W, svc);
    shard_rigid_colour(c, W, svc);
    shard_rigid_setup_contacts(c, W);
    double res_pos = 0.0;
    *res = 0.0;
    for (int s = 0; s < W->n_rigid; s++) {
        shard_rigid_body *rb = &B[W->rigid[s]];
        for (int k = 0; k < 3; k++)
            rb->Fc[k] = rb->v[k], rb->tauc[k] = rb->L[k];
    }
    long it = shard_rigid_iterate(c, W, svc, 0, res);
    for (int s = 0; s < W->n_rigid; s++) {
        shard_rigid_body *rb = &B[W->rigid[s]];
        for (int k = 0; k < 3; k++) {
            rb->Fc[k] = rb->kinematic ? 0.0 : rb->mass * (rb->v[k] - rb->Fc[k]) / c->ph->dt;
            rb->tauc[k] = rb->kinematic ? 0.0 : (rb->L[k] - rb->tauc[k]) / c->ph->dt;
        }
    }
    *it_pos = shard_rigid_iterate(c, W, svc, 1, &res_pos);
    return it;
}

void shard_rigid_remember(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc)
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
