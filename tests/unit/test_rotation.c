/* Rotation (rotation.h): quaternion algebra against matrices, and the free-rotor step of Dullweber, Leimkuhler &
 * McLachlan 1997 against the closed-form motion of a free rigid body:
 *   - algebra: R(q) orthogonal with det +1, R(a b) = R(a) R(b), rotation of a vector equals R v, the round trip
 *     matrix -> quaternion gives the canonical sign, a quarter turn about z takes x to y;
 *   - a spin about a principal axis is followed exactly (angle t |omega| to rounding);
 *   - a symmetric top: the symmetry axis keeps its angle to L and precesses about L at |L| / I_perp, and pi
 *     precesses in the body at pi_3 (1/I_3 - 1/I_perp) (Landau & Lifshitz, Mechanics, section 33);
 *   - the Dzhanibekov effect: a spin about the intermediate axis with a 1e-6 perturbation flips; the time between
 *     flips is compared with 2 K(k) / lambda from the Jacobi elliptic solution of Euler's equations (Landau &
 *     Lifshitz section 37);
 *   - long runs (1e5 steps): the energy error stays bounded (no drift) and scales as dt^2, |R^T L| = |L| and
 *     |q| = 1 to rounding, and a step of -dt undoes a step of dt. */
#include "shard/rotation.h"
#include "test.h"

#include <math.h>
#include <string.h>

static double norm3(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }
static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double qnorm(const double q[4]) { return sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]); }

static double det3(const double A[9])
{
    return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
           A[2] * (A[3] * A[7] - A[4] * A[6]);
}

/* Checks: orthogonality and det of R(q), the homomorphism R(ab) = R(a)R(b), rotate == matrix product,
 * rotate_inv == transpose, canonical round trip, and the quarter turn. */
