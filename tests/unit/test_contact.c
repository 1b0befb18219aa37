/* Contact (contact.h): penalty forces between particles of different bodies and against analytic obstacles,
 * checked against the closed forms of the model on hand-built stores of two to four particles (one rank, every
 * particle owned, candidate lists built by hand or by shard_neighbor_contacts).
 *
 * Pair constants: k = k_i k_j / (k_i + k_j), k_t likewise, m_eff = m_i m_j / (m_i + m_j),
 * zeta = (zeta_i + zeta_j) / 2, mu = sqrt(mu_i mu_j); N = max(0, k delta - 2 zeta sqrt(k m_eff) v_n); friction
 * F_t = k_t xi + 2 zeta sqrt(k_t m_eff) v_t with xi the remembered tangential displacement (advanced by v_t dt
 * each step), held to |F_t| <= mu N.  The two bodies' constants below are chosen so that these come out round:
 * k = 75 kN/m, k_t = 60 kN/m, m_eff = 1.2 kg, sqrt(k m_eff) = 300, zeta = 0.15, mu = 0.6. */
#include "contact.h"
#include "shard/matter.h"
#include "shard/neighbor.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static const shard_contact_params CP[2] = {
    {.radius = 0.05, .k = 1.0e5, .kt = 0.8e5, .zeta = 0.2, .mu = 0.4},
    {.radius = 0.03, .k = 3.0e5, .kt = 2.4e5, .zeta = 0.1, .mu = 0.9},
};
static const double K_SERIES = 75000.0, M_EFF = 1.2, ZETA = 0.15, MU = 0.6, CRIT = 600.0; /* CRIT = 2 sqrt(k m) */
static const double KT_SERIES = 60000.0;
#define CRIT_T (2.0 * sqrt(KT_SERIES * M_EFF)) /* 2 sqrt(k_t m_eff) */
static const double MASS[2] = {2.0, 3.0};
static shard_pairlist scratch; /* this step's memory where a test does not look at it */

/* A 3-4-5 normal and a unit tangent orthogonal to it. */
static const double NRM[3] = {0.6, 0.0, 0.8}, TAN[3] = {0.8, 0.0, -0.6};

/* A store of n owned particles, particle q of body body[q] at x[q] with velocity v[q] and mass MASS[body]. */
static void make_store(shard_particles *p, size_t n, const int *body, const double (*x)[3], const double (*v)[3])
{
    memset(p, 0, sizeof *p);
    shard_particles_reserve(p, n);
    p->n_owned = p->n_local = n;
    for (size_t q = 0; q < n; q++) {
        p->gid[q] = (int64_t)(100 + q);
        p->body[q] = body[q];
        p->mass[q] = MASS[body[q]];
        for (int k = 0; k < 3; k++)
            p->x[3 * q + k] = x[q][k], p->v[3 * q + k] = v ? v[q][k] : 0.0;
    }
}

/* Candidates by hand: every particle of another body (the pair evaluator takes the list as given). */
static void all_pairs(const shard_particles *p, shard_csr *c)
{
    shard_csr_reserve(c, p->n_owned, p->n_owned * p->n_local);
    c->n = p->n_owned;
    c->start[0] = 0;
    size_t m = 0;
    for (size_t i = 0; i < p->n_owned; i++) {
        for (size_t j = 0; j < p->n_local; j++)
            if (p->body[j] != p->body[i])
                c->idx[m++] = (int32_t)j;
        c->start[i + 1] = (int64_t)m;
    }
}

/* a == -b exactly, component by component (as numbers: +0 and -0 compare equal; a zero component comes out
 * +0 on both sides, since 0 - 0 = +0). */
static int bits_negated(const double *a, const double *b)
{
    for (int k = 0; k < 3; k++)
        if (!(a[k] == -b[k]))
            return 0;
    return 1;
}

/* One pair: particle 0 (body 0) at the origin with velocity v0, particle 1 (body 1) at distance
 * r0 + r1 - delta along NRM with velocity v1, a first touch (no memory, dt = 0).  Returns the active count and
 * the two forces. */
static size_t pair_step(double delta, const double v0[3], const double v1[3], double dt, const shard_pairlist *in,
                        shard_pairlist *out, double f[6]);
static size_t pair_force(double delta, const double v0[3], const double v1[3], double f[6])
{
    shard_pairlist out;
    shard_pairlist_init(&out, 3);
    size_t n = pair_step(delta, v0, v1, 0.0, NULL, &out, f);
    shard_pairlist_free(&out);
    return n;
}

/* The same with memory: last step's list `in` (may be NULL), this step's into `out`, after a step dt. */
static size_t pair_step(double delta, const double v0[3], const double v1[3], double dt, const shard_pairlist *in,
                        shard_pairlist *out, double f[6])
{
    int body[2] = {0, 1};
    double d = CP[0].radius + CP[1].radius - delta;
    double x[2][3] = {{0.0, 0.0, 0.0}, {d * NRM[0], d * NRM[1], d * NRM[2]}};
    double v[2][3] = {{v0[0], v0[1], v0[2]}, {v1[0], v1[1], v1[2]}};
    shard_particles p;
    make_store(&p, 2, body, (const double (*)[3])x, (const double (*)[3])v);
    shard_csr cand = {0};
    all_pairs(&p, &cand);
    memset(f, 0, 6 * sizeof *f);
    size_t n = shard_contact_pairs(&p, NULL, &cand, NULL, NULL, CP, NULL, dt, in, out, f);
    shard_csr_free(&cand);
    shard_particles_free(&p);
    return n;
}

static void test_pair_at_rest(void)
{
    SHARD_ENSURE_NEAR(2.0 * sqrt(K_SERIES * M_EFF), CRIT, 1e-12); /* the constants above agree */
    const double zero[3] = {0, 0, 0}, delta = 1e-3;
    double f[6];
    size_t n = pair_force(delta, zero, zero, f);
    SHARD_ENSURE(n == 2); /* each owner counts its side */
    double N = K_SERIES * delta; /* 75 N */
    for (int k = 0; k < 3; k++) {
        SHARD_ENSURE_NEAR(f[k], -N * NRM[k], 1e-9);     /* i is pushed away from j */
        SHARD_ENSURE_NEAR(f[3 + k], N * NRM[k], 1e-9);
    }
    SHARD_ENSURE(bits_negated(f, f + 3));
    printf("at rest, delta %g: |f_i| = %.15g N (k_series delta = %.15g), f_i == -f_j bitwise: %d, active %zu\n",
           delta, sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]), N, bits_negated(f, f + 3), n);
}

