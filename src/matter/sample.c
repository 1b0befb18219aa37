/* Sampling bodies into lattice particles (see sample.h). */
#include "shard/sample.h"

#include "fracture.h"

#include "shard/geometry.h"
#include "shard/mesh.h"
#include "shard/neighbor.h"
#include "shard/particles.h"
#include "shard/xsum.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Lattice points of one primitive shape (box, sphere, cylinder) in the planes k0 <= k < k1 into a new array
 * (caller frees). */
static void shard_sample_shape(const shard_shape *shape, double spacing, int64_t k0, int64_t k1, double **points,
                               size_t *n)
{
    double lo[3], hi[3];
    shard_shape_bounds(shape, lo, hi);
    int64_t dim[3];
    for (int k = 0; k < 3; k++)
        dim[k] = (int64_t)ceil((hi[k] - lo[k]) / spacing);
    size_t cap = 0, m = 0;
    double *pts = NULL;
    for (int64_t k = k0 > 0 ? k0 : 0; k < dim[2] && k < k1; k++)
        for (int64_t j = 0; j < dim[1]; j++)
            for (int64_t i = 0; i < dim[0]; i++) {
                double p[3] = {lo[0] + ((double)i + 0.5) * spacing, lo[1] + ((double)j + 0.5) * spacing,
                               lo[2] + ((double)k + 0.5) * spacing};
                if (!shard_shape_contains(shape, p))
                    continue;
                shard_reserve((void **)&pts, &cap, 3 * (m + 1), sizeof *pts);
                memcpy(pts + 3 * m++, p, sizeof p);
            }
    *points = pts;
    *n = m;
}

/* Surface fitting (`sampling: surface`).  A lattice point is a surface particle when one of its six face
 * neighbours on the lattice was not sampled (it lies outside).  Each surface particle within one spacing of
 * the true surface is moved along the surface's normal to half a spacing inside it, so that its contact sphere
 * (radius s / 2) touches the true surface: the staircase and the flat facets of a lattice sphere (a facet about
 * sqrt(R s) wide at each pole) become the sphere.  Faces of a box that lie half a spacing outside the lattice
 * (every face whose length is a multiple of the spacing) do not move.  Interior particles, the order and the
 * global ids are unchanged; every particle keeps its lattice cell's volume. */
typedef struct shard_sample_key {
    int64_t c[3]; /* lattice indices, z first: the order of the key */
    size_t index;
} shard_sample_key;

static int shard_sample_key_cmp(const void *pa, const void *pb)
{
    const shard_sample_key *a = pa, *b = pb;
    for (int k = 0; k < 3; k++)
        if (a->c[k] != b->c[k])
            return a->c[k] < b->c[k] ? -1 : 1;
    return 0;
}

typedef double (*shard_sample_surface_fn)(const void *shape, const double p[3], double n[3]);

static double shard_sample_shape_surface(const void *shape, const double p[3], double n[3])
{
    return shard_shape_surface(shape, p, n);
}

/* A mesh and its winding: +1 counter-clockwise seen from outside, -1 inward-wound (accepted by sampling). */
typedef struct shard_sample_mesh_ref {
    const shard_mesh *mesh;
    double winding;
} shard_sample_mesh_ref;

static double shard_sample_mesh_surface(const void *ref, const double p[3], double n[3])
{
    const shard_sample_mesh_ref *m = ref;
    double d = shard_mesh_surface(m->mesh, p, n); /* p is inside: n points outwards */
    if (d == 0.0)                                 /* on a triangle: n is its normal by the winding */
        for (int k = 0; k < 3; k++)
            n[k] *= m->winding;
    return d;
}

static void shard_sample_fit(double *pts, size_t n, double s, const double lo[3], shard_sample_surface_fn surface,
                             const void *shape)
{
    shard_sample_key *keys = shard_malloc((n + 1) * sizeof *keys);
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            keys[i].c[2 - k] = (int64_t)floor((pts[3 * i + k] - lo[k]) / s);
        keys[i].index = i;
    }
    qsort(keys, n, sizeof *keys, shard_sample_key_cmp);
    unsigned char *surf = shard_calloc(n + 1, 1);
    for (size_t q = 0; q < n; q++)
        for (int k = 0; k < 3 && !surf[keys[q].index]; k++)
            for (int dir = -1; dir <= 1; dir += 2) {
                shard_sample_key nb = keys[q];
                nb.c[k] += dir;
                if (!bsearch(&nb, keys, n, sizeof *keys, shard_sample_key_cmp)) {
                    surf[keys[q].index] = 1;
                    break;
                }
            }
    for (size_t i = 0; i < n; i++) {
        if (!surf[i])
            continue;
        double *p = pts + 3 * i, nrm[3];
        double d = surface(shape, p, nrm);
        if (d >= 0.0 && d <= s)
            for (int k = 0; k < 3; k++)
                p[k] += (d - 0.5 * s) * nrm[k];
    }
    free(surf);
    free(keys);
}

