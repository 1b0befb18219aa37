/* Checkpoint: the complete state of a run in one HDF5 file, written in parallel and atomically, and read back
 * for a restart on any number of ranks.
 *
 * The module owns the checkpoint format, the atomic write (temporary name, flush, fsync, rename, then the oldest
 * of the run's own files beyond `keep` are deleted), the validation of a file before a restart uses it, and the
 * test-only fault injection.  What the state is comes from elsewhere: every particle array whose registry row
 * (particles.h) has SHARD_FIELD_STATE is written and restored, and so is every such row of a matter module's block (in
 * the module's section), so a module that adds such a row is checkpointed without a change here; bonds travel with
 * their broken flags.  The loaded state is partitioned anew for the run's rank count (partition.h).
 *
 * Layout of DIR/checkpoint_<step>.h5 (rows in rank order, then the order of the owned particles):
 *   /                          attributes: format = "shard-checkpoint", format_version, shard_version, step,
 *                              time, dt, n_particles, n_bonds, n_ranks, contacts, state_hash, checksum,
 *                              scene_checksum (a hash of the scene text), run_id (the run that wrote it: see
 *                              shard_checkpoint_create), complete (written last); dataset /scene (the scene
 *                              text; attribute scene_path at the root)
 *   /bodies/<name>             per body of the scene, in scene order, written by rank 0: name, kind, material
 *                              (B, 64) uint8, NUL-padded; count (B) int64: its particles; first_id (B) int64:
 *                              the first one's global id; mass (B) float64: the exact sum of their masses, kg
 *   /particles/<dataset name>  one per SHARD_FIELD_STATE row of the particle registry: (N) or (N, k)
 *   /<section>/global_id       (N_s) int64: the particles of a section (a matter module's kind: /solid)
 *   /<section>/<dataset name>  one per SHARD_FIELD_STATE row of the module's block: (N_s) or (N_s, k)
 *   /<list>/count              (N) int32: entries of the particle in the same row in a pair list (a force
 *                              term's memory, e.g. /contact_memory); /<list>/key (M) int64, /<list>/value
 *                              (M, width) float64, row after row, keys increasing in each row
 *   /bonds/count               (N) int32: bonds of the particle in the same row
 *   /bonds/partner             (n_bonds) int64: partner global ids, row after row, each row increasing
 *   /bonds/broken              (n_bonds) uint8: 1 = broken (kept so that damage survives a restart)
 *   /module_state/<section>    (bytes) uint8: a matter module's own state that is not per particle (rigid
 *                              bodies' poses and momenta, contact memories), the same on every rank, written
 *                              by rank 0; root attribute module_state_checksum: a hash of every such record
 * `checksum` is the 64-bit sum over particles of a hash of the particle's global id, every state row, its
 * section's rows and its bond list: independent of the row order, so a reader checks it whatever the writer's
 * rank count was.
 *
 * Fault injection (tests only): SHARD_FAULT_CHECKPOINT=STEP:N in the environment makes every rank kill itself
 * (SIGKILL) right after the N-th dataset of the checkpoint of step STEP has been written, leaving a partial
 * temporary file, as a crash or a node failure would.
 */
#ifndef SHARD_CHECKPOINT_H
#define SHARD_CHECKPOINT_H

#ifndef SHARD_LAYER_IO
#error "shard/checkpoint.h is an io header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/comm.h"
#include "shard/pairlist.h"
#include "shard/particles.h"

/* 3: the force terms' pair lists (contact memory); 4: the solid's fracture scales (fracture.h); 5: modules' own
 * state records (/module_state); 6: the scene text's checksum, the bodies' identities (/bodies), the run id.  A
 * file of another version is refused. */
#define SHARD_CHECKPOINT_FORMAT_VERSION 6

/* A body's identity, recorded in every checkpoint and checked at a restart against what the scene builds: its
 * name, kind and material, its particles (their count and the first one's global id) and their total mass. */
