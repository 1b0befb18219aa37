/* Partition statistics: what a partition of the particle graph costs each rank, computed without running
 * (`shard partition SCENE --ranks P`) so that runs far larger than this machine can be planned.  The graph may
 * be held by one process (shard_part_stats_compute) or spread over the ranks of a run
 * (shard_part_stats_compute_dist: memory per rank O(its particles + its cut bonds), 64-bit counts throughout).
 *
 * For each part: owned particles, bond ghosts (distinct partners owned by other parts), neighbour parts (the
 * owners of those ghosts), and the halo volume of one step: every bond ghost receives x and v (6 doubles) and
 * B (9 doubles), 120 bytes.  Contact ghosts depend on the motion and are not counted.
 */
#ifndef SHARD_PARTITION_STATS_H
#define SHARD_PARTITION_STATS_H

#ifndef SHARD_LAYER_DECOMPOSITION
#error                                                                                                                 \
    "shard/partition_stats.h is a decomposition header: only its layer and the layers above it (io and the driver) include it"
#endif

#include "shard/particles.h"

typedef struct shard_part_stats {
    int nparts;
    int64_t *owned;     /* nparts */
    int64_t *ghosts;    /* nparts: bond ghosts */
    int64_t *neighbors; /* nparts: neighbour parts */
    int64_t *bonds;     /* nparts: bonds of owned particles (the solid's work) */
    int64_t edge_cut;   /* bonds between parts, each counted once */
} shard_part_stats;

enum { SHARD_HALO_BYTES_PER_GHOST = (6 + 9) * 8 };

/* Statistics of `part` over the graph (CSR of n vertices with global ids). Local. */
void shard_part_stats_compute(size_t n, const shard_csr *graph, int nparts, const int32_t *part, shard_part_stats *st);
/* Collective: the same for a graph spread over the ranks: p's owned particles [0, n_owned) and their bonds
 * (local indices into owned particles and bond ghosts, whose global ids p->gid holds), part[i] the part of
 * every local particle (owned and bond ghosts, as doubles).  Every rank gets the whole statistics. */
struct shard_comm;
void shard_part_stats_compute_dist(struct shard_comm *c, const shard_particles *p, const shard_csr *bonds,
                                   const double *part, int nparts, shard_part_stats *st);
void shard_part_stats_free(shard_part_stats *st);

#endif