/* A grid's spacing (the scene parser's: the shorter cell edge). */
static double shard_sample_grid_spacing(const shard_shape *g)
{
    double lu = sqrt(g->u[0] * g->u[0] + g->u[1] * g->u[1] + g->u[2] * g->u[2]);
    double lv = sqrt(g->v[0] * g->v[0] + g->v[1] * g->v[1] + g->v[2] * g->v[2]);
    return fmin(lu / (double)g->divisions[0], lv / (double)g->divisions[1]);
}

void shard_sample_grid_vertex(const shard_shape *g, int64_t i, int64_t j, double X[3])
{
    double a = (double)i / (double)g->divisions[0], b = (double)j / (double)g->divisions[1];
    for (int k = 0; k < 3; k++)
        X[k] = g->p0[k] + a * g->u[k] + b * g->v[k];
}

/* The vertices of a grid's rows [k0, k1) (row j: the vertices (i, j), i = 0 .. n_u), row by row. */
static void shard_sample_grid(const shard_shape *g, int64_t k0, int64_t k1, double **points, size_t *n)
{
    int64_t nu = g->divisions[0] + 1, nv = g->divisions[1] + 1;
    if (k0 < 0)
        k0 = 0;
    if (k1 > nv)
        k1 = nv;
    size_t m = k1 > k0 ? (size_t)((k1 - k0) * nu) : 0;
    double *pts = m ? shard_malloc(3 * m * sizeof *pts) : NULL;
    for (int64_t j = k0, q = 0; j < k1; j++)
        for (int64_t i = 0; i < nu; i++, q++)
            shard_sample_grid_vertex(g, i, j, pts + 3 * q);
    *points = pts;
    *n = m;
}

/* What sampling a body costs, known before any point is made: lattice points of its bounding box (each is
 * tested) and the particles expected from its volume. */
static int shard_sample_check_size(const shard_scene *scene, const shard_body_def *b, const double lo[3],
                                   const double hi[3], double volume, size_t already, int ranks, shard_error *err)
{
    double s = b->spacing, points = 1.0;
    for (int k = 0; k < 3; k++)
        points *= ceil((hi[k] - lo[k]) / s);
    if (b->shape.kind == SHARD_SHAPE_GRID) /* no lattice: its vertices */
        points = (double)(b->shape.divisions[0] + 1) * (double)(b->shape.divisions[1] + 1);
    else if (b->surface) /* a surface mesh: its vertices (volume: one cell each) */
        points = volume / (s * s * s);
    double particles = volume / (s * s * s);
    if (!(particles >= 0.0))
        particles = points;
    /* Each rank holds about 1/ranks of the particles at start-up (its share of the lattice planes, then its
     * part): the limits are per rank. */
    double per_rank = (particles + (double)already) / (double)ranks;
    double bytes = per_rank * SHARD_SAMPLE_BYTES_PER_PARTICLE;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double memory = pages > 0 && page > 0 ? (double)pages * (double)page : INFINITY;
    char count[128];
    if (isfinite(particles))
        snprintf(count, sizeof count, "%.3g particles (%.3g GB at start-up, shared by the ranks)", particles,
                 particles * SHARD_SAMPLE_BYTES_PER_PARTICLE / 1e9);
    else
        snprintf(count, sizeof count, "more particles than a number can hold");
    if (!(per_rank <= (double)INT32_MAX))
        return shard_error_at(err, scene->path, &b->spacing_loc,
                              "body '%s' at this spacing asks for %s; a rank can hold at most 2147483647 "
                              "of them (%zu before this body): use a coarser spacing or more ranks",
                              b->name, count, already);
    if (!(bytes <= memory))
        return shard_error_at(err, scene->path, &b->spacing_loc,
                              "body '%s' at this spacing asks for %s, %.3g GB on each of the %d rank(s) with "
                              "the %zu particles before it, more than this machine's %.3g GB of memory: use a "
                              "coarser spacing or more ranks",
                              b->name, count, bytes / 1e9, ranks, already, memory / 1e9);
    if (!(points <= SHARD_SAMPLE_MAX_POINTS))
        return shard_error_at(err, scene->path, &b->spacing_loc,
                              "body '%s' at this spacing has %.3g lattice points in its bounding box to test (at most "
                              "%.3g): use a coarser spacing",
                              b->name, points, SHARD_SAMPLE_MAX_POINTS);
    return 0;
}

