/* Sampling a closed triangle mesh into lattice points by exact ray parity (see sample.h, shard_sample_mesh). */
#include "shard/sample.h"

#include "shard/mesh.h"
#include "shard/sorted.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------------------
 * Sampling
 *
 * Why the parity is exact.  Think of each row's line L = {(x, y_j, z_k)} as shifted by an infinitesimal
 * (dy, dz) = (e, e^2), 0 < e << 1, to L'.  L' passes through no vertex and along no edge of the (y, z)
 * projection (e -> (e, e^2) is a parabola, which meets any line in at most two points), so it crosses the
 * closed surface transversally, inside triangles only, and its crossings with the surface alternate
 * outside -> inside -> outside along x: the number of crossings beyond a point not on the surface has the
 * parity of "inside".  A triangle is crossed by L' exactly when the shifted point lies strictly inside its
 * projection, i.e. when the three edge functions orient(edge, p') have one sign.  Each edge function is
 * evaluated exactly (shard_geom_orient2d); when it is zero at p, the sign at p' is that of its first-order term
 * in (e, e^2), which depends only on the edge's endpoints and flips with the edge's direction
 * (shard_sample_mesh_edge_sign).  Two triangles sharing an edge therefore see the same edge with opposite signs, and a
 * triangle fan around a vertex hit by the row partitions the neighbourhood of p' as it does in the exact
 * geometry: the line through a shared edge or vertex is counted exactly once (or, where the surface folds
 * back over the line, zero or two times), never once too often.  Triangles whose projection has zero area are
 * never crossed by L' and are skipped.  The crossings' x values are those of L itself (e -> 0), which only
 * matters for lattice points within rounding of the surface.  Lattice points are therefore classified exactly
 * except those lying on the surface (up to the rounding of the crossing's x), for which either answer is right.
 * ---------------------------------------------------------------------------------------------------------- */

typedef struct shard_sample_mesh_proj {
    double y[3], z[3], x[3];
    int sign;       /* exact sign of the projected area */
    int64_t j0, j1; /* rows (j) and slabs (k) whose line meets the triangle's (y, z) bounding box */
    int64_t k0, k1;
} shard_sample_mesh_proj;

/* Sign of orient(a, b, p + (e, e^2)) for infinitesimal e: exact sign at p, else the perturbation's first
 * non-zero term, -(bz - az) e + (by - ay) e^2.  Antisymmetric in (a, b) by construction. */
static int shard_sample_mesh_edge_sign(double ay, double az, double by, double bz, double py, double pz)
{
    int s = shard_geom_orient2d(ay, az, by, bz, py, pz);
    if (s)
        return s;
    if (bz != az)
        return az > bz ? 1 : -1;
    return (by > ay) - (by < ay);
}

static double shard_sample_mesh_coord(double origin, double spacing, int64_t i)
{
    return origin + ((double)i + 0.5) * spacing;
}

/* First lattice index i in [0, n] with coord(i) >= v, using the same expression as the rows themselves so
 * that a vertex exactly on a row is never missed by the binning. */
static int64_t shard_sample_mesh_first_ge(double origin, double spacing, int64_t n, double v)
{
    double t = (v - origin) / spacing - 0.5;
    int64_t i = t <= 0 ? 0 : t >= (double)n ? n : (int64_t)ceil(t);
    while (i > 0 && shard_sample_mesh_coord(origin, spacing, i - 1) >= v)
        i--;
    while (i < n && shard_sample_mesh_coord(origin, spacing, i) < v)
        i++;
    return i;
}

/* Last lattice index with coord(i) <= v, or -1. */
static int64_t shard_sample_mesh_last_le(double origin, double spacing, int64_t n, double v)
{
    double t = (v - origin) / spacing - 0.5;
    int64_t i = t < 0 ? -1 : t >= (double)n ? n - 1 : (int64_t)floor(t);
    while (i >= 0 && shard_sample_mesh_coord(origin, spacing, i) > v)
        i--;
    while (i + 1 < n && shard_sample_mesh_coord(origin, spacing, i + 1) <= v)
        i++;
    return i;
}

static void shard_sample_mesh_sort(double *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* The x where the row (py, pz) meets the triangle, from barycentric weights.  The weights' signs are known
 * exactly to be >= 0 (the caller's test), so rounding noise below zero is clamped: the result stays inside the
 * triangle's x range however thin its projection. */
static double shard_sample_mesh_cross_x(const shard_sample_mesh_proj *t, double py, double pz)
{
    double w[3], sum = 0;
    for (int c = 0; c < 3; c++) {
        int a = (c + 1) % 3, b = (c + 2) % 3;
        double o = (t->y[b] - t->y[a]) * (pz - t->z[a]) - (t->z[b] - t->z[a]) * (py - t->y[a]);
        w[c] = t->sign * o > 0 ? t->sign * o : 0;
        sum += w[c];
    }
    if (!(sum > 0))
        return (t->x[0] + t->x[1] + t->x[2]) / 3;
    double x = (w[0] * t->x[0] + w[1] * t->x[1] + w[2] * t->x[2]) / sum;
    double lo = fmin(t->x[0], fmin(t->x[1], t->x[2])), hi = fmax(t->x[0], fmax(t->x[1], t->x[2]));
    return x < lo ? lo : x > hi ? hi : x;
}

void shard_sample_mesh(const shard_mesh *mesh, double spacing, double **points, size_t *n)
{
    shard_sample_mesh_planes(mesh, spacing, 0, INT64_MAX, points, n);
}

/* The triangles of the mesh that some row can cross (a valid triangle whose (y, z) projection has an area and
 * whose bounding box meets a row and a slab), with their row and slab ranges; their count in *nt_out. */
static shard_sample_mesh_proj *shard_sample_mesh_project(const shard_mesh *mesh, const double lo[3], double spacing,
                                                         const int64_t cnt[3], size_t *nt_out)
{
    size_t nt = 0;
    shard_sample_mesh_proj *tri = shard_malloc(mesh->n_triangles * sizeof *tri);
    for (size_t i = 0; i < mesh->n_triangles; i++) {
        shard_sample_mesh_proj *t = &tri[nt];
        int ok = 1;
        for (int c = 0; c < 3; c++) {
            int64_t v = mesh->triangles[3 * i + c];
            if (v < 0 || (uint64_t)v >= mesh->n_vertices) {
                ok = 0;
                break;
            }
            t->x[c] = mesh->vertices[3 * v];
            t->y[c] = mesh->vertices[3 * v + 1];
            t->z[c] = mesh->vertices[3 * v + 2];
        }
        if (!ok)
            continue;
        t->sign = shard_geom_orient2d(t->y[0], t->z[0], t->y[1], t->z[1], t->y[2], t->z[2]);
        if (!t->sign)
            continue;
        double ylo = fmin(t->y[0], fmin(t->y[1], t->y[2])), yhi = fmax(t->y[0], fmax(t->y[1], t->y[2]));
        double zlo = fmin(t->z[0], fmin(t->z[1], t->z[2])), zhi = fmax(t->z[0], fmax(t->z[1], t->z[2]));
        t->j0 = shard_sample_mesh_first_ge(lo[1], spacing, cnt[1], ylo);
        t->j1 = shard_sample_mesh_last_le(lo[1], spacing, cnt[1], yhi);
        t->k0 = shard_sample_mesh_first_ge(lo[2], spacing, cnt[2], zlo);
        t->k1 = shard_sample_mesh_last_le(lo[2], spacing, cnt[2], zhi);
        if (t->j0 <= t->j1 && t->k0 <= t->k1)
            nt++;
    }
    *nt_out = nt;
    return tri;
}

/* Triangles bucketed by first slab: those of slab k are by_k[start[k] .. start[k + 1]). */
static void shard_sample_mesh_bucket(const shard_sample_mesh_proj *tri, size_t nt, int64_t nz, size_t **start_out,
                                     size_t **by_k_out)
{
    size_t *start = shard_calloc((size_t)nz + 1, sizeof(size_t));
    size_t *by_k = shard_malloc((nt ? nt : 1) * sizeof(size_t));
    for (size_t i = 0; i < nt; i++)
        start[tri[i].k0 + 1]++;
    for (int64_t k = 0; k < nz; k++)
        start[k + 1] += start[k];
    size_t *fill = shard_malloc(((size_t)nz + 1) * sizeof(size_t));
    memcpy(fill, start, ((size_t)nz + 1) * sizeof(size_t));
    for (size_t i = 0; i < nt; i++)
        by_k[fill[tri[i].k0]++] = i;
    free(fill);
    *start_out = start;
    *by_k_out = by_k;
}

/* The sweep over the slabs: the active triangles, their bins by row, the crossings of one row, and the points. */
typedef struct shard_sample_mesh_sweep {
    size_t *active, n_active, cap_active;
    size_t *row_start, *row_fill; /* ny + 1 each */
    size_t *row_tri, cap_row_tri; /* the active triangles of row j: row_tri[row_start[j] .. row_start[j + 1]) */
    double *xs;                   /* the crossings of one row */
    size_t cap_xs;
    double *out; /* the points, 3 each */
    size_t cap_out, n_out;
} shard_sample_mesh_sweep;

/* Bins the active triangles by row j, so each row tests only triangles whose bounding box it meets. */
static void shard_sample_mesh_bin_rows(shard_sample_mesh_sweep *s, const shard_sample_mesh_proj *tri, int64_t ny)
{
    memset(s->row_start, 0, ((size_t)ny + 1) * sizeof(size_t));
    for (size_t a = 0; a < s->n_active; a++) {
        const shard_sample_mesh_proj *t = &tri[s->active[a]];
        for (int64_t j = t->j0; j <= t->j1; j++)
            s->row_start[j + 1]++;
    }
    for (int64_t j = 0; j < ny; j++)
        s->row_start[j + 1] += s->row_start[j];
    shard_reserve((void **)&s->row_tri, &s->cap_row_tri, s->row_start[ny], sizeof(size_t));
    memcpy(s->row_fill, s->row_start, ((size_t)ny + 1) * sizeof(size_t));
    for (size_t a = 0; a < s->n_active; a++) {
        const shard_sample_mesh_proj *t = &tri[s->active[a]];
        for (int64_t j = t->j0; j <= t->j1; j++)
            s->row_tri[s->row_fill[j]++] = s->active[a];
    }
}

/* The lattice points of row j of the slab at pz that lie inside: the row's crossings with its triangles, sorted,
 * and the parity of those beyond each point. */
static void shard_sample_mesh_row(shard_sample_mesh_sweep *s, const shard_sample_mesh_proj *tri, int64_t j, double x0,
                                  double spacing, int64_t nx, double py, double pz)
{
    size_t m = 0;
    for (size_t r = s->row_start[j]; r < s->row_start[j + 1]; r++) {
        const shard_sample_mesh_proj *t = &tri[s->row_tri[r]];
        int s0 = shard_sample_mesh_edge_sign(t->y[1], t->z[1], t->y[2], t->z[2], py, pz);
        int s1 = shard_sample_mesh_edge_sign(t->y[2], t->z[2], t->y[0], t->z[0], py, pz);
        if (s0 != s1)
            continue;
        int s2 = shard_sample_mesh_edge_sign(t->y[0], t->z[0], t->y[1], t->z[1], py, pz);
        if (s2 != s0)
            continue;
        shard_reserve((void **)&s->xs, &s->cap_xs, m + 1, sizeof(double));
        s->xs[m++] = shard_sample_mesh_cross_x(t, py, pz);
    }
    if (m == 0)
        return;
    if (m <= 32)
        shard_sample_mesh_sort(s->xs, m);
    else
        qsort(s->xs, m, sizeof(double), shard_sorted_cmp_double);
    /* inside <=> an odd number of crossings lies beyond the point (x_cross > p.x) */
    size_t below = 0;
    for (int64_t i = 0; i < nx; i++) {
        double px = shard_sample_mesh_coord(x0, spacing, i);
        while (below < m && s->xs[below] <= px)
            below++;
        if (((m - below) & 1) == 0) {
            if (below == m)
                break;
            continue;
        }
        shard_reserve((void **)&s->out, &s->cap_out, 3 * (s->n_out + 1), sizeof(double));
        s->out[3 * s->n_out] = px;
        s->out[3 * s->n_out + 1] = py;
        s->out[3 * s->n_out + 2] = pz;
        s->n_out++;
    }
}

void shard_sample_mesh_planes(const shard_mesh *mesh, double spacing, int64_t k_first, int64_t k_end, double **points,
                              size_t *n)
{
    *points = NULL;
    *n = 0;
    if (!mesh || mesh->n_triangles == 0 || !(spacing > 0) || !isfinite(spacing))
        return;
    double lo[3], hi[3];
    shard_mesh_bounds(mesh, lo, hi);
    int64_t cnt[3];
    for (int a = 0; a < 3; a++) {
        double c = ceil((hi[a] - lo[a]) / spacing);
        if (!(c >= 1) || c > 0x1p40)
            return;
        cnt[a] = (int64_t)c;
    }
    size_t nt;
    shard_sample_mesh_proj *tri = shard_sample_mesh_project(mesh, lo, spacing, cnt, &nt);

    /* The sweep over k keeps the active triangles (k0 <= k <= k1) and bins them by row j, so memory stays per
     * slab. */
    int64_t ny = cnt[1], nz = cnt[2], nx = cnt[0];
    size_t *start, *by_k;
    shard_sample_mesh_bucket(tri, nt, nz, &start, &by_k);
    shard_sample_mesh_sweep s = {.row_start = shard_malloc(((size_t)ny + 1) * sizeof(size_t)),
                                 .row_fill = shard_malloc(((size_t)ny + 1) * sizeof(size_t))};
    for (int64_t k = 0; k < nz && k < k_end; k++) {
        size_t keep = 0;
        for (size_t a = 0; a < s.n_active; a++)
            if (tri[s.active[a]].k1 >= k)
                s.active[keep++] = s.active[a];
        s.n_active = keep;
        size_t add = start[k + 1] - start[k];
        shard_reserve((void **)&s.active, &s.cap_active, s.n_active + add, sizeof(size_t));
        memcpy(s.active + s.n_active, by_k + start[k], add * sizeof(size_t));
        s.n_active += add;
        if (s.n_active == 0 || k < k_first || k >= k_end)
            continue;
        shard_sample_mesh_bin_rows(&s, tri, ny);
        double pz = shard_sample_mesh_coord(lo[2], spacing, k);
        for (int64_t j = 0; j < ny; j++)
            shard_sample_mesh_row(&s, tri, j, lo[0], spacing, nx, shard_sample_mesh_coord(lo[1], spacing, j), pz);
    }

    free(tri);
    free(start);
    free(by_k);
    free(s.active);
    free(s.row_start);
    free(s.row_fill);
    free(s.row_tri);
    free(s.xs);
    if (s.n_out == 0) {
        free(s.out);
        return;
    }
    *points = shard_realloc(s.out, 3 * s.n_out * sizeof(double));
    *n = s.n_out;
}
