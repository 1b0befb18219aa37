/* Neighbour search: cell lists, reference bonds, contact candidates (see neighbor.h). */
#include "shard/neighbor.h"

#include "shard/sorted.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Lexicographic order of two (iz, iy, ix) triples. */
static int shard_neighbor_cmp_triple(const int64_t *a, const int64_t *b)
{
    for (int k = 0; k < 3; k++)
        if (a[k] != b[k])
            return (a[k] > b[k]) - (a[k] < b[k]);
    return 0;
}

/* (iz, iy, ix, point index) quadruples: by cell, then by index, so the order inside a cell is fixed. */
static int shard_neighbor_cmp_quad(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    int t = shard_neighbor_cmp_triple(x, y);
    return t ? t : (x[3] > y[3]) - (x[3] < y[3]);
}

void shard_cells_coord(const shard_cells *c, const double p[3], int64_t ijk[3])
{
    for (int k = 0; k < 3; k++)
        ijk[k] = (int64_t)floor((p[k] - c->origin[k]) * c->inv_size);
}

static int64_t shard_cells_key(const shard_cells *c, const int64_t ijk[3])
{
    return ijk[0] + c->dims[0] * (ijk[1] + c->dims[1] * ijk[2]);
}

void shard_cells_build(shard_cells *c, size_t n, const double *x, double size)
{
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double v = x[3 * i + k];
            if (i == 0 || v < lo[k])
                lo[k] = v;
            if (i == 0 || v > hi[k])
                hi[k] = v;
        }
    c->n = n;
    c->inv_size = 1.0 / size;
    double cells = 1.0;
    for (int k = 0; k < 3; k++) {
        c->origin[k] = lo[k] - size;
        double span = (hi[k] - c->origin[k]) * c->inv_size;
        /* The driver keeps every position within SHARD_DOMAIN_CELLS cells of the others (integrate.h): beyond
         * that, cell coordinates would leave the integers. */
        if (!(span < SHARD_DOMAIN_CELLS))
            shard_fatal(SHARD_EXIT_INTERNAL,
                        "cell list over %zu points spans %g cells of %g m along axis %d "
                        "(positions from %g to %g m)",
                        n, span, size, k, lo[k], hi[k]);
        c->dims[k] = (int64_t)floor(span) + 2;
        cells *= (double)c->dims[k];
    }
    shard_reserve((void **)&c->order, &c->cap_order, n, sizeof *c->order);
    c->dense = cells <= 8.0 * (double)n + 4096.0;
    if (c->dense) {
        shard_reserve((void **)&c->tmp, &c->cap_tmp, n, sizeof *c->tmp);
        for (size_t i = 0; i < n; i++) {
            int64_t ijk[3];
            shard_cells_coord(c, x + 3 * i, ijk);
            c->tmp[i] = shard_cells_key(c, ijk);
        }
        c->n_cells = (size_t)cells;
        shard_reserve((void **)&c->start, &c->cap_start, c->n_cells + 1, sizeof *c->start);
        memset(c->start, 0, (c->n_cells + 1) * sizeof *c->start);
        for (size_t i = 0; i < n; i++)
            c->start[c->tmp[i] + 1]++;
        for (size_t k = 0; k < c->n_cells; k++)
            c->start[k + 1] += c->start[k];
        /* counting sort, stable: points keep increasing index order inside a cell */
        for (size_t i = 0; i < n; i++)
            c->order[c->start[c->tmp[i]]++] = (int32_t)i;
        for (size_t k = c->n_cells; k > 0; k--)
            c->start[k] = c->start[k - 1];
        c->start[0] = 0;
    } else {
        /* Sparse: the occupied cells only, by (iz, iy, ix) in lexicographic order.  Each coordinate is kept on
         * its own, so no linear key can overflow however far apart the points are. */
        int64_t *quads = shard_malloc((4 * n + 1) * sizeof *quads);
        for (size_t i = 0; i < n; i++) {
            int64_t ijk[3];
            shard_cells_coord(c, x + 3 * i, ijk);
            quads[4 * i] = ijk[2], quads[4 * i + 1] = ijk[1], quads[4 * i + 2] = ijk[0];
            quads[4 * i + 3] = (int64_t)i;
        }
        qsort(quads, n, 4 * sizeof *quads, shard_neighbor_cmp_quad);
        shard_reserve((void **)&c->keys, &c->cap_keys, 3 * n + 1, sizeof *c->keys);
        shard_reserve((void **)&c->start, &c->cap_start, n + 1, sizeof *c->start);
        c->n_keys = 0;
        for (size_t i = 0; i < n; i++) {
            const int64_t *q = quads + 4 * i;
            c->order[i] = (int32_t)q[3];
            if (i == 0 || memcmp(q, q - 4, 3 * sizeof *q) != 0) {
                memcpy(c->keys + 3 * c->n_keys, q, 3 * sizeof *q);
                c->start[c->n_keys++] = (int64_t)i;
            }
        }
        c->start[c->n_keys] = (int64_t)n;
        free(quads);
    }
}

