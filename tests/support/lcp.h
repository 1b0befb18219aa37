/* LCP: dense solvers of the linear complementarity problem of contact forces, for small problems checked exactly.
 *
 * The problem (Baraff 1989): given A (n x n, row-major) and b (n), find f
 * with
 *     w = A f + b,   f >= 0,   w >= 0,   f_i w_i = 0 for every i.
 * For frictionless contact f_i is the normal force at contact i and w_i the normal relative acceleration (or
 * velocity, for impulses); A = J M^-1 J^T is symmetric positive semi-definite: definite when the contacts are
 * independent, singular when they are redundant (a box on a plane with four corner contacts), in which case f is
 * not unique but w (and A f) is (for symmetric PSD A, two solutions f, g give (f - g)^T A (f - g) <= 0, hence
 * A f = A g).
 *
 * The module owns three solvers and the residuals that judge them:
 *   - shard_lcp_lemke: Lemke's complementary pivoting with the covering vector e = (1, ..., 1) and the
 *     lexicographic minimum-ratio rule against cycling (C. E. Lemke, "Bimatrix equilibrium points and
 *     mathematical programming", Management Science 11, 1965; R. W. Cottle, J.-S. Pang & R. E. Stone, "The
 *     Linear Complementarity Problem", Academic Press 1992, chapter 4).  For a PSD A (copositive-plus)
 *     it either ends with a solution or on a secondary ray, and a ray then proves that no solution exists.  It
 *     was chosen over the Cottle-Dantzig principal pivoting that Baraff 1994 ("Fast contact force computation
 *     for non-penetrating rigid bodies", SIGGRAPH 94) uses because its termination theory covers singular PSD
 *     matrices and degenerate starts (four equal corner loads) without special cases; it is the exact reference,
 *     not the production solver (O(n^2) per pivot on a dense tableau);
 *   - shard_lcp_pgs: projected Gauss-Seidel, the cross-check and the shape of the iterative solver to come;
 *   - shard_lcp_pgs_friction: projected Gauss-Seidel on contacts with Coulomb friction (exact cone).
 * Everything is Local and deterministic: fixed loop orders, no threads, no randomness; the same inputs give the
 * same bits.
 *
 * Residual (all solvers report it): with w = A f + b and d_i = A_ii (or the largest diagonal entry where
 * A_ii <= 0), the natural-map residual
 *     r = max_i |min(d_i f_i, w_i)| / max_i |b_i|,
 * dimensionless: d_i f_i is the acceleration f_i alone would cause at contact i, so r compares each violation of
 * f >= 0, w >= 0 or f_i w_i = 0 with the loads.  r = 0 exactly at a solution; r <= tol means every condition
 * holds to tol * max|b| in units of w.  (b = 0 has the solution f = 0; its residual is 0 for f = 0 and huge
 * otherwise.)
 */
#ifndef SHARD_LCP_H
#define SHARD_LCP_H

#include <stddef.h>

typedef enum shard_lcp_status {
    SHARD_LCP_SOLVED = 0,      /* Lemke: z0 left the basis; PGS: residual <= tolerance */
    SHARD_LCP_NO_SOLUTION,     /* Lemke: secondary ray (no eligible pivot row); for PSD A, no f >= 0 exists */
    SHARD_LCP_ITERATION_LIMIT, /* pivots or sweeps exhausted; f, w hold the last iterate */
    SHARD_LCP_INACCURATE,      /* Lemke: z0 left the basis but the residual of f exceeds accept_tol (an
                                * ill-conditioned A, or pivots on rounding); f, w hold that answer */
    SHARD_LCP_BAD_INPUT,       /* n < 0, a non-finite entry; PGS: a diagonal entry <= 0; friction: mu < 0 */
} shard_lcp_status;

typedef struct shard_lcp_result {
    shard_lcp_status status;
    int iterations;  /* Lemke: pivots, the one that brings z0 in included (0 when b >= 0; one active contact
                      * takes 2); PGS: sweeps over all contacts */
    double residual; /* of the returned f (see the top of this file; friction: shard_lcp_friction_residual) */
} shard_lcp_result;

/* Local: a short name for a status ("solved", "no solution", "iteration limit", "inaccurate", "bad input"). */
const char *shard_lcp_status_name(shard_lcp_status status);