static void test_pair_damping(void)
{
    const double delta = 1e-3, u = 0.05;
    /* closing at 2u along the normal: v_n = (v_j - v_i).n = -2u */
    double v0[3] = {u * NRM[0], u * NRM[1], u * NRM[2]}, v1[3] = {-u * NRM[0], -u * NRM[1], -u * NRM[2]};
    double f[6];
    size_t n = pair_force(delta, v0, v1, f);
    double N = K_SERIES * delta + ZETA * CRIT * 2.0 * u; /* 75 + 9 = 84 N */
    double fn = -(f[0] * NRM[0] + f[1] * NRM[1] + f[2] * NRM[2]);
    SHARD_ENSURE(n == 2);
    SHARD_ENSURE_NEAR(fn, N, 1e-9);
    SHARD_ENSURE_NEAR(fabs(f[0] * TAN[0] + f[2] * TAN[2]) + fabs(f[1]), 0.0, 1e-12); /* no tangential part */
    SHARD_ENSURE(bits_negated(f, f + 3));
    printf("closing at %g m/s: N = %.15g N (k delta + 2 zeta sqrt(k m_eff) |v_n| = %.15g)\n", 2 * u, fn, N);

    /* opening fast enough that k delta - c_n v_n < 0: no force (N = max(0, ...)) */
    double w = 1.0; /* c_n v_n = 0.15 * 600 * 2 = 180 N > 75 N */
    double s0[3] = {-w * NRM[0], -w * NRM[1], -w * NRM[2]}, s1[3] = {w * NRM[0], w * NRM[1], w * NRM[2]};
    n = pair_force(delta, s0, s1, f);
    double fmax_abs = 0.0;
    for (int k = 0; k < 6; k++)
        fmax_abs = fmax(fmax_abs, fabs(f[k]));
    SHARD_ENSURE(fmax_abs == 0.0);
    printf("opening at %g m/s while overlapping: max |f| = %g (N clamped at 0), reported active %zu\n", 2 * w,
           fmax_abs, n);
}

static void test_pair_friction(void)
{
    const double delta = 1e-3, zero[3] = {0, 0, 0};
    double N = K_SERIES * delta;
    /* a first touch (no memory yet, dt = 0): only the tangential dashpot acts.  Slow slip:
     * zeta c_t |v_t| = 0.15 * 536.7 * 0.01 = 0.805 N < mu N = 45 N; fast: 80.5 N > 45 N (Coulomb) */
    const double slips[2] = {0.01, 1.0};
    for (int s = 0; s < 2; s++) {
        double w = slips[s];
        double v1[3] = {w * TAN[0], w * TAN[1], w * TAN[2]}; /* j slides along TAN, i is at rest */
        double f[6];
        size_t n = pair_force(delta, zero, v1, f);
        double ft_expect = fmin(MU * N, ZETA * CRIT_T * w);
        double ft = f[0] * TAN[0] + f[1] * TAN[1] + f[2] * TAN[2]; /* i is dragged along j's slip */
        double fn = -(f[0] * NRM[0] + f[1] * NRM[1] + f[2] * NRM[2]);
        SHARD_ENSURE(n == 2);
        SHARD_ENSURE_NEAR(fn, N, 1e-9);
        SHARD_ENSURE_NEAR(ft, ft_expect, 1e-9);
        SHARD_ENSURE_NEAR(f[1], 0.0, 0.0);
        /* j's friction opposes its own slip */
        SHARD_ENSURE_NEAR(f[3] * TAN[0] + f[4] * TAN[1] + f[5] * TAN[2], -ft_expect, 1e-9);
        SHARD_ENSURE(bits_negated(f, f + 3));
        printf("first touch, slip %g m/s (%s): friction on i %.15g N, expected min(mu N = %g, zeta c_t |v_t| = %g)"
               " = %g\n",
               w, s == 0 ? "dashpot" : "Coulomb", ft, MU * N, ZETA * CRIT_T * w, ft_expect);
    }
    /* slip and approach together, in general directions: symmetry is bitwise for any velocities */
    double v0[3] = {0.13, -0.07, 0.02}, v1[3] = {-0.3, 0.11, -0.05};
    double f[6];
    pair_force(2.5e-3, v0, v1, f);
    SHARD_ENSURE(bits_negated(f, f + 3));
    SHARD_ENSURE(f[0] != 0.0 && f[1] != 0.0 && f[2] != 0.0);
}

/* The rows of a two-particle list: i's (row 0) keyed by j's global id 101, j's (row 1) by 100; the values are
 * exact negatives.  Returns i's stored displacement along TAN. */
static double memory_of_pair(const shard_pairlist *l)
{
    SHARD_ENSURE(l->n == 2 && shard_pairlist_size(l) == 2);
    SHARD_ENSURE(l->start[1] == 1 && l->key[0] == 101 && l->key[1] == 100);
    SHARD_ENSURE(bits_negated(l->val, l->val + 3));
    return l->val[0] * TAN[0] + l->val[1] * TAN[1] + l->val[2] * TAN[2];
}

/* Stick, slip, reversal: j slides along TAN at w past i at rest, step after step.  The spring loads by
 * k_t w dt a step (k_t w dt = 0.6 N) on top of the dashpot's zeta c_t w = 0.805 N until the sum reaches mu N =
 * 45 N (step 74); from then on the force is mu N exactly and the spring holds mu N / k_t.  Reversing the slip
 * unloads the spring from there: the first reversed step gives mu N - k_t w dt - zeta c_t w, not -0.805 N as a
 * model without memory would. */
