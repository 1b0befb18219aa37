/* Partition report: `shard partition SCENE --ranks P`, the cost of running a scene on P ranks, without running
 * it.  Samples and bonds the scene, partitions the bond graph with METIS exactly as a run on P ranks would,
 * and prints owned and ghost counts, edge cut, halo bytes per step, imbalance and neighbour ranks.
 */
#ifndef SHARD_PARTITION_REPORT_H
#define SHARD_PARTITION_REPORT_H

#include "shard/comm.h"

typedef struct shard_partition_opts {
    const char *scene;
    int nparts;
    const char *csv;    /* per-rank CSV file, or NULL */
    int per_rank;       /* print one line per rank */
} shard_partition_opts;

/* Collective (rank 0 does the work; the others wait for its verdict).  Returns 0, or an error code with err
 * filled on every rank. */
int shard_partition_report(shard_comm *c, const shard_partition_opts *o, shard_error *err);

#endif
