/* Solid: the meshless elasticity / plasticity kernels of solid.h checked against closed forms and finite
 * differences, on hand-built simple-cubic blocks (one rank, no ghosts: local index = global id). */
#include "fracture.h"
#include "shard/neighbor.h"
#include "solid/solid.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { NX = 5, NY = 4, NZ = 6 };
static const double SPACING = 0.01, SUPPORT = 2.2, SVD_THRESHOLD = 1e-3;
static const double YOUNG = 1e6, POISSON = 0.3;

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static double rnd(void) { return shard_test_rnd(&rng_state); }

/* ---------------------------------------------------------------- small 3x3 helpers (row-major) */

static void mat_mul(const double a[9], const double b[9], double c[9])
{
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            c[3 * r + k] = a[3 * r] * b[k] + a[3 * r + 1] * b[3 + k] + a[3 * r + 2] * b[6 + k];
}

static void sym_full(const double s[6], double m[9])
{
    m[0] = s[0], m[1] = s[1], m[2] = s[2], m[3] = s[1], m[4] = s[3], m[5] = s[4], m[6] = s[2], m[7] = s[4],
    m[8] = s[5];
}

static double mat_maxabs(const double *a, int n)
{
    double m = 0.0;
    for (int k = 0; k < n; k++)
        m = fmax(m, fabs(a[k]));
    return m;
}

static double det3(const double J[9])
{
    return J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
           J[2] * (J[3] * J[7] - J[4] * J[6]);
}

/* Rotation by angle about a unit axis (Rodrigues). */
static void rotation(const double axis_in[3], double angle, double R[9])
{
    double n = sqrt(axis_in[0] * axis_in[0] + axis_in[1] * axis_in[1] + axis_in[2] * axis_in[2]);
    double a[3] = {axis_in[0] / n, axis_in[1] / n, axis_in[2] / n};
    double c = cos(angle), s = sin(angle), t = 1.0 - c;
    R[0] = c + t * a[0] * a[0], R[1] = t * a[0] * a[1] - s * a[2], R[2] = t * a[0] * a[2] + s * a[1];
    R[3] = t * a[1] * a[0] + s * a[2], R[4] = c + t * a[1] * a[1], R[5] = t * a[1] * a[2] - s * a[0];
    R[6] = t * a[2] * a[0] - s * a[1], R[7] = t * a[2] * a[1] + s * a[0], R[8] = c + t * a[2] * a[2];
}

/* Strain energy density per solid.h: lambda/2 tr(Ee)^2 + mu Ee:Ee + kv/2 (det J - 1)^2, Ee = E(J) - Ep. */
/* The inversion barrier h(J) written out from its definition (solid.h), for comparison with the kernel's. */
static double barrier_energy(double J)
{
    const double J0 = SHARD_SOLID_BARRIER_J0;
    if (J >= 1.0)
        return 0.0;
    if (J >= J0)
        return -log(J) + (J - 1) - 0.5 * (J - 1) * (J - 1) + (J - 1) * (J - 1) * (J - 1) / 3.0;
    double h0 = barrier_energy(J0), u = J0 - 1;
    double h1 = u * u * u / J0, h2 = u * u * (2 * J0 + 1) / (J0 * J0);
    return h0 + h1 * (J - J0) + 0.5 * h2 * (J - J0) * (J - J0);
}

static double energy_density(const shard_solid_params *sp, const double J[9], const double ep[6])
{
    double C[9], Jt[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            Jt[3 * r + c] = J[3 * c + r];
    mat_mul(Jt, J, C);
    double Ep[9];
    sym_full(ep, Ep);
    double Ee[9], tr = 0.0, ee = 0.0;
    for (int m = 0; m < 9; m++)
        Ee[m] = 0.5 * (C[m] - (m % 4 == 0 ? 1.0 : 0.0)) - Ep[m];
    for (int m = 0; m < 9; m++)
        ee += Ee[m] * Ee[m];
    tr = Ee[0] + Ee[4] + Ee[8];
    double d = det3(J) - 1.0;
    return 0.5 * sp->lambda * tr * tr + sp->mu * ee + 0.5 * sp->kv * d * d + sp->kb * barrier_energy(det3(J));
}

/* ---------------------------------------------------------------- a block of particles */

typedef struct block {
    shard_particles p;
    shard_block blk;       /* the solid's arrays */
    shard_solid_arrays a;  /* their kernel view */
    shard_csr bonds;
    shard_solid_params sp;
    size_t n;
} block;

static const shard_field_desc block_rows[] = {SHARD_SOLID_FIELDS(SHARD_BLOCK_ROW)};

static size_t block_index(int i, int j, int k) { return (size_t)i + NX * ((size_t)j + NY * (size_t)k); }

static void block_init(block *b, double kv, double beta, double yield, double creep, double max_plastic)
{
    memset(b, 0, sizeof *b);
    b->n = (size_t)NX * NY * NZ;
    shard_particles_reserve(&b->p, b->n);
    shard_particles *p = &b->p;
    p->n_owned = p->n_local = b->n;
    p->n_bond_ghost = 0;
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                size_t q = block_index(i, j, k);
                p->gid[q] = (int64_t)q;
                p->body[q] = 0;
                p->flags[q] = 0;
                p->X[3 * q + 0] = (i + 0.5) * SPACING;
                p->X[3 * q + 1] = (j + 0.5) * SPACING;
                p->X[3 * q + 2] = (k + 0.5) * SPACING;
                p->volume[q] = SPACING * SPACING * SPACING;
                p->mass[q] = 1000.0 * p->volume[q];
            }
    memcpy(p->x, p->X, 3 * b->n * sizeof *p->x);
    memset(p->v, 0, 3 * b->n * sizeof *p->v);
    shard_block_init(&b->blk, block_rows, SHARD_SOLID_N_ROWS);
    b->blk.first = 0, b->blk.n_owned = b->n, b->blk.ghost_first = b->n, b->blk.n_ghost = 0;
    shard_block_reserve(&b->blk, b->n);
    b->a = shard_solid_view(&b->blk);
    int64_t body_start[2] = {0, (int64_t)b->n};
    double h = SUPPORT * SPACING;
    shard_neighbor_bonds(b->n, p->X, 1, body_start, &h, &b->bonds);
    shard_solid_params_init(&b->sp, YOUNG, POISSON, kv, beta, yield, creep, max_plastic, h);
    shard_solid_moments(p, &b->bonds, &b->sp, &b->a, SVD_THRESHOLD);
}

static void block_add(void *sum, double v) { *(double *)sum += v; }

/* The elastic energy summed in particle order. */
static double block_energy(const block *b)
{
    double W = 0.0;
    shard_solid_energy(&b->p, &b->bonds, &b->sp, &b->a, block_add, &W);
    return W;
}

static void block_free(block *b)
{
    shard_particles_free(&b->p);
    shard_block_free(&b->blk);
    shard_csr_free(&b->bonds);
}