static void test_pair_stick_slip(void)
{
    const double delta = 1e-3, w = 0.01, dt = 1e-3, zero[3] = {0, 0, 0};
    const double N = K_SERIES * delta, cap = MU * N, dash = ZETA * CRIT_T * w;
    shard_pairlist l[2];
    shard_pairlist_init(&l[0], 3), shard_pairlist_init(&l[1], 3);
    double v1[3] = {w * TAN[0], w * TAN[1], w * TAN[2]}, f[6];
    int cur = 0, first_slip = 0;
    for (int q = 1; q <= 100; q++) {
        SHARD_ENSURE(pair_step(delta, zero, v1, dt, q == 1 ? NULL : &l[cur], &l[1 - cur], f) == 2);
        cur = 1 - cur;
        double ft = f[0] * TAN[0] + f[1] * TAN[1] + f[2] * TAN[2];
        double stick = KT_SERIES * q * w * dt + dash;
        double xi = memory_of_pair(&l[cur]);
        SHARD_ENSURE(bits_negated(f, f + 3));
        if (stick < cap) {
            SHARD_ENSURE_NEAR(ft, stick, 1e-9);
            SHARD_ENSURE_NEAR(xi, q * w * dt, 1e-15);
        } else {
            if (!first_slip)
                first_slip = q;
            SHARD_ENSURE_NEAR(ft, cap, 1e-12);
            SHARD_ENSURE_NEAR(xi, cap / KT_SERIES, 1e-15);
        }
        if (q == 50 || q == 100)
            printf("stick-slip step %d: friction %.15g N (stick %.15g, cap mu N %g), memory %.6g m\n", q, ft, stick,
                   cap, xi);
    }
    SHARD_ENSURE(first_slip == 74);
    double back[3] = {-v1[0], -v1[1], -v1[2]};
    pair_step(delta, zero, back, dt, &l[cur], &l[1 - cur], f);
    cur = 1 - cur;
    double ft = f[0] * TAN[0] + f[1] * TAN[1] + f[2] * TAN[2];
    SHARD_ENSURE_NEAR(ft, cap - KT_SERIES * w * dt - dash, 1e-9);
    SHARD_ENSURE_NEAR(memory_of_pair(&l[cur]), cap / KT_SERIES - w * dt, 1e-15);
    printf("reversed: friction %.15g N (mu N - k_t w dt - zeta c_t w = %.15g)\n", ft,
           cap - KT_SERIES * w * dt - dash);

    /* The contact opens: its memory is dropped, and a new touch starts from an unstretched spring. */
    pair_step(-1e-6, zero, zero, dt, &l[cur], &l[1 - cur], f);
    cur = 1 - cur;
    SHARD_ENSURE(l[cur].n == 2 && shard_pairlist_size(&l[cur]) == 0);
    pair_step(delta, zero, zero, dt, &l[cur], &l[1 - cur], f);
    cur = 1 - cur;
    SHARD_ENSURE_NEAR(f[0] * TAN[0] + f[1] * TAN[1] + f[2] * TAN[2], 0.0, 1e-12);
    SHARD_ENSURE(memory_of_pair(&l[cur]) == 0.0);
    shard_pairlist_free(&l[0]), shard_pairlist_free(&l[1]);
}

/* A remembered displacement with a part along the normal (the contact has turned since it was stored) keeps
 * only its part in the tangent plane. */
static void test_pair_memory_turns(void)
{
    const double delta = 1e-3, zero[3] = {0, 0, 0}, a = 2e-5, b = 1e-4;
    shard_pairlist in, out;
    shard_pairlist_init(&in, 3), shard_pairlist_init(&out, 3);
    shard_pairlist_reset(&in, 2);
    double xi[3], xj[3];
    for (int k = 0; k < 3; k++)
        xi[k] = a * TAN[k] + b * NRM[k], xj[k] = -xi[k];
    shard_pairlist_push(&in, 0, 101, xi);
    shard_pairlist_push(&in, 1, 100, xj);
    shard_pairlist_finish(&in);
    double f[6];
    pair_step(delta, zero, zero, 1e-3, &in, &out, f);
    double ft = f[0] * TAN[0] + f[1] * TAN[1] + f[2] * TAN[2], fn = -(f[0] * NRM[0] + f[1] * NRM[1] + f[2] * NRM[2]);
    SHARD_ENSURE_NEAR(ft, KT_SERIES * a, 1e-9);
    SHARD_ENSURE_NEAR(fn, K_SERIES * delta, 1e-9);
    SHARD_ENSURE_NEAR(memory_of_pair(&out), a, 1e-18);
    SHARD_ENSURE_NEAR(out.val[0] * NRM[0] + out.val[1] * NRM[1] + out.val[2] * NRM[2], 0.0, 1e-18);
    printf("turned memory: friction %.15g N (k_t a = %g), normal part of the memory dropped\n", ft, KT_SERIES * a);
    shard_pairlist_free(&in), shard_pairlist_free(&out);
}

static void test_pair_separated(void)
{
    const double zero[3] = {0, 0, 0};
    double f[6];
    /* a gap of 1 um along NRM, and exactly touching along x (|d|^2 = (r_i + r_j)^2 in floating point too):
     * nothing, not counted */
    const double deltas[2] = {-1e-6, 0.0};
    for (int s = 0; s < 2; s++) {
        size_t n;
        if (s == 0) {
            n = pair_force(deltas[s], zero, zero, f);
        } else {
            int body[2] = {0, 1};
            double x[2][3] = {{0, 0, 0}, {CP[0].radius + CP[1].radius, 0, 0}};
            shard_particles p;
            make_store(&p, 2, body, (const double (*)[3])x, NULL);
            shard_csr cand = {0};
            all_pairs(&p, &cand);
            memset(f, 0, 6 * sizeof *f);
            n = shard_contact_pairs(&p, NULL, &cand, NULL, NULL, CP, NULL, 0.0, NULL, &scratch, f);
            shard_csr_free(&cand);
            shard_particles_free(&p);
        }
        double m = 0.0;
        for (int k = 0; k < 6; k++)
            m = fmax(m, fabs(f[k]));
        SHARD_ENSURE(n == 0);
        SHARD_ENSURE(m == 0.0);
        printf("overlap %g: active %zu, max |f| %g\n", deltas[s], n, m);
    }
}

/* Four particles, candidates from shard_neighbor_contacts: particle 0 (body 0) overlaps 1 and 3 (body 1), not 2;
 * 1, 2, 3 are of one body and never interact among themselves. */
