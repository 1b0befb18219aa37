/* LCP (lcp.h): Lemke's method and projected Gauss-Seidel against closed forms of small contact problems, and
 * against each other on random problems.  Contact problems are built as in Baraff 1989: one rigid body at rest,
 * contact i at r_i from the centre of mass with direction d, Jacobian row
 * (d, r_i x d), A = J M^-1 J^T, b = J (g, I^-1 tau) the accelerations of gravity and applied torque.  Checks:
 *   - Baraff's inclined plane: one contact, f = m g cos(theta) (not the feasible 2 m g cos(theta)), w = 0;
 *   - a box on a plane with four corner contacts (A singular): forces sum to m g, accelerations 0, torques balance,
 *     for both solvers;
 *   - a vanishing contact: the same box with a torque that lifts one side: those forces are 0 and their w > 0,
 *     the closed form of both;
 *   - random symmetric positive definite problems, n = 2 .. 30: Lemke's residual <= 1e-10, f >= 0, and PGS run
 *     to convergence gives the same f;
 *   - random PSD problems of rank n/2 with a known solution: w agrees with it (f need not);
 *   - the statuses: no solution (secondary ray), iteration limits, bad input;
 *   - friction (exact cone): a point mass and a box with four corners on a slope stick when tan(theta) < mu
 *     (tangential force m g sin(theta), no motion) and slip when tan(theta) > mu (|f_t| = mu f_n opposing the
 *     sliding acceleration, which is g (sin - mu cos)), with tangents turned 30 degrees off the slope. */
#include "lcp.h"
#include "shard/massprops.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define G 9.81 /* m/s^2 */

/* One rigid body at rest: mass, inverse world inertia, gravity, applied torque. */
typedef struct body {
    double m, Iinv[9], g[3], tau[3];
} body;