static void test_algebra(void)
{
    uint64_t st = 0x243f6a8885a308d3ull;
    double worst_orth = 0, worst_hom = 0, worst_rot = 0, worst_round = 0, worst_conj = 0;
    for (int trial = 0; trial < 1000; trial++) {
        double a[4], b[4], v[3];
        for (int k = 0; k < 4; k++)
            a[k] = shard_test_rnd(&st), b[k] = shard_test_rnd(&st);
        for (int k = 0; k < 3; k++)
            v[k] = shard_test_rnd(&st);
        shard_quat_normalise(a);
        shard_quat_normalise(b);
        double Ra[9], Rb[9], Rab[9], RaRb[9], ab[4];
        shard_quat_to_matrix(a, Ra);
        shard_quat_to_matrix(b, Rb);
        shard_quat_mul(a, b, ab);
        shard_quat_to_matrix(ab, Rab);
        shard_mat3_mul(Ra, Rb, RaRb);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double g = Ra[i] * Ra[j] + Ra[3 + i] * Ra[3 + j] + Ra[6 + i] * Ra[6 + j]; /* (R^T R)_ij */
                worst_orth = fmax(worst_orth, fabs(g - (i == j)));
            }
        worst_orth = fmax(worst_orth, fabs(det3(Ra) - 1));
        for (int k = 0; k < 9; k++)
            worst_hom = fmax(worst_hom, fabs(Rab[k] - RaRb[k]));
        double r1[3], r2[3], r3[3], r4[3];
        shard_quat_rotate(a, v, r1);
        shard_mat3_mul_vec(Ra, v, r2);
        shard_quat_rotate_inv(a, v, r3);
        shard_mat3_tmul_vec(Ra, v, r4);
        for (int k = 0; k < 3; k++)
            worst_rot = fmax(worst_rot, fmax(fabs(r1[k] - r2[k]), fabs(r3[k] - r4[k])));
        /* round trip: the canonical representative of {a, -a} has w > 0 */
        double back[4], canon[4];
        shard_quat_from_matrix(Ra, back);
        double s = a[0] >= 0 ? 1.0 : -1.0;
        for (int k = 0; k < 4; k++)
            canon[k] = s * a[k];
        SHARD_ENSURE(back[0] >= 0);
        for (int k = 0; k < 4; k++)
            worst_round = fmax(worst_round, fabs(back[k] - canon[k]));
        double ac[4], id[4];
        shard_quat_conj(a, ac);
        shard_quat_mul(a, ac, id);
        worst_conj = fmax(worst_conj, fmax(fabs(id[0] - 1), fmax(fabs(id[1]), fmax(fabs(id[2]), fabs(id[3])))));
    }
    printf("algebra (1000 random pairs): |R^T R - 1|, |det - 1| <= %.2e; |R(ab) - R(a)R(b)| <= %.2e; "
           "rotate vs matrix %.2e; matrix -> quaternion %.2e; q q* - 1 %.2e\n",
           worst_orth, worst_hom, worst_rot, worst_round, worst_conj);
    SHARD_ENSURE(worst_orth < 1e-14 && worst_hom < 1e-14 && worst_rot < 1e-14 && worst_round < 1e-14 &&
                 worst_conj < 1e-15);

    /* a quarter turn about z takes x to y; a half turn about x has w = 0 and the canonical sign x > 0 */
    double z[3] = {0, 0, 2}, ex[3] = {1, 0, 0}, q[4], out[3];
    shard_quat_from_axis_angle(z, M_PI / 2, q);
    shard_quat_rotate(q, ex, out);
    SHARD_ENSURE_NEAR(out[0], 0, 1e-15);
    SHARD_ENSURE_NEAR(out[1], 1, 1e-15);
    SHARD_ENSURE_NEAR(out[2], 0, 1e-15);
    double Rx[9] = {1, 0, 0, 0, -1, 0, 0, 0, -1}, qx[4];
    shard_quat_from_matrix(Rx, qx);
    SHARD_ENSURE(qx[0] == 0 && qx[1] == 1 && qx[2] == 0 && qx[3] == 0);
    double Rneg[9] = {-1, 0, 0, 0, -1, 0, 0, 0, 1}, qz[4]; /* half turn about z: (0, 0, 0, 1) */
    shard_quat_from_matrix(Rneg, qz);
    SHARD_ENSURE(qz[0] == 0 && qz[1] == 0 && qz[2] == 0 && qz[3] == 1);
    double zero[4] = {0, 0, 0, 0};
    SHARD_ENSURE(shard_quat_normalise(zero) == 0 && zero[0] == 1);
}

/* Checks: a spin about a principal axis is a uniform rotation about it, exact to rounding. */
static void test_principal_spin(void)
{
    double I[3] = {1, 2, 3}, q[4] = {1, 0, 0, 0};
    double L[3] = {0, 0, 3 * 0.7}; /* omega = 0.7 rad/s about body axis 3, which is world z */
    double dt = 0.01;
    int steps = 10000;
    for (int n = 0; n < steps; n++)
        shard_rotor_step(q, L, I, dt);
    double ez[3] = {0, 0, 1}, want[4];
    shard_quat_from_axis_angle(ez, 0.7 * dt * steps, want);
    double err = 0, s = want[0] * q[0] + want[3] * q[3] >= 0 ? 1.0 : -1.0;
    for (int k = 0; k < 4; k++)
        err = fmax(err, fabs(s * q[k] - want[k]));
    printf("principal spin: after %d steps (angle %.1f rad) |q - exact| = %.2e\n", steps, 0.7 * dt * steps, err);
    SHARD_ENSURE(err < 1e-11);
}

/* Checks: symmetric top (I1 = I2 = 2, I3 = 1).  World precession of the symmetry axis about L at |L|/I1, its
 * angle to L constant; body precession of pi about e3 at |pi_3 (1/I3 - 1/I1)|.  dt = 1/2000 of the precession
 * period: the splitting error on the rates is O(dt^2), measured 2.2e-7 and 2.7e-7 relative; tolerance 1e-5.
 * The angle to L is not an invariant of the splitting (the T1 and T2 sub-flows change pi_3): it oscillates by
 * O(dt^2), measured 5.8e-7 rad; tolerance 1e-5. */