/* A smooth nonlinear deformation of moderate strain (a few %) with a rotation, fixed by the seed numbers c. */
static void smooth_map(const double X[3], const double c[12], double x[3])
{
    double L = 0.05;
    x[0] = X[0] + c[0] * L * sin(X[1] / L * 2.0 + c[1]) + c[2] * X[2] + 0.03 * X[0] * X[0] / L;
    x[1] = X[1] + c[3] * L * cos(X[2] / L * 1.5 + c[4]) + c[5] * X[0] + 0.02 * X[1] * X[2] / L;
    x[2] = X[2] + c[6] * L * sin(X[0] / L * 1.7 + c[7]) * cos(X[1] / L + c[8]) + c[9] * X[1] + c[10] * X[2] + c[11];
}

static void block_smooth_deform(block *b)
{
    double c[12];
    for (int m = 0; m < 12; m++)
        c[m] = 0.03 * rnd();
    for (size_t q = 0; q < b->n; q++)
        smooth_map(b->p.X + 3 * q, c, b->p.x + 3 * q);
}

/* ---------------------------------------------------------------- tests */

static void test_pinv(void)
{
    /* Full rank: A = M M^T + I/2 (well conditioned, so A Ainv = I holds to ~cond * eps ~ 1e-15). */
    double M[9];
    for (int m = 0; m < 9; m++)
        M[m] = rnd();
    double A6[6], A[9];
    static const int id[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    for (int m = 0; m < 6; m++) {
        int r = id[m][0], c = id[m][1];
        A6[m] = M[3 * r] * M[3 * c] + M[3 * r + 1] * M[3 * c + 1] + M[3 * r + 2] * M[3 * c + 2] + (r == c ? 0.5 : 0);
    }
    sym_full(A6, A);
    double Ai6[6], Ai[9], P[9];
    int rank = shard_sym3_pinv(A6, 1e-3, Ai6);
    SHARD_ENSURE(rank == 3);
    sym_full(Ai6, Ai);
    mat_mul(A, Ai, P);
    for (int m = 0; m < 9; m++)
        SHARD_ENSURE_NEAR(P[m], m % 4 == 0 ? 1.0 : 0.0, 1e-12);

    /* Rank 2: A = a a^T + b b^T + 0.3 (a b^T + b a^T), planar (normal a x b).  Expect rank 2 and A Ainv A = A
     * (Moore-Penrose), to 1e-12 of |A|: the dropped eigenvalue is round-off, ~1e-16 |A|. */
    double a[3] = {rnd(), rnd(), rnd()}, bb[3] = {rnd(), rnd(), rnd()};
    for (int m = 0; m < 6; m++) {
        int r = id[m][0], c = id[m][1];
        A6[m] = a[r] * a[c] + bb[r] * bb[c] + 0.3 * (a[r] * bb[c] + bb[r] * a[c]);
    }
    sym_full(A6, A);
    rank = shard_sym3_pinv(A6, 1e-3, Ai6);
    SHARD_ENSURE(rank == 2);
    sym_full(Ai6, Ai);
    double T[9], R[9];
    mat_mul(A, Ai, T);
    mat_mul(T, A, R);
    double scale = mat_maxabs(A, 9);
    for (int m = 0; m < 9; m++)
        SHARD_ENSURE_NEAR(R[m], A[m], 1e-12 * scale);
    /* Ainv A Ainv = Ainv, and the normal is in the null space of Ainv. */
    mat_mul(Ai, A, T);
    mat_mul(T, Ai, R);
    double iscale = mat_maxabs(Ai, 9);
    for (int m = 0; m < 9; m++)
        SHARD_ENSURE_NEAR(R[m], Ai[m], 1e-12 * iscale);
    double nrm[3] = {a[1] * bb[2] - a[2] * bb[1], a[2] * bb[0] - a[0] * bb[2], a[0] * bb[1] - a[1] * bb[0]};
    double nn = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    for (int r = 0; r < 3; r++)
        SHARD_ENSURE_NEAR((Ai[3 * r] * nrm[0] + Ai[3 * r + 1] * nrm[1] + Ai[3 * r + 2] * nrm[2]) / nn, 0.0,
                          1e-12 * iscale);
    /* Zero matrix: rank 0, zero inverse. */
    double Z[6] = {0};
    SHARD_ENSURE(shard_sym3_pinv(Z, 1e-3, Ai6) == 0);
    SHARD_ENSURE(mat_maxabs(Ai6, 6) == 0.0);
}

static void test_affine_gradient(void)
{
    block b;
    block_init(&b, 0, 0, 0, 0, 0);
    double F[9], c[3] = {0.1 * rnd(), 0.1 * rnd(), 0.1 * rnd()};
    for (int m = 0; m < 9; m++)
        F[m] = (m % 4 == 0 ? 1.0 : 0.0) + 0.2 * rnd();
    for (size_t q = 0; q < b.n; q++) {
        const double *X = b.p.X + 3 * q;
        for (int r = 0; r < 3; r++)
            b.p.x[3 * q + r] = F[3 * r] * X[0] + F[3 * r + 1] * X[1] + F[3 * r + 2] * X[2] + c[r];
    }
    /* MLS reproduces linear fields exactly wherever A has full rank (every particle here, corners included:
     * their partners span all three directions): J = F up to round-off, ~1e-14 relative. */
    double worst = 0.0;
    for (size_t q = 0; q < b.n; q++) {
        double J[9];
        shard_solid_gradient(&b.p, &b.bonds, &b.sp, &b.a, q, J);
        for (int m = 0; m < 9; m++)
            worst = fmax(worst, fabs(J[m] - F[m]) / mat_maxabs(F, 9));
    }
    printf("affine gradient: max relative error of J over %zu particles %.3g\n", b.n, worst);
    SHARD_ENSURE(worst < 1e-10);
    block_free(&b);
}

/* P (from the material) against dU/dJ by central differences (step 1e-6: truncation ~1e-12 U''' and
 * round-off ~eps U / step ~ 1e-10 relative), component by component within 1e-6 of max |P|; returns the largest
 * relative difference. */
static double check_stress_is_energy_gradient(const shard_solid_params *sp, const double J[9], const double ep[6],
                                              const double P[9])
{
    double scale = mat_maxabs(P, 9), hstep = 1e-6, worst = 0.0;
    for (int m = 0; m < 9; m++) {
        double Jp[9], Jm[9];
        memcpy(Jp, J, sizeof Jp);
        memcpy(Jm, J, sizeof Jm);
        Jp[m] += hstep, Jm[m] -= hstep;
        double d = (energy_density(sp, Jp, ep) - energy_density(sp, Jm, ep)) / (2 * hstep);
        worst = fmax(worst, fabs(d - P[m]) / scale);
        SHARD_ENSURE_NEAR(P[m], d, 1e-6 * scale);
    }
    return worst;
}

/* Forces of the current state through the two passes; returns max |f| over particles. */
static double block_forces(block *b, double dt, double *f)
{
    shard_solid_stress(&b->p, &b->bonds, &b->sp, &b->a, dt);
    memset(f, 0, 3 * b->n * sizeof *f); /* the forces are added into f */
    shard_solid_forces(&b->p, &b->bonds, &b->sp, &b->a, f);
    double m = 0.0;
    for (size_t q = 0; q < b->n; q++)
        m = fmax(m, sqrt(f[3 * q] * f[3 * q] + f[3 * q + 1] * f[3 * q + 1] + f[3 * q + 2] * f[3 * q + 2]));
    return m;
}

static void test_rigid_motion(void)
{
    block b;
    block_init(&b, 2e5, 0, 0, 0, 0);
    double R[9], axis[3] = {1.0, -2.0, 0.7}, c[3] = {0.3, -0.2, 1.1};
    rotation(axis, M_PI / 3.0, R);
    for (size_t q = 0; q < b.n; q++) {
        const double *X = b.p.X + 3 * q;
        for (int r = 0; r < 3; r++)
            b.p.x[3 * q + r] = R[3 * r] * X[0] + R[3 * r + 1] * X[1] + R[3 * r + 2] * X[2] + c[r];
    }
    /* Green strain of J = R is zero: W and f vanish to round-off.  Force scale E * spacing^2 (stress E on a
     * particle face); round-off leaves ~1e-15 of it, tolerance 1e-9. */
    double *f = malloc(3 * b.n * sizeof *f);
    double fmax_ = block_forces(&b, 1e-4, f);
    double scale = YOUNG * SPACING * SPACING;
    printf("rigid rotation 60 deg + translation: max |f| / (E s^2) = %.3g, W = %.3g J\n", fmax_ / scale,
           block_energy(&b));
    SHARD_ENSURE(fmax_ < 1e-9 * scale);
    SHARD_ENSURE(fabs(block_energy(&b)) < 1e-18 * YOUNG * (double)b.n * b.p.volume[0]);
    /* and a 1e-3 stretch is not zero (the check above can fail) */
    for (size_t q = 0; q < b.n; q++)
        b.p.x[3 * q] += 1e-3 * b.p.X[3 * q];
    SHARD_ENSURE(block_forces(&b, 1e-4, f) > 1e-4 * scale);
    free(f);
    block_free(&b);
}

static void test_hooke(void)
{
    shard_solid_params sp;
    shard_solid_params_init(&sp, YOUNG, POISSON, 0.0, 0.0, 0.0, 0.0, 0.0, 0.02);
    const double lam = YOUNG * POISSON / ((1 + POISSON) * (1 - 2 * POISSON)), mu = YOUNG / (2 * (1 + POISSON));
    SHARD_ENSURE_NEAR(sp.lambda, lam, 1e-12 * lam);
    SHARD_ENSURE_NEAR(sp.mu, mu, 1e-12 * mu);
    const double e = 1e-6, Exx = e + 0.5 * e * e;
    double J[9] = {1 + e, 0, 0, 0, 1, 0, 0, 0, 1}, Jd[9] = {0}, ep[6] = {0}, P[9], S[6];
    shard_solid_material(&sp, J, Jd, ep, 1e-3, P, S);
    /* Exact to round-off: S is linear in E, and E is computed from J in a few flops (1e-9 leaves room for the
     * cancellation in (1+e)^2 - 1, which loses ~6 digits: ~1e-10 relative). */
    SHARD_ENSURE_NEAR(S[0], (lam + 2 * mu) * Exx, 1e-9 * (lam + 2 * mu) * Exx);
    SHARD_ENSURE_NEAR(S[3], lam * Exx, 1e-9 * lam * Exx);
    SHARD_ENSURE_NEAR(S[5], lam * Exx, 1e-9 * lam * Exx);
    SHARD_ENSURE(S[1] == 0.0 && S[2] == 0.0 && S[4] == 0.0);
    SHARD_ENSURE_NEAR(P[0], (1 + e) * S[0], 1e-15 * fabs(S[0]));
    SHARD_ENSURE_NEAR(P[4], S[3], 1e-15 * fabs(S[3]));

    /* Uniaxial stress: lateral contraction nu e.  Linear theory gives S_xx = E e, S_yy = S_zz = 0; the
     * geometric nonlinearity adds O(e^2), i.e. relative O(e) = 1e-6, hence the 1e-5 tolerances. */
    double J2[9] = {1 + e, 0, 0, 0, 1 - POISSON * e, 0, 0, 0, 1 - POISSON * e};
    shard_solid_material(&sp, J2, Jd, ep, 1e-3, P, S);
    printf("uniaxial stress: S_xx / (E e) - 1 = %.3g, S_yy / (E e) = %.3g\n", S[0] / (YOUNG * e) - 1,
           S[3] / (YOUNG * e));
    SHARD_ENSURE_NEAR(S[0], YOUNG * e, 1e-5 * YOUNG * e);
    SHARD_ENSURE_NEAR(S[3], 0.0, 1e-5 * YOUNG * e);
    SHARD_ENSURE_NEAR(S[5], 0.0, 1e-5 * YOUNG * e);
}

static void test_volume_term(void)
{
    const double kv = 3e5, s = 1.02;
    shard_solid_params sp;
    shard_solid_params_init(&sp, YOUNG, POISSON, kv, 0.0, 0.0, 0.0, 0.0, 0.02);
    double J[9] = {s, 0, 0, 0, s, 0, 0, 0, s}, Jd[9] = {0}, ep[6] = {0}, P[9], S[6];
    shard_solid_material(&sp, J, Jd, ep, 1e-3, P, S);
    /* J = s I: E = (s^2 - 1)/2 I, S = (3 lambda + 2 mu) E, P = s S + kv (s^3 - 1) s^2 I. */
    double Eiso = 0.5 * (s * s - 1), Siso = (3 * sp.lambda + 2 * sp.mu) * Eiso;
    double Pexp = s * Siso + kv * (s * s * s - 1) * s * s;
    for (int m = 0; m < 9; m++)
        SHARD_ENSURE_NEAR(P[m], m % 4 == 0 ? Pexp : 0.0, 1e-13 * Pexp);

    /* P = dU/dJ for a random J.  A fixed plastic strain is included (it enters U and S the same way); with
     * max = 0 the material leaves it alone. */
    for (int m = 0; m < 9; m++)
        J[m] = (m % 4 == 0 ? 1.0 : 0.0) + 0.15 * rnd();
    for (int m = 0; m < 6; m++)
        ep[m] = 0.01 * rnd();
    double ep0[6];
    memcpy(ep0, ep, sizeof ep0);
    shard_solid_material(&sp, J, Jd, ep, 1e-3, P, S);
    for (int m = 0; m < 6; m++)
        SHARD_ENSURE(ep[m] == ep0[m]);
    double worst = check_stress_is_energy_gradient(&sp, J, ep, P);
    printf("P = dU/dJ (kv > 0, random J, fixed Ep): max relative difference %.3g\n", worst);
}

/* The inversion barrier: h and h' against the definition and against each other, O((J - 1)^4) at J = 1,
 * continuous with its slope at J0, finite and pushing outwards for any J; with it the uniaxial compression
 * stress of the material rises all the way to J = 0, where St Venant-Kirchhoff's alone peaks at a stretch of
 * 1/sqrt(3) and falls to zero; P = dU/dJ with it (random compressed J); Hooke's law unchanged at 1e-3. */
static void test_barrier(void)
{
    const double dets[] = {1.5, 1.0, 0.999, 0.9, 0.5, 0.2, 0.1 + 1e-9, 0.1, 0.1 - 1e-9, 0.05, 0.0, -0.3};
    double worst = 0.0;
    for (size_t k = 0; k < sizeof dets / sizeof dets[0]; k++) {
        double J = dets[k], slope, h = shard_solid_barrier(J, &slope), sp_, sm_;
        double d = 1e-6, hp = shard_solid_barrier(J + d, &sp_), hm = shard_solid_barrier(J - d, &sm_);
        SHARD_ENSURE_NEAR(h, barrier_energy(J), 1e-12 * fmax(1.0, fabs(h)));
        SHARD_ENSURE(isfinite(h) && isfinite(slope) && slope <= 0.0);
        double fd = (hp - hm) / (2 * d);
        worst = fmax(worst, fabs(fd - slope) / fmax(1.0, fabs(slope)));
        SHARD_ENSURE_NEAR(slope, fd, 1e-6 * fmax(1.0, fabs(slope)));
    }
    double e = 1e-2, slope;
    double h = shard_solid_barrier(1.0 - e, &slope);
    SHARD_ENSURE_NEAR(h / (e * e * e * e / 4), 1.0, 0.02); /* h = u^4/4 - u^5/5 + ..., u = -e */
    SHARD_ENSURE_NEAR(slope, -e * e * e / (1.0 - e), 1e-18);
    printf("barrier: h(0.99) = %.6g (u^4/4 = %.6g), h'(0.99) = %.6g; slope = finite difference within %.2g\n", h,
           e * e * e * e / 4, slope, worst);

    /* Uniaxial compression J = diag(s, 1, 1): P_xx(s).  K = E / (3 (1 - 2 nu)). */
    shard_solid_params svk, safe;
    shard_solid_params_init(&svk, YOUNG, POISSON, 0.0, 0.0, 0.0, 0.0, 0.0, 0.02);
    safe = svk;
    safe.kb = YOUNG / (3.0 * (1.0 - 2.0 * POISSON));
    double Jd[9] = {0}, ep[6] = {0}, P[9], S[6], prev_svk = 0.0, prev_safe = 0.0, peak_s = 0.0, peak = 0.0;
    int rising = 1;
    for (double st = 0.99; st > 0.005; st -= 0.01) {
        double J[9] = {st, 0, 0, 0, 1, 0, 0, 0, 1};
        shard_solid_material(&svk, J, Jd, ep, 0.0, P, S);
        double p_svk = -P[0];
        shard_solid_material(&safe, J, Jd, ep, 0.0, P, S);
        double p_safe = -P[0];
        if (p_svk > peak)
            peak = p_svk, peak_s = st;
        rising &= p_safe > prev_safe;
        prev_svk = p_svk, prev_safe = p_safe;
    }
    SHARD_ENSURE(rising);
    SHARD_ENSURE_NEAR(peak_s, 1.0 / sqrt(3.0), 0.01);
    SHARD_ENSURE(prev_svk < 0.05 * peak); /* SVK alone: almost no resistance left near s = 0 */
    printf("uniaxial compression: St Venant-Kirchhoff peaks at s = %.2f (1/sqrt 3 = %.3f) with %.4g Pa and "
           "resists %.4g Pa at s = 0.01; with the barrier the resistance rises throughout, %.4g Pa at s = 0.01\n",
           peak_s, 1.0 / sqrt(3.0), peak, prev_svk, prev_safe);

    /* P = dU/dJ with the barrier, random compressed J (det < 1) */
    for (int trial = 0; trial < 20; trial++) {
        double J[9];
        for (int m = 0; m < 9; m++)
            J[m] = (m % 4 == 0 ? 0.6 : 0.0) + 0.1 * rnd();
        shard_solid_material(&safe, J, Jd, ep, 0.0, P, S);
        check_stress_is_energy_gradient(&safe, J, ep, P);
    }

    /* small strain: the barrier changes Hooke's uniaxial stress by O(e^2) relative */
    double eps = -1e-3;
    double J2[9] = {1 + eps, 0, 0, 0, 1 - POISSON * eps, 0, 0, 0, 1 - POISSON * eps};
    shard_solid_material(&safe, J2, Jd, ep, 0.0, P, S);
    double with = P[0];
    shard_solid_material(&svk, J2, Jd, ep, 0.0, P, S);
    SHARD_ENSURE(with != P[0]);
    SHARD_ENSURE_NEAR(with / P[0], 1.0, 1e-6);
    printf("Hooke at -1e-3: P_xx with the barrier / without = 1 + %.3g\n", with / P[0] - 1.0);
}

/* Forces of block b at its positions against central differences of its energy at probe particles (interior,
 * face, edge and corner).  Central differences of W with step 1e-7 spacing: truncation ~(step)^2 W''' is
 * ~1e-14 relative; round-off ~eps W / step ~1e-9 of f.  Tolerance 1e-5 of the largest force on the block. */
static void check_forces_are_energy_gradient(block *b, const char *what)
{
    double *f = malloc(3 * b->n * sizeof *f);
    double fscale = block_forces(b, 1e-4, f);
    const size_t probes[] = {block_index(2, 1, 3), block_index(2, 2, 2), block_index(0, 2, 3), block_index(2, 0, 5),
                             block_index(4, 3, 2), block_index(0, 0, 3), block_index(0, 0, 0), block_index(4, 3, 5)};
    double hstep = 1e-7 * SPACING, worst = 0.0;
    for (size_t t = 0; t < sizeof probes / sizeof probes[0]; t++) {
        size_t q = probes[t];
        for (int k = 0; k < 3; k++) {
            double x0 = b->p.x[3 * q + k];
            b->p.x[3 * q + k] = x0 + hstep;
            double Wp = block_energy(b);
            b->p.x[3 * q + k] = x0 - hstep;
            double Wm = block_energy(b);
            b->p.x[3 * q + k] = x0;
            double fd = -(Wp - Wm) / (2 * hstep);
            worst = fmax(worst, fabs(fd - f[3 * q + k]) / fscale);
            SHARD_ENSURE_NEAR(f[3 * q + k], fd, 1e-5 * fscale);
        }
    }
    printf("%s: f = -dW/dx at %zu particles: max |f - fd| / max|f| = %.3g (max |f| = %.3g N)\n", what,
           sizeof probes / sizeof probes[0], worst, fscale);
    free(f);
}

static void test_forces_are_energy_gradient(void)
{
    block b;
    block_init(&b, 2e5, 0, 0, 0, 0);
    block_smooth_deform(&b);
    /* a fixed small plastic strain field: the energy and the stress must both use it */
    for (size_t q = 0; q < 6 * b.n; q++)
        b.a.eps_p[q] = 0.002 * rnd();
    check_forces_are_energy_gradient(&b, "elastic + volume + plastic strain");
    block_free(&b);
}

/* The energy of each particle, in particle order. */
static void block_add_each(void *ctx, double v)
{
    double **next = ctx;
    *(*next)++ = v;
}

/* (i + j + k) mod 2 of the particle at block_index(i, j, k) = q. */
static int colour(size_t q) { return (int)((q % NX + (q / NX) % NY + q / (NX * NY)) % 2); }

/* sum_j w_ij |x_ij|^2 (or, with only_to_other, over the bonds to the other colour of the checkerboard below)
 * of particle i of block b. */
static double bond_moment(const block *b, size_t i, int only_to_other)
{
    double m = 0.0;
    for (int64_t k = b->bonds.start[i]; k < b->bonds.start[i + 1]; k++) {
        size_t j = (size_t)b->bonds.idx[k];
        const double *Xj = b->p.X + 3 * j, *Xi = b->p.X + 3 * i;
        double d2 = 0.0;
        for (int r = 0; r < 3; r++)
            d2 += (Xj[r] - Xi[r]) * (Xj[r] - Xi[r]);
        if (!only_to_other)
            m += shard_solid_weight(d2, b->sp.inv_h2) * d2;
        else if (colour(j) != colour(i))
            m += shard_solid_weight(d2, b->sp.inv_h2);
    }
    return m;
}

/* The bond stabilisation k_s/2 sum_j w |u_ij - (J_i - I) x_ij|^2: its forces are the exact gradient of its
 * energy (the affine fit J_i minimises it, so J's dependence on the positions drops out); an affine
 * deformation (stretch, shear, rotation, translation) gives it no energy and no force; the checkerboard mode
 * u = eps (-1)^(i+j+k) e_x, whose MLS gradient vanishes at every particle with a full stencil (the
 * correspondence model's zero-energy mode), costs such a particle no energy without it and
 * k_s/2 (2 eps)^2 sum w over its bonds to the other colour with it. */
static void test_stabilization(void)
{
    double h = SUPPORT * SPACING, G = 0.1;
    double ks = shard_solid_stabilization_stiffness(G, YOUNG, SPACING, h);
    block b;
    block_init(&b, 0, 0, 0, 0, 0);
    size_t in = block_index(2, 2, 2); /* a full stencil */
    double m = bond_moment(&b, in, 0);
    printf("stabilisation G = %g: k_s = %.6g N/m, G E s^3 / m (m from the interior particle's bonds) = %.6g N/m\n", G,
           ks, G * YOUNG * SPACING * SPACING * SPACING / m);
    /* the block's particle lacks the stencil's offsets of 2 spacings in +y (weight 0.005 each): 1 % */
    SHARD_ENSURE_NEAR(ks, G * YOUNG * SPACING * SPACING * SPACING / m, 0.01 * ks);
    SHARD_ENSURE(ks < G * YOUNG * SPACING * SPACING * SPACING / m);
    SHARD_ENSURE(shard_solid_stabilization_stiffness(0.0, YOUNG, SPACING, h) == 0.0);

    /* affine: the same forces and energy with and without it */
    double R[9], RF[9], axis[3] = {0.3, 1.0, -0.4};
    const double Fm[9] = {1.002, 0.001, -0.0005, 0.0007, 0.999, 0.0012, 0.0, 0.0004, 1.0015};
    rotation(axis, 0.4, R);
    mat_mul(R, Fm, RF);
    for (size_t q = 0; q < b.n; q++) {
        const double *X = b.p.X + 3 * q;
        for (int r = 0; r < 3; r++)
            b.p.x[3 * q + r] = RF[3 * r] * X[0] + RF[3 * r + 1] * X[1] + RF[3 * r + 2] * X[2] + 0.1 * (r + 1);
    }
    double *f0 = malloc(3 * b.n * sizeof *f0), *f1 = malloc(3 * b.n * sizeof *f1);
    double fscale = block_forces(&b, 1e-4, f0), W0 = block_energy(&b);
    b.sp.ks = ks;
    block_forces(&b, 1e-4, f1);
    double W1 = block_energy(&b), dmax = 0.0;
    for (size_t q = 0; q < 3 * b.n; q++)
        dmax = fmax(dmax, fabs(f1[q] - f0[q]));
    printf("affine deformation: stabilised - plain: max |df| / max|f| = %.3g, dW / W = %.3g\n", dmax / fscale,
           (W1 - W0) / W0);
    SHARD_ENSURE(dmax <= 1e-9 * fscale);
    SHARD_ENSURE(fabs(W1 - W0) <= 1e-9 * W0);

    /* exact gradient with it, on the smooth deformation */
    block_smooth_deform(&b);
    check_forces_are_energy_gradient(&b, "with the bond stabilisation");

    /* the checkerboard mode */
    double eps = 1e-4 * SPACING;
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                size_t q = block_index(i, j, k);
                memcpy(b.p.x + 3 * q, b.p.X + 3 * q, 3 * sizeof *b.p.x);
                b.p.x[3 * q] += colour(q) ? -eps : eps;
            }
    double *U = malloc(b.n * sizeof *U), Uin[2];
    for (int with = 0; with < 2; with++) {
        b.sp.ks = with ? ks : 0.0;
        double *next = U;
        shard_solid_energy(&b.p, &b.bonds, &b.sp, &b.a, block_add_each, &next);
        Uin[with] = U[in];
    }
    double expect = 0.5 * ks * 4.0 * eps * eps * bond_moment(&b, in, 1);
    printf("checkerboard mode, interior particle: energy %.3g J without, %.6g J with the stabilisation "
           "(expected %.6g J)\n",
           Uin[0], Uin[1], expect);
    SHARD_ENSURE(fabs(Uin[0]) <= 1e-12 * expect);
    SHARD_ENSURE_NEAR(Uin[1], expect, 1e-9 * expect);
    free(U), free(f0), free(f1);
    block_free(&b);
}

