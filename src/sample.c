/* Sampling bodies into lattice particles (see sample.h). */
#include "shard/sample.h"

#include "shard/fracture.h"

#include "shard/geometry.h"
#include "shard/mesh.h"
#include "shard/neighbor.h"
#include "shard/particles.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Lattice points of one primitive shape (box, sphere, cylinder) into a new array (caller frees). */
static void shard_sample_shape(const shard_shape *shape, double spacing, double **points, size_t *n)
{
    double lo[3], hi[3];
    shard_shape_bounds(shape, lo, hi);
    int64_t dim[3];
    for (int k = 0; k < 3; k++)
        dim[k] = (int64_t)ceil((hi[k] - lo[k]) / spacing);
    size_t cap = 0, m = 0;
    double *pts = NULL;
    for (int64_t k = 0; k < dim[2]; k++)
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
    if (d == 0.0) /* on a triangle: n is its normal by the winding */
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

/* What sampling a body costs, known before any point is made: lattice points of its bounding box (each is
 * tested) and the particles expected from its volume. */
static int shard_sample_check_size(const shard_scene *scene, const shard_body_def *b, const double lo[3],
                                   const double hi[3], double volume, size_t already, shard_error *err)
{
    double s = b->spacing, points = 1.0;
    for (int k = 0; k < 3; k++)
        points *= ceil((hi[k] - lo[k]) / s);
    double particles = volume / (s * s * s);
    if (!(particles >= 0.0))
        particles = points;
    double total = particles + (double)already, bytes = total * SHARD_SAMPLE_BYTES_PER_PARTICLE;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double memory = pages > 0 && page > 0 ? (double)pages * (double)page : INFINITY;
    char count[96];
    if (isfinite(particles))
        snprintf(count, sizeof count, "%.3g particles (%.3g GB on rank 0 at start-up)", particles,
                 particles * SHARD_SAMPLE_BYTES_PER_PARTICLE / 1e9);
    else
        snprintf(count, sizeof count, "more particles than a number can hold");
    if (!(total <= (double)INT32_MAX))
        return shard_error_at(err, scene->path, &b->spacing_loc,
                              "body '%s' at this spacing asks for %s; one rank can start at most 2147483647 "
                              "particles in all (%zu before this body): use a coarser spacing",
                              b->name, count, already);
    if (!(bytes <= memory))
        return shard_error_at(err, scene->path, &b->spacing_loc,
                              "body '%s' at this spacing asks for %s, %.3g GB with the %zu particles before it, "
                              "more than this machine's %.3g GB of memory",
                              b->name, count, bytes / 1e9, already, memory / 1e9);
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

/* A body must lie within the run's domain (sample.h): farther out, lattice points lose their spacing to
 * round-off and cell lists their integers. */
static int shard_sample_check_domain(const shard_scene *scene, const shard_body_def *b, const double lo[3],
                                     const double hi[3], shard_error *err)
{
    double far = 0.0, domain = shard_sample_domain(scene);
    for (int k = 0; k < 3; k++)
        far = fmax(far, fmax(fabs(lo[k]), fabs(hi[k])));
    if (!(far <= domain))
        return shard_error_at(err, scene->path, &b->shape.loc,
                              "body '%s' reaches %g m from the origin, beyond the %g m (2^40 of the smallest "
                              "spacing) a run can hold", b->name, far, domain);
    return 0;
}

int shard_sample_check_sizes(const shard_scene *scene, shard_error *err)
{
    double total = 0.0;
    for (int bi = 0; bi < scene->n_bodies; bi++) {
        const shard_body_def *b = &scene->bodies[bi];
        if (b->shape.kind == SHARD_SHAPE_MESH)
            continue;
        double lo[3], hi[3], s = b->spacing;
        shard_shape_bounds(&b->shape, lo, hi);
        size_t already = total < (double)SIZE_MAX ? (size_t)total : SIZE_MAX;
        int rc = shard_sample_check_size(scene, b, lo, hi, shard_sample_volume(&b->shape), already, err);
        if (!rc)
            rc = shard_sample_check_domain(scene, b, lo, hi, err);
        if (rc)
            return rc;
        total += shard_sample_volume(&b->shape) / (s * s * s);
    }
    return 0;
}

/* Drops the points strictly inside one of the body's notches (a flat notch holds none). */
static void shard_sample_notch_points(const shard_body_def *b, double *pts, size_t *n)
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
            m++;
        }
    }
    *n = m;
}

static int shard_sample_body_points(const shard_scene *scene, const shard_body_def *b, size_t already,
                                    double **pts, size_t *n, shard_error *err);

static int shard_sample_body(const shard_scene *scene, const shard_body_def *b, size_t already, double **pts,
                             size_t *n, shard_error *err)
{
    int rc = shard_sample_body_points(scene, b, already, pts, n, err);
    if (!rc)
        shard_sample_notch_points(b, *pts, n);
    return rc;
}

