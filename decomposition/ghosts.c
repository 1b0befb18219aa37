/* Contact ghosts (see ghosts.h). */
#include "shard/ghosts.h"

#include "halo_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct shard_ghost_record {
    int64_t gid;
    int32_t body;
    uint32_t flags;
    double mass, volume, x[3], v[3];
} shard_ghost_record;

/* Gap between two boxes along all axes; computed with the lower rank's box first so that both ranks of a pair
 * evaluate exactly the same expression and agree on being neighbours. */
static double shard_ghosts_box_gap2(const double *a, const double *b)
{
    double g2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double g = fmax(b[k] - a[3 + k], a[k] - b[3 + k]);
        if (g > 0.0)
            g2 += g * g;
    }
    return g2;
}

static double shard_ghosts_point_gap2(const double *box, const double *x)
{
    double g2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double g = fmax(box[k] - x[k], x[k] - box[3 + k]);
        if (g > 0.0)
            g2 += g * g;
    }
    return g2;
}

static int shard_ghosts_box_nonempty(const double *b) { return b[0] <= b[3]; }

/* Is owned particle i in the bond send list to rank q? (lists are sorted by local index) */
static int shard_ghosts_bond_sent(const shard_halo *bh, int q, int32_t i)
{
    int lo = 0, hi = bh->n_nbr;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (bh->nbr[mid] < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= bh->n_nbr || bh->nbr[lo] != q)
        return 0;
    const int32_t *s = bh->send_idx + bh->send_displ[lo];
    int a = 0, b = bh->send_count[lo];
    while (a < b) {
        int mid = (a + b) / 2;
        if (s[mid] < i)
            a = mid + 1;
        else
            b = mid;
    }
    return a < bh->send_count[lo] && s[a] == i;
}

