/* Interval (core): when output, checkpoints and in-situ scripts fall due (see interval.h). */
#include "shard/interval.h"

#include <math.h>

int shard_interval_due(const shard_interval *iv, long step, double dt)
{
    if (iv->every > 0)
        return step % iv->every == 0;
    if (!(iv->every_time > 0.0))
        return 0;
    if (step == 0)
        return 1;
    /* The tolerance keeps t = 100 * 1e-4 from missing the interval 0.01 by one rounding. */
    double a = floor((double)(step - 1) * dt / iv->every_time + 1e-9);
    double b = floor((double)step * dt / iv->every_time + 1e-9);
    return b > a;
}
