/* Cloth collisions over the ranks, the candidate pairs (the stage: cloth_collide_stage.c): the local elements
 * (every cloth triangle and edge whose vertices this rank holds, the obstacles' corners, faces and edges), the
 * points near the cloth (its vertices, the particles of other kinds, the obstacles' vertices), their boxes over
 * the step and the trees over them (bvh.h), and the Verlet list of point-triangle and edge-edge pairs with an
 * owned vertex that a pass tests, kept while no point has moved farther than its margin.  Which superset of the
 * touching pairs a rank holds changes no result.  Local: no exchange. */
#include "cloth/cloth_collide_stage.h"

#include "shard/sample.h"
#include "shard/sorted.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The obstacles' vertices, the boxes' faces and edges (once: the scene's obstacles do not change).  Planes
 * have none: a triangle meets a half-space only where one of its vertices does, which the vertices' contact
 * (contact.h) keeps out; a sphere or a box can pass between a cloth's vertices, which these pairs stop. */
static void shard_cc_obstacle_elements(const shard_scene *sc, shard_cloth_collide *cs)
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
void shard_cc_obstacles_at(const shard_scene *sc, shard_cloth_collide *cs, double t)
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

/* The local cloth elements: every triangle and edge whose vertices this rank holds (rebuilt when the local
 * particles change). */
void shard_cc_elements(const shard_matter_ctx *c, shard_cloth_collide *cs)
{
    const shard_particles *p = c->ph->p;
    const int64_t *bf = c->ph->body_first;
    shard_gidmap *map = &cs->map; /* the cloth vertices only: filled here, then sorted as its build does */
    map->n = 0;
    shard_reserve((void **)&map->at, &map->cap, p->n_local + 1, sizeof *map->at);
    for (size_t i = 0; i < p->n_local; i++)
        if (shard_cc_is_cloth(c, p->body[i]))
            map->at[map->n++] = (shard_gidmap_entry){.gid = p->gid[i], .local = (int32_t)i};
    qsort(map->at, map->n, sizeof *map->at, shard_sorted_cmp_i64);
    cs->n_tri = 0;
    size_t n_e = 0;
    int64_t *ekeys = NULL; /* gid pairs */
    size_t cap_e = 0;
    for (size_t m = 0; m < map->n; m++) {
        int32_t i = map->at[m].local;
        int32_t b = p->body[i];
        const shard_cloth_params *cp = shard_cc_body(c, b);
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
            int32_t l[3] = {i, shard_gidmap_find(map, bf[b] + tv[1]), shard_gidmap_find(map, bf[b] + tv[2])};
            if (l[1] < 0 || l[2] < 0)
                continue;
            shard_reserve((void **)&cs->tri, &cs->cap_tri, 3 * (cs->n_tri + 1), sizeof *cs->tri);
            memcpy(cs->tri + 3 * cs->n_tri, l, sizeof l);
            cs->n_tri++;
        }
    }
    if (n_e > 1)
        qsort(ekeys, n_e, 2 * sizeof *ekeys, shard_sorted_cmp_i64_pair);
    cs->n_edge = 0;
    for (size_t e = 0; e < n_e; e++) {
        if (e > 0 && ekeys[2 * e] == ekeys[2 * e - 2] && ekeys[2 * e + 1] == ekeys[2 * e - 1])
            continue;
        int32_t a = shard_gidmap_find(map, ekeys[2 * e]), o = shard_gidmap_find(map, ekeys[2 * e + 1]);
        if (a < 0 || o < 0)
            continue;
        shard_reserve((void **)&cs->edge, &cs->cap_edge, 2 * (cs->n_edge + 1), sizeof *cs->edge);
        cs->edge[2 * cs->n_edge] = a, cs->edge[2 * cs->n_edge + 1] = o;
        cs->n_edge++;
    }
    free(ekeys);
    if (!cs->obuilt)
        shard_cc_obstacle_elements(c->ph->scene, cs);
    if (map->n > 0) { /* the obstacles' faces and edges meet the cloth's points and edges */
        shard_reserve((void **)&cs->tri, &cs->cap_tri, 3 * (cs->n_tri + cs->n_otri + 1), sizeof *cs->tri);
        shard_reserve((void **)&cs->edge, &cs->cap_edge, 2 * (cs->n_edge + cs->n_oedge + 1), sizeof *cs->edge);
        memcpy(cs->tri + 3 * cs->n_tri, cs->otri, 3 * cs->n_otri * sizeof *cs->tri);
        memcpy(cs->edge + 2 * cs->n_edge, cs->oedge, 2 * cs->n_oedge * sizeof *cs->edge);
        cs->n_tri += cs->n_otri, cs->n_edge += cs->n_oedge;
    }
    shard_reserve((void **)&cs->vbox, &cs->cap_vbox, 6 * (map->n + 1), sizeof *cs->vbox);
    shard_reserve((void **)&cs->tbox, &cs->cap_tbox, 6 * (cs->n_tri + 1), sizeof *cs->tbox);
    shard_reserve((void **)&cs->ebox, &cs->cap_ebox, 6 * (cs->n_edge + 1), sizeof *cs->ebox);
    cs->fresh = 1;
}

