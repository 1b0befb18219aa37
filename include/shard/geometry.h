/* Geometry (core): the analytic shapes of bodies and regions, and the obstacles bodies collide with.
 *
 * The module owns the shape and obstacle records (filled by the scene parser), their bounding boxes, the
 * inside test of a shape (used by lattice sampling and by constraint regions) and the signed distance to an
 * obstacle (used by contact), and the exact 2-D orientation predicate.  A mesh shape is its file name, its
 * transform and, once the driver has loaded it (io's mesh reader), its triangles (mesh.h).  Nothing here knows about
 * particles, physics or ranks.
 */
#ifndef SHARD_GEOMETRY_H
#define SHARD_GEOMETRY_H

#include "shard/base.h"

struct shard_mesh;

typedef enum shard_shape_kind {
    SHARD_SHAPE_BOX = 0,
    SHARD_SHAPE_SPHERE,
    SHARD_SHAPE_CYLINDER,
    SHARD_SHAPE_MESH,
    SHARD_SHAPE_GRID, /* a flat surface: a cloth's vertex grid (bodies only, not regions) */
} shard_shape_kind;

/* A solid region of space: a body's shape, or a region for a boundary condition; or a flat grid of vertices
 * (a cloth body's shape). */
typedef struct shard_shape {
    shard_shape_kind kind;
    double min[3], max[3];     /* box: axis-aligned corners, min < max */
    double center[3];          /* sphere */
    double radius;             /* sphere, cylinder (> 0) */
    double p0[3], p1[3];       /* cylinder: centres of the two end caps */
    char file[SHARD_PATH_MAX]; /* mesh: path as resolved (relative paths are taken from the scene's folder) */
    double scale;              /* mesh: uniform scale applied first (default 1) */
    double translate[3];       /* mesh: then this translation (default 0) */
    struct shard_mesh *mesh;   /* mesh: its triangles, transformed, once the driver has loaded the file (mesh_io.h,
                                * shard_mesh_load_shape; owned by the scene), NULL before */
    double u[3], v[3];         /* grid: the two edge vectors of the parallelogram from its corner p0, m */
    long divisions[2];         /* grid: cells along u and along v (>= 1 each): (divisions + 1) vertices per edge */
    shard_src_loc loc;         /* the shape's node, key e.g. "bodies[0].shape" */
    shard_src_loc file_loc;    /* mesh: the file value, key "bodies[0].shape.mesh.file" */
} shard_shape;

typedef enum shard_obstacle_kind {
    SHARD_OBSTACLE_PLANE = 0, /* infinite half-space below the plane; particles stay on the normal's side */
    SHARD_OBSTACLE_SPHERE,    /* solid ball */
    SHARD_OBSTACLE_BOX,       /* solid axis-aligned box */
} shard_obstacle_kind;

typedef struct shard_obstacle_def {
    char name[SHARD_NAME_MAX]; /* optional; "obstacles[i]" when not given */
    shard_obstacle_kind kind;
    double point[3], normal[3]; /* plane (normal normalised by the parser) */
    double center[3], radius;   /* sphere */
    double min[3], max[3];      /* box */
    double velocity[3];         /* prescribed velocity, m/s (default 0: static) */
    double friction;            /* Coulomb coefficient, >= 0 (default 0.5) */
    double stiffness;           /* N/m, 0 = auto (from the touching particle's material) */
    double damping;             /* fraction of critical, in [0, 1] (default 0.1) */
    double restitution;         /* rigid-body collisions: coefficient of restitution, in [0, 1] (default 0) */
    shard_src_loc loc;
} shard_obstacle_def;

/* The scene's word for a kind of shape ("box", "sphere", "cylinder", "mesh", "grid") and of obstacle ("plane",
 * "sphere", "box"), as `shard check` prints them.  Static storage. Local. */
const char *shard_shape_name(shard_shape_kind kind);
const char *shard_obstacle_name(shard_obstacle_kind kind);

/* Inside test for an analytic shape (box, sphere, cylinder; a mesh shape contains nothing here).  Boxes and
 * cylinders are half-open along their axes, so a lattice point on a face shared by two boxes belongs to exactly
 * one of them. Local. */
int shard_shape_contains(const shard_shape *s, const double p[3]);

/* Axis-aligned bounding box of an analytic shape (a mesh shape gives an empty box at the origin). Local. */
void shard_shape_bounds(const shard_shape *s, double lo[3], double hi[3]);

/* Distance from p to the surface of an analytic shape (box, sphere, cylinder), positive inside, and in n the
 * outward unit normal of the surface point nearest p (for a box or cylinder, of the nearest face).  A mesh shape
 * gives 0 and n = 0 (mesh.h has its own). Local. */
double shard_shape_surface(const shard_shape *s, const double p[3], double n[3]);

/* Signed distance from p to the obstacle at time t (negative inside) and the outward unit normal. Local. */
double shard_obstacle_distance(const shard_obstacle_def *o, double t, const double p[3], double n[3]);

/* The exact sign (+1, 0, -1) of orient(a, b, c) = (b - a) x (c - a) for double coordinates: exactness (not only
 * accuracy) makes orient(a, b, c) = -orient(b, a, c) hold bit for bit, which mesh sampling's tie-breaking relies
 * on.  Valid while no product overflows or underflows (coordinates between about 1e-140 and 1e140). Local. */
int shard_geom_orient2d(double ax, double ay, double bx, double by, double cx, double cy);

#endif
