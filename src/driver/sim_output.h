/* Private to src/driver/: the output part of the simulation record, owned by run.c (created by
 * shard_sim_output_setup, written on the run's intervals, freed by shard_sim_output_free): the output and
 * checkpoint writers, the in-situ scripts and the buffers of derived output columns.  Other files hand the
 * writers to their own tables (decomposition.csv, fragments.csv) and the report reads their statistics. */
#ifndef SHARD_SIM_OUTPUT_H
#define SHARD_SIM_OUTPUT_H

#include "shard/checkpoint.h"
#include "shard/fields.h"
#include "shard/insitu.h"
#include "shard/output.h"
#include "shard/run.h"

typedef struct shard_sim_output_state {
    shard_output *out;               /* NULL: no output section (or no HDF5) */
    shard_checkpoint *ckpt;          /* NULL: no checkpoint section (or no HDF5) */
    shard_insitu *insitu;            /* Catalyst scripts, or NULL */
    long last_output;                /* step of the last output written or inherited from a restart, or -1 */
    void *col_buf[SHARD_OUTPUT_MAX]; /* derived output columns (grow-only), by output field */
    size_t col_cap[SHARD_OUTPUT_MAX];
    int warned_inverted; /* the warning about inverted particles has been printed */
} shard_sim_output_state;

/* The output and checkpoint writers of the scene's sections (nothing is created on disk yet) and Catalyst with
 * the scene's scripts and the command line's.  Collective; 0 or an error on every rank. */
int shard_sim_output_setup(shard_sim *s, const shard_overrides *ov, shard_error *err);
/* The scene's Catalyst scripts in a shard that cannot run them: an error at the scene's `catalyst` section, from
 * scene data alone (before anything is sampled).  0 or SHARD_EXIT_INPUT.  Local. */
int shard_sim_insitu_check(const shard_scene *sc, shard_error *err);
/* Frees the part (shard_sim_destroy).  Local. */
void shard_sim_output_free(shard_sim *s);

#endif
