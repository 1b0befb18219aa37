/* Run: the driver.  A simulation object built from a scene, stepped, reported on (src/driver/).
 *
 * The driver owns the order of one time step (docs/architecture.md) and the start-up sequence: read the scene
 * on rank 0 and broadcast its text, parse it everywhere, give each body its matter module (matter.h), sample
 * and bond it on rank 0, partition and distribute, then let each module precompute.  It knows no physics: it
 * loops over the matter table and the force table.  Between phases it calls decomposition/ for exchanges and
 * reductions; it never calls MPI itself.  Tests build several simulations in one process.
 */
#ifndef SHARD_RUN_H
#define SHARD_RUN_H

#ifndef SHARD_LAYER_DRIVER
#error "shard/run.h is a driver header: only its layer and the layers above it (the CLI) include it"
#endif

#include "shard/comm.h"
#include "shard/fields.h"
#include "shard/fragment.h"
#include "shard/matter.h"
#include "shard/particles.h"
#include "shard/scene.h"

/* Command-line overrides of the scene's run section (negative / NULL = not given). */
typedef struct shard_overrides {
    long steps;
    double until;
    double dt;
    const char *out_dir; /* `--out DIR`: every folder of the run (run.output_dir, output.dir, checkpoint.dir) */
    const char *restart; /* checkpoint to restart from (`--restart FILE`) */
    int n_catalyst;      /* in-situ scripts from the command line (`--catalyst FILE`, repeatable) */
    const char *catalyst[8];
    long catalyst_every; /* steps between their runs (`--catalyst-every N`, default 1) */
} shard_overrides;

shard_overrides shard_default_overrides(void);

typedef struct shard_sim shard_sim;

/* The tables a simulation runs with: the matter modules and the common force terms.  NULL tables (or a NULL
 * pointer to this struct) mean this build's (shard_matter_table, shard_force_table); tests add modules of
 * their own this way. */
typedef struct shard_sim_tables {
    const shard_matter *const *modules;
    int n_modules;
    const shard_force_term *const *terms;
    int n_terms;
} shard_sim_tables;

/* Collective.  Builds a simulation from the scene text (rank 0's copy; other ranks may pass NULL text) read
 * from `path`.  On bad input returns NULL with the same *err on every rank. */
shard_sim *shard_sim_create(shard_comm *c, const char *path, const char *text, size_t len, const shard_overrides *ov,
                            shard_error *err);
/* The same with tables of the caller's (NULL: this build's). */
shard_sim *shard_sim_create_with(shard_comm *c, const char *path, const char *text, size_t len,
                                 const shard_overrides *ov, const shard_sim_tables *tables, shard_error *err);
/* Collective: reads the scene file on rank 0 and calls shard_sim_create.  With ov->restart the state comes from
 * that checkpoint instead (validated first; repartitioned for the current rank count) and the run continues at
 * its step: `path` must then name a file with exactly the scene text stored in the checkpoint, or be NULL to
 * use that stored text.  A bad checkpoint returns NULL with the same *err (SHARD_EXIT_INPUT, "FILE: what")
 * on every rank before anything is written. */
shard_sim *shard_sim_open(shard_comm *c, const char *path, const shard_overrides *ov, shard_error *err);
shard_sim *shard_sim_open_with(shard_comm *c, const char *path, const shard_overrides *ov,
                               const shard_sim_tables *tables, shard_error *err);

/* Collective: advances one step. */
void shard_sim_step(shard_sim *s);
/* Collective: advances to the end of the run, printing progress on rank 0 unless quiet. */
void shard_sim_run(shard_sim *s, int quiet);
/* Collective: the state hash (same value on every rank). */
uint64_t shard_sim_hash(shard_sim *s);
/* Collective: the end-of-run table on rank 0's stdout. */
void shard_sim_report(shard_sim *s);
/* Collective: rank 0 prints the scene summary (`shard check`). */
void shard_sim_summary(shard_sim *s);

