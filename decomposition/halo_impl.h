/* Private to decomposition/: the halo plan record. */
#ifndef SHARD_HALO_IMPL_H
#define SHARD_HALO_IMPL_H

#include "comm_impl.h"
#include "shard/halo.h"

struct shard_halo {
    shard_comm *comm;
    MPI_Comm graph;
    int n_nbr, cap_nbr;
    int *nbr;
    int *send_count, *send_displ; /* in particles */
    int *recv_count, *recv_displ;
    int32_t *send_idx;
    size_t cap_send;
    size_t n_send, n_recv, recv_first;
    double *sbuf, *rbuf;
    size_t sbuf_cap, rbuf_cap;
    int *sc, *sd, *rc, *rd; /* counts and displacements in doubles for the current field set */
    uint64_t bytes;
    long graphs;
    MPI_Request req; /* the exchange begun by shard_halo_forward_begin */
};

#endif