static int shard_sample_body_points(const shard_scene *scene, const shard_body_def *b, size_t already,
                                    double **pts, size_t *n, shard_error *err)
{
    double lo[3], hi[3];
    if (b->shape.kind != SHARD_SHAPE_MESH) {
        shard_shape_bounds(&b->shape, lo, hi);
        int rc = shard_sample_check_size(scene, b, lo, hi, shard_sample_volume(&b->shape), already, err);
        if (!rc)
            rc = shard_sample_check_domain(scene, b, lo, hi, err);
        if (!rc)
            shard_sample_shape(&b->shape, b->spacing, pts, n);
        if (!rc && b->sampling == SHARD_SAMPLING_SURFACE)
            shard_sample_fit(*pts, *n, b->spacing, lo, shard_sample_shape_surface, &b->shape);
        return rc;
    }
    shard_mesh mesh = {0};
    int rc = shard_mesh_read(b->shape.file, scene->path, &b->shape.file_loc, &mesh, err);
    if (!rc)
        rc = shard_mesh_check_closed(&mesh, b->shape.file, scene->path, &b->shape.file_loc, err);
    if (!rc) {
        shard_mesh_transform(&mesh, b->shape.scale, b->shape.translate);
        shard_mesh_bounds(&mesh, lo, hi);
        rc = shard_sample_check_size(scene, b, lo, hi, fabs(shard_mesh_volume(&mesh)), already, err);
        if (!rc)
            rc = shard_sample_check_domain(scene, b, lo, hi, err);
    }
    if (!rc)
        shard_mesh_sample(&mesh, b->spacing, pts, n);
    if (!rc && b->sampling == SHARD_SAMPLING_SURFACE) {
        shard_sample_mesh_ref ref = {&mesh, shard_mesh_volume(&mesh) < 0.0 ? -1.0 : 1.0};
        shard_sample_fit(*pts, *n, b->spacing, lo, shard_sample_mesh_surface, &ref);
    }
    shard_mesh_free(&mesh);
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
        size_t m = 0;
        int rc = shard_sample_body(scene, b, out->n, &pts, &m, err);
        if (rc) {
            shard_sampled_free(out);
            return rc;
        }
        if (m == 0) {
            free(pts);
            shard_sampled_free(out);
            return shard_error_at(err, scene->path, &b->shape.loc,
                                  "body '%s' samples to zero particles (spacing %g is too coarse for its shape)",
                                  b->name, b->spacing);
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
        /* Angular velocity is about the centre of the sampled particles (summed in id order). */
        double c[3] = {0, 0, 0};
        for (size_t i = n0; i < n1; i++)
            for (int k = 0; k < 3; k++)
                c[k] += out->X[3 * i + k];
        for (int k = 0; k < 3; k++)
            c[k] /= (double)m;
        const double *w = b->angular_velocity;
        for (size_t i = n0; i < n1; i++) {
            const double *X = out->X + 3 * i;
            double r[3] = {X[0] - c[0], X[1] - c[1], X[2] - c[2]};
            double *v = out->v + 3 * i;
            v[0] = b->velocity[0] + w[1] * r[2] - w[2] * r[1];
            v[1] = b->velocity[1] + w[2] * r[0] - w[0] * r[2];
            v[2] = b->velocity[2] + w[0] * r[1] - w[1] * r[0];
            out->body[i] = bi;
            out->flags[i] = 0;
            out->vpres[3 * i] = out->vpres[3 * i + 1] = out->vpres[3 * i + 2] = 0.0;
            for (int k = 0; k < b->n_constraints; k++) {
                const shard_constraint *con = &b->constraints[k];
                if (shard_shape_contains(&con->region, X)) {
                    out->flags[i] |= SHARD_PF_PRESCRIBED;
                    memcpy(out->vpres + 3 * i, con->velocity, sizeof con->velocity);
                }
            }
            if (out->flags[i] & SHARD_PF_PRESCRIBED)
                memcpy(v, out->vpres + 3 * i, 3 * sizeof *v);
        }
        out->n = n1;
        out->body_start[bi + 1] = (int64_t)n1;
    }
    return 0;
}

/* Removes every bond whose segment meets a notch of its body (each pair tested with its lower id first, so
 * both of its entries get the same verdict); a notch that cuts no bond is an error (it misses the body). */
static int shard_sample_cut_notches(const shard_scene *scene, const shard_sampled *s, shard_csr *bonds,
                                    shard_error *err)
{
    int any = 0;
    for (int b = 0; b < scene->n_bodies; b++)
        any |= scene->bodies[b].n_notches > 0;
    if (!any)
        return 0;
    int64_t *cut = NULL;
    int64_t k = 0;
    for (int b = 0; b < scene->n_bodies; b++) {
        const shard_body_def *bd = &scene->bodies[b];
        cut = shard_realloc(cut, ((size_t)bd->n_notches + 1) * sizeof *cut);
        memset(cut, 0, ((size_t)bd->n_notches + 1) * sizeof *cut);
        for (int64_t i = s->body_start[b]; i < s->body_start[b + 1]; i++) {
            int64_t e0 = bonds->start[i], e1 = bonds->start[i + 1];
            bonds->start[i] = k;
            for (int64_t e = e0; e < e1; e++) {
                int64_t j = bonds->idx[e];
                const double *a = s->X + 3 * (i < j ? i : j), *c = s->X + 3 * (i < j ? j : i);
                int keep = 1;
                for (int q = 0; q < bd->n_notches; q++)
                    if (shard_fracture_segment_meets_box(a, c, bd->notches[q].min, bd->notches[q].max)) {
                        keep = 0;
                        cut[q]++;
                    }
                if (keep)
                    bonds->idx[k++] = (int32_t)j;
            }
        }
        for (int q = 0; q < bd->n_notches; q++)
            if (cut[q] == 0) {
                free(cut);
                return shard_error_at(err, scene->path, &bd->notches[q].loc,
                                      "the notch [%g, %g, %g] - [%g, %g, %g] misses body '%s' (no bond of it "
                                      "crosses the notch)", bd->notches[q].min[0], bd->notches[q].min[1],
                                      bd->notches[q].min[2], bd->notches[q].max[0], bd->notches[q].max[1],
                                      bd->notches[q].max[2], bd->name);
            }
    }
    bonds->start[s->n] = k;
    free(cut);
    return 0;
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
    rc = shard_sample_cut_notches(scene, out, bonds, err);
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
