/* Private to the cloth module (cloth_module.c and its collision stage, cloth_collide_stage.h): its state on one
 * rank. */
#ifndef SHARD_MATTER_CLOTH_IMPL_H
#define SHARD_MATTER_CLOTH_IMPL_H

#include "cloth/cloth.h"
#include "cloth/cloth_collide.h"
#include "shard/matter.h"
#include "shard/sorted.h"

/* The keys of a cloth body (its shard_body_def.kind_def) and the module's section `cloth` (shard_matter_keys). */
typedef struct shard_cloth_def {
    double thickness; /* m, > 0 (required) */
    double bending;   /* bending stiffness D, N m, >= 0, or -1 when not given (the plate's E t^3 / (12 (1 - nu^2))) */
} shard_cloth_def;
enum { SHARD_CLOTH_UNRESOLVED_STOP = 0, SHARD_CLOTH_UNRESOLVED_CONTINUE = 1 };
typedef struct shard_cloth_settings {
    long collision_passes; /* impulse passes of the collision stage before impact zones take over, >= 0 (default 8) */
    int unresolved;        /* a step whose collisions the impact zones leave unresolved: SHARD_CLOTH_UNRESOLVED_STOP
                            * (default: the run stops, exit 4, naming the step and a pair) or _CONTINUE (counted) */
} shard_cloth_settings;
/* The scene's `cloth` section as read (its defaults when the scene has none). */
const shard_cloth_settings *shard_cloth_settings_of(const shard_scene *sc);

/* The module's block rows: the collision stage's force on each vertex over the last step (N; state, so it
 * travels with its particle and is in checkpoints: output after a restart is the same). */
enum { SHARD_CLOTH_CONTACT = 0, SHARD_CLOTH_N_ROWS };

typedef struct shard_cloth_tri_el {
    int32_t v[3]; /* local indices */
    int32_t body;
    shard_cloth_tri rest;
} shard_cloth_tri_el;

typedef struct shard_cloth_hinge_el {
    int32_t v[4];
    int32_t body;
    shard_cloth_hinge_rest rest;
} shard_cloth_hinge_el;

struct shard_cc_pair;
struct shard_cc_rec;

/* The collision stage's elements and scratch (cloth_collide_stage.h). */
typedef struct shard_cloth_collide {
    /* the local particles the elements were built for */
    int64_t *seen;
    size_t n_seen, owned_seen, cap_seen;
    shard_gidmap map;    /* the local cloth vertices by global id */
    int32_t *tri, *edge; /* local triangles (3 local indices) and edges (2, the smaller global id first) */
    size_t n_tri, cap_tri, n_edge, cap_edge;
    int32_t *vlist; /* the points: the cloth vertices (map order), then particles of other kinds near */
    size_t n_vlist, cap_vlist;
    int32_t *vnext; /* the spare buffer the next list is built in */
    size_t cap_vnext;
    int vlist_changed;
    double *vbox, *tbox, *ebox; /* boxes of the points, triangles and edges */
    double *pbox;               /* a pass's current boxes: points, then triangles, then edges */
    size_t cap_pbox;
    size_t cap_vbox, cap_tbox, cap_ebox;
    shard_bvh vbvh, tbvh, ebvh;
    int fresh;  /* the elements changed: the trees are built anew */
    double *xb; /* per local particle: start and end positions at the list's build */
    size_t cap_xb;
    double hmax, margin; /* the largest thickness; the candidate list's margin (m) */
    long lists;          /* candidate lists built */
    double *inv_m;       /* per local particle (set at the points) */
    double *dv;          /* per owned particle: the stage's velocity change this step (3 each) */
    size_t cap_dv;
    long inv_step; /* the step they were set for, + 1 (0: none) */
    size_t cap_inv;
    struct shard_cc_pair *pairs;
    size_t n_pairs, cap_pairs;
    struct shard_cc_rec *rec;
    size_t n_rec, cap_rec;
    int64_t *hit; /* this pass's colliding pairs, 4 global ids each */
    size_t n_hit, cap_hit;
    /* the obstacles' vertices (sphere centres, box corners): local index and global id -(1 + k) for vertex k,
     * with the boxes' triangles and edges appended to tri and edge in those indices */
    double *ox, *ov, *orad; /* positions at the start of the step, velocities, radii (a sphere's, or 0) */
    double *oxb;            /* start and end positions at the candidate list's build */
    int32_t *oobs;          /* their obstacle */
    size_t n_ov;
    int32_t *otri, *oedge; /* the boxes' faces (two triangles each) and edges */
    size_t n_otri, n_oedge;
    int obuilt;
    int64_t *zone_gid; /* impact zones of this step: members by id, parents (roots: smallest ids) */
    size_t *zone_parent;
    size_t n_zone;
    /* counters for the end report */
    long steps, zone_steps, unresolved;
    long long n_prox, n_coll;
    size_t zone_max;
    int max_passes;
} shard_cloth_collide;

/* The rank's elements (rebuilt by prepare after every distribution). */
typedef struct shard_cloth_state {
    shard_cloth_tri_el *tri;
    size_t n_tri, cap_tri;
    shard_cloth_hinge_el *hinge;
    size_t n_hinge, cap_hinge;
    int32_t *first_owned; /* per element, triangles then hinges: 1 when its vertex 0 is owned here
                           * (the element's energy and output cell are counted there) */
    size_t cap_first;
    shard_cloth_collide collide;
} shard_cloth_state;

/* The collide hook (matter.h) and the report's line. */
int shard_cloth_collide_step(const shard_matter_ctx *c, const shard_collective *svc, shard_error *err);
void shard_cloth_collide_report(const shard_matter_ctx *c, char *buf, size_t len);
/* "cloth unresolved N steps" once a step was left unresolved (cloth.unresolved: continue), else empty. */
void shard_cloth_collide_diag_line(const shard_matter_ctx *c, char *buf, size_t len);
void shard_cloth_collide_free(shard_cloth_collide *cs);

#endif
