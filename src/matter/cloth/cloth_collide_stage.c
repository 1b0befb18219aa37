/* Cloth collisions over the ranks: the cloth module's collide hook (matter.h), Bridson, Fedkiw & Anderson 2002
 * in the order of the seed's recipe (seeds: 001-cloth.md, section 2.8), on the step's mean velocities (the
 * particles' v after the first half kick: the drift moves every vertex by dt v).
 *
 *   1. proximity at the start of the step: every point-triangle and edge-edge pair closer than the pair's
 *      thickness gets an inelastic impulse and a capped repulsion, with Coulomb friction (shard_cc_repel);
 *   2. continuous collision detection of the straight paths x + t v, t in [0, dt]: every colliding pair gets
 *      an inelastic impulse (shard_cc_stop); repeated with the new velocities, run.collision_passes times;
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
 * velocity changes of its pairs sorted by the pairs' global keys, as the seed's PARALLEL update does.  Between
 * iterations the ghosts' velocities are refreshed; whether anything still collides is a maximum over the
 * ranks.  Impact zones are global: every rank gathers the colliding pairs' global ids and merges them with a
 * union-find whose roots are the smallest ids, gathers the zones' vertices (mass, x, v) from their owners and
 * computes every zone's rigid motion in global-id order, so every rank has the same zones and velocities. */
#include "shard/matter.h"

#include "cloth/cloth.h"
#include "cloth/cloth_collide.h"
#include "shard/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloth/cloth_impl.h"

/* min and max without libm's NaN rules (the arguments are finite here), so that they inline */
static inline double cc_min(double a, double b) { return a < b ? a : b; }
static inline double cc_max(double a, double b) { return a > b ? a : b; }

/* The most impact-zone passes (the impulse passes before them: run.collision_passes). */
#define SHARD_CLOTH_ZONE_PASSES 200

typedef struct cc_pair {
    int32_t kind;               /* 0 point-triangle, 1 edge-edge, 2 a particle of another kind and a triangle,
                                 * 3 an obstacle's corner or sphere and a triangle */
    int32_t v[4];               /* local indices, in the stencil's order */
    int32_t a, b;               /* its two sides: point (vlist index) and triangle, or the two edges */
} cc_pair;

/* A velocity change of an owned vertex from one pair, with the pair's global key. */
typedef struct cc_rec {
    int32_t vertex;
    int32_t kind;
    int32_t other;              /* the pair's particle of a body that moves as a whole (its reaction), or -1 */
    int64_t key[4];
    double dv[3];
} cc_rec;

static int cc_rec_cmp(const void *pa, const void *pb)
{
    const cc_rec *a = pa, *b = pb;
    if (a->vertex != b->vertex)
        return a->vertex < b->vertex ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    for (int q = 0; q < 4; q++)
        if (a->key[q] != b->key[q])
            return a->key[q] < b->key[q] ? -1 : 1;
    return 0;
}

typedef struct cc_map {
    int64_t gid;
    int32_t local;
} cc_map;

static int cc_map_cmp(const void *pa, const void *pb)
{
    const cc_map *a = pa, *b = pb;
    return (a->gid > b->gid) - (a->gid < b->gid);
}

