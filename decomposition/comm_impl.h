/* Private to decomposition/: the communicator record and the MPI return-code check. */
#ifndef SHARD_COMM_IMPL_H
#define SHARD_COMM_IMPL_H

#include "shard/comm.h"

#include <mpi.h>

struct shard_comm {
    MPI_Comm world;
    int rank, size;
};

/* Checks an MPI return code; on failure prints the MPI error string and aborts every rank. */
void shard_mpi_check_at(shard_comm *c, int rc, const char *call, const char *file, int line);
#define SHARD_MPI(c, call) shard_mpi_check_at((c), (call), #call, __FILE__, __LINE__)

/* Sends / receives `bytes` bytes in chunks below 2^31 (MPI counts are int). */
void shard_mpi_send_big(shard_comm *c, const void *buf, size_t bytes, int dest, int tag);
void shard_mpi_recv_big(shard_comm *c, void *buf, size_t bytes, int src, int tag);

#endif
