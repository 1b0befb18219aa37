/* Cloth collisions over the ranks: the cloth module's collide hook (matter.h), the collision handling of
 * Bridson, Fedkiw & Anderson 2002 ("Robust treatment of collisions, contact and friction for cloth animation",
 * SIGGRAPH) in its order, on the step's mean velocities (the particles' v after the first half kick: the drift
 * moves every vertex by dt v).
 *
 *   1. proximity at the start of the step: every point-triangle and edge-edge pair closer than the pair's
 *      thickness gets an inelastic impulse and a capped repulsion, with Coulomb friction (shard_cc_repel);
 *   2. continuous collision detection of the straight paths x + t v, t in [0, dt]: every colliding pair gets
 *      an inelastic impulse (shard_cc_stop); repeated with the new velocities, cloth.collision_passes times;
 *   3. the fail-safe: the vertices of the pairs that still collide join rigid impact zones (shard_cc_zone_rigid),
 *      merged with every further collision until none is left.
 * Kernels and the kinds of pairs: cloth_collide.h.  Pairs are those between any two cloth triangles or edges
 * that share no vertex, of one body (self-collision) or of two.
 *
 * Rank invariance.  Each rank detects every pair with an owned vertex among the elements whose vertices it
 * holds (owned particles, bond ghosts, contact ghosts): the contact ghosts reach (contact_reach) the pair's
 * thickness plus two of the longest element, plus the skin for the ghosts' age and the motion of one step (the
 * hook checks that no vertex moves farther than that), so every such pair is complete on every rank that owns
 * one of its vertices.  A pair is computed from the same bits wherever it is (its vertices in a global order:
 * triangles in their own order, edges from the smaller global id), and each owned vertex averages the
 * velocity changes of its pairs sorted by the pairs' global keys (a Jacobi update of the pairs).  Between
 * iterations the ghosts' velocities are refreshed; whether anything still collides is a maximum over the
 * ranks.  Impact zones are global: every rank gathers the colliding pairs' global ids and merges them with a
 * union-find whose roots are the smallest ids, gathers the zones' vertices (mass, x, v) from their owners and
 * computes every zone's rigid motion in global-id order, so every rank has the same zones and velocities.
 *
 * This file holds the hook and its passes (the proximity and collision impulses and how a vertex's impulses are
 * applied); the candidate pairs are cloth_collide_pairs.c's, the impact zones cloth_collide_zones.c's. */
#include "cloth/cloth_collide_stage.h"

#include "contact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two colliding pairs by their 4 global ids, lexicographically. */
static int shard_cc_cmp_hit(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    for (int q = 0; q < 4; q++)
        if (x[q] != y[q])
            return x[q] < y[q] ? -1 : 1;
    return 0;
}

/* A step whose collisions the last impact-zone pass leaves: the error that stops the run, the same on every rank
 * (the number of distinct colliding pairs over the ranks and the one with the smallest global ids). */
static int shard_cc_unresolved(const shard_matter_ctx *c, const shard_cloth_collide *cs, const shard_collective *svc,
                               int passes, shard_error *err)
{
    size_t bytes = 0;
    int64_t *hit = svc->allgather(svc->impl, cs->hit, 4 * cs->n_hit * sizeof *cs->hit, &bytes);
    size_t n = bytes / (4 * sizeof *hit), distinct = 0;
    qsort(hit, n, 4 * sizeof *hit, shard_cc_cmp_hit);
    for (size_t h = 0; h < n; h++)
        distinct += h == 0 || shard_cc_cmp_hit(hit + 4 * h, hit + 4 * (h - 1)) != 0;
    int64_t v[4] = {-1, -1, -1, -1};
    if (n)
        memcpy(v, hit, sizeof v);
    free(hit);
    return shard_error_set(err, SHARD_EXIT_RUNTIME,
                           "step %ld: cloth collisions unresolved after %d passes: %zu pairs still collide, the "
                           "first between particles %lld %lld %lld %lld (global ids), so cloth would cross there; "
                           "give the layers room (a larger gap, thinner cloth) or set `cloth: {unresolved: "
                           "continue}` to go on and count such steps",
                           c->ph->step, passes, distinct, (long long)v[0], (long long)v[1], (long long)v[2],
                           (long long)v[3]);
}

