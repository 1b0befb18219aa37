/* Fields (core): the output field table at run time and field-type sizes (see fields.h). */
#include "shard/fields.h"

const shard_output_field_info shard_output_fields[SHARD_OUT_COUNT] = {
#define SHARD_OUT_INFO_(id, nm, ty, k, un, fr, wh) [SHARD_OUT_##id] = {nm, ty, k, un, #fr, wh},
    SHARD_OUTPUT_FIELDS(SHARD_OUT_INFO_)
#undef SHARD_OUT_INFO_
};

size_t shard_field_type_size(shard_field_type t)
{
    switch (t) {
    case SHARD_TYPE_I32:
    case SHARD_TYPE_U32:
        return 4;
    case SHARD_TYPE_I64:
    case SHARD_TYPE_F64:
        return 8;
    case SHARD_TYPE_U8:
        return 1;
    }
    return 8;
}
