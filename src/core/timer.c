/* Timer (core): the phase table (see timer.h). */
#include "shard/timer.h"

#include "shard/base.h"

#include <string.h>

int shard_timer_phase(shard_timer *tm, const char *name)
{
    for (int k = 0; k < tm->n; k++)
        if (strcmp(tm->name[k], name) == 0)
            return k;
    if (tm->n == SHARD_PHASE_MAX)
        shard_fatal(SHARD_EXIT_INTERNAL, "more than %d timer phases (raise SHARD_PHASE_MAX in timer.h)",
                    SHARD_PHASE_MAX);
    tm->name[tm->n] = name;
    tm->t[tm->n] = 0.0;
    return tm->n++;
}

void shard_timer_clear(shard_timer *tm)
{
    for (int k = 0; k < tm->n; k++)
        tm->t[k] = 0.0;
}