static void cross(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static void mat_vec(const double M[9], const double v[3], double o[3])
{
    for (int i = 0; i < 3; i++)
        o[i] = M[3 * i] * v[0] + M[3 * i + 1] * v[1] + M[3 * i + 2] * v[2];
}

/* A box body of half-sides (a, h, c) (x, y, z), density 1000, from shard_massprops_box. */
static body box_body(double a, double h, double c, const double g[3])
{
    double lo[3] = {-a, -h, -c}, hi[3] = {a, h, c};
    shard_massprops p;
    SHARD_ENSURE(shard_massprops_box(1000, lo, hi, &p) == SHARD_MASSPROPS_OK);
    body B = {.m = p.mass};
    for (int k = 0; k < 3; k++)
        B.Iinv[4 * k] = 1 / p.inertia[4 * k], B.g[k] = g[k];
    return B;
}

/* A and b for nrow rows, row k: point r[k] (3 doubles, from the centre of mass), direction d[k] (unit). */
static void build(const body *B, int nrow, const double (*r)[3], const double (*d)[3], double *A, double *b)
{
    double J[64][6], MJ[64][6];
    for (int k = 0; k < nrow; k++) {
        double rxd[3], Irxd[3];
        cross(r[k], d[k], rxd);
        mat_vec(B->Iinv, rxd, Irxd);
        for (int j = 0; j < 3; j++) {
            J[k][j] = d[k][j], J[k][3 + j] = rxd[j];
            MJ[k][j] = d[k][j] / B->m, MJ[k][3 + j] = Irxd[j];
        }
    }
    double alpha0[3];
    mat_vec(B->Iinv, B->tau, alpha0);
    for (int i = 0; i < nrow; i++) {
        for (int k = 0; k < nrow; k++) {
            double s = 0;
            for (int j = 0; j < 6; j++)
                s += J[i][j] * MJ[k][j];
            A[i * nrow + k] = s;
        }
        b[i] = 0;
        for (int j = 0; j < 3; j++)
            b[i] += J[i][j] * B->g[j] + J[i][3 + j] * alpha0[j];
    }
}

/* The body's linear and angular accelerations under row forces f (force f[k] d[k] at r[k]). */
static void accelerations(const body *B, int nrow, const double (*r)[3], const double (*d)[3], const double *f,
                          double acc[3], double alpha[3])
{
    double F[3] = {0, 0, 0}, T[3] = {B->tau[0], B->tau[1], B->tau[2]};
    for (int k = 0; k < nrow; k++) {
        double fk[3] = {f[k] * d[k][0], f[k] * d[k][1], f[k] * d[k][2]}, t[3];
        cross(r[k], fk, t);
        for (int j = 0; j < 3; j++)
            F[j] += fk[j], T[j] += t[j];
    }
    for (int j = 0; j < 3; j++)
        acc[j] = B->g[j] + F[j] / B->m;
    mat_vec(B->Iinv, T, alpha);
}

/* checks: one contact on a frictionless incline at 30 degrees: f = m g cos(theta), w = 0, two pivots (z0 in, then
 * f in and z0 out) */
static void test_incline(void)
{
    double th = M_PI / 6, g[3] = {0, -G, 0};
    body B = {.m = 2.5, .Iinv = {2, 0, 0, 0, 2, 0, 0, 0, 2}, .g = {g[0], g[1], g[2]}};
    /* a ball of radius 0.2 on the plane with normal n: contact at -0.2 n; r x n = 0 so A = 1/m */
    double n[1][3] = {{-sin(th), cos(th), 0}}, r[1][3] = {{0.2 * sin(th), -0.2 * cos(th), 0}};
    double A[1], b[1], f[1], w[1];
    build(&B, 1, r, n, A, b);
    shard_lcp_result res = shard_lcp_lemke(1, A, b, NULL, NULL, f, w);
    double want = B.m * G * cos(th);
    printf("incline: Lemke f = %.15g N (m g cos = %.15g, 2 m g cos = %.15g), w = %.2e, %d pivot(s), %s\n", f[0],
           want, 2 * want, w[0], res.iterations, shard_lcp_status_name(res.status));
    SHARD_ENSURE(res.status == SHARD_LCP_SOLVED && res.iterations == 2);
    SHARD_ENSURE_NEAR(f[0], want, 1e-13 * want);
    SHARD_ENSURE(fabs(w[0]) < 1e-14 * G);
    f[0] = 0;
    res = shard_lcp_pgs(1, A, b, NULL, f, w);
    SHARD_ENSURE(res.status == SHARD_LCP_SOLVED);
    SHARD_ENSURE_NEAR(f[0], want, 1e-13 * want);
    /* 2 m g cos(theta) is feasible (f >= 0, w >= 0) but not complementary: its residual is large */
    double f2[1] = {2 * want};
    SHARD_ENSURE(shard_lcp_residual(1, A, b, f2, w) > 0.5);
}

/* Box of half-sides (a, h, c) with contacts at its four bottom corners, normal +y. */
static void corners(double a, double h, double c, double r[4][3], double n[4][3])
{
    for (int k = 0; k < 4; k++) {
        r[k][0] = k < 2 ? a : -a, r[k][1] = -h, r[k][2] = k % 2 ? -c : c;
        n[k][0] = 0, n[k][1] = 1, n[k][2] = 0;
    }
}

/* checks: box resting on four corners: sum f = m g, w = 0, no angular acceleration, for Lemke and PGS; and a
 * torque about z of 2 m g a lifts the +x side: f = 0 and w > 0 there, both against the closed form */
static void test_box(void)
{
    double a = 0.4, h = 0.25, c = 0.3, g[3] = {0, -G, 0};
    body B = box_body(a, h, c, g);
    double r[4][3], n[4][3], A[16], b[4], f[4], w[4], acc[3], alpha[3];
    corners(a, h, c, r, n);
    build(&B, 4, (const double(*)[3])r, (const double(*)[3])n, A, b);
    const char *name[2] = {"Lemke", "PGS"};
    for (int s = 0; s < 2; s++) {
        memset(f, 0, sizeof f);
        shard_lcp_pgs_def def = shard_lcp_pgs_default_def();
        def.tolerance = 1e-12;
        shard_lcp_result res = s == 0 ? shard_lcp_lemke(4, A, b, NULL, NULL, f, w) : shard_lcp_pgs(4, A, b, &def, f, w);
        accelerations(&B, 4, (const double(*)[3])r, (const double(*)[3])n, f, acc, alpha);
        double sum = f[0] + f[1] + f[2] + f[3], wmax = fmax(fmax(fabs(w[0]), fabs(w[1])), fmax(fabs(w[2]), fabs(w[3])));
        double amax = fmax(fabs(alpha[0]), fmax(fabs(alpha[1]), fabs(alpha[2])));
        printf("box on 4 corners, %s: %s in %d %s, f = (%.6f, %.6f, %.6f, %.6f), sum/(m g) - 1 = %.2e, "
               "max|w| = %.2e, max|alpha| = %.2e, residual %.2e\n",
               name[s], shard_lcp_status_name(res.status), res.iterations, s ? "sweeps" : "pivots", f[0], f[1], f[2],
               f[3], sum / (B.m * G) - 1, wmax, amax, res.residual);
        SHARD_ENSURE(res.status == SHARD_LCP_SOLVED);
        SHARD_ENSURE_NEAR(sum / (B.m * G), 1, 1e-11);
        SHARD_ENSURE(wmax < 1e-11 * G && amax < 1e-11 * G && fabs(acc[1]) < 1e-11 * G);
        for (int k = 0; k < 4; k++)
            SHARD_ENSURE(f[k] >= 0);
    }

    /* the vanishing contacts: tau_z = 2 m g a.  Active pair at x = -a, total F = (g + tau a/Izz) / (1/m + a^2/Izz);
     * at x = +a, w = F/m - g + a (tau - a F)/Izz > 0 */
    B.tau[2] = 2 * B.m * G * a;
    build(&B, 4, (const double(*)[3])r, (const double(*)[3])n, A, b);
    double Izz = 1 / B.Iinv[8];
    double F = (G + B.tau[2] * a / Izz) / (1 / B.m + a * a / Izz);
    double wl = F / B.m - G + a * (B.tau[2] - a * F) / Izz;
    for (int s = 0; s < 2; s++) {
        memset(f, 0, sizeof f);
        shard_lcp_pgs_def def = shard_lcp_pgs_default_def();
        def.tolerance = 1e-13;
        shard_lcp_result res = s == 0 ? shard_lcp_lemke(4, A, b, NULL, NULL, f, w) : shard_lcp_pgs(4, A, b, &def, f, w);
        printf("box tipped by a torque, %s: %s in %d, lifted f = (%.3g, %.3g), w = (%.12f, %.12f) (closed form "
               "%.12f), pressed f = (%.12f, %.12f) (closed form %.12f each)\n",
               name[s], shard_lcp_status_name(res.status), res.iterations, f[0], f[1], w[0], w[1], wl, f[2], f[3],
               F / 2);
        SHARD_ENSURE(res.status == SHARD_LCP_SOLVED);
        SHARD_ENSURE(f[0] == 0 && f[1] == 0 && wl > 0);
        SHARD_ENSURE_NEAR(w[0], wl, 1e-10 * G);
        SHARD_ENSURE_NEAR(w[1], wl, 1e-10 * G);
        SHARD_ENSURE_NEAR(f[2], F / 2, 1e-10 * F);
        SHARD_ENSURE_NEAR(f[3], F / 2, 1e-10 * F);
        SHARD_ENSURE(fabs(w[2]) < 1e-10 * G && fabs(w[3]) < 1e-10 * G);
    }
}

/* checks, random SPD problems A = B B^T / n + 0.1 I (B uniform in [-1, 1)), b uniform, n = 2 .. 30, three each:
 * Lemke solves with residual <= 1e-10, f >= 0 exactly, w >= -1e-10 max|b|; PGS (tolerance 1e-12) converges to
 * the same f within 1e-8 (relative to max|f|, or 1) */
static void test_random_spd(void)
{
    uint64_t st = 0x5eed0001ull;
    int count = 0, max_piv = 0, sum_piv = 0, max_sweeps = 0;
    double max_res = 0, max_diff = 0, max_pgs_res = 0;
    size_t cap = shard_lcp_lemke_work_bytes(30);
    void *work = malloc(cap);
    for (int n = 2; n <= 30; n++)
        for (int rep = 0; rep < 3; rep++) {
            double *Bm = malloc(sizeof(double) * n * n), *A = malloc(sizeof(double) * n * n);
            double *b = malloc(sizeof(double) * n), *f = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
            double *g = malloc(sizeof(double) * n);
            for (int i = 0; i < n * n; i++)
                Bm[i] = shard_test_rnd(&st);
            for (int i = 0; i < n; i++) {
                b[i] = shard_test_rnd(&st);
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int k = 0; k < n; k++)
                        s += Bm[i * n + k] * Bm[j * n + k];
                    A[i * n + j] = s / n + (i == j ? 0.1 : 0);
                }
            }
            shard_lcp_result rl = shard_lcp_lemke(n, A, b, NULL, work, f, w);
            SHARD_ENSURE(rl.status == SHARD_LCP_SOLVED && rl.residual <= 1e-10);
            double fmaxv = 1;
            for (int i = 0; i < n; i++) {
                SHARD_ENSURE(f[i] >= 0 && w[i] >= -1e-10);
                fmaxv = fmax(fmaxv, f[i]);
                g[i] = 0;
            }
            shard_lcp_pgs_def def = {.max_sweeps = 200000, .tolerance = 1e-12};
            shard_lcp_result rp = shard_lcp_pgs(n, A, b, &def, g, w);
            SHARD_ENSURE(rp.status == SHARD_LCP_SOLVED);
            double diff = 0;
            for (int i = 0; i < n; i++)
                diff = fmax(diff, fabs(f[i] - g[i]) / fmaxv);
            SHARD_ENSURE(diff < 1e-8);
            count++;
            max_piv = rl.iterations > max_piv ? rl.iterations : max_piv;
            sum_piv += rl.iterations;
            max_sweeps = rp.iterations > max_sweeps ? rp.iterations : max_sweeps;
            max_res = fmax(max_res, rl.residual);
            max_pgs_res = fmax(max_pgs_res, rp.residual);
            max_diff = fmax(max_diff, diff);
            free(Bm), free(A), free(b), free(f), free(w), free(g);
        }
    free(work);
    printf("random SPD (%d problems, n = 2..30): Lemke pivots max %d, mean %.1f, residual max %.2e; PGS sweeps max "
           "%d, residual max %.2e; max |f_Lemke - f_PGS| / max(1, |f|) = %.2e\n",
           count, max_piv, (double)sum_piv / count, max_res, max_sweeps, max_pgs_res, max_diff);
}

