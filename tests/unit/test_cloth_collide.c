/* Unit tests of the cloth collision kernels (cloth_collide.h) against hand-made cases with known answers:
 * the cubic's roots, point-triangle and edge-edge proximity and continuous collision (times, weights,
 * normals, misses), the impulses (momentum conserved, the relative normal velocity reached, the 10 % cap,
 * friction), an impact zone's rigid motion (momentum and angular momentum kept, distances kept to first
 * order) and the hierarchy's overlapping pairs against brute force. */
#include "cloth/cloth_collide.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_cubic(void)
{
    /* (t - 0.2)(t - 0.5)(t - 0.9) */
    double a[4] = {-0.09, 0.73, -1.6, 1.0}, r[8];
    int n = shard_cc_cubic_candidates(a, 1.0, 1e-14, r);
    SHARD_ENSURE(n == 3);
    SHARD_ENSURE_NEAR(r[0], 0.2, 1e-12);
    SHARD_ENSURE_NEAR(r[1], 0.5, 1e-12);
    SHARD_ENSURE_NEAR(r[2], 0.9, 1e-12);
    /* only the roots inside [0, T] */
    n = shard_cc_cubic_candidates(a, 0.6, 1e-14, r);
    SHARD_ENSURE(n == 2);
    /* a double root (tangency, no sign change): (t - 0.5)^2 (t + 1) = t^3 - 0.75 t + 0.25 */
    double b[4] = {0.25, -0.75, 0.0, 1.0};
    n = shard_cc_cubic_candidates(b, 1.0, 1e-12, r);
    SHARD_ENSURE(n == 1);
    SHARD_ENSURE_NEAR(r[0], 0.5, 1e-12);
    /* no root */
    double c[4] = {1.0, 0.0, 0.0, 1.0};
    SHARD_ENSURE(shard_cc_cubic_candidates(c, 1.0, 1e-14, r) == 0);
}

static void test_proximity(void)
{
    double t0[3] = {0, 0, 0}, t1[3] = {1, 0, 0}, t2[3] = {0, 1, 0};
    double p[3] = {0.25, 0.25, 0.01};
    shard_cc_stencil s;
    SHARD_ENSURE(shard_cc_pt_near(p, t0, t1, t2, 0.02, &s) == 1);
    SHARD_ENSURE_NEAR(s.gap, 0.01, 1e-15);
    SHARD_ENSURE_NEAR(s.n[2], 1.0, 1e-15);
    SHARD_ENSURE_NEAR(s.c[1], -0.5, 1e-15);
    SHARD_ENSURE_NEAR(s.c[2], -0.25, 1e-15);
    SHARD_ENSURE_NEAR(s.c[3], -0.25, 1e-15);
    p[2] = -0.01; /* below: the normal turns */
    SHARD_ENSURE(shard_cc_pt_near(p, t0, t1, t2, 0.02, &s) == 1);
    SHARD_ENSURE_NEAR(s.n[2], -1.0, 1e-15);
    p[2] = 0.03; /* too far */
    SHARD_ENSURE(shard_cc_pt_near(p, t0, t1, t2, 0.02, &s) == 0);
    p[0] = 2.0, p[2] = 0.01; /* beside the triangle */
    SHARD_ENSURE(shard_cc_pt_near(p, t0, t1, t2, 0.02, &s) == 0);
    /* crossed edges 0.01 apart */
    double e0[3] = {-1, 0, 0}, e1[3] = {1, 0, 0}, f0[3] = {0.5, -1, 0.01}, f1[3] = {0.5, 1, 0.01};
    SHARD_ENSURE(shard_cc_ee_near(e0, e1, f0, f1, 0.02, &s) == 1);
    SHARD_ENSURE_NEAR(s.gap, 0.01, 1e-15);
    SHARD_ENSURE_NEAR(s.c[0], 0.25, 1e-15); /* a = 0.75 along the first edge */
    SHARD_ENSURE_NEAR(s.c[1], 0.75, 1e-15);
    SHARD_ENSURE_NEAR(s.c[2], -0.5, 1e-15);
    SHARD_ENSURE_NEAR(s.n[2], -1.0, 1e-15); /* from the second edge (above) to the first */
    SHARD_ENSURE(shard_cc_ee_near(e0, e1, f0, f1, 0.005, &s) == 0);
}

