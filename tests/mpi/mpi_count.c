/* A PMPI interposer (tests only): counts, per rank, the bytes this process hands MPI in the calls that carry
 * Shard's halo traffic, so that the run's own "halo bytes sent" can be checked against a count it did not make.
 * Loaded into the ranks with LD_PRELOAD (mpiexec -x LD_PRELOAD=libmpi_count.so); each wrapper adds the bytes
 * and calls the PMPI_ entry.  At MPI_Finalize every rank prints
 *   mpi_count rank R: isend B1 neighbor B2 allgather B3 send B4
 * where allgather counts this rank's block once per other rank (what it sends; MPI_Allgatherv too), and send
 * (blocking point to point) is reported but is not halo traffic.  Between MPI_Pcontrol(0) and MPI_Pcontrol(1)
 * nothing is counted: Shard brackets its start-up distribution so (comm.h, shard_comm_profile), whose traffic
 * the end report gives apart, on its Start-up line. */
#include <mpi.h>
#include <stdio.h>

static unsigned long long mpi_count_isend, mpi_count_neighbor, mpi_count_allgather, mpi_count_send;
static int mpi_count_off;

int MPI_Pcontrol(const int level, ...)
{
    mpi_count_off = level == 0;
    return MPI_SUCCESS;
}

static unsigned long long mpi_count_bytes(int count, MPI_Datatype t)
{
    int size = 0;
    PMPI_Type_size(t, &size);
    return mpi_count_off ? 0 : (unsigned long long)count * (unsigned long long)size;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    mpi_count_isend += mpi_count_bytes(count, t);
    return PMPI_Isend(buf, count, t, dest, tag, comm, req);
}

int MPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    mpi_count_send += mpi_count_bytes(count, t);
    return PMPI_Send(buf, count, t, dest, tag, comm);
}

static unsigned long long mpi_count_neighbours(MPI_Comm comm, const int *counts, MPI_Datatype t)
{
    int indeg = 0, outdeg = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted);
    unsigned long long b = 0;
    for (int k = 0; k < outdeg; k++)
        b += mpi_count_bytes(counts[k], t);
    return b;
}

int MPI_Ineighbor_alltoallv(const void *sbuf, const int sc[], const int sd[], MPI_Datatype st, void *rbuf,
                            const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    mpi_count_neighbor += mpi_count_neighbours(comm, sc, st);
    return PMPI_Ineighbor_alltoallv(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, req);
}

int MPI_Neighbor_alltoallv(const void *sbuf, const int sc[], const int sd[], MPI_Datatype st, void *rbuf,
                           const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
    mpi_count_neighbor += mpi_count_neighbours(comm, sc, st);
    return PMPI_Neighbor_alltoallv(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                  MPI_Comm comm)
{
    int size = 1;
    PMPI_Comm_size(comm, &size);
    /* In place, this rank's block is rcount elements of rt. */
    unsigned long long mine = sbuf == MPI_IN_PLACE ? mpi_count_bytes(rcount, rt) : mpi_count_bytes(scount, st);
    mpi_count_allgather += mine * (unsigned long long)(size - 1);
    return PMPI_Allgather(sbuf, scount, st, rbuf, rcount, rt, comm);
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rt, MPI_Comm comm)
{
    int size = 1, rank = 0;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    unsigned long long mine = sbuf == MPI_IN_PLACE ? mpi_count_bytes(rcounts[rank], rt) : mpi_count_bytes(scount, st);
    mpi_count_allgather += mine * (unsigned long long)(size - 1);
    return PMPI_Allgatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, comm);
}

int MPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "mpi_count rank %d: isend %llu neighbor %llu allgather %llu send %llu\n", rank, mpi_count_isend,
            mpi_count_neighbor, mpi_count_allgather, mpi_count_send);
    fflush(stderr);
    return PMPI_Finalize();
}
