/* Must not compile: decomposition code including a physics header (tests/layering/check.sh). */
#include "shard/matter.h"
