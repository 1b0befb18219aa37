/* Private to src/driver/: the relax stage's part of the simulation record, owned by relax.c (written there
 * alone; shard_sim_relax_steps reads it for others), and the stage's check of a scene. */
#ifndef SHARD_SIM_RELAX_H
#define SHARD_SIM_RELAX_H

typedef struct shard_sim_relax_state {
    int ran;                /* the stage ran (then the figures below are its) */
    long steps;             /* its steps (force evaluations) */
    long iterations;        /* its conjugate-gradient iterations (method cg; two steps each) */
    double residual, ratio; /* its final unbalanced force (N) and that over its value at the start */
} shard_sim_relax_state;

/* The scene's relax section against what would hold its bodies still, from scene data alone (relax.c): a scene
 * with gravity and nothing that could support it (no obstacle; no fixed or prescribed region and no traction in
 * force at the start) falls as a whole for ever, and is refused at its `relax` section, naming the bodies.
 * 0 or SHARD_EXIT_INPUT.  Local. */
int shard_sim_relax_check(const shard_scene *sc, shard_error *err);

#endif