/* The wall rule (solid.h): the layer of particles at x < s held, its face at x = s.  A displacement that grows
 * linearly from the face, u = c (X_x - s) on the free side and 0 on the held one, is a kink for a stencil that
 * reaches into the held layer; with the rule every free particle's gradient is exact (its fit samples the held
 * partners on the face).  The forces stay the exact gradient of the energy, which the held particles no longer
 * store: at free particles next to the face and at held ones (the reaction) too. */
static void test_wall_rule(void)
{
    block b;
    block_init(&b, 0, 0, 0, 0, 0);
    b.sp.ks = shard_solid_stabilization_stiffness(0.5, YOUNG, SPACING, SUPPORT * SPACING);
    for (size_t q = 0; q < b.n; q++) {
        double *w = b.a.wall + 4 * q;
        int held = b.p.X[3 * q] < SPACING;
        w[0] = held ? SPACING - b.p.X[3 * q] : 0.0, w[1] = w[2] = 0.0;
        w[3] = held ? SHARD_SOLID_WALL_HELD : SHARD_SOLID_WALL_NONE;
    }
    shard_solid_walls(&b.p, &b.bonds, &b.a);
    shard_solid_moments(&b.p, &b.bonds, &b.sp, &b.a, SVD_THRESHOLD);
    size_t near = 0;
    for (size_t q = 0; q < b.n; q++)
        near += b.a.wall[4 * q + 3] == SHARD_SOLID_WALL_NEAR;
    SHARD_ENSURE(near == (size_t)(NY * NZ * 2)); /* the two layers within 2.2 spacings of a held particle */
    const double c[3] = {1e-3, -2e-3, 0.5e-3};
    for (size_t q = 0; q < b.n; q++) {
        double t = fmax(b.p.X[3 * q] - SPACING, 0.0);
        for (int r = 0; r < 3; r++)
            b.p.x[3 * q + r] = b.p.X[3 * q + r] + c[r] * t;
    }
    double worst = 0.0;
    for (size_t q = 0; q < b.n; q++) {
        if (b.a.wall[4 * q + 3] == SHARD_SOLID_WALL_HELD)
            continue;
        double J[9];
        shard_solid_gradient(&b.p, &b.bonds, &b.sp, &b.a, q, J);
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                worst = fmax(worst, fabs(J[3 * r + k] - (r == k) - (k == 0 ? c[r] : 0.0)));
    }
    printf("wall rule: a displacement growing linearly from the clamp's face: max |J - J_exact| = %.3g over the "
           "free particles (%zu of them next to the face)\n",
           worst, near);
    SHARD_ENSURE(worst < 1e-13);
    block_smooth_deform(&b);
    check_forces_are_energy_gradient(&b, "with the wall rule");
    block_free(&b);
}

