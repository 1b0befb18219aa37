/* Private to src/driver/: the load balancer's part of the simulation record, owned by balance.c: written there
 * alone (set up by shard_sim_balance_setup, freed by shard_sim_balance_free); the report reads its figures. */
#ifndef SHARD_SIM_BALANCE_H
#define SHARD_SIM_BALANCE_H

#include "shard/balance.h"

typedef struct shard_sim_balance_state {
    shard_balancer *balancer; /* NULL: no balancing */
    long last;                /* step of the last check */
    long checks, runs;        /* checks made, migrations run */
    int64_t moved;            /* particles moved, summed over ranks and migrations */
    uint64_t bytes;           /* bytes this rank sent in migrations */
    double seconds;           /* this rank's time in balancing (checks, partitions, migrations) */
    double imb_first, imb_last_before, imb_last_after, imb_max; /* cost imbalance: at the first check, before
                                                                 * and after the last repartition, largest seen */
    double time_prev;        /* `time` cost: the force phases' time at the last check */
    double ghost_base;       /* the most contact ghosts a rank held after the last partition */
    long ghost_triggers;     /* migrations the ghost growth asked for */
    long dec_prev_step;      /* decomposition.csv: step of its last row */
    uint64_t dec_prev_bytes; /* this rank's bytes sent up to that row */
} shard_sim_balance_state;

#endif