/* The volume of an analytic shape, m^3. */
static double shard_sample_volume(const shard_shape *sh)
{
    switch (sh->kind) {
    case SHARD_SHAPE_BOX:
        return (sh->max[0] - sh->min[0]) * (sh->max[1] - sh->min[1]) * (sh->max[2] - sh->min[2]);
    case SHARD_SHAPE_SPHERE:
        return 4.0 / 3.0 * M_PI * sh->radius * sh->radius * sh->radius;
    case SHARD_SHAPE_CYLINDER: {
        double a[3] = {sh->p1[0] - sh->p0[0], sh->p1[1] - sh->p0[1], sh->p1[2] - sh->p0[2]};
        return M_PI * sh->radius * sh->radius * sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    }
    case SHARD_SHAPE_GRID: { /* one lattice cell per vertex: what the size checks count */
        double s = shard_sample_grid_spacing(sh);
        return (double)(sh->divisions[0] + 1) * (double)(sh->divisions[1] + 1) * s * s * s;
    }
    case SHARD_SHAPE_MESH:
        break;
    }
    return 0.0;
}

double shard_sample_domain(const shard_scene *scene)
{
    double s = INFINITY;
    for (int b = 0; b < scene->n_bodies; b++)
        s = fmin(s, scene->bodies[b].spacing);
    return ldexp(s, 40);
}

/* The checks of a body's size before any point is made (its bounding box lo, hi and its volume; `already`
 * particles before it, `ranks` share them): first within SHARD_SAMPLE_MAX_REACH of the origin (sample.h: farther
 * out its squared distances, volumes and masses overflow, whatever its spacing), then the particles and lattice
 * points its spacing asks for, then within the run's domain (sample.h: farther out, lattice points lose their
 * spacing to round-off and cell lists their integers). */
static int shard_sample_check_body(const shard_scene *scene, const shard_body_def *b, const double lo[3],
                                   const double hi[3], double volume, size_t already, int ranks, shard_error *err)
{
    double far = 0.0, domain = shard_sample_domain(scene);
    for (int k = 0; k < 3; k++)
        far = fmax(far, fmax(fabs(lo[k]), fabs(hi[k])));
    if (!(far <= SHARD_SAMPLE_MAX_REACH))
        return shard_error_at(err, scene->path, &b->shape.loc,
                              "body '%s' reaches %g m from the origin, beyond the %g m a run can hold (farther out, "
                              "its squared distances, volumes and masses would overflow)",
                              b->name, far, SHARD_SAMPLE_MAX_REACH);
    int rc = shard_sample_check_size(scene, b, lo, hi, volume, already, ranks, err);
    if (!rc && !(far <= domain))
        return shard_error_at(err, scene->path, &b->shape.loc,
                              "body '%s' reaches %g m from the origin, beyond the %g m (2^40 of the smallest "
                              "spacing) a run can hold",
                              b->name, far, domain);
    return rc;
}

int shard_sample_check_sizes(const shard_scene *scene, int ranks, shard_error *err)
{
    double total = 0.0;
    for (int bi = 0; bi < scene->n_bodies; bi++) {
        const shard_body_def *b = &scene->bodies[bi];
        if (b->shape.kind == SHARD_SHAPE_MESH)
            continue;
        double lo[3], hi[3], s = b->spacing;
        shard_shape_bounds(&b->shape, lo, hi);
        size_t already = total < (double)SIZE_MAX ? (size_t)total : SIZE_MAX;
        int rc = shard_sample_check_body(scene, b, lo, hi, shard_sample_volume(&b->shape), already, ranks, err);
        if (rc)
            return rc;
        total += shard_sample_volume(&b->shape) / (s * s * s);
    }
    return 0;
}

/* Drops the points strictly inside one of the body's notches (a flat notch holds none); plane[] follows. */
static void shard_sample_notch_points(const shard_body_def *b, double *pts, int64_t *plane, size_t *n)
{
    if (b->n_notches == 0)
        return;
    size_t m = 0;
    for (size_t i = 0; i < *n; i++) {
        const double *x = pts + 3 * i;
        int inside = 0;
        for (int k = 0; k < b->n_notches && !inside; k++) {
            const shard_notch *nt = &b->notches[k];
            inside = x[0] > nt->min[0] && x[0] < nt->max[0] && x[1] > nt->min[1] && x[1] < nt->max[1] &&
                     x[2] > nt->min[2] && x[2] < nt->max[2];
        }
        if (!inside) {
            memmove(pts + 3 * m, x, 3 * sizeof *x);
            plane[m] = plane[i];
            m++;
        }
    }
    *n = m;
}