/* checks, random PSD problems of rank max(1, n/2): A = B B^T / n with B n x rank; a known solution f*, w* (half
 * the contacts pressed with f* > 0, w* = 0; the others f* = 0 and w* >= 0, one in four of them 0: degenerate) gives
 * b = w* - A f*.  Every other problem has integer data (B in {-2 .. 2}, f* and w* in {0, 1}), so that ratios tie
 * exactly.  Lemke's w agrees with w* to 1e-9 (w is unique for symmetric PSD A), as does PGS's w; their f may
 * differ (reported). */
static void test_random_psd(void)
{
    uint64_t st = 0x5eed0002ull;
    int count = 0, max_piv = 0, max_sweeps = 0;
    double max_wl = 0, max_wp = 0, max_fdiff = 0, max_res = 0;
    for (int n = 2; n <= 30; n++)
        for (int rep = 0; rep < 2; rep++) {
            int rank = n / 2 > 1 ? n / 2 : 1;
            double *Bm = malloc(sizeof(double) * n * rank), *A = malloc(sizeof(double) * n * n);
            double *b = malloc(sizeof(double) * n), *f = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
            double *g = malloc(sizeof(double) * n), *wp = malloc(sizeof(double) * n);
            double *fs = malloc(sizeof(double) * n), *ws = malloc(sizeof(double) * n);
            int integer = rep == 1;
            for (int i = 0; i < n * rank; i++)
                Bm[i] = integer ? (double)(int64_t)(shard_test_next(&st) % 5) - 2 : shard_test_rnd(&st);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int k = 0; k < rank; k++)
                        s += Bm[i * rank + k] * Bm[j * rank + k];
                    A[i * n + j] = s / n;
                }
            for (int i = 0; i < n; i++) {
                uint64_t u = shard_test_next(&st);
                int pressed = u & 1, degenerate = (u >> 1 & 3) == 0;
                fs[i] = pressed ? (integer ? 1 : 0.5 + 0.5 * shard_test_rnd(&st)) : 0;
                ws[i] = pressed || degenerate ? 0 : (integer ? 1 : 0.5 + 0.5 * shard_test_rnd(&st));
            }
            double wscale = 0;
            for (int i = 0; i < n; i++) {
                double s = 0;
                for (int j = 0; j < n; j++)
                    s += A[i * n + j] * fs[j];
                b[i] = ws[i] - s;
                wscale = fmax(wscale, fabs(b[i]));
            }
            shard_lcp_result rl = shard_lcp_lemke(n, A, b, NULL, NULL, f, w);
            SHARD_ENSURE(rl.status == SHARD_LCP_SOLVED && rl.residual <= 1e-10);
            memset(g, 0, sizeof(double) * n);
            shard_lcp_pgs_def def = {.max_sweeps = 500000, .tolerance = 1e-11};
            shard_lcp_result rp = shard_lcp_pgs(n, A, b, &def, g, wp);
            SHARD_ENSURE(rp.status == SHARD_LCP_SOLVED);
            double dl = 0, dp = 0, df = 0;
            for (int i = 0; i < n; i++) {
                dl = fmax(dl, fabs(w[i] - ws[i]) / wscale);
                dp = fmax(dp, fabs(wp[i] - ws[i]) / wscale);
                df = fmax(df, fabs(f[i] - g[i]));
            }
            SHARD_ENSURE(dl < 1e-9 && dp < 1e-9);
            count++;
            max_piv = rl.iterations > max_piv ? rl.iterations : max_piv;
            max_sweeps = rp.iterations > max_sweeps ? rp.iterations : max_sweeps;
            max_wl = fmax(max_wl, dl), max_wp = fmax(max_wp, dp), max_fdiff = fmax(max_fdiff, df);
            max_res = fmax(max_res, rl.residual);
            free(Bm), free(A), free(b), free(f), free(w), free(g), free(wp), free(fs), free(ws);
        }
    printf("random PSD (%d problems, rank n/2, half with integer data): Lemke pivots max %d, residual max %.2e, "
           "|w - w*| max %.2e; PGS sweeps max %d, |w - w*| max %.2e; max |f_Lemke - f_PGS| = %.2e (not unique)\n",
           count, max_piv, max_res, max_wl, max_sweeps, max_wp, max_fdiff);
}