#define SHARD_CHECKPOINT_NAME 64
typedef struct shard_checkpoint_body {
    char name[SHARD_CHECKPOINT_NAME], kind[SHARD_CHECKPOINT_NAME], material[SHARD_CHECKPOINT_NAME];
    int64_t count, first;
    double mass; /* kg: the exact sum of its particles' masses (the same bits on any number of ranks) */
} shard_checkpoint_body;

/* A section: the per-particle state of one matter module, its block's SHARD_FIELD_STATE rows. */
#define SHARD_CHECKPOINT_MAX_SECTIONS 8
typedef struct shard_checkpoint_section {
    const char *name;         /* group name: the module's kind */
    const shard_block *block; /* writer: the module's block on this rank (owned slots [0, n_owned), the
                               * particles first .. first + n_owned - 1); reader: rows only */
    const void *blob;         /* writer: the module's own state record (the same on every rank), or NULL */
    size_t blob_bytes;
} shard_checkpoint_section;

/* A pair list of the run (a force term's memory of its contacts): /<name>/count, /key, /value. */
#define SHARD_CHECKPOINT_MAX_LISTS 8
typedef struct shard_checkpoint_list {
    const char *name;
    const shard_pairlist *list; /* writer: rows = this rank's owned particles; reader: only its width is read */
} shard_checkpoint_list;

/* What the driver hands the writer: its owned particles and their bonds, and the run's scalars. */
typedef struct shard_checkpoint_state {
    const shard_particles *p; /* owned rows [0, n_owned) */
    int n_sections;
    const shard_checkpoint_section *sections;
    int n_lists;
    const shard_checkpoint_list *lists;
    const shard_csr *bonds; /* local partner indices, rows sorted by partner global id */
    const uint8_t *broken;  /* per bond entry (NULL: none broken) */
    long step;
    double dt;
    int64_t contacts;    /* active contacts at the last force evaluation, summed over ranks */
    uint64_t state_hash; /* the run's state hash at this step */
    const char *scene_path, *scene_text;
    size_t scene_len;
    int n_bodies;
    const shard_checkpoint_body *bodies; /* per body of the scene (the same on every rank) */
} shard_checkpoint_state;

typedef struct shard_checkpoint shard_checkpoint;

/* Collective: a new run's id (rank 0 draws 64 random bits; the same on every rank).  A run that restarts from a
 * checkpoint carries on with the id the checkpoint records, so that it owns the files of the run it continues. */
uint64_t shard_checkpoint_new_run_id(shard_comm *c);

/* Local: a writer into `dir` (created on the first write) for the run `run_id`, keeping the newest `keep` (>= 1)
 * complete files of that run.  Reads SHARD_FAULT_CHECKPOINT.  Caller owns the handle. */
shard_checkpoint *shard_checkpoint_create(const char *dir, long keep, uint64_t run_id);

/* Collective: writes DIR/checkpoint_<step>.h5 (through DIR/checkpoint_<step>.h5.tmp), then deletes the oldest
 * complete checkpoints of steps <= step that record this writer's run id beyond `keep` (later ones, left by an
 * abandoned run, are kept; so are the files of other runs and files whose run id cannot be read).
 * Returns 0, or SHARD_EXIT_IO with the same *err on every rank (the temporary file is then removed and the
 * checkpoints already there are untouched). */
int shard_checkpoint_write(shard_checkpoint *ck, shard_comm *c, const shard_checkpoint_state *st, shard_error *err);

/* Local: files written, raw bytes this rank wrote, seconds this rank spent writing. */
void shard_checkpoint_stats(const shard_checkpoint *ck, long *files, uint64_t *bytes, double *seconds);
/* Local: the path of the last file written ("" before the first). */
const char *shard_checkpoint_last_path(const shard_checkpoint *ck);

/* Local; NULL-safe; nulls the pointer. */
void shard_checkpoint_destroy(shard_checkpoint **ck);

/* A checkpoint as loaded: by every rank, the particles of its range of global ids (shard_checkpoint_load_range), or,
 * in the tests, by one rank, every particle of the run (shard_checkpoint_load, tests/support).  Rows are those of
 * the global ids [first, first + n_local): row = global id - first (the whole-file loader: first = 0, n_local = n). */
