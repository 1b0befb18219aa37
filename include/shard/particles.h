/* Particles: the structure-of-arrays store of one rank's particles, and CSR neighbour lists.
 *
 * A rank stores its owned particles first (sorted by global id), then the ghosts of bonded partners owned
 * elsewhere ("bond ghosts", fixed for the run), then contact ghosts (rebuilt with the Verlet skin).  3-vectors
 * are stored as x[3*i + k].  Per-particle solid state (pseudo-inverse moment matrix, plastic strain) exists for
 * owned particles only; the force matrix B exists for owned particles and bond ghosts.  This module owns the
 * storage, its growth, and the field registry (SHARD_PARTICLE_FIELDS below) through which distribution,
 * checkpoints and restarts see every array; it does not know who fills them.
 */
#ifndef SHARD_PARTICLES_H
#define SHARD_PARTICLES_H

#include "shard/base.h"

/* Particle flags. */
enum {
    SHARD_PF_PRESCRIBED = 1u << 0, /* velocity prescribed for the whole run (vpres; zero = fixed) */
};

typedef struct shard_particles {
    size_t n_owned;       /* owned particles, [0, n_owned) */
    size_t n_bond_ghost;  /* bond ghosts, [n_owned, n_owned + n_bond_ghost) */
    size_t n_local;       /* owned + bond ghosts + contact ghosts */
    size_t capacity;

    /* every local particle */
    int64_t *gid;         /* global id, stable for the run */
    int32_t *body;        /* body index in the scene */
    uint32_t *flags;
    double *X;            /* rest (reference) position, 3 per particle */
    double *x;            /* current position */
    double *v;            /* velocity */
    double *B;            /* solid force matrix v * P * A^+ (9, row-major); owned + bond ghosts */
    double *mass;         /* kg (ghosts too: contact needs the partner's mass) */
    double *volume;       /* m^3 */

    /* owned only (arrays sized to capacity so that growth is uniform) */
    double *a;            /* acceleration from the last force evaluation */
    double *vpres;        /* prescribed velocity (3) for SHARD_PF_PRESCRIBED particles */
    double *Ainv;         /* pseudo-inverse of the moment matrix, symmetric: xx xy xz yy yz zz */
    double *wx;           /* sum_j w_ij x_ij over the bonds (3): the constant part of the force gather */
    double *eps_p;        /* plastic Green strain, symmetric: xx xy xz yy yz zz */
    double *x_build;      /* position at the last contact-list build (Verlet skin check) */
} shard_particles;

/* Compressed sparse rows over owned particles: the partners of i are idx[start[i] .. start[i+1]). */
typedef struct shard_csr {
    size_t n;             /* rows */
    int64_t *start;       /* n + 1 */
    int32_t *idx;         /* local indices (or global ones where documented) */
    size_t cap;           /* capacity of idx */
    size_t row_cap;       /* capacity of start */
} shard_csr;

/* The particle field registry: one row per per-particle array of shard_particles,
 *   X_(member, C type, components, flags, "dataset name")
 * flags:
 *   SHARD_FIELD_STATE  part of the simulation state: the start-up / restart distribution carries it for owned
 *                      particles, checkpoints write it (/particles/<dataset name>) and restarts restore it
 *   SHARD_FIELD_GHOST  the distribution also fills it for bond ghosts (ghosts need it before the first halo
 *                      exchange, or never receive it through one)
 * Arrays with neither flag are derived (recomputed from the state: moment matrices, force matrices, masses) or
 * scratch.  A module that adds a per-particle array adds its member to shard_particles and one row here:
 * growth, distribution, checkpoint and restart then follow without further code (docs/architecture.md,
 * "Particle field registry").  Changing the STATE rows changes the checkpoint format: bump
 * SHARD_CHECKPOINT_FORMAT_VERSION (checkpoint.h). */
