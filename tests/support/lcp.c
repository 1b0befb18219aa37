/* LCP: Lemke's method, projected Gauss-Seidel with and without friction, residuals (see lcp.h). */
#include "lcp.h"

#include "shard/base.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *shard_lcp_status_name(shard_lcp_status status)
{
    switch (status) {
    case SHARD_LCP_SOLVED:
        return "solved";
    case SHARD_LCP_NO_SOLUTION:
        return "no solution";
    case SHARD_LCP_ITERATION_LIMIT:
        return "iteration limit";
    case SHARD_LCP_INACCURATE:
        return "inaccurate";
    case SHARD_LCP_BAD_INPUT:
        return "bad input";
    }
    return "unknown status";
}

/* sum_j a[j] x[j], j ascending (the order is part of the result's bits) */
static double shard_lcp_dot(int n, const double *a, const double *x)
{
    double s = 0;
    for (int j = 0; j < n; j++)
        s += a[j] * x[j];
    return s;
}

static double shard_lcp_max_abs(size_t n, const double *x)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(x[i]));
    return m;
}

static int shard_lcp_finite(size_t n, const double *x)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

/* The scale of f in units of w at row i: A_ii, or the largest diagonal entry where A_ii <= 0. */
static double shard_lcp_diag_scale(int n, const double *A, int i)
{
    double d = A[(size_t)i * n + i];
    if (d > 0)
        return d;
    double m = 0;
    for (int k = 0; k < n; k++)
        m = fmax(m, A[(size_t)k * n + k]);
    return m > 0 ? m : 1.0;
}

/* max|b|, or the smallest normal double for b = 0 (so that only f = 0 has a small residual) */
static double shard_lcp_load_scale(size_t n, const double *b)
{
    double s = shard_lcp_max_abs(n, b);
    return s > 0 ? s : 0x1p-1022;
}

double shard_lcp_residual(int n, const double *A, const double *b, const double *f, double *w)
{
    double r = 0;
    for (int i = 0; i < n; i++) {
        w[i] = b[i] + shard_lcp_dot(n, A + (size_t)i * n, f);
        r = fmax(r, fabs(fmin(shard_lcp_diag_scale(n, A, i) * f[i], w[i])));
    }
    return r / shard_lcp_load_scale((size_t)n, b);
}

/* ---- Lemke ---------------------------------------------------------------------------------------------------- */

shard_lcp_lemke_def shard_lcp_lemke_default_def(void)
{
    return (shard_lcp_lemke_def){.max_pivots = 0, .pivot_tol = 1e-10, .tie_tol = 1e-10, .accept_tol = 1e-8};
}

/* Workspace layout: doubles first (tableau n(2n+2), A_CC n^2, rhs n, two candidate forces 2n, one w n), then
 * ints (basis n, C list n). */
size_t shard_lcp_lemke_work_bytes(int n)
{
    size_t m = n > 0 ? (size_t)n : 0;
    return (m * (2 * m + 2) + m * m + 4 * m) * sizeof(double) + 2 * m * sizeof(int);
}

