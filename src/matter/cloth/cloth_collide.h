/* Cloth collisions (physics): the geometric kernels of Bridson, Fedkiw & Anderson 2002's collision handling,
 * a bounding-volume hierarchy for the broad phase and the rigid motion of an impact zone.  Every function is
 * MPI-free and works on the coordinates it is given; cloth_collide_stage.c runs the stage over the ranks.
 *
 * A contact is a "stencil" of four vertices with weights c[0..4): side A (weights > 0, summing to 1) against
 * side B (weights < 0, summing to -1), so that the relative position and velocity of the two closest points
 * are sum c_k x_k and sum c_k v_k, and the unit normal n points from B to A:
 *   point-triangle  vertex 0 is the point (c = 1), vertices 1..3 the triangle (c = -w_1, -w_2, -w_3, the
 *                   barycentric weights of the point's projection);
 *   edge-edge       vertices 0, 1 the first edge (c = 1 - a, a), 2, 3 the second (c = -(1 - b), -b).
 * An impulse of magnitude I along a direction e changes each vertex's velocity by c_k (1/m_k) I e, which
 * changes the relative velocity by (sum c_k^2 / m_k) I e and conserves momentum (the weights of each side sum
 * to one); vertices of infinite mass (pinned or prescribed) have 1/m = 0. */
#ifndef SHARD_CLOTH_COLLIDE_H
#define SHARD_CLOTH_COLLIDE_H

#include <stddef.h>
#include <stdint.h>

typedef struct shard_cc_stencil {
    double c[4]; /* weights (above) */
    double n[3]; /* unit normal from side B to side A */
    double gap;  /* distance between the closest points along n, m */
    double t;    /* collisions: the time of contact within the step, s */
} shard_cc_stencil;

/* ---- proximity (at the start of the step) ----
 * Point x0 and triangle (x1, x2, x3): 1 when the point is closer than h to the triangle's plane and its
 * projection lies in the triangle (barycentric weights >= -h / sqrt(2 area): a small overlap so that a point
 * over an edge is caught by both triangles or by the edge-edge test) and closer than 1.5 h to the triangle,
 * with the stencil filled. */
int shard_cc_pt_near(const double *x0, const double *x1, const double *x2, const double *x3, double h,
                     shard_cc_stencil *s);
/* A ball about x0 and triangle (x1, x2, x3): 1 when the triangle's closest point is nearer than h (the ball's
 * radius plus half the cloth's thickness), the normal along the line between the two (an obstacle's corner or
 * sphere, whose contact is with the nearest point of the triangle wherever that lies). */
int shard_cc_ball_near(const double *x0, const double *x1, const double *x2, const double *x3, double h,
                       shard_cc_stencil *s);
/* Segments (x0, x1) and (x2, x3): 1 when their closest points (interior or end) are closer than h. */
int shard_cc_ee_near(const double *x0, const double *x1, const double *x2, const double *x3, double h,
                     shard_cc_stencil *s);

/* ---- continuous collision detection over one step ----
 * Positions x[k] at the start and velocities v[k] (straight paths x + t v, t in [0, T]).  Returns 1 and the
 * stencil at the earliest time t in [0, T] at which the four points are coplanar (a root of the cubic
 * (x10(t) x x20(t)) . x30(t), as in Bridson, Fedkiw & Anderson 2002) and the point lies in the triangle / the
 * segments cross, within the distance tol; 0 when they never meet.  The normal is oriented from B to A as the
 * two sides stood at the start of the step (or, when they started in one plane, against their relative
 * velocity).
 * Round-off (docs/architecture.md, "Cloth collisions"): the cubic is split at the roots of its derivative,
 * every piece whose ends differ in sign is bisected to the last bit, and any piece end where |p| is within a
 * rounding bound of zero (a tangency, or four points moving in one plane) is a candidate too; a candidate is
 * a collision when the distance of the two closest points at that time is below tol, so a near miss is
 * reported (and gets an impulse) rather than lost. */