static int32_t cc_find(const shard_cloth_collide *cs, int64_t g)
{
    size_t lo = 0, hi = cs->n_map;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cs->map[mid].gid == g)
            return cs->map[mid].local;
        if (cs->map[mid].gid < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static const shard_cloth_params *cc_body(const shard_matter_ctx *c, int32_t b)
{
    return (const shard_cloth_params *)((const char *)c->bodies + (size_t)b * sizeof(shard_cloth_params));
}

static int cc_is_cloth(const shard_matter_ctx *c, int32_t b) { return cc_body(c, b)->thickness > 0.0; }

/* A point of the stage: a local particle (i >= 0) or an obstacle's vertex (i = -1 - k, global id i). */
static inline const double *cc_x(const shard_cloth_collide *cs, const shard_particles *p, int32_t i)
{
    return i >= 0 ? p->x + 3 * (size_t)i : cs->ox + 3 * (size_t)(-1 - i);
}
static inline const double *cc_v(const shard_cloth_collide *cs, const shard_particles *p, int32_t i)
{
    return i >= 0 ? p->v + 3 * (size_t)i : cs->ov + 3 * (size_t)(-1 - i);
}
static inline int64_t cc_gid(const shard_particles *p, int32_t i) { return i >= 0 ? p->gid[i] : (int64_t)i; }

/* The obstacles' vertices, the boxes' faces and edges (once: the scene's obstacles do not change).  Planes
 * have none: a triangle meets a half-space only where one of its vertices does, which the vertices' contact
 * (contact.h) keeps out; a sphere or a box can pass between a cloth's vertices, which these pairs stop. */
static void cc_obstacle_elements(const shard_scene *sc, shard_cloth_collide *cs)
{
    size_t n = 0;
    for (int o = 0; o < sc->n_obstacles; o++)
        n += sc->obstacles[o].kind == SHARD_OBSTACLE_SPHERE ? 1 : sc->obstacles[o].kind == SHARD_OBSTACLE_BOX ? 8 : 0;
    cs->ox = shard_malloc((3 * n + 3) * sizeof *cs->ox), cs->ov = shard_malloc((3 * n + 3) * sizeof *cs->ov);
    cs->orad = shard_malloc((n + 1) * sizeof *cs->orad), cs->oobs = shard_malloc((n + 1) * sizeof *cs->oobs);
    cs->oxb = shard_malloc((6 * n + 6) * sizeof *cs->oxb);
    cs->otri = shard_malloc((36 * n / 8 + 3) * sizeof *cs->otri);
    cs->oedge = shard_malloc((24 * n / 8 + 2) * sizeof *cs->oedge);
    cs->n_ov = cs->n_otri = cs->n_oedge = 0;
    for (int o = 0; o < sc->n_obstacles; o++) {
        const shard_obstacle_def *ob = &sc->obstacles[o];
        if (ob->kind == SHARD_OBSTACLE_SPHERE) {
            cs->orad[cs->n_ov] = ob->radius, cs->oobs[cs->n_ov++] = o;
            continue;
        }
        if (ob->kind != SHARD_OBSTACLE_BOX)
            continue;
        /* corner c has the max along axis k when bit k of c is set; vertex index -1 - (first + c) */
        int32_t first = (int32_t)cs->n_ov;
        for (int c = 0; c < 8; c++)
            cs->orad[cs->n_ov] = 0.0, cs->oobs[cs->n_ov++] = o;
#define CC_CORNER(c) (-1 - (first + (c)))
        for (int c = 0; c < 8; c++)
            for (int bit = 1; bit < 8; bit <<= 1)
                if (!(c & bit)) { /* the smaller global id (the larger index) first */
                    cs->oedge[2 * cs->n_oedge] = CC_CORNER(c | bit), cs->oedge[2 * cs->n_oedge + 1] = CC_CORNER(c);
                    cs->n_oedge++;
                }
        for (int a = 0; a < 3; a++) {
            int b1 = 1 << ((a + 1) % 3), b2 = 1 << ((a + 2) % 3);
            for (int side = 0; side < 2; side++) {
                int f = side ? 1 << a : 0, q[4] = {f, f | b1, f | b1 | b2, f | b2};
                int32_t *t = cs->otri + 3 * cs->n_otri;
                t[0] = CC_CORNER(q[0]), t[1] = CC_CORNER(q[1]), t[2] = CC_CORNER(q[2]);
                t[3] = CC_CORNER(q[0]), t[4] = CC_CORNER(q[2]), t[5] = CC_CORNER(q[3]);
                cs->n_otri += 2;
            }
        }
#undef CC_CORNER
    }
    cs->obuilt = 1;
}

/* The obstacles' vertices at time t (they move with their constant velocities). */
static void cc_obstacles_at(const shard_scene *sc, shard_cloth_collide *cs, double t)
{
    for (size_t k = 0; k < cs->n_ov;) {
        const shard_obstacle_def *ob = &sc->obstacles[cs->oobs[k]];
        int nc = ob->kind == SHARD_OBSTACLE_SPHERE ? 1 : 8;
        for (int c = 0; c < nc; c++, k++)
            for (int d = 0; d < 3; d++) {
                double base = nc == 1 ? ob->center[d] : ((c >> d) & 1 ? ob->max[d] : ob->min[d]);
                cs->ox[3 * k + d] = base + ob->velocity[d] * t, cs->ov[3 * k + d] = ob->velocity[d];
            }
    }
}

static int cc_edge_cmp(const void *pa, const void *pb)
{
    const int64_t *a = pa, *b = pb;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* The local cloth elements: every triangle and edge whose vertices this rank holds (rebuilt when the local
 * particles change). */
static void cc_elements(const shard_matter_ctx *c, shard_cloth_collide *cs)
{
    const shard_particles *p = c->ph->p;
    const int64_t *bf = c->ph->body_first;
    cs->n_map = 0;
    shard_reserve((void **)&cs->map, &cs->cap_map, p->n_local + 1, sizeof *cs->map);
    for (size_t i = 0; i < p->n_local; i++)
        if (cc_is_cloth(c, p->body[i]))
            cs->map[cs->n_map++] = (cc_map){p->gid[i], (int32_t)i};
    qsort(cs->map, cs->n_map, sizeof *cs->map, cc_map_cmp);
    cs->n_tri = 0;
    size_t n_e = 0;
    int64_t *ekeys = NULL; /* gid pairs */
    size_t cap_e = 0;
    for (size_t m = 0; m < cs->n_map; m++) {
        int32_t i = cs->map[m].local;
        int32_t b = p->body[i];
        const shard_cloth_params *cp = cc_body(c, b);
        int64_t k = p->gid[i] - bf[b], ids[SHARD_CLOTH_MAX_VALENCE];
        int nt = shard_cloth_vertex_triangles(cp, k, ids);
        for (int q = 0; q < nt; q++) {
            int64_t tv[3];
            shard_cloth_triangle(cp, ids[q], tv);
            /* its edges from their smaller end */
            for (int e = 0; e < 3; e++) {
                int64_t a = tv[e], o = tv[(e + 1) % 3];
                if (a != k && o != k)
                    continue;
                int64_t other = a == k ? o : a;
                if (other < k)
                    continue;
                shard_reserve((void **)&ekeys, &cap_e, 2 * (n_e + 1), sizeof *ekeys);
                ekeys[2 * n_e] = bf[b] + k, ekeys[2 * n_e + 1] = bf[b] + other;
                n_e++;
            }
            if (tv[0] != k)
                continue; /* a triangle is listed from its vertex 0 */
            int32_t l[3] = {i, cc_find(cs, bf[b] + tv[1]), cc_find(cs, bf[b] + tv[2])};
            if (l[1] < 0 || l[2] < 0)
                continue;
            shard_reserve((void **)&cs->tri, &cs->cap_tri, 3 * (cs->n_tri + 1), sizeof *cs->tri);
            memcpy(cs->tri + 3 * cs->n_tri, l, sizeof l);
            cs->n_tri++;
        }
    }
    if (n_e > 1)
        qsort(ekeys, n_e, 2 * sizeof *ekeys, cc_edge_cmp);
    cs->n_edge = 0;
    for (size_t e = 0; e < n_e; e++) {
        if (e > 0 && ekeys[2 * e] == ekeys[2 * e - 2] && ekeys[2 * e + 1] == ekeys[2 * e - 1])
            continue;
        int32_t a = cc_find(cs, ekeys[2 * e]), o = cc_find(cs, ekeys[2 * e + 1]);
        if (a < 0 || o < 0)
            continue;
        shard_reserve((void **)&cs->edge, &cs->cap_edge, 2 * (cs->n_edge + 1), sizeof *cs->edge);
        cs->edge[2 * cs->n_edge] = a, cs->edge[2 * cs->n_edge + 1] = o;
        cs->n_edge++;
    }
    free(ekeys);
    if (!cs->obuilt)
        cc_obstacle_elements(c->ph->scene, cs);
    if (cs->n_map > 0) { /* the obstacles' faces and edges meet the cloth's points and edges */
        shard_reserve((void **)&cs->tri, &cs->cap_tri, 3 * (cs->n_tri + cs->n_otri + 1), sizeof *cs->tri);
        shard_reserve((void **)&cs->edge, &cs->cap_edge, 2 * (cs->n_edge + cs->n_oedge + 1), sizeof *cs->edge);
        memcpy(cs->tri + 3 * cs->n_tri, cs->otri, 3 * cs->n_otri * sizeof *cs->tri);
        memcpy(cs->edge + 2 * cs->n_edge, cs->oedge, 2 * cs->n_oedge * sizeof *cs->edge);
        cs->n_tri += cs->n_otri, cs->n_edge += cs->n_oedge;
    }
    shard_reserve((void **)&cs->vbox, &cs->cap_vbox, 6 * (cs->n_map + 1), sizeof *cs->vbox);
    shard_reserve((void **)&cs->tbox, &cs->cap_tbox, 6 * (cs->n_tri + 1), sizeof *cs->tbox);
    shard_reserve((void **)&cs->ebox, &cs->cap_ebox, 6 * (cs->n_edge + 1), sizeof *cs->ebox);
    cs->fresh = 1;
}

/* Whether the local particles are the ones the elements were built for. */
static int cc_same_particles(const shard_matter_ctx *c, shard_cloth_collide *cs)
{
    const shard_particles *p = c->ph->p;
    if (cs->n_seen != p->n_local || cs->owned_seen != p->n_owned ||
        (p->n_local && memcmp(cs->seen, p->gid, p->n_local * sizeof *p->gid) != 0)) {
        shard_reserve((void **)&cs->seen, &cs->cap_seen, p->n_local + 1, sizeof *cs->seen);
        memcpy(cs->seen, p->gid, p->n_local * sizeof *p->gid);
        cs->n_seen = p->n_local, cs->owned_seen = p->n_owned;
        return 0;
    }
    return 1;
}

/* Boxes of the elements: positions at the start and, with dt > 0, at the end of the step, grown by pad. */
static void cc_boxes(const shard_cloth_collide *cs, const shard_particles *p, const int32_t *el, size_t n, int nv,
                     double dt, double pad, double *box)
{
    for (size_t e = 0; e < n; e++) {
        double *b = box + 6 * e;
        for (int k = 0; k < 3; k++)
            b[k] = INFINITY, b[3 + k] = -INFINITY;
        for (int q = 0; q < nv; q++) {
            const double *x = cc_x(cs, p, el[nv * e + q]), *v = cc_v(cs, p, el[nv * e + q]);
            for (int k = 0; k < 3; k++) {
                double y = x[k] + dt * v[k];
                b[k] = cc_min(b[k], cc_min(x[k], y) - pad), b[3 + k] = cc_max(b[3 + k], cc_max(x[k], y) + pad);
            }
        }
    }
}

/* The contact radius of a particle of a body that is not a cloth (contact.h: half its spacing). */
static double cc_point_radius(const shard_scene *sc, int32_t b) { return 0.5 * sc->bodies[b].spacing; }

/* A point's reach beyond itself: an obstacle vertex's radius, a cloth vertex's half thickness, another kind's
 * contact radius; a pair's thickness h is the sum of its two sides'. */
static double cc_half(const shard_matter_ctx *c, const shard_cloth_collide *cs, int32_t i)
{
    if (i < 0)
        return cs->orad[-1 - i];
    int32_t b = c->ph->p->body[i];
    return cc_is_cloth(c, b) ? 0.5 * cc_body(c, b)->thickness : cc_point_radius(c->ph->scene, b);
}

/* The points' boxes (cloth vertices in map order, then the particles of other kinds near the cloth). */
static void cc_vertex_boxes(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p, double dt,
                            double pad)
{
    for (size_t m = 0; m < cs->n_vlist; m++) {
        const double *x = cc_x(cs, p, cs->vlist[m]), *v = cc_v(cs, p, cs->vlist[m]);
        double *q = cs->vbox + 6 * m;
        /* a particle of another kind or an obstacle's vertex reaches its radius farther */
        double r = m < cs->n_map ? pad : pad + 1.5 * cc_half(c, cs, cs->vlist[m]) + 0.25 * cs->hmax;
        for (int k = 0; k < 3; k++) {
            double y = x[k] + dt * v[k];
            q[k] = cc_min(x[k], y) - r, q[3 + k] = cc_max(x[k], y) + r;
        }
    }
}

/* The three trees over the elements' boxes over the step (start and end positions), each grown by pad. */
static void cc_trees(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p, double dt,
                     double pad)
{
    cc_vertex_boxes(c, cs, p, dt, pad);
    cc_boxes(cs, p, cs->tri, cs->n_tri, 3, dt, pad, cs->tbox);
    cc_boxes(cs, p, cs->edge, cs->n_edge, 2, dt, pad, cs->ebox);
    if (cs->fresh || cs->vlist_changed) {
        shard_bvh_build(&cs->vbvh, cs->vbox, cs->n_vlist);
        cs->vlist_changed = 0;
    } else {
        shard_bvh_refit(&cs->vbvh, cs->vbox, cs->n_vlist);
    }
    if (cs->fresh) {
        shard_bvh_build(&cs->tbvh, cs->tbox, cs->n_tri);
        shard_bvh_build(&cs->ebvh, cs->ebox, cs->n_edge);
        cs->fresh = 0;
    } else {
        shard_bvh_refit(&cs->tbvh, cs->tbox, cs->n_tri);
        shard_bvh_refit(&cs->ebvh, cs->ebox, cs->n_edge);
    }
}

typedef struct cc_walk {
    shard_cloth_collide *cs;
    const shard_particles *p;
} cc_walk;

static void cc_add_pair(shard_cloth_collide *cs, cc_pair pr)
{
    shard_reserve((void **)&cs->pairs, &cs->cap_pairs, cs->n_pairs + 1, sizeof *cs->pairs);
    cs->pairs[cs->n_pairs++] = pr;
}

static void cc_pt_found(void *ctx, int32_t m, int32_t t)
{
    cc_walk *w = ctx;
    int32_t i = w->cs->vlist[m];
    const int32_t *tv = w->cs->tri + 3 * (size_t)t;
    size_t no = w->p->n_owned;
    if (tv[0] == i || tv[1] == i || tv[2] == i)
        return;
    /* (negative indices, the obstacles' vertices, are nobody's) */
    if ((size_t)i >= no && (size_t)tv[0] >= no && (size_t)tv[1] >= no && (size_t)tv[2] >= no)
        return;
    int cloth_point = (size_t)m < w->cs->n_map;
    if (!cloth_point && tv[0] < 0)
        return; /* an obstacle's face meets the cloth's points only */
    cc_add_pair(w->cs, (cc_pair){cloth_point ? 0 : i < 0 ? 3 : 2, {i, tv[0], tv[1], tv[2]}, m, t});
}

static void cc_ee_found(void *ctx, int32_t e, int32_t f)
{
    cc_walk *w = ctx;
    const int32_t *a = w->cs->edge + 2 * (size_t)e, *b = w->cs->edge + 2 * (size_t)f;
    const shard_particles *p = w->p;
    size_t no = p->n_owned;
    if (a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1])
        return;
    if ((size_t)a[0] >= no && (size_t)a[1] >= no && (size_t)b[0] >= no && (size_t)b[1] >= no)
        return; /* (this also drops two obstacles' edges) */
    /* the edge of the smaller global ids first */
    int64_t ga0 = cc_gid(p, a[0]), gb0 = cc_gid(p, b[0]);
    if (ga0 > gb0 || (ga0 == gb0 && cc_gid(p, a[1]) > cc_gid(p, b[1]))) {
        const int32_t *tmp = a;
        a = b, b = tmp;
        int32_t t = e;
        e = f, f = t;
    }
    cc_add_pair(w->cs, (cc_pair){1, {a[0], a[1], b[0], b[1]}, e, f});
}

/* Whether a point's path over the step, from x to x + dt v, comes within pad of the box [lo, hi]. */
static int cc_path_near(const double x[3], const double v[3], double dt, const double lo[3], const double hi[3],
                        double pad)
{
    for (int k = 0; k < 3; k++) {
        double y = x[k] + dt * v[k];
        if (cc_min(x[k], y) > hi[k] + pad || cc_max(x[k], y) < lo[k] - pad)
            return 0;
    }
    return 1;
}

/* The n points' start and end positions over the step, 6 per point (the list's build, for cc_paths_within). */
static void cc_path_ends(const double *x, const double *v, size_t n, double dt, double *ends)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            ends[6 * i + k] = x[3 * i + k], ends[6 * i + 3 + k] = x[3 * i + k] + dt * v[3 * i + k];
}

