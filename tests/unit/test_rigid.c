/* Rigid-body contact kernels (rigid.h) against the exact LCP.
 *
 * A slab on the ground, a turned cube on the slab and a ball on the slab, all moving into their contacts: nine
 * contact points (four of them redundant: a face on a face).  The frictionless impulse problem of these points
 * is an LCP, w = A lambda + b, A = J M^-1 J^T (symmetric positive semi-definite), b the normal approach
 * velocities; Lemke's method (lcp.h) solves it exactly.  The production kernels (shard_rigid_contact_setup,
 * _solve, _impulse, rigid_apply), swept as projected Gauss-Seidel in key order as the module does, must end
 * with the same velocities of every body (unique although the impulses are not) to 1e-9 of the approach speed,
 * and with no approaching contact left.  A second case adds friction (mu = 0.4), with the cube sliding at
 * 1.5 m/s, and checks the Coulomb conditions at every point: |lambda_t| <= mu lambda_n, and where the point still
 * slips (the cube's four), lambda_t on the cone and opposite to the slip (maximum dissipation).
 */
#include "lcp.h"
#include "rigid/rigid.h"
#include "shard/rotation.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void box_body(shard_rigid_body *rb, const double x[3], const double half[3], double rho, const double q[4])
{
    memset(rb, 0, sizeof *rb);
    rb->rigid = 1;
    rb->contact_by = SHARD_RIGID_PRIMITIVE;
    rb->shape.kind = SHARD_COLLIDE_BOX;
    memcpy(rb->shape.half, half, 3 * sizeof(double));
    double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(rb->shape.R, I, sizeof I);
    rb->mass = rho * 8 * half[0] * half[1] * half[2];
    rb->inv_mass = 1 / rb->mass;
    double a = 2 * half[0], b = 2 * half[1], c = 2 * half[2];
    rb->inertia[0] = rb->mass * (b * b + c * c) / 12;
    rb->inertia[1] = rb->mass * (a * a + c * c) / 12;
    rb->inertia[2] = rb->mass * (a * a + b * b) / 12;
    for (int k = 0; k < 3; k++)
        rb->inv_inertia[k] = 1 / rb->inertia[k];
    rb->spacing = 0.025;
    rb->bound = sqrt(half[0] * half[0] + half[1] * half[1] + half[2] * half[2]);
    memcpy(rb->x, x, 3 * sizeof(double));
    memcpy(rb->q, q, 4 * sizeof(double));
    shard_rigid_derive(rb);
}

static void ball_body(shard_rigid_body *rb, const double x[3], double r, double rho)
{
    memset(rb, 0, sizeof *rb);
    rb->rigid = 1;
    rb->shape.kind = SHARD_COLLIDE_SPHERE;
    rb->shape.radius = r;
    double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(rb->shape.R, I, sizeof I);
    rb->mass = rho * 4.0 / 3.0 * M_PI * r * r * r;
    rb->inv_mass = 1 / rb->mass;
    for (int k = 0; k < 3; k++)
        rb->inertia[k] = 0.4 * rb->mass * r * r, rb->inv_inertia[k] = 1 / rb->inertia[k];
    rb->spacing = 0.025;
    rb->bound = r;
    memcpy(rb->x, x, 3 * sizeof(double));
    rb->q[0] = 1;
    shard_rigid_derive(rb);
}

/* Sets the body's velocity and angular velocity (L = R I R^T w). */
static void set_motion(shard_rigid_body *rb, const double v[3], const double w[3])
{
    memcpy(rb->v, v, 3 * sizeof(double));
    double u[3], Iu[3];
    shard_mat3_tmul_vec(rb->R, w, u);
    for (int k = 0; k < 3; k++)
        Iu[k] = rb->inertia[k] * u[k];
    shard_mat3_mul_vec(rb->R, Iu, rb->L);
    shard_rigid_derive(rb);
}

static void cross(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1], c[1] = a[2] * b[0] - a[0] * b[2], c[2] = a[0] * b[1] - a[1] * b[0];
}

/* M^-1 applied to the generalized impulse (p, h) on body rb: dv = p / m, dw = R I^-1 R^T h. */
static void inv_mass_apply(const shard_rigid_body *rb, const double p[3], const double h[3], double dv[3],
                           double dw[3])
{
    double u[3];
    shard_mat3_tmul_vec(rb->R, h, u);
    for (int k = 0; k < 3; k++)
        u[k] *= rb->inv_inertia[k], dv[k] = p[k] * rb->inv_mass;
    shard_mat3_mul_vec(rb->R, u, dw);
}

enum { NB = 3 };

typedef struct world {
    shard_rigid_body body[NB];
    shard_obstacle_def ground;
    shard_rigid_contact *c;
    size_t n, cap;
} world;