/* Whether the local particles are the ones the elements were built for. */
int shard_cc_same_particles(const shard_matter_ctx *c, shard_cloth_collide *cs)
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
static void shard_cc_boxes(const shard_cloth_collide *cs, const shard_particles *p, const int32_t *el, size_t n, int nv,
                           double dt, double pad, double *box)
{
    for (size_t e = 0; e < n; e++) {
        double *b = box + 6 * e;
        for (int k = 0; k < 3; k++)
            b[k] = INFINITY, b[3 + k] = -INFINITY;
        for (int q = 0; q < nv; q++) {
            const double *x = shard_cc_x(cs, p, el[nv * e + q]), *v = shard_cc_v(cs, p, el[nv * e + q]);
            for (int k = 0; k < 3; k++) {
                double y = x[k] + dt * v[k];
                b[k] = shard_cc_min(b[k], shard_cc_min(x[k], y) - pad);
                b[3 + k] = shard_cc_max(b[3 + k], shard_cc_max(x[k], y) + pad);
            }
        }
    }
}

/* The contact radius of a particle of a body that is not a cloth (contact.h: half its spacing). */
static double shard_cc_point_radius(const shard_scene *sc, int32_t b) { return 0.5 * sc->bodies[b].spacing; }

/* A point's reach beyond itself: an obstacle vertex's radius, a cloth vertex's half thickness, another kind's
 * contact radius; a pair's thickness h is the sum of its two sides'. */
double shard_cc_half(const shard_matter_ctx *c, const shard_cloth_collide *cs, int32_t i)
{
    if (i < 0)
        return cs->orad[-1 - i];
    int32_t b = c->ph->p->body[i];
    return shard_cc_is_cloth(c, b) ? 0.5 * shard_cc_body(c, b)->thickness : shard_cc_point_radius(c->ph->scene, b);
}

/* The points' boxes (cloth vertices in map order, then the particles of other kinds near the cloth). */
static void shard_cc_vertex_boxes(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p,
                                  double dt, double pad)
{
    for (size_t m = 0; m < cs->n_vlist; m++) {
        const double *x = shard_cc_x(cs, p, cs->vlist[m]), *v = shard_cc_v(cs, p, cs->vlist[m]);
        double *q = cs->vbox + 6 * m;
        /* a particle of another kind or an obstacle's vertex reaches its radius farther */
        double r = m < cs->map.n ? pad : pad + 1.5 * shard_cc_half(c, cs, cs->vlist[m]) + 0.25 * cs->hmax;
        for (int k = 0; k < 3; k++) {
            double y = x[k] + dt * v[k];
            q[k] = shard_cc_min(x[k], y) - r, q[3 + k] = shard_cc_max(x[k], y) + r;
        }
    }
}