/* Whether each of the n points' start and end positions is within margin of those recorded in ends. */
static int cc_paths_within(const double *x, const double *v, size_t n, double dt, const double *ends, double margin)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            if (fabs(x[3 * i + k] - ends[6 * i + k]) > margin ||
                fabs(x[3 * i + k] + dt * v[3 * i + k] - ends[6 * i + 3 + k]) > margin)
                return 0;
    return 1;
}

/* The points of the vertex tree: the cloth vertices (map order), then the particles of other kinds whose
 * motion over the step comes within their radius, the thickness and the margin of the cloth's box. */
static void cc_points(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p, double dt)
{
    const shard_scene *sc = c->ph->scene;
    /* the new list goes into the spare buffer, then the two swap (the old one says whether it changed) */
    shard_reserve((void **)&cs->vnext, &cs->cap_vnext, p->n_local + cs->n_ov + 1, sizeof *cs->vnext);
    int32_t *next = cs->vnext;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t m = 0; m < cs->n_map; m++) {
        int32_t i = cs->map[m].local;
        next[m] = i;
        for (int k = 0; k < 3; k++) {
            double x = p->x[3 * (size_t)i + k], y = x + dt * p->v[3 * (size_t)i + k];
            lo[k] = cc_min(lo[k], cc_min(x, y)), hi[k] = cc_max(hi[k], cc_max(x, y));
        }
    }
    size_t n = cs->n_map;
    for (size_t i = 0; i < p->n_local && cs->n_map > 0; i++) {
        if (cc_is_cloth(c, p->body[i]))
            continue;
        double pad = 1.5 * cc_point_radius(sc, p->body[i]) + 2.0 * (cs->hmax + cs->margin);
        if (cc_path_near(p->x + 3 * i, p->v + 3 * i, dt, lo, hi, pad))
            next[n++] = (int32_t)i;
    }
    for (size_t k = 0; k < cs->n_ov && cs->n_map > 0; k++) {
        double pad = 1.5 * cs->orad[k] + 2.0 * (cs->hmax + cs->margin);
        if (cc_path_near(cs->ox + 3 * k, cs->ov + 3 * k, dt, lo, hi, pad))
            next[n++] = -1 - (int32_t)k;
    }
    cs->vlist_changed = n != cs->n_vlist || (n && memcmp(next, cs->vlist, n * sizeof *next) != 0);
    int32_t *tmp = cs->vlist;
    size_t cap = cs->cap_vlist;
    cs->vlist = next, cs->cap_vlist = cs->cap_vnext, cs->n_vlist = n;
    cs->vnext = tmp, cs->cap_vnext = cap;
    shard_reserve((void **)&cs->vbox, &cs->cap_vbox, 6 * (n + 1), sizeof *cs->vbox);
}