static void build(world *W, double mu, double slide)
{
    memset(W, 0, sizeof *W);
    const double id[4] = {1, 0, 0, 0};
    double qz[4];
    shard_quat_from_axis_angle((double[3]){0, 0, 1}, 10.0 * M_PI / 180.0, qz);
    box_body(&W->body[0], (double[3]){0, 0, 0.05}, (double[3]){0.2, 0.2, 0.05}, 700, id);
    box_body(&W->body[1], (double[3]){0.05, 0.03, 0.15}, (double[3]){0.05, 0.05, 0.05}, 500, qz);
    ball_body(&W->body[2], (double[3]){-0.1, -0.1, 0.15}, 0.05, 900);
    set_motion(&W->body[0], (double[3]){0.02, 0, -0.05}, (double[3]){0.1, 0, 0});
    set_motion(&W->body[1], (double[3]){slide, 0, -0.2}, (double[3]){0, 0.3, 0.1});
    set_motion(&W->body[2], (double[3]){-0.05, 0.04, -0.3}, (double[3]){0, 0, 0});
    W->ground.kind = SHARD_OBSTACLE_PLANE;
    W->ground.normal[2] = 1;
    W->ground.friction = mu;
    /* the pairs in key order: (0, 1), (0, 2), (0, ground) */
    double margin = 0.5 * 0.025;
    shard_rigid_collide(&W->body[0], 0, &W->body[1], 1, NULL, 0.0, margin, &W->c, &W->n, &W->cap);
    shard_rigid_collide(&W->body[0], 0, &W->body[2], 2, NULL, 0.0, margin, &W->c, &W->n, &W->cap);
    shard_rigid_collide(&W->body[0], 0, NULL, NB, &W->ground, 0.0, margin, &W->c, &W->n, &W->cap);
    const double zero[3] = {0, 0, 0};
    for (size_t q = 0; q < W->n; q++) {
        shard_rigid_contact *k = &W->c[q];
        const shard_rigid_body *b = k->key.b < NB ? &W->body[k->key.b] : NULL;
        /* e = 0, threshold 0: every contact is resting (target 0); no position correction */
        shard_rigid_contact_setup(k, &W->body[k->key.a], b, b ? NULL : zero, 0.0, mu, 1e-3, 1e9, 0.0, 0.0, NULL);
    }
}

/* Projected Gauss-Seidel sweeps in key order, each impulse applied at once (the module's inner loop). */
static long sweep(world *W, double tol)
{
    const double zero[3] = {0, 0, 0};
    long it;
    for (it = 1; it <= 200000; it++) {
        double m[2] = {0, 0};
        for (size_t q = 0; q < W->n; q++) {
            shard_rigid_contact *k = &W->c[q];
            shard_rigid_body *a = &W->body[k->key.a], *b = k->key.b < NB ? &W->body[k->key.b] : NULL;
            m[0] = fmax(m[0], shard_rigid_contact_solve(k, a, b, b ? NULL : zero, 0));
            m[1] = fmax(m[1], fmax(k->ln, hypot(k->lt1, k->lt2)));
            double dP[3] = {0, 0, 0}, dL[3] = {0, 0, 0};
            shard_rigid_contact_impulse(k, 0, 0, dP, dL);
            shard_rigid_apply(a, dP, dL, 0);
            if (b) {
                double eP[3] = {0, 0, 0}, eL[3] = {0, 0, 0};
                shard_rigid_contact_impulse(k, 1, 0, eP, eL);
                shard_rigid_apply(b, eP, eL, 0);
            }
        }
        if (m[0] <= tol * m[1])
            break;
    }
    return it;
}

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* The normal velocity of contact k (a relative to b along n) from the bodies' current motion. */
static double normal_speed(const world *W, const shard_rigid_contact *k, double ut[3])
{
    double va[3], vb[3] = {0, 0, 0}, u[3];
    shard_rigid_point_velocity(&W->body[k->key.a], k->p, 0, va);
    if (k->key.b < NB)
        shard_rigid_point_velocity(&W->body[k->key.b], k->p, 0, vb);
    for (int j = 0; j < 3; j++)
        u[j] = va[j] - vb[j];
    double un = dot(u, k->n);
    if (ut)
        for (int j = 0; j < 3; j++)
            ut[j] = u[j] - un * k->n[j];
    return un;
}

