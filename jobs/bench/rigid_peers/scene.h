/* The two rigid-body benchmark scenes ("pyramid", "pour") and the figures reported for them, shared by the
 * single-process engine programs (ode_bench.c, bullet_bench.cpp) so that both build the same bodies and measure
 * them the same way.  This file owns the scene layout (cube centres and orientations, static planes), the
 * command line, the geometric measurements (from poses alone: vertices below the floor or beyond the walls, how far
 * a pyramid cube sank, how deep two cubes overlap, drift, kinetic energy, cubes that left the container) and the
 * key=value / CSV report.  The
 * engines own everything physical: collision detection, the contact solver, integration, and the contact points
 * whose depth they report through peer_figures_contact().
 *
 * Units are SI.  Every body is a cube of side PEER_CUBE_SIDE, density PEER_DENSITY (mass 1 kg), friction
 * coefficient PEER_FRICTION against everything, restitution 0, gravity (0, 0, PEER_GRAVITY_Z).
 *
 * Poses are passed as arrays over the cubes: centres x[3*i + k], rotation matrices R[9*i + 3*r + c] (row r, column
 * c: world = R * body), linear velocities v[3*i + k], angular velocities w[3*i + k] (world frame). */
#ifndef PEER_SCENE_H
#define PEER_SCENE_H

