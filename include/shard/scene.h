/* Scene: the in-memory form of a YAML scene file, and its parser.
 *
 * The scene module owns parsing and validation of everything that can be checked from the text alone (syntax,
 * unknown keys, types, ranges, references between sections).  It does not read meshes or sample particles
 * (sample.h, mesh.h) and knows nothing about ranks: every rank parses the same text and so reaches the same
 * verdict.  Every value keeps the file location it came from so later stages (sampling, setup) can report
 * errors with file, line and key.  docs/scenes.md lists every key with its unit, default and range.
 */
#ifndef SHARD_SCENE_H
#define SHARD_SCENE_H

#ifndef SHARD_LAYER_PHYSICS
#error "shard/scene.h is a physics header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/fields.h"
#include "shard/geometry.h"
#include "shard/interval.h"

/* How a material's bonds break (fracture.h): never, at a critical stretch (given directly or from a critical
 * energy release rate), or at a tensile strength (Rankine, at the bond). */
enum { SHARD_FRACTURE_NONE = 0, SHARD_FRACTURE_STRETCH = 1, SHARD_FRACTURE_ENERGY = 2, SHARD_FRACTURE_RANKINE = 3 };
/* The stabilisation a breaking material gets unless it gives its own: bond rules read single bonds, which the
 * correspondence model's zero-energy modes stretch unevenly (docs/validation.md, fracture). */
#define SHARD_FRACTURE_STABILIZATION 0.1
typedef struct shard_fracture_def {
    int criterion;          /* SHARD_FRACTURE_*; NONE without a `fracture` section */
    double value;           /* s_c (1), G_c (J/m^2) or sigma_t (Pa), > 0 */
    double weibull_modulus; /* m >= 0 (0: every bond has the same threshold) */
    long weibull_seed;      /* >= 0 */
    shard_src_loc loc;      /* key "materials.<name>.fracture" */
} shard_fracture_def;

typedef struct shard_material {
    char name[SHARD_NAME_MAX];
    double density;                  /* kg/m^3, > 0 */
    double E;                        /* Young's modulus, Pa, > 0 */
    double nu;                       /* Poisson ratio, in (-1, 0.5) */
    double volume_stiffness;         /* k_v, Pa, >= 0 (default 0) */
    double volume_barrier;           /* inversion barrier in units of the bulk modulus, >= 0 (default 1; 0: none) */
    double stabilization;            /* bond-level stabilisation G_s of the zero-energy modes, in [0, 1] (solid.h);
                                      * default 0, or SHARD_FRACTURE_STABILIZATION for a material with a fracture rule */
    shard_src_loc stabilization_loc; /* line 0: not given */
    double damping;                  /* stiffness-proportional (Rayleigh) damping time, s, >= 0 (default 0) */
    double mass_damping;             /* mass-proportional (Rayleigh alpha) damping rate, 1/s, >= 0 (default 0) */
    double yield;                    /* plastic yield, norm of elastic Green strain, >= 0 (default 0) */
    double creep;                    /* plastic creep rate, 1/s, >= 0 (default 0: no plasticity) */
    double max_plastic;              /* cap on the norm of the plastic strain, >= 0 (default 0: no plasticity) */
    double contact_stiffness;        /* N/m, > 0, or 0 for "auto" (E * spacing of the body) */
    double contact_damping;          /* fraction of critical damping of a contact, in [0, 1] (default 0.1) */
    double friction;                 /* Coulomb coefficient, >= 0 (default 0.5) */
    int contact_surface; /* SHARD_SURFACE_PARTICLES (default: spheres) or SHARD_SURFACE_SMOOTH (contact.h) */
    double restitution;  /* coefficient of restitution of rigid-body collisions, in [0, 1] (default 0) */
    shard_fracture_def fracture;
    shard_src_loc loc; /* the material's node, key "materials.<name>" */
} shard_material;

/* A region of a body whose particles have a prescribed velocity (0,0,0 = fixed), for the whole run or over a time
 * window. */
typedef struct shard_constraint {
    shard_shape region;
    double velocity[3];
    double spin[3];    /* prescribed: an angular velocity, rad/s (default 0): the held particles move with
                        * velocity + spin x (x - c(t)), c(t) = center + velocity (t - start) */
    double center[3];  /* m: a point of the spin's axis at the window's start (default the origin) */
    double start, end; /* prescribed: active while start <= t < end, s (end <= start: from start on, for
                        * ever; both 0 by default: the whole run); fixed regions: always */
    shard_src_loc loc; /* key "bodies[i].fixed[k]" or "bodies[i].prescribed[k]" */
} shard_constraint;

/* A pre-crack or notch of a body: an axis-aligned box, which may be flat (min = max along one axis: a planar
 * crack).  No reference bond whose segment meets the closed box is created, and particles strictly inside it
 * are not sampled. */
