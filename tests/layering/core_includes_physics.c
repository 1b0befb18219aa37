/* Must not compile: core code including a physics header (tests/layering/check.sh). */
#include "shard/scene.h"
