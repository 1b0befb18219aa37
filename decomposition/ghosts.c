/* Contact ghosts (see ghosts.h). */
#include "shard/ghosts.h"

#include "halo_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct shard_ghosts {
    int n_bodies;
    uint8_t *self;               /* per body: touches itself */
    shard_halo *halo;            /* the exchange plan of the contact ghosts (NULL before the first rebuild) */
    int n_rows;                  /* registry rows a record carries (SHARD_FIELD_CONTACT) */
    const shard_field_desc *rows[32];
    size_t record_bytes;
    /* buffers kept between rebuilds */
    double *boxes;
    size_t cap_boxes;
    int *nbr, *send_count, *recv_count;
    size_t cap_rank;
    int32_t *send_idx;
    size_t cap_send;
    unsigned char *sbuf, *rbuf;
    size_t cap_sbuf, cap_rbuf;
    MPI_Request *req;
    size_t cap_req;
    uint64_t rebuild_bytes;      /* counts and records sent by rebuilds */
};

shard_ghosts *shard_ghosts_create(int n_bodies, const uint8_t *self)
{
    shard_ghosts *g = shard_calloc(1, sizeof *g);
    g->n_bodies = n_bodies;
    g->self = shard_calloc((size_t)n_bodies + 1, 1);
    if (self)
        memcpy(g->self, self, (size_t)n_bodies);
    for (int f = 0; f < shard_particle_n_fields; f++) {
        const shard_field_desc *d = &shard_particle_fields[f];
        if (!(d->flags & SHARD_FIELD_CONTACT))
            continue;
        SHARD_ASSERT(g->n_rows < 32);
        g->rows[g->n_rows++] = d;
        g->record_bytes += shard_field_row_bytes(d);
    }
    return g;
}

void shard_ghosts_destroy(shard_ghosts **gp)
{
    if (!gp || !*gp)
        return;
    shard_ghosts *g = *gp;
    shard_halo_destroy(&g->halo);
    free(g->boxes), free(g->nbr), free(g->send_count), free(g->recv_count), free(g->send_idx);
    free(g->sbuf), free(g->rbuf), free(g->req), free(g->self);
    free(g);
    *gp = NULL;
}

uint64_t shard_ghosts_bytes(const shard_ghosts *g) { return g ? g->rebuild_bytes + shard_halo_bytes(g->halo) : 0; }
const shard_halo *shard_ghosts_halo(const shard_ghosts *g) { return g ? g->halo : NULL; }

void shard_ghosts_forward(shard_ghosts *g, shard_particles *p)
{
    if (!g->halo)
        return;
    shard_halo_field f[2] = {shard_halo_field_of(g->halo, p->x, 3), shard_halo_field_of(g->halo, p->v, 3)};
    shard_halo_forward(g->halo, 2, f);
}

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

/* Is owned particle i in some bond plan's send list to rank q? */
static int shard_ghosts_bond_sent_any(shard_halo *const *halos, int n, int q, int32_t i)
{
    for (int k = 0; k < n; k++)
        if (halos[k] && shard_ghosts_bond_sent(halos[k], q, i))
            return 1;
    return 0;
}

