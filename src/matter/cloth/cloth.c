/* Cloth: internal forces and the grid's topology (see cloth.h). */
#include "cloth/cloth.h"

#include "shard/sample.h"
#include "shard/sorted.h"

#include "shard/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double shard_cloth_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void shard_cloth_cross(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static void shard_cloth_sub(const double *a, const double *b, double *c)
{
    c[0] = a[0] - b[0], c[1] = a[1] - b[1], c[2] = a[2] - b[2];
}

void shard_cloth_params_init(shard_cloth_params *cp, const shard_shape *grid, shard_cloth_mesh *mesh, double E,
                             double nu, double density, double t, double D, double beta)
{
    memset(cp, 0, sizeof *cp);
    cp->grid = *grid;
    cp->mesh = mesh;
    if (!mesh)
        cp->nu = grid->divisions[0], cp->nv = grid->divisions[1], cp->max_tri = 6, cp->max_hinge = 12;
    else
        cp->max_tri = mesh->max_tri, cp->max_hinge = mesh->max_hinge;
    cp->lambda = E * nu / (1.0 - nu * nu) * t;
    cp->mu = E / (2.0 * (1.0 + nu)) * t;
    cp->D = D >= 0.0 ? D : E * t * t * t / (12.0 * (1.0 - nu * nu));
    cp->beta = beta;
    cp->thickness = t;
    cp->density = density;
    cp->dt = shard_cloth_dt(cp);
}

/* ------------------------------------------------------------------------------------------------------------
 * Topology
 * ------------------------------------------------------------------------------------------------------------ */

int64_t shard_cloth_n_vertices(const shard_cloth_params *cp)
{
    return cp->mesh ? cp->mesh->n_vertices : (cp->nu + 1) * (cp->nv + 1);
}

int64_t shard_cloth_n_triangles(const shard_cloth_params *cp)
{
    return cp->mesh ? cp->mesh->n_triangles : 2 * cp->nu * cp->nv;
}

/* Hinges: the diagonals (one per cell), then the interior horizontal edges (rows 1 .. n_v - 1), then the
 * interior vertical edges (columns 1 .. n_u - 1). */
int64_t shard_cloth_n_hinges(const shard_cloth_params *cp)
{
    if (cp->mesh)
        return cp->mesh->n_hinges;
    return cp->nu * cp->nv + cp->nu * (cp->nv - 1) + (cp->nu - 1) * cp->nv;
}

static int64_t shard_cloth_v(const shard_cloth_params *cp, int64_t i, int64_t j) { return j * (cp->nu + 1) + i; }

void shard_cloth_triangle(const shard_cloth_params *cp, int64_t t, int64_t v[3])
{
    if (cp->mesh) {
        memcpy(v, cp->mesh->tri + 3 * t, 3 * sizeof *v);
        return;
    }
    int64_t c = t / 2, i = c % cp->nu, j = c / cp->nu;
    v[0] = shard_cloth_v(cp, i, j);
    if (t % 2 == 0)
        v[1] = shard_cloth_v(cp, i + 1, j), v[2] = shard_cloth_v(cp, i + 1, j + 1);
    else
        v[1] = shard_cloth_v(cp, i + 1, j + 1), v[2] = shard_cloth_v(cp, i, j + 1);
}

void shard_cloth_hinge(const shard_cloth_params *cp, int64_t h, int64_t v[4])
{
    if (cp->mesh) {
        memcpy(v, cp->mesh->hinge + 4 * h, 4 * sizeof *v);
        return;
    }
    int64_t nd = cp->nu * cp->nv, nh = cp->nu * (cp->nv - 1);
    if (h < nd) { /* diagonal of cell (i, j): T1 = (a, b, c), T0 = (b, a, d) */
        int64_t i = h % cp->nu, j = h / cp->nu;
        v[0] = shard_cloth_v(cp, i, j), v[1] = shard_cloth_v(cp, i + 1, j + 1);
        v[2] = shard_cloth_v(cp, i, j + 1), v[3] = shard_cloth_v(cp, i + 1, j);
    } else if (h < nd + nh) { /* (i, j)-(i+1, j): T0 of cell (i, j) above, T1 of cell (i, j-1) below */
        int64_t q = h - nd, i = q % cp->nu, j = q / cp->nu + 1;
        v[0] = shard_cloth_v(cp, i, j), v[1] = shard_cloth_v(cp, i + 1, j);
        v[2] = shard_cloth_v(cp, i + 1, j + 1), v[3] = shard_cloth_v(cp, i, j - 1);
    } else { /* (i, j+1)-(i, j): T1 of cell (i, j) right, T0 of cell (i-1, j) left */
        int64_t q = h - nd - nh, i = q % (cp->nu - 1) + 1, j = q / (cp->nu - 1);
        v[0] = shard_cloth_v(cp, i, j + 1), v[1] = shard_cloth_v(cp, i, j);
        v[2] = shard_cloth_v(cp, i + 1, j + 1), v[3] = shard_cloth_v(cp, i - 1, j);
    }
}