static void test_pair_count_and_sum(void)
{
    int body[4] = {0, 1, 1, 1};
    double x[4][3] = {{0, 0, 0}, {0.07, 0, 0}, {0, 0.09, 0}, {0, 0, -0.075}};
    shard_particles p;
    make_store(&p, 4, body, (const double (*)[3])x, NULL);
    double radius[2] = {CP[0].radius, CP[1].radius};
    shard_cells cells = {0};
    shard_csr cand = {0};
    shard_neighbor_contacts(&p, radius, NULL, NULL, 0.02, &cells, &cand);
    /* with the skin, 2 (gap 0.01) is a candidate of 0 but does not touch */
    SHARD_ENSURE(cand.start[1] - cand.start[0] == 3);
    double f[12] = {0};
    size_t n = shard_contact_pairs(&p, NULL, &cand, NULL, NULL, CP, NULL, 0.0, NULL, &scratch, f);
    SHARD_ENSURE(n == 4); /* (0,1), (0,3) from 0's row, and 1's and 3's rows */
    double N1 = K_SERIES * 0.01, N3 = K_SERIES * 0.005;
    SHARD_ENSURE_NEAR(f[0], -N1, 1e-9);
    SHARD_ENSURE_NEAR(f[1], 0.0, 0.0);
    SHARD_ENSURE_NEAR(f[2], N3, 1e-9);
    SHARD_ENSURE_NEAR(f[3], N1, 1e-9);
    SHARD_ENSURE(f[6] == 0.0 && f[7] == 0.0 && f[8] == 0.0);
    SHARD_ENSURE_NEAR(f[11], -N3, 1e-9);
    printf("4 particles: %zu active, candidates of 0: %lld, f_0 = (%.12g, %g, %.12g) expected (%g, 0, %g)\n", n,
           (long long)(cand.start[1] - cand.start[0]), f[0], f[1], f[2], -N1, N3);
    shard_cells_free(&cells);
    shard_csr_free(&cand);
    shard_particles_free(&p);
}

/* Each owner computes its own side: two stores that see the same pair (a at xa, of body 0; b at xb, of body 1)
 * from either end (owned + contact ghost, in opposite local orders), for five steps, each owner with its own
 * memory (constants cp; surface normals na, nb, or NULL).  Returns 1 when the forces and memories stay exact
 * negatives and nothing is written to the ghost; the last step's forces in fa, fb. */
static int two_owners(const shard_contact_params *cp, const double xa[3], const double xb[3], const double *na,
                      const double *nb, double fa[6], double fb[6])
{
    double va[3] = {0.3, -0.1, 0.7}, vb[3] = {-0.2, 0.05, 0.1};
    int body_a[2] = {0, 1}, body_b[2] = {1, 0};
    double xs_a[2][3], xs_b[2][3], vs_a[2][3], vs_b[2][3], nrm_a[6] = {0}, nrm_b[6] = {0};
    memcpy(xs_a[0], xa, sizeof xs_a[0]), memcpy(xs_a[1], xb, sizeof xs_a[1]);
    memcpy(xs_b[0], xb, sizeof xs_b[0]), memcpy(xs_b[1], xa, sizeof xs_b[1]);
    memcpy(vs_a[0], va, sizeof va), memcpy(vs_a[1], vb, sizeof vb);
    memcpy(vs_b[0], vb, sizeof vb), memcpy(vs_b[1], va, sizeof va);
    if (na && nb) {
        memcpy(nrm_a, na, 3 * sizeof *na), memcpy(nrm_a + 3, nb, 3 * sizeof *nb);
        memcpy(nrm_b, nb, 3 * sizeof *nb), memcpy(nrm_b + 3, na, 3 * sizeof *na);
    }
    shard_particles pa, pb;
    make_store(&pa, 2, body_a, (const double (*)[3])xs_a, (const double (*)[3])vs_a);
    make_store(&pb, 2, body_b, (const double (*)[3])xs_b, (const double (*)[3])vs_b);
    pa.n_owned = pb.n_owned = 1; /* the partner is a contact ghost */
    pb.gid[0] = 101, pb.gid[1] = 100;  /* the same two particles */
    shard_csr ca = {0}, cb = {0};
    all_pairs(&pa, &ca), all_pairs(&pb, &cb);
    shard_pairlist la[2], lb[2];
    for (int k = 0; k < 2; k++)
        shard_pairlist_init(&la[k], 3), shard_pairlist_init(&lb[k], 3);
    int same = 1;
    for (int q = 0; q < 5; q++) {
        memset(fa, 0, 6 * sizeof *fa), memset(fb, 0, 6 * sizeof *fb);
        const shard_pairlist *ia = q ? &la[q % 2] : NULL, *ib = q ? &lb[q % 2] : NULL;
        size_t n1 =
            shard_contact_pairs(&pa, na ? nrm_a : NULL, &ca, NULL, NULL, cp, NULL, 1e-4, ia, &la[1 - q % 2], fa);
        size_t n2 =
            shard_contact_pairs(&pb, nb ? nrm_b : NULL, &cb, NULL, NULL, cp, NULL, 1e-4, ib, &lb[1 - q % 2], fb);
        same &= n1 == 1 && n2 == 1 && la[1 - q % 2].key[0] == 101 && lb[1 - q % 2].key[0] == 100 &&
                bits_negated(fa, fb) && bits_negated(la[1 - q % 2].val, lb[1 - q % 2].val);
    }
    same &= fa[3] == 0.0 && fa[4] == 0.0 && fa[5] == 0.0; /* nothing written to the ghost */
    for (int k = 0; k < 2; k++)
        shard_pairlist_free(&la[k]), shard_pairlist_free(&lb[k]);
    shard_csr_free(&ca), shard_csr_free(&cb);
    shard_particles_free(&pa), shard_particles_free(&pb);
    return same;
}

static void test_pair_two_owners(void)
{
    double xa[3] = {0.1, 0.2, 0.3}, xb[3] = {0.1 + 0.031, 0.2 - 0.042, 0.3 + 0.0173}, fa[6], fb[6];
    SHARD_ENSURE(two_owners(CP, xa, xb, NULL, NULL, fa, fb));
    printf("two owners, 5 steps with memory: f_a = (%.17g, %.17g, %.17g), f_b = (%.17g, %.17g, %.17g)\n", fa[0],
           fa[1], fa[2], fb[0], fb[1], fb[2]);
}

