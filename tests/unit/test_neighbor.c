/* Neighbour search (neighbor.h): cell lists in their dense and sparse modes, reference bonds and contact
 * candidates, each against an independent brute-force count over all pairs.  One struct of each kind is reused
 * across builds of different sizes and modes, as the driver reuses them. */
#include "shard/neighbor.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x3c6ef372fe94f82bull;
/* uniform in [0, 1) */
static double rnd(void) { return 0.5 * (1.0 + shard_test_rnd(&rng_state)); }

static double dist2(const double *a, const double *b)
{
    double d0 = b[0] - a[0], d1 = b[1] - a[1], d2 = b[2] - a[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/* ---------------------------------------------------------------- cell lists */

/* Checks a built cell list of n points: each point's cell coordinates bracket it, the range of its cell holds
 * it exactly once and only points of that cell, and the ranges of the distinct occupied cells add up to n with
 * every point once.  Returns the number of distinct occupied cells. */
static size_t check_cells(const char *what, const shard_cells *c, size_t n, const double *x, double size)
{
    int64_t *ijk = malloc(3 * n * sizeof *ijk);
    int *seen = calloc(n, sizeof *seen);
    int bracket_bad = 0, found_bad = 0, foreign = 0, dup_bad = 0;
    for (size_t i = 0; i < n; i++) {
        shard_cells_coord(c, x + 3 * i, ijk + 3 * i);
        for (int k = 0; k < 3; k++) {
            /* the cell [origin + m size, origin + (m + 1) size) holds the point (to rounding of the origin) */
            double lo = c->origin[k] + (double)ijk[3 * i + k] * size, hi = lo + size;
            if (x[3 * i + k] < lo - 1e-9 * size || x[3 * i + k] >= hi + 1e-9 * size)
                bracket_bad++;
            if (ijk[3 * i + k] < 0 || ijk[3 * i + k] >= c->dims[k])
                bracket_bad++;
        }
    }
    size_t cells = 0, covered = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t s, e;
        shard_cells_range(c, ijk[3 * i], ijk[3 * i + 1], ijk[3 * i + 2], &s, &e);
        int hits = 0, first = 1;
        for (int64_t q = s; q < e; q++) {
            size_t j = (size_t)c->order[q];
            hits += j == i;
            if (memcmp(ijk + 3 * j, ijk + 3 * i, 3 * sizeof *ijk) != 0)
                foreign++;
            if (j < i && memcmp(ijk + 3 * j, ijk + 3 * i, 3 * sizeof *ijk) == 0)
                first = 0; /* this cell was counted at its lowest point */
        }
        found_bad += hits != 1;
        if (first) {
            cells++;
            covered += (size_t)(e - s);
            for (int64_t q = s; q < e; q++)
                seen[c->order[q]]++;
        }
    }
    for (size_t i = 0; i < n; i++)
        dup_bad += seen[i] != 1;
    /* cells outside the grid and an empty cell inside it give empty ranges */
    int64_t s, e, empty_bad = 0;
    shard_cells_range(c, -1, 0, 0, &s, &e), empty_bad += e != s;
    shard_cells_range(c, 0, c->dims[1], 0, &s, &e), empty_bad += e != s;
    shard_cells_range(c, 0, 0, 0, &s, &e), empty_bad += e != s; /* origin = lo - size: cell 0 is empty */
    SHARD_ENSURE(bracket_bad == 0);
    SHARD_ENSURE(found_bad == 0);
    SHARD_ENSURE(foreign == 0);
    SHARD_ENSURE(dup_bad == 0 && covered == n);
    SHARD_ENSURE(empty_bad == 0);
    printf("%s: %zu points, %s, dims %lld x %lld x %lld, %zu occupied cells covering %zu points; bad: bracket %d,"
           " not found once %d, foreign %d, not covered once %d, non-empty empty %lld\n",
           what, n, c->dense ? "dense" : "sparse", (long long)c->dims[0], (long long)c->dims[1],
           (long long)c->dims[2], cells, covered, bracket_bad, found_bad, foreign, dup_bad, (long long)empty_bad);
    free(ijk), free(seen);
    return cells;
}

static void test_cells(void)
{
    shard_cells c = {0};
    enum { ND = 600, NS = 300 };
    double *x = malloc(3 * ND * sizeof *x);

    /* dense: 600 points in the unit cube, cells of 0.1 (13^3 cells) */
    for (size_t i = 0; i < 3 * ND; i++)
        x[i] = rnd();
    shard_cells_build(&c, ND, x, 0.1);
    SHARD_ENSURE(c.dense == 1);
    check_cells("dense", &c, ND, x, 0.1);

    /* sparse: 30 clusters of 10 points (a few duplicated) spread over 10^4 m, cells of 0.1 (10^15 cells) */
    for (size_t g = 0; g < NS / 10; g++) {
        double cx = 1e4 * rnd(), cy = 1e4 * rnd(), cz = 1e4 * rnd();
        for (size_t m = 0; m < 10; m++) {
            size_t i = 10 * g + m;
            x[3 * i] = cx + 0.3 * rnd(), x[3 * i + 1] = cy + 0.3 * rnd(), x[3 * i + 2] = cz + 0.3 * rnd();
            if (m == 9) /* a duplicate of the cluster's first point */
                memcpy(x + 3 * i, x + 3 * (10 * g), 3 * sizeof *x);
        }
    }
    shard_cells_build(&c, NS, x, 0.1);
    SHARD_ENSURE(c.dense == 0);
    size_t occupied = check_cells("sparse", &c, NS, x, 0.1);
    SHARD_ENSURE(c.n_keys == occupied);

    /* dense again in the same struct, more points than before */
    for (size_t i = 0; i < 3 * ND; i++)
        x[i] = -5.0 + 2.0 * rnd();
    shard_cells_build(&c, ND, x, 0.25);
    SHARD_ENSURE(c.dense == 1);
    check_cells("dense after sparse", &c, ND, x, 0.25);

    /* one point, and a flat set (all z equal) */
    shard_cells_build(&c, 1, x, 0.25);
    check_cells("one point", &c, 1, x, 0.25);
    for (size_t i = 0; i < ND; i++)
        x[3 * i + 2] = 7.0;
    shard_cells_build(&c, ND, x, 0.25);
    check_cells("flat", &c, ND, x, 0.25);
    shard_cells_free(&c);
    SHARD_ENSURE(c.order == NULL && c.start == NULL);
    free(x);
}

/* ---------------------------------------------------------------- reference bonds */

static void test_bonds(void)
{
    /* three bodies: 150 random points in a cube (h 0.25), a jittered 6x5x4 lattice of spacing 0.1 (h 0.22) that
     * overlaps the first in space, and 40 points with h = 0 (a kind without bonds) */
    size_t nb0 = 150, nb1 = 120, nb2 = 40, n = nb0 + nb1 + nb2;
    double *X = malloc(3 * n * sizeof *X);
    for (size_t i = 0; i < nb0; i++)
        for (int k = 0; k < 3; k++)
            X[3 * i + k] = rnd();
    size_t m = nb0;
    for (int kz = 0; kz < 4; kz++)
        for (int ky = 0; ky < 5; ky++)
            for (int kx = 0; kx < 6; kx++, m++) {
                X[3 * m] = 0.3 + 0.1 * kx + 0.01 * rnd();
                X[3 * m + 1] = 0.2 + 0.1 * ky + 0.01 * rnd();
                X[3 * m + 2] = 0.5 + 0.1 * kz + 0.01 * rnd();
            }
    for (; m < n; m++)
        for (int k = 0; k < 3; k++)
            X[3 * m + k] = 0.5 + 0.05 * rnd();
    int64_t body_start[4] = {0, (int64_t)nb0, (int64_t)(nb0 + nb1), (int64_t)n};
    double h[3] = {0.25, 0.22, 0.0};
    shard_csr g = {0};
    shard_neighbor_bonds(n, X, 3, body_start, h, &g);

    SHARD_ENSURE(g.n == n && g.start[0] == 0);
    int row_bad = 0, unsorted = 0, cross = 0, asym = 0;
    int64_t total = 0, brute_total = 0, body_bonds[3] = {0, 0, 0};
    char *want = malloc(n);
    for (size_t i = 0; i < n; i++) {
        int bi = i < nb0 ? 0 : i < nb0 + nb1 ? 1 : 2;
        /* brute force: every j != i of the same body with |X_j - X_i| < h */
        memset(want, 0, n);
        int64_t cnt = 0;
        for (size_t j = (size_t)body_start[bi]; j < (size_t)body_start[bi + 1]; j++)
            if (j != i && h[bi] > 0.0 && dist2(X + 3 * i, X + 3 * j) < h[bi] * h[bi])
                want[j] = 1, cnt++;
        brute_total += cnt;
        int64_t s = g.start[i], e = g.start[i + 1];
        total += e - s;
        body_bonds[bi] += e - s;
        if (e - s != cnt)
            row_bad++;
        for (int64_t b = s; b < e; b++) {
            size_t j = (size_t)g.idx[b];
            if (b > s && g.idx[b - 1] >= g.idx[b])
                unsorted++;
            if (j >= n || !want[j])
                row_bad++;
            if (j < (size_t)body_start[bi] || j >= (size_t)body_start[bi + 1])
                cross++;
            int back = 0;
            for (int64_t c2 = g.start[j]; c2 < g.start[j + 1]; c2++)
                back += (size_t)g.idx[c2] == i;
            asym += back != 1;
        }
    }
    SHARD_ENSURE(row_bad == 0);
    SHARD_ENSURE(unsorted == 0);
    SHARD_ENSURE(cross == 0);
    SHARD_ENSURE(asym == 0);
    SHARD_ENSURE(total == brute_total);
    SHARD_ENSURE(body_bonds[2] == 0);
    SHARD_ENSURE(body_bonds[0] > 1000 && body_bonds[1] > 1000); /* a test with content */
    /* the lattice's interior points: 6 + 12 neighbours at 0.1 and 0.141 (< 0.22), give or take jitter */
    printf("bonds: %lld (brute force %lld): body 0 %lld, body 1 %lld, body 2 (h = 0) %lld; bad rows %d, unsorted"
           " %d, cross-body %d, asymmetric %d\n",
           (long long)total, (long long)brute_total, (long long)body_bonds[0], (long long)body_bonds[1],
           (long long)body_bonds[2], row_bad, unsorted, cross, asym);

    /* the same CSR rebuilt for a smaller problem (only the first body) is still right */
    int64_t bs1[2] = {0, (int64_t)nb0};
    shard_neighbor_bonds(nb0, X, 1, bs1, h, &g);
    SHARD_ENSURE(g.n == nb0 && g.start[nb0] == body_bonds[0]);
    free(want), free(X);
    shard_csr_free(&g);
}

/* ---------------------------------------------------------------- contact candidates */

static int contacts_case(const char *what, size_t n_owned, size_t n_ghost, double side, double spread, double skin,
                         shard_cells *cells, shard_csr *cand)
{
    const double radius[3] = {0.02, 0.035, 0.05};
    size_t n = n_owned + n_ghost;
    shard_particles p = {0};
    shard_particles_reserve(&p, n);
    p.n_owned = n_owned, p.n_local = n;
    /* global ids: a scramble of the local order, so that sorting by gid is not sorting by index */
    for (size_t i = 0; i < n; i++) {
        p.gid[i] = (int64_t)((i * 7919u) % n) * 3 + 11;
        p.body[i] = (int32_t)(i % 3 == 0 ? 0 : i % 5 == 0 ? 2 : 1);
        /* most in a cube of side `side`; with spread > 0 every 40th far out, so that the box is huge */
        double w = spread > 0.0 && i % 40 == 0 ? spread : side;
        for (int k = 0; k < 3; k++)
            p.x[3 * i + k] = w * rnd();
    }
    shard_neighbor_contacts(&p, radius, NULL, NULL, skin, cells, cand);

    int missing = 0, extra = 0, same_body = 0, unsorted = 0;
    int64_t total = 0, brute = 0, ghost_partners = 0;
    char *in_row = malloc(n);
    for (size_t i = 0; i < n_owned; i++) {
        memset(in_row, 0, n);
        for (int64_t c = cand->start[i]; c < cand->start[i + 1]; c++) {
            size_t j = (size_t)cand->idx[c];
            in_row[j]++;
            if (p.body[j] == p.body[i])
                same_body++;
            if (c > cand->start[i] && p.gid[cand->idx[c - 1]] >= p.gid[j])
                unsorted++;
            ghost_partners += j >= n_owned;
        }
        total += cand->start[i + 1] - cand->start[i];
        for (size_t j = 0; j < n; j++) {
            double cut = radius[p.body[i]] + radius[p.body[j]] + skin;
            int want = p.body[j] != p.body[i] && dist2(p.x + 3 * i, p.x + 3 * j) < cut * cut;
            brute += want;
            if (want && in_row[j] != 1)
                missing++;
            if (!want && in_row[j])
                extra++;
        }
    }
    SHARD_ENSURE(cand->n == n_owned);
    SHARD_ENSURE(missing == 0);
    SHARD_ENSURE(extra == 0);
    SHARD_ENSURE(same_body == 0);
    SHARD_ENSURE(unsorted == 0);
    SHARD_ENSURE(total == brute);
    printf("%s: %zu owned + %zu ghosts, %s cells: %lld candidates (brute force %lld, %lld of them ghosts);"
           " missing %d, extra %d, same-body %d, unsorted %d\n",
           what, n_owned, n_ghost, cells->dense ? "dense" : "sparse", (long long)total, (long long)brute,
           (long long)ghost_partners, missing, extra, same_body, unsorted);
    free(in_row);
    shard_particles_free(&p);
    return (int)total;
}

static void test_contacts(void)
{
    shard_cells cells = {0};
    shard_csr cand = {0};
    int t1 = contacts_case("contacts", 400, 150, 1.0, 0.0, 0.01, &cells, &cand);
    int dense1 = cells.dense;
    int t2 = contacts_case("contacts, denser, rebuilt", 900, 300, 0.8, 0.0, 0.02, &cells, &cand);
    int t3 = contacts_case("contacts, outliers 3 km away", 300, 100, 0.7, 3000.0, 0.01, &cells, &cand);
    int dense3 = cells.dense;
    int t4 = contacts_case("contacts, no ghosts, no skin", 200, 0, 0.5, 0.0, 0.0, &cells, &cand);
    SHARD_ENSURE(dense1 == 1 && dense3 == 0); /* both modes */
    SHARD_ENSURE(t1 > 100 && t2 > t1 && t3 > 100 && t4 > 10); /* the cases have content */
    shard_cells_free(&cells);
    shard_csr_free(&cand);
}

/* After bonds break (shard_neighbor_contacts_reopen): a self-touching lattice body whose own candidates exclude
 * bonded partners loses random bonds; the reopened rows must hold every pair a fresh build over the unbroken
 * bonds finds (the same rows plus broken partners farther out, up to a second skin), sorted by global id, each
 * once, and nothing else changes. */
static void test_contacts_reopen(void)
{
    enum { L = 7 };
    size_t n = L * L * L;
    const double radius[1] = {0.06}, skin = 0.01, h = 0.22;
    const uint8_t self[1] = {1};
    shard_particles p = {0};
    shard_particles_reserve(&p, n);
    p.n_owned = p.n_local = n;
    double *X = malloc(3 * n * sizeof *X);
    for (size_t i = 0; i < n; i++) {
        p.gid[i] = (int64_t)i, p.body[i] = 0;
        size_t c[3] = {i % L, (i / L) % L, i / (L * L)};
        for (int k = 0; k < 3; k++)
            X[3 * i + k] = 0.1 * (double)c[k], p.x[3 * i + k] = X[3 * i + k] + 0.005 * rnd();
    }
    int64_t bs[2] = {0, (int64_t)n};
    shard_csr ref = {0}, act = {0}, cand = {0}, fresh = {0};
    shard_neighbor_bonds(n, X, 1, bs, &h, &ref);
    uint8_t *broken = calloc((size_t)ref.start[n] + 1, 1);
    shard_cells cells = {0};
    shard_neighbor_contacts(&p, radius, self, &ref, skin, &cells, &cand); /* intact: no own-body candidate */
    SHARD_ENSURE(cand.start[n] == 0);
    /* break a random fifth of the bonds, on both sides */
    int32_t *lost = malloc(n * sizeof *lost);
    size_t n_lost = 0;
    for (size_t i = 0; i < n; i++)
        for (int64_t b = ref.start[i]; b < ref.start[i + 1]; b++) {
            size_t j = (size_t)ref.idx[b];
            if (j > i && rnd() > 0.8) {
                broken[b] = 1;
                for (int64_t c = ref.start[j]; c < ref.start[j + 1]; c++)
                    broken[c] |= (size_t)ref.idx[c] == i;
            }
        }
    for (size_t i = 0; i < n; i++) {
        int any = 0;
        for (int64_t b = ref.start[i]; b < ref.start[i + 1]; b++)
            any |= broken[b];
        if (any)
            lost[n_lost++] = (int32_t)i;
    }
    shard_csr_reserve(&act, n, (size_t)ref.start[n] + 1);
    act.n = n, act.start[0] = 0;
    int64_t m = 0;
    for (size_t i = 0; i < n; i++) {
        for (int64_t b = ref.start[i]; b < ref.start[i + 1]; b++)
            if (!broken[b])
                act.idx[m++] = ref.idx[b];
        act.start[i + 1] = m;
    }
    shard_neighbor_contacts_reopen(&p, radius, skin, &ref, broken, lost, n_lost, &cand);
    shard_neighbor_contacts(&p, radius, self, &act, skin, &cells, &fresh);
    long missing = 0, unsorted = 0, beyond = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t c = cand.start[i];
        for (int64_t f = fresh.start[i]; f < fresh.start[i + 1]; f++) {
            while (c < cand.start[i + 1] && p.gid[cand.idx[c]] < p.gid[fresh.idx[f]])
                c++;
            missing += !(c < cand.start[i + 1] && cand.idx[c] == fresh.idx[f]);
        }
        for (c = cand.start[i]; c < cand.start[i + 1]; c++) {
            unsorted += c > cand.start[i] && p.gid[cand.idx[c - 1]] >= p.gid[cand.idx[c]];
            double cut = 2.0 * radius[0] + 2.0 * skin;
            beyond += dist2(p.x + 3 * i, p.x + 3 * (size_t)cand.idx[c]) >= cut * cut;
        }
    }
    printf("contacts reopened: %zu of %zu particles lost bonds; %lld candidates (a fresh build: %lld); missing "
           "%ld, unsorted %ld, beyond two skins %ld\n", n_lost, n, (long long)cand.start[n],
           (long long)fresh.start[n], missing, unsorted, beyond);
    SHARD_ENSURE(fresh.start[n] > 100); /* the case has content */
    SHARD_ENSURE(missing == 0 && unsorted == 0 && beyond == 0);
    SHARD_ENSURE(cand.start[n] >= fresh.start[n]);
    free(X), free(broken), free(lost);
    shard_csr_free(&ref), shard_csr_free(&act), shard_csr_free(&cand), shard_csr_free(&fresh);
    shard_cells_free(&cells);
    shard_particles_free(&p);
}