#ifdef __cplusplus
extern "C" {
#endif

#define PEER_CUBE_SIDE 0.1  /* m */
#define PEER_DENSITY 1000.0 /* kg/m^3 */
#define PEER_CUBE_MASS (PEER_DENSITY * PEER_CUBE_SIDE * PEER_CUBE_SIDE * PEER_CUBE_SIDE)
/* Moment of inertia of a solid cube about any axis through its centre: m s^2 / 6 (the tensor is isotropic, so
 * the world-frame tensor is the same scalar whatever the orientation). */
#define PEER_CUBE_INERTIA (PEER_CUBE_MASS * PEER_CUBE_SIDE * PEER_CUBE_SIDE / 6.0)
#define PEER_FRICTION 0.5
#define PEER_GRAVITY_Z (-9.81)

/* pyramid: row k = 0..ROWS-1 holds ROWS-k cubes at x = (j - (ROWS-k-1)/2) PEER_PYRAMID_PITCH, y = 0,
 * z = side/2 + side k: resting exactly on each other with 5 mm gaps in a row. */
#define PEER_PYRAMID_PITCH 0.105
#define PEER_PYRAMID_ROWS 15
#define PEER_PYRAMID_T 10.0
/* pour: cube i = ix + g iy + g^2 iz of a g x g x g grid (g^3 >= N, g = 10 for N = 1000) with spacing
 * PEER_POUR_SPACING, centred on x = y = 0, lowest layer at z = PEER_POUR_Z0, rotated about (1, 2, 3)/|(1, 2, 3)| by
 * tilt ((7919 i) mod 1000) / 1000 rad and spinning about the same axis at spin ((7919 i) mod 1000) / 1000 rad/s,
 * inside a box of a floor (z = 0) and four walls (x, y = +-wall).  Options tilt= (rad, default PEER_POUR_TILT) and
 * spin= (rad/s, default PEER_POUR_SPIN); a code whose boxes cannot start turned (Shard's box shape is axis-aligned)
 * is compared with tilt=0 and a spin instead, which breaks the grid's symmetry in the air.
 * The default wall, 0.8 m: the 10 x 10 layers at 0.15 m span +-0.675 m in x and y, +-0.743 m to the tilted cubes'
 * outer corners, so walls at +-0.6 m would start the outer cubes 0.14 m inside the walls. */
#define PEER_POUR_SPACING 0.15
#define PEER_POUR_Z0 0.3
#define PEER_POUR_N 1000
#define PEER_POUR_T 2.0
#define PEER_POUR_WALL 0.8
#define PEER_POUR_TILT 0.3 /* rad */
#define PEER_POUR_SPIN 0.0 /* rad/s */

#define PEER_DT 1e-3
#define PEER_ITERATIONS 50
#define PEER_MAX_PLANES 5
#define PEER_MAX_OPTIONS 8

typedef enum peer_scene_kind { PEER_SCENE_PYRAMID, PEER_SCENE_POUR } peer_scene_kind;

/* A static half-space boundary: points with n . x < d are inside the solid; n is a unit vector pointing into the
 * free space (the ODE and Bullet plane conventions). */
typedef struct peer_plane {
    double n[3];
    double d;
} peer_plane;

typedef struct peer_scene {
    peer_scene_kind kind;
    const char *name;   /* "pyramid" or "pour" */
    int size;           /* ROWS (pyramid) or N (pour) */
    double t_end;       /* s */
    double dt;          /* s */
    int iterations;     /* contact-solver iterations per step */
    long steps;         /* round(t_end / dt) */
    double wall;        /* pour: half width of the container (m); 0 for the pyramid */
    int count;          /* cubes */
    double *x0;         /* 3 count: initial centres */
    double *q0;         /* 4 count: initial orientations as unit quaternions (w, x, y, z) */
    double *w0;         /* 3 count: initial angular velocities (rad/s, world frame) */
    double tilt;        /* pour: largest initial tilt (rad) */
    double spin;        /* pour: largest initial spin (rad/s) */
    int sample;         /* the poses are measured after every sample-th step and after the last (option sample=) */
    int plane_count;
    peer_plane planes[PEER_MAX_PLANES];
    /* key=value arguments after the five positional ones: engine options, read with peer_scene_option */
    int option_count;
    const char *option_key[PEER_MAX_OPTIONS];
    const char *option_value[PEER_MAX_OPTIONS];
    int option_used[PEER_MAX_OPTIONS];
} peer_scene;

/* What is measured while the run goes; peer_figures_init zeroes it. */
typedef struct peer_figures {
    double depth_max;        /* m: largest penetration depth of any contact point the engine gave its solver */
    double floor_max;        /* m: largest depth of any cube vertex below z = 0 */
    double wall_max;         /* m: pour: largest distance of any cube vertex beyond a wall */
    double sink_max;         /* m: pyramid: largest drop of any cube's lowest vertex below its initial bottom */
    double box_max;          /* m: largest overlap of two cubes from their poses (separating axes: the smallest
                              * overlap of their projections on the 15 axes, when all overlap) */
    long observed;           /* poses measured (peer_figures_observe calls that measured) */
    long contacts;           /* contact points given to the solver at the last step */
    long contacts_touching;  /* of those, with distance <= 0 (touching or penetrating) */
    long steps;              /* steps done */
    double engine_s;         /* s: wall time inside the engine's step (collision detection, solver, integration) */
    double measure_s;        /* s: wall time of the measurements between steps */
    long diverged_step;      /* first step after which a pose was not finite; -1 when none */
} peer_figures;

/* Parses "PROGRAM SCENE SIZE T DT ITERATIONS [key=value ...]" ("-" or nothing keeps a default) and builds the
 * scene; the options wall=, tilt=, spin= (pour) and sample= are the scene's, the others the engine's.  On a usage
 * error prints the message and the usage to stderr and returns non-zero.  The scene owns x0, q0 and w0 (freed by
 * peer_scene_destroy); the option strings point into argv. */
int peer_scene_parse(int argc, char **argv, const char *engine_help, peer_scene *scene);
void peer_scene_destroy(peer_scene *scene);

/* The value of engine option KEY (DEFAULT_VALUE when not given); marks it as used.  Exits with a message when
 * the value is not a number. */
double peer_scene_option(peer_scene *scene, const char *key, double default_value);
/* Non-zero (after a message on stderr) when an option was given that no peer_scene_option call read. */
int peer_scene_unused_options(const peer_scene *scene);

/* The initial rotation matrix of cube I (row-major, 9 values) from its quaternion. */
void peer_scene_rotation(const peer_scene *scene, int i, double R[9]);

void peer_figures_init(peer_figures *fig);
/* Starts a step: the contact counts are those of the step to come (the last step's when the run ends). */
void peer_figures_step_begin(peer_figures *fig);
/* A contact point of the solver's current step with signed distance DISTANCE (m, negative = penetrating). */
void peer_figures_contact(peer_figures *fig, double distance);
/* Non-zero when the poses after the step just counted in fig->steps are to be measured: every scene->sample-th
 * step and the last.  The engines gather the poses only then. */
int peer_figures_due(const peer_figures *fig, const peer_scene *scene);
/* The poses after a step: updates floor_max, wall_max, sink_max, box_max; returns non-zero when a value is not
 * finite (and records the step in diverged_step). */
int peer_figures_observe(peer_figures *fig, const peer_scene *scene, const double *x, const double *R);

/* Seconds of a monotonic clock. */
double peer_clock(void);

/* Prints the settings every engine shares, as key=value lines. */
void peer_report_scene(const peer_scene *scene, const char *engine, const char *version);
/* Prints the figures as key=value lines, then the CSV header (csv_columns=...) and the CSV row (csv=...), from the
 * final poses and velocities. */
void peer_report_figures(const peer_scene *scene, const peer_figures *fig, const char *engine, const char *version,
                         const double *x, const double *R, const double *v, const double *w);

#ifdef __cplusplus
}
#endif

#endif