/* checks: the statuses */
static void test_status(void)
{
    double f[2], w[2];
    double A0[1] = {0}, b0[1] = {-1};
    SHARD_ENSURE(shard_lcp_lemke(1, A0, b0, NULL, NULL, f, w).status == SHARD_LCP_NO_SOLUTION);
    /* w1 + w2 = -2 whatever f: infeasible; Lemke ends on a ray after one pivot */
    double A1[4] = {1, -1, -1, 1}, b1[2] = {-1, -1};
    shard_lcp_result r = shard_lcp_lemke(2, A1, b1, NULL, NULL, f, w);
    printf("infeasible PSD problem: Lemke %s after %d pivot(s)\n", shard_lcp_status_name(r.status), r.iterations);
    SHARD_ENSURE(r.status == SHARD_LCP_NO_SOLUTION);
    shard_lcp_pgs_def def = {.max_sweeps = 50, .tolerance = 1e-10};
    f[0] = f[1] = 0;
    SHARD_ENSURE(shard_lcp_pgs(2, A1, b1, &def, f, w).status == SHARD_LCP_ITERATION_LIMIT);
    /* a problem that needs 3 pivots (z0, f_1, f_0), given 2 */
    double A2[4] = {2, 1, 1, 2}, b2[2] = {-1, -1};
    shard_lcp_lemke_def ld = shard_lcp_lemke_default_def();
    ld.max_pivots = 2;
    SHARD_ENSURE(shard_lcp_lemke(2, A2, b2, &ld, NULL, f, w).status == SHARD_LCP_ITERATION_LIMIT);
    r = shard_lcp_lemke(2, A2, b2, NULL, NULL, f, w);
    SHARD_ENSURE(r.status == SHARD_LCP_SOLVED && r.iterations == 3);
    SHARD_ENSURE_NEAR(f[0], 1.0 / 3, 1e-15);
    SHARD_ENSURE_NEAR(f[1], 1.0 / 3, 1e-15);
    /* b >= 0: f = 0 without a pivot */
    double b3[2] = {0, 1};
    r = shard_lcp_lemke(2, A2, b3, NULL, NULL, f, w);
    SHARD_ENSURE(r.status == SHARD_LCP_SOLVED && r.iterations == 0 && f[0] == 0 && f[1] == 0 && w[1] == 1);
    double An[4] = {2, NAN, 1, 2};
    SHARD_ENSURE(shard_lcp_lemke(2, An, b2, NULL, NULL, f, w).status == SHARD_LCP_BAD_INPUT);
    double Az[4] = {0, 0, 0, 2};
    SHARD_ENSURE(shard_lcp_pgs(2, Az, b2, NULL, f, w).status == SHARD_LCP_BAD_INPUT);
    SHARD_ENSURE(strcmp(shard_lcp_status_name(SHARD_LCP_NO_SOLUTION), "no solution") == 0);
}

