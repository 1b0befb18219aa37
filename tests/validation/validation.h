/* What the validation tests share: a run made from a scene text, and sums over its particles. */
#ifndef SHARD_VALIDATION_H
#define SHARD_VALIDATION_H

#include "shard/run.h"
#include "test.h"

/* A run of the scene `text` (len bytes; `name` is the file name its messages give) on comm, with the default
 * overrides; NULL (the check failed, the message printed) when the scene is refused. */
static inline shard_sim *validation_sim(shard_comm *comm, const char *name, const char *text, size_t len)
{
    shard_overrides ov = shard_default_overrides();
    shard_error err;
    shard_sim *sim = shard_sim_create(comm, name, text, len, &ov, &err);
    SHARD_ENSURE(sim != NULL);
    if (!sim)
        fprintf(stderr, "%s\n", err.msg);
    return sim;
}

/* The mass of the run's owned particles (one rank: the whole scene's). */
static inline double validation_mass(const shard_sim *sim)
{
    const shard_particles *p = shard_sim_particles(sim);
    double mass = 0.0;
    for (size_t i = 0; i < p->n_owned; i++)
        mass += p->mass[i];
    return mass;
}

#endif