/* A body's lattice, with the checks of its size made before any point is (shard_sample_check_body; none
 * without err): `already` particles come before it, `ranks` share them. */
static int shard_sample_lattice_of(const shard_scene *scene, const shard_body_def *b, size_t already, int ranks,
                                   shard_sample_lattice *L, shard_error *err)
{
    memset(L, 0, sizeof *L);
    double hi[3];
    int rc = 0;
    if (b->shape.kind != SHARD_SHAPE_MESH) {
        shard_shape_bounds(&b->shape, L->lo, hi);
        L->volume = shard_sample_volume(&b->shape);
    } else {
        L->mesh = b->shape.mesh; /* loaded with the scene (mesh_io.h) */
        if (!L->mesh)
            return err ? shard_error_at(err, scene->path, &b->shape.file_loc, "'%s': the mesh was not loaded",
                                        b->shape.file)
                       : SHARD_EXIT_INPUT;
        shard_mesh_bounds(L->mesh, L->lo, hi);
        L->volume = b->surface ? (double)L->mesh->n_vertices * b->spacing * b->spacing * b->spacing
                               : fabs(shard_mesh_volume(L->mesh));
    }
    if (err)
        rc = shard_sample_check_body(scene, b, L->lo, hi, L->volume, already, ranks, err);
    for (int k = 0; k < 3 && !rc; k++)
        L->dim[k] = (int64_t)ceil((hi[k] - L->lo[k]) / b->spacing);
    if (!rc && b->shape.kind == SHARD_SHAPE_GRID) { /* its "planes" are its rows of vertices */
        L->dim[0] = b->shape.divisions[0] + 1;
        L->dim[1] = 1;
        L->dim[2] = b->shape.divisions[1] + 1;
    } else if (!rc && b->surface) { /* a surface mesh's: blocks of its vertices in file order */
        L->dim[0] = (int64_t)L->mesh->n_vertices;
        L->dim[1] = 1;
        L->dim[2] = ((int64_t)L->mesh->n_vertices + SHARD_SAMPLE_SURFACE_BLOCK - 1) / SHARD_SAMPLE_SURFACE_BLOCK;
    }
    return rc;
}

/* The points of the lattice planes [k0, k1) of a body, surface-fitted and with the notches' points removed,
 * in lattice order, each with its plane: the same points, bit for bit, as sampling the whole body and keeping
 * those planes.  A surface particle is one whose face neighbour is missing, so fitting needs the planes on
 * either side: they are sampled too and dropped after the fit. */
