/* Cloth collisions over the ranks, the fail-safe (the stage: cloth_collide_stage.c): impact zones (Bridson,
 * Fedkiw & Anderson 2002).  The vertices of the pairs that still collide after the impulse passes join zones,
 * a union-find over global ids whose roots are the smallest ids, merged with every further collision; every
 * rank gathers the zones' vertices (mass, x, v) from their owners and moves every zone rigidly in global-id
 * order (shard_cc_zone_rigid), so every rank has the same zones and velocities.  A zone held by a pinned or
 * prescribed vertex, an obstacle's or a particle of a body that moves as a whole moves with it. */
#include "cloth/cloth_collide_stage.h"

#include "shard/sorted.h"

#include <stdlib.h>
#include <string.h>

static size_t shard_cc_zone_root(shard_cloth_collide *cs, size_t i)
{
    while (cs->zone_parent[i] != i) {
        cs->zone_parent[i] = cs->zone_parent[cs->zone_parent[i]];
        i = cs->zone_parent[i];
    }
    return i;
}

/* Merges the gathered colliding pairs (4 global ids each) into the zones. */
void shard_cc_zone_merge(shard_cloth_collide *cs, const int64_t *hit, size_t n_hit)
{
    /* the new ids, then every id, sorted and unique; parents carried over by id */
    size_t n_old = cs->n_zone, n_all = n_old + 4 * n_hit;
    int64_t *ids = shard_malloc((n_all + 1) * sizeof *ids);
    if (n_old)
        memcpy(ids, cs->zone_gid, n_old * sizeof *ids);
    if (n_hit)
        memcpy(ids + n_old, hit, 4 * n_hit * sizeof *ids);
    qsort(ids, n_all, sizeof *ids, shard_sorted_cmp_i64);
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
        size_t r = shard_cc_zone_root(cs, i);
        parent[j] = shard_sorted_lower_i64(ids, m, cs->zone_gid[r]);
    }
    free(cs->zone_gid), free(cs->zone_parent);
    cs->zone_gid = ids, cs->zone_parent = parent, cs->n_zone = m;
    for (size_t h = 0; h < n_hit; h++) {
        size_t r0 = shard_cc_zone_root(cs, shard_sorted_lower_i64(cs->zone_gid, cs->n_zone, hit[4 * h]));
        for (int q = 1; q < 4; q++) {
            size_t r = shard_cc_zone_root(cs, shard_sorted_lower_i64(cs->zone_gid, cs->n_zone, hit[4 * h + q]));
            if (r < r0)
                cs->zone_parent[r0] = r, r0 = r;
            else if (r > r0)
                cs->zone_parent[r] = r0;
        }
    }
}

/* A zone member as gathered from its owner. */
typedef struct shard_cc_member {
    int64_t gid, root;
    double m, inv, x[3], v[3];
} shard_cc_member;

static int shard_cc_member_cmp(const void *pa, const void *pb)
{
    const shard_cc_member *a = pa, *b = pb;
    if (a->root != b->root)
        return a->root < b->root ? -1 : 1;
    return (a->gid > b->gid) - (a->gid < b->gid);
}

/* The local index of global id g among the points (cloth vertices first), or -1. */
static int32_t shard_cc_find_point(const shard_cloth_collide *cs, const shard_particles *p, int64_t g)
{
    if (g < 0)
        return -1; /* an obstacle's vertex: nobody's */
    int32_t i = shard_gidmap_find(&cs->map, g);
    for (size_t m = cs->map.n; i < 0 && m < cs->n_vlist; m++)
        if (cs->vlist[m] >= 0 && p->gid[cs->vlist[m]] == g)
            i = cs->vlist[m];
    return i;
}

/* Every zone moves rigidly: gathers the members from their owners, computes each zone's motion in id order,
 * sets the owned members' velocities.  A zone holding pinned or prescribed vertices moves with the one of the
 * smallest id (a translation). */
void shard_cc_zone_move(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_collective *svc)
{
    shard_particles *p = c->ph->p;
    size_t n_mine = 0;
    shard_cc_member *mine = shard_malloc((cs->n_zone + 1) * sizeof *mine);
    for (size_t z = 0; z < cs->n_zone; z++) {
        int32_t i = shard_cc_find_point(cs, p, cs->zone_gid[z]);
        if (i < 0 || (size_t)i >= p->n_owned)
            continue;
        shard_cc_member *mb = &mine[n_mine++];
        mb->gid = cs->zone_gid[z], mb->root = cs->zone_gid[shard_cc_zone_root(cs, z)];
        mb->m = p->mass[i], mb->inv = cs->inv_m[i];
        memcpy(mb->x, p->x + 3 * (size_t)i, sizeof mb->x);
        memcpy(mb->v, p->v + 3 * (size_t)i, sizeof mb->v);
    }
    size_t bytes = 0;
    shard_cc_member *all = svc->allgather(svc->impl, mine, n_mine * sizeof *mine, &bytes);
    free(mine);
    size_t n_all = bytes / sizeof *all, n_obs = 0;
    for (size_t z = 0; z < cs->n_zone && cs->zone_gid[z] < 0; z++)
        n_obs++;
    if (n_obs) { /* the obstacles' vertices, which every rank knows: infinite mass, the zone moves with them */
        all = shard_realloc(all, (n_all + n_obs) * sizeof *all);
        for (size_t z = 0; z < n_obs; z++) {
            shard_cc_member *mb = &all[n_all++];
            int32_t i = (int32_t)cs->zone_gid[z];
            mb->gid = cs->zone_gid[z], mb->root = cs->zone_gid[shard_cc_zone_root(cs, z)];
            mb->m = 0.0, mb->inv = 0.0;
            memcpy(mb->x, shard_cc_x(cs, p, i), sizeof mb->x), memcpy(mb->v, shard_cc_v(cs, p, i), sizeof mb->v);
        }
    }
    qsort(all, n_all, sizeof *all, shard_cc_member_cmp);
    double *m = shard_malloc((n_all + 1) * sizeof *m), *x = shard_malloc((3 * n_all + 3) * sizeof *x);
    double *v = shard_malloc((3 * n_all + 3) * sizeof *v);
    for (size_t a = 0; a < n_all;) {
        size_t e = a;
        while (e < n_all && all[e].root == all[a].root)
            e++;
        const shard_cc_member *pin = NULL;
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
            int32_t i = shard_cc_find_point(cs, p, pin->gid);
            if (i >= 0 && (size_t)i < p->n_owned && c->ph->own_contact[p->body[i]]) {
                double J[3] = {0, 0, 0};
                for (size_t q = a; q < e; q++)
                    for (int k = 0; all[q].inv > 0.0 && k < 3; k++)
                        J[k] -= all[q].m * (v[3 * (q - a) + k] - all[q].v[k]);
                shard_cc_react(c, i, J);
            }
        }
        for (size_t q = a; q < e; q++) {
            int32_t i = shard_cc_find_point(cs, p, all[q].gid);
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