/* The three trees over the elements' boxes over the step (start and end positions), each grown by pad. */
static void shard_cc_trees(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p, double dt,
                           double pad)
{
    shard_cc_vertex_boxes(c, cs, p, dt, pad);
    shard_cc_boxes(cs, p, cs->tri, cs->n_tri, 3, dt, pad, cs->tbox);
    shard_cc_boxes(cs, p, cs->edge, cs->n_edge, 2, dt, pad, cs->ebox);
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

typedef struct shard_cc_walk {
    shard_cloth_collide *cs;
    const shard_particles *p;
} shard_cc_walk;

static void shard_cc_add_pair(shard_cloth_collide *cs, shard_cc_pair pr)
{
    shard_reserve((void **)&cs->pairs, &cs->cap_pairs, cs->n_pairs + 1, sizeof *cs->pairs);
    cs->pairs[cs->n_pairs++] = pr;
}

static void shard_cc_pt_found(void *ctx, int32_t m, int32_t t)
{
    shard_cc_walk *w = ctx;
    int32_t i = w->cs->vlist[m];
    const int32_t *tv = w->cs->tri + 3 * (size_t)t;
    size_t no = w->p->n_owned;
    if (tv[0] == i || tv[1] == i || tv[2] == i)
        return;
    /* (negative indices, the obstacles' vertices, are nobody's) */
    if ((size_t)i >= no && (size_t)tv[0] >= no && (size_t)tv[1] >= no && (size_t)tv[2] >= no)
        return;
    int cloth_point = (size_t)m < w->cs->map.n;
    if (!cloth_point && tv[0] < 0)
        return; /* an obstacle's face meets the cloth's points only */
    shard_cc_add_pair(w->cs, (shard_cc_pair){cloth_point ? 0 : i < 0 ? 3 : 2, {i, tv[0], tv[1], tv[2]}, m, t});
}

static void shard_cc_ee_found(void *ctx, int32_t e, int32_t f)
{
    shard_cc_walk *w = ctx;
    const int32_t *a = w->cs->edge + 2 * (size_t)e, *b = w->cs->edge + 2 * (size_t)f;
    const shard_particles *p = w->p;
    size_t no = p->n_owned;
    if (a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1])
        return;
    if ((size_t)a[0] >= no && (size_t)a[1] >= no && (size_t)b[0] >= no && (size_t)b[1] >= no)
        return; /* (this also drops two obstacles' edges) */
    /* the edge of the smaller global ids first */
    int64_t ga0 = shard_cc_gid(p, a[0]), gb0 = shard_cc_gid(p, b[0]);
    if (ga0 > gb0 || (ga0 == gb0 && shard_cc_gid(p, a[1]) > shard_cc_gid(p, b[1]))) {
        const int32_t *tmp = a;
        a = b, b = tmp;
        int32_t t = e;
        e = f, f = t;
    }
    shard_cc_add_pair(w->cs, (shard_cc_pair){1, {a[0], a[1], b[0], b[1]}, e, f});
}

/* Whether a point's path over the step, from x to x + dt v, comes within pad of the box [lo, hi]. */
static int shard_cc_path_near(const double x[3], const double v[3], double dt, const double lo[3], const double hi[3],
                              double pad)
{
    for (int k = 0; k < 3; k++) {
        double y = x[k] + dt * v[k];
        if (shard_cc_min(x[k], y) > hi[k] + pad || shard_cc_max(x[k], y) < lo[k] - pad)
            return 0;
    }
    return 1;
}

/* The n points' start and end positions over the step, 6 per point (the list's build, for shard_cc_paths_within). */
static void shard_cc_path_ends(const double *x, const double *v, size_t n, double dt, double *ends)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            ends[6 * i + k] = x[3 * i + k], ends[6 * i + 3 + k] = x[3 * i + k] + dt * v[3 * i + k];
}