void shard_ghosts_rebuild(shard_ghosts *g, shard_comm *c, shard_particles *p, shard_halo *const *bond_halos,
                          int n_halos, double cutoff)
{
    size_t n_own = p->n_owned, first = p->n_owned + p->n_bond_ghost;
    p->n_local = first;

    /* One bounding box per body of the owned particles (empty: lo > hi).  Contacts join particles of different
     * bodies (and of one body that touches itself), so a particle is sent only where another body's box (or,
     * for such a body, its own) is near: a single-body block that cannot break sends no contact ghost. */
    size_t nb = (size_t)g->n_bodies, stride = 6 * nb;
    shard_reserve((void **)&g->boxes, &g->cap_boxes, stride * (size_t)c->size, sizeof *g->boxes);
    double *boxes = g->boxes;
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
    g->rebuild_bytes += stride * sizeof(double) * (uint64_t)(c->size - 1);

    /* Neighbours: some body on one rank within cutoff of another body on the other.  Evaluated with the lower
     * rank's boxes first so that both ranks of a pair compute exactly the same expression and agree. */
    double cut2 = cutoff * cutoff;
    int n_nbr = 0;
    shard_reserve((void **)&g->nbr, &g->cap_rank, (size_t)c->size + 1, sizeof(int));
    size_t cap = g->cap_rank;
    g->send_count = shard_realloc(g->send_count, cap * sizeof(int));
    g->recv_count = shard_realloc(g->recv_count, cap * sizeof(int));
    int *nbr = g->nbr, *send_count = g->send_count, *recv_count = g->recv_count;
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank)
            continue;
        const double *lo = boxes + stride * (size_t)(q < c->rank ? q : c->rank);
        const double *hi = boxes + stride * (size_t)(q < c->rank ? c->rank : q);
        int near = 0;
        for (size_t a = 0; a < nb && !near; a++)
            for (size_t b = 0; b < nb && !near; b++)
                near = (a != b || g->self[a]) && shard_ghosts_box_nonempty(lo + 6 * a) && shard_ghosts_box_nonempty(hi + 6 * b) &&
                       shard_ghosts_box_gap2(lo + 6 * a, hi + 6 * b) < cut2;
        if (near)
            nbr[n_nbr++] = q;
    }

    size_t n_send = 0;
    for (int k = 0; k < n_nbr; k++) {
        send_count[k] = recv_count[k] = 0;
        const double *bq = boxes + stride * (size_t)nbr[k];
        for (size_t i = 0; i < n_own; i++) {
            int near = 0;
            for (size_t b = 0; b < nb && !near; b++)
                near = (b != (size_t)p->body[i] || g->self[b]) && shard_ghosts_box_nonempty(bq + 6 * b) &&
                       shard_ghosts_point_gap2(bq + 6 * b, p->x + 3 * i) < cut2;
            if (!near || shard_ghosts_bond_sent_any(bond_halos, n_halos, nbr[k], (int32_t)i))
                continue;
            shard_reserve((void **)&g->send_idx, &g->cap_send, n_send + 1, sizeof *g->send_idx);
            g->send_idx[n_send++] = (int32_t)i;
            send_count[k]++;
        }
    }

    shard_reserve((void **)&g->req, &g->cap_req, 2 * (size_t)n_nbr + 1, sizeof *g->req);
    MPI_Request *req = g->req;
    for (int k = 0; k < n_nbr; k++) {
        SHARD_MPI(c, MPI_Irecv(&recv_count[k], 1, MPI_INT, nbr[k], 200, c->world, &req[2 * k]));
        SHARD_MPI(c, MPI_Isend(&send_count[k], 1, MPI_INT, nbr[k], 200, c->world, &req[2 * k + 1]));
    }
    SHARD_MPI(c, MPI_Waitall(2 * n_nbr, req, MPI_STATUSES_IGNORE));
    g->rebuild_bytes += (uint64_t)n_nbr * sizeof(int);

    /* Records: the SHARD_FIELD_CONTACT rows of each sent particle, one after the other. */
    size_t n_recv = 0, rb = g->record_bytes;
    for (int k = 0; k < n_nbr; k++)
        n_recv += (size_t)recv_count[k];
    shard_reserve((void **)&g->sbuf, &g->cap_sbuf, (n_send + 1) * rb, 1);
    shard_reserve((void **)&g->rbuf, &g->cap_rbuf, (n_recv + 1) * rb, 1);
    unsigned char *out = g->sbuf;
    for (size_t q = 0; q < n_send; q++) {
        size_t i = (size_t)g->send_idx[q];
        for (int f = 0; f < g->n_rows; f++) {
            size_t bytes = shard_field_row_bytes(g->rows[f]);
            memcpy(out, (const unsigned char *)shard_particles_array(p, g->rows[f]) + i * bytes, bytes);
            out += bytes;
        }
    }
    size_t so = 0, ro = 0;
    for (int k = 0; k < n_nbr; k++) {
        SHARD_MPI(c, MPI_Irecv(g->rbuf + ro * rb, recv_count[k] * (int)rb, MPI_BYTE, nbr[k], 201, c->world,
                               &req[2 * k]));
        SHARD_MPI(c, MPI_Isend(g->sbuf + so * rb, send_count[k] * (int)rb, MPI_BYTE, nbr[k], 201, c->world,
                               &req[2 * k + 1]));
        ro += (size_t)recv_count[k];
        so += (size_t)send_count[k];
    }
    SHARD_MPI(c, MPI_Waitall(2 * n_nbr, req, MPI_STATUSES_IGNORE));
    g->rebuild_bytes += (uint64_t)n_send * rb;

    shard_particles_reserve(p, first + n_recv);
    const unsigned char *in = g->rbuf;
    for (size_t q = 0; q < n_recv; q++) {
        size_t i = first + q;
        for (int f = 0; f < g->n_rows; f++) {
            size_t bytes = shard_field_row_bytes(g->rows[f]);
            memcpy((unsigned char *)shard_particles_array(p, g->rows[f]) + i * bytes, in, bytes);
            in += bytes;
        }
    }
    p->n_local = first + n_recv;
    shard_halo_update(&g->halo, c, n_nbr, nbr, send_count, g->send_idx, recv_count, first);
}