typedef struct shard_diag {
    double kinetic, elastic; /* J */
    double momentum[3];      /* kg m/s */
    double max_speed;        /* m/s */
    int64_t contacts;        /* active particle-particle + obstacle contacts at the last force evaluation */
    int64_t inverted;        /* particles turned inside out (solid: det J <= 0) */
    int64_t inverted_first;  /* the smallest global id among them (-1: none), its body and position */
    int inverted_body;
    double inverted_x[3];
    int64_t broken_bonds; /* bonds broken so far (0 when no body can break) */
} shard_diag;
/* Collective: the scene's `relax` stage (dynamic relaxation or conjugate gradients to static equilibrium,
 * src/driver/relax.c), once, before the first step of a run that did not restart; shard_sim_run calls it.
 * Prints its progress on rank 0 unless quiet (a line every run.diagnostics_every steps).  Returns 0 (also
 * without a relax section), or SHARD_EXIT_RUNTIME with the same *err on every rank when it did not converge
 * within relax.max_steps. */
int shard_sim_relax(shard_sim *s, int quiet, shard_error *err);
/* Steps the relax stage took (-1: none ran) and its final unbalanced force over its value at the start. */
long shard_sim_relax_steps(const shard_sim *s, double *ratio);

/* Collective: global diagnostics.  Every sum is exact (shard_comm_xsum), so the figures have the same bits on
 * any number of ranks. */
shard_diag shard_sim_diagnostics(shard_sim *s);
/* Collective: the fragment analysis at the current step (fragment.h; made once per step), or NULL when no
 * body of the run can break.  The fragments this rank holds are in *frags (n_frags of them, by label; may be
 * NULL). */
const shard_fragment_stats *shard_sim_fragment_stats(shard_sim *s, const shard_fragment **frags, size_t *n_frags);

/* Collective: writes an output file (scene `output` section) / a checkpoint (`checkpoint` section) of the
 * current state now.  The run loop calls them on their intervals; neither changes the state.  Returns 0, or
 * the same error on every rank (SHARD_EXIT_IO); 0 without writing when the scene has no such section. */
int shard_sim_write_output(shard_sim *s, shard_error *err);
int shard_sim_write_checkpoint(shard_sim *s, shard_error *err);
/* Collective: the columns the next output would write for this rank's owned particles at the current state
 * (the scene's field selection; arrays valid until the next call or step).  Returns the count (<= max). */
int shard_sim_output_columns(shard_sim *s, shard_column *cols, int max);
/* Local: the path of the last checkpoint written ("" before the first). */
const char *shard_sim_last_checkpoint(const shard_sim *s);

const shard_particles *shard_sim_particles(const shard_sim *s);
/* The surfaces' triangles this rank lists (each triangle of the run on exactly one rank) as the global ids of
 * their vertices, 3 per triangle, in a new array (caller frees); returns their number. Local. */
long shard_sim_surface_triangles(shard_sim *s, int64_t **gids);
/* The block of the matter module of `kind` on this rank, or NULL when the run has no such module. Local. */
const shard_block *shard_sim_block(const shard_sim *s, const char *kind);
/* The frames of the bodies that move as wholes (rigid bodies, matter.h) into out (room for max >= the scene's
 * body count), in scene order; returns how many.  The same on every rank. Local. */
size_t shard_sim_frames(shard_sim *s, shard_frame *out, size_t max);
/* The unbroken reference bonds of the owned particles (local partner indices; all of them while none is
 * broken): what the physics sees. Local. */
const shard_csr *shard_sim_bonds(const shard_sim *s);
const shard_scene *shard_sim_scene(const shard_sim *s);
double shard_sim_time(const shard_sim *s);
double shard_sim_dt(const shard_sim *s);
long shard_sim_step_index(const shard_sim *s);
long shard_sim_total_steps(const shard_sim *s);
int64_t shard_sim_total_particles(const shard_sim *s);

/* Collective; NULL-safe; nulls the pointer. */
void shard_sim_destroy(shard_sim **s);

#endif
