/* Must not compile: physics code including an io header (tests/layering/check.sh). */
#include "shard/output.h"