static void shard_sample_body_planes(const shard_body_def *b, const shard_sample_lattice *L, int64_t k0, int64_t k1,
                                     double **pts, int64_t **plane, size_t *n)
{
    int fit = b->sampling == SHARD_SAMPLING_SURFACE;
    int64_t a0 = fit ? k0 - 1 : k0, a1 = fit && k1 < L->dim[2] ? k1 + 1 : k1;
    if (a0 < 0)
        a0 = 0;
    if (a1 > L->dim[2])
        a1 = L->dim[2];
    double s = b->spacing;
    if (b->shape.kind == SHARD_SHAPE_GRID) {
        shard_sample_grid(&b->shape, k0, k1, pts, n);
        int64_t *pl = shard_malloc((*n + 1) * sizeof *pl), nu = b->shape.divisions[0] + 1;
        int64_t r0 = k0 > 0 ? k0 : 0;
        for (size_t i = 0; i < *n; i++)
            pl[i] = r0 + (int64_t)i / nu;
        *plane = pl;
        return;
    }
    if (b->shape.kind == SHARD_SHAPE_MESH && b->surface) {
        int64_t nv = (int64_t)L->mesh->n_vertices, v0 = (k0 > 0 ? k0 : 0) * SHARD_SAMPLE_SURFACE_BLOCK;
        int64_t v1 = k1 < L->dim[2] ? k1 * SHARD_SAMPLE_SURFACE_BLOCK : nv;
        *n = v1 > v0 ? (size_t)(v1 - v0) : 0;
        *pts = *n ? shard_malloc(3 * *n * sizeof **pts) : NULL;
        int64_t *pl = shard_malloc((*n + 1) * sizeof *pl);
        for (size_t i = 0; i < *n; i++) {
            memcpy(*pts + 3 * i, L->mesh->vertices + 3 * (v0 + (int64_t)i), 3 * sizeof **pts);
            pl[i] = (v0 + (int64_t)i) / SHARD_SAMPLE_SURFACE_BLOCK;
        }
        *plane = pl;
        return;
    }
    if (b->shape.kind != SHARD_SHAPE_MESH)
        shard_sample_shape(&b->shape, s, a0, a1, pts, n);
    else
        shard_sample_mesh_planes(L->mesh, s, a0, a1, pts, n);
    int64_t *pl = shard_malloc((*n + 1) * sizeof *pl);
    for (size_t i = 0; i < *n; i++)
        pl[i] = (int64_t)floor(((*pts)[3 * i + 2] - L->lo[2]) / s);
    if (fit && b->shape.kind != SHARD_SHAPE_MESH) {
        shard_sample_fit(*pts, *n, s, L->lo, shard_sample_shape_surface, &b->shape);
    } else if (fit) {
        shard_sample_mesh_ref ref = {L->mesh, shard_mesh_volume(L->mesh) < 0.0 ? -1.0 : 1.0};
        shard_sample_fit(*pts, *n, s, L->lo, shard_sample_mesh_surface, &ref);
    }
    size_t m = 0;
    for (size_t i = 0; i < *n; i++)
        if (pl[i] >= k0 && pl[i] < k1) {
            memmove(*pts + 3 * m, *pts + 3 * i, 3 * sizeof **pts);
            pl[m++] = pl[i];
        }
    *n = m;
    shard_sample_notch_points(b, *pts, pl, n);
    *plane = pl;
}

int shard_sample_body_surface(const shard_scene *scene, int bi, double **pts, size_t *n, shard_error *err)
{
    const shard_body_def *b = &scene->bodies[bi];
    shard_body_def fitted = *b;
    fitted.sampling = SHARD_SAMPLING_SURFACE;
    fitted.n_notches = 0;
    shard_sample_lattice L;
    int rc = shard_sample_lattice_of(scene, b, 0, 1, &L, err);
    *pts = NULL, *n = 0;
    if (!rc) {
        int64_t *pl = NULL;
        size_t m = 0;
        double *all = NULL;
        shard_sample_body_planes(&fitted, &L, 0, L.dim[2], &all, &pl, &m);
        free(pl);
        double s = b->spacing;
        shard_sample_mesh_ref ref = {L.mesh, 1.0};
        size_t k = 0;
        for (size_t i = 0; i < m; i++) {
            double nrm[3], *p = all + 3 * i;
            double d = b->shape.kind == SHARD_SHAPE_MESH ? shard_sample_mesh_surface(&ref, p, nrm)
                                                         : shard_sample_shape_surface(&b->shape, p, nrm);
            if (d <= 0.75 * s) /* fitted surface particles lie half a spacing in */
                memmove(all + 3 * k++, p, 3 * sizeof *p);
        }
        *pts = all, *n = k;
    }
    return rc;
}

int shard_sample_scene(const shard_scene *scene, shard_sampled *out, shard_error *err)
{
    memset(out, 0, sizeof *out);
    out->n_bodies = scene->n_bodies;
    out->body_start = shard_calloc((size_t)scene->n_bodies + 1, sizeof *out->body_start);
    size_t cap = 0;
    for (int bi = 0; bi < scene->n_bodies; bi++) {
        const shard_body_def *b = &scene->bodies[bi];
        double *pts = NULL;
        int64_t *plane = NULL;
        size_t m = 0;
        shard_sample_lattice L;
        int rc = shard_sample_lattice_of(scene, b, out->n, 1, &L, err);
        if (!rc)
            shard_sample_body_planes(b, &L, 0, INT64_MAX, &pts, &plane, &m);
        free(plane);
        if (rc) {
            shard_sampled_free(out);
            return rc;
        }
        if (m == 0) {
            free(pts);
            shard_sampled_free(out);
            return shard_sample_empty_body(scene, bi, err);
        }
        size_t n0 = out->n, n1 = n0 + m;
        if (n1 > cap) {
            cap = n1 + n1 / 2;
            out->X = shard_realloc(out->X, 3 * cap * sizeof *out->X);
            out->v = shard_realloc(out->v, 3 * cap * sizeof *out->v);
            out->vpres = shard_realloc(out->vpres, 3 * cap * sizeof *out->vpres);
            out->body = shard_realloc(out->body, cap * sizeof *out->body);
            out->flags = shard_realloc(out->flags, cap * sizeof *out->flags);
        }
        memcpy(out->X + 3 * n0, pts, 3 * m * sizeof *pts);
        free(pts);
        /* Angular velocity is about the centre of the body's particles: an exact sum, so that the centre does
         * not depend on how the particles are split among ranks (the distributed start-up sums the same). */
        shard_xsum acc[3];
        double c[3];
        for (int k = 0; k < 3; k++) {
            shard_xsum_init(&acc[k]);
            shard_xsum_add_n(&acc[k], out->X + 3 * n0 + k, m, 3);
            c[k] = shard_xsum_round(&acc[k]) / (double)m;
        }
        for (size_t i = n0; i < n1; i++) {
            out->body[i] = bi;
            shard_sample_motion(b, c, out->X + 3 * i, out->v + 3 * i, out->vpres + 3 * i, &out->flags[i]);
        }
        out->n = n1;
        out->body_start[bi + 1] = (int64_t)n1;
    }
    return 0;
}

