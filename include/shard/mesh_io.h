/* Mesh reading (io): closed triangle meshes from STL (binary and ASCII) and OBJ files, the welding of STL's
 * unshared vertices, the closedness check (every edge used by exactly two triangles, in opposite directions), and
 * the loading of a scene's mesh shapes.  The mesh record and its geometry are core (mesh.h).
 */
#ifndef SHARD_MESH_IO_H
#define SHARD_MESH_IO_H

#ifndef SHARD_LAYER_IO
#error "shard/mesh_io.h is an io header: only io and the layers above it (driver, CLI) include it"
#endif

#include "shard/geometry.h"
#include "shard/mesh.h"

/* The largest mesh file read (16 GiB: some 3 * 10^8 triangles of binary STL). */
#define SHARD_MESH_MAX_BYTES ((size_t)16 << 30)

/* Reads `path` (.stl binary or ASCII, .obj; extension case-insensitive).  `loc` and `scene_path` are used only
 * to prefix error messages ("scene.yaml:12:9: bodies[1].shape.mesh.file: cannot open 'x.stl': No such file").
 * Returns 0, or SHARD_EXIT_INPUT with err filled.  Local. */
int shard_mesh_read(const char *path, const char *scene_path, const shard_src_loc *loc, shard_mesh *mesh,
                    shard_error *err);

/* 0 when every undirected edge is shared by exactly two triangles with opposite orientation and no triangle is
 * degenerate; otherwise SHARD_EXIT_INPUT with a message naming the first offending edge. Local. */
int shard_mesh_check_closed(const shard_mesh *mesh, const char *mesh_path, const char *scene_path,
                            const shard_src_loc *loc, shard_error *err);

/* Loads a mesh shape's file once (no-op for other shapes and for a shape already loaded): reads it, checks that it
 * is closed when `closed` (a solid's or rigid body's mesh; a surface's may be open), applies the shape's scale and
 * translation, and sets s->mesh (freed by shard_scene_free).  0 or SHARD_EXIT_INPUT with err naming the scene's
 * `file` value. Local. */
int shard_mesh_load_shape(shard_shape *s, int closed, const char *scene_path, shard_error *err);

#endif