static void test_params_init(void)
{
    shard_material mats[2] = {
        {.E = 2.0e9, .nu = 0.25, .contact_stiffness = 0.0, .contact_damping = 0.1, .friction = 0.5},
        {.E = 7.0e10, .nu = 0.0, .contact_stiffness = 5.0e5, .contact_damping = 0.3, .friction = 0.2}};
    shard_body_def bodies[2] = {{.material = 0, .spacing = 0.01}, {.material = 1, .spacing = 0.004}};
    shard_scene sc = {.n_materials = 2, .materials = mats, .n_bodies = 2, .bodies = bodies};
    sc.modules = shard_matter_table(&sc.n_modules); /* both solids: row 0 */
    shard_contact_params a, b;
    shard_contact_params_init(&sc, 0, &a);
    shard_contact_params_init(&sc, 1, &b);
    SHARD_ENSURE_NEAR(a.radius, 0.005, 1e-18);
    SHARD_ENSURE_NEAR(a.k, 2.0e7, 1e-6); /* auto: E * spacing */
    SHARD_ENSURE_NEAR(b.radius, 0.002, 1e-18);
    SHARD_ENSURE(b.k == 5.0e5); /* given */
    SHARD_ENSURE(a.zeta == 0.1 && a.mu == 0.5 && b.zeta == 0.3 && b.mu == 0.2);
    SHARD_ENSURE_NEAR(a.kt, 2.0e7 * 2.0 * 0.75 / 1.75, 1e-6); /* Mindlin: 2 (1 - nu) / (2 - nu) */
    SHARD_ENSURE(b.kt == b.k);                                 /* nu = 0: ratio 1 */
    printf("params: auto k = %g (E spacing = %g), given k = %g\n", a.k, 2.0e9 * 0.01, b.k);
}

/* ---------------------------------------------------------------- obstacles */

static const shard_contact_params OCP[1] = {{.radius = 0.05, .k = 1.0e5, .kt = 0.5e5, .zeta = 0.0, .mu = 0.0}};
static const double OMASS = 2.0, OCRIT = 2.0 * 447.21359549995793; /* 2 sqrt(k m) = 2 sqrt(2e5) */
static const double OCRIT_T = 2.0 * 316.22776601683793;             /* 2 sqrt(k_t m) = 2 sqrt(1e5) */

/* The force on one particle of body 0 at x with velocity v against one obstacle at time t. */
static size_t obstacle_force(const shard_obstacle_def *o, double t, const double x[3], const double v[3],
                             double f[3])
{
    shard_particles p;
    int body[1] = {0};
    double xs[1][3] = {{x[0], x[1], x[2]}}, vs[1][3] = {{v[0], v[1], v[2]}};
    make_store(&p, 1, body, (const double (*)[3])xs, (const double (*)[3])vs);
    p.mass[0] = OMASS;
    f[0] = f[1] = f[2] = 0.0;
    size_t n = shard_contact_obstacles(&p, OCP, NULL, 1, o, t, 0.0, NULL, &scratch, f);
    shard_particles_free(&p);
    return n;
}

/* Checks f against N along the unit normal n plus ft along the unit tangent tv (may be NULL). */
static void ensure_force(const char *what, const double f[3], double N, const double n[3], double ft,
                         const double *tv, double tol)
{
    double e[3];
    for (int k = 0; k < 3; k++)
        e[k] = N * n[k] + (tv ? ft * tv[k] : 0.0);
    double err = fabs(f[0] - e[0]) + fabs(f[1] - e[1]) + fabs(f[2] - e[2]);
    SHARD_ENSURE_NEAR(err, 0.0, tol);
    printf("%-34s f = (%.12g, %.12g, %.12g), expected (%.12g, %.12g, %.12g), |err|_1 = %.3g\n", what, f[0], f[1],
           f[2], e[0], e[1], e[2], err);
}

static void test_obstacle_plane(void)
{
    const double zero[3] = {0, 0, 0}, up[3] = {0, 0, 1}, ex[3] = {1, 0, 0};
    shard_obstacle_def o = {.kind = SHARD_OBSTACLE_PLANE, .point = {0, 0, 1}, .normal = {0, 0, 1},
                            .friction = 0.0, .stiffness = 0.0, .damping = 0.0};
    double f[3];
    /* 0.04 above the plane: overlap 0.01, auto stiffness = the particle's k */
    size_t n = obstacle_force(&o, 0.0, (double[3]){0.3, -0.2, 1.04}, zero, f);
    SHARD_ENSURE(n == 1);
    ensure_force("plane, auto stiffness:", f, 1.0e5 * 0.01, up, 0, NULL, 1e-9);
    o.stiffness = 4.0e4;
    n = obstacle_force(&o, 0.0, (double[3]){0.3, -0.2, 1.04}, zero, f);
    SHARD_ENSURE(n == 1);
    ensure_force("plane, given stiffness:", f, 4.0e4 * 0.01, up, 0, NULL, 1e-9);
    o.stiffness = 0.0;
    /* falling onto it at 0.5 m/s, damping 0.1 */
    o.damping = 0.1;
    n = obstacle_force(&o, 0.0, (double[3]){0.3, -0.2, 1.04}, (double[3]){0, 0, -0.5}, f);
    ensure_force("plane, approaching, damped:", f, 1.0e3 + 0.1 * OCRIT * 0.5, up, 0, NULL, 1e-9);
    /* below the plane: pushed up by k (r - dist), dist < 0 */
    n = obstacle_force(&o, 0.0, (double[3]){0, 0, 0.99}, zero, f);
    SHARD_ENSURE(n == 1);
    ensure_force("plane, particle below it:", f, 1.0e5 * 0.06, up, 0, NULL, 1e-9);
    /* clear of it */
    n = obstacle_force(&o, 0.0, (double[3]){0, 0, 1.0501}, zero, f);
    SHARD_ENSURE(n == 0 && f[0] == 0.0 && f[1] == 0.0 && f[2] == 0.0);

    /* moving plane: at t = 0.1 it has risen 0.03 (to z = 1.03) and slides along x at 0.2 m/s; a particle at
     * rest at z = 1.06 overlaps by 0.02 and sees v_n = -0.3: N = k 0.02 + zeta c 0.3, friction along +x */
    o.velocity[0] = 0.2, o.velocity[2] = 0.3, o.friction = 0.5;
    n = obstacle_force(&o, 0.1, (double[3]){0, 0, 1.06}, zero, f);
    SHARD_ENSURE(n == 1);
    double N = 1.0e5 * 0.02 + 0.1 * OCRIT * 0.3;
    double ft = fmin(0.5 * N, 0.1 * OCRIT_T * 0.2);
    SHARD_ENSURE(0.1 * OCRIT_T * 0.2 < 0.5 * N); /* first touch: the tangential dashpot alone */
    ensure_force("moving plane (dashpot friction):", f, N, up, ft, ex, 1e-9);
    /* fast slide: Coulomb */
    o.velocity[0] = 50.0;
    n = obstacle_force(&o, 0.1, (double[3]){0, 0, 1.06}, zero, f);
    SHARD_ENSURE(0.1 * OCRIT_T * 50.0 > 0.5 * N);
    ensure_force("moving plane (Coulomb friction):", f, N, up, 0.5 * N, ex, 1e-9);
    /* the same particle moving with the plane feels neither damping nor friction */
    n = obstacle_force(&o, 0.1, (double[3]){0, 0, 1.06}, o.velocity, f);
    ensure_force("co-moving with the plane:", f, 1.0e5 * 0.02, up, 0, NULL, 1e-9);
}

