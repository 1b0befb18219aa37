/* Collide (physics): contact points between two analytic shapes (sphere, box, cylinder, plane) for rigid bodies.
 *
 * The module owns narrow-phase geometry: given two posed shapes it returns up to SHARD_COLLIDE_MAX_POINTS contact
 * points, each with a normal, a depth and a feature id for warm starting.  It knows nothing of bodies, masses,
 * impulses or ranks; the rigid-body module turns the points into constraints, and pairs this module does not
 * handle (box-cylinder, cylinder-cylinder, plane-plane) are left to the surface particles of the bodies.  Nothing
 * here allocates or keeps state, so the result depends on the two shapes and the margin only.
 *
 * Conventions.  A shape's orientation R is row-major, its columns are the shape's axes in world coordinates (as in
 * rotation.h); a box's half extents lie along the columns, a cylinder's axis is local z (column 2).  The normal n
 * of a point is a unit vector from b to a: moving a along +n separates the shapes.  depth > 0 is an overlap,
 * depth < 0 a gap of -depth (a speculative point, reported only when -depth <= margin).  The point p lies midway
 * between the two surfaces: p = (point of a's surface + point of b's surface) / 2, the two points depth apart
 * along n, so shard_collide(a, b) and shard_collide(b, a) give the same points with opposite normals.
 *
 * Methods ("Ericson": C. Ericson, Real-Time Collision Detection, Morgan Kaufmann, 2005):
 *   - sphere-sphere, sphere-plane: closed forms; coincident centres take n = +z.
 *   - sphere-box: the centre in box coordinates is clamped to the box; the clamped point is the closest surface
 *     point (Ericson 5.1.4).  A centre inside the box is pushed out through the nearest face (lowest axis on a
 *     tie, + side when the centre is on the mid-plane).  Feature: which of the 27 Voronoi regions (3 per axis:
 *     below, within, above) holds the closest point; an inside centre takes its face's region.
 *   - sphere-cylinder: the same in cylinder coordinates (axial z, radial distance rho): side, cap, or rim edge;
 *     inside, out through the nearer of side and cap.  rho = 0 takes local x as the radial direction.
 *     Features 0 side, 1 top cap, 2 bottom cap, 3 top rim, 4 bottom rim.
 *   - box-plane: the 8 vertices; every vertex within margin of the plane, at most the 4 deepest (ties: lowest
 *     index), listed by vertex index.  Vertex k has local coordinates (+-hx, +-hy, +-hz), bit 0 of k set for +x,
 *     bit 1 for +y, bit 2 for +z; feature = k.
 *   - cylinder-plane: rim points of both caps.  When the axis is within SHARD_COLLIDE_CYL_FLAT (sin of the angle
 *     between the axis and the plane normal) of the normal, each cap gives 4 rim points at local +x, +y, -x, -y
 *     (features 4 cap + k, cap 0 top (+z), 1 bottom); otherwise each cap gives its deepest rim point (features
 *     8 + cap).  Points beyond the margin are dropped.  The 4 fixed points keep their ids while the cylinder
 *     rocks, at the cost of an underestimated depth of at most rc SHARD_COLLIDE_CYL_FLAT (1 - cos 45 deg).
 *   - box-box: separating-axis test over the 15 axes (3 + 3 face normals, 9 edge cross products; Gottschalk,
 *     Lin & Manocha, "OBBTree", SIGGRAPH 1996; Ericson 4.4.1).  The boxes are taken in a canonical order, the
 *     lower along the largest component of the centre difference first, so the result does not depend on the
 *     argument order (coincident centres excepted).  No contact when an axis separates by more than the margin.
 *     An edge axis wins only when its separation exceeds the best face axis's by 5% of that separation plus
 *     1e-3 of the smallest half extent, so resting boxes stay face contacts while they jitter.
 *       Face contact: the reference face is the best face of a or of b; within 1e-3 of the smallest half extent
 *     of each other, the larger face wins, then (equal faces) the lower box of the canonical order.  The incident
 *     face is the other box's face most anti-parallel to the reference normal; it is clipped against the 4 side
 *     planes of the reference face (Sutherland & Hodgman, Comm. ACM 17(1), 32, 1974), points beyond the margin
 *     are dropped, and more than 4 are reduced to 4: the deepest, the farthest from it, then the two that span
 *     the largest triangle with those on either side (ties: first in polygon order).  Feature = bit 13: the
 *     reference is b's face; bits 10-12: reference face; bits 7-9: incident face (face id = 2 axis + 1 for the
 *     - side); bits 0-5: an incident face vertex 0-3, or 4 + 4 e + s for the crossing of polygon edge e
 *     (incident edges 0-3, reference side planes 4-7) with side plane s.  A box resting on a box keeps its 4
 *     ids while it slides.
 *       Edge-edge contact: one point midway between the closest points of the two supporting edges (Ericson
 *     5.1.9), depth from the axis.  Feature = bit 14 | (edge of a) << 4 | (edge of b), edge id = 4 axis + the
 *     signs of the two other axes (bit 0: next axis +, bit 1: the one after +).  A face contact whose clipped
 *     polygon has no point within the margin falls back to the best edge axis.
 * Pairs in either order are computed in the order sphere, box, cylinder, plane and the normals negated.
 * Plane-plane and the pairs listed above as unhandled return 0.
 */
#ifndef SHARD_COLLIDE_H
#define SHARD_COLLIDE_H

#include <stdint.h>

#define SHARD_COLLIDE_MAX_POINTS 8

/* sin of the largest angle between a cylinder's axis and a plane's normal at which its caps count as parallel to
 * the plane (4 fixed rim points each); 0.01 rad, 0.57 deg. */
#define SHARD_COLLIDE_CYL_FLAT 0.01

typedef enum {
    SHARD_COLLIDE_SPHERE = 0,
    SHARD_COLLIDE_BOX = 1,
    SHARD_COLLIDE_CYLINDER = 2,
    SHARD_COLLIDE_PLANE = 3
} shard_collide_kind;

typedef struct shard_collide_shape {
    shard_collide_kind kind;
    double pos[3];      /* centre (plane: a point on it) */
    double R[9];        /* orientation, row-major, columns = shape axes in world (box half extents along the columns;
                         * cylinder axis = local z, i.e. column 2) */
    double half[3];     /* box half extents */
    double radius;      /* sphere, cylinder */
    double half_height; /* cylinder: half its length along local z */
    double normal[3];   /* plane: unit outward normal (the solid side is below the plane: points with
                         * (x-pos).normal < 0 are inside) */
} shard_collide_shape;

typedef struct shard_collide_point {
    double p[3];      /* the contact point, midway between the two surfaces */
    double n[3];      /* unit normal pointing from b to a (pushing a along +n separates them) */
    double depth;     /* > 0: overlap; < 0: separated by -depth (only reported when -depth <= margin) */
    uint32_t feature; /* an id of the features in contact that stays the same from step to step while the same
                       * features touch (used for warm starting); < 2^16 */
} shard_collide_point;

/* Local: contact points of a with b; fills out[0..n) and returns n (0..SHARD_COLLIDE_MAX_POINTS).  margin >= 0:
 * points whose separation is at most margin are reported too (speculative contacts, negative depth).  Unhandled
 * pairs, and a plane whose normal is zero or not finite, return 0.  out is the caller's. */
int shard_collide(const shard_collide_shape *a, const shard_collide_shape *b, double margin, shard_collide_point *out);

#endif