/* The candidate pairs, a Verlet list: points against triangles and edges against edges, sharing no vertex,
 * with an owned vertex (in a global vertex order), whose boxes over the step grown by half the largest
 * thickness and the margin overlap.  It holds every pair that can touch (proximity within the thickness, or
 * a collision) while no vertex's start or end position has moved farther than the margin from where it was
 * at the build (cc_list_valid).  Which superset a rank holds does not change any result. */
static void cc_candidates(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p, double dt,
                          double hmax)
{
    cc_points(c, cs, p, dt);
    cc_trees(c, cs, p, dt, 0.5 * hmax + cs->margin);
    cs->n_pairs = 0;
    cc_walk w = {cs, p};
    shard_bvh_pairs(&cs->vbvh, cs->vbox, &cs->tbvh, cs->tbox, cc_pt_found, &w);
    shard_bvh_pairs(&cs->ebvh, cs->ebox, &cs->ebvh, cs->ebox, cc_ee_found, &w);
    shard_reserve((void **)&cs->xb, &cs->cap_xb, 6 * (p->n_local + 1), sizeof *cs->xb);
    cc_path_ends(p->x, p->v, p->n_local, dt, cs->xb);
    cc_path_ends(cs->ox, cs->ov, cs->n_ov, dt, cs->oxb);
    cs->lists++;
}