/* Whether a body that samples to no particle has lattice points without its notches: then they took every one.
 * Its planes are sampled one by one until one has a point. */
static int shard_sample_notched_away(const shard_scene *scene, const shard_body_def *b)
{
    shard_body_def whole = *b;
    whole.n_notches = 0;
    shard_sample_lattice L;
    size_t m = 0;
    if (b->n_notches == 0 || shard_sample_lattice_of(scene, &whole, 0, 1, &L, NULL))
        return 0;
    for (int64_t k = 0; k < L.dim[2] && m == 0; k++) {
        double *pts = NULL;
        int64_t *pl = NULL;
        shard_sample_body_planes(&whole, &L, k, k + 1, &pts, &pl, &m);
        free(pts), free(pl);
    }
    return m > 0;
}

int shard_sample_empty_body(const shard_scene *scene, int b, shard_error *err)
{
    const shard_body_def *bd = &scene->bodies[b];
    if (shard_sample_notched_away(scene, bd))
        return shard_error_at(err, scene->path, &bd->notches[0].loc,
                              "body '%s' has no particle outside its notches (a notch removes the particles strictly "
                              "inside it)",
                              bd->name);
    return shard_error_at(err, scene->path, &bd->shape.loc,
                          "body '%s' samples to zero particles (spacing %g is too coarse for its shape)", bd->name,
                          bd->spacing);
}

/* Removes every bond of rows [r0, r1) whose segment meets a notch of its body (each pair tested with its lower
 * index first, so both of its entries get the same verdict: indices are in global-id order); cut[] (one per
 * notch of the scene, in body order) counts the bonds removed.  bodies: the body of each point. */
static void shard_sample_cut_rows(const shard_scene *scene, const double *X, const int32_t *body, size_t n,
                                  const uint8_t *row_on, shard_csr *bonds, int64_t *cut)
{
    int64_t *notch0 = shard_calloc((size_t)scene->n_bodies + 1, sizeof *notch0);
    for (int b = 0; b < scene->n_bodies; b++)
        notch0[b + 1] = notch0[b] + scene->bodies[b].n_notches;
    int64_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t e0 = bonds->start[i], e1 = bonds->start[i + 1];
        bonds->start[i] = k;
        const shard_body_def *bd = &scene->bodies[body[i]];
        for (int64_t e = e0; e < e1; e++) {
            size_t j = (size_t)bonds->idx[e];
            const double *a = X + 3 * (i < j ? i : j), *c = X + 3 * (i < j ? j : i);
            int keep = 1;
            for (int q = 0; q < bd->n_notches; q++)
                if (shard_fracture_segment_meets_box(a, c, bd->notches[q].min, bd->notches[q].max)) {
                    keep = 0;
                    cut[notch0[body[i]] + q] += !row_on || row_on[i];
                }
            if (keep)
                bonds->idx[k++] = (int32_t)j;
        }
    }
    bonds->start[n] = k;
    free(notch0);
}

int shard_sample_notches_missed(const shard_scene *scene, const int64_t *cut, shard_error *err)
{
    int64_t at = 0;
    for (int b = 0; b < scene->n_bodies; b++) {
        const shard_body_def *bd = &scene->bodies[b];
        for (int q = 0; q < bd->n_notches; q++, at++)
            if (cut[at] == 0)
                return shard_error_at(err, scene->path, &bd->notches[q].loc,
                                      "the notch [%g, %g, %g] - [%g, %g, %g] misses body '%s' (no bond of it "
                                      "crosses the notch)",
                                      bd->notches[q].min[0], bd->notches[q].min[1], bd->notches[q].min[2],
                                      bd->notches[q].max[0], bd->notches[q].max[1], bd->notches[q].max[2], bd->name);
    }
    return 0;
}

