/* Particles (core): the structure-of-arrays store of one rank's particles, the blocks of per-particle arrays
 * that matter modules add to it, and CSR neighbour lists.
 *
 * A rank stores its owned particles first, grouped by matter module in the order of the matter table (matter.h)
 * and by increasing global id inside a module; then the ghosts of bonded partners owned elsewhere ("bond
 * ghosts", grouped by module, then by owner rank and global id; fixed until particles migrate), then contact
 * ghosts (rebuilt with the Verlet skin).  3-vectors are stored as x[3*i + k].
 *
 * The store itself holds what every particle has, whatever its kind: id, body, flags, rest and current
 * position, velocity, acceleration, mass.  What only one kind needs (the meshless solid's moment matrices,
 * force matrices and plastic strain) lives in that module's block (shard_block): arrays indexed by the
 * module's slot of a particle, sized to the module's own particles and ghosts, so particles of other kinds do
 * not carry them.  Both are described by registry rows (fields.h); distribution, checkpoints and restarts (and,
 * later, migration) loop over the rows, never over named arrays.  This module owns the storage, its growth and
 * the registry; it does not know who fills the arrays.
 */
#ifndef SHARD_PARTICLES_H
#define SHARD_PARTICLES_H

#include "shard/base.h"
#include "shard/fields.h"

/* Particle flags. */
enum {
    SHARD_PF_PRESCRIBED = 1u << 0, /* velocity prescribed for the whole run (vpres; zero = fixed) */
};

typedef struct shard_particles {
    size_t n_owned;      /* owned particles, [0, n_owned) */
    size_t n_bond_ghost; /* bond ghosts, [n_owned, n_owned + n_bond_ghost) */
    size_t n_local;      /* owned + bond ghosts + contact ghosts */
    size_t capacity;

    /* every local particle */
    int64_t *gid;  /* global id, stable for the run */
    int32_t *body; /* body index in the scene */
    uint32_t *flags;
    double *X;      /* rest (reference) position, 3 per particle */
    double *x;      /* current position */
    double *v;      /* velocity */
    double *mass;   /* kg (ghosts too: contact needs the partner's mass) */
    double *volume; /* m^3 (owned and bond ghosts) */
    double *nrm;    /* surface normal for smooth contact (contact.h; owned and every ghost; 0 unless a body
                     * of the scene has a smooth contact surface), recomputed in every force evaluation and
                     * forwarded to the ghosts (not in the contact ghosts' records: scenes without smooth
                     * surfaces do not send it) */

    /* owned only (arrays sized to capacity so that growth is uniform) */
    double *a;       /* acceleration from the last force evaluation */
    double *vpres;   /* prescribed velocity (3) for SHARD_PF_PRESCRIBED particles */
    double *x_build; /* position at the last contact-list build (Verlet skin check) */
} shard_particles;

/* Compressed sparse rows over owned particles: the partners of i are idx[start[i] .. start[i+1]). */
typedef struct shard_csr {
    size_t n;       /* rows */
    int64_t *start; /* n + 1 */
    int32_t *idx;   /* local indices (or global ones where documented) */
    size_t cap;     /* capacity of idx */
    size_t row_cap; /* capacity of start */
} shard_csr;

/* The particle store's registry: one row per array of shard_particles,
 *   X_(member, C type, components, flags, "dataset name")
 * with the flags of fields.h.  A per-particle array that every kind needs is a member here and one row; an
 * array that only one kind needs is a row of that module's block instead (matter.h).  Changing the STATE rows
 * changes the checkpoint format: bump SHARD_CHECKPOINT_FORMAT_VERSION (checkpoint.h). */
