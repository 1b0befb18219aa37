/* Partition: METIS k-way partitioning of the particle graph and the start-up distribution of particles.
 *
 * At start-up rank 0 holds the whole sampled scene and its reference bonds; it partitions the bond graph with
 * METIS (vertex weight 1 + bond count, the cost of a particle in the solid kernels) and sends every rank its
 * owned particles, their bonds and the bond ghosts they need.  Each rank then derives its halo send lists from
 * its own bonds: bonds are symmetric, so rank q needs my particle i exactly when i has a partner owned by q.
 * docs/architecture.md gives the sizes up to which one rank can do this.
 */
#ifndef SHARD_PARTITION_H
#define SHARD_PARTITION_H

#include "shard/halo.h"
#include "shard/particles.h"
#include "shard/sample.h"

/* Partitions the graph (CSR with global ids) into nparts parts; part[i] receives the part of vertex i.
 * Returns the edge cut (number of cut bonds, each counted once).  Local (no MPI); deterministic. */
int64_t shard_partition_graph(size_t n, const shard_csr *graph, int nparts, int32_t *part);

/* Collective.  Rank 0 passes the sampled scene and its bonds (global ids); other ranks pass NULL.  Every rank
 * receives its owned particles in increasing global id, then its bond ghosts (by owner rank, then global id),
 * its bonds as local indices (rows in increasing partner id), and the bond halo plan.  x = X at start. */
void shard_partition_distribute(shard_comm *c, const shard_sampled *s, const shard_csr *g, shard_particles *p,
                                shard_csr *bonds, shard_halo **halo, int64_t *edge_cut);

#endif