void shard_cells_range(const shard_cells *c, int64_t ix, int64_t iy, int64_t iz, int64_t *s, int64_t *e)
{
    *s = *e = 0;
    if (ix < 0 || iy < 0 || iz < 0 || ix >= c->dims[0] || iy >= c->dims[1] || iz >= c->dims[2])
        return;
    if (c->dense) {
        int64_t ijk[3] = {ix, iy, iz}, key = shard_cells_key(c, ijk);
        *s = c->start[key], *e = c->start[key + 1];
        return;
    }
    const int64_t want[3] = {iz, iy, ix};
    size_t lo = 0, hi = c->n_keys;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (shard_neighbor_cmp_triple(c->keys + 3 * mid, want) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->n_keys && shard_neighbor_cmp_triple(c->keys + 3 * lo, want) == 0)
        *s = c->start[lo], *e = c->start[lo + 1];
}

void shard_cells_free(shard_cells *c)
{
    if (!c)
        return;
    free(c->start), free(c->keys), free(c->order), free(c->tmp);
    memset(c, 0, sizeof *c);
}

void shard_neighbor_bonds(size_t n, const double *X, int n_bodies, const int64_t *body_start, const double *h,
                          shard_csr *bonds)
{
    shard_csr_reserve(bonds, n, n * 16);
    bonds->n = n;
    bonds->start[0] = 0;
    size_t nb = 0;
    shard_cells cells = {0};
    for (int b = 0; b < n_bodies; b++) {
        size_t s0 = (size_t)body_start[b], s1 = (size_t)body_start[b + 1];
        if (s1 == s0) /* none of its points here (a rank's share of the planes may hold none; X may be NULL) */
            continue;
        const double *Xb = X + 3 * s0;
        if (!(h[b] > 0.0)) { /* a kind without reference bonds */
            for (size_t i = s0; i < s1; i++)
                bonds->start[i + 1] = (int64_t)nb;
            continue;
        }
        double h2 = h[b] * h[b];
        shard_cells_build(&cells, s1 - s0, Xb, h[b]);
        for (size_t i = 0; i < s1 - s0; i++) {
            int64_t ijk[3];
            shard_cells_coord(&cells, Xb + 3 * i, ijk);
            size_t row0 = nb;
            for (int dz = -1; dz <= 1; dz++)
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        int64_t s, e;
                        shard_cells_range(&cells, ijk[0] + dx, ijk[1] + dy, ijk[2] + dz, &s, &e);
                        for (int64_t q = s; q < e; q++) {
                            size_t j = (size_t)cells.order[q];
                            if (j == i)
                                continue;
                            double d0 = Xb[3 * j] - Xb[3 * i], d1 = Xb[3 * j + 1] - Xb[3 * i + 1],
                                   d2 = Xb[3 * j + 2] - Xb[3 * i + 2];
                            /* the shell at exactly h (an integer support on the lattice) is left out whatever
                             * the rounding of the positions: its weight is 0, and a tie decided by the last bit
                             * would bond some of its pairs and not others */
                            if (d0 * d0 + d1 * d1 + d2 * d2 < h2 * (1.0 - 1e-12)) {
                                if (nb >= bonds->cap)
                                    shard_reserve((void **)&bonds->idx, &bonds->cap, nb + 1, sizeof *bonds->idx);
                                bonds->idx[nb++] = (int32_t)(s0 + j);
                            }
                        }
                    }
            qsort(bonds->idx + row0, nb - row0, sizeof *bonds->idx, shard_sorted_cmp_i32);
            bonds->start[s0 + i + 1] = (int64_t)nb;
        }
    }
    shard_cells_free(&cells);
}

/* Sort key for contact rows: partner global id, the record's first member (sorted by shard_sorted_cmp_i64). */
typedef struct shard_neighbor_pair {
    int64_t gid;
    int32_t idx;
} shard_neighbor_pair;