int shard_sample_n_notches(const shard_scene *scene)
{
    int n = 0;
    for (int b = 0; b < scene->n_bodies; b++)
        n += scene->bodies[b].n_notches;
    return n;
}

int shard_sample_scene_bonds(const shard_scene *scene, const double *h, shard_sampled *out, shard_csr *bonds,
                             shard_error *err)
{
    int rc = shard_sample_scene(scene, out, err);
    if (rc)
        return rc;
    if (out->n > (size_t)INT32_MAX)
        return shard_error_at(err, scene->path, &scene->bodies[0].loc,
                              "%zu particles exceed what one rank can partition (2^31 - 1)", out->n);
    shard_neighbor_bonds(out->n, out->X, scene->n_bodies, out->body_start, h, bonds);
    int64_t *cut = shard_calloc((size_t)shard_sample_n_notches(scene) + 1, sizeof *cut);
    shard_sample_cut_rows(scene, out->X, out->body, out->n, NULL, bonds, cut);
    rc = shard_sample_notches_missed(scene, cut, err);
    free(cut);
    if (rc)
        return rc;
    if (bonds->start[out->n] > (int64_t)INT32_MAX)
        return shard_error_at(err, scene->path, &scene->bodies[0].loc,
                              "%lld bonds exceed what one rank can partition (2^31 - 1)",
                              (long long)bonds->start[out->n]);
    return 0;
}

void shard_sampled_free(shard_sampled *s)
{
    if (!s)
        return;
    free(s->X), free(s->v), free(s->vpres), free(s->body), free(s->flags), free(s->body_start);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------------------------------------------------
 * Distributed sampling
 * ---------------------------------------------------------------------------------------------------------- */

int shard_sample_plan_make(const shard_scene *scene, int ranks, shard_sample_plan *plan, shard_error *err)
{
    memset(plan, 0, sizeof *plan);
    plan->n_bodies = scene->n_bodies;
    plan->body = shard_calloc((size_t)scene->n_bodies + 1, sizeof *plan->body);
    plan->plane0 = shard_calloc((size_t)scene->n_bodies + 1, sizeof *plan->plane0);
    double expected = 0.0;
    for (int b = 0; b < scene->n_bodies; b++) {
        const shard_body_def *bd = &scene->bodies[b];
        size_t already = expected < (double)SIZE_MAX ? (size_t)expected : SIZE_MAX;
        int rc = shard_sample_lattice_of(scene, bd, already, ranks, &plan->body[b], err);
        if (rc) {
            shard_sample_plan_free(plan);
            return rc;
        }
        expected += plan->body[b].volume / (bd->spacing * bd->spacing * bd->spacing);
        plan->plane0[b + 1] = plan->plane0[b] + plan->body[b].dim[2];
    }
    return 0;
}

void shard_sample_plan_free(shard_sample_plan *plan)
{
    free(plan->body), free(plan->plane0);
    memset(plan, 0, sizeof *plan);
}

int64_t shard_sample_rank_first_plane(const shard_sample_plan *plan, int rank, int ranks)
{
    __int128 t = plan->plane0[plan->n_bodies];
    return (int64_t)(t * rank / ranks);
}

/* The ghost layer of body b: every plane whose points can be within its bond radius h of a point of a held
 * plane.  Fitting moves a point by at most half a spacing, so two points more than ceil(h/s) + 1 planes apart
 * are farther than h; one more plane for round-off. */
static int64_t shard_sample_ghost_planes(const shard_body_def *b, double h)
{
    double step = b->spacing;
    if (b->shape.kind == SHARD_SHAPE_GRID) { /* a grid's rows are |u x v| / (|u| n_v) apart */
        const shard_shape *g = &b->shape;
        double n[3] = {g->u[1] * g->v[2] - g->u[2] * g->v[1], g->u[2] * g->v[0] - g->u[0] * g->v[2],
                       g->u[0] * g->v[1] - g->u[1] * g->v[0]};
        double lu = sqrt(g->u[0] * g->u[0] + g->u[1] * g->u[1] + g->u[2] * g->u[2]);
        step = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) / (lu * (double)g->divisions[1]);
    }
    if (b->shape.kind == SHARD_SHAPE_MESH && b->surface) /* every block: meshes are irregular */
        return h > 0.0 ? INT64_MAX / 4 : 0;
    return h > 0.0 ? (int64_t)ceil(h / step) + 2 : 0;
}