/* Memory against obstacles: a particle resting on a plane that slides along x at u loads its spring by
 * k_t u dt a step (k_t = the particle's Mindlin ratio times the plane's stiffness), keyed by the obstacle's
 * index, up to mu N; two obstacles keep two entries. */
static void test_obstacle_memory(void)
{
    const double u = 0.01, dt = 1e-3, ex[3] = {1, 0, 0};
    shard_obstacle_def o[2] = {
        {.kind = SHARD_OBSTACLE_PLANE, .point = {0, 0, 1}, .normal = {0, 0, 1}, .friction = 0.5,
         .stiffness = 4.0e4, .velocity = {u, 0, 0}},
        {.kind = SHARD_OBSTACLE_PLANE, .point = {0, 0, 1.08}, .normal = {0, 0, -1}, .friction = 0.0}};
    const double kt = OCP[0].kt / OCP[0].k * o[0].stiffness, N = o[0].stiffness * 0.01;
    shard_particles p;
    int body[1] = {0};
    double xs[1][3] = {{0.0, 0.0, 1.04}};
    make_store(&p, 1, body, (const double (*)[3])xs, NULL);
    p.mass[0] = OMASS;
    shard_pairlist l[2];
    shard_pairlist_init(&l[0], 3), shard_pairlist_init(&l[1], 3);
    double f[3];
    int cur = 0;
    for (int q = 1; q <= 1200; q++) {
        f[0] = f[1] = f[2] = 0.0;
        /* t = 0 throughout: the plane's motion enters only through its velocity here */
        size_t n = shard_contact_obstacles(&p, OCP, NULL, 2, o, 0.0, dt, q == 1 ? NULL : &l[cur], &l[1 - cur], f);
        cur = 1 - cur;
        SHARD_ENSURE(n == 2 && shard_pairlist_size(&l[cur]) == 2 && l[cur].key[0] == 0 && l[cur].key[1] == 1);
        double stick = kt * q * u * dt;
        double ft = fmin(stick, 0.5 * N);
        if (q == 10 || q == 1200) {
            /* the lower plane pushes up by 4e4 * 0.01, the upper (the particle's stiffness) down by 1e5 * 0.01 */
            double e[3] = {ft * ex[0], 0.0, N - OCP[0].k * 0.01};
            char what[64];
            snprintf(what, sizeof what, "sliding plane, step %d:", q);
            ensure_force(what, f, 1.0, e, 0, NULL, 1e-9);
        }
    }
    SHARD_ENSURE_NEAR(l[cur].val[0], 0.5 * N / kt, 1e-15); /* slipping: the spring holds mu N / k_t */
    shard_pairlist_free(&l[0]), shard_pairlist_free(&l[1]);
    shard_particles_free(&p);
}

static void test_obstacle_sphere(void)
{
    const double zero[3] = {0, 0, 0};
    shard_obstacle_def o = {.kind = SHARD_OBSTACLE_SPHERE, .center = {1, 2, 3}, .radius = 1.0};
    double f[3];
    /* outside along (0.36, 0.48, 0.8) at 1.03 from the centre: overlap 0.02 */
    double u[3] = {0.36, 0.48, 0.8};
    double x[3] = {1 + 1.03 * u[0], 2 + 1.03 * u[1], 3 + 1.03 * u[2]};
    size_t n = obstacle_force(&o, 0.0, x, zero, f);
    SHARD_ENSURE(n == 1);
    ensure_force("sphere, outside:", f, 1.0e5 * 0.02, u, 0, NULL, 1e-8);
    /* inside at 0.5 from the centre: dist = -0.5, overlap 0.55, pushed outwards */
    double xi[3] = {1 + 0.5 * u[0], 2 + 0.5 * u[1], 3 + 0.5 * u[2]};
    n = obstacle_force(&o, 0.0, xi, zero, f);
    SHARD_ENSURE(n == 1);
    ensure_force("sphere, inside:", f, 1.0e5 * 0.55, u, 0, NULL, 1e-8);
    /* moving sphere: centre at (1, 2, 3) + 2 (0.5, 0, 0) = (2, 2, 3) at t = 2 */
    o.velocity[0] = 0.5;
    double xm[3] = {2 + 1.03 * u[0], 2 + 1.03 * u[1], 3 + 1.03 * u[2]};
    o.damping = 0.0;
    n = obstacle_force(&o, 2.0, xm, o.velocity, f);
    SHARD_ENSURE(n == 1);
    ensure_force("moving sphere, co-moving particle:", f, 1.0e5 * 0.02, u, 0, NULL, 1e-8);
    n = obstacle_force(&o, 0.0, xm, zero, f); /* at t = 0 the sphere is 1 m away */
    SHARD_ENSURE(n == 0);
}