/* The hinge of the edge between grid vertices p and q, or -1 for a boundary edge. */
static int64_t shard_cloth_edge_hinge(const shard_cloth_params *cp, int64_t p, int64_t q)
{
    if (p > q) {
        int64_t s = p;
        p = q, q = s;
    }
    int64_t pi = p % (cp->nu + 1), pj = p / (cp->nu + 1), qi = q % (cp->nu + 1), qj = q / (cp->nu + 1);
    int64_t nd = cp->nu * cp->nv, nh = cp->nu * (cp->nv - 1);
    if (qi == pi + 1 && qj == pj + 1)
        return pj * cp->nu + pi;
    if (qj == pj && qi == pi + 1)
        return pj >= 1 && pj < cp->nv ? nd + (pj - 1) * cp->nu + pi : -1;
    if (qi == pi && qj == pj + 1)
        return pi >= 1 && pi < cp->nu ? nd + nh + pj * (cp->nu - 1) + (pi - 1) : -1;
    return -1;
}

/* Sorts ids[0..n) and drops repeats; the new count. */
static int shard_cloth_unique(int64_t *ids, int n)
{
    for (int a = 1; a < n; a++) /* insertion sort: n <= 18 */
        for (int b = a; b > 0 && shard_sorted_cmp_i64(&ids[b - 1], &ids[b]) > 0; b--) {
            int64_t s = ids[b];
            ids[b] = ids[b - 1], ids[b - 1] = s;
        }
    int m = 0;
    for (int a = 0; a < n; a++)
        if (m == 0 || ids[m - 1] != ids[a])
            ids[m++] = ids[a];
    return m;
}

/* A mesh vertex's list from its CSR. */
static int shard_cloth_mesh_list(const int64_t *start, const int64_t *ids, int64_t k, int64_t *out)
{
    int n = (int)(start[k + 1] - start[k]);
    memcpy(out, ids + start[k], (size_t)n * sizeof *out);
    return n;
}

int shard_cloth_vertex_triangles(const shard_cloth_params *cp, int64_t k, int64_t *t)
{
    if (cp->mesh)
        return shard_cloth_mesh_list(cp->mesh->vt_start, cp->mesh->vt, k, t);
    int64_t i = k % (cp->nu + 1), j = k / (cp->nu + 1);
    int n = 0;
    for (int64_t cj = j - 1; cj <= j; cj++)
        for (int64_t ci = i - 1; ci <= i; ci++) {
            if (ci < 0 || cj < 0 || ci >= cp->nu || cj >= cp->nv)
                continue;
            for (int64_t s = 0; s < 2; s++) {
                int64_t id = 2 * (cj * cp->nu + ci) + s, v[3];
                shard_cloth_triangle(cp, id, v);
                if (v[0] == k || v[1] == k || v[2] == k)
                    t[n++] = id;
            }
        }
    return shard_cloth_unique(t, n);
}

int shard_cloth_vertex_hinges(const shard_cloth_params *cp, int64_t k, int64_t *h)
{
    if (cp->mesh)
        return shard_cloth_mesh_list(cp->mesh->vh_start, cp->mesh->vh, k, h);
    int64_t t[6], buf[18]; /* a grid's (meshes return above) */
    int nt = shard_cloth_vertex_triangles(cp, k, t), n = 0;
    for (int a = 0; a < nt; a++) {
        int64_t v[3];
        shard_cloth_triangle(cp, t[a], v);
        for (int e = 0; e < 3; e++) {
            int64_t id = shard_cloth_edge_hinge(cp, v[e], v[(e + 1) % 3]);
            if (id >= 0)
                buf[n++] = id;
        }
    }
    n = shard_cloth_unique(buf, n);
    memcpy(h, buf, (size_t)n * sizeof *h);
    return n;
}