typedef struct shard_notch {
    double min[3], max[3];
    shard_src_loc loc; /* key "bodies[i].notches[k]" */
} shard_notch;

/* A surface load of a body: the particles whose rest position lies in the region each carry the force
 * stress x spacing^2 (N) from time start on, until time end (end <= start: for ever).  For a region one lattice
 * layer thick along a face, that is the traction `stress` (Pa) on the face. */
typedef struct shard_traction {
    shard_shape region;
    double stress[3];  /* Pa */
    double start, end; /* s */
    shard_src_loc loc; /* key "bodies[i].tractions[k]" */
} shard_traction;

#define SHARD_KIND_MAX 32
/* The most kinds of matter one scene's table holds (a run's per-module arrays are this long; a checkpoint has a
 * section per module, so SHARD_CHECKPOINT_MAX_SECTIONS must be at least this). */
#define SHARD_MATTER_MAX 8

/* How a body's shape becomes particles (sample.h): the simple-cubic lattice, or the lattice with its surface
 * particles moved onto the true surface. */
enum { SHARD_SAMPLING_LATTICE = 0, SHARD_SAMPLING_SURFACE = 1 };

/* How a material's particles meet those of another body (contact.h). */
enum { SHARD_SURFACE_PARTICLES = 0, SHARD_SURFACE_SMOOTH = 1 };
typedef struct shard_body_def {
    char name[SHARD_NAME_MAX];
    char kind[SHARD_KIND_MAX]; /* kind of matter (default: the first row of the scene's matter table, "solid") */
    shard_src_loc kind_loc;
    int module;     /* that row: scene->modules[module] */
    int surface;    /* its kind's bodies are surfaces (SHARD_MATTER_SURFACE): a grid, or a mesh whose vertices are
                     * the particles (an open or closed triangle mesh, not a solid to fill) */
    void *kind_def; /* the keys of its kind (the module's keys->body table), read into the module's struct
                     * (keys->body_bytes, owned; NULL when the kind has none) */
    int material;   /* index into scene->materials */
    shard_shape shape;
    double spacing; /* lattice spacing, m, > 0 (a grid: its shorter cell edge, from its divisions) */
    shard_src_loc spacing_loc;
    int sampling;               /* SHARD_SAMPLING_LATTICE (default) or SHARD_SAMPLING_SURFACE (sample.h) */
    double velocity[3];         /* initial velocity, m/s */
    double angular_velocity[3]; /* initial angular velocity about the centre of the sampled particles (a rigid
                                 * body: about its centre of mass), rad/s */
    int n_constraints;
    shard_constraint *constraints; /* fixed regions (velocity 0) and prescribed-velocity regions, in file order */
    int n_notches;
    shard_notch *notches;
    int n_tractions;
    shard_traction *tractions; /* surface loads, in file order */ /* pre-cracks and notches: no bond crosses one, no
                                                                     particle lies inside one */
    shard_src_loc loc;                                            /* key "bodies[i]" */
} shard_body_def;

typedef struct shard_run_def {
    double gravity[3];               /* m/s^2 (default 0 0 -9.81) */
    double end_time;                 /* s; > 0 when given */
    long steps;                      /* > 0 when given; exactly one of end_time / steps (steps wins if both: error) */
    double dt;                       /* s; 0 = auto (CFL) */
    double dt_safety;                /* CFL safety factor in (0, 1] (default 0.4) */
    long diagnostics_every;          /* steps between diagnostic lines, >= 0 (default 0: only at the end) */
    char output_dir[SHARD_PATH_MAX]; /* default "shard-out" */
    double skin;                     /* contact Verlet skin in units of the smallest spacing, > 0 (default 0.5) */
    double svd_threshold; /* relative singular-value cut for the moment-matrix pseudo-inverse (default 1e-3) */
    shard_src_loc steps_loc, end_time_loc, dt_loc;
} shard_run_def;

typedef struct shard_output_def {
    int enabled; /* the scene has an `output` section */
    shard_interval interval;
    unsigned fields;          /* bit f per output field f of the scene (shard_output_info, matter.h; default: all) */
    char dir[SHARD_PATH_MAX]; /* "" = run.output_dir */
    shard_src_loc loc;
} shard_output_def;

/* Relaxation to static equilibrium before the dynamic run (the scene's `relax` section): adaptive dynamic
 * relaxation, or nonlinear conjugate gradients on the potential energy (src/driver/relax.c). */