/* Whether every local particle's start and end positions are within the margin of those at the list's build
 * (the particles of other kinds too: one may have come near the cloth). */
static int cc_list_valid(const shard_cloth_collide *cs, const shard_particles *p, double dt)
{
    return cc_paths_within(p->x, p->v, p->n_local, dt, cs->xb, cs->margin) &&
           cc_paths_within(cs->ox, cs->ov, cs->n_ov, dt, cs->oxb, cs->margin); /* (a moving obstacle) */
}

/* The candidates for a pass (rebuilt when they no longer cover the motion). */
static void cc_inverse_masses(const shard_matter_ctx *c, shard_cloth_collide *cs);

static void cc_pass_candidates(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p,
                               double dt, double hmax)
{
    if (cs->fresh || !cc_list_valid(cs, p, dt)) {
        cc_candidates(c, cs, p, dt, hmax);
        cs->inv_step = 0;
    }
    if (cs->inv_step != c->ph->step + 1) {
        cc_inverse_masses(c, cs);
        cs->inv_step = c->ph->step + 1;
    }
}

/* The current boxes of the points, triangles and edges for a pass (over the step when dt > 0). */
static void cc_pass_boxes(shard_cloth_collide *cs, const shard_particles *p, double dt)
{
    shard_reserve((void **)&cs->pbox, &cs->cap_pbox, 6 * (cs->n_vlist + cs->n_tri + cs->n_edge + 1), sizeof *cs->pbox);
    double *pb = cs->pbox, *tb = pb + 6 * cs->n_vlist, *eb = tb + 6 * cs->n_tri;
    cc_boxes(cs, p, cs->vlist, cs->n_vlist, 1, dt, 0.0, pb);
    cc_boxes(cs, p, cs->tri, cs->n_tri, 3, dt, 0.0, tb);
    cc_boxes(cs, p, cs->edge, cs->n_edge, 2, dt, 0.0, eb);
}

/* Whether the current boxes of a pair's two sides come within pad of each other. */
static int cc_boxes_meet(const shard_cloth_collide *cs, const cc_pair *pr, double pad)
{
    const double *pb = cs->pbox, *tb = pb + 6 * cs->n_vlist, *eb = tb + 6 * cs->n_tri;
    const double *A = pr->kind == 1 ? eb + 6 * (size_t)pr->a : pb + 6 * (size_t)pr->a;
    const double *B = pr->kind == 1 ? eb + 6 * (size_t)pr->b : tb + 6 * (size_t)pr->b;
    for (int k = 0; k < 3; k++)
        if (A[k] > B[3 + k] + pad || B[k] > A[3 + k] + pad)
            return 0;
    return 1;
}

/* The thickness of a pair: the sum of its two sides' reaches (cc_half: the mean of two cloths' thicknesses, a
 * particle's contact radius and half the cloth's, an obstacle's radius and half the cloth's). */
static double cc_pair_h(const shard_matter_ctx *c, const shard_cloth_collide *cs, const cc_pair *pr)
{
    return cc_half(c, cs, pr->v[0]) + cc_half(c, cs, pr->v[pr->kind == 1 ? 2 : 1]);
}

/* The pair's repulsion stiffness and friction (means over the two sides' bodies; a particle of another kind:
 * the cloth's stiffness, its material's friction; an obstacle: the cloth's stiffness and the obstacle's
 * friction, as for the vertices' contact with it). */
static void cc_pair_constants(const shard_matter_ctx *c, const shard_cloth_collide *cs, const cc_pair *pr,
                              double *k, double *mu)
{
    const shard_particles *p = c->ph->p;
    const shard_scene *sc = c->ph->scene;
    int32_t sa = pr->v[0], sb = pr->v[pr->kind == 1 ? 2 : 1];
    if (sa < 0 || sb < 0) {
        const shard_cloth_params *B = cc_body(c, p->body[sa < 0 ? sb : sa]);
        *k = B->lambda + 2.0 * B->mu;
        *mu = sc->obstacles[cs->oobs[-1 - (sa < 0 ? sa : sb)]].friction;
        return;
    }
    int32_t ba = p->body[sa], bb = p->body[sb];
    const shard_cloth_params *B = cc_body(c, bb);
    if (pr->kind == 2) {
        *k = B->lambda + 2.0 * B->mu;
        *mu = sqrt(sc->materials[sc->bodies[ba].material].friction * B->friction);
        return;
    }
    const shard_cloth_params *A = cc_body(c, ba);
    *k = 0.5 * (A->lambda + 2.0 * A->mu + B->lambda + 2.0 * B->mu);
    *mu = sqrt(A->friction * B->friction);
}

