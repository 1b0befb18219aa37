/* Sample: turns a scene's bodies into lattice particles with global ids.
 *
 * Every shape is filled with the same simple-cubic lattice: p = o + (i + 1/2, j + 1/2, k + 1/2) * spacing,
 * with o the shape's bounding-box minimum, keeping the points inside the shape (meshes: shard_sample_mesh below).  With
 * `sampling: surface` the lattice's surface particles are then moved onto the true surface (half a spacing
 * inside it; sample.c).  Global
 * ids are assigned body by body, then z, y, x (x fastest), so they do not depend on the number of ranks.
 * Initial velocities (linear + angular about the centre of the body's particles) and constraint flags are
 * set here.  Angular velocity is about the centre of the body's particles, an exact sum (xsum.h).
 *
 * Two paths give the same particles.  shard_sample_scene samples the whole scene in one process (`shard
 * partition`, tests).  The run's start-up samples it distributed: the lattice planes (z index) of all bodies,
 * body after body, are numbered 0 .. T-1, and rank r of P samples the planes [T r / P, T (r + 1) / P) and,
 * for the bonds, a ghost layer of the planes around them within the bond radius; the number of points in every
 * plane, summed over the ranks, gives each plane's first global id, so the ids are those of the whole-scene
 * path whatever the rank count.  This module knows nothing about ranks: the caller passes rank and size and
 * makes the sums.
 */
#ifndef SHARD_SAMPLE_H
#define SHARD_SAMPLE_H

#ifndef SHARD_LAYER_PHYSICS
#error "shard/sample.h is a physics header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/mesh.h"
#include "shard/particles.h"
#include "shard/scene.h"

/* What rank 0 holds per particle during start-up, sampling to distribution (docs/architecture.md): the figure
 * a body's spacing is checked against, with the machine's memory, before anything is allocated. */
#define SHARD_SAMPLE_BYTES_PER_PARTICLE 1000.0
/* The most lattice points of a body's bounding box that sampling tests (2^40, minutes of work). */
#define SHARD_SAMPLE_MAX_POINTS 1099511627776.0
/* How far from the origin a body may reach, m, whatever its spacing: far beyond any physical scene, and near
 * enough that the squared distances, volumes, masses and energies of its particles stay well inside the range of
 * doubles (a cube of 1e200 m has an infinite volume; a sphere of that radius, no point inside). */
#define SHARD_SAMPLE_MAX_REACH 1e50