static void test_ccd(void)
{
    /* a point falling through a triangle at t = 0.3 */
    double t0[3] = {0, 0, 0}, t1[3] = {1, 0, 0}, t2[3] = {0, 1, 0}, p[3] = {0.2, 0.3, 0.3};
    double z[3] = {0, 0, 0}, vp[3] = {0, 0, -1};
    const double *x[4] = {p, t0, t1, t2}, *v[4] = {vp, z, z, z};
    shard_cc_stencil s;
    SHARD_ENSURE(shard_cc_pt_ccd(x, v, 1.0, 1e-9, &s) == 1);
    SHARD_ENSURE_NEAR(s.t, 0.3, 1e-12);
    SHARD_ENSURE_NEAR(s.n[2], 1.0, 1e-15); /* the point started above */
    SHARD_ENSURE_NEAR(s.c[2], -0.2, 1e-12);
    SHARD_ENSURE_NEAR(s.c[3], -0.3, 1e-12);
    /* stopping short of the plane, or passing beside the triangle: no collision */
    SHARD_ENSURE(shard_cc_pt_ccd(x, v, 0.29, 1e-9, &s) == 0);
    double q[3] = {0.8, 0.8, 0.3};
    x[0] = q;
    SHARD_ENSURE(shard_cc_pt_ccd(x, v, 1.0, 1e-9, &s) == 0);
    /* the triangle rising to meet a resting point: at t = 0.5 */
    double r[3] = {0.1, 0.1, 0.5}, up[3] = {0, 0, 1};
    const double *x2[4] = {r, t0, t1, t2}, *v2[4] = {z, up, up, up};
    SHARD_ENSURE(shard_cc_pt_ccd(x2, v2, 1.0, 1e-9, &s) == 1);
    SHARD_ENSURE_NEAR(s.t, 0.5, 1e-12);
    /* edges: one moving down through another crossing it, at t = 0.25 */
    double a0[3] = {-1, 0, 0}, a1[3] = {1, 0, 0}, b0[3] = {0.2, -1, 0.5}, b1[3] = {0.2, 1, 0.5}, down[3] = {0, 0, -2};
    const double *xe[4] = {a0, a1, b0, b1}, *ve[4] = {z, z, down, down};
    SHARD_ENSURE(shard_cc_ee_ccd(xe, ve, 1.0, 1e-9, &s) == 1);
    SHARD_ENSURE_NEAR(s.t, 0.25, 1e-12);
    SHARD_ENSURE_NEAR(s.c[1], 0.6, 1e-12);
    SHARD_ENSURE_NEAR(s.c[2], -0.5, 1e-12);
    SHARD_ENSURE_NEAR(s.n[2], -1.0, 1e-12); /* from the upper edge (B) to the lower (A) */
    /* parallel edges passing above each other's ends: no crossing */
    double c0[3] = {2, -1, 0.5}, c1[3] = {2, 1, 0.5};
    xe[2] = c0, xe[3] = c1;
    SHARD_ENSURE(shard_cc_ee_ccd(xe, ve, 1.0, 1e-9, &s) == 0);
}

