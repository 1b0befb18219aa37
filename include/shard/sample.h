/* Sample: turns a scene's bodies into lattice particles with global ids.
 *
 * Every shape is filled with the same simple-cubic lattice: p = o + (i + 1/2, j + 1/2, k + 1/2) * spacing,
 * with o the shape's bounding-box minimum, keeping the points inside the shape (meshes: io/mesh.h).  With
 * `sampling: surface` the lattice's surface particles are then moved onto the true surface (half a spacing
 * inside it; sample.c).  Global
 * ids are assigned body by body, then z, y, x (x fastest), so they do not depend on the number of ranks.
 * Initial velocities (linear + angular about the centre of the body's particles) and constraint flags are
 * set here.  Runs on one rank (the partitioner's); knows nothing about ranks.
 */
#ifndef SHARD_SAMPLE_H
#define SHARD_SAMPLE_H

#include "shard/particles.h"
#include "shard/scene.h"

/* What rank 0 holds per particle during start-up, sampling to distribution (docs/architecture.md): the figure
 * a body's spacing is checked against, with the machine's memory, before anything is allocated. */
#define SHARD_SAMPLE_BYTES_PER_PARTICLE 1000.0
/* The most lattice points of a body's bounding box that sampling tests (2^40, minutes of work). */
#define SHARD_SAMPLE_MAX_POINTS 1099511627776.0

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

/* Samples every body.  Errors (unreadable or open mesh, a body with no particle, a spacing that asks for more
 * particles than one rank can start or than the machine's memory holds, estimated from the shape's volume
 * before any allocation) name file, line and key.  Returns 0 or SHARD_EXIT_INPUT. Local. */
int shard_sample_scene(const shard_scene *scene, shard_sampled *out, shard_error *err);
/* Samples every body and finds the reference bonds of the whole run (neighbor.h): particles of body b closer
 * than h[b] (h[b] <= 0: none).  bonds gets rows = global ids, entries = partner global ids; at most 2^31 - 1
 * particles and bonds, the limit of rank 0's partition (error otherwise).  Returns 0 or SHARD_EXIT_INPUT.
 * Local. */
int shard_sample_scene_bonds(const shard_scene *scene, const double *h, shard_sampled *out, shard_csr *bonds,
                             shard_error *err);
void shard_sampled_free(shard_sampled *s);
/* The domain a run can hold, m: every coordinate within +-2^40 of the smallest spacing (sampling keeps its
 * lattice exact there, cell lists their integers; the driver stops a run whose particles leave it). Local. */
double shard_sample_domain(const shard_scene *scene);
/* The size checks of shard_sample_scene for the bodies of analytic shapes only (meshes need their files),
 * from the scene alone: every rank can make them before anything else.  0 or SHARD_EXIT_INPUT. Local. */
int shard_sample_check_sizes(const shard_scene *scene, shard_error *err);


#endif