static void test_obstacle_box(void)
{
    const double zero[3] = {0, 0, 0};
    shard_obstacle_def o = {.kind = SHARD_OBSTACLE_BOX, .min = {0, 0, 0}, .max = {1, 2, 3}};
    double f[3];
    const double r = OCP[0].radius, k = OCP[0].k;
    /* on the centre of each face: dist 0, overlap r, outward normal */
    const double c[3] = {0.5, 1.0, 1.5};
    for (int face = 0; face < 6; face++) {
        int ax = face / 2, hi = face % 2;
        double x[3] = {c[0], c[1], c[2]}, nrm[3] = {0, 0, 0};
        x[ax] = hi ? o.max[ax] : o.min[ax];
        nrm[ax] = hi ? 1.0 : -1.0;
        size_t n = obstacle_force(&o, 0.0, x, zero, f);
        SHARD_ENSURE(n == 1);
        char what[64];
        snprintf(what, sizeof what, "box, on face %c%c:", hi ? '+' : '-', "xyz"[ax]);
        ensure_force(what, f, k * r, nrm, 0, NULL, 1e-9);
        /* 0.01 inside that face: pushed out through it with overlap r + 0.01 */
        x[ax] += hi ? -0.01 : 0.01;
        n = obstacle_force(&o, 0.0, x, zero, f);
        SHARD_ENSURE(n == 1);
        snprintf(what, sizeof what, "box, 0.01 inside face %c%c:", hi ? '+' : '-', "xyz"[ax]);
        ensure_force(what, f, k * (r + 0.01), nrm, 0, NULL, 1e-8);
        /* 0.03 outside it */
        x[ax] += hi ? 0.04 : -0.04;
        n = obstacle_force(&o, 0.0, x, zero, f);
        SHARD_ENSURE(n == 1);
        snprintf(what, sizeof what, "box, 0.03 outside face %c%c:", hi ? '+' : '-', "xyz"[ax]);
        ensure_force(what, f, k * (r - 0.03), nrm, 0, NULL, 1e-8);
    }
    /* near an edge and a corner, outside */
    double s2 = sqrt(0.5), s3 = sqrt(1.0 / 3.0);
    size_t n = obstacle_force(&o, 0.0, (double[3]){-0.02, -0.02, 1.5}, zero, f);
    SHARD_ENSURE(n == 1);
    ensure_force("box, near the edge x = y = 0:", f, k * (r - 0.02 * sqrt(2.0)), (double[3]){-s2, -s2, 0}, 0,
                 NULL, 1e-8);
    n = obstacle_force(&o, 0.0, (double[3]){1.02, 2.02, 3.02}, zero, f);
    SHARD_ENSURE(n == 1);
    ensure_force("box, near the corner (1, 2, 3):", f, k * (r - 0.02 * sqrt(3.0)), (double[3]){s3, s3, s3}, 0, NULL,
                 1e-8);
    n = obstacle_force(&o, 0.0, (double[3]){1.04, 2.04, 3.04}, zero, f); /* 0.069 from the corner */
    SHARD_ENSURE(n == 0 && f[0] == 0.0 && f[1] == 0.0 && f[2] == 0.0);

    /* several obstacles at once: a particle touching a plane and a box counts two contacts */
    shard_obstacle_def two[2] = {{.kind = SHARD_OBSTACLE_PLANE, .point = {0, 0, 3.02}, .normal = {0, 0, -1}}, o};
    shard_particles p;
    int body[1] = {0};
    double xs[1][3] = {{0.5, 1.0, 3.01}};
    make_store(&p, 1, body, (const double (*)[3])xs, NULL);
    double g[3] = {0, 0, 0};
    n = shard_contact_obstacles(&p, OCP, NULL, 2, two, 0.0, 0.0, NULL, &scratch, g);
    SHARD_ENSURE(n == 2);
    /* plane above (dist 0.01, pushes down by k 0.04), box below (dist 0.01, pushes up by k 0.04) */
    SHARD_ENSURE_NEAR(g[2], 0.0, 1e-8);
    printf("plane + box: %zu contacts, f_z = %g (the two cancel)\n", n, g[2]);
    shard_particles_free(&p);
}

/* ---------------------------------------------------------------- smooth surfaces */

static const double SS = 0.01; /* lattice spacing of the smooth-surface tests */
static const shard_contact_params SCP[2] = {
    {.radius = 0.005, .k = 2.0e4, .kt = 1.6e4, .zeta = 0.0, .mu = 0.5, .smooth = 1},
    {.radius = 0.005, .k = 2.0e4, .kt = 1.6e4, .zeta = 0.0, .mu = 0.5, .smooth = 1},
};

/* Normals on a 5 x 5 x 5 cube of spacing SS, bonds to every particle within 2.2 spacings (rows by id): a face's
 * particle gets 5 / (5 + 8 sqrt 2) = 0.3065 along its face's outward normal (of its 9 neighbours within 1.5
 * spacings, 4 + 4 in its plane and 1 + 4 one layer in), an inner one none, an edge's and a corner's point along
 * the bisectors and are longer (not flat); bodies that are not smooth get none. */
static void test_smooth_normals(void)
{
    enum { N = 5, NP = N * N * N };
    int body[NP];
    double x[NP][3];
    for (int q = 0; q < NP; q++) {
        body[q] = 0;
        x[q][0] = SS * (q % N), x[q][1] = SS * (q / N % N), x[q][2] = SS * (q / (N * N));
    }
    shard_particles p;
    make_store(&p, NP, body, (const double (*)[3])x, NULL);
    memcpy(p.X, p.x, 3 * NP * sizeof *p.X);
    shard_csr bonds = {0};
    shard_csr_reserve(&bonds, NP, (size_t)NP * NP);
    bonds.n = NP;
    size_t m = 0;
    for (int i = 0; i < NP; i++) {
        for (int j = 0; j < NP; j++) {
            double d2 = 0.0;
            for (int k = 0; k < 3; k++)
                d2 += (x[j][k] - x[i][k]) * (x[j][k] - x[i][k]);
            if (j != i && d2 <= 2.2 * 2.2 * SS * SS)
                bonds.idx[m++] = j;
        }
        bonds.start[i + 1] = (int64_t)m;
    }
    double *nrm = calloc(3 * NP, sizeof *nrm);
    shard_contact_normals(&p, &bonds, SCP, nrm);
    const double face = 5.0 / (5.0 + 8.0 * sqrt(2.0));
    const double *nf = nrm + 3 * (2 + 2 * N), *ni = nrm + 3 * (2 + 2 * N + 2 * N * N);
    const double *ne = nrm + 3 * 2, *nc = nrm;                 /* (2, 0, 0): the edge y = z = 0; (0, 0, 0) */
    SHARD_ENSURE(fabs(nf[0]) < 1e-15 && fabs(nf[1]) < 1e-15);
    SHARD_ENSURE_NEAR(nf[2], -face, 1e-15);
    SHARD_ENSURE(fabs(ni[0]) < 1e-15 && fabs(ni[1]) < 1e-15 && fabs(ni[2]) < 1e-15);
    double le = sqrt(ne[0] * ne[0] + ne[1] * ne[1] + ne[2] * ne[2]);
    double lc = sqrt(nc[0] * nc[0] + nc[1] * nc[1] + nc[2] * nc[2]);
    SHARD_ENSURE(fabs(ne[0]) < 1e-15);
    SHARD_ENSURE_NEAR(ne[1], ne[2], 1e-15);
    SHARD_ENSURE(ne[1] < 0.0 && le > 0.48);
    SHARD_ENSURE_NEAR(nc[0], nc[1], 1e-15);
    SHARD_ENSURE_NEAR(nc[0], nc[2], 1e-15);
    SHARD_ENSURE(nc[0] < 0.0 && lc > le);
    printf("normals: face %.6f (5 / (5 + 8 sqrt 2) = %.6f), inner %g, edge %.4f, corner %.4f\n", -nf[2], face,
           fabs(ni[2]), le, lc);
    shard_contact_params plain[1] = {SCP[0]};
    plain[0].smooth = 0;
    shard_contact_normals(&p, &bonds, plain, nrm);
    SHARD_ENSURE(nrm[3 * (2 + 2 * N) + 2] == 0.0);
    free(nrm);
    shard_csr_free(&bonds);
    shard_particles_free(&p);
}