void shard_neighbor_contacts(const shard_particles *p, const double *radius, const uint8_t *self,
                             const shard_csr *bonds, double skin, shard_cells *cells, shard_csr *cand)
{
    double rmax = 0.0;
    for (size_t i = 0; i < p->n_local; i++)
        if (radius[p->body[i]] > rmax)
            rmax = radius[p->body[i]];
    shard_cells_build(cells, p->n_local, p->x, 2.0 * rmax + skin);
    shard_csr_reserve(cand, p->n_owned, cand->cap ? cand->cap : 64);
    cand->n = p->n_owned;
    cand->start[0] = 0;
    size_t nc = 0;
    shard_neighbor_pair *row = NULL;
    size_t row_cap = 0;
    for (size_t i = 0; i < p->n_owned; i++) {
        const double *xi = p->x + 3 * i;
        int32_t bi = p->body[i];
        int own_body = self && self[bi];
        double ri = radius[bi] + skin;
        int64_t ijk[3];
        shard_cells_coord(cells, xi, ijk);
        size_t nrow = 0;
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int64_t s, e;
                    shard_cells_range(cells, ijk[0] + dx, ijk[1] + dy, ijk[2] + dz, &s, &e);
                    for (int64_t q = s; q < e; q++) {
                        size_t j = (size_t)cells->order[q];
                        if (j == i || (p->body[j] == bi && !own_body))
                            continue;
                        const double *xj = p->x + 3 * j;
                        double d0 = xj[0] - xi[0], d1 = xj[1] - xi[1], d2 = xj[2] - xi[2];
                        double cut = ri + radius[p->body[j]];
                        if (d0 * d0 + d1 * d1 + d2 * d2 < cut * cut) {
                            shard_reserve((void **)&row, &row_cap, nrow + 1, sizeof *row);
                            row[nrow++] = (shard_neighbor_pair){p->gid[j], (int32_t)j};
                        }
                    }
                }
        if (nrow > 1)
            qsort(row, nrow, sizeof row[0], shard_sorted_cmp_i64);
        if (own_body && bonds) { /* drop the bonded partners: one walk along the bond row, also by partner id */
            size_t m = 0;
            int64_t b = bonds->start[i], end = bonds->start[i + 1];
            for (size_t k = 0; k < nrow; k++) {
                int64_t g = row[k].gid;
                while (b < end && p->gid[bonds->idx[b]] < g)
                    b++;
                if (!(b < end && p->gid[bonds->idx[b]] == g && p->body[row[k].idx] == bi))
                    row[m++] = row[k];
            }
            nrow = m;
        }
        shard_reserve((void **)&cand->idx, &cand->cap, nc + nrow, sizeof *cand->idx);
        for (size_t k = 0; k < nrow; k++)
            cand->idx[nc++] = row[k].idx;
        cand->start[i + 1] = (int64_t)nc;
    }
    free(row);
}

void shard_neighbor_contacts_reopen(const shard_particles *p, const double *radius, double skin,
                                    const shard_csr *ref_bonds, const uint8_t *broken, const int32_t *rows,
                                    size_t n_rows, shard_csr *cand)
{
    if (n_rows == 0)
        return;
    size_t n = cand->n, old_n = (size_t)cand->start[n], extra = 0;
    for (size_t q = 0; q < n_rows; q++) {
        size_t i = (size_t)rows[q];
        extra += (size_t)(ref_bonds->start[i + 1] - ref_bonds->start[i]);
    }
    int32_t *idx = shard_malloc((old_n + extra + 1) * sizeof *idx);
    int64_t *start = shard_malloc((n + 1) * sizeof *start);
    size_t m = 0, q = 0;
    start[0] = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t c = cand->start[i], ce = cand->start[i + 1];
        if (q < n_rows && (size_t)rows[q] == i) {
            /* merge, by global id, the row with the broken partners now within reach */
            const double *xi = p->x + 3 * i;
            /* two skins: the pair's particles may each move up to a skin from where they are now before the
             * skin check (which measures from the last build) calls for a rebuild */
            double ri = radius[p->body[i]] + 2.0 * skin;
            for (int64_t b = ref_bonds->start[i]; b < ref_bonds->start[i + 1]; b++) {
                if (!broken[b])
                    continue;
                size_t j = (size_t)ref_bonds->idx[b];
                int64_t g = p->gid[j];
                while (c < ce && p->gid[cand->idx[c]] < g)
                    idx[m++] = cand->idx[c++];
                if (c < ce && p->gid[cand->idx[c]] == g)
                    continue; /* already a candidate */
                const double *xj = p->x + 3 * j;
                double d0 = xj[0] - xi[0], d1 = xj[1] - xi[1], d2 = xj[2] - xi[2];
                double cut = ri + radius[p->body[j]];
                if (d0 * d0 + d1 * d1 + d2 * d2 < cut * cut)
                    idx[m++] = (int32_t)j;
            }
            q++;
        }
        while (c < ce)
            idx[m++] = cand->idx[c++];
        start[i + 1] = (int64_t)m;
    }
    free(cand->idx), free(cand->start);
    cand->idx = idx, cand->start = start;
    cand->cap = old_n + extra + 1, cand->row_cap = n + 1;
}
