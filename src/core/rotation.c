/* Rotation (core): quaternion and matrix algebra, and the free-rotor step of DLM 1997 (see rotation.h). */
#include "shard/rotation.h"

#include <math.h>

void shard_quat_mul(const double a[4], const double b[4], double out[4])
{
    /* (a0 + a)(b0 + b) = a0 b0 - a.b + a0 b + b0 a + a x b */
    double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    double y = a[0] * b[2] + a[2] * b[0] + a[3] * b[1] - a[1] * b[3];
    double z = a[0] * b[3] + a[3] * b[0] + a[1] * b[2] - a[2] * b[1];
    out[0] = w, out[1] = x, out[2] = y, out[3] = z;
}

void shard_quat_conj(const double q[4], double out[4])
{
    out[0] = q[0], out[1] = -q[1], out[2] = -q[2], out[3] = -q[3];
}

double shard_quat_normalise(double q[4])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 0) || !isfinite(n)) {
        q[0] = 1, q[1] = q[2] = q[3] = 0;
        return isfinite(n) ? 0.0 : n;
    }
    double inv = 1.0 / n;
    for (int k = 0; k < 4; k++)
        q[k] *= inv;
    return n;
}

void shard_quat_from_axis_angle(const double axis[3], double angle, double q[4])
{
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (!(n > 0)) {
        q[0] = 1, q[1] = q[2] = q[3] = 0;
        return;
    }
    double s = sin(0.5 * angle) / n;
    q[0] = cos(0.5 * angle), q[1] = s * axis[0], q[2] = s * axis[1], q[3] = s * axis[2];
}

/* out = v + w t + u x t, t = 2 u x v, with (w, u) = q: the expanded form of q (0, v) q* for a unit q. */
static void shard_quat_rotate_wu(double w, const double u[3], const double v[3], double out[3])
{
    double t0 = 2 * (u[1] * v[2] - u[2] * v[1]);
    double t1 = 2 * (u[2] * v[0] - u[0] * v[2]);
    double t2 = 2 * (u[0] * v[1] - u[1] * v[0]);
    double o0 = v[0] + w * t0 + (u[1] * t2 - u[2] * t1);
    double o1 = v[1] + w * t1 + (u[2] * t0 - u[0] * t2);
    double o2 = v[2] + w * t2 + (u[0] * t1 - u[1] * t0);
    out[0] = o0, out[1] = o1, out[2] = o2;
}

void shard_quat_rotate(const double q[4], const double v[3], double out[3])
{
    shard_quat_rotate_wu(q[0], q + 1, v, out);
}

void shard_quat_rotate_inv(const double q[4], const double v[3], double out[3])
{
    double u[3] = {-q[1], -q[2], -q[3]};
    shard_quat_rotate_wu(q[0], u, v, out);
}

void shard_quat_to_matrix(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double n2 = w * w + x * x + y * y + z * z;
    double s = n2 > 0 ? 2.0 / n2 : 0.0;
    double xx = s * x * x, yy = s * y * y, zz = s * z * z;
    double xy = s * x * y, xz = s * x * z, yz = s * y * z;
    double wx = s * w * x, wy = s * w * y, wz = s * w * z;
    R[0] = 1 - (yy + zz), R[1] = xy - wz, R[2] = xz + wy;
    R[3] = xy + wz, R[4] = 1 - (xx + zz), R[5] = yz - wx;
    R[6] = xz - wy, R[7] = yz + wx, R[8] = 1 - (xx + yy);
}

void shard_quat_from_matrix(const double R[9], double q[4])
{
    /* 4 w^2 = 1 + tr R, 4 x^2 = 1 + R00 - R11 - R22, ...; the largest is taken from its square root and the
     * rest from R21 - R12 = 4 w x, R01 + R10 = 4 x y, ... (Shepperd 1978). */
    double tr = R[0] + R[4] + R[8];
    double w, x, y, z;
    if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
        double r = 2 * sqrt(fmax(1 + tr, 0.0)); /* 4 w */
        w = 0.25 * r;
        x = (R[7] - R[5]) / r, y = (R[2] - R[6]) / r, z = (R[3] - R[1]) / r;
    } else if (R[0] >= R[4] && R[0] >= R[8]) {
        double r = 2 * sqrt(fmax(1 + R[0] - R[4] - R[8], 0.0)); /* 4 x */
        x = 0.25 * r;
        w = (R[7] - R[5]) / r, y = (R[1] + R[3]) / r, z = (R[2] + R[6]) / r;
    } else if (R[4] >= R[8]) {
        double r = 2 * sqrt(fmax(1 - R[0] + R[4] - R[8], 0.0)); /* 4 y */
        y = 0.25 * r;
        w = (R[2] - R[6]) / r, x = (R[1] + R[3]) / r, z = (R[5] + R[7]) / r;
    } else {
        double r = 2 * sqrt(fmax(1 - R[0] - R[4] + R[8], 0.0)); /* 4 z */
        z = 0.25 * r;
        w = (R[3] - R[1]) / r, x = (R[2] + R[6]) / r, y = (R[5] + R[7]) / r;
    }
    /* one sign per rotation: w > 0, else the first non-zero of x, y, z > 0 */
    int flip = w < 0 || (w == 0 && (x < 0 || (x == 0 && (y < 0 || (y == 0 && z < 0)))));
    double s = flip ? -1.0 : 1.0;
    q[0] = s * w, q[1] = s * x, q[2] = s * y, q[3] = s * z;
    shard_quat_normalise(q);
}