static void test_impulses(void)
{
    /* a point approaching a triangle: the stop makes the relative normal velocity zero, conserving momentum */
    shard_cc_stencil s = {.c = {1.0, -0.2, -0.5, -0.3}, .n = {0, 0, 1}, .gap = 0.0};
    double vp[3] = {0.3, 0, -2}, va[3] = {0, 0, 0.5}, vb[3] = {0, 0, 0.1}, vc[3] = {0.1, 0, 0};
    const double *v[4] = {vp, va, vb, vc};
    double m[4] = {1.0, 2.0, 0.5, 1.5}, inv[4], dv[12];
    for (int q = 0; q < 4; q++)
        inv[q] = 1.0 / m[q];
    SHARD_ENSURE(shard_cc_stop(&s, v, inv, 0.0, dv) == 1);
    double P[3] = {0, 0, 0}, rel = 0.0;
    for (int q = 0; q < 4; q++) {
        for (int k = 0; k < 3; k++)
            P[k] += m[q] * dv[3 * q + k];
        rel += s.c[q] * (v[q][2] + dv[3 * q + 2]);
    }
    SHARD_ENSURE_NEAR(P[0], 0.0, 1e-15);
    SHARD_ENSURE_NEAR(P[2], 0.0, 1e-14);
    SHARD_ENSURE_NEAR(rel, 0.0, 1e-14);
    /* friction: mu large enough stops the relative tangential motion entirely */
    SHARD_ENSURE(shard_cc_stop(&s, v, inv, 10.0, dv) == 1);
    double relx = 0.0;
    for (int q = 0; q < 4; q++)
        relx += s.c[q] * (v[q][0] + dv[3 * q]);
    SHARD_ENSURE_NEAR(relx, 0.0, 1e-14);
    /* a separating pair gets nothing */
    vp[2] = 2.0;
    SHARD_ENSURE(shard_cc_stop(&s, v, inv, 0.0, dv) == 0);
    /* repulsion of a resting pair within the thickness: at most a tenth of the overlap per step */
    double zero[3] = {0, 0, 0};
    const double *w[4] = {zero, zero, zero, zero};
    shard_cc_stencil r = {.c = {1.0, -1.0 / 3, -1.0 / 3, -1.0 / 3}, .n = {0, 0, 1}, .gap = 0.4e-3};
    double h = 1e-3, dt = 1e-4;
    SHARD_ENSURE(shard_cc_repel(&r, w, inv, h, 1e9, 0.0, dt, dv) == 1);
    double relz = 0.0;
    for (int q = 0; q < 4; q++)
        relz += r.c[q] * dv[3 * q + 2];
    SHARD_ENSURE_NEAR(relz, 0.1 * (h - r.gap) / dt, 1e-12);
    /* a soft spring: dt k d (sum |c|/m) */
    SHARD_ENSURE(shard_cc_repel(&r, w, inv, h, 10.0, 0.0, dt, dv) == 1);
    relz = 0.0;
    double S1 = 0.0;
    for (int q = 0; q < 4; q++)
        relz += r.c[q] * dv[3 * q + 2], S1 += fabs(r.c[q]) * inv[q];
    SHARD_ENSURE_NEAR(relz, dt * 10.0 * (h - r.gap) * S1, 1e-15);
    /* pinned vertices (1/m = 0) do not move */
    double pin[4] = {inv[0], 0.0, 0.0, 0.0};
    SHARD_ENSURE(shard_cc_repel(&r, w, pin, h, 1e9, 0.0, dt, dv) == 1);
    for (int k = 3; k < 12; k++)
        SHARD_ENSURE(dv[k] == 0.0);
}

static void test_zone(void)
{
    uint64_t st = 7;
    enum { N = 9 };
    double m[N], x[3 * N], v[3 * N], v0[3 * N];
    for (int i = 0; i < N; i++) {
        m[i] = 1.0 + 0.5 * (shard_test_rnd(&st) + 1.0);
        for (int k = 0; k < 3; k++)
            x[3 * i + k] = shard_test_rnd(&st), v[3 * i + k] = shard_test_rnd(&st);
    }
    memcpy(v0, v, sizeof v);
    shard_cc_zone_rigid(N, m, x, v);
    double P0[3] = {0}, P1[3] = {0}, L0[3] = {0}, L1[3] = {0};
    for (int i = 0; i < N; i++) {
        const double *r = x + 3 * i, *a = v0 + 3 * i, *b = v + 3 * i;
        for (int k = 0; k < 3; k++)
            P0[k] += m[i] * a[k], P1[k] += m[i] * b[k];
        L0[0] += m[i] * (r[1] * a[2] - r[2] * a[1]), L1[0] += m[i] * (r[1] * b[2] - r[2] * b[1]);
        L0[1] += m[i] * (r[2] * a[0] - r[0] * a[2]), L1[1] += m[i] * (r[2] * b[0] - r[0] * b[2]);
        L0[2] += m[i] * (r[0] * a[1] - r[1] * a[0]), L1[2] += m[i] * (r[0] * b[1] - r[1] * b[0]);
    }
    for (int k = 0; k < 3; k++) {
        SHARD_ENSURE_NEAR(P1[k], P0[k], 1e-12);
        SHARD_ENSURE_NEAR(L1[k], L0[k], 1e-10);
    }
    /* rigid: every pair's distance is stationary, (x_i - x_j) . (v_i - v_j) = 0 */
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++) {
            double d = 0.0;
            for (int k = 0; k < 3; k++)
                d += (x[3 * i + k] - x[3 * j + k]) * (v[3 * i + k] - v[3 * j + k]);
            SHARD_ENSURE_NEAR(d, 0.0, 1e-12);
        }
}