/* Local: the natural-map residual of f (see the top of this file); writes w = A f + b (n doubles, the caller's). */
double shard_lcp_residual(int n, const double *A, const double *b, const double *f, double *w);

/* Options of shard_lcp_lemke.  The tableau is built from A / max|A_ij| and b / max|b_i|, so both tolerances are
 * relative to the problem's own scale. */
typedef struct shard_lcp_lemke_def {
    int max_pivots;   /* <= 0: 20 n + 100 */
    double pivot_tol;  /* row i may leave only if its entry in the entering column exceeds pivot_tol times the
                        * largest |entry| of row i of the current basis inverse (the tableau's w columns): that
                        * entry is the row of B^-1 times a column of the scaled data (entries <= 1), so its
                        * rounding error scales with that row.  Default 1e-10.  A threshold of 1e-12 of the
                        * column's largest entry let a random rank-deficient problem pivot on rounding and cycle
                        * to the pivot limit; with this rule 100000 random PSD problems (n <= 60, any rank, some
                        * infeasible, some with integer data) never reached the limit */
    double tie_tol;    /* two ratios a, b of the minimum-ratio test (and of the lexicographic tie-break, and the
                        * test that lets z0 leave first) are equal when |a - b| <= tie_tol * max(1, |a|, |b|);
                        * default 1e-10 */
    double accept_tol; /* a finished run whose residual exceeds this is INACCURATE, not SOLVED; default 1e-8 */
} shard_lcp_lemke_def;

/* Local: the default options. */
shard_lcp_lemke_def shard_lcp_lemke_default_def(void);

/* Local: bytes of workspace shard_lcp_lemke needs for n unknowns (the tableau n x (2n + 2), a copy of A_CC for
 * the final solve, a few vectors): about 24 n^2 bytes. */
size_t shard_lcp_lemke_work_bytes(int n);

/* Local: solves the LCP by Lemke's method.  A (n x n, row-major) and b (n) are read only; f and w (n each, the
 * caller's) receive the solution and w = A f + b.  work: shard_lcp_lemke_work_bytes(n) bytes, aligned for double,
 * owned by the caller and reused across calls; NULL makes the call allocate it once and free it.  def: NULL for
 * the defaults.
 *
 * The method: the tableau [I | -A | -e | b] in the unknowns (w, f, z0); b >= 0 is solved by f = 0 with no pivot;
 * otherwise z0 enters at the row of the smallest b_i, then each leaving variable's complement enters, rows chosen
 * by the minimum ratio rhs_i / T_ic over the rows with T_ic above the pivot tolerance, ties broken by the
 * lexicographic minimum of the rows of the current basis inverse divided by T_ic (this is Lemke's method applied
 * to b + (eps, eps^2, ...), which never repeats a basis), except that z0's row is taken whenever it ties, which
 * ends the run at once.  The run ends when z0 leaves or its value falls to rounding level (pivot_tol times the
 * largest entry of its row of B^-1), where the point is already complementary (SOLVED); when no row is eligible
 * (NO_SOLUTION); or after max_pivots pivots (ITERATION_LIMIT).
 * Polish: the tableau's values carry the rounding of every pivot; on SOLVED the basic forces are also recomputed
 * by solving A_CC f_C = -b_C (C: the contacts whose force is basic) with Gaussian elimination and partial
 * pivoting on the original A, and whichever of the two has the smaller residual is returned.  Finally any f_i < 0
 * (rounding of a degenerate basic variable) is set to 0, so f >= 0 exactly, and w = A f + b is recomputed; a
 * residual above def->accept_tol turns SOLVED into INACCURATE. */
shard_lcp_result shard_lcp_lemke(int n, const double *A, const double *b, const shard_lcp_lemke_def *def,
                                 void *work, double *f, double *w);

/* Options of the projected Gauss-Seidel solvers. */
typedef struct shard_lcp_pgs_def {
    int max_sweeps;   /* default 10000 */
    double tolerance; /* stop when the residual is <= tolerance; default 1e-10 */
} shard_lcp_pgs_def;

/* Local: the default options. */
shard_lcp_pgs_def shard_lcp_pgs_default_def(void);

