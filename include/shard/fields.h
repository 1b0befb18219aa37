/* Fields (core): how a per-particle array is described, and the table of the fields a run can write.
 *
 * Two tables live here.  The first is the row descriptor of a field registry (shard_field_desc): the particle
 * store (particles.h) and every matter module's block of per-particle arrays describe their arrays with it, so
 * that the start-up distribution, checkpoints and restarts loop over rows instead of naming arrays.  The
 * second is SHARD_OUTPUT_FIELDS, the per-particle fields of every run that output files and in-situ scripts see
 * (the particle store's and the driver's); each kind of matter adds its own after them (matter.h: out_fields,
 * and shard_output_* there for the whole list of a scene).  The scene's `output.fields` names and their
 * validation (scene.c), the HDF5 datasets and XDMF attributes (io/output.c, from the columns the driver hands
 * over), the Catalyst point arrays (io/catalyst_adaptor.cxx, from the same columns) and the field table of
 * docs/scenes.md (checked against the whole list by tests/unit/test_fields.c) all come from these lists.
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

/* The output fields of every run: X_(ID, "name", type, components, "unit", from, "what it is"), `from` = core
 * (the particle store and the driver fill them).  Components: 1 scalar, 3 vector, 9 tensor (row by row: a
 * tensor is written whole, not as 6 symmetric components, because ParaView's XDMF readers and VTK disagree on
 * the order of a 6-component tensor).  position and global_id are always written. */
#define SHARD_OUTPUT_FIELDS(X_)                                                                                        \
    X_(POSITION, "position", SHARD_TYPE_F64, 3, "m", core, "current position (always written)")                        \
    X_(VELOCITY, "velocity", SHARD_TYPE_F64, 3, "m/s", core, "velocity")                                               \
    X_(DISPLACEMENT, "displacement", SHARD_TYPE_F64, 3, "m", core, "x - X, from the rest position")                    \
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
/* The most output fields of a run, the core's and its kinds' (a selection is a mask of this many bits). */
#define SHARD_OUTPUT_MAX 32

/* One column of the owned particles handed to output and in-situ: n_owned rows of ncomp values. */
typedef struct shard_column {
    const char *name; /* dataset and ParaView array name */
    shard_field_type type;
    int ncomp;
    const void *data;
} shard_column;

#endif
