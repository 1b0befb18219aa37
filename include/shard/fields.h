/* Fields (core): how a per-particle array is described, and the table of the fields a run can write.
 *
 * Two tables live here.  The first is the row descriptor of a field registry (shard_field_desc): the particle
 * store (particles.h) and every matter module's block of per-particle arrays describe their arrays with it, so
 * that the start-up distribution, checkpoints and restarts loop over rows instead of naming arrays.  The
 * second is SHARD_OUTPUT_FIELDS, the one list of the per-particle fields that output files and in-situ scripts
 * see: the scene's `output.fields` names and their validation (scene.c), the HDF5 datasets and XDMF attributes
 * (io/output.c, from the columns the driver hands over), the Catalyst point arrays (io/catalyst_adaptor.cxx,
 * from the same columns) and the field table of docs/scenes.md (checked against this list by
 * tests/unit/test_fields.c) all come from it.  Which module computes a field is said in the `from` column.
 */
#ifndef SHARD_FIELDS_H
#define SHARD_FIELDS_H

#include <stddef.h>
#include <stdint.h>

/* Element types of registry rows and of output columns. */
typedef enum shard_field_type {
    SHARD_TYPE_I32 = 0,
    SHARD_TYPE_U32,
    SHARD_TYPE_I64,
    SHARD_TYPE_U8,
    SHARD_TYPE_F64,
} shard_field_type;

#define SHARD_FIELD_TYPE_OF(type)                                                                                      \
    _Generic((type *)0, int32_t *: SHARD_TYPE_I32, uint32_t *: SHARD_TYPE_U32, int64_t *: SHARD_TYPE_I64,        \
             uint8_t *: SHARD_TYPE_U8, double *: SHARD_TYPE_F64)

/* Bytes of one element of a field type. */
size_t shard_field_type_size(shard_field_type t);

/* Flags of registry rows:
 *   SHARD_FIELD_STATE    part of the simulation state: the start-up / restart distribution (and migration)
 *                        carries it for owned particles, checkpoints write it and restarts restore it
 *   SHARD_FIELD_GHOST    the distribution also fills it for ghosts (they need it before the first exchange, or
 *                        never receive it through one)
 *   SHARD_FIELD_CONTACT  contact ghosts carry it (decomposition/ghosts.c packs exactly these rows)
 * Rows with none of these are derived (recomputed from the state) or scratch. */
enum {
    SHARD_FIELD_STATE = 1u << 0,
    SHARD_FIELD_GHOST = 1u << 1,
    SHARD_FIELD_CONTACT = 1u << 2,
};

/* One row of a registry: an array pointer that lives `offset` bytes into a store (the shard_particles struct,
 * or the column table of a module block), with ncomp components of `type` per particle. */
typedef struct shard_field_desc {
    const char *member; /* C member name ("eps_p") */
    const char *name;   /* dataset name ("plastic_strain") */
    shard_field_type type;
    size_t elem_size; /* bytes of one component */
    int ncomp;        /* components per particle */
    unsigned flags;   /* SHARD_FIELD_* */
    size_t offset;    /* where the array pointer lives in its store */
} shard_field_desc;

/* The array of registry row f in the store at `base` (may be NULL in a partially filled store). Local. */
static inline void *shard_field_array(const void *base, const shard_field_desc *f)
{
    return *(void *const *)((const char *)base + f->offset);
}
/* Where that pointer lives, to allocate or replace it. Local. */
static inline void **shard_field_slot(void *base, const shard_field_desc *f)
{
    return (void **)((char *)base + f->offset);
}
static inline size_t shard_field_row_bytes(const shard_field_desc *f) { return (size_t)f->ncomp * f->elem_size; }

/* The output fields: X_(ID, "name", type, components, "unit", from, "what it is").  `from` is who fills the
 * column: core (the particle store and the driver) or a matter module (the solid, cloth); particles of other
 * kinds get zeros in a module's columns.  Components: 1 scalar, 3 vector, 9 tensor (row by row; the stress is
 * written whole, not as 6 symmetric components, because ParaView's XDMF readers and VTK disagree on the order
 * of a 6-component tensor).  position and global_id are always written. */
