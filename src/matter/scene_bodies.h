/* Scene bodies: the readers of the sections of a scene that say what is in it (scene_bodies.c), for the top-level
 * table of scene.c.  Each is an SHARD_KEY_CUSTOM parser (scene_keys.h) whose target is the shard_scene being read, and
 * each needs the scene as the context's user state too: a body names a material read before it.
 */
#ifndef SHARD_SCENE_BODIES_H
#define SHARD_SCENE_BODIES_H

#include "scene_keys.h"
#include "shard/scene.h"

/* The keys of bodies sampled from a lattice (`sampling`: lattice or surface fitted), rows of shard_body_def: the
 * body_shared table (matter.h) of the kinds whose bodies are (solid, rigid), not of surfaces. */
extern const shard_scene_section shard_scene_lattice_keys;

/* materials: a mapping of names to materials (at least one). */
int shard_scene_parse_materials(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target);
/* After the bodies: a material key that only some kinds read (shard_matter_keys.material_keys), given in a material
 * whose bodies are all of other kinds, fails at the key (it would have no effect). */
int shard_scene_check_material_keys(shard_scene_ctx *c, const shard_scene_node *root);
/* bodies: a sequence of bodies (at least one), after the materials. */
int shard_scene_parse_bodies(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target);
/* obstacles: a sequence of planes, spheres and boxes (empty or null: none). */
int shard_scene_parse_obstacles(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target);

#endif
