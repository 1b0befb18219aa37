/* Phase names for the timing table; the assertion keeps the table and the enum in step. */
#include "shard/timer.h"

const char *const shard_phase_names[SHARD_PHASE_COUNT] = {"Neigh", "Solid", "Contact", "Comm",
                                                          "Integrate", "I/O", "In-situ", "Other"};
_Static_assert(sizeof shard_phase_names / sizeof shard_phase_names[0] == SHARD_PHASE_COUNT,
               "one name per phase");