static void test_symmetric_top(void)
{
    double I[3] = {2, 2, 1};
    double L[3] = {0, 0, 3};                         /* kg m^2/s, world */
    double tilt = 0.6, ax[3] = {1, 0, 0}, q[4];     /* symmetry axis tilted by 0.6 rad from L */
    shard_quat_from_axis_angle(ax, tilt, q);
    double rate_world = 3.0 / I[0];
    double pi0[3];
    shard_quat_rotate_inv(q, L, pi0);
    double rate_body = fabs(pi0[2] * (1 / I[2] - 1 / I[0]));
    double period = 2 * M_PI / rate_world, dt = period / 2000;
    int steps = 20000; /* ten precession periods */
    double e3[3] = {0, 0, 1}, a[3], phi = 0, psi = 0, worst_tilt = 0;
    shard_quat_rotate(q, e3, a);
    double prev = atan2(a[1], a[0]), prev_b = atan2(pi0[1], pi0[0]);
    for (int n = 0; n < steps; n++) {
        shard_rotor_step(q, L, I, dt);
        double pi[3];
        shard_quat_rotate(q, e3, a);
        shard_quat_rotate_inv(q, L, pi);
        double ang = atan2(a[1], a[0]), ang_b = atan2(pi[1], pi[0]);
        /* unwrap: each step turns by far less than pi */
        phi += remainder(ang - prev, 2 * M_PI);
        psi += remainder(ang_b - prev_b, 2 * M_PI);
        prev = ang, prev_b = ang_b;
        worst_tilt = fmax(worst_tilt, fabs(acos(fmin(1.0, a[2])) - tilt));
    }
    double t = steps * dt;
    double rw = fabs(phi) / t, rb = fabs(psi) / t;
    printf("symmetric top: world precession %.9f rad/s (closed form %.9f, rel %.2e), body %.9f (closed form %.9f, "
           "rel %.2e), tilt kept to %.2e rad\n",
           rw, rate_world, fabs(rw / rate_world - 1), rb, rate_body, fabs(rb / rate_body - 1), worst_tilt);
    SHARD_ENSURE_NEAR(rw / rate_world, 1, 1e-5);
    SHARD_ENSURE_NEAR(rb / rate_body, 1, 1e-5);
    SHARD_ENSURE(worst_tilt < 1e-5);
}

/* Complete elliptic integral of the first kind K(k) = pi / (2 AGM(1, k')) from the complementary modulus k'
 * (Abramowitz & Stegun 17.6), accurate for k' as small as 1e-6 where 1 - k^2 would cancel. */
static double elliptic_K_from_kprime(double kp)
{
    double a = 1, b = kp;
    for (int i = 0; i < 60 && fabs(a - b) > 1e-16 * a; i++) {
        double an = 0.5 * (a + b);
        b = sqrt(a * b);
        a = an;
    }
    return M_PI / (2 * a);
}

/* Runs the intermediate-axis spin at step dt and returns the mean time between sign changes of pi_2 over the
 * flips in [0, t_end] (crossing times by linear interpolation); *flips gets their number. */
static double flip_interval(const double I[3], const double w0[3], double dt, double t_end, int *flips)
{
    double q[4] = {1, 0, 0, 0}, L[3] = {I[0] * w0[0], I[1] * w0[1], I[2] * w0[2]};
    double pi[3], prev = L[1], first = -1, last = -1;
    int count = 0;
    long steps = (long)(t_end / dt);
    for (long n = 1; n <= steps; n++) {
        shard_rotor_step(q, L, I, dt);
        shard_quat_rotate_inv(q, L, pi);
        if ((pi[1] < 0) != (prev < 0)) {
            double tc = (n - 1) * dt + dt * prev / (prev - pi[1]);
            if (count == 0)
                first = tc;
            last = tc;
            count++;
        }
        prev = pi[1];
    }
    *flips = count;
    return count > 1 ? (last - first) / (count - 1) : -1;
}