typedef struct shard_sampled {
    size_t n;
    double *X;           /* 3n rest positions */
    double *v;           /* 3n initial velocities */
    int32_t *body;       /* n */
    uint32_t *flags;     /* n (SHARD_PF_*) */
    double *vpres;       /* 3n prescribed velocities */
    int64_t *body_start; /* n_bodies + 1: body b owns ids [body_start[b], body_start[b+1]) */
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
int shard_sample_check_sizes(const shard_scene *scene, int ranks, shard_error *err);
/* Body b's surface particles (its lattice points fitted to the surface, those within 3/4 of a spacing of it),
 * sampled in one process: what a rigid body touches with where its shape has no exact contact test (rigid.h).
 * *pts (3 *n, caller frees).  0 or SHARD_EXIT_INPUT (an unreadable or open mesh). Local. */
int shard_sample_body_surface(const shard_scene *scene, int b, double **pts, size_t *n, shard_error *err);
/* A surface mesh's vertices (a cloth's: its particles, in file order) are split into "planes" of this many for
 * the distributed start-up; every rank holds all of them as its ghost layer (a mesh is irregular). */
#define SHARD_SAMPLE_SURFACE_BLOCK 1024

/* Vertex (i, j) of a grid shape (a cloth's): corner + i/n_u u + j/n_v v.  Its global id is the body's first
 * plus j (n_u + 1) + i: a grid's "planes" are its rows of vertices. Local. */
void shard_sample_grid_vertex(const shard_shape *g, int64_t i, int64_t j, double X[3]);
/* The error of a body that samples to no particle (SHARD_EXIT_INPUT): at its first notch when its notches took
 * every particle, else at its shape (a spacing too coarse for it). */
int shard_sample_empty_body(const shard_scene *scene, int b, shard_error *err);
/* Initial velocity and constraint flags of a particle of body b at rest position X, c the centre of the body's
 * particles. Local. */
void shard_sample_motion(const shard_body_def *b, const double c[3], const double X[3], double v[3], double vpres[3],
                         uint32_t *flags);
/* The constraints of body b at time t for a particle at rest position X and current position x: sets
 * SHARD_PF_PRESCRIBED in *flags (clearing it when none holds the particle; other bits stay) and vpres from the
 * last constraint in file order that holds it at t (fixed regions before prescribed ones): its velocity plus
 * its spin about its moving centre (spin x (x - center - velocity (t - start))). Local. */
void shard_sample_constraints(const shard_body_def *b, const double X[3], const double x[3], double t, double vpres[3],
                              uint32_t *flags);
/* The wall rule (solid.h): 1 when the particle at rest position X is held for the whole run by a region that
 * does not turn (the last constraint holding it has no time window and no spin), and then in o the offset from X
 * to the nearest point of that region's surface; 0 (o = 0) otherwise. Local. */
int shard_sample_wall(const shard_body_def *b, const double X[3], double o[3]);
/* Whether some fixed or prescribed region of body b is in force at time t (whether or not it holds a particle).
 * Local. */
int shard_sample_holds_at(const shard_body_def *b, double t);
/* Whether some constraint of body b has a time window or a spin (then the driver re-applies them at every
 * step). */
int shard_sample_constraints_timed(const shard_body_def *b);
/* Notches: their number in the scene; and the error for the first notch (in body order) whose count of cut
 * bonds cut[] is zero (it misses its body), or 0. */
int shard_sample_n_notches(const shard_scene *scene);
int shard_sample_notches_missed(const shard_scene *scene, const int64_t *cut, shard_error *err);

/* Distributed sampling (top of this file). */
typedef struct shard_sample_lattice {
    double lo[3];           /* the lattice origin: the shape's bounding-box minimum */
    int64_t dim[3];         /* lattice points per axis */
    double volume;          /* the shape's volume, m^3 (the size checks' estimate) */
    const shard_mesh *mesh; /* a mesh body's mesh (the scene's: loaded by every rank before sampling) */
} shard_sample_lattice;

typedef struct shard_sample_plan {
    int n_bodies;
    shard_sample_lattice *body;
    int64_t *plane0; /* n_bodies + 1: the global number of each body's first plane; plane0[n_bodies] = T */
} shard_sample_plan;

/* Local: every body's lattice (meshes read and checked), with the size checks for `ranks` ranks.  0 or
 * SHARD_EXIT_INPUT (file, line and key). */
int shard_sample_plan_make(const shard_scene *scene, int ranks, shard_sample_plan *plan, shard_error *err);
void shard_sample_plan_free(shard_sample_plan *plan);
/* The first plane of rank `rank` (rank = ranks: T). */
int64_t shard_sample_rank_first_plane(const shard_sample_plan *plan, int rank, int ranks);

/* What one rank sampled: the points of its planes and of their ghost layers, body by body in lattice order
 * (so in global-id order), each with its body and global plane number. */
typedef struct shard_sample_share {
    size_t n;
    double *X;                      /* 3n rest positions */
    int32_t *body;                  /* n */
    int64_t *plane;                 /* n */
    int64_t *gid;                   /* n, once shard_sample_share_ids has run */
    int64_t first_plane, end_plane; /* the rank's own planes */
    int64_t *count;                 /* end_plane - first_plane: the points of each own plane */
    int64_t *body_start;            /* n_bodies + 1 offsets of each body's points */
} shard_sample_share;

/* Local: samples the planes of `rank` and their ghost layers (h[b]: body b's bond radius). */
void shard_sample_share_points(const shard_scene *scene, const shard_sample_plan *plan, const double *h, int rank,
                               int ranks, shard_sample_share *sh);
/* Local: whether point i lies in one of the rank's own planes. */
int shard_sample_share_own(const shard_sample_share *sh, size_t i);
/* Local: global ids from every plane's count summed over the ranks (T entries). */
void shard_sample_share_ids(const shard_sample_plan *plan, const int64_t *plane_count, shard_sample_share *sh);
/* Local: the reference bonds of the held points (rows of the own points are complete; entries are indices
 * into the points), notches cut; cut[] (shard_sample_n_notches entries, zeroed by the caller) gets the bonds
 * of own points each notch cut. */
void shard_sample_share_bonds(const shard_scene *scene, const double *h, const shard_sample_share *sh, shard_csr *bonds,
                              int64_t *cut);
void shard_sample_share_free(shard_sample_share *sh);

/* Lattice points inside the closed mesh.  The lattice is the one every shape uses (above):
 * p = origin + (i + 1/2, j + 1/2, k + 1/2) * spacing for i, j, k >= 0, with origin = the mesh's bounding-box
 * minimum, up to the bounding-box maximum.  Points are returned in k-major, then j, then i order (x fastest),
 * in a newly allocated array of 3 * (*n) doubles (caller frees).  A point is inside when a ray from it
 * along +x crosses the surface an odd number of times.  Local. */
void shard_sample_mesh(const shard_mesh *mesh, double spacing, double **points, size_t *n);
/* The same for the lattice planes k_first <= k < k_end only (the points of those planes, bit for bit as
 * shard_sample_mesh gives them). Local. */
void shard_sample_mesh_planes(const shard_mesh *mesh, double spacing, int64_t k_first, int64_t k_end, double **points,
                              size_t *n);

#endif
