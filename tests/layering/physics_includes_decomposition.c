/* Must not compile: physics code including a decomposition header (tests/layering/check.sh). */
#include "shard/halo.h"