/* Points whose cells a linear key ix + dims0 (iy + dims1 iz) would give the same number (it overflows int64
 * over a bounding box of 10^7 cells a side): the sparse list keeps the coordinates apart, so each cell's range
 * holds its own point only. */
static void test_cells_far_apart(void)
{
    double x[9] = {2010292.5, 1.5, 1.5, 1.5, 3300569.5, 184468.5, 1e7, 1e7, 1e7};
    shard_cells c = {0};
    shard_cells_build(&c, 3, x, 1.0);
    SHARD_ENSURE(c.dense == 0);
    long wrong = 0;
    for (int i = 0; i < 3; i++) {
        int64_t ijk[3], s0, e0;
        shard_cells_coord(&c, x + 3 * i, ijk);
        shard_cells_range(&c, ijk[0], ijk[1], ijk[2], &s0, &e0);
        wrong += !(e0 - s0 == 1 && c.order[s0] == i);
    }
    printf("cells 10^7 apart: %ld cell(s) with a foreign or missing point\n", wrong);
    SHARD_ENSURE(wrong == 0);
    shard_cells_free(&c);
}

int main(void)
{
    test_cells();
    test_cells_far_apart();
    test_bonds();
    test_contacts();
    test_contacts_reopen();
    return SHARD_TEST_RESULT();
}