/* The most impact-zone passes (the impulse passes before them: cloth.collision_passes). */
#define SHARD_CLOTH_ZONE_PASSES 200

static int shard_cc_rec_cmp(const void *pa, const void *pb)
{
    const shard_cc_rec *a = pa, *b = pb;
    if (a->vertex != b->vertex)
        return a->vertex < b->vertex ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    for (int q = 0; q < 4; q++)
        if (a->key[q] != b->key[q])
            return a->key[q] < b->key[q] ? -1 : 1;
    return 0;
}

/* The thickness of a pair: the sum of its two sides' reaches (shard_cc_half: the mean of two cloths' thicknesses, a
 * particle's contact radius and half the cloth's, an obstacle's radius and half the cloth's). */
static double shard_cc_pair_h(const shard_matter_ctx *c, const shard_cloth_collide *cs, const shard_cc_pair *pr)
{
    return shard_cc_half(c, cs, pr->v[0]) + shard_cc_half(c, cs, pr->v[pr->kind == 1 ? 2 : 1]);
}

/* The pair's repulsion stiffness and friction: the stiffness the mean over two cloths, the cloth's against a
 * particle of another kind or an obstacle; the friction by the contact rule of every kind (shard_contact_mix:
 * against an obstacle the obstacle's, as for the vertices' contact with it). */
static void shard_cc_pair_constants(const shard_matter_ctx *c, const shard_cloth_collide *cs, const shard_cc_pair *pr,
                                    double *k, double *mu)
{
    const shard_particles *p = c->ph->p;
    const shard_scene *sc = c->ph->scene;
    int32_t sa = pr->v[0], sb = pr->v[pr->kind == 1 ? 2 : 1];
    if (sa < 0 || sb < 0) {
        int32_t cloth = p->body[sa < 0 ? sb : sa];
        const shard_cloth_params *B = shard_cc_body(c, cloth);
        const shard_obstacle_def *o = &sc->obstacles[cs->oobs[-1 - (sa < 0 ? sa : sb)]];
        *k = B->lambda + 2.0 * B->mu;
        *mu = shard_contact_mix(shard_contact_body_side(sc, cloth), shard_contact_obstacle_side(o)).friction;
        return;
    }
    int32_t ba = p->body[sa], bb = p->body[sb];
    const shard_cloth_params *B = shard_cc_body(c, bb);
    *mu = shard_contact_mix(shard_contact_body_side(sc, ba), shard_contact_body_side(sc, bb)).friction;
    if (pr->kind == 2) {
        *k = B->lambda + 2.0 * B->mu;
        return;
    }
    const shard_cloth_params *A = shard_cc_body(c, ba);
    *k = 0.5 * (A->lambda + 2.0 * A->mu + B->lambda + 2.0 * B->mu);
}

static void shard_cc_record(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_cc_pair *pr,
                            const double dv[12])
{
    const shard_particles *p = c->ph->p;
    int32_t other = pr->kind == 2 && c->ph->own_contact[p->body[pr->v[0]]] ? pr->v[0] : -1;
    for (int q = 0; q < 4; q++) {
        if ((size_t)pr->v[q] >= p->n_owned)
            continue;
        shard_reserve((void **)&cs->rec, &cs->cap_rec, cs->n_rec + 1, sizeof *cs->rec);
        shard_cc_rec *r = &cs->rec[cs->n_rec++];
        r->vertex = pr->v[q], r->kind = pr->kind, r->other = other;
        for (int j = 0; j < 4; j++)
            r->key[j] = shard_cc_gid(p, pr->v[j]);
        memcpy(r->dv, dv + 3 * q, sizeof r->dv);
    }
}

