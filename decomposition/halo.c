/* Halo exchange plans over MPI-3 neighbourhood collectives (see halo.h). */
#include "halo_impl.h"

#include <stdlib.h>
#include <string.h>

/* Copies the lists into h (growing its arrays); the graph communicator is left alone. */
static void shard_halo_set_lists(shard_halo *h, int n_nbr, const int *nbr, const int *send_count,
                                 const int32_t *send_idx, const int *recv_count, size_t recv_first)
{
    if (n_nbr > h->cap_nbr || !h->nbr) {
        size_t m = (size_t)(n_nbr > 0 ? n_nbr : 1);
        h->cap_nbr = (int)m;
        h->nbr = shard_realloc(h->nbr, m * sizeof *h->nbr);
        h->send_count = shard_realloc(h->send_count, m * sizeof(int));
        h->send_displ = shard_realloc(h->send_displ, m * sizeof(int));
        h->recv_count = shard_realloc(h->recv_count, m * sizeof(int));
        h->recv_displ = shard_realloc(h->recv_displ, m * sizeof(int));
        h->sc = shard_realloc(h->sc, m * sizeof(int)), h->sd = shard_realloc(h->sd, m * sizeof(int));
        h->rc = shard_realloc(h->rc, m * sizeof(int)), h->rd = shard_realloc(h->rd, m * sizeof(int));
    }
    h->n_nbr = n_nbr;
    h->n_send = h->n_recv = 0;
    for (int k = 0; k < n_nbr; k++) {
        h->nbr[k] = nbr[k];
        h->send_count[k] = send_count[k], h->recv_count[k] = recv_count[k];
        h->send_displ[k] = (int)h->n_send, h->recv_displ[k] = (int)h->n_recv;
        h->n_send += (size_t)send_count[k];
        h->n_recv += (size_t)recv_count[k];
    }
    shard_reserve((void **)&h->send_idx, &h->cap_send, h->n_send + 1, sizeof *h->send_idx);
    if (h->n_send)
        memcpy(h->send_idx, send_idx, h->n_send * sizeof *send_idx);
    h->recv_first = recv_first;
}

static void shard_halo_make_graph(shard_halo *h)
{
    shard_comm *c = h->comm;
    SHARD_MPI(c, MPI_Dist_graph_create_adjacent(c->world, h->n_nbr, h->nbr, MPI_UNWEIGHTED, h->n_nbr, h->nbr,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &h->graph));
    SHARD_MPI(c, MPI_Comm_set_errhandler(h->graph, MPI_ERRORS_RETURN));
    h->graphs++;
}

shard_halo *shard_halo_create(shard_comm *c, int n_nbr, const int *nbr, const int *send_count, const int32_t *send_idx,
                              const int *recv_count, size_t recv_first)
{
    shard_halo *h = shard_calloc(1, sizeof *h);
    h->comm = c;
    h->graph = MPI_COMM_NULL;
    h->req = MPI_REQUEST_NULL;
    shard_halo_set_lists(h, n_nbr, nbr, send_count, send_idx, recv_count, recv_first);
    shard_halo_make_graph(h);
    return h;
}

void shard_halo_update(shard_halo **hp, shard_comm *c, int n_nbr, const int *nbr, const int *send_count,
                       const int32_t *send_idx, const int *recv_count, size_t recv_first)
{
    if (!*hp) {
        *hp = shard_halo_create(c, n_nbr, nbr, send_count, send_idx, recv_count, recv_first);
        return;
    }
    shard_halo *h = *hp;
    int changed = n_nbr != h->n_nbr || (n_nbr > 0 && memcmp(nbr, h->nbr, (size_t)n_nbr * sizeof *nbr) != 0);
    /* Creating a graph communicator is collective over every rank: all re-create it if any rank must. */
    SHARD_MPI(c, MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_MAX, c->world));
    shard_halo_set_lists(h, n_nbr, nbr, send_count, send_idx, recv_count, recv_first);
    if (changed) {
        SHARD_MPI(c, MPI_Comm_free(&h->graph));
        shard_halo_make_graph(h);
    }
}

shard_halo_field shard_halo_field_of(const shard_halo *h, double *data, int ncomp)
{
    return (shard_halo_field){.data = data, .ncomp = ncomp, .send_base = 0, .recv_at = h ? h->recv_first : 0};
}

