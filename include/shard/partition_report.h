/* Partition report: `shard partition SCENE --ranks P`, the cost of running a scene on P ranks, without running
 * it.  Samples and bonds the scene as the run's start-up does, spread over the processes it runs on (any
 * number: one, or as many as fit the scene's memory), partitions it into P parts as a run on P ranks would
 * (recursive coordinate bisection, partition.h), and prints owned and ghost counts, edge cut, halo bytes per
 * step, imbalance and neighbour ranks.  Run on P processes, it finds exactly the run's partition; on fewer, the
 * same method's cuts, which may differ from the run's in the last lattice plane of a cut.
 */
#ifndef SHARD_PARTITION_REPORT_H
#define SHARD_PARTITION_REPORT_H

#ifndef SHARD_LAYER_DRIVER
#error "shard/partition_report.h is a driver header: only its layer and the layers above it (the CLI) include it"
#endif

#include "shard/comm.h"

typedef struct shard_partition_opts {
    const char *scene;
    int nparts;
    const char *csv; /* per-rank CSV file, or NULL */
    int per_rank;    /* print one line per rank */
} shard_partition_opts;

/* Collective (rank 0 prints).  Returns 0, or an error code with err filled on every rank. */
int shard_partition_report(shard_comm *c, const shard_partition_opts *o, shard_error *err);

#endif
