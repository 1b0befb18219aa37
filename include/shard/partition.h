/* Partition: METIS k-way partitioning of the particle graph and the start-up distribution of particles.
 *
 * At start-up (and on a restart, from a checkpoint) rank 0 holds the whole run and its reference bonds; it
 * partitions the bond graph with METIS (vertex weight 1 + bond count, the cost of a particle in the solid
 * kernels) for the current number of ranks and sends every rank its owned particles with every state row of the
 * particle registry (particles.h) and of their matter module's block, their bonds and the bond ghosts they
 * need.  Each rank then derives its halo send lists from its own bonds: bonds are symmetric, so rank q needs
 * my particle i exactly when i has a partner owned by q.  There is one halo plan per matter module that has
 * bonds (bonds join particles of one body, hence of one module).  docs/architecture.md gives the sizes up to
 * which one rank can do this.
 */
#ifndef SHARD_PARTITION_H
#define SHARD_PARTITION_H

#include "shard/halo.h"
#include "shard/pairlist.h"
#include "shard/particles.h"

/* Partitions the graph (CSR with global ids) into nparts parts; part[i] receives the part of vertex i and
 * *edge_cut the number of cut bonds (each counted once).  Returns 0, or SHARD_EXIT_INTERNAL with err filled
 * when METIS fails (out of memory, or a graph it rejects).  Local (no MPI); deterministic. */
int shard_partition_graph(size_t n, const shard_csr *graph, int nparts, int32_t *part, int64_t *edge_cut,
                          shard_error *err);

/* How particles are grouped by kind of matter: the module of every body, and per module its block (rows and
 * counts).  The same on every rank. */
typedef struct shard_partition_kinds {
    int n_modules;
    const int32_t *body_module;   /* n_bodies entries: module index of each body */
    const int *has_halo;          /* per module: 1 when its bodies have bonds (a halo plan is created) */
    int n_lists;                  /* pair lists (the memories of force terms) */
    const shard_pairlist *all_lists; /* rank 0: n_lists lists with row = global id (n = 0: empty); others: NULL */
} shard_partition_kinds;

/* Collective.  The start-up and restart distribution.  Rank 0 passes the whole run: `all` holds every particle
 * with row = global id (all->n_owned rows) in the registry rows that have SHARD_FIELD_STATE (the gid array
 * itself is not read; a NULL array is sent as zeros), and all_blocks[m] the STATE rows of module m's block,
 * also with row = global id (NULL columns, or all_blocks NULL: zeros).  g is the bond graph (rows = global ids,
 * entries = partner global ids, sorted) and g_broken its per-bond broken flags (NULL: none broken).  Other
 * ranks pass NULL for all four.  Every rank receives its owned particles grouped by module (in module order)
 * and by increasing global id inside a module, then its bond ghosts grouped by module, then by owner rank and
 * global id, with their SHARD_FIELD_GHOST rows; blocks[m] (rows set by the caller with shard_block_init) sized
 * to module m's owned particles and ghosts with its STATE rows filled; its bonds as local indices (rows in
 * increasing partner id) with their broken flags in *broken (reallocated; may be NULL to skip); and halos[m]
 * for every module with has_halo[m] (NULL otherwise), and lists[q] (width set by the caller) with the rows of its
 * owned particles from kinds->all_lists[q].  x_build = x for owned particles.  The partition is
 * METIS's for the current rank count, so a restart on any number of ranks goes through here too.  Returns 0, or
 * the same error on every rank when METIS fails. */
int shard_partition_distribute(shard_comm *c, const shard_partition_kinds *kinds, const shard_particles *all,
                               const shard_block *all_blocks, const shard_csr *g, const uint8_t *g_broken,
                               shard_particles *p, shard_block *blocks, shard_csr *bonds, uint8_t **broken,
                               shard_halo **halos, shard_pairlist *lists, int64_t *edge_cut, shard_error *err);

#endif
