/* Mesh (core): a triangle mesh in memory (vertices and counter-clockwise triangles) and its geometry: transform,
 * signed volume, bounds and the nearest surface point.  Reading STL/OBJ files, welding and the closedness check
 * are io's (mesh_io.h); sampling a closed mesh into lattice points is physics' (sample.h, shard_sample_mesh).
 * Nothing here knows about files, particles or ranks.
 */
#ifndef SHARD_MESH_H
#define SHARD_MESH_H

#include "shard/base.h"

typedef struct shard_mesh {
    size_t n_vertices;
    double *vertices; /* 3 * n_vertices */
    size_t n_triangles;
    int64_t *triangles; /* 3 * n_triangles vertex indices, counter-clockwise seen from outside */
} shard_mesh;

/* Applies x -> scale * x + translate to every vertex. Local. */
void shard_mesh_transform(shard_mesh *mesh, double scale, const double translate[3]);

/* Signed volume (m^3; positive for outward-facing triangles of a closed mesh), by the divergence theorem. Local. */
double shard_mesh_volume(const shard_mesh *mesh);

/* Axis-aligned bounding box. Local. */
void shard_mesh_bounds(const shard_mesh *mesh, double min[3], double max[3]);

/* The distance from p to the mesh's surface (its nearest triangle point) and in n the unit vector from p
 * towards that point (for p inside a closed mesh: the outward direction; when p lies on a triangle, the
 * triangle's normal by its winding, outward for a counter-clockwise mesh).  Every triangle is visited (for the
 * few points near a surface that sampling asks about). Local. */
double shard_mesh_surface(const shard_mesh *mesh, const double p[3], double n[3]);

/* Frees the arrays; NULL-safe; leaves the struct zeroed. */
void shard_mesh_free(shard_mesh *mesh);

#endif
