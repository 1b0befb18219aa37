/* Must not compile: io code including a driver header (tests/layering/check.sh). */
#include "shard/run.h"