int shard_cc_pt_ccd(const double *const x[4], const double *const v[4], double T, double tol, shard_cc_stencil *s);
int shard_cc_ee_ccd(const double *const x[4], const double *const v[4], double T, double tol, shard_cc_stencil *s);

/* The real roots in [0, T] at which a cubic p(t) = a[0] + a[1] t + a[2] t^2 + a[3] t^3 may vanish, increasing
 * (at most 8: sign changes bisected, and near-zero piece ends, as above); eps the rounding bound of p. */
int shard_cc_cubic_candidates(const double a[4], double T, double eps, double *roots);

/* ---- impulses ----
 * The change dv[0..12) (3 per vertex) of a proximity response (Bridson 2002, sections 7.1-7.2): an inelastic
 * impulse that stops the approach, then a repulsion of min(dt k d (sum |c_k|/m_k), 0.1 d/dt - v_N) with
 * d = h - gap the overlap (at most a tenth of the overlap is undone per step), then Coulomb friction: the
 * relative tangential velocity is reduced by mu times the normal velocity change (to zero at most).
 * vrel_n0 reports the relative normal velocity before.  Returns 0 when nothing changes. */
int shard_cc_repel(const shard_cc_stencil *s, const double *const v[4], const double inv_m[4], double h, double k,
                   double mu, double dt, double dv[12]);
/* A collision response: the inelastic impulse that makes the relative normal velocity zero when the two sides
 * approach, with the same friction.  Returns 0 when they do not approach. */
int shard_cc_stop(const shard_cc_stencil *s, const double *const v[4], const double inv_m[4], double mu, double dv[12]);

/* ---- an impact zone (Provot 1997; Bridson 2002, section 7.4) ----
 * Vertices (masses m, positions x at the start of the step, velocities v) moved as one rigid body: the
 * velocities become v_c + w x (x - x_c) with the zone's momentum and angular momentum about its centre of
 * mass.  The linearised rotation x + t (w x r) is an invertible affine map at every t, so a zone that did not
 * intersect itself at the start does not during the step.  The sums run in the order given. */
void shard_cc_zone_rigid(size_t n, const double *m, const double *x, double *v);

/* ---- bounding-volume hierarchy over boxes (lo[3], hi[3] per item) ---- */
typedef struct shard_bvh_node {
    double lo[3], hi[3];
    int32_t left;         /* child index (the right child is left + 1), or -1 for a leaf */
    int32_t first, count; /* a leaf: items perm[first .. first + count) */
} shard_bvh_node;

typedef struct shard_bvh {
    shard_bvh_node *node;
    size_t n_nodes, cap_nodes;
    int32_t *perm;
    size_t n_items, cap_items;
    double built_cost; /* the sum of the internal nodes' surface areas when built */
    long builds, refits;
} shard_bvh;

/* Builds the tree over n boxes (box[6 i .. 6 i + 6): lo, hi): median splits along the widest axis of the
 * boxes' centres, leaves of at most 4. */
void shard_bvh_build(shard_bvh *t, const double *box, size_t n);
/* Refits the node boxes to moved items (same items); rebuilds instead when the tree has degraded (its
 * surface-area sum over twice the built one).  Returns 1 when it rebuilt. */
int shard_bvh_refit(shard_bvh *t, const double *box, size_t n);
/* The items whose boxes overlap q (lo[3], hi[3]) into *out (grown as needed); returns their number. */
size_t shard_bvh_query(const shard_bvh *t, const double *box, const double q[6], int32_t **out, size_t *cap);
/* Every pair of items (i of tree a, j of tree b) whose boxes overlap, by a simultaneous descent of the two
 * trees; with a == b (the same tree and boxes) every unordered pair i < j once.  fn(ctx, i, j) for each. */
void shard_bvh_pairs(const shard_bvh *a, const double *abox, const shard_bvh *b, const double *bbox,
                     void (*fn)(void *ctx, int32_t i, int32_t j), void *ctx);
void shard_bvh_free(shard_bvh *t);

#endif