/* Checks: the Dzhanibekov flip.  I = (1, 2, 3), omega = (1e-6, 1, 1e-6) rad/s.  Closed form (Landau & Lifshitz
 * section 37, case L^2 > 2 E I2): omega_2 ~ sn(lambda t, k), which changes sign every 2 K(k) / lambda, with
 * lambda^2 = (I3 - I2)(L^2 - 2 E I1) / (I1 I2 I3) and k'^2 = 1 - k^2 = (I3 - I1)(L^2 - 2 E I2) / ((I3 - I2)(L^2 -
 * 2 E I1)); L^2 - 2 E I2 = sum_k I_k (I_k - I2) omega_k^2 is evaluated in that form, without cancellation.  The
 * interval must agree within 2 % at a step of 1/20 of the spin period T = 2 pi / |omega| (measured 0.99 %), and
 * within 0.1 % at T/100 (measured 0.040 %).  Much finer steps stop getting closer: the orbit starts 2e-12
 * (relative) from the separatrix, so the rounding of 1e5 and more steps moves it measurably. */
static void test_dzhanibekov(void)
{
    double I[3] = {1, 2, 3}, w0[3] = {1e-6, 1, 1e-6};
    double L2 = 0, E2 = 0, d2 = 0; /* L^2, 2E, L^2 - 2 E I2 */
    for (int k = 0; k < 3; k++) {
        L2 += I[k] * I[k] * w0[k] * w0[k];
        E2 += I[k] * w0[k] * w0[k];
        d2 += I[k] * (I[k] - I[1]) * w0[k] * w0[k];
    }
    SHARD_ENSURE(d2 > 0);
    double lambda = sqrt((I[2] - I[1]) * (L2 - E2 * I[0]) / (I[0] * I[1] * I[2]));
    double kp = sqrt((I[2] - I[0]) * d2 / ((I[2] - I[1]) * (L2 - E2 * I[0])));
    double K = elliptic_K_from_kprime(kp);
    double want = 2 * K / lambda;
    double spin = 2 * M_PI / w0[1];
    int flips_c, flips_f;
    double coarse = flip_interval(I, w0, spin / 20, 8.5 * want, &flips_c);
    double fine = flip_interval(I, w0, spin / 100, 8.5 * want, &flips_f);
    printf("Dzhanibekov: k' = %.4e, K = %.6f, closed-form time between flips %.5f s (%.2f spin periods); "
           "measured %.5f s over %d flips at dt = T/20 (ratio %.5f), %.5f s over %d flips at T/100 (ratio "
           "%.6f)\n",
           kp, K, want, want / spin, coarse, flips_c, coarse / want, fine, flips_f, fine / want);
    SHARD_ENSURE(flips_c >= 8 && flips_f >= 8);
    SHARD_ENSURE_NEAR(coarse / want, 1, 0.02);
    SHARD_ENSURE_NEAR(fine / want, 1, 0.001);
}

typedef struct run_stats {
    double max_err, mean_first, mean_last, max_first, max_lnorm, max_qdev;
} run_stats;

static run_stats long_run(const double I[3], const double w0[3], double dt, long steps)
{
    double q[4], axis[3] = {1, 2, 3};
    shard_quat_from_axis_angle(axis, 0.4, q);
    double wb[3] = {I[0] * w0[0], I[1] * w0[1], I[2] * w0[2]}, L[3];
    shard_quat_rotate(q, wb, L); /* world L of the body momentum I omega0 */
    double E0 = shard_rotor_energy(q, L, I), Ln = norm3(L);
    run_stats s = {0};
    long win = steps / 10;
    for (long n = 1; n <= steps; n++) {
        shard_rotor_step(q, L, I, dt);
        double e = fabs(shard_rotor_energy(q, L, I) / E0 - 1), pi[3];
        shard_quat_rotate_inv(q, L, pi);
        s.max_err = fmax(s.max_err, e);
        if (n <= win)
            s.mean_first += e / win, s.max_first = fmax(s.max_first, e);
        if (n > steps - win)
            s.mean_last += e / win;
        s.max_lnorm = fmax(s.max_lnorm, fabs(norm3(pi) / Ln - 1));
        s.max_qdev = fmax(s.max_qdev, fabs(qnorm(q) - 1));
    }
    return s;
}