static void test_momentum(void)
{
    block b;
    block_init(&b, 2e5, 0, 0, 0, 0);
    block_smooth_deform(&b);
    /* and a rough random perturbation on top (momentum conservation needs no smoothness) */
    for (size_t q = 0; q < 3 * b.n; q++)
        b.p.x[q] += 0.02 * SPACING * rnd();
    double *f = malloc(3 * b.n * sizeof *f);
    double fmax_ = block_forces(&b, 1e-4, f);
    /* sum_i f_i = sum_ij w_ij (B_i + B_j) x_ij, antisymmetric in (i, j): zero up to round-off of a sum of
     * n forces, ~n eps max|f| ~ 1e-14 max|f|; tolerance 1e-12. */
    double sum[3] = {0, 0, 0};
    for (size_t q = 0; q < b.n; q++)
        for (int k = 0; k < 3; k++)
            sum[k] += f[3 * q + k];
    double rel = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]) / fmax_;
    printf("momentum: |sum f| / max|f| = %.3g (max |f| = %.3g N)\n", rel, fmax_);
    SHARD_ENSURE(rel < 1e-12);
    /* Angular momentum too: W is invariant under a rotation of the current positions (J -> R J leaves E and
     * det J unchanged), so the total torque of f = -dW/dx vanishes; round-off only, tolerance 1e-11. */
    double tq[3] = {0, 0, 0}, tscale = 0.0;
    for (size_t q = 0; q < b.n; q++) {
        const double *x = b.p.x + 3 * q, *fq = f + 3 * q;
        tq[0] += x[1] * fq[2] - x[2] * fq[1];
        tq[1] += x[2] * fq[0] - x[0] * fq[2];
        tq[2] += x[0] * fq[1] - x[1] * fq[0];
        tscale = fmax(tscale, sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) * fmax_);
    }
    double trel = sqrt(tq[0] * tq[0] + tq[1] * tq[1] + tq[2] * tq[2]) / tscale;
    printf("angular momentum: |sum x x f| / (max|x| max|f|) = %.3g\n", trel);
    SHARD_ENSURE(trel < 1e-11);
    free(f);
    block_free(&b);
}