void shard_sample_share_points(const shard_scene *scene, const shard_sample_plan *plan, const double *h, int rank,
                               int ranks, shard_sample_share *sh)
{
    memset(sh, 0, sizeof *sh);
    sh->first_plane = shard_sample_rank_first_plane(plan, rank, ranks);
    sh->end_plane = shard_sample_rank_first_plane(plan, rank + 1, ranks);
    sh->count = shard_calloc((size_t)(sh->end_plane - sh->first_plane) + 1, sizeof *sh->count);
    sh->body_start = shard_calloc((size_t)scene->n_bodies + 1, sizeof *sh->body_start);
    size_t cap = 0;
    for (int b = 0; b < scene->n_bodies; b++) {
        const shard_body_def *bd = &scene->bodies[b];
        int64_t p0 = plan->plane0[b], p1 = plan->plane0[b + 1];
        int64_t o0 = sh->first_plane > p0 ? sh->first_plane : p0, o1 = sh->end_plane < p1 ? sh->end_plane : p1;
        sh->body_start[b + 1] = sh->body_start[b];
        if (o0 >= o1)
            continue;
        int64_t g = shard_sample_ghost_planes(bd, h[b]);
        double *pts = NULL;
        int64_t *pl = NULL;
        size_t m = 0;
        shard_sample_body_planes(bd, &plan->body[b], o0 - p0 - g, o1 - p0 + g, &pts, &pl, &m);
        size_t n0 = sh->n;
        if (m == 0) { /* planes without a point of this body (pts is NULL) */
            free(pts), free(pl);
            continue;
        }
        if (n0 + m > cap) {
            cap = n0 + m + (n0 + m) / 4;
            sh->X = shard_realloc(sh->X, 3 * cap * sizeof *sh->X);
            sh->body = shard_realloc(sh->body, cap * sizeof *sh->body);
            sh->plane = shard_realloc(sh->plane, cap * sizeof *sh->plane);
        }
        memcpy(sh->X + 3 * n0, pts, 3 * m * sizeof *pts);
        for (size_t i = 0; i < m; i++) {
            sh->body[n0 + i] = b;
            sh->plane[n0 + i] = p0 + pl[i];
            if (sh->plane[n0 + i] >= sh->first_plane && sh->plane[n0 + i] < sh->end_plane)
                sh->count[sh->plane[n0 + i] - sh->first_plane]++;
        }
        free(pts), free(pl);
        sh->n += m;
        sh->body_start[b + 1] = (int64_t)sh->n;
    }
}

int shard_sample_share_own(const shard_sample_share *sh, size_t i)
{
    return sh->plane[i] >= sh->first_plane && sh->plane[i] < sh->end_plane;
}

void shard_sample_share_ids(const shard_sample_plan *plan, const int64_t *plane_count, shard_sample_share *sh)
{
    int64_t t = plan->plane0[plan->n_bodies];
    int64_t *first = shard_malloc(((size_t)t + 1) * sizeof *first);
    first[0] = 0;
    for (int64_t g = 0; g < t; g++)
        first[g + 1] = first[g] + plane_count[g];
    sh->gid = shard_malloc((sh->n + 1) * sizeof *sh->gid);
    int64_t at = 0;
    for (size_t i = 0; i < sh->n; i++) {
        if (i == 0 || sh->plane[i] != sh->plane[i - 1])
            at = first[sh->plane[i]];
        sh->gid[i] = at++;
    }
    free(first);
}

void shard_sample_share_bonds(const shard_scene *scene, const double *h, const shard_sample_share *sh, shard_csr *bonds,
                              int64_t *cut)
{
    shard_neighbor_bonds(sh->n, sh->X, scene->n_bodies, sh->body_start, h, bonds);
    uint8_t *own = shard_malloc(sh->n + 1);
    for (size_t i = 0; i < sh->n; i++)
        own[i] = (uint8_t)shard_sample_share_own(sh, i);
    shard_sample_cut_rows(scene, sh->X, sh->body, sh->n, own, bonds, cut);
    free(own);
}

void shard_sample_share_free(shard_sample_share *sh)
{
    free(sh->X), free(sh->body), free(sh->plane), free(sh->gid), free(sh->count), free(sh->body_start);
    memset(sh, 0, sizeof *sh);
}