void shard_cloth_rest_vertex(const shard_cloth_params *cp, int64_t k, double X[3])
{
    if (cp->mesh) {
        memcpy(X, cp->mesh->X + 3 * k, 3 * sizeof *X);
        return;
    }
    shard_sample_grid_vertex(&cp->grid, k % (cp->nu + 1), k / (cp->nu + 1), X);
}

static double shard_cloth_area(const double *a, const double *b, const double *c)
{
    double e1[3], e2[3], n[3];
    shard_cloth_sub(b, a, e1);
    shard_cloth_sub(c, a, e2);
    shard_cloth_cross(e1, e2, n);
    return 0.5 * sqrt(shard_cloth_dot(n, n));
}

double shard_cloth_vertex_area(const shard_cloth_params *cp, int64_t k)
{
    int64_t t[SHARD_CLOTH_MAX_VALENCE];
    int nt = shard_cloth_vertex_triangles(cp, k, t);
    double a = 0.0;
    for (int q = 0; q < nt; q++) {
        int64_t v[3];
        double X[3][3];
        shard_cloth_triangle(cp, t[q], v);
        for (int c = 0; c < 3; c++)
            shard_cloth_rest_vertex(cp, v[c], X[c]);
        a += shard_cloth_area(X[0], X[1], X[2]);
    }
    return a / 3.0;
}

double shard_cloth_stencil_radius(const shard_cloth_params *cp)
{
    if (cp->mesh)
        return cp->mesh->radius;
    const double *u = cp->grid.u, *v = cp->grid.v;
    double du[3], dv[3], r = 0.0;
    for (int k = 0; k < 3; k++)
        du[k] = u[k] / (double)cp->nu, dv[k] = v[k] / (double)cp->nv;
    /* The hinges' vertex pairs: along u, v and the diagonal, and across them: u - v, 2u + v, u + 2v. */
    const double a[][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -1}, {2, 1}, {1, 2}};
    for (size_t q = 0; q < sizeof a / sizeof a[0]; q++) {
        double d[3];
        for (int k = 0; k < 3; k++)
            d[k] = a[q][0] * du[k] + a[q][1] * dv[k];
        r = fmax(r, sqrt(shard_cloth_dot(d, d)));
    }
    return r;
}

/* Mesh topology.  A directed edge of a triangle: its vertices a -> b, the triangle and its third vertex. */
typedef struct shard_cloth_edge {
    int64_t lo, hi; /* the undirected key */
    int64_t a, b, c, t;
} shard_cloth_edge;

