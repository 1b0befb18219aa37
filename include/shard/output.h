/* Output: parallel HDF5 files of the particles at chosen times, and the XDMF index that ParaView opens.
 *
 * The module owns the file layout and the writing; the driver decides when (shard_interval_due) and hands it
 * columns of its owned particles (derived fields such as stress are computed by solid.h, not here).  One HDF5
 * file per output time, DIR/particles_<step>.h5 (step zero-padded to 6 digits), written collectively with the
 * MPI-IO driver: each rank writes its owned particles as one hyperslab per dataset at the exclusive prefix sum
 * of the owned counts of the ranks below it, so rows are in rank order, then increasing global id.
 *
 *   /                    attributes: format = "shard-output", format_version, shard_version, step, time,
 *                        n_particles, n_ranks; dataset /scene (the scene text, attribute path)
 *   /particles/<column>  (N) or (N, k) per column: the output fields of fields.h that the scene selects
 *                        (position and global_id always; stress as (N, 9), the full tensor row by row)
 *   /particles/index     (N) int64: the row of the particle whose global id is g is index[g]
 *   /fragments           when some body can break (fracture.h): one row per fragment (in no particular order;
 *                        sort by `label`): label, count, mass, center (n, 3), momentum (n, 3), ke_translation,
 *                        ke_internal, box_min (n, 3), box_max (n, 3); attributes n_fragments, total_mass,
 *                        largest_mass, largest_label, tau, tau_error, n_fit, fit_min_mass, m0, broken_bonds
 *   /fragments/histogram the mass histogram in octaves of m0: bin_min, bin_max (kg), count, mass, and
 *                        cumulative (the mass fraction in fragments of at least bin_min)
 *   /frames              when the scene has rigid bodies: one row per body, in scene order: body (its index in
 *                        the scene's bodies), index (the row), position (n, 3: centre of mass), orientation
 *                        (n, 4: unit quaternion w, x, y, z, body to world), velocity (n, 3), angular_velocity
 *                        (n, 3), contact_force, contact_torque (n, 3 each: the contact impulses of the last step
 *                        / dt, torque about the centre of mass), axis_1, axis_2, axis_3 (n, 3 each: the body's
 *                        principal axes in the world, for oriented glyphs)
 *   /surfaces/triangles  when the scene has cloth: (n, 3) int64, one triangle per row, its corners as rows of
 *                        /particles (not global ids: the writer translates them through the index), so that a
 *                        reader draws it with /particles/position alone; attribute count = n.  The number of
 *                        triangles may differ between files.  A new group: readers of /particles are
 *                        unaffected, so adding it did not change format_version
 *
 * DIR/particles.xmf is an XDMF 2 temporal collection with one Polyvertex grid per written file, its
 * connectivity /particles/index (vertex cell g = the particle with global id g), HDF paths relative to DIR.
 * ParaView's three readers (XDMFReader, Xdmf3ReaderS/T) read it, every array with the same components (the
 * stress as a full 3x3 Tensor); Xdmf3 needs the .xmf named with a folder part ("./particles.xmf", not
 * "particles.xmf").  Rank 0 adds every complete output to it, so after a crash it lists exactly the outputs that
 * were complete: the run's first output writes it whole (a temporary file and a rename), every later one appends
 * its grid in place, in constant time (io/xdmf.h).  Writing into a folder replaces files of the same names
 * there.  A table marked `points` (the rigid-body frames) gets an index of its own, DIR/<group>.xmf,
 * in the same form: one Polyvertex grid per file at the table's `position`, with its `index` column as the
 * connectivity and every other column as a point attribute.  A table marked `cells` (the cloth) gets DIR/<group>.xmf
 * (DIR/surfaces.xmf) in the same form too, written in the same way: one Triangle grid per file with that table,
 * its connectivity <group>/triangles, over the N points of /particles/position with the point attributes of
 * particles.xmf; each grid gives its own triangle count (after a restart, the earlier run's files that have the
 * table are listed again with the counts read from them; files without it have no grid).
 */
