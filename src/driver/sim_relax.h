/* Private to src/driver/: the relax stage's part of the simulation record, owned by relax.c (written there
 * alone; shard_sim_relax_steps reads it for others). */
#ifndef SHARD_SIM_RELAX_H
#define SHARD_SIM_RELAX_H

typedef struct shard_sim_relax_state {
    int ran;                /* the stage ran (then the figures below are its) */
    long steps;             /* its steps (force evaluations) */
    long iterations;        /* its conjugate-gradient iterations (method cg; two steps each) */
    double residual, ratio; /* its final unbalanced force (N) and that over its value at the start */
} shard_sim_relax_state;

#endif
