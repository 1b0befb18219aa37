/* Mesh (core): a triangle mesh's transform, volume, bounds and nearest surface point (see mesh.h). */
#include "shard/mesh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void shard_mesh_transform(shard_mesh *mesh, double scale, const double translate[3])
{
    for (size_t i = 0; i < mesh->n_vertices; i++)
        for (int a = 0; a < 3; a++)
            mesh->vertices[3 * i + a] = scale * mesh->vertices[3 * i + a] + translate[a];
}

/* Over the vertices that triangles use: an OBJ file may list stray vertices, which bound nothing. */
double shard_mesh_volume(const shard_mesh *mesh)
{
    double v = 0.0;
    for (size_t t = 0; t < mesh->n_triangles; t++) {
        const double *a = mesh->vertices + 3 * mesh->triangles[3 * t],
                     *b = mesh->vertices + 3 * mesh->triangles[3 * t + 1],
                     *c = mesh->vertices + 3 * mesh->triangles[3 * t + 2];
        /* a . (b x c) / 6: the tetrahedron with the origin */
        v += a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) +
             a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    return v / 6.0;
}

void shard_mesh_bounds(const shard_mesh *mesh, double min[3], double max[3])
{
    for (int a = 0; a < 3; a++) {
        min[a] = INFINITY;
        max[a] = -INFINITY;
    }
    for (size_t c = 0; c < 3 * mesh->n_triangles; c++) {
        int64_t v = mesh->triangles[c];
        if (v < 0 || (uint64_t)v >= mesh->n_vertices)
            continue;
        for (int a = 0; a < 3; a++) {
            double x = mesh->vertices[3 * v + a];
            min[a] = x < min[a] ? x : min[a];
            max[a] = x > max[a] ? x : max[a];
        }
    }
    if (min[0] > max[0])
        for (int a = 0; a < 3; a++)
            min[a] = max[a] = 0;
}

/* The point of triangle (a, b, c) nearest p, by the triangle's Voronoi regions (vertices, edges, face: Ericson
 * 2005, §5.1.5). */
static void shard_mesh_closest_on_triangle(const double p[3], const double a[3], const double b[3], const double c[3],
                                           double q[3])
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    for (int k = 0; k < 3; k++)
        ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k], bp[k] = p[k] - b[k], cp[k] = p[k] - c[k];
#define DOT3(u, v) ((u)[0] * (v)[0] + (u)[1] * (v)[1] + (u)[2] * (v)[2])
    double d1 = DOT3(ab, ap), d2 = DOT3(ac, ap), d3 = DOT3(ab, bp), d4 = DOT3(ac, bp), d5 = DOT3(ab, cp),
           d6 = DOT3(ac, cp);
#undef DOT3
    double u = 0.0, v = 0.0; /* q = a + u ab + v ac */
    double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
    if (d1 <= 0.0 && d2 <= 0.0) {
        u = 0.0, v = 0.0;
    } else if (d3 >= 0.0 && d4 <= d3) {
        u = 1.0, v = 0.0;
    } else if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        u = d1 / (d1 - d3), v = 0.0;
    } else if (d6 >= 0.0 && d5 <= d6) {
        u = 0.0, v = 1.0;
    } else if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        u = 0.0, v = d2 / (d2 - d6);
    } else if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        double w = (d4 - d3) / ((d4 - d3) + (d5 - d6)); /* on edge bc: b + w (c - b) */
        u = 1.0 - w, v = w;
    } else {
        double den = va + vb + vc;
        u = vb / den, v = vc / den;
    }
    for (int k = 0; k < 3; k++)
        q[k] = a[k] + u * ab[k] + v * ac[k];
}

double shard_mesh_surface(const shard_mesh *mesh, const double p[3], double n[3])
{
    double best = INFINITY;
    n[0] = n[1] = n[2] = 0.0;
    for (size_t i = 0; i < mesh->n_triangles; i++) {
        const double *a = mesh->vertices + 3 * mesh->triangles[3 * i],
                     *b = mesh->vertices + 3 * mesh->triangles[3 * i + 1],
                     *c = mesh->vertices + 3 * mesh->triangles[3 * i + 2];
        double q[3];
        shard_mesh_closest_on_triangle(p, a, b, c, q);
        double d[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
        double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (!(r < best))
            continue;
        best = r;
        if (r > 0.0) {
            n[0] = d[0] / r, n[1] = d[1] / r, n[2] = d[2] / r;
        } else { /* on the triangle: its outward normal (counter-clockwise seen from outside) */
            double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            double m[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
            double l = sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
            if (l > 0.0)
                n[0] = m[0] / l, n[1] = m[1] / l, n[2] = m[2] / l;
        }
    }
    return best;
}

void shard_mesh_free(shard_mesh *mesh)
{
    if (!mesh)
        return;
    free(mesh->vertices);
    free(mesh->triangles);
    memset(mesh, 0, sizeof *mesh);
}
