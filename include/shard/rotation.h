/* Rotation (core): unit quaternions and 3x3 rotation matrices for rigid bodies, and the torque-free rotation step.
 *
 * The module owns the algebra of orientations (Hamilton product, conjugate, rotation of a vector, conversion
 * between a unit quaternion and a rotation matrix) and the free-rotor step of Dullweber, Leimkuhler & McLachlan
 * (J. Chem. Phys. 107, 5840, 1997; "DLM" below), which advances an orientation over a time step with no torque.
 * It knows nothing of bodies, contacts or ranks: the rigid-body module keeps the state (orientation q, world
 * angular momentum L) and applies torques as kicks of L around this step.
 *
 * Conventions.  A quaternion is double[4] = (w, x, y, z), w the scalar part.  An orientation q maps body
 * coordinates to world coordinates: v_world = R(q) v_body.  Matrices are double[9], row-major, R[3*i + j]; the
 * columns of R are the body axes written in world coordinates.  Angles are in radians, right-handed.  Every
 * function here accepts outputs that alias inputs, and none allocates.
 */
#ifndef SHARD_ROTATION_H
#define SHARD_ROTATION_H

/* Local: out = a (x) b, the Hamilton product (rotation b first, then a).  out may alias a or b. */
void shard_quat_mul(const double a[4], const double b[4], double out[4]);

/* Local: out = (w, -x, -y, -z), the inverse rotation of a unit quaternion. */
void shard_quat_conj(const double q[4], double out[4]);

/* Local: q /= |q| and returns the norm before; a zero or non-finite q becomes the identity (1, 0, 0, 0) and the
 * function returns 0 (or the non-finite norm), so that a caller can report it. */
double shard_quat_normalise(double q[4]);

/* Local: the unit quaternion of a rotation by `angle` (rad) about `axis` (any non-zero length; it is normalised).
 * A zero axis gives the identity. */
void shard_quat_from_axis_angle(const double axis[3], double angle, double q[4]);

/* Local: out = R(q) v for a unit q (v' = v + w t + u x t with u = (x, y, z), t = 2 u x v; no matrix is built).
 * out may alias v.  A non-unit q scales the result by |q|^2. */
void shard_quat_rotate(const double q[4], const double v[3], double out[3]);

/* Local: out = R(q)^T v, the world vector v in body coordinates. */
void shard_quat_rotate_inv(const double q[4], const double v[3], double out[3]);

/* Local: the rotation matrix of q.  The factor 2/|q|^2 makes R orthogonal for any non-zero q (the rotation of
 * q/|q|), so a quaternion that drifted off unit length still gives a rotation. */
void shard_quat_to_matrix(const double q[4], double R[9]);

/* Local: the unit quaternion of a rotation matrix (Shepperd, J. Guidance and Control 1(3), 223, 1978: the
 * largest of |w|, |x|, |y|, |z| is taken from the diagonal, the others from sums and differences of off-diagonal
 * pairs, so no division is by a small number).  q and -q are the same rotation; the result is made unique by
 * w > 0, or, when w == 0, by the first non-zero of x, y, z being positive.  R should be orthogonal with det +1
 * to rounding; the result is normalised whatever R is. */
void shard_quat_from_matrix(const double R[9], double q[4]);

/* Local: C = A B for 3x3 row-major matrices.  C may alias A or B. */
void shard_mat3_mul(const double A[9], const double B[9], double C[9]);

/* Local: out = A v.  out may alias v. */
void shard_mat3_mul_vec(const double A[9], const double v[3], double out[3]);

/* Local: out = A^T v.  out may alias v. */
void shard_mat3_tmul_vec(const double A[9], const double v[3], double out[3]);

/* Local: the world angular velocity (rad/s) of a body with orientation q (body -> world), world angular momentum
 * L (kg m^2/s) and principal moments inertia[3] (kg m^2, > 0, along the body axes):
 * omega = R diag(1/I) R^T L. */
void shard_rotor_omega(const double q[4], const double L[3], const double inertia[3], double omega[3]);

/* Local: the kinetic energy of rotation (J), T = sum_k pi_k^2 / (2 I_k) with pi = R^T L the body angular
 * momentum (= L . omega / 2). */
double shard_rotor_energy(const double q[4], const double L[3], const double inertia[3]);

/* Local: advances the orientation q (body -> world, unit) of a free rigid body by dt (s) with zero torque, by the
 * symmetric splitting of DLM 1997.  The kinetic energy T = T1 + T2 + T3, T_k = pi_k^2 / (2 I_k), is split into
 * its three terms; the flow of each is exact and elementary: a rotation of the body about its own axis k by the
 * angle theta = h pi_k / I_k (pi_k is constant along that flow), under which the body angular momentum pi = R^T L
 * turns about e_k by -theta while L in the world frame does not move.  The step composes
 *     Ta(dt/2) Tb(dt/2) Tc(dt) Tb(dt/2) Ta(dt/2),
 * a the axis of the smallest moment, b of the largest, c the other (ties: a the lowest index, b the highest), so
 * for distinct moments the result does not depend on how the caller numbers the axes beyond rounding.  The order
 * matters: over 200 random ellipsoids at 1/50 of the rotation period this one gave the smallest energy error of
 * the six (geometric mean 1.6e-4 relative; the largest moment outermost gave 7.9e-4 and 1.1e-3; numbers in
 * src/core/rotation.c).  The step is
 *   - symplectic (a composition of exact Hamiltonian flows) and time-reversible (a symmetric composition: a step
 *     of -dt undoes a step of dt to rounding), second order; the energy error is O(dt^2) and oscillates without
 *     drift (6e-5 relative at dt = 1/50 of the period 2 pi/|omega| for I = (1, 2, 3), omega = (0.3, 1, 0.5), 6e-7
 *     at 1/500; tests/unit/test_rotation.c);
 *   - exact for |pi| = |L|: each sub-step is a rotation of pi, so the norm of the body angular momentum is kept by
 *     every sub-rotation, and L (world) is the input, untouched;
 *   - exact for a body spinning about a principal axis.  Not exact for a sphere (I1 = I2 = I3): its energy is
 *     (it depends on |pi| only), but rotations about the three axes in turn are not the rotation about L, so the
 *     orientation carries the same O(dt^2) splitting error as any body.
 * q is renormalised at the end of the step, so |q| - 1 stays at rounding level.  Cost: five sin/cos pairs.
 * inertia[k] > 0 is the caller's check. */
void shard_rotor_step(double q[4], const double L[3], const double inertia[3], double dt);

#endif
