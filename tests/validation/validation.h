/* What the validation tests share: a run made from a scene text, and sums over its particles. */
#ifndef SHARD_VALIDATION_H
#define SHARD_VALIDATION_H

#include "shard/run.h"
#include "test.h"

#include <stdarg.h>
#include <stdio.h>

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

/* The same from a format and its arguments (a scene text of at most 4 kB). */
static shard_sim *validation_simf(shard_comm *comm, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), unused));
static shard_sim *validation_simf(shard_comm *comm, const char *name, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    SHARD_ENSURE(n > 0 && (size_t)n < sizeof text);
    return validation_sim(comm, name, text, (size_t)n);
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
