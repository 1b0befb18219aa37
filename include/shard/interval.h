/* Interval (core): "every N steps" or "every T seconds of simulated time", and whether one falls due.
 *
 * Output, checkpoints and in-situ scripts each run on their own interval; every rank evaluates the same integer
 * and floating-point expressions, so every rank reaches the same answer without communicating.
 */
#ifndef SHARD_INTERVAL_H
#define SHARD_INTERVAL_H

/* An interval in steps or in simulated time: exactly one of every / every_time is > 0 when enabled. */
typedef struct shard_interval {
    long every;        /* steps, > 0 */
    double every_time; /* s, > 0 */
} shard_interval;

/* Local, the same answer on every rank: whether an interval falls due at `step` (time step*dt).  Steps:
 * multiples of every, including 0.  Time: step 0 and every step that crosses a multiple of every_time
 * (the step whose time first reaches k * every_time, to within 1e-9 of an interval). */
int shard_interval_due(const shard_interval *iv, long step, double dt);

#endif