/* Contact frames on the slope (x up the slope, y its normal, z across): normal y, tangents turned by phi about
 * the normal, so that neither tangent lies along the slope. */
static void slope_frame(double phi, double d[3][3])
{
    double n[3] = {0, 1, 0}, t1[3] = {cos(phi), 0, -sin(phi)}, t2[3];
    cross(t1, n, t2); /* t1 x n: in the slope plane, normal to t1 */
    memcpy(d[0], n, sizeof n), memcpy(d[1], t1, sizeof t1), memcpy(d[2], t2, sizeof t2);
}

/* The world tangential vector of contact k: f_t1 t1 + f_t2 t2. */
static void tangential(const double *fk, const double d[3][3], double out[3])
{
    for (int j = 0; j < 3; j++)
        out[j] = fk[1] * d[1][j] + fk[2] * d[2][j];
}

/* checks, point mass on a slope (A = I/m in the contact frame), mu = 0.5: at tan(theta) = 0.25 it sticks with
 * f_n = m g cos, f_t = m g sin up the slope, w = 0; at tan(theta) = 1 it slips with |f_t| = mu f_n up the slope,
 * the tangential acceleration g (sin - mu cos) down it */
static void test_friction_point(void)
{
    double mu = 0.5, m = 3, phi = M_PI / 6;
    double d[3][3];
    slope_frame(phi, d);
    for (int slip = 0; slip < 2; slip++) {
        double th = atan(slip ? 1.0 : 0.25);
        double gs[3] = {-G * sin(th), -G * cos(th), 0}; /* gravity in slope coordinates */
        body B = {.m = m, .Iinv = {1, 0, 0, 0, 1, 0, 0, 0, 1}, .g = {gs[0], gs[1], gs[2]}};
        double r[3][3] = {{0}}, A[9], b[3], f[3] = {0, 0, 0}, w[3];
        build(&B, 3, (const double(*)[3])r, (const double(*)[3])d, A, b);
        shard_lcp_result res = shard_lcp_pgs_friction(1, A, b, &mu, NULL, f, w);
        double ft[3], wt[3];
        tangential(f, d, ft);
        for (int j = 0; j < 3; j++)
            wt[j] = w[1] * d[1][j] + w[2] * d[2][j];
        double fn = m * G * cos(th);
        printf("point mass on a slope, tan = %.2f, mu = %.2f: %s in %d sweeps, f_n = %.12f (m g cos %.12f), f_t = "
               "(%.12f, %.2e, %.2e) (%s %.12f), w_t = (%.12f, %.2e)\n",
               tan(th), mu, shard_lcp_status_name(res.status), res.iterations, f[0], fn, ft[0], ft[1], ft[2],
               slip ? "mu f_n" : "m g sin", slip ? mu * fn : m * G * sin(th), wt[0], wt[2]);
        SHARD_ENSURE(res.status == SHARD_LCP_SOLVED);
        SHARD_ENSURE_NEAR(f[0], fn, 1e-12 * fn);
        SHARD_ENSURE(fabs(ft[1]) < 1e-12 * fn && fabs(ft[2]) < 1e-12 * fn && fabs(w[0]) < 1e-12 * G);
        if (!slip) {
            SHARD_ENSURE_NEAR(ft[0], m * G * sin(th), 1e-12 * fn);
            SHARD_ENSURE(fabs(wt[0]) < 1e-12 * G && fabs(wt[2]) < 1e-12 * G);
        } else {
            SHARD_ENSURE_NEAR(ft[0], mu * fn, 1e-12 * fn);
            SHARD_ENSURE_NEAR(wt[0], -G * (sin(th) - mu * cos(th)), 1e-12 * G);
            SHARD_ENSURE(fabs(wt[2]) < 1e-12 * G);
        }
    }
}

