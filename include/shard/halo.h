/* Halo: exchange plans between a rank and the ranks whose particles it holds as ghosts.
 *
 * A plan lists, per neighbour rank, which owned particles are sent (local indices, increasing global id) and
 * the contiguous ghost slots the neighbour's particles land in.  Exchanges are MPI-3 neighbourhood
 * collectives (MPI_Neighbor_alltoallv) over a distributed graph topology created once per plan; buffers grow
 * on the first exchanges and are then reused.  Plans are built at start-up (bond ghosts) and on Verlet-skin
 * rebuilds (contact ghosts).
 */
#ifndef SHARD_HALO_H
#define SHARD_HALO_H

#include "shard/comm.h"

typedef struct shard_halo shard_halo;

/* Collective over all ranks.  nbr: n_nbr neighbour ranks (increasing); send_count[k] entries of send_idx (in
 * neighbour order) go to nbr[k]; recv_count[k] ghosts from nbr[k] land in slots starting at recv_first, in
 * neighbour order.  The plan copies the lists. */
shard_halo *shard_halo_create(shard_comm *c, int n_nbr, const int *nbr, const int *send_count,
                              const int32_t *send_idx, const int *recv_count, size_t recv_first);
/* Collective over the neighbourhood: copies fields[f][ncomp[f] * i + k] of sent particles into the ghost slots
 * of the receivers. */
void shard_halo_forward(shard_halo *h, int n_fields, double *const *fields, const int *ncomp);
/* The same exchange in two halves, so that work which needs no ghost can run in between: begin packs and
 * posts a non-blocking MPI_Ineighbor_alltoallv, end waits and unpacks into the ghost slots.  The fields must
 * not change between the two calls.  Collective over the neighbourhood. */
void shard_halo_forward_begin(shard_halo *h, int n_fields, double *const *fields, const int *ncomp);
void shard_halo_forward_end(shard_halo *h, int n_fields, double *const *fields, const int *ncomp);
void shard_halo_destroy(shard_halo **h);

int shard_halo_n_neighbors(const shard_halo *h);
size_t shard_halo_n_ghosts(const shard_halo *h);
size_t shard_halo_n_sent(const shard_halo *h);
/* Bytes this rank has sent through the plan so far. */
uint64_t shard_halo_bytes(const shard_halo *h);

#endif