/* The reaction J to a change of the cloth's momentum, on particle i of a body that moves as a whole. */
void shard_cc_react(const shard_matter_ctx *c, int32_t i, const double J[3])
{
    const shard_particles *p = c->ph->p;
    shard_impulses *im = c->ph->impulses;
    shard_reserve((void **)&im->at, &im->cap, im->n + 1, sizeof *im->at);
    shard_impulse *e = &im->at[im->n++];
    e->body = p->body[i], e->pad = 0;
    memcpy(e->x, p->x + 3 * (size_t)i, sizeof e->x), memcpy(e->J, J, sizeof e->J);
}

/* Each owned vertex's velocity changes by the mean of its records, summed in key order; a record's share
 * pushes back on its particle of a body that moves as a whole (two-way contact, momentum kept). */
static void shard_cc_apply(const shard_matter_ctx *c, shard_cloth_collide *cs)
{
    shard_particles *p = c->ph->p;
    if (cs->n_rec > 1)
        qsort(cs->rec, cs->n_rec, sizeof *cs->rec, shard_cc_rec_cmp);
    for (size_t r = 0; r < cs->n_rec;) {
        size_t e = r;
        double s[3] = {0, 0, 0};
        while (e < cs->n_rec && cs->rec[e].vertex == cs->rec[r].vertex) {
            for (int k = 0; k < 3; k++)
                s[k] += cs->rec[e].dv[k];
            e++;
        }
        double *v = p->v + 3 * (size_t)cs->rec[r].vertex, *acc = cs->dv + 3 * (size_t)cs->rec[r].vertex;
        for (int k = 0; k < 3; k++) {
            double d = s[k] / (double)(e - r);
            v[k] += d, acc[k] += d;
        }
        for (size_t q = r; q < e; q++)
            if (cs->rec[q].other >= 0 && cs->rec[q].other != cs->rec[q].vertex) {
                double w = -p->mass[cs->rec[r].vertex] / (double)(e - r), J[3];
                for (int k = 0; k < 3; k++)
                    J[k] = w * cs->rec[q].dv[k];
                shard_cc_react(c, cs->rec[q].other, J);
            }
        r = e;
    }
    cs->n_rec = 0;
}

static void shard_cc_gather(const shard_particles *p, const shard_cloth_collide *cs, const shard_cc_pair *pr,
                            const double *x[4], const double *v[4], double inv[4])
{
    for (int q = 0; q < 4; q++) {
        x[q] = shard_cc_x(cs, p, pr->v[q]), v[q] = shard_cc_v(cs, p, pr->v[q]);
        inv[q] = pr->v[q] >= 0 ? cs->inv_m[pr->v[q]] : 0.0;
    }
}

/* Proximity impulses at the start of the step (once). */
static void shard_cc_proximity(const shard_matter_ctx *c, shard_cloth_collide *cs, double dt)
{
    shard_particles *p = c->ph->p;
    for (size_t k = 0; k < cs->n_pairs; k++) {
        const shard_cc_pair *pr = &cs->pairs[k];
        const double *x[4], *v[4];
        double inv[4], h, kk, mu, dv[12];
        h = shard_cc_pair_h(c, cs, pr);
        if (!shard_cc_boxes_meet(cs, pr, 1.5 * h)) /* shard_cc_pt_near takes points up to 1.5 h beside a triangle */
            continue;
        shard_cc_gather(p, cs, pr, x, v, inv);
        shard_cc_stencil st;
        int near = pr->kind == 1   ? shard_cc_ee_near(x[0], x[1], x[2], x[3], h, &st)
                   : pr->kind == 3 ? shard_cc_ball_near(x[0], x[1], x[2], x[3], h, &st)
                                   : shard_cc_pt_near(x[0], x[1], x[2], x[3], h, &st);
        if (!near)
            continue;
        shard_cc_pair_constants(c, cs, pr, &kk, &mu);
        if (shard_cc_repel(&st, v, inv, h, kk, mu, dt, dv)) {
            shard_cc_record(c, cs, pr, dv);
            cs->n_prox++;
        }
    }
    shard_cc_apply(c, cs);
}

/* One detection pass of continuous collisions: the colliding pairs' inelastic impulses (recorded, applied when
 * `respond`), and their global ids into cs->hit (4 per pair).  Returns the count. */