#define SHARD_OUTPUT_FIELDS(X_)                                                                                        \
    X_(POSITION, "position", SHARD_TYPE_F64, 3, "m", core, "current position (always written)")                        \
    X_(VELOCITY, "velocity", SHARD_TYPE_F64, 3, "m/s", core, "velocity")                                               \
    X_(DISPLACEMENT, "displacement", SHARD_TYPE_F64, 3, "m", core, "x - X, from the rest position")                    \
    X_(STRESS, "stress", SHARD_TYPE_F64, 9, "Pa", solid, "Cauchy stress, full symmetric 3x3, row by row")              \
    X_(VON_MISES, "von_mises", SHARD_TYPE_F64, 1, "Pa", solid, "von Mises equivalent stress")                          \
    X_(PLASTIC_STRAIN, "plastic_strain", SHARD_TYPE_F64, 1, "1", solid, "Frobenius norm of the plastic Green strain")  \
    X_(DAMAGE, "damage", SHARD_TYPE_F64, 1, "1", solid, "broken fraction of the particle's reference bonds")           \
    X_(INVERTED, "inverted", SHARD_TYPE_I32, 1, "-", solid, "1 where det J <= 0 (turned inside out), else 0")          \
    X_(STRETCH, "stretch", SHARD_TYPE_F64, 1, "1", cloth,                                                              \
       "cloth: the largest principal Green strain of the vertex's triangles (membrane stretch)")                       \
    X_(CONTACT, "contact", SHARD_TYPE_F64, 1, "N", cloth,                                                              \
       "cloth: the force of the collision stage's impulses on the vertex over the last step, |m dv| / dt "             \
       "(self-collision, other bodies, obstacles)")                                                                    \
    X_(FRAGMENT, "fragment", SHARD_TYPE_I64, 1, "-", core,                                                             \
       "label of the particle's fragment: the smallest global id in it (-1: a body that cannot break; written "        \
       "only when some body can)")                                                                                     \
    X_(BODY, "body", SHARD_TYPE_I32, 1, "-", core, "body index in the scene (0, 1, ...)")                              \
    X_(MATERIAL, "material", SHARD_TYPE_I32, 1, "-", core, "material index in the scene")                              \
    X_(RANK, "rank", SHARD_TYPE_I32, 1, "-", core, "rank that owned the particle at that step")                        \
    X_(GLOBAL_ID, "global_id", SHARD_TYPE_I64, 1, "-", core, "global particle id (always written)")

typedef enum shard_output_field {
#define SHARD_OUT_ENUM_(id, nm, ty, k, unit, from, what) SHARD_OUT_##id,
    SHARD_OUTPUT_FIELDS(SHARD_OUT_ENUM_)
#undef SHARD_OUT_ENUM_
        SHARD_OUT_COUNT
} shard_output_field;

/* One row of the output field table at run time. */
typedef struct shard_output_field_info {
    const char *name; /* in scenes, HDF5 files, XDMF and ParaView */
    shard_field_type type;
    int ncomp;
    const char *unit;
    const char *from; /* "core" or the matter module that fills it */
    const char *what;
} shard_output_field_info;

extern const shard_output_field_info shard_output_fields[SHARD_OUT_COUNT];
/* Fields always written, whatever the scene selects. */
#define SHARD_OUT_ALWAYS ((1u << SHARD_OUT_POSITION) | (1u << SHARD_OUT_GLOBAL_ID))
#define SHARD_OUT_ALL ((1u << SHARD_OUT_COUNT) - 1u)
/* The field named `name`, or -1. Local. */
int shard_output_field_find(const char *name);

/* One column of the owned particles handed to output and in-situ: n_owned rows of ncomp values. */
typedef struct shard_column {
    const char *name; /* dataset and ParaView array name */
    shard_field_type type;
    int ncomp;
    const void *data;
} shard_column;

#endif