static void cc_record(const shard_matter_ctx *c, shard_cloth_collide *cs, const cc_pair *pr, const double dv[12])
{
    const shard_particles *p = c->ph->p;
    int32_t other = pr->kind == 2 && c->ph->own_contact[p->body[pr->v[0]]] ? pr->v[0] : -1;
    for (int q = 0; q < 4; q++) {
        if ((size_t)pr->v[q] >= p->n_owned)
            continue;
        shard_reserve((void **)&cs->rec, &cs->cap_rec, cs->n_rec + 1, sizeof *cs->rec);
        cc_rec *r = &cs->rec[cs->n_rec++];
        r->vertex = pr->v[q], r->kind = pr->kind, r->other = other;
        for (int j = 0; j < 4; j++)
            r->key[j] = cc_gid(p, pr->v[j]);
        memcpy(r->dv, dv + 3 * q, sizeof r->dv);
    }
}

/* The reaction J to a change of the cloth's momentum, on particle i of a body that moves as a whole. */
static void cc_react(const shard_matter_ctx *c, int32_t i, const double J[3])
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
static void cc_apply(const shard_matter_ctx *c, shard_cloth_collide *cs)
{
    shard_particles *p = c->ph->p;
    if (cs->n_rec > 1)
        qsort(cs->rec, cs->n_rec, sizeof *cs->rec, cc_rec_cmp);
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
                cc_react(c, cs->rec[q].other, J);
            }
        r = e;
    }
    cs->n_rec = 0;
}

static void cc_gather(const shard_particles *p, const shard_cloth_collide *cs, const cc_pair *pr,
                      const double *x[4], const double *v[4], double inv[4])
{
    for (int q = 0; q < 4; q++) {
        x[q] = cc_x(cs, p, pr->v[q]), v[q] = cc_v(cs, p, pr->v[q]);
        inv[q] = pr->v[q] >= 0 ? cs->inv_m[pr->v[q]] : 0.0;
    }
}

/* Proximity impulses at the start of the step (once). */
static void cc_proximity(const shard_matter_ctx *c, shard_cloth_collide *cs, double dt)
{
    shard_particles *p = c->ph->p;
    for (size_t k = 0; k < cs->n_pairs; k++) {
        const cc_pair *pr = &cs->pairs[k];
        const double *x[4], *v[4];
        double inv[4], h, kk, mu, dv[12];
        h = cc_pair_h(c, cs, pr);
        if (!cc_boxes_meet(cs, pr, 1.5 * h)) /* shard_cc_pt_near takes points up to 1.5 h beside a triangle */
            continue;
        cc_gather(p, cs, pr, x, v, inv);
        shard_cc_stencil st;
        int near = pr->kind == 1   ? shard_cc_ee_near(x[0], x[1], x[2], x[3], h, &st)
                   : pr->kind == 3 ? shard_cc_ball_near(x[0], x[1], x[2], x[3], h, &st)
                                   : shard_cc_pt_near(x[0], x[1], x[2], x[3], h, &st);
        if (!near)
            continue;
        cc_pair_constants(c, cs, pr, &kk, &mu);
        if (shard_cc_repel(&st, v, inv, h, kk, mu, dt, dv)) {
            cc_record(c, cs, pr, dv);
            cs->n_prox++;
        }
    }
    cc_apply(c, cs);
}

/* One detection pass of continuous collisions: the colliding pairs' inelastic impulses (recorded, applied when
 * `respond`), and their global ids into cs->hit (4 per pair).  Returns the count. */
static size_t cc_collisions(const shard_matter_ctx *c, shard_cloth_collide *cs, double dt, int respond)
{
    shard_particles *p = c->ph->p;
    size_t n = 0;
    cs->n_hit = 0;
    for (size_t k = 0; k < cs->n_pairs; k++) {
        const cc_pair *pr = &cs->pairs[k];
        const double *x[4], *v[4];
        double inv[4], h, kk, mu, dv[12];
        if (!cc_boxes_meet(cs, pr, 1e-3 * cs->hmax))
            continue;
        cc_gather(p, cs, pr, x, v, inv);
        h = cc_pair_h(c, cs, pr);
        shard_cc_stencil st;
        double tol = 1e-3 * h;
        int hit = pr->kind != 1 ? shard_cc_pt_ccd(x, v, dt, tol, &st) : shard_cc_ee_ccd(x, v, dt, tol, &st);
        if (!hit)
            continue;
        n++;
        shard_reserve((void **)&cs->hit, &cs->cap_hit, 4 * (cs->n_hit + 1), sizeof *cs->hit);
        for (int q = 0; q < 4; q++)
            cs->hit[4 * cs->n_hit + q] = cc_gid(p, pr->v[q]);
        cs->n_hit++;
        if (!respond)
            continue;
        cc_pair_constants(c, cs, pr, &kk, &mu);
        if (shard_cc_stop(&st, v, inv, mu, dv))
            cc_record(c, cs, pr, dv);
    }
    if (respond)
        cc_apply(c, cs);
    return n;
}

/* ---- impact zones: a union-find over global ids, the same on every rank ---- */

/* The position of id g in the sorted ids[0..n). */
static size_t cc_lower(const int64_t *ids, size_t n, int64_t g)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t cc_zone_root(shard_cloth_collide *cs, size_t i)
{
    while (cs->zone_parent[i] != i) {
        cs->zone_parent[i] = cs->zone_parent[cs->zone_parent[i]];
        i = cs->zone_parent[i];
    }
    return i;
}

static int cc_i64_cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