static double norm6(const double e[6])
{
    return sqrt(e[0] * e[0] + e[3] * e[3] + e[5] * e[5] + 2.0 * (e[1] * e[1] + e[2] * e[2] + e[4] * e[4]));
}

static void green(const double J[9], double E[6])
{
    static const int id[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    for (int m = 0; m < 6; m++) {
        int r = id[m][0], c = id[m][1];
        E[m] = 0.5 * (J[r] * J[c] + J[3 + r] * J[3 + c] + J[6 + r] * J[6 + c] - (r == c ? 1.0 : 0.0));
    }
}

static void test_plasticity(void)
{
    const double yield = 0.01, creep = 50.0, maxp = 0.5, dt = 1e-3;
    shard_solid_params sp;
    shard_solid_params_init(&sp, YOUNG, POISSON, 0.0, 0.0, yield, creep, maxp, 0.02);
    double J[9] = {1.06, 0.02, 0.0, 0.01, 0.98, 0.03, 0.0, -0.01, 1.02}, Jd[9] = {0}, ep[6] = {0}, P[9], S[6];
    double E[6];
    green(J, E);
    SHARD_ENSURE(norm6(E) > 3 * yield);
    /* |Ee| - yield decays as exp(-creep t) (exact exponential integration), so after 1 s it is ~e^-50 ~ 0. */
    double prev = 0.0;
    int monotone = 1, capped = 1;
    for (int s = 0; s < 1000; s++) {
        shard_solid_material(&sp, J, Jd, ep, dt, P, S);
        double np = norm6(ep);
        if (np < prev || (s < 300 && !(np > prev))) /* strictly growing while |Ee| - yield is not round-off */
            monotone = 0;
        capped &= np <= maxp * (1 + 1e-14);
        prev = np;
    }
    double Ee[6];
    for (int m = 0; m < 6; m++)
        Ee[m] = E[m] - ep[m];
    printf("plasticity: |E| = %.6g, after 1 s |Ee| = %.15g (yield %g), |Ep| = %.6g\n", norm6(E), norm6(Ee), yield,
           norm6(ep));
    SHARD_ENSURE(monotone);
    SHARD_ENSURE(capped);
    SHARD_ENSURE_NEAR(norm6(Ee), yield, 1e-12 * yield);
    /* Ee stays parallel to E (flow along Ee): Ep = (1 - yield/|E|) E */
    for (int m = 0; m < 6; m++)
        SHARD_ENSURE_NEAR(ep[m], (1 - yield / norm6(E)) * E[m], 1e-12);
    /* after 2 time constants: |Ee| - yield = (|E| - yield) e^-2, to round-off */
    memset(ep, 0, sizeof ep);
    for (int s = 0; s < 40; s++)
        shard_solid_material(&sp, J, Jd, ep, dt, P, S);
    for (int m = 0; m < 6; m++)
        Ee[m] = E[m] - ep[m];
    SHARD_ENSURE_NEAR(norm6(Ee) - yield, (norm6(E) - yield) * exp(-creep * 40 * dt), 1e-13);

    /* The cap: |Ep| never exceeds max, and saturates there. */
    shard_solid_params spc = sp;
    spc.max_plastic = 0.02;
    memset(ep, 0, sizeof ep);
    double most = 0.0;
    for (int s = 0; s < 1000; s++) {
        shard_solid_material(&spc, J, Jd, ep, dt, P, S);
        most = fmax(most, norm6(ep));
    }
    SHARD_ENSURE(most <= spc.max_plastic * (1 + 1e-14));
    SHARD_ENSURE_NEAR(norm6(ep), spc.max_plastic, 1e-14);

    /* max = 0 (or creep = 0): no plastic strain at all, and S is the elastic stress of E. */
    shard_solid_params spz = sp;
    spz.max_plastic = 0.0;
    memset(ep, 0, sizeof ep);
    for (int s = 0; s < 100; s++)
        shard_solid_material(&spz, J, Jd, ep, dt, P, S);
    SHARD_ENSURE(norm6(ep) == 0.0);
    spz = sp;
    spz.creep = 0.0;
    for (int s = 0; s < 100; s++)
        shard_solid_material(&spz, J, Jd, ep, dt, P, S);
    SHARD_ENSURE(norm6(ep) == 0.0);
    /* below yield: nothing either */
    double Js[9] = {1.001, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int s = 0; s < 100; s++)
        shard_solid_material(&sp, Js, Jd, ep, dt, P, S);
    SHARD_ENSURE(norm6(ep) == 0.0);

    /* dt-consistency: 100 steps of dt and 10 steps of 10 dt give the same Ep (exact exponential; round-off
     * only, ~100 eps).  creep * 100 dt = 0.5 keeps the state away from both the yield surface and the cap. */
    double a[6] = {0}, b6[6] = {0}, small = 1e-4;
    for (int s = 0; s < 100; s++)
        shard_solid_material(&sp, J, Jd, a, small, P, S);
    for (int s = 0; s < 10; s++)
        shard_solid_material(&sp, J, Jd, b6, 10 * small, P, S);
    double diff[6];
    for (int m = 0; m < 6; m++)
        diff[m] = a[m] - b6[m];
    printf("plasticity dt-consistency: |Ep(100 x dt) - Ep(10 x 10 dt)| / |Ep| = %.3g\n", norm6(diff) / norm6(a));
    SHARD_ENSURE(norm6(a) > 0.1 * norm6(E));
    SHARD_ENSURE(norm6(diff) <= 1e-12 * norm6(a));
}

static void test_damping(void)
{
    block b0, b1;
    const double beta = 1e-3;
    block_init(&b0, 2e5, 0.0, 0, 0, 0);
    block_init(&b1, 2e5, beta, 0, 0, 0);
    double R[9], axis[3] = {0.3, 1.0, -0.5}, c[3] = {0.05, 0.0, -0.02}, w[3] = {3.0, -5.0, 7.0};
    rotation(axis, 1.1, R);
    /* rotated block, spinning rigidly about c: v = w x (x - c) */
    for (block *bp = &b0; bp; bp = bp == &b0 ? &b1 : NULL) {
        shard_particles *p = &bp->p;
        for (size_t q = 0; q < bp->n; q++) {
            const double *X = p->X + 3 * q;
            double *x = p->x + 3 * q, *v = p->v + 3 * q;
            for (int r = 0; r < 3; r++)
                x[r] = R[3 * r] * X[0] + R[3 * r + 1] * X[1] + R[3 * r + 2] * X[2] + c[r];
            double d[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
            v[0] = w[1] * d[2] - w[2] * d[1];
            v[1] = w[2] * d[0] - w[0] * d[2];
            v[2] = w[0] * d[1] - w[1] * d[0];
        }
        shard_solid_stress(p, &bp->bonds, &bp->sp, &bp->a, 1e-4);
    }
    /* Damping scale: the B of a strain rate |w| (stretching, not spinning) -- computed below as the control.
     * Rigid spin must leave B unchanged up to round-off, ~1e-15 of that scale. */
    double dmax = 0.0;
    for (size_t q = 0; q < 9 * b0.n; q++)
        dmax = fmax(dmax, fabs(b1.a.B[q] - b0.a.B[q]));
    /* control: v = D (x - c) with D symmetric, |D| ~ |w|: the damping stress is beta (lambda tr D I + 2 mu D) */
    double D[9] = {4.0, 1.0, -2.0, 1.0, -3.0, 0.5, -2.0, 0.5, 6.0};
    for (size_t q = 0; q < b1.n; q++) {
        const double *x = b1.p.x + 3 * q;
        double d[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
        for (int r = 0; r < 3; r++)
            b1.p.v[3 * q + r] = D[3 * r] * d[0] + D[3 * r + 1] * d[1] + D[3 * r + 2] * d[2];
    }
    shard_solid_stress(&b1.p, &b1.bonds, &b1.sp, &b1.a, 1e-4);
    double cmax = 0.0;
    for (size_t q = 0; q < 9 * b0.n; q++)
        cmax = fmax(cmax, fabs(b1.a.B[q] - b0.a.B[q]));
    printf("damping: rigid spin changes B by %.3g of the change from an equal stretching rate\n", dmax / cmax);
    SHARD_ENSURE(cmax > 0.0);
    SHARD_ENSURE(dmax <= 1e-12 * cmax);
    block_free(&b0);
    block_free(&b1);
}

/* ---------------------------------------------------------------- fracture: bond-based particles, energy rule */

/* Sets up block b as breaking by the stretch rule at s_c (nothing breaks here: the kernels only need the
 * body's constants), with the micromodulus c_0 and the intact moments of fracture.h. */
static void block_breakable(block *b, int criterion, double threshold)
{
    b->sp.frac = (shard_fracture_params){.criterion = criterion, .threshold = threshold, .weibull_norm = 1.0};
    b->sp.c0 = shard_fracture_micromodulus(YOUNG, POISSON, SPACING, SUPPORT * SPACING);
    shard_solid_reference_moments(&b->p, &b->bonds, &b->sp, &b->a);
    shard_solid_moments(&b->p, &b->bonds, &b->sp, &b->a, SVD_THRESHOLD);
}

/* sum_j w_j |n_j| over the full stencil of the lattice (fracture.h's S_1), by its definition. */
static double lattice_s1(void)
{
    double s1 = 0.0;
    for (int a = -3; a <= 3; a++)
        for (int c = -3; c <= 3; c++)
            for (int d = -3; d <= 3; d++) {
                double n2 = a * a + c * c + d * d, q = 1.0 - n2 / (SUPPORT * SUPPORT);
                if (n2 > 0.0 && q > 0.0)
                    s1 += q * q * q * sqrt(n2);
            }
    return s1;
}

/* Bond-based particles (fracture.h): c_0 makes a uniformly stretched stencil store 9 K e^2 / 2 per volume and
 * carry the virial stress K tr(eps) I (scaled by the share of the full stencil the particle has); a block with
 * bond-based particles of several scales alpha, correspondence particles with a loss of stiffness beta, and the
 * stabilisation on has forces that are exactly -dW/dx and sum to zero. */
static void test_bond_based(void)
{
    double K = YOUNG / (3.0 * (1.0 - 2.0 * POISSON)), e = 1e-3;
    block b;
    block_init(&b, 0, 0, 0, 0, 0);
    block_breakable(&b, SHARD_FRACTURE_RANKINE, 1e30);
    for (size_t q = 0; q < b.n; q++) {
        b.a.scale[2 * q] = 1.0;
        for (int r = 0; r < 3; r++)
            b.p.x[3 * q + r] = (1.0 + e) * b.p.X[3 * q + r];
    }
    size_t in = block_index(2, 1, 2);
    double share = 0.0; /* sum w |n| over its bonds / S_1 */
    for (int64_t k = b.bonds.start[in]; k < b.bonds.start[in + 1]; k++) {
        const double *Xi = b.p.X + 3 * in, *Xj = b.p.X + 3 * (size_t)b.bonds.idx[k];
        double n2 = 0.0;
        for (int r = 0; r < 3; r++)
            n2 += (Xj[r] - Xi[r]) * (Xj[r] - Xi[r]) / (SPACING * SPACING);
        double q = 1.0 - n2 / (SUPPORT * SUPPORT);
        share += q * q * q * sqrt(n2);
    }
    share /= lattice_s1();
    double *each = malloc(b.n * sizeof *each), *next = each;
    shard_solid_energy(&b.p, &b.bonds, &b.sp, &b.a, block_add_each, &next);
    double *f = malloc(3 * b.n * sizeof *f);
    block_forces(&b, 0.0, f);
    const double *sg = b.a.sigma + 7 * in;
    double W = each[in] / b.p.volume[in], p_mean = (sg[0] + sg[3] + sg[5]) / 3.0;
    printf("bond-based, uniform stretch %g: W / (9 K e^2 / 2) = %.6f, mean stress / (3 K e) = %.6f, stencil "
           "share %.6f\n", e, W / (4.5 * K * e * e), p_mean / (3.0 * K * e), share);
    /* exact for e -> 0; the stretch of a bond is e exactly, the virial's y y^T / |y| carries (1 + e) */
    SHARD_ENSURE_NEAR(W / (4.5 * K * e * e), share, 1e-12);
    SHARD_ENSURE_NEAR(p_mean / (3.0 * K * e), share * (1.0 + e), 1e-12);
    free(each);
    block_free(&b);

    /* mixed block: exact gradient and zero total force */
    block_init(&b, 0, 0, 0, 0, 0);
    block_breakable(&b, SHARD_FRACTURE_STRETCH, 1.0);
    b.sp.ks = shard_solid_stabilization_stiffness(0.1, YOUNG, SPACING, SUPPORT * SPACING);
    const size_t bb[] = {block_index(2, 1, 3), block_index(0, 2, 3), block_index(0, 0, 0), block_index(3, 2, 2),
                         block_index(1, 1, 1)};
    for (size_t t = 0; t < sizeof bb / sizeof bb[0]; t++)
        b.a.scale[2 * bb[t]] = 0.3 + 0.15 * (double)t;
    b.a.scale[2 * block_index(2, 2, 2) + 1] = 0.4; /* beta = 0.6 */
    b.a.scale[2 * block_index(4, 3, 5) + 1] = 0.25;
    shard_solid_mode_sync(&b.p, &b.bonds, &b.a);
    SHARD_ENSURE(b.a.mode[2 * block_index(2, 2, 2)] == 1.0); /* a partner of (2, 1, 3) */
    SHARD_ENSURE(b.a.mode[2 * block_index(4, 0, 5)] == 0.0);
    block_smooth_deform(&b);
    check_forces_are_energy_gradient(&b, "bond-based and correspondence particles, beta, stabilisation");
    double fmax_ = block_forces(&b, 0.0, f), sum[3] = {0, 0, 0};
    for (size_t q = 0; q < b.n; q++)
        for (int k = 0; k < 3; k++)
            sum[k] += f[3 * q + k];
    double rel = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]) / fmax_;
    printf("bond-based: |sum f| / max|f| = %.3g\n", rel);
    SHARD_ENSURE(rel < 1e-12);
    free(f);
    block_free(&b);
}

/* b->bonds without the bonds between particle q and the partners for which drop(k) (k: the partner's place in
 * q's row) is set, on both sides. */
static void block_drop_bonds(block *b, size_t q, const int *drop)
{
    shard_csr out = {0};
    shard_csr_reserve(&out, b->n, (size_t)b->bonds.start[b->n] + 1);
    out.n = b->n;
    int64_t m = 0;
    for (size_t i = 0; i < b->n; i++) {
        out.start[i] = m;
        for (int64_t k = b->bonds.start[i]; k < b->bonds.start[i + 1]; k++) {
            size_t j = (size_t)b->bonds.idx[k];
            int gone = 0;
            if (i == q)
                gone = drop[k - b->bonds.start[q]];
            else if (j == q)
                for (int64_t l = b->bonds.start[q]; l < b->bonds.start[q + 1]; l++)
                    gone |= (size_t)b->bonds.idx[l] == i && drop[l - b->bonds.start[q]];
            if (!gone)
                out.idx[m++] = b->bonds.idx[k];
        }
    }
    out.start[b->n] = m;
    shard_csr_free(&b->bonds);
    b->bonds = out;
}

/* The energy rule of a break (fracture.h): whatever bonds particle q loses, the energy of q and of its former
 * partners after their moments are recomputed is never above what they had, and the rule must have acted
 * (beta < 1 somewhere, and a switch to bond-based when most of the stencil is gone). */
static void test_break_energy(void)
{
    int raised = 0, switched = 0;
    double worst = -INFINITY;
    for (int trial = 0; trial < 40; trial++) {
        block b;
        block_init(&b, 0, 0, 0, 0, 0);
        block_breakable(&b, SHARD_FRACTURE_STRETCH, 1.0);
        b.sp.ks = shard_solid_stabilization_stiffness(0.1, YOUNG, SPACING, SUPPORT * SPACING);
        block_smooth_deform(&b);
        for (size_t r = 0; r < 3 * b.n; r++)
            b.p.x[r] += 0.01 * SPACING * rnd();
        double *f = malloc(3 * b.n * sizeof *f), *e0 = malloc(b.n * sizeof *e0), *e1 = malloc(b.n * sizeof *e1);
        block_forces(&b, 0.0, f);
        double *next = e0;
        shard_solid_energy(&b.p, &b.bonds, &b.sp, &b.a, block_add_each, &next);
        size_t q = block_index(1 + trial % 3, 1 + trial % 2, 1 + trial % 4);
        int nb = (int)(b.bonds.start[q + 1] - b.bonds.start[q]), drop[128];
        double frac = trial < 20 ? 0.15 : 0.75; /* a few bonds, or most of them */
        int32_t list[128];
        size_t nl = 0;
        list[nl++] = (int32_t)q;
        for (int k = 0; k < nb; k++) {
            drop[k] = 0.5 * (rnd() + 1.0) < frac;
            if (drop[k])
                list[nl++] = b.bonds.idx[b.bonds.start[q] + k];
        }
        shard_solid_energy_before(&b.p, &b.bonds, &b.sp, &b.a, list, nl); /* with the bonds still there */
        block_drop_bonds(&b, q, drop);
        /* the rule runs over the sorted list of the particles that lost bonds */
        for (size_t u = 1; u < nl; u++)
            for (size_t v = u; v > 0 && list[v - 1] > list[v]; v--) {
                int32_t t = list[v];
                list[v] = list[v - 1], list[v - 1] = t;
            }
        int changed = 0;
        shard_solid_moments_list(&b.p, &b.bonds, &b.sp, &b.a, SVD_THRESHOLD, list, nl, NULL, &changed);
        switched += changed;
        shard_solid_mode_sync(&b.p, &b.bonds, &b.a);
        next = e1;
        shard_solid_energy(&b.p, &b.bonds, &b.sp, &b.a, block_add_each, &next);
        for (size_t u = 0; u < nl; u++) {
            size_t i = (size_t)list[u];
            /* the stabilisation's part (not in the rule) only falls: fewer terms, J the least-squares fit */
            worst = fmax(worst, (e1[i] - e0[i]) / fabs(e0[i]));
            SHARD_ENSURE(e1[i] <= e0[i] * (1.0 + 1e-12));
            raised += b.a.scale[2 * i + 1] > 0.0;
        }
        free(f), free(e0), free(e1);
        block_free(&b);
    }
    printf("break energy: 40 losses, largest relative change of a particle's energy %.3g; beta < 1 at %d particles; "
           "switches to bond-based: %d\n", worst, raised, switched);
    SHARD_ENSURE(raised);
    SHARD_ENSURE(switched > 0);
}

int main(void)
{
    test_pinv();
    test_barrier();
    test_affine_gradient();
    test_rigid_motion();
    test_hooke();
    test_volume_term();
    test_forces_are_energy_gradient();
    test_stabilization();
    test_wall_rule();
    test_momentum();
    test_plasticity();
    test_damping();
    test_bond_based();
    test_break_energy();
    return SHARD_TEST_RESULT();
}