/* Whether each of the n points' start and end positions is within margin of those recorded in ends. */
static int shard_cc_paths_within(const double *x, const double *v, size_t n, double dt, const double *ends,
                                 double margin)
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
static void shard_cc_points(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p, double dt)
{
    const shard_scene *sc = c->ph->scene;
    /* the new list goes into the spare buffer, then the two swap (the old one says whether it changed) */
    shard_reserve((void **)&cs->vnext, &cs->cap_vnext, p->n_local + cs->n_ov + 1, sizeof *cs->vnext);
    int32_t *next = cs->vnext;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t m = 0; m < cs->map.n; m++) {
        int32_t i = cs->map.at[m].local;
        next[m] = i;
        for (int k = 0; k < 3; k++) {
            double x = p->x[3 * (size_t)i + k], y = x + dt * p->v[3 * (size_t)i + k];
            lo[k] = shard_cc_min(lo[k], shard_cc_min(x, y)), hi[k] = shard_cc_max(hi[k], shard_cc_max(x, y));
        }
    }
    size_t n = cs->map.n;
    for (size_t i = 0; i < p->n_local && cs->map.n > 0; i++) {
        if (shard_cc_is_cloth(c, p->body[i]))
            continue;
        double pad = 1.5 * shard_cc_point_radius(sc, p->body[i]) + 2.0 * (cs->hmax + cs->margin);
        if (shard_cc_path_near(p->x + 3 * i, p->v + 3 * i, dt, lo, hi, pad))
            next[n++] = (int32_t)i;
    }
    for (size_t k = 0; k < cs->n_ov && cs->map.n > 0; k++) {
        double pad = 1.5 * cs->orad[k] + 2.0 * (cs->hmax + cs->margin);
        if (shard_cc_path_near(cs->ox + 3 * k, cs->ov + 3 * k, dt, lo, hi, pad))
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
 * at the build (shard_cc_list_valid).  Which superset a rank holds does not change any result. */
static void shard_cc_candidates(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p, double dt,
                                double hmax)
{
    shard_cc_points(c, cs, p, dt);
    shard_cc_trees(c, cs, p, dt, 0.5 * hmax + cs->margin);
    cs->n_pairs = 0;
    shard_cc_walk w = {cs, p};
    shard_bvh_pairs(&cs->vbvh, cs->vbox, &cs->tbvh, cs->tbox, shard_cc_pt_found, &w);
    shard_bvh_pairs(&cs->ebvh, cs->ebox, &cs->ebvh, cs->ebox, shard_cc_ee_found, &w);
    shard_reserve((void **)&cs->xb, &cs->cap_xb, 6 * (p->n_local + 1), sizeof *cs->xb);
    shard_cc_path_ends(p->x, p->v, p->n_local, dt, cs->xb);
    shard_cc_path_ends(cs->ox, cs->ov, cs->n_ov, dt, cs->oxb);
    cs->lists++;
}

/* Whether every local particle's start and end positions are within the margin of those at the list's build
 * (the particles of other kinds too: one may have come near the cloth). */
static int shard_cc_list_valid(const shard_cloth_collide *cs, const shard_particles *p, double dt)
{
    return shard_cc_paths_within(p->x, p->v, p->n_local, dt, cs->xb, cs->margin) &&
           shard_cc_paths_within(cs->ox, cs->ov, cs->n_ov, dt, cs->oxb, cs->margin); /* (a moving obstacle) */
}

/* The candidates for a pass (rebuilt when they no longer cover the motion). */
static void shard_cc_inverse_masses(const shard_matter_ctx *c, shard_cloth_collide *cs);

void shard_cc_pass_candidates(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p, double dt,
                              double hmax)
{
    if (cs->fresh || !shard_cc_list_valid(cs, p, dt)) {
        shard_cc_candidates(c, cs, p, dt, hmax);
        cs->inv_step = 0;
    }
    if (cs->inv_step != c->ph->step + 1) {
        shard_cc_inverse_masses(c, cs);
        cs->inv_step = c->ph->step + 1;
    }
}

/* The current boxes of the points, triangles and edges for a pass (over the step when dt > 0). */
void shard_cc_pass_boxes(shard_cloth_collide *cs, const shard_particles *p, double dt)
{
    shard_reserve((void **)&cs->pbox, &cs->cap_pbox, 6 * (cs->n_vlist + cs->n_tri + cs->n_edge + 1), sizeof *cs->pbox);
    double *pb = cs->pbox, *tb = pb + 6 * cs->n_vlist, *eb = tb + 6 * cs->n_tri;
    shard_cc_boxes(cs, p, cs->vlist, cs->n_vlist, 1, dt, 0.0, pb);
    shard_cc_boxes(cs, p, cs->tri, cs->n_tri, 3, dt, 0.0, tb);
    shard_cc_boxes(cs, p, cs->edge, cs->n_edge, 2, dt, 0.0, eb);
}

/* Whether the current boxes of a pair's two sides come within pad of each other. */
int shard_cc_boxes_meet(const shard_cloth_collide *cs, const shard_cc_pair *pr, double pad)
{
    const double *pb = cs->pbox, *tb = pb + 6 * cs->n_vlist, *eb = tb + 6 * cs->n_tri;
    const double *A = pr->kind == 1 ? eb + 6 * (size_t)pr->a : pb + 6 * (size_t)pr->a;
    const double *B = pr->kind == 1 ? eb + 6 * (size_t)pr->b : tb + 6 * (size_t)pr->b;
    for (int k = 0; k < 3; k++)
        if (A[k] > B[3 + k] + pad || B[k] > A[3 + k] + pad)
            return 0;
    return 1;
}

/* The inverse masses of the points at the start of the step (0: pinned or prescribed now, by the body's
 * constraints at this time, decided from the rest position so that every copy agrees; 0 for the particles of
 * bodies that move as wholes, which this stage treats as moving obstacles). */
static void shard_cc_inverse_masses(const shard_matter_ctx *c, shard_cloth_collide *cs)
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