static void test_frictionless_against_lemke(void)
{
    world W;
    build(&W, 0.0, 0.01);
    int n = (int)W.n;
    printf("contact points: %d\n", n);
    SHARD_ENSURE(n == 9); /* 4 cube on slab, 1 ball on slab, 4 slab on ground */
    /* J rows: per contact, per body (p, h) = (+-n, +-(r x n)). */
    double *A = calloc((size_t)(n * n), sizeof *A), *b = calloc((size_t)n, sizeof *b);
    double (*Jp)[NB][3] = calloc((size_t)n, sizeof *Jp), (*Jh)[NB][3] = calloc((size_t)n, sizeof *Jh);
    for (int i = 0; i < n; i++) {
        const shard_rigid_contact *k = &W.c[i];
        for (int j = 0; j < 3; j++)
            Jp[i][k->key.a][j] = k->n[j];
        cross(k->ra, k->n, Jh[i][k->key.a]);
        if (k->key.b < NB) {
            double h[3];
            cross(k->rb, k->n, h);
            for (int j = 0; j < 3; j++)
                Jp[i][k->key.b][j] = -k->n[j], Jh[i][k->key.b][j] = -h[j];
        }
        b[i] = normal_speed(&W, k, NULL);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int q = 0; q < NB; q++) {
                double dv[3], dw[3];
                inv_mass_apply(&W.body[q], Jp[j][q], Jh[j][q], dv, dw);
                A[i * n + j] += dot(Jp[i][q], dv) + dot(Jh[i][q], dw);
            }
    double *f = calloc((size_t)n, sizeof *f), *w = calloc((size_t)n, sizeof *w);
    shard_lcp_result r = shard_lcp_lemke(n, A, b, NULL, NULL, f, w);
    printf("Lemke: %s after %d pivots, residual %.3e\n", shard_lcp_status_name(r.status), r.iterations, r.residual);
    SHARD_ENSURE(r.status == SHARD_LCP_SOLVED);
    /* The exact post-impulse velocities. */
    double vx[NB][3], wx[NB][3];
    for (int q = 0; q < NB; q++) {
        double p[3] = {0, 0, 0}, h[3] = {0, 0, 0}, dv[3], dw[3];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < 3; j++)
                p[j] += Jp[i][q][j] * f[i], h[j] += Jh[i][q][j] * f[i];
        inv_mass_apply(&W.body[q], p, h, dv, dw);
        for (int j = 0; j < 3; j++)
            vx[q][j] = W.body[q].v[j] + dv[j], wx[q][j] = W.body[q].w[j] + dw[j];
    }
    long sweeps = sweep(&W, 1e-13);
    double err = 0, vscale = 0.3;
    for (int q = 0; q < NB; q++)
        for (int j = 0; j < 3; j++) {
            err = fmax(err, fabs(W.body[q].v[j] - vx[q][j]));
            err = fmax(err, fabs(W.body[q].w[j] - wx[q][j]) * W.body[q].bound);
        }
    double worst = 0;
    for (int i = 0; i < n; i++)
        worst = fmin(worst, normal_speed(&W, &W.c[i], NULL));
    printf("Gauss-Seidel: %ld sweeps; largest velocity difference to Lemke %.3e m/s (%.3e of the approach speed); "
           "most approaching contact after %.3e m/s\n",
           sweeps, err, err / vscale, worst);
    SHARD_ENSURE(err < 1e-9 * vscale);
    SHARD_ENSURE(worst > -1e-9 * vscale);
    free(A), free(b), free(Jp), free(Jh), free(f), free(w), free(W.c);
}

static void test_coulomb_conditions(void)
{
    const double mu = 0.4;
    world W;
    build(&W, mu, 1.5); /* the cube slides fast: its points cannot stick */
    long sweeps = sweep(&W, 1e-13);
    double cone = 0, dir = 0, pen = 0;
    int slipping = 0;
    for (size_t i = 0; i < W.n; i++) {
        const shard_rigid_contact *k = &W.c[i];
        double ut[3], lt[3];
        pen = fmin(pen, normal_speed(&W, k, ut));
        for (int j = 0; j < 3; j++)
            lt[j] = k->lt1 * k->t1[j] + k->lt2 * k->t2[j];
        double nl = sqrt(dot(lt, lt)), nu = sqrt(dot(ut, ut));
        cone = fmax(cone, nl - mu * k->ln);
        if (nu > 1e-9) { /* slipping: on the cone, opposite to the slip */
            slipping++;
            dir = fmax(dir, fabs(nl - mu * k->ln) / fmax(mu * k->ln, 1e-300));
            if (nl > 0)
                dir = fmax(dir, 1 + dot(lt, ut) / (nl * nu));
        }
    }
    printf("friction mu = %.1f: %ld sweeps; |lambda_t| - mu lambda_n at most %.3e; %d slipping point(s), largest "
           "departure from the cone or from the slip direction %.3e; most approaching contact %.3e m/s\n",
           mu, sweeps, cone, slipping, dir, pen);
    SHARD_ENSURE(cone <= 1e-15);
    SHARD_ENSURE(slipping >= 4);
    SHARD_ENSURE(dir < 1e-6);
    SHARD_ENSURE(pen > -1e-9);
    free(W.c);
}

int main(void)
{
    test_frictionless_against_lemke();
    test_coulomb_conditions();
    return SHARD_TEST_RESULT();
}
