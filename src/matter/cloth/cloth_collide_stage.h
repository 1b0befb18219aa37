/* Private to the cloth collision stage (cloth_collide_stage.c: the hook and its passes; cloth_collide_pairs.c:
 * the local elements and their candidate pairs; cloth_collide_zones.c: the impact zones): the candidate pairs,
 * the velocity changes they record, the points of the stage and the steps each file gives the others.  MPI-free:
 * the exchanges go through the driver's collective services (matter.h). */
#ifndef SHARD_MATTER_CLOTH_COLLIDE_STAGE_H
#define SHARD_MATTER_CLOTH_COLLIDE_STAGE_H

#include "cloth/cloth.h"
#include "cloth/cloth_collide.h"
#include "cloth/cloth_impl.h"
#include "shard/matter.h"

/* min and max without libm's NaN rules (the arguments are finite here), so that they inline */
static inline double shard_cc_min(double a, double b) { return a < b ? a : b; }
static inline double shard_cc_max(double a, double b) { return a > b ? a : b; }

/* A candidate pair: its kind, its vertices and its two sides. */
typedef struct shard_cc_pair {
    int32_t kind; /* 0 point-triangle, 1 edge-edge, 2 a particle of another kind and a triangle,
                   * 3 an obstacle's corner or sphere and a triangle */
    int32_t v[4]; /* local indices, in the stencil's order */
    int32_t a, b; /* its two sides: point (vlist index) and triangle, or the two edges */
} shard_cc_pair;

/* A velocity change of an owned vertex from one pair, with the pair's global key. */
typedef struct shard_cc_rec {
    int32_t vertex;
    int32_t kind;
    int32_t other; /* the pair's particle of a body that moves as a whole (its reaction), or -1 */
    int64_t key[4];
    double dv[3];
} shard_cc_rec;

/* A body's cloth constants (zero for a body of another kind), and whether it is a cloth. */
static inline const shard_cloth_params *shard_cc_body(const shard_matter_ctx *c, int32_t b)
{
    return (const shard_cloth_params *)((const char *)c->bodies + (size_t)b * sizeof(shard_cloth_params));
}

static inline int shard_cc_is_cloth(const shard_matter_ctx *c, int32_t b)
{
    return shard_cc_body(c, b)->thickness > 0.0;
}

/* A point of the stage: a local particle (i >= 0) or an obstacle's vertex (i = -1 - k, global id i). */
static inline const double *shard_cc_x(const shard_cloth_collide *cs, const shard_particles *p, int32_t i)
{
    return i >= 0 ? p->x + 3 * (size_t)i : cs->ox + 3 * (size_t)(-1 - i);
}
static inline const double *shard_cc_v(const shard_cloth_collide *cs, const shard_particles *p, int32_t i)
{
    return i >= 0 ? p->v + 3 * (size_t)i : cs->ov + 3 * (size_t)(-1 - i);
}
static inline int64_t shard_cc_gid(const shard_particles *p, int32_t i) { return i >= 0 ? p->gid[i] : (int64_t)i; }

/* ---- cloth_collide_pairs.c ---- */

/* The obstacles' vertices at time t (they move with their constant velocities). */
void shard_cc_obstacles_at(const shard_scene *sc, shard_cloth_collide *cs, double t);
/* The local cloth elements: every triangle and edge whose vertices this rank holds, and the cloth vertices by
 * global id (cs->map), rebuilt when the local particles change. */
void shard_cc_elements(const shard_matter_ctx *c, shard_cloth_collide *cs);
/* Whether the local particles are the ones the elements were built for (and, when not, remembers them). */
int shard_cc_same_particles(const shard_matter_ctx *c, shard_cloth_collide *cs);
/* A point's reach beyond itself (an obstacle vertex's radius, a cloth vertex's half thickness, another kind's
 * contact radius); a pair's thickness is the sum of its two sides'. */
double shard_cc_half(const shard_matter_ctx *c, const shard_cloth_collide *cs, int32_t i);
/* The candidate pairs for a pass (rebuilt when they no longer cover the motion) and the points' inverse masses
 * of the step. */
void shard_cc_pass_candidates(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_particles *p, double dt,
                              double hmax);
/* The current boxes of the points, triangles and edges for a pass (over the step when dt > 0). */
void shard_cc_pass_boxes(shard_cloth_collide *cs, const shard_particles *p, double dt);
/* Whether the current boxes of a pair's two sides come within pad of each other. */
int shard_cc_boxes_meet(const shard_cloth_collide *cs, const shard_cc_pair *pr, double pad);

/* ---- cloth_collide_stage.c ---- */

/* Records the reaction J to a change of the cloth's momentum on particle i of a body that moves as a whole. */
void shard_cc_react(const shard_matter_ctx *c, int32_t i, const double J[3]);

/* ---- cloth_collide_zones.c ---- */

/* Merges the gathered colliding pairs (4 global ids each) into the zones. */
void shard_cc_zone_merge(shard_cloth_collide *cs, const int64_t *hit, size_t n_hit);
/* Every zone moves rigidly (collective). */
void shard_cc_zone_move(const shard_matter_ctx *c, shard_cloth_collide *cs, const shard_collective *svc);

#endif