static long brute_pairs;
static long tree_pairs;
static void count_pair(void *ctx, int32_t i, int32_t j)
{
    (void)ctx, (void)i, (void)j;
    tree_pairs++;
}

static int overlap(const double *a, const double *b)
{
    for (int k = 0; k < 3; k++)
        if (a[k] > b[3 + k] || b[k] > a[3 + k])
            return 0;
    return 1;
}

static void test_bvh(void)
{
    uint64_t st = 11;
    enum { N = 700, M = 300 };
    double *a = malloc(6 * N * sizeof *a), *b = malloc(6 * M * sizeof *b);
    for (int i = 0; i < N + M; i++) {
        double *bx = i < N ? a + 6 * i : b + 6 * (i - N);
        for (int k = 0; k < 3; k++) {
            double c = shard_test_rnd(&st), e = 0.05 * (shard_test_rnd(&st) + 1.0);
            bx[k] = c - e, bx[3 + k] = c + e;
        }
    }
    shard_bvh ta = {0}, tb = {0};
    shard_bvh_build(&ta, a, N);
    shard_bvh_build(&tb, b, M);
    brute_pairs = tree_pairs = 0;
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            brute_pairs += overlap(a + 6 * i, a + 6 * j);
    shard_bvh_pairs(&ta, a, &ta, a, count_pair, NULL);
    SHARD_ENSURE(tree_pairs == brute_pairs && brute_pairs > 0);
    brute_pairs = tree_pairs = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            brute_pairs += overlap(a + 6 * i, b + 6 * j);
    shard_bvh_pairs(&ta, a, &tb, b, count_pair, NULL);
    SHARD_ENSURE(tree_pairs == brute_pairs && brute_pairs > 0);
    /* moved boxes: a refit (or a rebuild when degraded) still finds exactly the overlaps */
    for (int i = 0; i < 6 * N; i++)
        a[i] *= 1.1;
    shard_bvh_refit(&ta, a, N);
    brute_pairs = tree_pairs = 0;
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            brute_pairs += overlap(a + 6 * i, a + 6 * j);
    shard_bvh_pairs(&ta, a, &ta, a, count_pair, NULL);
    SHARD_ENSURE(tree_pairs == brute_pairs);
    /* every box on top of every other: every node pair overlaps, the descent goes everywhere */
    enum { S = 600 };
    double *same = malloc(6 * S * sizeof *same);
    for (int i = 0; i < S; i++)
        for (int k = 0; k < 3; k++)
            same[6 * i + k] = -1.0 + 1e-9 * i, same[6 * i + 3 + k] = 1.0;
    shard_bvh ts = {0};
    shard_bvh_build(&ts, same, S);
    tree_pairs = 0;
    shard_bvh_pairs(&ts, same, &ts, same, count_pair, NULL);
    SHARD_ENSURE(tree_pairs == (long)S * (S - 1) / 2);
    shard_bvh_free(&ts);
    free(same);
    /* queries */
    int32_t *out = NULL;
    size_t cap = 0;
    double q[6] = {-0.2, -0.2, -0.2, 0.2, 0.2, 0.2};
    long want = 0;
    for (int i = 0; i < N; i++)
        want += overlap(a + 6 * i, q);
    SHARD_ENSURE((long)shard_bvh_query(&ta, a, q, &out, &cap) == want);
    free(out), free(a), free(b);
    shard_bvh_free(&ta), shard_bvh_free(&tb);
}

int main(void)
{
    test_cubic();
    test_proximity();
    test_ccd();
    test_impulses();
    test_zone();
    test_bvh();
    return SHARD_TEST_RESULT();
}
