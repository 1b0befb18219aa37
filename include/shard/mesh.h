/* Mesh: closed triangle meshes read from STL (binary and ASCII) and OBJ files, and their sampling into
 * lattice particles.
 *
 * The module owns reading (format detected from the content for STL, from the extension otherwise), welding of
 * STL's unshared vertices, the closedness check (every edge used by exactly two triangles, in opposite
 * directions), and the inside test used for sampling.  Sampling casts one ray per lattice row along +x and
 * counts crossings with a consistent tie-breaking rule on shared edges and vertices, so a ray through an edge
 * or a vertex is counted once: the result is exact ray parity, not a jittered guess.  It knows nothing about
 * particles' physics or ranks.
 */
#ifndef SHARD_MESH_H
#define SHARD_MESH_H

#include "shard/base.h"

/* The largest mesh file read (16 GiB: some 3 * 10^8 triangles of binary STL). */
#define SHARD_MESH_MAX_BYTES ((size_t)16 << 30)

typedef struct shard_mesh {
    size_t n_vertices;
    double *vertices;   /* 3 * n_vertices */
    size_t n_triangles;
    int64_t *triangles; /* 3 * n_triangles vertex indices, counter-clockwise seen from outside */
} shard_mesh;

/* Reads `path` (.stl binary or ASCII, .obj; extension case-insensitive).  `loc` and `scene_path` are used only
 * to prefix error messages ("scene.yaml:12:9: bodies[1].shape.mesh.file: cannot open 'x.stl': No such file").
 * Returns 0, or SHARD_EXIT_INPUT with err filled.  Local. */
int shard_mesh_read(const char *path, const char *scene_path, const shard_src_loc *loc, shard_mesh *mesh,
                    shard_error *err);

/* Applies x -> scale * x + translate to every vertex. Local. */
void shard_mesh_transform(shard_mesh *mesh, double scale, const double translate[3]);

/* 0 when every undirected edge is shared by exactly two triangles with opposite orientation and no triangle is
 * degenerate; otherwise SHARD_EXIT_INPUT with a message naming the first offending edge. Local. */
int shard_mesh_check_closed(const shard_mesh *mesh, const char *mesh_path, const char *scene_path,
                            const shard_src_loc *loc, shard_error *err);

/* Signed volume (m^3; positive for outward-facing triangles of a closed mesh), by the divergence theorem. Local. */
double shard_mesh_volume(const shard_mesh *mesh);

/* Axis-aligned bounding box. Local. */
void shard_mesh_bounds(const shard_mesh *mesh, double min[3], double max[3]);

/* Lattice points inside the closed mesh.  The lattice is the one every shape uses (sample.h):
 * p = origin + (i + 1/2, j + 1/2, k + 1/2) * spacing for i, j, k >= 0, with origin = the mesh's bounding-box
 * minimum, up to the bounding-box maximum.  Points are returned in k-major, then j, then i order (x fastest),
 * in a newly allocated array of 3 * (*n) doubles (caller frees).  A point is inside when a ray from it
 * along +x crosses the surface an odd number of times.  Local. */
void shard_mesh_sample(const shard_mesh *mesh, double spacing, double **points, size_t *n);
/* The same for the lattice planes k_first <= k < k_end only (the points of those planes, bit for bit as
 * shard_mesh_sample gives them). Local. */
void shard_mesh_sample_planes(const shard_mesh *mesh, double spacing, int64_t k_first, int64_t k_end,
                              double **points, size_t *n);

/* The distance from p to the mesh's surface (its nearest triangle point) and in n the unit vector from p
 * towards that point (for p inside a closed mesh: the outward direction; when p lies on a triangle, the
 * triangle's normal by its winding, outward for a counter-clockwise mesh).  Every triangle is visited (for the
 * few points near a surface that sampling asks about). Local. */
double shard_mesh_surface(const shard_mesh *mesh, const double p[3], double n[3]);

/* Frees the arrays; NULL-safe; leaves the struct zeroed. */
void shard_mesh_free(shard_mesh *mesh);

#endif