/* Merges the gathered colliding pairs (4 global ids each) into the zones. */
static void cc_zone_merge(shard_cloth_collide *cs, const int64_t *hit, size_t n_hit)
{
    /* the new ids, then every id, sorted and unique; parents carried over by id */
    size_t n_old = cs->n_zone, n_all = n_old + 4 * n_hit;
    int64_t *ids = shard_malloc((n_all + 1) * sizeof *ids);
    if (n_old)
        memcpy(ids, cs->zone_gid, n_old * sizeof *ids);
    if (n_hit)
        memcpy(ids + n_old, hit, 4 * n_hit * sizeof *ids);
    qsort(ids, n_all, sizeof *ids, cc_i64_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n_all; i++)
        if (m == 0 || ids[i] != ids[m - 1])
            ids[m++] = ids[i];
    size_t *parent = shard_malloc((m + 1) * sizeof *parent);
    for (size_t i = 0; i < m; i++)
        parent[i] = i;
    /* old zones: each member joins its old root (roots are the smallest ids, so they map in order) */
    size_t j = 0;
    for (size_t i = 0; i < n_old; i++) {
        while (ids[j] != cs->zone_gid[i])
            j++;
        size_t r = cc_zone_root(cs, i);
        parent[j] = cc_lower(ids, m, cs->zone_gid[r]);
    }
    free(cs->zone_gid), free(cs->zone_parent);
    cs->zone_gid = ids, cs->zone_parent = parent, cs->n_zone = m;
    for (size_t h = 0; h < n_hit; h++) {
        size_t r0 = cc_zone_root(cs, cc_lower(cs->zone_gid, cs->n_zone, hit[4 * h]));
        for (int q = 1; q < 4; q++) {
            size_t r = cc_zone_root(cs, cc_lower(cs->zone_gid, cs->n_zone, hit[4 * h + q]));
            if (r < r0)
                cs->zone_parent[r0] = r, r0 = r;
            else if (r > r0)
                cs->zone_parent[r] = r0;
        }
    }
}

/* A zone member as gathered from its owner. */
typedef struct cc_member {
    int64_t gid, root;
    double m, inv, x[3], v[3];
} cc_member;

static int cc_member_cmp(const void *pa, const void *pb)
{
    const cc_member *a = pa, *b = pb;
    if (a->root != b->root)
        return a->root < b->root ? -1 : 1;
    return (a->gid > b->gid) - (a->gid < b->gid);
}

/* The local index of global id g among the points (cloth vertices first), or -1. */
static int32_t cc_find_point(const shard_cloth_collide *cs, const shard_particles *p, int64_t g)
{
    if (g < 0)
        return -1; /* an obstacle's vertex: nobody's */
    int32_t i = cc_find(cs, g);
    for (size_t m = cs->n_map; i < 0 && m < cs->n_vlist; m++)
        if (cs->vlist[m] >= 0 && p->gid[cs->vlist[m]] == g)
            i = cs->vlist[m];
    return i;
}

/* Every zone moves rigidly: gathers the members from their owners, computes each zone's motion in id order,
 * sets the owned members' velocities.  A zone holding pinned or prescribed vertices moves with the one of the
 * smallest id (a translation). */
static void cc_zone_move(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_collective *svc)
{
    shard_particles *p = c->ph->p;
    size_t n_mine = 0;
    cc_member *mine = shard_malloc((cs->n_zone + 1) * sizeof *mine);
    for (size_t z = 0; z < cs->n_zone; z++) {
        int32_t i = cc_find_point(cs, p, cs->zone_gid[z]);
        if (i < 0 || (size_t)i >= p->n_owned)
            continue;
        cc_member *mb = &mine[n_mine++];
        mb->gid = cs->zone_gid[z], mb->root = cs->zone_gid[cc_zone_root(cs, z)];
        mb->m = p->mass[i], mb->inv = cs->inv_m[i];
        memcpy(mb->x, p->x + 3 * (size_t)i, sizeof mb->x);
        memcpy(mb->v, p->v + 3 * (size_t)i, sizeof mb->v);
    }
    size_t bytes = 0;
    cc_member *all = svc->allgather(svc->impl, mine, n_mine * sizeof *mine, &bytes);
    free(mine);
    size_t n_all = bytes / sizeof *all, n_obs = 0;
    for (size_t z = 0; z < cs->n_zone && cs->zone_gid[z] < 0; z++)
        n_obs++;
    if (n_obs) { /* the obstacles' vertices, which every rank knows: infinite mass, the zone moves with them */
        all = shard_realloc(all, (n_all + n_obs) * sizeof *all);
        for (size_t z = 0; z < n_obs; z++) {
            cc_member *mb = &all[n_all++];
            int32_t i = (int32_t)cs->zone_gid[z];
            mb->gid = cs->zone_gid[z], mb->root = cs->zone_gid[cc_zone_root(cs, z)];
            mb->m = 0.0, mb->inv = 0.0;
            memcpy(mb->x, cc_x(cs, p, i), sizeof mb->x), memcpy(mb->v, cc_v(cs, p, i), sizeof mb->v);
        }
    }
    qsort(all, n_all, sizeof *all, cc_member_cmp);
    double *m = shard_malloc((n_all + 1) * sizeof *m), *x = shard_malloc((3 * n_all + 3) * sizeof *x);
    double *v = shard_malloc((3 * n_all + 3) * sizeof *v);
    for (size_t a = 0; a < n_all;) {
        size_t e = a;
        while (e < n_all && all[e].root == all[a].root)
            e++;
        const cc_member *pin = NULL;
        for (size_t q = a; q < e && !pin; q++)
            if (all[q].inv == 0.0)
                pin = &all[q];
        for (size_t q = a; q < e; q++) {
            m[q - a] = all[q].m;
            memcpy(x + 3 * (q - a), all[q].x, sizeof all[q].x);
            memcpy(v + 3 * (q - a), pin ? pin->v : all[q].v, sizeof all[q].v);
        }
        if (!pin)
            shard_cc_zone_rigid(e - a, m, x, v);
        else if (pin->gid >= 0) { /* held by a particle of a body that moves as a whole: its owner pushes back */
            int32_t i = cc_find_point(cs, p, pin->gid);
            if (i >= 0 && (size_t)i < p->n_owned && c->ph->own_contact[p->body[i]]) {
                double J[3] = {0, 0, 0};
                for (size_t q = a; q < e; q++)
                    for (int k = 0; all[q].inv > 0.0 && k < 3; k++)
                        J[k] -= all[q].m * (v[3 * (q - a) + k] - all[q].v[k]);
                cc_react(c, i, J);
            }
        }
        for (size_t q = a; q < e; q++) {
            int32_t i = cc_find_point(cs, p, all[q].gid);
            if (i >= 0 && (size_t)i < p->n_owned && cs->inv_m[i] > 0.0)
                for (int k = 0; k < 3; k++) {
                    cs->dv[3 * (size_t)i + k] += v[3 * (q - a) + k] - p->v[3 * (size_t)i + k];
                    p->v[3 * (size_t)i + k] = v[3 * (q - a) + k];
                }
        }
        cs->zone_max = e - a > cs->zone_max ? e - a : cs->zone_max;
        a = e;
    }
    free(all), free(m), free(x), free(v);
}