typedef struct shard_checkpoint_data {
    long step;
    double time, dt;
    int64_t n, n_bonds, contacts; /* global counts: particles, bond entries (both directions), contacts */
    int n_ranks;                  /* of the run that wrote it */
    uint64_t state_hash, run_id;
    char *scene_text; /* NUL-terminated (on every rank), checked against its checksum */
    size_t scene_len;
    char scene_path[1024];
    int n_bodies;                  /* the bodies' identities as the file records them (on every rank) */
    shard_checkpoint_body *bodies; /* names NUL-terminated; nothing else checked: the restart compares them */
    int64_t first, n_local;        /* the global ids held */
    shard_particles p;             /* SHARD_FIELD_STATE rows allocated, n_owned = n_local; p.gid[row] = first + row */
    shard_block blocks[SHARD_CHECKPOINT_MAX_SECTIONS]; /* per section: its STATE rows, n_local rows */
    int8_t *section_of;                                /* per row: the section that holds the particle, or -1 */
    shard_pairlist lists[SHARD_CHECKPOINT_MAX_LISTS];  /* per list asked for: n_local rows, keys increasing */
    shard_csr bonds;  /* n_local rows (start: n_local + 1 entries), each row's partners increasing;
                       * whole-file loader: idx = partner global ids; range loader: idx NULL, see
                       * partner */
    int64_t *partner; /* range loader: per bond entry, the partner's global id; whole-file loader: NULL */
    uint8_t *broken;  /* per bond entry */
    void *blob[SHARD_CHECKPOINT_MAX_SECTIONS]; /* per section asked for: its module state record (on every rank),
                                                * or NULL when the file has none */
    size_t blob_bytes[SHARD_CHECKPOINT_MAX_SECTIONS];
} shard_checkpoint_data;

/* Collective: reads and validates a checkpoint completely (format, version, completeness, the scene text against
 * its checksum, every dataset and its size, global ids a permutation, each section's ids distinct and in range, bonds
 * in range, sorted and symmetric, checksum, module state records against their checksum), in parallel, distributed by
 * global id. sections[0..n_sections) name the sections to read and their rows (block->rows); a section with no STATE
 * row is neither written nor read.  Rank r of P reads rows [N*r/P, N*(r+1)/P) of every per-particle dataset (N =
 * n_particles; and the matching entries of the bond, section and list datasets) with independent hyperslab reads,
 * and the rows are exchanged so that it ends up holding exactly the particles of global ids [first, first +
 * n_local), first = floor(N*r/P), first + n_local = floor(N*(r+1)/P): d->p, blocks, section_of, lists, bonds (start,
 * partner, broken) have n_local rows, row = gid - first; the header and the scene text are on every rank.  The
 * validation is that of the whole-file reader the tests compare it with (shard_checkpoint_load,
 * tests/support/checkpoint_whole.h), each check made by the rank that holds the data (the permutation and the
 * sections' ids by the owner of the id, the symmetry of a bond i-j by the owner of j, the checksum as a sum over
 * ranks), with the same messages and, where several things are wrong, the same one reported first; memory per rank
 * is O(N/P), also for a corrupt file: every size the file gives (the header's counts, a section's or list's rows, a
 * record's bytes, the scene's length) is checked against the datasets' extents and their storage in the file
 * before anything is allocated from it.  Global counts are int64 (not limited to 2^31); a rank refuses what it cannot
 * hold: more than 2^31 - 1 words to send or receive in one exchange (a particle's rows, its bonds and list entries:
 * use more ranks).  Returns 0, or SHARD_EXIT_INPUT with the same "PATH: <what is wrong>" in err on every rank (d
 * then freed); nothing is written anywhere. */
int shard_checkpoint_load_range(shard_comm *c, const char *path, int n_sections,
                                const shard_checkpoint_section *sections, int n_lists,
                                const shard_checkpoint_list *lists, shard_checkpoint_data *d, shard_error *err);
/* NULL-safe; zeroes the struct. */
void shard_checkpoint_data_free(shard_checkpoint_data *d);

#endif
