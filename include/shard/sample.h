/* Sample: turns a scene's bodies into lattice particles with global ids.
 *
 * Every shape is filled with the same simple-cubic lattice: p = o + (i + 1/2, j + 1/2, k + 1/2) * spacing,
 * with o the shape's bounding-box minimum, keeping the points inside the shape (meshes: io/mesh.h).  Global
 * ids are assigned body by body, then z, y, x (x fastest), so they do not depend on the number of ranks.
 * Initial velocities (linear + angular about the centre of the body's particles) and constraint flags are
 * set here.  Runs on one rank (the partitioner's); knows nothing about ranks.
 */
#ifndef SHARD_SAMPLE_H
#define SHARD_SAMPLE_H

#include "shard/particles.h"
#include "shard/scene.h"

typedef struct shard_sampled {
    size_t n;
    double *X;          /* 3n rest positions */
    double *v;          /* 3n initial velocities */
    int32_t *body;      /* n */
    uint32_t *flags;    /* n (SHARD_PF_*) */
    double *vpres;      /* 3n prescribed velocities */
    int64_t *body_start;/* n_bodies + 1: body b owns ids [body_start[b], body_start[b+1]) */
    int n_bodies;
} shard_sampled;

/* Samples every body.  Errors (unreadable or open mesh, a body with no particle) name file, line and key.
 * Returns 0 or SHARD_EXIT_INPUT. Local. */
int shard_sample_scene(const shard_scene *scene, shard_sampled *out, shard_error *err);
/* Samples every body and finds the reference bonds of the whole run (neighbor.h): particles of body b closer
 * than h[b] (h[b] <= 0: none).  bonds gets rows = global ids, entries = partner global ids; at most 2^31 - 1
 * particles and bonds, the limit of rank 0's partition (error otherwise).  Returns 0 or SHARD_EXIT_INPUT.
 * Local. */
int shard_sample_scene_bonds(const shard_scene *scene, const double *h, shard_sampled *out, shard_csr *bonds,
                             shard_error *err);
void shard_sampled_free(shard_sampled *s);


#endif