void shard_ghosts_rebuild(shard_comm *c, shard_particles *p, int n_bodies, const shard_halo *bond_halo,
                          double cutoff, shard_halo **contact_halo)
{
    shard_halo_destroy(contact_halo);
    size_t n_own = p->n_owned, first = p->n_owned + p->n_bond_ghost;
    p->n_local = first;

    /* One bounding box per body of the owned particles (empty: lo > hi).  Contacts only join particles of
     * different bodies, so a particle is sent only where another body's box is near: a single-body block sends
     * no contact ghost at all. */
    size_t nb = (size_t)n_bodies, stride = 6 * nb;
    double *boxes = shard_malloc(stride * (size_t)c->size * sizeof *boxes);
    double *box = boxes + stride * (size_t)c->rank;
    for (size_t b = 0; b < nb; b++)
        for (int k = 0; k < 3; k++)
            box[6 * b + k] = INFINITY, box[6 * b + 3 + k] = -INFINITY;
    for (size_t i = 0; i < n_own; i++) {
        double *bb = box + 6 * (size_t)p->body[i];
        for (int k = 0; k < 3; k++) {
            bb[k] = fmin(bb[k], p->x[3 * i + k]);
            bb[3 + k] = fmax(bb[3 + k], p->x[3 * i + k]);
        }
    }
    SHARD_MPI(c, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, boxes, (int)stride, MPI_DOUBLE, c->world));

    /* Neighbours: some body on one rank within cutoff of another body on the other.  Evaluated with the lower
     * rank's boxes first so that both ranks of a pair compute exactly the same expression and agree. */
    double cut2 = cutoff * cutoff;
    int n_nbr = 0;
    int *nbr = shard_malloc((size_t)c->size * sizeof *nbr);
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank)
            continue;
        const double *lo = boxes + stride * (size_t)(q < c->rank ? q : c->rank);
        const double *hi = boxes + stride * (size_t)(q < c->rank ? c->rank : q);
        int near = 0;
        for (size_t a = 0; a < nb && !near; a++)
            for (size_t b = 0; b < nb && !near; b++)
                near = a != b && shard_ghosts_box_nonempty(lo + 6 * a) && shard_ghosts_box_nonempty(hi + 6 * b) &&
                       shard_ghosts_box_gap2(lo + 6 * a, hi + 6 * b) < cut2;
        if (near)
            nbr[n_nbr++] = q;
    }

    int *send_count = shard_calloc((size_t)n_nbr + 1, sizeof(int));
    int *recv_count = shard_calloc((size_t)n_nbr + 1, sizeof(int));
    int32_t *send_idx = NULL;
    size_t n_send = 0, cap = 0;
    for (int k = 0; k < n_nbr; k++) {
        const double *bq = boxes + stride * (size_t)nbr[k];
        for (size_t i = 0; i < n_own; i++) {
            int near = 0;
            for (size_t b = 0; b < nb && !near; b++)
                near = b != (size_t)p->body[i] && shard_ghosts_box_nonempty(bq + 6 * b) &&
                       shard_ghosts_point_gap2(bq + 6 * b, p->x + 3 * i) < cut2;
            if (!near || shard_ghosts_bond_sent(bond_halo, nbr[k], (int32_t)i))
                continue;
            shard_reserve((void **)&send_idx, &cap, n_send + 1, sizeof *send_idx);
            send_idx[n_send++] = (int32_t)i;
            send_count[k]++;
        }
    }
    free(boxes);

    MPI_Request *req = shard_malloc((4 * (size_t)n_nbr + 1) * sizeof *req);
    for (int k = 0; k < n_nbr; k++) {
        SHARD_MPI(c, MPI_Irecv(&recv_count[k], 1, MPI_INT, nbr[k], 200, c->world, &req[2 * k]));
        SHARD_MPI(c, MPI_Isend(&send_count[k], 1, MPI_INT, nbr[k], 200, c->world, &req[2 * k + 1]));
    }
    SHARD_MPI(c, MPI_Waitall(2 * n_nbr, req, MPI_STATUSES_IGNORE));

    size_t n_recv = 0;
    for (int k = 0; k < n_nbr; k++)
        n_recv += (size_t)recv_count[k];
    shard_ghost_record *sbuf = shard_malloc((n_send + 1) * sizeof *sbuf);
    shard_ghost_record *rbuf = shard_malloc((n_recv + 1) * sizeof *rbuf);
    for (size_t q = 0; q < n_send; q++) {
        size_t i = (size_t)send_idx[q];
        shard_ghost_record *r = &sbuf[q];
        r->gid = p->gid[i], r->body = p->body[i], r->flags = p->flags[i];
        r->mass = p->mass[i], r->volume = p->volume[i];
        memcpy(r->x, p->x + 3 * i, sizeof r->x);
        memcpy(r->v, p->v + 3 * i, sizeof r->v);
    }
    size_t so = 0, ro = 0;
    for (int k = 0; k < n_nbr; k++) {
        SHARD_MPI(c, MPI_Irecv(rbuf + ro, recv_count[k] * (int)sizeof *rbuf, MPI_BYTE, nbr[k], 201, c->world,
                               &req[2 * k]));
        SHARD_MPI(c, MPI_Isend(sbuf + so, send_count[k] * (int)sizeof *sbuf, MPI_BYTE, nbr[k], 201, c->world,
                               &req[2 * k + 1]));
        ro += (size_t)recv_count[k];
        so += (size_t)send_count[k];
    }
    SHARD_MPI(c, MPI_Waitall(2 * n_nbr, req, MPI_STATUSES_IGNORE));
    free(req);

    shard_particles_reserve(p, first + n_recv);
    for (size_t q = 0; q < n_recv; q++) {
        size_t i = first + q;
        const shard_ghost_record *r = &rbuf[q];
        p->gid[i] = r->gid, p->body[i] = r->body, p->flags[i] = r->flags;
        p->mass[i] = r->mass, p->volume[i] = r->volume;
        memcpy(p->x + 3 * i, r->x, sizeof r->x);
        memcpy(p->X + 3 * i, r->x, sizeof r->x);
        memcpy(p->v + 3 * i, r->v, sizeof r->v);
    }
    p->n_local = first + n_recv;
    *contact_halo = shard_halo_create(c, n_nbr, nbr, send_count, send_idx, recv_count, first);
    free(sbuf), free(rbuf), free(send_idx), free(send_count), free(recv_count), free(nbr);
}