static size_t shard_cc_collisions(const shard_matter_ctx *c, shard_cloth_collide *cs, double dt, int respond)
{
    shard_particles *p = c->ph->p;
    size_t n = 0;
    cs->n_hit = 0;
    for (size_t k = 0; k < cs->n_pairs; k++) {
        const shard_cc_pair *pr = &cs->pairs[k];
        const double *x[4], *v[4];
        double inv[4], h, kk, mu, dv[12];
        if (!shard_cc_boxes_meet(cs, pr, 1e-3 * cs->hmax))
            continue;
        shard_cc_gather(p, cs, pr, x, v, inv);
        h = shard_cc_pair_h(c, cs, pr);
        shard_cc_stencil st;
        double tol = 1e-3 * h;
        int hit = pr->kind != 1 ? shard_cc_pt_ccd(x, v, dt, tol, &st) : shard_cc_ee_ccd(x, v, dt, tol, &st);
        if (!hit)
            continue;
        n++;
        shard_reserve((void **)&cs->hit, &cs->cap_hit, 4 * (cs->n_hit + 1), sizeof *cs->hit);
        for (int q = 0; q < 4; q++)
            cs->hit[4 * cs->n_hit + q] = shard_cc_gid(p, pr->v[q]);
        cs->n_hit++;
        if (!respond)
            continue;
        shard_cc_pair_constants(c, cs, pr, &kk, &mu);
        if (shard_cc_stop(&st, v, inv, mu, dv))
            shard_cc_record(c, cs, pr, dv);
    }
    if (respond)
        shard_cc_apply(c, cs);
    return n;
}

int shard_cloth_collide_step(const shard_matter_ctx *c, const shard_collective *svc, shard_error *err)
{
    shard_cloth_state *st = c->state;
    shard_cloth_collide *cs = &st->collide;
    shard_particles *p = c->ph->p;
    double dt = c->ph->dt;
    svc->refresh(svc->impl); /* the ghosts' mean velocities */
    if (!shard_cc_same_particles(c, cs))
        shard_cc_elements(c, cs);
    shard_cc_obstacles_at(c->ph->scene, cs, c->ph->t);
    /* The ghosts cover the motion of one step (contact_reach): the farthest move of an owned vertex. */
    double far[2] = {0.0, 0.0};
    for (size_t m = 0; m < cs->map.n; m++) {
        int32_t i = cs->map.at[m].local;
        if ((size_t)i >= p->n_owned)
            continue;
        const double *v = p->v + 3 * (size_t)i;
        double d = dt * sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (d > far[0])
            far[0] = d, far[1] = (double)p->gid[i];
    }
    double gfar[2] = {far[0], 0.0};
    svc->max_doubles(svc->impl, gfar, 1);
    if (gfar[0] > c->ph->reach_slack) {
        double who[1] = {far[0] == gfar[0] ? -far[1] : -INFINITY};
        svc->max_doubles(svc->impl, who, 1);
        return shard_error_set(err, SHARD_EXIT_RUNTIME,
                               "step %ld: cloth vertex %lld moves %g m in one step, more than the %g m (half the "
                               "skin) that collision detection across ranks covers: lower the time step or raise "
                               "run.skin",
                               c->ph->step, (long long)-who[0], gfar[0], c->ph->reach_slack);
    }
    double hmax = 0.0;
    for (int b = 0; b < c->ph->scene->n_bodies; b++)
        if (shard_cc_is_cloth(c, b))
            hmax = shard_cc_max(hmax, shard_cc_body(c, b)->thickness);
    cs->hmax = hmax, cs->margin = 2.0 * hmax;
    shard_reserve((void **)&cs->dv, &cs->cap_dv, 3 * p->n_owned + 3, sizeof *cs->dv);
    memset(cs->dv, 0, 3 * p->n_owned * sizeof *cs->dv);
    /* 1. proximity at the start of the step */
    shard_cc_pass_candidates(c, cs, p, dt, hmax);
    shard_cc_pass_boxes(cs, p, 0.0);
    shard_cc_proximity(c, cs, dt);
    svc->refresh(svc->impl);
    /* 2. collisions, iterated; 3. impact zones */
    cs->n_zone = 0;
    int passes = 0, jacobi = (int)shard_cloth_settings_of(c->ph->scene)->collision_passes;
    for (;; passes++) {
        shard_cc_pass_candidates(c, cs, p, dt, hmax);
        int zones = passes >= jacobi;
        shard_cc_pass_boxes(cs, p, dt);
        size_t n = shard_cc_collisions(c, cs, dt, !zones);
        int any[1] = {n > 0};
        svc->max_ints(svc->impl, any, 1);
        if (!any[0])
            break;
        if (passes >= jacobi + SHARD_CLOTH_ZONE_PASSES) {
            cs->unresolved++;
            if (shard_cloth_settings_of(c->ph->scene)->unresolved == SHARD_CLOTH_UNRESOLVED_STOP)
                return shard_cc_unresolved(c, cs, svc, passes, err);
            break;
        }
        cs->n_coll += n;
        if (zones) {
            size_t bytes = 0;
            int64_t *hit = svc->allgather(svc->impl, cs->hit, 4 * cs->n_hit * sizeof *cs->hit, &bytes);
            shard_cc_zone_merge(cs, hit, bytes / (4 * sizeof *hit));
            free(hit);
            shard_cc_zone_move(c, cs, svc);
            cs->zone_steps += passes == jacobi;
        }
        svc->refresh(svc->impl);
    }
    cs->max_passes = passes > cs->max_passes ? passes : cs->max_passes;
    cs->steps++;
    /* the output's contact force: each owned vertex's momentum change over the step */
    const shard_block *blk = c->block;
    double *force = blk->col[SHARD_CLOTH_CONTACT];
    for (size_t q = 0; q < blk->n_owned; q++) {
        const double *d = cs->dv + 3 * (blk->first + q);
        force[q] = p->mass[blk->first + q] * sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / dt;
    }
    return 0;
}