/* Local: projected Gauss-Seidel.  f (n) holds the starting guess on entry (zeros for a cold start, the last
 * step's forces for a warm one) and the result on return; w (n) receives A f + b.  One sweep updates, for i = 0 ..
 * n-1 in that order, f_i <- max(0, f_i - w_i / A_ii) with w_i = (A f + b)_i from the latest f.  The largest
 * A_ii |change of f_i| over a sweep is the residual of the intermediate iterates (it is |min(A_ii f_i, w_i)|
 * at the moment f_i is visited), so it serves as the stopping test; when it falls below tolerance * max|b| the
 * residual of the final f is computed (one product A f) and the run stops if that too is below tolerance.
 * Requires A_ii > 0 (BAD_INPUT otherwise).  For symmetric PSD A with a solution the iterates converge to one,
 * linearly (Z.-Q. Luo & P. Tseng, "Error bound and convergence analysis of matrix splitting algorithms for the
 * affine variational inequality problem", SIAM J. Optim. 2(1), 1992); for redundant contacts, slowly (the random
 * rank-deficient problems of tests/unit/test_lcp.c take up to 13000 sweeps to 1e-11).  No allocation. */
shard_lcp_result shard_lcp_pgs(int n, const double *A, const double *b, const shard_lcp_pgs_def *def, double *f,
                               double *w);

/* Local: the residual of a friction problem (see shard_lcp_pgs_friction): the largest over contacts of the
 * normal term |min(A_nn f_n, w_n)| and of the tangential term |f_t - P(f_t - rho w_t)| / rho, with P the
 * projection onto the disc of radius mu max(f_n, 0) and rho = 1 / (largest eigenvalue of the contact's symmetric
 * 2x2 tangential block), divided by max_i |b_i|.  It is 0 exactly when f satisfies the friction conditions below.
 * Writes w = A f + b (3 nc doubles, the caller's). */
double shard_lcp_friction_residual(int nc, const double *A, const double *b, const double *mu, const double *f,
                                   double *w);

/* Local: projected Gauss-Seidel for nc contacts with Coulomb friction.  A is 3nc x 3nc (row-major), b and f and w
 * 3nc, in blocks per contact (normal, tangent 1, tangent 2): f_i = (f_n, f_t1, f_t2) is the force at contact i in
 * its own frame, w_i the relative acceleration (or velocity) there; mu[i] >= 0 the friction coefficient.  The
 * conditions are, per contact: 0 <= f_n complementary to w_n >= 0, and f_t in the disc |f_t| <= mu f_n with
 *     f_t = -mu f_n w_t / |w_t| when w_t != 0 (sliding: the friction force opposes the sliding direction, at
 *     its limit), |f_t| <= mu f_n when w_t = 0 (sticking),
 * i.e. f_t = P(f_t - rho w_t) for any rho > 0 (the maximal-dissipation form of Coulomb's law; e.g.
 * T. Erleben, "Rigid body contact problems using proximal operators", SCA 2017).
 * The cone is the exact one, not a pyramid |f_t1|, |f_t2| <= mu f_n: the pyramid's answer depends on how the
 * tangents are chosen (sliding along a diagonal of the pyramid meets sqrt(2) mu f_n, and sliding in a direction
 * that is neither a tangent nor a diagonal meets a corner force that does not oppose it), while the disc is
 * isotropic and costs only a norm.
 * One sweep visits the contacts in index order and, for each, (1) f_n <- max(0, f_n - w_n / A_nn), then, with w_t
 * recomputed from that f_n, (2) f_t <- P(f_t - rho w_t) with the disc of radius mu f_n.  rho is one number per
 * contact, 1 / lambda_max of its tangential block: a single step length keeps the fixed point at Coulomb's law
 * for any block (per-component lengths 1/A_t1t1, 1/A_t2t2 would tilt the sliding direction when the block is not
 * a multiple of the identity), and 1/lambda_max makes step (2) a descent step on the block.  For an isotropic
 * block (a point mass) step (2) is the exact solution of the contact's own sub-problem.  Stopping as in
 * shard_lcp_pgs, with the friction residual.  Unlike the frictionless case the problem is not a convex QP, and
 * convergence is not guaranteed; the iteration limit is the guard.  Requires A_nn > 0 and a tangential block with
 * lambda_max > 0 (BAD_INPUT otherwise).  f holds the starting guess on entry.  No allocation. */
shard_lcp_result shard_lcp_pgs_friction(int nc, const double *A, const double *b, const double *mu,
                                        const shard_lcp_pgs_def *def, double *f, double *w);

#endif
