/* In-situ visualisation: hands each rank's particles to ParaView Catalyst Python scripts while the run goes on.
 *
 * This module owns the link to Catalyst: io/insitu.c (this interface; it loads the Catalyst module on demand),
 * io/catalyst_adaptor.cxx (the module libshard_catalyst.so: the only C++ file of the project and the only one that
 * sees VTK), and io/insitu_off.c, the stand-in built when Shard is configured without ParaView.  The module is
 * loaded with dlopen only when a run asks for a script, so a Catalyst build costs nothing (no ParaView library
 * loaded, no memory, no start-up time) in runs without one.  It computes nothing: the driver fills
 * shard_insitu_fields with arrays of its owned particles (derived fields such as stress and von Mises stress
 * computed by the driver, only on the steps where shard_insitu_wants says yes) and calls shard_insitu_execute.
 * Nothing here includes VTK or MPI, so C code can use it freely.
 *
 * What the scripts see (docs/insitu.md): one Catalyst channel named "input", a vtkPartitionedDataSetCollection
 * whose data assembly names its blocks.  Block "particles" (index 0) holds one vtkPolyData partition per rank:
 * the rank's owned particles as points with one vertex cell each, and one point array per column of
 * shard_insitu_fields under the names of the HDF5 output, plus "rank" (the owner), and in its field data one
 * array per global of shard_insitu_fields (figures of the whole run, such as the fragment statistics, the same on
 * every rank's partition).  When the scene has rigid bodies, block "frames" (index 1) holds their frames: one
 * point per body at its centre of mass (on rank 0's partition; the others are empty), with the point arrays of
 * the HDF5 output's /frames group (orientation, velocity, angular_velocity, contact_force, contact_torque, axis_1
 * to axis_3 for oriented glyphs, body).  When the scene has cloth, block "surfaces" (index 2, or 1 without rigid
 * bodies) holds its triangles: one vtkPolyData partition per rank with the triangles that rank lists and their
 * vertices as points (global_id as GlobalIds, velocity, body, rank).  Scripts should select blocks by name, not
 * by index.
 *
 * Errors: a script that is missing, unreadable, not valid Python, or that raises while it runs ends the run
 * through the driver's global error path with SHARD_EXIT_INPUT and the message
 *   catalyst script 'PATH': <reason>
 * which is the same on every rank (the lowest failing rank's reason wins), so rank 0 prints it once.
 */
#ifndef SHARD_INSITU_H
#define SHARD_INSITU_H

#ifndef SHARD_LAYER_IO
#error "shard/insitu.h is an io header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/base.h"
#include "shard/fields.h"

#include <stddef.h>
#include <stdint.h>

/* shard/comm.h's handle, declared here rather than included: the Catalyst module (C++) reads this header too. */
typedef struct shard_comm shard_comm;

/* The name scripts use for the simulation's data: `PVTrivialProducer(registrationName="input")`. */
#define SHARD_INSITU_CHANNEL "input"

typedef struct shard_insitu shard_insitu;

/* One global array for the field data of block "particles": n values (n may be 0) that are the same on every
 * rank, such as a histogram of the whole run or a single figure (n = 1).  Copied at each execution: the caller's
 * memory may go right after shard_insitu_execute. */
typedef struct shard_insitu_global {
    const char *name; /* unique among the globals; not a point array's name */
    size_t n;
    const double *values; /* n values (may be NULL when n == 0) */
} shard_insitu_global;

/* One rank's owned particles for one output step: the point coordinates and the columns of the output fields
 * (shard/fields.h; the same list, in the same order, on every rank).  A column whose data is NULL on some rank
 * with particles is left out of the dataset on every rank.  Arrays are used in place, without a copy, for the
 * duration of shard_insitu_execute only.  A "global_id" column becomes the points' GlobalIds; when no "rank"
 * column is given the adaptor adds one.  The globals (the same list and values on every rank) replace those of
 * the previous execution in the field data of every rank's partition; none (n_globals = 0) leaves none there. */