/* checks, a box (half-sides 0.4, 0.25, 0.3) on four corners of a slope, mu = 0.5, tangents turned 30 degrees:
 *   tan(theta) = 0.25: sticks: w = 0 at every contact (12 rows), sum f_n = m g cos, sum f_t = m g sin up the
 *   slope, no angular acceleration, every |f_t| <= mu f_n;
 *   tan(theta) = 1: slips: w_n = 0, every contact accelerates by g (sin - mu cos) down the slope, every
 *   f_t = mu f_n up the slope, sum f_n = m g cos, no angular acceleration (h mu < a: it does not tip);
 *   in both, the downhill corners carry more: the friction at the base, h below the centre, is balanced by
 *   sum x_k f_n,k = -h sum f_t (-h m g sin sticking, -h mu m g cos slipping). */
static void test_friction_box(void)
{
    double a = 0.4, h = 0.25, c = 0.3, mu = 0.5, phi = M_PI / 6;
    double mus[4] = {mu, mu, mu, mu}, frame[3][3], r4[4][3], n4[4][3];
    slope_frame(phi, frame);
    corners(a, h, c, r4, n4);
    double r[12][3], d[12][3];
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 3; j++)
            memcpy(r[3 * k + j], r4[k], sizeof r4[k]), memcpy(d[3 * k + j], frame[j], sizeof frame[j]);
    for (int slip = 0; slip < 2; slip++) {
        double th = atan(slip ? 1.0 : 0.25);
        double gs[3] = {-G * sin(th), -G * cos(th), 0};
        body B = box_body(a, h, c, gs);
        double A[144], b[12], f[12] = {0}, w[12], acc[3], alpha[3];
        build(&B, 12, (const double(*)[3])r, (const double(*)[3])d, A, b);
        shard_lcp_pgs_def def = {.max_sweeps = 200000, .tolerance = 1e-12};
        shard_lcp_result res = shard_lcp_pgs_friction(4, A, b, mus, &def, f, w);
        accelerations(&B, 12, (const double(*)[3])r, (const double(*)[3])d, f, acc, alpha);
        double fn = 0, ft[3] = {0, 0, 0}, xm = 0, worst_cone = 0, worst_dir = 0, worst_w = 0;
        double mg = B.m * G, want_a = slip ? -G * (sin(th) - mu * cos(th)) : 0;
        double want_ft = slip ? mu * cos(th) : sin(th); /* sum f_t / (m g), up the slope */
        for (int k = 0; k < 4; k++) {
            double t[3], wt[3];
            tangential(f + 3 * k, frame, t);
            for (int j = 0; j < 3; j++)
                ft[j] += t[j], wt[j] = w[3 * k + 1] * frame[1][j] + w[3 * k + 2] * frame[2][j];
            fn += f[3 * k];
            xm += r4[k][0] * f[3 * k];
            double tn = hypot(f[3 * k + 1], f[3 * k + 2]);
            worst_cone = fmax(worst_cone, tn - mu * f[3 * k]);
            if (slip) /* at the limit and up the slope */
                worst_dir = fmax(worst_dir, fmax(fabs(tn - mu * f[3 * k]), fmax(fabs(t[1]), fabs(t[2]))) / mg);
            worst_w = fmax(worst_w, fmax(fabs(w[3 * k]), fmax(fabs(wt[0] - want_a), fabs(wt[2]))) / G);
        }
        double amax = fmax(fabs(alpha[0]), fmax(fabs(alpha[1]), fabs(alpha[2])));
        printf("box on a slope, tan = %.2f, mu = %.2f: %s in %d sweeps (residual %.1e), f_n = (%.4f, %.4f, %.4f, "
               "%.4f) sum/(m g cos) - 1 = %.1e, sum f_t/(m g) = (%.12f, %.1e, %.1e) (want %.12f), contact "
               "accelerations off by %.1e g, max|alpha| %.1e, cone excess %.1e, sum x f_n / (-h sum f_t) = %.12f\n",
               tan(th), mu, shard_lcp_status_name(res.status), res.iterations, res.residual, f[0], f[3], f[6], f[9],
               fn / (mg * cos(th)) - 1, ft[0] / mg, ft[1] / mg, ft[2] / mg, want_ft, worst_w, amax, worst_cone,
               xm / (-h * want_ft * mg));
        SHARD_ENSURE(res.status == SHARD_LCP_SOLVED);
        SHARD_ENSURE_NEAR(fn / (mg * cos(th)), 1, 1e-9);
        SHARD_ENSURE_NEAR(ft[0] / mg, want_ft, 1e-9);
        SHARD_ENSURE_NEAR(xm / (-h * want_ft * mg), 1, 1e-9);
        SHARD_ENSURE(fabs(ft[1]) < 1e-9 * mg && fabs(ft[2]) < 1e-9 * mg);
        SHARD_ENSURE(worst_w < 1e-9 && amax < 1e-9 * G && worst_cone < 1e-9 * mg);
        SHARD_ENSURE_NEAR(acc[0], want_a, 1e-9 * G);
        if (slip)
            SHARD_ENSURE(worst_dir < 1e-9);
        for (int k = 0; k < 4; k++)
            SHARD_ENSURE(f[3 * k] >= 0);
    }
}

int main(void)
{
    test_incline();
    test_box();
    test_random_spd();
    test_random_psd();
    test_status();
    test_friction_point();
    test_friction_box();
    return SHARD_TEST_RESULT();
}