#ifndef SHARD_OUTPUT_H
#define SHARD_OUTPUT_H

#ifndef SHARD_LAYER_IO
#error "shard/output.h is an io header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/comm.h"
#include "shard/particles.h"
#include "shard/fields.h"
#include "shard/interval.h"

/* 3: the groups of frames and surfaces named for what they hold (/frames, /surfaces; were /rigid, /cloth) */
#define SHARD_OUTPUT_FORMAT_VERSION 3

typedef struct shard_output shard_output;

/* Local: an output writer into `dir` (created on the first write, not before: a run that fails at start-up
 * touches nothing).  The scene text and path are stored in every file.  Caller owns the handle. */
shard_output *shard_output_create(const char *dir, const char *scene_path, const char *scene_text, size_t scene_len);

/* Collective: after a restart at `step`, takes the files an earlier run wrote at steps <= step (the due ones
 * under iv, and `step` itself) back into the XDMF index, so the index keeps the whole history.  Rank 0 looks
 * at which files exist; nothing is written. */
void shard_output_resume(shard_output *o, shard_comm *c, const shard_interval *iv, long step, double dt);

/* An attribute of a table's group. */
typedef struct shard_output_attr {
    const char *name;
    int is_int;
    int64_t i;
    double f;
} shard_output_attr;

/* A table written next to /particles: group `group` (created in table order, so "fragments/histogram" may
 * follow "fragments"), n_rows rows of this rank in each column (rows in rank order), attributes. */
typedef struct shard_output_table {
    const char *group;
    size_t n_rows;
    int n_cols;
    const shard_column *cols;
    int n_attrs;
    const shard_output_attr *attrs;
    int points; /* 1: also an XDMF index DIR/<group>.xmf of points (columns "position" and "index" required);
                 * at most one such table, the same columns and global row count at every write */
    int cells;  /* 1: a table of triangles over the particles, with an XDMF index DIR/<group>.xmf: exactly one
                 * column, "triangles", SHARD_TYPE_I64 with 3 components, holding GLOBAL IDS of particles
                 * written in this call (any triangles on any rank, a rank may have none).  The writer
                 * replaces every id by that particle's row in /particles (index[id]) before writing, so the
                 * file holds rows; an id that is out of range or has no row is fatal (SHARD_EXIT_INTERNAL).
                 * At most one such table (not also `points`); its row count may change between writes */
} shard_output_table;

/* Collective: writes DIR/particles_<step>.h5 with the columns (the same list on every rank; one must be
 * "position" (3 doubles) and one "global_id" (int64)) and the tables (the same groups and columns on every
 * rank; may be none), then adds it to the XDMF index on rank 0.  Returns 0, or SHARD_EXIT_IO with the same *err
 * on every rank. */
int shard_output_write(shard_output *o, shard_comm *c, long step, double time, size_t n_owned, int n_cols,
                       const shard_column *cols, int n_tables, const shard_output_table *tables, shard_error *err);

/* Local: the owned particles changed rank (a migration); the next write recomputes each rank's rows and the
 * index.  NULL-safe. */
void shard_output_owners_changed(shard_output *o);

/* Collective: appends rank 0's `rows` (CSV lines, each starting with the step) to DIR/name, which the run's
 * first append creates with `header` (after a restart at step S: keeps the earlier run's lines of steps <= S
 * and drops the rest, and a last row cut short by a killed append, so the file has one history).  The first
 * append of a run writes the file whole (a temporary file and a rename), the later ones append in place.  Returns 0 or
 * SHARD_EXIT_IO with the same *err on every rank. */
int shard_output_csv(shard_output *o, shard_comm *c, const char *name, const char *header, const char *rows,
                     shard_error *err);

/* Local: files written by this process's run so far, raw bytes this rank wrote, seconds this rank spent
 * writing. */
void shard_output_stats(const shard_output *o, long *files, uint64_t *bytes, double *seconds);

/* Local; NULL-safe; nulls the pointer. */
void shard_output_destroy(shard_output **o);

#endif
