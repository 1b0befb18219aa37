/* Mass properties (core): mass, centre of mass and inertia tensor of solid shapes of uniform density, and the
 * principal frame of an inertia tensor.
 *
 * The module owns the closed forms for the analytic shapes (axis-aligned box, sphere, cylinder of any axis
 * direction), the surface integration of a closed triangle mesh, and the eigen-decomposition of a symmetric 3x3
 * tensor into principal moments and a right-handed body frame with a deterministic choice of signs and order.  It
 * reads no files (meshes come from mesh.h or the caller) and knows nothing of bodies, particles or ranks; the
 * rigid-body module turns its output into a body's state.
 *
 * Units: lengths in m, density in kg/m^3, mass in kg, inertia in kg m^2 (any consistent set works).  The inertia
 * tensor is the matrix I = integral rho (|r|^2 1 - r r^T) dV about the centre of mass, in world axes, row-major
 * double[9], symmetric (products of inertia carry their minus sign: I_xy = -integral rho x y dV).
 */
#ifndef SHARD_MASSPROPS_H
#define SHARD_MASSPROPS_H

#include <stdint.h>

typedef enum shard_massprops_status {
    SHARD_MASSPROPS_OK = 0,
    SHARD_MASSPROPS_BAD_INPUT,          /* a density, size or radius not > 0 or not finite; a box with min >= max;
                                         * a mesh with no triangles or an index outside [0, nv); a non-finite
                                         * tensor given to shard_massprops_principal */
    SHARD_MASSPROPS_NONPOSITIVE_VOLUME, /* a mesh whose signed volume is <= 0: inside out (clockwise triangles),
                                         * flat, or not closed */
} shard_massprops_status;

typedef struct shard_massprops {
    double volume;     /* m^3 */
    double mass;       /* kg */
    double com[3];     /* centre of mass, m, world */
    double inertia[9]; /* about com, world axes, kg m^2, row-major, symmetric */
} shard_massprops;

/* Relative width under which two principal moments count as equal in shard_massprops_principal: moments within
 * 1e-10 * (largest moment) of each other.  Rounding in a triangulated cube or sphere leaves its equal moments
 * about 1e-15 apart; 1e-10 is far above that and far below any physical asymmetry worth a distinct axis. */
#define SHARD_MASSPROPS_TIE_RTOL 1e-10

/* Local: a short name for a status ("ok", "bad input", "non-positive volume"), for messages. */
const char *shard_massprops_status_name(shard_massprops_status status);

/* Local: the axis-aligned box [lo, hi] (m) of density rho: mass rho abc, I = m/12 diag(b^2 + c^2, a^2 + c^2,
 * a^2 + b^2) with a, b, c the side lengths.  Fills *out and returns SHARD_MASSPROPS_OK, or BAD_INPUT (out
 * untouched) when rho or a side is not > 0. */
shard_massprops_status shard_massprops_box(double rho, const double lo[3], const double hi[3], shard_massprops *out);

/* Local: the ball of centre c and radius r: mass rho 4/3 pi r^3, I = 2/5 m r^2 1. */
shard_massprops_status shard_massprops_sphere(double rho, const double c[3], double r, shard_massprops *out);

/* Local: the solid circular cylinder whose end caps are centred at p0 and p1, of radius r; any axis direction.
 * With h = |p1 - p0| and a = (p1 - p0)/h: mass rho pi r^2 h, com the midpoint, and
 * I = I_perp (1 - a a^T) + I_axis a a^T with I_axis = m r^2 / 2 and I_perp = m (3 r^2 + h^2) / 12. */
shard_massprops_status shard_massprops_cylinder(double rho, const double p0[3], const double p1[3], double r,
                                                shard_massprops *out);

/* Local: a closed triangle mesh of density rho.  x holds nv vertices (x[3*i + k], m); tri holds nt triangles
 * (tri[3*t + j], indices into the vertices), counter-clockwise seen from outside, so that the normals
 * (x1 - x0) x (x2 - x0) point out.  The ten integrals of 1, x, y, z, x^2, y^2, z^2, xy, yz, zx over the solid
 * are summed over the triangles by the divergence theorem, with the closed forms of D. Eberly, "Polyhedral Mass
 * Properties (Revisited)", Geometric Tools, 2002 (a triangle-only restatement of B. Mirtich, "Fast and Accurate
 * Computation of Polyhedral Mass Properties", J. Graphics Tools 1(2), 1996).  Two choices of ours:
 *   - coordinates are taken relative to the centre of the vertices' bounding box, so a mesh far from the origin
 *     (1e6 m) loses no more than the rounding of its own vertex coordinates; the integrals about the origin
 *     would cancel catastrophically (the second moments grow as the square of the offset);
 *   - each integral is an exact sum (shard/xsum.h) of the triangles' terms, so the result does not depend on the
 *     order of the triangles (it does on the order of the vertices within a triangle, by rounding).
 * Returns BAD_INPUT for rho not > 0, nt == 0 or an index outside [0, nv), NONPOSITIVE_VOLUME when the volume is
 * not > 0 (the caller reports which mesh); *out is filled only on SHARD_MASSPROPS_OK.  Closedness is not checked:
 * an open mesh gives a volume that depends on the reference point.  No allocation. */
shard_massprops_status shard_massprops_mesh(double rho, const double *x, int64_t nv, const int64_t *tri, int64_t nt,
                                            shard_massprops *out);

/* Local: the principal moments and axes of a symmetric inertia tensor I (kg m^2, row-major; only the upper
 * triangle is read): I = R diag(moments) R^T with R a rotation (det +1) whose columns are the principal axes in
 * world coordinates, so R maps body coordinates to world, and q the same rotation as a unit quaternion (w, x, y,
 * z), canonical sign as in shard_quat_from_matrix.  Any of moments, R, q may be NULL.  The choice is
 * deterministic:
 *   - moments ascending;
 *   - each axis of a distinct moment (from cyclic Jacobi rotations, Golub & Van Loan, Matrix Computations, 4th
 *     ed., section 8.5) is signed so that its component of largest magnitude is positive (the first such
 *     component on a tie in magnitude); the third column is then the cross product of the first two, so the
 *     frame is right-handed and the third axis's own sign rule gives way;
 *   - moments within SHARD_MASSPROPS_TIE_RTOL of each other are tied (a symmetric top, a cube, a sphere), and a
 *     tied set of axes is not taken from the eigen-solver (any rotation within it would do, and the solver's
 *     choice jumps with rounding) but set as close to the world axes as possible: three tied moments give
 *     R = 1; two tied moments beside a distinct axis e give, as the first tied axis, the world axis least
 *     aligned with e (the lowest index on a tie) projected onto the plane normal to e and normalised, and as the
 *     second tied axis the one that makes the frame right-handed.  Reported moments are the solver's values,
 *     not averaged, so R diag(moments) R^T equals I to within the tie width.
 * Returns SHARD_MASSPROPS_OK, or BAD_INPUT for a non-finite entry. */
shard_massprops_status shard_massprops_principal(const double inertia[9], double moments[3], double R[9], double q[4]);

#endif