/* Checks, I = (1, 2, 3), omega = (0.3, 1, 0.5), period T = 2 pi / |omega|, 1e5 steps:
 *   - no drift: the mean energy error over the last tenth of the run is within 1.5 times that of the first
 *     tenth, and the maximum over the run within 1.5 times the maximum over the first tenth;
 *   - bounded and second order: at T/50 the error stays below 1e-4 (measured 6.0e-5: the splitting error of
 *     this body, not rounding; a relative error of 1e-6 needs about T/500 with this second-order scheme);
 *     halving dt divides it by 4 (+-10 %); at T/500 it is below 1e-6 (measured 6.0e-7);
 *   - |R^T L| / |L| - 1 below 1e-12, and ||q| - 1| below 1e-14 at every step;
 *   - reversibility: 1000 steps of dt then 1000 of -dt give back q to 1e-12. */
static void test_long_run(void)
{
    double I[3] = {1, 2, 3}, w0[3] = {0.3, 1, 0.5};
    double T = 2 * M_PI / norm3(w0);
    long steps = 100000;
    run_stats a = long_run(I, w0, T / 50, steps);
    run_stats b = long_run(I, w0, T / 100, steps);
    run_stats c = long_run(I, w0, T / 500, steps);
    printf("energy, 1e5 steps: dt = T/50: max rel error %.3e (first tenth max %.3e, mean %.3e; last tenth mean "
           "%.3e); T/100: %.3e (ratio %.3f); T/500: %.3e\n",
           a.max_err, a.max_first, a.mean_first, a.mean_last, b.max_err, a.max_err / b.max_err, c.max_err);
    printf("invariants: max ||R^T L|/|L| - 1| = %.2e, max ||q| - 1| = %.2e\n",
           fmax(a.max_lnorm, fmax(b.max_lnorm, c.max_lnorm)), fmax(a.max_qdev, fmax(b.max_qdev, c.max_qdev)));
    SHARD_ENSURE(a.mean_last < 1.5 * a.mean_first && a.max_err < 1.5 * a.max_first);
    SHARD_ENSURE(a.max_err < 1e-4);
    SHARD_ENSURE_NEAR(a.max_err / b.max_err, 4, 0.4);
    SHARD_ENSURE(c.max_err < 1e-6);
    SHARD_ENSURE(a.max_lnorm < 1e-12 && b.max_lnorm < 1e-12 && c.max_lnorm < 1e-12);
    SHARD_ENSURE(a.max_qdev < 1e-14 && b.max_qdev < 1e-14 && c.max_qdev < 1e-14);

    double q[4] = {0.5, 0.5, 0.5, 0.5}, q0[4], L[3] = {0.3, -1.2, 0.8}, dt = T / 50;
    memcpy(q0, q, sizeof q);
    for (int n = 0; n < 1000; n++)
        shard_rotor_step(q, L, I, dt);
    for (int n = 0; n < 1000; n++)
        shard_rotor_step(q, L, I, -dt);
    double err = 0;
    for (int k = 0; k < 4; k++)
        err = fmax(err, fabs(q[k] - q0[k]));
    printf("reversibility: 1000 steps forward and back, |q - q0| = %.2e\n", err);
    SHARD_ENSURE(err < 1e-12);

    /* omega from L agrees with I omega = pi in the body frame */
    double om[3], pi[3], wb[3];
    shard_rotor_omega(q, L, I, om);
    shard_quat_rotate_inv(q, om, wb);
    shard_quat_rotate_inv(q, L, pi);
    for (int k = 0; k < 3; k++)
        SHARD_ENSURE_NEAR(I[k] * wb[k], pi[k], 1e-14);
    SHARD_ENSURE_NEAR(shard_rotor_energy(q, L, I), 0.5 * dot3(L, om), 1e-14);
}

int main(void)
{
    test_algebra();
    test_principal_spin();
    test_symmetric_top();
    test_dzhanibekov();
    test_long_run();
    return SHARD_TEST_RESULT();
}