void shard_halo_forward_begin(shard_halo *h, int n_fields, const shard_halo_field *fields)
{
    int width = 0;
    for (int f = 0; f < n_fields; f++)
        width += fields[f].ncomp;
    shard_reserve((void **)&h->sbuf, &h->sbuf_cap, h->n_send * (size_t)width + 1, sizeof *h->sbuf);
    shard_reserve((void **)&h->rbuf, &h->rbuf_cap, h->n_recv * (size_t)width + 1, sizeof *h->rbuf);
    double *s = h->sbuf;
    for (size_t q = 0; q < h->n_send; q++) {
        size_t i = (size_t)h->send_idx[q];
        for (int f = 0; f < n_fields; f++) {
            const double *src = fields[f].data + (size_t)fields[f].ncomp * (i - fields[f].send_base);
            for (int k = 0; k < fields[f].ncomp; k++)
                *s++ = src[k];
        }
    }
    for (int k = 0; k < h->n_nbr; k++) {
        h->sc[k] = h->send_count[k] * width, h->sd[k] = h->send_displ[k] * width;
        h->rc[k] = h->recv_count[k] * width, h->rd[k] = h->recv_displ[k] * width;
    }
    SHARD_MPI(h->comm, MPI_Ineighbor_alltoallv(h->sbuf, h->sc, h->sd, MPI_DOUBLE, h->rbuf, h->rc, h->rd, MPI_DOUBLE,
                                               h->graph, &h->req));
    h->bytes += h->n_send * (size_t)width * sizeof(double);
}

void shard_halo_forward_end(shard_halo *h, int n_fields, const shard_halo_field *fields)
{
    SHARD_MPI(h->comm, MPI_Wait(&h->req, MPI_STATUS_IGNORE));
    const double *r = h->rbuf;
    for (size_t q = 0; q < h->n_recv; q++)
        for (int f = 0; f < n_fields; f++) {
            double *dst = fields[f].data + (size_t)fields[f].ncomp * (fields[f].recv_at + q);
            for (int k = 0; k < fields[f].ncomp; k++)
                dst[k] = *r++;
        }
}

void shard_halo_forward(shard_halo *h, int n_fields, const shard_halo_field *fields)
{
    shard_halo_forward_begin(h, n_fields, fields);
    shard_halo_forward_end(h, n_fields, fields);
}

void shard_halo_forward_rows(shard_halo *h, int n_arrays, const shard_halo_rows *rows)
{
    size_t width = 0;
    for (int a = 0; a < n_arrays; a++)
        width += rows[a].row_bytes;
    unsigned char *sbuf = shard_malloc(h->n_send * width + 1), *rbuf = shard_malloc(h->n_recv * width + 1);
    unsigned char *s = sbuf;
    for (size_t q = 0; q < h->n_send; q++) {
        size_t i = (size_t)h->send_idx[q];
        for (int a = 0; a < n_arrays; a++) {
            memcpy(s, (const unsigned char *)rows[a].data + (i - rows[a].send_base) * rows[a].row_bytes,
                   rows[a].row_bytes);
            s += rows[a].row_bytes;
        }
    }
    int n = h->n_nbr > 0 ? h->n_nbr : 1;
    int *sc = shard_malloc((size_t)n * sizeof *sc), *sd = shard_malloc((size_t)n * sizeof *sd);
    int *rc = shard_malloc((size_t)n * sizeof *rc), *rd = shard_malloc((size_t)n * sizeof *rd);
    for (int k = 0; k < h->n_nbr; k++) {
        if ((size_t)h->send_displ[k] * width + (size_t)h->send_count[k] * width > (size_t)INT32_MAX ||
            (size_t)h->recv_displ[k] * width + (size_t)h->recv_count[k] * width > (size_t)INT32_MAX)
            shard_fail_one(h->comm, SHARD_EXIT_INTERNAL, "halo rows of %zu bytes exceed MPI's int counts", width);
        sc[k] = h->send_count[k] * (int)width, sd[k] = h->send_displ[k] * (int)width;
        rc[k] = h->recv_count[k] * (int)width, rd[k] = h->recv_displ[k] * (int)width;
    }
    SHARD_MPI(h->comm, MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_BYTE, rbuf, rc, rd, MPI_BYTE, h->graph));
    h->bytes += h->n_send * width;
    const unsigned char *r = rbuf;
    for (size_t q = 0; q < h->n_recv; q++)
        for (int a = 0; a < n_arrays; a++) {
            memcpy((unsigned char *)rows[a].data + (rows[a].recv_at + q) * rows[a].row_bytes, r, rows[a].row_bytes);
            r += rows[a].row_bytes;
        }
    free(sbuf), free(rbuf), free(sc), free(sd), free(rc), free(rd);
}

void shard_halo_destroy(shard_halo **hp)
{
    if (!hp || !*hp)
        return;
    shard_halo *h = *hp;
    if (h->graph != MPI_COMM_NULL)
        SHARD_MPI(h->comm, MPI_Comm_free(&h->graph));
    free(h->nbr), free(h->send_count), free(h->send_displ), free(h->recv_count), free(h->recv_displ);
    free(h->sc), free(h->sd), free(h->rc), free(h->rd), free(h->send_idx), free(h->sbuf), free(h->rbuf);
    free(h);
    *hp = NULL;
}

uint64_t shard_halo_bytes(const shard_halo *h) { return h ? h->bytes : 0; }
long shard_halo_graphs(const shard_halo *h) { return h ? h->graphs : 0; }
