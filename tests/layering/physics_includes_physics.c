/* Must compile: the control case of tests/layering/check.sh (a layer includes its own headers and core's). */
#include "shard/matter.h"
#include "shard/mesh.h"
int shard_layering_control(void) { return 0; }