void shard_mat3_mul(const double A[9], const double B[9], double C[9])
{
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    for (int k = 0; k < 9; k++)
        C[k] = t[k];
}

void shard_mat3_mul_vec(const double A[9], const double v[3], double out[3])
{
    double o0 = A[0] * v[0] + A[1] * v[1] + A[2] * v[2];
    double o1 = A[3] * v[0] + A[4] * v[1] + A[5] * v[2];
    double o2 = A[6] * v[0] + A[7] * v[1] + A[8] * v[2];
    out[0] = o0, out[1] = o1, out[2] = o2;
}

void shard_mat3_tmul_vec(const double A[9], const double v[3], double out[3])
{
    double o0 = A[0] * v[0] + A[3] * v[1] + A[6] * v[2];
    double o1 = A[1] * v[0] + A[4] * v[1] + A[7] * v[2];
    double o2 = A[2] * v[0] + A[5] * v[1] + A[8] * v[2];
    out[0] = o0, out[1] = o1, out[2] = o2;
}

void shard_rotor_omega(const double q[4], const double L[3], const double inertia[3], double omega[3])
{
    double pi[3];
    shard_quat_rotate_inv(q, L, pi);
    for (int k = 0; k < 3; k++)
        pi[k] /= inertia[k];
    shard_quat_rotate(q, pi, omega);
}

double shard_rotor_energy(const double q[4], const double L[3], const double inertia[3])
{
    double pi[3];
    shard_quat_rotate_inv(q, L, pi);
    return 0.5 * (pi[0] * pi[0] / inertia[0] + pi[1] * pi[1] / inertia[1] + pi[2] * pi[2] / inertia[2]);
}

/* The exact flow of T_a = pi_a^2 / (2 I_a) over h: the body turns about its axis a by theta = h pi_a / I_a
 * (q <- q (x) (cos theta/2, sin theta/2 e_a)), and pi = R^T L turns about e_a by -theta.  Both use the same
 * half-angle sine and cosine, so q and pi stay consistent. */
static void shard_rotor_substep(double q[4], double pi[3], const double inertia[3], int a, double h)
{
    double theta = h * pi[a] / inertia[a];
    double c = cos(0.5 * theta), s = sin(0.5 * theta);
    double r[4] = {c, 0, 0, 0};
    r[1 + a] = s;
    shard_quat_mul(q, r, q);
    double C = c * c - s * s, S = 2 * s * c; /* cos theta, sin theta */
    int j = (a + 1) % 3, k = (a + 2) % 3;
    double pj = pi[j], pk = pi[k];
    pi[j] = C * pj + S * pk;
    pi[k] = C * pk - S * pj;
}

void shard_rotor_step(double q[4], const double L[3], const double inertia[3], double dt)
{
    /* Outer: the axis of the smallest moment (lowest index on ties); inner half steps: the largest (highest index
     * on ties, so lo != hi even for a sphere); centre: the other.  Measured over 200 random ellipsoids (semi-axes
     * uniform in [0.2, 1.2], random omega) at a step of 1/50 of the rotation period, the geometric mean of the
     * maximum energy error over 5000 steps, relative, by (outer, inner, centre) = (smallest s, middle m, largest
     * l): (s, l, m) 1.6e-4, (m, l, s) 2.0e-4, (s, m, l) 2.3e-4, (m, s, l) 5.2e-4, (l, m, s) 7.9e-4, (l, s, m)
     * 1.1e-3; (s, l, m) was the best order for 92 of the 200 bodies. */
    int lo = 0, hi = 2;
    for (int k = 1; k < 3; k++)
        if (inertia[k] < inertia[lo])
            lo = k;
    for (int k = 1; k >= 0; k--)
        if (inertia[k] > inertia[hi])
            hi = k;
    int mid = 3 - lo - hi;
    double pi[3];
    shard_quat_rotate_inv(q, L, pi);
    shard_rotor_substep(q, pi, inertia, lo, 0.5 * dt);
    shard_rotor_substep(q, pi, inertia, hi, 0.5 * dt);
    shard_rotor_substep(q, pi, inertia, mid, dt);
    shard_rotor_substep(q, pi, inertia, hi, 0.5 * dt);
    shard_rotor_substep(q, pi, inertia, lo, 0.5 * dt);
    shard_quat_normalise(q);
}