typedef struct shard_insitu_fields {
    size_t n;               /* owned particles on this rank (may be 0) */
    const double *position; /* 3n, current position, m: the point coordinates */
    int n_cols;             /* at most 64 */
    const shard_column *cols;
    int n_globals; /* global field-data arrays (may be 0) */
    const shard_insitu_global *globals;
    /* Block "frames": the frames of the bodies that move as wholes (rigid bodies).  has_frames is the same on
     * every rank (0: no such block); the frames are the same everywhere, so rank 0 passes them (n_frames points
     * at frame_position with the columns frame_cols, copied) and the others pass none. */
    int has_frames;
    size_t n_frames;
    const double *frame_position; /* 3 n_frames */
    int n_frame_cols;             /* at most 16 */
    const shard_column *frame_cols;
    /* Block "surfaces": the triangles of the surfaces (cloth).  has_cells is the same on every rank (0: no such
     * block).  Each rank passes the triangles it lists (every triangle is listed by exactly one rank) as indices
     * into its own cell points: n_cell_points points at cell_position (the rank's owned vertices and the ghost
     * vertices its triangles need, each once), with the columns cell_cols (the same list on every rank, each
     * n_cell_points rows: global_id, velocity, body), used in place, and treated as the particles' columns are
     * (a column whose data is NULL on some rank with cell points is left out everywhere; "global_id" becomes
     * the GlobalIds; "rank", the partition's rank, is added).  A triangle index outside [0, n_cell_points) on
     * any rank makes shard_insitu_execute fail on every rank before the scripts run. */
    int has_cells;
    size_t n_cell_points;
    const double *cell_position; /* 3 n_cell_points */
    size_t n_cells;
    const int64_t *cells; /* 3 n_cells indices into the cell points */
    int n_cell_cols;      /* at most 16 */
    const shard_column *cell_cols;
} shard_insitu_fields;

/* The most scripts one run takes (scene and command line together). */
#define SHARD_INSITU_MAX_SCRIPTS 8

/* Collective.  Starts Catalyst with n_scripts (<= SHARD_INSITU_MAX_SCRIPTS) version-2 ParaView Python scripts
 * (paths as given: the caller resolves them); script k runs on the steps that are multiples of every[k] (>= 1),
 * step 0 included.  out_dir (may be NULL) becomes the scripts' SHARD_CATALYST_OUT, the folder the example
 * scripts write into, unless the environment already sets it.  Checks on every rank that each script exists and
 * is readable, on rank 0 that a .py file compiles, then loads each script with vtkCPPythonPipeline on every rank.
 * Returns NULL with err->code == 0 when n_scripts == 0 (in-situ is off and costs nothing).  On failure returns
 * NULL with the same *err on every rank (SHARD_EXIT_INPUT, "catalyst script 'PATH': <reason>"; without Catalyst
 * built in: "Catalyst is not built into this shard (...)").  One handle per process at a time (ParaView's
 * co-processor is a singleton).  The caller owns the handle. */
shard_insitu *shard_insitu_create(shard_comm *c, int n_scripts, const char *const *scripts, const long *every,
                                  const char *out_dir, shard_error *err);

/* Local, and the same answer on every rank: whether any script runs at `step`.  NULL-safe (0), a few integer
 * operations, so the driver may call it every step and compute derived fields only when it says yes. */
int shard_insitu_wants(const shard_insitu *h, long step);

/* Collective.  Runs the scripts due at `step` (simulated time `time`, s) on the particles in *f.  Returns 0, or
 * SHARD_EXIT_INPUT with the same *err on every rank when a script failed (its Python traceback has been printed
 * once, by the lowest failing rank), or SHARD_EXIT_INTERNAL (same *err everywhere, no script run) when some
 * rank's cloth triangles use points it does not pass.  A no-op returning 0 when h is NULL or no script is due. */
int shard_insitu_execute(shard_insitu *h, long step, double time, const shard_insitu_fields *f, shard_error *err);

/* Collective: finalises the scripts (catalyst_finalize) and Catalyst; NULL-safe; nulls the pointer.  Must come
 * before shard_comm_finalize. */
void shard_insitu_destroy(shard_insitu **h);

/* Local: why this shard cannot run Catalyst scripts ("Catalyst is not built into this shard (...)"), or NULL when
 * it can, so that a scene's scripts are refused where the scene names them.  Static storage. */
const char *shard_insitu_unavailable(void);

/* Local: "on (ParaView 5.11.0)" or "off", for `shard --version`.  Static storage. */
const char *shard_insitu_version(void);

#endif
