/* Partition: METIS k-way partitioning of the particle graph and the start-up distribution of particles.
 *
 * At start-up (and on a restart, from a checkpoint) rank 0 holds the whole run and its reference bonds; it
 * partitions the bond graph with METIS (vertex weight 1 + bond count, the cost of a particle in the solid
 * kernels) for the current number of ranks and sends every rank its owned particles with every state row of the
 * particle registry (particles.h), their bonds and the bond ghosts they need.  Each rank then derives its halo send lists from
 * its own bonds: bonds are symmetric, so rank q needs my particle i exactly when i has a partner owned by q.
 * docs/architecture.md gives the sizes up to which one rank can do this.
 */
#ifndef SHARD_PARTITION_H
#define SHARD_PARTITION_H

#include "shard/halo.h"
#include "shard/particles.h"

/* Partitions the graph (CSR with global ids) into nparts parts; part[i] receives the part of vertex i.
 * Returns the edge cut (number of cut bonds, each counted once).  Local (no MPI); deterministic. */
int64_t shard_partition_graph(size_t n, const shard_csr *graph, int nparts, int32_t *part);

/* Collective.  The start-up and restart distribution.  Rank 0 passes the whole run: `all` holds every particle
 * with row = global id (all->n_owned rows) in the registry rows that have SHARD_FIELD_STATE (particles.h; the
 * gid array itself is not read); a NULL array is sent as zeros.  g is the bond graph (rows = global ids,
 * entries = partner global ids, sorted) and g_broken its per-bond broken flags (NULL: none broken).  Other
 * ranks pass NULL for all three.  Every rank receives its owned particles in increasing global id, then its
 * bond ghosts (by owner rank, then global id) with their SHARD_FIELD_GHOST rows, its bonds as local indices
 * (rows in increasing partner id) with their broken flags in *broken (reallocated; may be NULL to skip), and
 * the bond halo plan.  x_build = x for owned particles.  The partition is METIS's for the current rank count,
 * so a restart on any number of ranks goes through here too. */
void shard_partition_distribute(shard_comm *c, const shard_particles *all, const shard_csr *g,
                                const uint8_t *g_broken, shard_particles *p, shard_csr *bonds, uint8_t **broken,
                                shard_halo **halo, int64_t *edge_cut);

#endif