#define SHARD_PARTICLE_FIELDS(X_)                                                                                      \
    X_(gid, int64_t, 1, SHARD_FIELD_STATE | SHARD_FIELD_GHOST | SHARD_FIELD_CONTACT, "global_id")                      \
    X_(body, int32_t, 1, SHARD_FIELD_STATE | SHARD_FIELD_GHOST | SHARD_FIELD_CONTACT, "body")                          \
    X_(flags, uint32_t, 1, SHARD_FIELD_STATE | SHARD_FIELD_GHOST | SHARD_FIELD_CONTACT, "flags")                       \
    X_(X, double, 3, SHARD_FIELD_STATE | SHARD_FIELD_GHOST | SHARD_FIELD_CONTACT, "rest_position")                     \
    X_(x, double, 3, SHARD_FIELD_STATE | SHARD_FIELD_GHOST | SHARD_FIELD_CONTACT, "position")                          \
    X_(v, double, 3, SHARD_FIELD_STATE | SHARD_FIELD_GHOST | SHARD_FIELD_CONTACT, "velocity")                          \
    X_(mass, double, 1, SHARD_FIELD_CONTACT, "mass")                                                                   \
    X_(volume, double, 1, 0, "volume")                                                                                 \
    X_(nrm, double, 3, 0, "surface_normal")                                                                            \
    X_(a, double, 3, SHARD_FIELD_STATE, "acceleration")                                                                \
    X_(vpres, double, 3, SHARD_FIELD_STATE, "prescribed_velocity")                                                     \
    X_(x_build, double, 3, 0, "contact_build_position")

/* The registry at run time: what io/ and decomposition/ loop over (store base: the shard_particles). */
extern const shard_field_desc shard_particle_fields[];
extern const int shard_particle_n_fields;

/* The array of registry row f in p (may be NULL in a partially filled store). Local. */
static inline void *shard_particles_array(const shard_particles *p, const shard_field_desc *f)
{
    return shard_field_array(p, f);
}

/* The registry row of dataset name `name`, or NULL. Local. */
const shard_field_desc *shard_particles_row(const char *name);

/* Ensures room for n particles in every array (keeps contents). Local. */
void shard_particles_reserve(shard_particles *p, size_t n);
/* Allocates zeroed arrays of n particles for the registry rows whose flags include all of `flags` (other arrays
 * stay NULL), for stores that hold only part of the registry: rank 0's whole-run set at start-up and restart.
 * Sets capacity = n_owned = n_local = n. Local. */
void shard_particles_alloc_rows(shard_particles *p, size_t n, unsigned flags);
/* Frees all arrays; NULL-safe on members; zeroes the struct. Local. */
void shard_particles_free(shard_particles *p);

/* ------------------------------------------------------------------------------------------------------------
 * Blocks: the per-particle arrays of one matter module
 * ------------------------------------------------------------------------------------------------------------ */

#define SHARD_BLOCK_MAX_ROWS 16

/* A module's arrays.  Its owned particles are the contiguous local range [first, first + n_owned) and its
 * ghosts [ghost_first, ghost_first + n_ghost); slot s of every column belongs to local particle
 * first + s (s < n_owned) or ghost_first + s - n_owned.  Rows are described like the store's, with offsets
 * into `col` (SHARD_BLOCK_ROW below), so the same registry code serves both. */
typedef struct shard_block {
    const shard_field_desc *rows;
    int n_rows;
    size_t first, n_owned;
    size_t ghost_first, n_ghost;
    size_t capacity; /* slots allocated in every column */
    void *col[SHARD_BLOCK_MAX_ROWS];
} shard_block;

/* A block registry row: X_(index, C type, components, flags, "dataset name") becomes a descriptor of col[index]. */
#define SHARD_BLOCK_ROW(index, type, k, fl, nm)                                                                        \
    {#index,                                                                                                           \
     nm,                                                                                                               \
     SHARD_FIELD_TYPE_OF(type),                                                                                        \
     sizeof(type),                                                                                                     \
     (k),                                                                                                              \
     (fl),                                                                                                             \
     offsetof(shard_block, col) + (size_t)(index) * sizeof(void *)},

/* Sets the row table (n_rows <= SHARD_BLOCK_MAX_ROWS) of an empty block. Local. */
void shard_block_init(shard_block *b, const shard_field_desc *rows, int n_rows);
/* Ensures room for n slots in every column (keeps contents; new slots zeroed). Local. */
void shard_block_reserve(shard_block *b, size_t n);
/* Frees the columns; keeps the row table; zeroes the counts. NULL-safe. Local. */
void shard_block_free(shard_block *b);

/* Grows every array of a registry from `old_cap` to `new_cap` elements (new elements zeroed). Local. */
void shard_store_grow(void *base, const shard_field_desc *rows, int n_rows, size_t old_cap, size_t new_cap);

void shard_csr_reserve(shard_csr *c, size_t rows, size_t entries);
void shard_csr_free(shard_csr *c);

#endif