enum {
    SHARD_FIELD_STATE = 1u << 0,
    SHARD_FIELD_GHOST = 1u << 1,
};
#define SHARD_PARTICLE_FIELDS(X_)                                                                                \
    X_(gid, int64_t, 1, SHARD_FIELD_STATE | SHARD_FIELD_GHOST, "global_id")                                      \
    X_(body, int32_t, 1, SHARD_FIELD_STATE | SHARD_FIELD_GHOST, "body")                                          \
    X_(flags, uint32_t, 1, SHARD_FIELD_STATE | SHARD_FIELD_GHOST, "flags")                                       \
    X_(X, double, 3, SHARD_FIELD_STATE | SHARD_FIELD_GHOST, "rest_position")                                     \
    X_(x, double, 3, SHARD_FIELD_STATE | SHARD_FIELD_GHOST, "position")                                          \
    X_(v, double, 3, SHARD_FIELD_STATE | SHARD_FIELD_GHOST, "velocity")                                          \
    X_(B, double, 9, 0, "force_matrix")                                                                          \
    X_(a, double, 3, SHARD_FIELD_STATE, "acceleration")                                                          \
    X_(vpres, double, 3, SHARD_FIELD_STATE, "prescribed_velocity")                                               \
    X_(mass, double, 1, 0, "mass")                                                                               \
    X_(volume, double, 1, 0, "volume")                                                                           \
    X_(Ainv, double, 6, 0, "moment_pinv")                                                                        \
    X_(wx, double, 3, 0, "bond_weight_sum")                                                                      \
    X_(eps_p, double, 6, SHARD_FIELD_STATE, "plastic_strain")                                                    \
    X_(x_build, double, 3, 0, "contact_build_position")

/* Element types of registry rows (and of output columns). */
typedef enum shard_field_type {
    SHARD_TYPE_I32 = 0,
    SHARD_TYPE_U32,
    SHARD_TYPE_I64,
    SHARD_TYPE_U8,
    SHARD_TYPE_F64,
} shard_field_type;

#define SHARD_FIELD_TYPE_OF(type)                                                                                \
    _Generic((type *)0, int32_t *: SHARD_TYPE_I32, uint32_t *: SHARD_TYPE_U32, int64_t *: SHARD_TYPE_I64,        \
             uint8_t *: SHARD_TYPE_U8, double *: SHARD_TYPE_F64)

/* The registry at run time: what io/ and decomposition/ loop over. */
typedef struct shard_field_desc {
    const char *member;   /* C member name ("eps_p") */
    const char *name;     /* dataset name ("plastic_strain") */
    shard_field_type type;
    size_t elem_size;     /* bytes of one component */
    int ncomp;            /* components per particle */
    unsigned flags;       /* SHARD_FIELD_* */
    size_t offset;        /* offsetof(shard_particles, member): where the array pointer lives */
} shard_field_desc;

extern const shard_field_desc shard_particle_fields[];
extern const int shard_particle_n_fields;

/* The array of registry row f in p (may be NULL in a partially filled store). Local. */
static inline void *shard_particles_array(const shard_particles *p, const shard_field_desc *f)
{
    return *(void *const *)((const char *)p + f->offset);
}
/* Where that pointer lives, to allocate or replace it. Local. */
static inline void **shard_particles_array_slot(shard_particles *p, const shard_field_desc *f)
{
    return (void **)((char *)p + f->offset);
}

/* Ensures room for n particles in every array (keeps contents). Local. */
void shard_particles_reserve(shard_particles *p, size_t n);
/* Allocates zeroed arrays of n particles for the registry rows whose flags include all of `flags` (other arrays
 * stay NULL), for stores that hold only part of the registry: rank 0's whole-run set at start-up and restart.
 * Sets capacity = n_owned = n_local = n. Local. */
void shard_particles_alloc_rows(shard_particles *p, size_t n, unsigned flags);
/* Frees all arrays; NULL-safe on members; zeroes the struct. Local. */
void shard_particles_free(shard_particles *p);

void shard_csr_reserve(shard_csr *c, size_t rows, size_t entries);
void shard_csr_free(shard_csr *c);

#endif