/* One particle of a flat face (body 0, normal -z) over the top face of a square lattice (body 1, a 9 x 9 layer
 * of spacing SS at z = 0, normal +z), at height SS - delta, shifted across by (ox, oy): the force is along z
 * only, N = k delta times the weights' sum, which is 1 within 0.6 % wherever the particle stands (spheres: k
 * delta straight over a particle, nothing over the middle of a cell).  Returns N / (k delta). */
static double smooth_flat(double ox, double oy, double delta, double *lateral)
{
    enum { M = 9, NP = M * M + 1 };
    int body[NP];
    double x[NP][3];
    for (int q = 0; q < M * M; q++)
        body[q] = 1, x[q][0] = SS * (q % M - 4), x[q][1] = SS * (q / M - 4), x[q][2] = 0.0;
    body[M * M] = 0, x[M * M][0] = ox, x[M * M][1] = oy, x[M * M][2] = SS - delta;
    shard_particles p;
    make_store(&p, NP, body, (const double (*)[3])x, NULL);
    double *nrm = calloc(3 * NP, sizeof *nrm);
    const double face = 5.0 / (5.0 + 8.0 * sqrt(2.0));
    for (int q = 0; q < NP; q++)
        nrm[3 * q + 2] = body[q] ? face : -face;
    shard_csr cand = {0};
    all_pairs(&p, &cand);
    double *f = calloc(3 * NP, sizeof *f);
    shard_contact_pairs(&p, nrm, &cand, NULL, NULL, SCP, NULL, 0.0, NULL, &scratch, f);
    const double *fi = f + 3 * (NP - 1);
    double sum[3] = {0, 0, 0}; /* action and reaction */
    for (int q = 0; q < NP; q++)
        for (int k = 0; k < 3; k++)
            sum[k] += f[3 * q + k];
    SHARD_ENSURE(fabs(sum[0]) + fabs(sum[1]) + fabs(sum[2]) < 1e-12 * fabs(fi[2]));
    *lateral = hypot(fi[0], fi[1]) / fabs(fi[2]);
    double ratio = fi[2] / (0.5 * SCP[0].k * delta);
    free(f), free(nrm);
    shard_csr_free(&cand);
    shard_particles_free(&p);
    return ratio;
}

static void test_smooth_flat(void)
{
    const double off[5][2] = {{0, 0}, {0.5, 0}, {0.5, 0.5}, {0.3, 0.1}, {0.25, 0.25}};
    double lo = INFINITY, hi = 0.0, lat = 0.0;
    for (int k = 0; k < 5; k++) {
        double l, r = smooth_flat(off[k][0] * SS, off[k][1] * SS, 1e-4, &l);
        lo = fmin(lo, r), hi = fmax(hi, r), lat = fmax(lat, l);
    }
    SHARD_ENSURE(lo > 0.994 && hi < 1.006);
    SHARD_ENSURE(lat < 1e-13);
    printf("flat face on a lattice, 5 offsets: N / (k delta) in [%.5f, %.5f], largest |F_lateral| / N %.2g\n", lo,
           hi, lat);
}

/* The two-owner check of the sphere model above with smooth surfaces and normals that are neither opposite
 * nor along the line of centres: the forces and memories stay exact negatives, and the force is not along the
 * line of centres. */
static void test_smooth_two_owners(void)
{
    double xa[3] = {0.1, 0.2, 0.3}, xb[3] = {0.1 + 0.0031, 0.2 - 0.0042, 0.3 - 0.0085}, fa[6], fb[6];
    double na[3] = {0.02, -0.01, -0.3}, nb[3] = {0.01, 0.04, 0.29};
    SHARD_ENSURE(two_owners(SCP, xa, xb, na, nb, fa, fb));
    double d[3] = {xb[0] - xa[0], xb[1] - xa[1], xb[2] - xa[2]};
    double c = -(fa[0] * d[0] + fa[1] * d[1] + fa[2] * d[2]) /
               (sqrt(fa[0] * fa[0] + fa[1] * fa[1] + fa[2] * fa[2]) * sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    SHARD_ENSURE(c < 0.99);
    printf("smooth, two owners, 5 steps: f_a = (%.17g, %.17g, %.17g), cos to the line of centres %.4f\n", fa[0],
           fa[1], fa[2], c);
}

int main(void)
{
    shard_pairlist_init(&scratch, 3);
    test_pair_at_rest();
    test_pair_damping();
    test_pair_friction();
    test_pair_stick_slip();
    test_pair_memory_turns();
    test_pair_separated();
    test_pair_count_and_sum();
    test_pair_two_owners();
    test_params_init();
    test_obstacle_plane();
    test_obstacle_memory();
    test_obstacle_sphere();
    test_obstacle_box();
    test_smooth_normals();
    test_smooth_flat();
    test_smooth_two_owners();
    shard_pairlist_free(&scratch);
    return SHARD_TEST_RESULT();
}