enum { SHARD_RELAX_DYNAMIC = 0, SHARD_RELAX_CG = 1 };
typedef struct shard_relax_def {
    int enabled;      /* the scene has a `relax` section */
    double tolerance; /* stop when |unbalanced force| <= tolerance x its value at the start (default 1e-4) */
    long max_steps;   /* give up (an error) after this many steps (default 100000) */
    double dt_safety; /* the relaxation's CFL safety factor (default 0.9) */
    int method;       /* SHARD_RELAX_DYNAMIC (default) or SHARD_RELAX_CG */
    shard_src_loc loc;
} shard_relax_def;

/* The fragment analysis (fracture.h), run at every output when some body can break. */
typedef struct shard_fragments_def {
    long fit_min; /* smallest fragment (particles) in the power-law fit, >= 1 (default 3) */
    shard_src_loc loc;
} shard_fragments_def;

/* Dynamic load balancing (the scene's `balance` section; src/driver/balance.c): every `every` steps the cost
 * of each rank is measured, and when the largest over the average exceeds `threshold` (or the contact ghosts
 * have grown past `ghost_growth`) the particles are repartitioned (decomposition/balance.c) and migrate
 * (migrate.h).  The partition never changes a result. */
enum { SHARD_BALANCE_RCB = 0, SHARD_BALANCE_HSFC = 1, SHARD_BALANCE_GRAPH = 2 };
enum { SHARD_BALANCE_COST_TIME = 0, SHARD_BALANCE_COST_COUNTS = 1 };
typedef struct shard_balance_def {
    int enabled;         /* the scene has a `balance` section */
    long every;          /* steps between checks, >= 1 (default 100) */
    double threshold;    /* repartition when max / avg cost > threshold, >= 1 (default 1.1; 1: at every check) */
    int method;          /* SHARD_BALANCE_RCB (default), _HSFC or _GRAPH */
    int cost;            /* SHARD_BALANCE_COST_TIME (default) or _COUNTS */
    double ghost_growth; /* also repartition when the most contact ghosts a rank holds pass this factor of
                          * their number after the last partition, >= 1, 0 = never (default 2) */
    shard_src_loc loc;
} shard_balance_def;

typedef struct shard_checkpoint_def {
    int enabled; /* the scene has a `checkpoint` section */
    shard_interval interval;
    long keep;                /* complete checkpoints kept, >= 1 (default 2) */
    char dir[SHARD_PATH_MAX]; /* "" = run.output_dir */
    shard_src_loc loc;
} shard_checkpoint_def;

/* One in-situ script (catalyst: {script: FILE, every: N}, or a sequence of them). */
#define SHARD_CATALYST_MAX 8
typedef struct shard_catalyst_def {
    char script[SHARD_PATH_MAX]; /* resolved against the scene's folder */
    long every;                  /* steps between runs of the script, >= 1 (default 1); step 0 included */
    shard_src_loc loc;
} shard_catalyst_def;

struct shard_matter;

typedef struct shard_scene {
    /* The table of kinds of matter it was read with (matter.h), and each module's top-level section of its own
     * (keys->section: read into keys->section_bytes, defaults when the file has none; NULL for a module without
     * one), by module row. */
    const struct shard_matter *const *modules;
    int n_modules;
    void *sections[SHARD_MATTER_MAX];
    char path[SHARD_PATH_MAX]; /* the scene file as given (used in every message) */
    char dir[SHARD_PATH_MAX];  /* its folder, for relative mesh paths */
    char *text;                /* the whole scene text (owned) */
    size_t text_len;
    shard_run_def run;
    int n_materials;
    shard_material *materials;
    int n_bodies;
    shard_body_def *bodies;
    int n_obstacles;
    shard_obstacle_def *obstacles;
    shard_output_def output;
    shard_checkpoint_def checkpoint;
    shard_relax_def relax;
    shard_fragments_def fragments;
    shard_balance_def balance;
    int n_catalyst;
    shard_catalyst_def catalyst[SHARD_CATALYST_MAX];
    shard_src_loc catalyst_loc; /* the `catalyst` section, key "catalyst" (when n_catalyst > 0) */
} shard_scene;

/* Parses and validates `text` (the contents of `path`) with this build's table of kinds of matter (matter.h).
 * On success fills *scene (which takes a copy of the text) and returns 0; on failure frees what it built, fills
 * err with a "file:line:col: key: message" text and returns SHARD_EXIT_INPUT.  Local (no MPI); every rank that
 * calls it on the same text gets the same result. */
int shard_scene_parse(const char *path, const char *text, size_t len, shard_scene *scene, shard_error *err);
/* The same with a table of one's own (n <= SHARD_MATTER_MAX rows, kept by the scene: static storage or outliving
 * it). */
int shard_scene_parse_with(const char *path, const char *text, size_t len, const struct shard_matter *const *modules,
                           int n, shard_scene *scene, shard_error *err);

/* Frees everything the scene owns; NULL-safe; leaves *scene zeroed. */
void shard_scene_free(shard_scene *scene);

#endif
