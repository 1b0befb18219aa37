/* Migration: owned particles change rank in the middle of a run.
 *
 * Every owned particle goes to the rank dest[i] with everything that is state: every SHARD_FIELD_STATE row of
 * the particle registry and of its module's block, its reference bonds (as partner global ids, with their
 * broken flags and the partners' new owners) and its rows of the force terms' memories (pair lists keyed by
 * partner global id).  The receiver stores its owned particles as the start-up distribution does (by module,
 * then increasing global id), finds its bond ghosts from the bonds it received (by module, owner and global
 * id), builds the halo plans from its own bonds and fills the ghosts' SHARD_FIELD_GHOST state rows through
 * them.  What is derived (contact ghosts, candidate lists, the modules' precomputed arrays) is the caller's to
 * rebuild, as after a restart.  The partition never enters the physics (every owner gathers in global-id
 * order), so a migration leaves the state hash, and every later step, unchanged.
 */
#ifndef SHARD_MIGRATE_H
#define SHARD_MIGRATE_H

#ifndef SHARD_LAYER_DECOMPOSITION
#error                                                                                                                 \
    "shard/migrate.h is a decomposition header: only its layer and the layers above it (io and the driver) include it"
#endif

#include "shard/partition.h"

/* A migration sends its particle records in rounds (a round carries at least one record): each rank sends at
 * most 1/SHARD_MIGRATE_MIN_ROUNDS of its records' words per round, but never more than SHARD_MIGRATE_ROUND_WORDS
 * 64-bit words (64 MiB) nor, unless it has less to send, fewer than an eighth of that.  Beside its store and the
 * package it fills, a rank then holds no more than one round's buffers.  kinds->round_words fixes the words
 * of a round instead (tests). */
enum { SHARD_MIGRATE_ROUND_WORDS = 1 << 23, SHARD_MIGRATE_MIN_ROUNDS = 8 };

/* What one migration did on this rank. */
typedef struct shard_migrate_stats {
    int64_t sent;     /* owned particles sent to another rank */
    int64_t received; /* particles received from another rank */
    uint64_t bytes;   /* bytes sent: particle records, the new owners forwarded to the old bond ghosts and
                       * the state rows of the new ones */
} shard_migrate_stats;

/* Collective.  Moves owned particle i (i < p->n_owned) to rank dest[i] (0 .. size-1).  kinds as for
 * shard_partition_distribute (all_lists not read); blocks[m] are module m's blocks, halos[m] its bond-ghost
 * plans (replaced), lists[q] the force terms' memories (rows = owned particles; replaced).  p keeps its bond
 * ghosts only (n_local = n_owned + n_bond_ghost): contact ghosts are rebuilt by the caller.  x_build = x. */
void shard_migrate(shard_comm *c, const shard_partition_kinds *kinds, const int32_t *dest, shard_particles *p,
                   shard_block *blocks, shard_csr *bonds, uint8_t **broken, shard_halo **halos, shard_pairlist *lists,
                   shard_migrate_stats *stats);

/* Collective.  The same move when the caller knows the new owner of every local particle: where[i] (a rank,
 * as a double, for the rows [0, n_owned + n_bond_ghost)) for the owned particles and their bond ghosts; halos
 * (NULL entries allowed: a store that has no plans yet, as a distributed start-up's) are replaced. */
void shard_migrate_to(shard_comm *c, const shard_partition_kinds *kinds, const double *where, shard_particles *p,
                      shard_block *blocks, shard_csr *bonds, uint8_t **broken, shard_halo **halos,
                      shard_pairlist *lists, shard_migrate_stats *stats);

#endif