static int shard_cloth_edge_cmp(const void *pa, const void *pb)
{
    const shard_cloth_edge *x = pa, *y = pb;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* The CSR of ids by vertex from (vertex, id) pairs: ids in increasing order per vertex (pairs come in id
 * order). */
static void shard_cloth_csr(int64_t nv, const int64_t *vertex, const int64_t *id, int64_t n, int64_t **start,
                            int64_t **out)
{
    *start = shard_calloc((size_t)nv + 2, sizeof **start);
    *out = shard_malloc(((size_t)n + 1) * sizeof **out);
    for (int64_t q = 0; q < n; q++)
        (*start)[vertex[q] + 1]++;
    for (int64_t k = 0; k < nv; k++)
        (*start)[k + 1] += (*start)[k];
    int64_t *at = shard_malloc(((size_t)nv + 1) * sizeof *at);
    memcpy(at, *start, (size_t)nv * sizeof *at);
    for (int64_t q = 0; q < n; q++)
        (*out)[at[vertex[q]]++] = id[q];
    free(at);
}

int shard_cloth_mesh_build(const double *X, int64_t n_vertices, const int64_t *tri, int64_t n_triangles,
                           shard_cloth_mesh *cm, char *why, size_t len)
{
    memset(cm, 0, sizeof *cm);
    cm->n_vertices = n_vertices, cm->n_triangles = n_triangles;
    cm->X = shard_malloc(3 * ((size_t)n_vertices + 1) * sizeof *cm->X);
    memcpy(cm->X, X, 3 * (size_t)n_vertices * sizeof *X);
    cm->tri = shard_malloc(3 * ((size_t)n_triangles + 1) * sizeof *cm->tri);
    memcpy(cm->tri, tri, 3 * (size_t)n_triangles * sizeof *tri);
    cm->h_min = INFINITY;
    shard_cloth_edge *e = shard_malloc(3 * ((size_t)n_triangles + 1) * sizeof *e);
    for (int64_t t = 0; t < n_triangles; t++) {
        const int64_t *v = tri + 3 * t;
        double a = shard_cloth_area(X + 3 * v[0], X + 3 * v[1], X + 3 * v[2]), longest = 0.0;
        for (int q = 0; q < 3; q++) {
            double d[3];
            shard_cloth_sub(X + 3 * v[(q + 1) % 3], X + 3 * v[q], d);
            longest = fmax(longest, sqrt(shard_cloth_dot(d, d)));
            cm->radius = fmax(cm->radius, sqrt(shard_cloth_dot(d, d)));
            e[3 * t + q] = (shard_cloth_edge){v[q] < v[(q + 1) % 3] ? v[q] : v[(q + 1) % 3],
                                              v[q] < v[(q + 1) % 3] ? v[(q + 1) % 3] : v[q],
                                              v[q],
                                              v[(q + 1) % 3],
                                              v[(q + 2) % 3],
                                              t};
        }
        if (!(a > 1e-12 * longest * longest)) {
            snprintf(why, len, "triangle %lld (vertices %lld, %lld, %lld) has no area", (long long)t + 1,
                     (long long)v[0] + 1, (long long)v[1] + 1, (long long)v[2] + 1);
            free(e);
            shard_cloth_mesh_free(cm);
            return -1;
        }
        cm->h_min = fmin(cm->h_min, 2.0 * a / longest);
    }
    int64_t ne = 3 * n_triangles;
    qsort(e, (size_t)ne, sizeof *e, shard_cloth_edge_cmp);
    cm->hinge = shard_malloc(4 * ((size_t)ne / 2 + 1) * sizeof *cm->hinge);
    const char *bad = NULL;
    int64_t q = 0;
    while (q < ne && !bad) {
        int64_t r = q;
        while (r < ne && e[r].lo == e[q].lo && e[r].hi == e[q].hi)
            r++;
        if (r - q > 2)
            bad = "is shared by more than two triangles";
        else if (r - q == 2 && e[q].a == e[q + 1].a)
            bad = "joins two triangles of opposite orientations (turn one of them over)";
        else if (r - q == 2) {
            int64_t *h = cm->hinge + 4 * cm->n_hinges++;
            h[0] = e[q].a, h[1] = e[q].b, h[2] = e[q].c, h[3] = e[q + 1].c;
            double d[3];
            shard_cloth_sub(X + 3 * h[2], X + 3 * h[3], d);
            cm->radius = fmax(cm->radius, sqrt(shard_cloth_dot(d, d)));
        }
        if (bad)
            snprintf(why, len, "the edge between vertices %lld and %lld %s", (long long)e[q].lo + 1,
                     (long long)e[q].hi + 1, bad);
        q = r;
    }
    free(e);
    if (bad) {
        shard_cloth_mesh_free(cm);
        return -1;
    }
    int64_t *vertex = shard_malloc((4 * (size_t)(n_triangles + cm->n_hinges) + 1) * sizeof *vertex);
    int64_t *id = shard_malloc((4 * (size_t)(n_triangles + cm->n_hinges) + 1) * sizeof *id);
    for (int64_t t = 0; t < n_triangles; t++)
        for (int c = 0; c < 3; c++)
            vertex[3 * t + c] = tri[3 * t + c], id[3 * t + c] = t;
    shard_cloth_csr(n_vertices, vertex, id, 3 * n_triangles, &cm->vt_start, &cm->vt);
    for (int64_t h = 0; h < cm->n_hinges; h++)
        for (int c = 0; c < 4; c++)
            vertex[4 * h + c] = cm->hinge[4 * h + c], id[4 * h + c] = h;
    shard_cloth_csr(n_vertices, vertex, id, 4 * cm->n_hinges, &cm->vh_start, &cm->vh);
    free(vertex), free(id);
    for (int64_t k = 0; k < n_vertices; k++) {
        int nt = (int)(cm->vt_start[k + 1] - cm->vt_start[k]), nh = (int)(cm->vh_start[k + 1] - cm->vh_start[k]);
        if (nt == 0 || nt > SHARD_CLOTH_MAX_VALENCE) {
            snprintf(why, len, "vertex %lld is a corner of %d triangles (a cloth vertex needs 1 to %d)",
                     (long long)k + 1, nt, SHARD_CLOTH_MAX_VALENCE);
            shard_cloth_mesh_free(cm);
            return -1;
        }
        cm->max_tri = nt > cm->max_tri ? nt : cm->max_tri;
        cm->max_hinge = nh > cm->max_hinge ? nh : cm->max_hinge;
    }
    return 0;
}

void shard_cloth_mesh_free(shard_cloth_mesh *cm)
{
    if (!cm)
        return;
    free(cm->X), free(cm->tri), free(cm->hinge), free(cm->vt_start), free(cm->vt), free(cm->vh_start), free(cm->vh);
    memset(cm, 0, sizeof *cm);
}

/* The membrane's rest data and the hinges' are computed from the positions a rank holds (the store's X, the
 * same bits on every rank); the time-step bound recomputes them from the grid. */
double shard_cloth_dt(const shard_cloth_params *cp)
{
    const shard_shape *g = &cp->grid;
    double h_min;
    if (cp->mesh) {
        h_min = cp->mesh->h_min;
    } else {
        double du[3], dv[3], dw[3], n[3];
        for (int k = 0; k < 3; k++)
            du[k] = g->u[k] / (double)cp->nu, dv[k] = g->v[k] / (double)cp->nv, dw[k] = du[k] + dv[k];
        shard_cloth_cross(du, dv, n);
        double longest = sqrt(fmax(shard_cloth_dot(du, du), fmax(shard_cloth_dot(dv, dv), shard_cloth_dot(dw, dw))));
        h_min = sqrt(shard_cloth_dot(n, n)) / longest;
    }
    double E_t = (cp->lambda + 2.0 * cp->mu), rho_t = cp->density * cp->thickness;
    /* membrane: the CFL of a constant-strain triangle, dt = h_min / c (= 2 / w with w = 2 c / h_min) */
    double w = 2.0 * sqrt(E_t / rho_t) / h_min;
    /* bending: Gershgorin on M^-1 K of the hinges (K = 2 k g g^T at rest) over every vertex of a mesh, or the
     * vertices of a grid's kinds (corners, edges, interior: rows and columns 0-2, the middle and the last
     * three) */
    int64_t pick_i[7] = {0, 1, 2, cp->nu / 2, cp->nu - 2, cp->nu - 1, cp->nu};
    int64_t pick_j[7] = {0, 1, 2, cp->nv / 2, cp->nv - 2, cp->nv - 1, cp->nv};
    int64_t n_pick = cp->mesh ? cp->mesh->n_vertices : 49;
    double wb2 = 0.0;
    for (int64_t pk = 0; pk < n_pick; pk++) {
        int64_t i = pick_i[pk % 7], j = pick_j[(pk / 7) % 7];
        if (!cp->mesh && (i < 0 || j < 0 || i > cp->nu || j > cp->nv))
            continue;
        int64_t k = cp->mesh ? pk : shard_cloth_v(cp, i, j), h[SHARD_CLOTH_MAX_HINGES];
        int nh = shard_cloth_vertex_hinges(cp, k, h);
        double sum = 0.0, m = shard_cloth_vertex_area(cp, k) * rho_t;
        for (int q = 0; q < nh; q++) {
            int64_t v[4];
            double X[4][3], grad[12];
            shard_cloth_hinge(cp, h[q], v);
            for (int c = 0; c < 4; c++)
                shard_cloth_rest_vertex(cp, v[c], X[c]);
            shard_cloth_hinge_rest r;
            shard_cloth_hinge_rest_init(cp, X[0], X[1], X[2], X[3], &r);
            shard_cloth_dihedral(X[0], X[1], X[2], X[3], grad);
            double gi = 0.0, gs = 0.0;
            for (int c = 0; c < 4; c++) {
                double gc = sqrt(shard_cloth_dot(grad + 3 * c, grad + 3 * c));
                gs += gc;
                if (v[c] == k)
                    gi = gc;
            }
            sum += 2.0 * r.k * gi * gs;
        }
        if (m > 0.0)
            wb2 = fmax(wb2, sum / m);
    }
    w = fmax(w, sqrt(wb2));
    double z = 0.5 * cp->beta * w;
    return 2.0 / w * (sqrt(1.0 + z * z) - z);
}

/* ------------------------------------------------------------------------------------------------------------
 * Membrane
 * ------------------------------------------------------------------------------------------------------------ */

void shard_cloth_tri_rest(const double *X0, const double *X1, const double *X2, shard_cloth_tri *r)
{
    double e1[3], e2[3], n[3], a[3], b[3];
    shard_cloth_sub(X1, X0, e1);
    shard_cloth_sub(X2, X0, e2);
    shard_cloth_cross(e1, e2, n);
    double l1 = sqrt(shard_cloth_dot(e1, e1)), ln = sqrt(shard_cloth_dot(n, n));
    for (int k = 0; k < 3; k++)
        a[k] = e1[k] / l1;
    shard_cloth_cross(n, a, b);
    for (int k = 0; k < 3; k++)
        b[k] /= ln;
    /* Dm = [[|e1|, e2.a], [0, e2.b]] in the frame (a, b) of the triangle's plane */
    double m00 = l1, m01 = shard_cloth_dot(e2, a), m11 = shard_cloth_dot(e2, b);
    r->Dinv[0] = 1.0 / m00, r->Dinv[1] = -m01 / (m00 * m11);
    r->Dinv[2] = 0.0, r->Dinv[3] = 1.0 / m11;
    r->area = 0.5 * ln;
}

/* F = [x1 - x0, x2 - x0] Dinv (3 x 2, column-major: F[3 c + k]). */
static void shard_cloth_gradient(const double *Dinv, const double *x0, const double *x1, const double *x2, double F[6])
{
    double e1[3], e2[3];
    shard_cloth_sub(x1, x0, e1);
    shard_cloth_sub(x2, x0, e2);
    for (int k = 0; k < 3; k++) {
        F[k] = e1[k] * Dinv[0] + e2[k] * Dinv[2];
        F[3 + k] = e1[k] * Dinv[1] + e2[k] * Dinv[3];
    }
}

double shard_cloth_membrane(const shard_cloth_params *cp, const shard_cloth_tri *r, const double *x0, const double *x1,
                            const double *x2, const double *v0, const double *v1, const double *v2, double f[9])
{
    double F[6], Fd[6];
    shard_cloth_gradient(r->Dinv, x0, x1, x2, F);
    /* Green strain G (symmetric 2 x 2) and its rate */
    double G00 = 0.5 * (shard_cloth_dot(F, F) - 1.0), G11 = 0.5 * (shard_cloth_dot(F + 3, F + 3) - 1.0);
    double G01 = 0.5 * shard_cloth_dot(F, F + 3);
    double tr = G00 + G11;
    double S00 = cp->lambda * tr + 2.0 * cp->mu * G00, S11 = cp->lambda * tr + 2.0 * cp->mu * G11;
    double S01 = 2.0 * cp->mu * G01;
    double W = r->area * (cp->mu * (G00 * G00 + G11 * G11 + 2.0 * G01 * G01) + 0.5 * cp->lambda * tr * tr);
    if (cp->beta > 0.0) {
        shard_cloth_gradient(r->Dinv, v0, v1, v2, Fd);
        double R00 = shard_cloth_dot(Fd, F), R11 = shard_cloth_dot(Fd + 3, F + 3);
        double R01 = 0.5 * (shard_cloth_dot(Fd, F + 3) + shard_cloth_dot(F, Fd + 3));
        double rt = R00 + R11;
        S00 += cp->beta * (cp->lambda * rt + 2.0 * cp->mu * R00);
        S11 += cp->beta * (cp->lambda * rt + 2.0 * cp->mu * R11);
        S01 += cp->beta * 2.0 * cp->mu * R01;
    }
    /* P = F S (3 x 2); forces on x1, x2: -A P Dinv^T; on x0: minus their sum */
    for (int k = 0; k < 3; k++) {
        double P0 = F[k] * S00 + F[3 + k] * S01, P1 = F[k] * S01 + F[3 + k] * S11;
        double f1 = -r->area * (P0 * r->Dinv[0] + P1 * r->Dinv[1]);
        double f2 = -r->area * (P0 * r->Dinv[2] + P1 * r->Dinv[3]);
        f[3 + k] += f1;
        f[6 + k] += f2;
        f[k] -= f1 + f2;
    }
    return W;
}

double shard_cloth_stretch(const shard_cloth_tri *r, const double *x0, const double *x1, const double *x2)
{
    double F[6];
    shard_cloth_gradient(r->Dinv, x0, x1, x2, F);
    double G00 = 0.5 * (shard_cloth_dot(F, F) - 1.0), G11 = 0.5 * (shard_cloth_dot(F + 3, F + 3) - 1.0);
    double G01 = 0.5 * shard_cloth_dot(F, F + 3);
    double m = 0.5 * (G00 + G11), d = 0.5 * (G00 - G11);
    return m + sqrt(d * d + G01 * G01);
}

/* ------------------------------------------------------------------------------------------------------------
 * Bending
 * ------------------------------------------------------------------------------------------------------------ */

double shard_cloth_dihedral(const double *x0, const double *x1, const double *x2, const double *x3, double *g)
{
    double e[3], a2[3], a3[3], n1[3], n2[3], c[3];
    shard_cloth_sub(x1, x0, e);
    shard_cloth_sub(x2, x0, a2);
    shard_cloth_sub(x3, x1, a3);
    shard_cloth_cross(e, a2, n1); /* (x1 - x0) x (x2 - x0): triangle (x0, x1, x2) */
    double me[3] = {-e[0], -e[1], -e[2]};
    shard_cloth_cross(me, a3, n2); /* (x0 - x1) x (x3 - x1): triangle (x1, x0, x3) */
    double le = sqrt(shard_cloth_dot(e, e)), q1 = shard_cloth_dot(n1, n1), q2 = shard_cloth_dot(n2, n2);
    if (g)
        memset(g, 0, 12 * sizeof *g);
    if (!(le > 0.0) || !(q1 > 1e-24 * le * le * le * le) || !(q2 > 1e-24 * le * le * le * le))
        return 0.0;
    shard_cloth_cross(n1, n2, c);
    double theta = atan2(shard_cloth_dot(c, e) / le, shard_cloth_dot(n1, n2));
    if (g) {
        /* Bridson et al. 2003 (their u_1 .. u_4): an opposite vertex's gradient is -|e| N / |N|^2 (theta
         * falls as it moves along its triangle's normal); an edge vertex's is minus the opposite vertices'
         * weighted by their lever arms along the edge, s = (x - x0).e / |e|^2 from x0 (so the four sum to 0). */
        double p2 = 0.0, p3 = 0.0, r2 = 0.0, r3 = 0.0; /* (x2 - x1).e, (x3 - x1).e, (x2 - x0).e, (x3 - x0).e */
        for (int k = 0; k < 3; k++) {
            p2 += (x2[k] - x1[k]) * e[k], p3 += (x3[k] - x1[k]) * e[k];
            r2 += (x2[k] - x0[k]) * e[k], r3 += (x3[k] - x0[k]) * e[k];
        }
        double l2 = le * le;
        for (int k = 0; k < 3; k++) {
            double u2 = -le * n1[k] / q1, u3 = -le * n2[k] / q2;
            g[k] = (p2 * u2 + p3 * u3) / l2;
            g[3 + k] = -(r2 * u2 + r3 * u3) / l2;
            g[6 + k] = u2;
            g[9 + k] = u3;
        }
    }
    return theta;
}

void shard_cloth_hinge_rest_init(const shard_cloth_params *cp, const double *X0, const double *X1, const double *X2,
                                 const double *X3, shard_cloth_hinge_rest *r)
{
    double e[3];
    shard_cloth_sub(X1, X0, e);
    double a = shard_cloth_area(X0, X1, X2) + shard_cloth_area(X1, X0, X3);
    r->k = a > 0.0 ? 0.5 * cp->D * shard_cloth_dot(e, e) / a : 0.0;
    r->theta0 = shard_cloth_dihedral(X0, X1, X2, X3, NULL);
}

double shard_cloth_bending(const shard_cloth_params *cp, const shard_cloth_hinge_rest *r, const double *const x[4],
                           const double *const v[4], double f[12])
{
    double g[12];
    double d = shard_cloth_dihedral(x[0], x[1], x[2], x[3], g) - r->theta0;
    double m = 2.0 * r->k * d;
    if (cp->beta > 0.0) {
        double rate = 0.0;
        for (int c = 0; c < 4; c++)
            rate += shard_cloth_dot(g + 3 * c, v[c]);
        m += 2.0 * r->k * cp->beta * rate;
    }
    for (int q = 0; q < 12; q++)
        f[q] -= m * g[q];
    return r->k * d * d;
}