static int shard_lcp_same(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* Whether row i precedes row j in the lexicographic order of (T_i,0 .. T_i,n-1) / di against the same of j (the
 * rows of the basis inverse: the tableau's w columns started as the identity); equal rows do not precede. */
static int shard_lcp_lex_less(const double *T, size_t cols, int n, int i, double di, int j, double dj, double tol)
{
    for (int k = 0; k < n; k++) {
        double a = T[i * cols + k] / di, b = T[j * cols + k] / dj;
        if (!shard_lcp_same(a, b, tol))
            return a < b;
    }
    return 0;
}

/* Gauss-Jordan pivot on (r, c): column c becomes the unit vector e_r. */
static void shard_lcp_pivot(double *T, size_t cols, int n, int r, int c)
{
    double *row = T + (size_t)r * cols;
    double inv = 1.0 / row[c];
    for (size_t k = 0; k < cols; k++)
        row[k] *= inv;
    row[c] = 1.0;
    for (int i = 0; i < n; i++) {
        if (i == r)
            continue;
        double *ri = T + (size_t)i * cols;
        double m = ri[c];
        if (m == 0)
            continue;
        for (size_t k = 0; k < cols; k++)
            ri[k] -= m * row[k];
        ri[c] = 0.0;
    }
}

/* Solves M x = y (m x m, row-major, overwritten) by Gaussian elimination with partial pivoting (the first row of
 * largest magnitude on a tie); x overwrites y.  Returns 0 when a pivot is below 1e-14 of the largest entry. */
static int shard_lcp_solve_dense(int m, double *M, double *y)
{
    double big = shard_lcp_max_abs((size_t)m * m, M);
    if (!(big > 0))
        return 0;
    for (int k = 0; k < m; k++) {
        int p = k;
        for (int i = k + 1; i < m; i++)
            if (fabs(M[(size_t)i * m + k]) > fabs(M[(size_t)p * m + k]))
                p = i;
        if (!(fabs(M[(size_t)p * m + k]) > 1e-14 * big))
            return 0;
        if (p != k) {
            for (int j = 0; j < m; j++) {
                double t = M[(size_t)k * m + j];
                M[(size_t)k * m + j] = M[(size_t)p * m + j], M[(size_t)p * m + j] = t;
            }
            double t = y[k];
            y[k] = y[p], y[p] = t;
        }
        for (int i = k + 1; i < m; i++) {
            double l = M[(size_t)i * m + k] / M[(size_t)k * m + k];
            if (l == 0)
                continue;
            for (int j = k; j < m; j++)
                M[(size_t)i * m + j] -= l * M[(size_t)k * m + j];
            y[i] -= l * y[k];
        }
    }
    for (int k = m - 1; k >= 0; k--) {
        double s = y[k];
        for (int j = k + 1; j < m; j++)
            s -= M[(size_t)k * m + j] * y[j];
        y[k] = s / M[(size_t)k * m + k];
    }
    return 1;
}

shard_lcp_result shard_lcp_lemke(int n, const double *A, const double *b, const shard_lcp_lemke_def *def,
                                 void *work, double *f, double *w)
{
    shard_lcp_result res = {SHARD_LCP_SOLVED, 0, 0.0};
    if (n < 0 || (n > 0 && (!shard_lcp_finite((size_t)n * n, A) || !shard_lcp_finite((size_t)n, b)))) {
        res.status = SHARD_LCP_BAD_INPUT;
        return res;
    }
    shard_lcp_lemke_def opt = def ? *def : shard_lcp_lemke_default_def();
    int max_pivots = opt.max_pivots > 0 ? opt.max_pivots : 20 * n + 100;
    for (int i = 0; i < n; i++)
        f[i] = 0;
    int any_negative = 0;
    for (int i = 0; i < n; i++)
        any_negative |= b[i] < 0;
    if (!any_negative) { /* f = 0, w = b >= 0 */
        res.residual = shard_lcp_residual(n, A, b, f, w);
        return res;
    }
    double sA = shard_lcp_max_abs((size_t)n * n, A), sb = shard_lcp_max_abs((size_t)n, b);
    if (!(sA > 0)) { /* A = 0 and some b_i < 0: w_i = b_i < 0 whatever f */
        res.status = SHARD_LCP_NO_SOLUTION;
        res.residual = shard_lcp_residual(n, A, b, f, w);
        return res;
    }

    void *owned = NULL;
    if (!work)
        work = owned = shard_malloc(shard_lcp_lemke_work_bytes(n));
    size_t m = (size_t)n, cols = 2 * m + 2;
    double *T = work, *Acc = T + m * cols, *rhs = Acc + m * m, *f_tab = rhs + m, *f_pol = f_tab + m,
           *w_tmp = f_pol + m, *rowscale = rhs; /* rhs is free until the final solve */
    int *basis = (int *)(w_tmp + m), *C = basis + m;
    const size_t z0 = 2 * m, q = 2 * m + 1; /* columns: w_j = j, f_j = n + j, z0, right-hand side */

    /* w - (A/sA)(f sA/sb) - e z0 = b/sb: the scaled unknowns are w/sb and f sA/sb */
    for (size_t i = 0; i < m; i++) {
        double *row = T + i * cols;
        for (size_t j = 0; j < m; j++) {
            row[j] = i == j;
            row[m + j] = -A[i * m + j] / sA;
        }
        row[z0] = -1;
        row[q] = b[i] / sb;
        basis[i] = (int)i;
    }

    /* z0 enters at the most negative rhs: the lexicographic minimum of (rhs_i, row i of the basis inverse) */
    double theta = T[q];
    for (size_t i = 1; i < m; i++)
        theta = fmin(theta, T[i * cols + q]);
    int r = -1;
    for (int i = 0; i < n; i++) {
        if (!shard_lcp_same(T[i * cols + q], theta, opt.tie_tol))
            continue;
        if (r < 0 || shard_lcp_lex_less(T, cols, n, i, 1.0, r, 1.0, opt.tie_tol))
            r = i;
    }
    shard_lcp_pivot(T, cols, n, r, (int)z0);
    int leaving = basis[r];
    basis[r] = (int)z0;
    res.iterations = 1;

    for (;;) {
        int c = leaving < n ? leaving + n : leaving - n; /* the complement of the variable that left */
        /* row i may leave if T_ic stands above its rounding: T_ic = (row i of B^-1) . (column c of [I, -A, -e]),
         * whose entries are at most 1, so its error scales with the largest entry of row i of B^-1 */
        for (size_t i = 0; i < m; i++)
            rowscale[i] = opt.pivot_tol * shard_lcp_max_abs(m, T + i * cols);
        /* z0 at zero within the same rounding: the almost-complementary point is already complementary (the pair
         * of the entering variable is nonbasic, both 0), so it solves the LCP.  A tie that rounding hid from the
         * ratio test ends here instead of running on (or onto a ray) with z0 = 1e-16. */
        int z0_row = 0;
        while ((size_t)basis[z0_row] != z0)
            z0_row++;
        if (T[(size_t)z0_row * cols + q] <= rowscale[z0_row])
            break;
        if (res.iterations >= max_pivots) {
            res.status = SHARD_LCP_ITERATION_LIMIT;
            break;
        }
        /* minimum ratio */
        theta = INFINITY;
        for (size_t i = 0; i < m; i++) {
            double d = T[i * cols + c];
            if (d > rowscale[i])
                theta = fmin(theta, T[i * cols + q] / d);
        }
        if (theta == INFINITY) {
            res.status = SHARD_LCP_NO_SOLUTION;
            break;
        }
        /* z0's row if it ties, else the lexicographic minimum among the tied rows */
        r = -1;
        for (int i = 0; i < n; i++) {
            double d = T[i * cols + c];
            if (!(d > rowscale[i]) || !shard_lcp_same(T[i * cols + q] / d, theta, opt.tie_tol))
                continue;
            if ((size_t)basis[i] == z0) {
                r = i;
                break;
            }
            if (r < 0 || shard_lcp_lex_less(T, cols, n, i, d, r, T[r * cols + c], opt.tie_tol))
                r = i;
        }
        shard_lcp_pivot(T, cols, n, r, c);
        leaving = basis[r];
        basis[r] = c;
        res.iterations++;
        if ((size_t)leaving == z0)
            break;
    }

    if (res.status == SHARD_LCP_SOLVED) {
        /* the tableau's forces, and the same basis solved again on the original A */
        int nc = 0;
        for (int j = 0; j < n; j++)
            f_tab[j] = f_pol[j] = 0;
        for (int i = 0; i < n; i++)
            if (basis[i] >= n && basis[i] < 2 * n) {
                f_tab[basis[i] - n] = T[(size_t)i * cols + q] * sb / sA;
                C[nc++] = basis[i] - n;
            }
        /* C ascending (insertion sort: the order fixes the bits of the solve) */
        for (int i = 1; i < nc; i++)
            for (int k = i; k > 0 && C[k] < C[k - 1]; k--) {
                int t = C[k];
                C[k] = C[k - 1], C[k - 1] = t;
            }
        for (int j = 0; j < n; j++)
            f_tab[j] = fmax(f_tab[j], 0.0);
        double r_tab = shard_lcp_residual(n, A, b, f_tab, w_tmp);
        for (int a = 0; a < nc; a++) {
            for (int k = 0; k < nc; k++)
                Acc[(size_t)a * nc + k] = A[(size_t)C[a] * m + C[k]];
            rhs[a] = -b[C[a]];
        }
        int polished = nc > 0 && shard_lcp_solve_dense(nc, Acc, rhs);
        double r_pol = INFINITY;
        if (polished) {
            for (int a = 0; a < nc; a++)
                f_pol[C[a]] = fmax(rhs[a], 0.0);
            r_pol = shard_lcp_residual(n, A, b, f_pol, w_tmp);
        }
        memcpy(f, r_pol <= r_tab ? f_pol : f_tab, m * sizeof(double));
    } else {
        /* the last iterate's forces, for a caller that wants to look */
        for (int i = 0; i < n; i++)
            if (basis[i] >= n && basis[i] < 2 * n)
                f[basis[i] - n] = fmax(T[(size_t)i * cols + q] * sb / sA, 0.0);
    }
    res.residual = shard_lcp_residual(n, A, b, f, w);
    if (res.status == SHARD_LCP_SOLVED && !(res.residual <= opt.accept_tol))
        res.status = SHARD_LCP_INACCURATE;
    free(owned);
    return res;
}

/* ---- projected Gauss-Seidel ----------------------------------------------------------------------------------- */

shard_lcp_pgs_def shard_lcp_pgs_default_def(void)
{
    return (shard_lcp_pgs_def){.max_sweeps = 10000, .tolerance = 1e-10};
}

shard_lcp_result shard_lcp_pgs(int n, const double *A, const double *b, const shard_lcp_pgs_def *def, double *f,
                               double *w)
{
    shard_lcp_result res = {SHARD_LCP_ITERATION_LIMIT, 0, 0.0};
    shard_lcp_pgs_def opt = def ? *def : shard_lcp_pgs_default_def();
    if (n < 0 || (n > 0 && (!shard_lcp_finite((size_t)n * n, A) || !shard_lcp_finite((size_t)n, b) ||
                            !shard_lcp_finite((size_t)n, f)))) {
        res.status = SHARD_LCP_BAD_INPUT;
        return res;
    }
    for (int i = 0; i < n; i++)
        if (!(A[(size_t)i * n + i] > 0)) {
            res.status = SHARD_LCP_BAD_INPUT;
            return res;
        }
    double s = shard_lcp_load_scale((size_t)n, b);
    for (int i = 0; i < n; i++)
        f[i] = fmax(f[i], 0.0);
    while (res.iterations < opt.max_sweeps) {
        res.iterations++;
        double change = 0;
        for (int i = 0; i < n; i++) {
            const double *row = A + (size_t)i * n;
            double wi = b[i] + shard_lcp_dot(n, row, f);
            double fi = fmax(0.0, f[i] - wi / row[i]);
            change = fmax(change, row[i] * fabs(fi - f[i]));
            f[i] = fi;
        }
        if (change <= opt.tolerance * s) {
            res.residual = shard_lcp_residual(n, A, b, f, w);
            if (res.residual <= opt.tolerance) {
                res.status = SHARD_LCP_SOLVED;
                return res;
            }
        }
    }
    res.residual = shard_lcp_residual(n, A, b, f, w);
    if (res.residual <= opt.tolerance)
        res.status = SHARD_LCP_SOLVED;
    return res;
}

/* ---- friction ------------------------------------------------------------------------------------------------- */

/* 1 / lambda_max of the symmetric part of the tangential block of contact i (rows and columns 3i+1, 3i+2), or 0
 * when lambda_max <= 0. */
static double shard_lcp_tangent_step(int nc, const double *A, int i)
{
    size_t N = 3 * (size_t)nc, t1 = 3 * (size_t)i + 1, t2 = t1 + 1;
    double a = A[t1 * N + t1], d = A[t2 * N + t2], c = 0.5 * (A[t1 * N + t2] + A[t2 * N + t1]);
    double h = 0.5 * (a - d);
    double lmax = 0.5 * (a + d) + sqrt(h * h + c * c);
    return lmax > 0 ? 1.0 / lmax : 0.0;
}

/* g <- its projection onto the disc of radius R >= 0 */
static void shard_lcp_disc(double g[2], double R)
{
    double len = sqrt(g[0] * g[0] + g[1] * g[1]);
    if (len > R) {
        double s = R > 0 ? R / len : 0.0;
        g[0] *= s, g[1] *= s;
    }
}

double shard_lcp_friction_residual(int nc, const double *A, const double *b, const double *mu, const double *f,
                                   double *w)
{
    int N = 3 * nc;
    for (int i = 0; i < N; i++)
        w[i] = b[i] + shard_lcp_dot(N, A + (size_t)i * N, f);
    double r = 0;
    for (int i = 0; i < nc; i++) {
        size_t n0 = 3 * (size_t)i;
        double ann = A[n0 * N + n0];
        r = fmax(r, fabs(fmin((ann > 0 ? ann : 1.0) * f[n0], w[n0])));
        double rho = shard_lcp_tangent_step(nc, A, i);
        if (rho > 0) {
            double g[2] = {f[n0 + 1] - rho * w[n0 + 1], f[n0 + 2] - rho * w[n0 + 2]};
            shard_lcp_disc(g, mu[i] * fmax(f[n0], 0.0));
            r = fmax(r, hypot(f[n0 + 1] - g[0], f[n0 + 2] - g[1]) / rho);
        }
    }
    return r / shard_lcp_load_scale((size_t)N, b);
}

shard_lcp_result shard_lcp_pgs_friction(int nc, const double *A, const double *b, const double *mu,
                                        const shard_lcp_pgs_def *def, double *f, double *w)
{
    shard_lcp_result res = {SHARD_LCP_ITERATION_LIMIT, 0, 0.0};
    shard_lcp_pgs_def opt = def ? *def : shard_lcp_pgs_default_def();
    size_t N = nc > 0 ? 3 * (size_t)nc : 0;
    if (nc < 0 || (nc > 0 && (!shard_lcp_finite(N * N, A) || !shard_lcp_finite(N, b) || !shard_lcp_finite(N, f) ||
                              !shard_lcp_finite((size_t)nc, mu)))) {
        res.status = SHARD_LCP_BAD_INPUT;
        return res;
    }
    for (int i = 0; i < nc; i++) {
        size_t n0 = 3 * (size_t)i;
        if (!(A[n0 * N + n0] > 0) || !(shard_lcp_tangent_step(nc, A, i) > 0) || !(mu[i] >= 0)) {
            res.status = SHARD_LCP_BAD_INPUT;
            return res;
        }
    }
    double s = shard_lcp_load_scale(N, b);
    int n = (int)N;
    for (int i = 0; i < nc; i++) { /* start inside the cone */
        double *fi = f + 3 * (size_t)i;
        fi[0] = fmax(fi[0], 0.0);
        double g[2] = {fi[1], fi[2]};
        shard_lcp_disc(g, mu[i] * fi[0]);
        fi[1] = g[0], fi[2] = g[1];
    }
    while (res.iterations < opt.max_sweeps) {
        res.iterations++;
        double change = 0;
        for (int i = 0; i < nc; i++) {
            size_t n0 = 3 * (size_t)i;
            const double *rn = A + n0 * N, *r1 = rn + N, *r2 = r1 + N;
            double ann = rn[n0];
            double wn = b[n0] + shard_lcp_dot(n, rn, f);
            double fn = fmax(0.0, f[n0] - wn / ann);
            change = fmax(change, ann * fabs(fn - f[n0]));
            f[n0] = fn;
            double rho = shard_lcp_tangent_step(nc, A, i);
            double w1 = b[n0 + 1] + shard_lcp_dot(n, r1, f), w2 = b[n0 + 2] + shard_lcp_dot(n, r2, f);
            double g[2] = {f[n0 + 1] - rho * w1, f[n0 + 2] - rho * w2};
            shard_lcp_disc(g, mu[i] * fn);
            change = fmax(change, hypot(g[0] - f[n0 + 1], g[1] - f[n0 + 2]) / rho);
            f[n0 + 1] = g[0], f[n0 + 2] = g[1];
        }
        if (change <= opt.tolerance * s) {
            res.residual = shard_lcp_friction_residual(nc, A, b, mu, f, w);
            if (res.residual <= opt.tolerance) {
                res.status = SHARD_LCP_SOLVED;
                return res;
            }
        }
    }
    res.residual = shard_lcp_friction_residual(nc, A, b, mu, f, w);
    if (res.residual <= opt.tolerance)
        res.status = SHARD_LCP_SOLVED;
    return res;
}