void shard_cloth_collide_diag_line(const shard_matter_ctx *c, char *buf, size_t len)
{
    const shard_cloth_state *st = c->state;
    buf[0] = '\0';
    if (st->collide.unresolved > 0) /* the same count on every rank: the passes end together */
        snprintf(buf, len, "cloth unresolved %ld steps", st->collide.unresolved);
}

void shard_cloth_collide_report(const shard_matter_ctx *c, char *buf, size_t len)
{
    const shard_cloth_state *st = c->state;
    const shard_cloth_collide *cs = &st->collide;
    snprintf(buf, len,
             "Cloth collisions (this rank): %ld steps, %lld proximity impulses, %lld collisions, %ld steps with "
             "impact zones (largest %zu vertices), at most %d passes, %ld steps unresolved; %ld candidate lists, "
             "BVH %ld builds, %ld refits",
             cs->steps, (long long)cs->n_prox, (long long)cs->n_coll, cs->zone_steps, cs->zone_max, cs->max_passes,
             cs->unresolved, cs->lists, cs->vbvh.builds + cs->tbvh.builds + cs->ebvh.builds,
             cs->vbvh.refits + cs->tbvh.refits + cs->ebvh.refits);
}

void shard_cloth_collide_free(shard_cloth_collide *cs)
{
    shard_gidmap_free(&cs->map);
    free(cs->vlist), free(cs->vnext), free(cs->tri), free(cs->edge), free(cs->vbox), free(cs->pbox), free(cs->xb);
    free(cs->tbox), free(cs->ebox), free(cs->seen);
    free(cs->pairs), free(cs->rec), free(cs->hit), free(cs->inv_m), free(cs->dv);
    free(cs->zone_gid), free(cs->zone_parent);
    free(cs->ox), free(cs->ov), free(cs->orad), free(cs->oxb), free(cs->oobs), free(cs->otri), free(cs->oedge);
    shard_bvh_free(&cs->vbvh), shard_bvh_free(&cs->tbvh), shard_bvh_free(&cs->ebvh);
    memset(cs, 0, sizeof *cs);
}
