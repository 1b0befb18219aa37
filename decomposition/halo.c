/* Halo exchange plans over MPI-3 neighbourhood collectives (see halo.h). */
#include "halo_impl.h"

#include <stdlib.h>
#include <string.h>

shard_halo *shard_halo_create(shard_comm *c, int n_nbr, const int *nbr, const int *send_count,
                              const int32_t *send_idx, const int *recv_count, size_t recv_first)
{
    shard_halo *h = shard_calloc(1, sizeof *h);
    h->comm = c;
    h->n_nbr = n_nbr;
    size_t m = (size_t)(n_nbr > 0 ? n_nbr : 1);
    h->nbr = shard_malloc(m * sizeof *h->nbr);
    h->send_count = shard_malloc(m * sizeof(int)), h->send_displ = shard_malloc(m * sizeof(int));
    h->recv_count = shard_malloc(m * sizeof(int)), h->recv_displ = shard_malloc(m * sizeof(int));
    h->sc = shard_malloc(m * sizeof(int)), h->sd = shard_malloc(m * sizeof(int));
    h->rc = shard_malloc(m * sizeof(int)), h->rd = shard_malloc(m * sizeof(int));
    for (int k = 0; k < n_nbr; k++) {
        h->nbr[k] = nbr[k];
        h->send_count[k] = send_count[k], h->recv_count[k] = recv_count[k];
        h->send_displ[k] = (int)h->n_send, h->recv_displ[k] = (int)h->n_recv;
        h->n_send += (size_t)send_count[k];
        h->n_recv += (size_t)recv_count[k];
    }
    h->send_idx = shard_malloc((h->n_send ? h->n_send : 1) * sizeof *h->send_idx);
    if (h->n_send)
        memcpy(h->send_idx, send_idx, h->n_send * sizeof *send_idx);
    h->recv_first = recv_first;
    h->req = MPI_REQUEST_NULL;
    SHARD_MPI(c, MPI_Dist_graph_create_adjacent(c->world, n_nbr, h->nbr, MPI_UNWEIGHTED, n_nbr, h->nbr,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &h->graph));
    MPI_Comm_set_errhandler(h->graph, MPI_ERRORS_RETURN);
    return h;
}

void shard_halo_forward_begin(shard_halo *h, int n_fields, double *const *fields, const int *ncomp)
{
    int width = 0;
    for (int f = 0; f < n_fields; f++)
        width += ncomp[f];
    shard_reserve((void **)&h->sbuf, &h->sbuf_cap, h->n_send * (size_t)width + 1, sizeof *h->sbuf);
    shard_reserve((void **)&h->rbuf, &h->rbuf_cap, h->n_recv * (size_t)width + 1, sizeof *h->rbuf);
    double *s = h->sbuf;
    for (size_t q = 0; q < h->n_send; q++) {
        size_t i = (size_t)h->send_idx[q];
        for (int f = 0; f < n_fields; f++)
            for (int k = 0; k < ncomp[f]; k++)
                *s++ = fields[f][(size_t)ncomp[f] * i + (size_t)k];
    }
    for (int k = 0; k < h->n_nbr; k++) {
        h->sc[k] = h->send_count[k] * width, h->sd[k] = h->send_displ[k] * width;
        h->rc[k] = h->recv_count[k] * width, h->rd[k] = h->recv_displ[k] * width;
    }
    SHARD_MPI(h->comm, MPI_Ineighbor_alltoallv(h->sbuf, h->sc, h->sd, MPI_DOUBLE, h->rbuf, h->rc, h->rd,
                                               MPI_DOUBLE, h->graph, &h->req));
    h->bytes += h->n_send * (size_t)width * sizeof(double);
}

void shard_halo_forward_end(shard_halo *h, int n_fields, double *const *fields, const int *ncomp)
{
    SHARD_MPI(h->comm, MPI_Wait(&h->req, MPI_STATUS_IGNORE));
    const double *r = h->rbuf;
    for (size_t q = 0; q < h->n_recv; q++) {
        size_t i = h->recv_first + q;
        for (int f = 0; f < n_fields; f++)
            for (int k = 0; k < ncomp[f]; k++)
                fields[f][(size_t)ncomp[f] * i + (size_t)k] = *r++;
    }
}

void shard_halo_forward(shard_halo *h, int n_fields, double *const *fields, const int *ncomp)
{
    shard_halo_forward_begin(h, n_fields, fields, ncomp);
    shard_halo_forward_end(h, n_fields, fields, ncomp);
}

void shard_halo_destroy(shard_halo **hp)
{
    if (!hp || !*hp)
        return;
    shard_halo *h = *hp;
    if (h->graph != MPI_COMM_NULL)
        MPI_Comm_free(&h->graph);
    free(h->nbr), free(h->send_count), free(h->send_displ), free(h->recv_count), free(h->recv_displ);
    free(h->sc), free(h->sd), free(h->rc), free(h->rd), free(h->send_idx), free(h->sbuf), free(h->rbuf);
    free(h);
    *hp = NULL;
}

int shard_halo_n_neighbors(const shard_halo *h) { return h ? h->n_nbr : 0; }
size_t shard_halo_n_ghosts(const shard_halo *h) { return h ? h->n_recv : 0; }
size_t shard_halo_n_sent(const shard_halo *h) { return h ? h->n_send : 0; }
uint64_t shard_halo_bytes(const shard_halo *h) { return h ? h->bytes : 0; }
