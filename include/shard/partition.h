/* Partition: the start-up (and restart) partition of the particles and their distribution to the ranks.
 *
 * No rank ever holds more than its share.  Every rank holds a share of the run: the particles of a range of
 * global ids, which it sampled (sample.h) or read from a checkpoint (checkpoint.h), with their reference bonds
 * as partner ids.  The share becomes a store whose bond ghosts are the partners held by other ranks' shares;
 * the shares are partitioned in parallel by recursive coordinate bisection of the rest positions (Zoltan,
 * balance.h: weight 1 + bond count, the cost of a particle in the solid kernels; the method Peridigm's
 * start-up uses); the new owner of every bond ghost is asked of the rank that holds it; and one migration
 * (migrate.h) sends every particle to its part with every state row of the particle registry (particles.h) and
 * of its matter module's block, its bonds and its rows of the force terms' memories.  The receivers derive their
 * halo send lists from their own bonds: bonds are symmetric, so rank q needs my particle i exactly when i has a
 * partner owned by q.  There is one halo plan per matter module that has bonds (bonds join particles of one
 * body, hence of one module).  Global ids and counts are 64-bit throughout; docs/architecture.md gives the
 * measured costs and the comparison with a graph partition of the bonds.
 */
#ifndef SHARD_PARTITION_H
#define SHARD_PARTITION_H

#ifndef SHARD_LAYER_DECOMPOSITION
#error                                                                                                                 \
    "shard/partition.h is a decomposition header: only its layer and the layers above it (io and the driver) include it"
#endif

#include "shard/halo.h"
#include "shard/pairlist.h"
#include "shard/particles.h"

/* How particles are grouped by kind of matter: the module of every body, and per module its block (rows and
 * counts).  The same on every rank. */
typedef struct shard_partition_kinds {
    int n_modules;
    const int32_t *body_module; /* n_bodies entries: module index of each body */
    const int *has_halo;        /* per module: 1 when its bodies have bonds (a halo plan is created) */
    int n_lists;                /* pair lists (the memories of force terms) */
    size_t round_words;         /* migrations: words one rank sends per round (0: SHARD_MIGRATE_ROUND_WORDS) */
} shard_partition_kinds;

/* A rank's share of the run before the start-up partition: the particles with global ids [first, first + n) in
 * id order, every rank's range following the previous rank's (an empty range allowed); sampled (sample.h) or
 * read from a checkpoint (checkpoint.h). */
typedef struct shard_share {
    shard_particles p;           /* n_owned = n rows: SHARD_FIELD_STATE arrays (NULL: zeros), gid set */
    const shard_block *mod_rows; /* NULL, or per module its STATE rows with the same n rows (NULL columns: zeros) */
    int64_t *bstart;             /* n + 1 offsets into partner (may start above 0) */
    int64_t *partner;            /* bond partners' global ids, each row increasing */
    const uint8_t *broken;       /* per bond entry, indexed as partner (NULL: none broken) */
    const shard_pairlist *lists; /* NULL, or the force terms' memories with the same n rows */
} shard_share;
/* Local; frees p, bstart and partner (a share that allocated them) and zeroes the record. */
void shard_share_free(shard_share *sh);

/* Collective: the share becomes a store in the layout shard_partition_distribute_share takes: owned rows by
 * module and id, bond ghosts (the partners held by other ranks' shares) by module, owner and id with their ids
 * only; blocks[m] (module m's, rows set) receive its STATE rows; bonds as local indices with their broken flags
 * in *broken; mem_mine[q] the memories' rows (kinds->n_lists of them; NULL when none); *ghost_owner (allocated,
 * the caller frees) the rank whose share holds each bond ghost.  release(ctx) (may be NULL) is called as soon
 * as the share's arrays are no longer read, so that they never coexist with the migration's.  Returns 0. */
int shard_partition_share_store(shard_comm *c, shard_share *in, void (*release)(void *ctx), void *ctx,
                                const shard_partition_kinds *kinds, shard_particles *p, shard_block *blocks,
                                shard_csr *bonds, uint8_t **broken, shard_pairlist *mem_mine, int32_t **ghost_owner);

struct shard_migrate_stats;
/* Collective: the start-up partition of the shares (particles [0, n_owned) of p, with their bonds) into nparts
 * parts: part[i] for every owned particle.  Zoltan's recursive coordinate bisection of the rest positions with
 * weight 1 + bonds.  0, or the same error on every rank. */
int shard_partition_share(shard_comm *c, const shard_particles *p, const shard_csr *bonds, int nparts, int32_t *part,
                          shard_error *err);
/* Collective: where[n_owned + q] for every bond ghost q of a share's store (ghost_owner[q]: the rank whose share
 * holds it) becomes where[] of that particle on its holder: requests (asker, gid) go to the holder, answers
 * (gid, value) come back.  where[0 .. n_owned) are this rank's answers. */
void shard_partition_ghost_where(shard_comm *c, const shard_particles *p, const int32_t *ghost_owner, double *where);
/* Collective.  The start-up and restart distribution of a share's store (shard_partition_share_store): the
 * shares are partitioned (shard_partition_share), the new owner of every bond ghost is asked of its holder, and
 * the particles migrate to their parts (migrate.h).  Every rank's store ends as a migration leaves it: owned
 * particles by module and id, bond ghosts by module, owner and id with their GHOST rows, halos[m] for every
 * module with has_halo[m] (NULL otherwise), lists[q] with its owned rows.  On one rank nothing moves and the
 * store is kept as it is.  *edge_cut: bonds cut, each once; *stats: what the migration moved.  Returns 0, or
 * the same error on every rank when the partitioner fails. */
int shard_partition_distribute_share(shard_comm *c, const shard_partition_kinds *kinds, const int32_t *ghost_owner,
                                     shard_particles *p, shard_block *blocks, shard_csr *bonds, uint8_t **broken,
                                     shard_halo **halos, shard_pairlist *lists, int64_t *edge_cut,
                                     struct shard_migrate_stats *stats, shard_error *err);

#endif