/* The inverse masses of the points at the start of the step (0: pinned or prescribed now, by the body's
 * constraints at this time, decided from the rest position so that every copy agrees; 0 for the particles of
 * bodies that move as wholes, which this stage treats as moving obstacles). */
static void cc_inverse_masses(const shard_matter_ctx *c, shard_cloth_collide *cs)
{
    const shard_particles *p = c->ph->p;
    const shard_scene *sc = c->ph->scene;
    shard_reserve((void **)&cs->inv_m, &cs->cap_inv, p->n_local + 1, sizeof *cs->inv_m);
    for (size_t m = 0; m < cs->n_vlist; m++) {
        int32_t i = cs->vlist[m];
        if (i < 0)
            continue; /* an obstacle's vertex */
        const shard_body_def *bd = &sc->bodies[p->body[i]];
        uint32_t fl = 0;
        double vp[3];
        if (c->ph->own_contact[p->body[i]]) { /* bodies that move as wholes: kinematic here */
            cs->inv_m[i] = 0.0;
            continue;
        }
        if (bd->n_constraints > 0)
            shard_sample_constraints(bd, p->X + 3 * (size_t)i, p->x + 3 * (size_t)i, c->ph->t, vp, &fl);
        cs->inv_m[i] = (fl & SHARD_PF_PRESCRIBED) || !(p->mass[i] > 0.0) ? 0.0 : 1.0 / p->mass[i];
    }
}

int shard_cloth_collide_step(const shard_matter_ctx *c, const shard_collective *svc, shard_error *err)
{
    shard_cloth_state *st = c->state;
    shard_cloth_collide *cs = &st->collide;
    shard_particles *p = c->ph->p;
    double dt = c->ph->dt;
    svc->refresh(svc->impl); /* the ghosts' mean velocities */
    if (!cc_same_particles(c, cs))
        cc_elements(c, cs);
    cc_obstacles_at(c->ph->scene, cs, c->ph->t);
    /* The ghosts cover the motion of one step (contact_reach): the farthest move of an owned vertex. */
    double far[2] = {0.0, 0.0};
    for (size_t m = 0; m < cs->n_map; m++) {
        int32_t i = cs->map[m].local;
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
        if (cc_is_cloth(c, b))
            hmax = cc_max(hmax, cc_body(c, b)->thickness);
    cs->hmax = hmax, cs->margin = 2.0 * hmax;
    shard_reserve((void **)&cs->dv, &cs->cap_dv, 3 * p->n_owned + 3, sizeof *cs->dv);
    memset(cs->dv, 0, 3 * p->n_owned * sizeof *cs->dv);
    /* 1. proximity at the start of the step */
    cc_pass_candidates(c, cs, p, dt, hmax);
    cc_pass_boxes(cs, p, 0.0);
    cc_proximity(c, cs, dt);
    svc->refresh(svc->impl);
    /* 2. collisions, iterated; 3. impact zones */
    cs->n_zone = 0;
    int passes = 0, jacobi = (int)c->ph->scene->run.collision_passes;
    for (;; passes++) {
        cc_pass_candidates(c, cs, p, dt, hmax);
        int zones = passes >= jacobi;
        cc_pass_boxes(cs, p, dt);
        size_t n = cc_collisions(c, cs, dt, !zones);
        int any[1] = {n > 0};
        svc->max_ints(svc->impl, any, 1);
        if (!any[0])
            break;
        if (passes >= jacobi + SHARD_CLOTH_ZONE_PASSES) {
            cs->unresolved++;
            break;
        }
        cs->n_coll += n;
        if (zones) {
            size_t bytes = 0;
            int64_t *hit = svc->allgather(svc->impl, cs->hit, 4 * cs->n_hit * sizeof *cs->hit, &bytes);
            cc_zone_merge(cs, hit, bytes / (4 * sizeof *hit));
            free(hit);
            cc_zone_move(c, cs, svc);
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
    free(cs->map), free(cs->vlist), free(cs->vnext), free(cs->tri), free(cs->edge), free(cs->vbox), free(cs->pbox), free(cs->xb), free(cs->tbox), free(cs->ebox), free(cs->seen);
    free(cs->pairs), free(cs->rec), free(cs->hit), free(cs->inv_m), free(cs->dv);
    free(cs->zone_gid), free(cs->zone_parent);
    free(cs->ox), free(cs->ov), free(cs->orad), free(cs->oxb), free(cs->oobs), free(cs->otri), free(cs->oedge);
    shard_bvh_free(&cs->vbvh), shard_bvh_free(&cs->tbvh), shard_bvh_free(&cs->ebvh);
    memset(cs, 0, sizeof *cs);
}
