/* Halo: exchange plans between a rank and the ranks whose particles it holds as ghosts.
 *
 * A plan lists, per neighbour rank, which owned particles are sent (local indices, increasing global id) and
 * the contiguous ghost slots the neighbour's particles land in.  Exchanges are MPI-3 neighbourhood
 * collectives (MPI_Neighbor_alltoallv) over a distributed graph topology; buffers grow on the first exchanges
 * and are then reused.  Plans are built at start-up (one per matter module with bonds: bond ghosts) and
 * updated on Verlet-skin rebuilds (contact ghosts), where the graph communicator is kept unless some rank's set
 * of neighbours changed.  Every byte a plan sends is counted, set-up messages of the rebuilds included.
 */
#ifndef SHARD_HALO_H
#define SHARD_HALO_H

#ifndef SHARD_LAYER_DECOMPOSITION
#error "shard/halo.h is a decomposition header: only its layer and the layers above it (io and the driver) include it"
#endif

#include "shard/comm.h"

typedef struct shard_halo shard_halo;

/* One array exchanged through a plan.  Sent particle i (a local index) is read at element i - send_base;
 * ghost q of the plan (q = 0 .. n_ghosts - 1, in neighbour order) is written at element recv_at + q.  For an
 * array of the particle store send_base = 0 and recv_at = the plan's first ghost slot (shard_halo_field);
 * a module block maps owned and ghost slots its own way. */
typedef struct shard_halo_field {
    double *data;
    int ncomp;
    size_t send_base, recv_at;
} shard_halo_field;

/* Collective over all ranks.  nbr: n_nbr neighbour ranks (increasing); send_count[k] entries of send_idx (in
 * neighbour order) go to nbr[k]; recv_count[k] ghosts from nbr[k] land in slots starting at recv_first, in
 * neighbour order.  The plan copies the lists. */
shard_halo *shard_halo_create(shard_comm *c, int n_nbr, const int *nbr, const int *send_count, const int32_t *send_idx,
                              const int *recv_count, size_t recv_first);
/* Collective over all ranks: replaces the lists of *h (creating it when NULL).  The graph communicator is
 * re-created only when some rank's neighbour set differs from the plan's; buffers and the byte count are
 * kept. */
void shard_halo_update(shard_halo **h, shard_comm *c, int n_nbr, const int *nbr, const int *send_count,
                       const int32_t *send_idx, const int *recv_count, size_t recv_first);

/* An array of the particle store (send_base 0, recv_at the plan's first ghost slot). */
shard_halo_field shard_halo_field_of(const shard_halo *h, double *data, int ncomp);

/* Collective over the neighbourhood: copies the sent particles' values into the ghosts of the receivers. */
void shard_halo_forward(shard_halo *h, int n_fields, const shard_halo_field *fields);
/* The same exchange in two halves, so that work which needs no ghost can run in between: begin packs and
 * posts a non-blocking MPI_Ineighbor_alltoallv, end waits and unpacks.  The fields must not change between
 * the two calls.  Collective over the neighbourhood. */
void shard_halo_forward_begin(shard_halo *h, int n_fields, const shard_halo_field *fields);
void shard_halo_forward_end(shard_halo *h, int n_fields, const shard_halo_field *fields);
/* One array of any element type exchanged through a plan: row_bytes per particle, indexed like
 * shard_halo_field (sent particle i at row i - send_base, ghost q at row recv_at + q). */
typedef struct shard_halo_rows {
    void *data;
    size_t row_bytes;
    size_t send_base, recv_at;
} shard_halo_rows;
/* Collective over the neighbourhood: copies the sent particles' rows of every array into the receivers'
 * ghosts (the migration fills its bond ghosts' registry rows with it). */
void shard_halo_forward_rows(shard_halo *h, int n_arrays, const shard_halo_rows *rows);

/* Collective; NULL-safe; nulls the pointer. */
void shard_halo_destroy(shard_halo **h);

/* Bytes this rank has sent through the plan so far (0 for NULL). Local. */
uint64_t shard_halo_bytes(const shard_halo *h);
/* Graph communicators created for the plan so far (1 + re-creations by shard_halo_update). Local. */
long shard_halo_graphs(const shard_halo *h);

#endif
