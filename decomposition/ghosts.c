/* Contact ghosts (see ghosts.h). */
#include "shard/ghosts.h"

#include "halo_impl.h"

#include "shard/sorted.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct shard_ghosts {
    int n_bodies;
    uint8_t *self;    /* per body: touches itself */
    shard_halo *halo; /* the exchange plan of the contact ghosts (NULL before the first rebuild) */
    int n_rows;       /* registry rows a record carries (SHARD_FIELD_CONTACT) */
    const shard_field_desc *rows[32];
    size_t record_bytes;
    /* buffers kept between rebuilds */
    double *boxes; /* every rank's cluster boxes, SHARD_GHOSTS_BOX doubles each */
    size_t cap_boxes;
    int *box_count, *box_displ; /* per rank (in boxes) */
    double *mine;               /* this rank's boxes */
    size_t cap_mine;
    int32_t *cluster; /* per owned particle: its cluster, the index of its box among this rank's */
    size_t cap_cluster;
    int32_t *near_start, *near_box; /* per own cluster, for the neighbour being scanned: boxes within cutoff */
    size_t cap_near_start, cap_near_box;
    struct shard_ghosts_cell *cells; /* the clustering's cell table and its per-particle and per-cell arrays */
    int32_t *cell_of, *cell_up, *cell_box;
    const int64_t **cell_key;
    size_t cap_cells, cap_cell_of, cap_cell_up, cap_cell_box, cap_cell_key;
    int *nbr, *send_count, *recv_count;
    size_t cap_rank;
    int32_t *send_idx;
    size_t cap_send;
    unsigned char *sbuf, *rbuf;
    size_t cap_sbuf, cap_rbuf;
    MPI_Request *req;
    size_t cap_req;
    uint64_t rebuild_bytes; /* counts and records sent by rebuilds */
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
    free(g->mine), free(g->box_count), free(g->box_displ), free(g->cluster), free(g->near_start), free(g->near_box);
    free(g->cells), free(g->cell_of), free(g->cell_up), free(g->cell_box), free(g->cell_key);
    free(g->sbuf), free(g->rbuf), free(g->req), free(g->self);
    free(g);
    *gp = NULL;
}

uint64_t shard_ghosts_bytes(const shard_ghosts *g) { return g ? g->rebuild_bytes + shard_halo_bytes(g->halo) : 0; }
uint64_t shard_ghosts_rebuild_bytes(const shard_ghosts *g) { return g ? g->rebuild_bytes : 0; }
const shard_halo *shard_ghosts_halo(const shard_ghosts *g) { return g ? g->halo : NULL; }

void shard_ghosts_forward(shard_ghosts *g, shard_particles *p, const shard_field_desc *const *rows, int n)
{
    if (!g->halo || n <= 0)
        return;
    SHARD_ASSERT(n <= SHARD_GHOSTS_MAX_ROWS);
    shard_halo_field f[SHARD_GHOSTS_MAX_ROWS];
    for (int k = 0; k < n; k++) {
        SHARD_ASSERT(rows[k]->type == SHARD_TYPE_F64);
        f[k] = shard_halo_field_of(g->halo, shard_particles_array(p, rows[k]), rows[k]->ncomp);
    }
    shard_halo_forward(g->halo, n, f);
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

/* Is owned particle i in the bond send list to rank q? (lists are sorted by local index) */
static int shard_ghosts_bond_sent(const shard_halo *bh, int q, int32_t i)
{
    int k = shard_sorted_find_int(bh->nbr, (size_t)bh->n_nbr, q);
    if (k < 0)
        return 0;
    const int32_t *s = bh->send_idx + bh->send_displ[k];
    size_t n = (size_t)bh->send_count[k], a = shard_sorted_lower_i32(s, n, i);
    return a < n && s[a] == i;
}

/* Is owned particle i in some bond plan's send list to rank q? */
static int shard_ghosts_bond_sent_any(shard_halo *const *halos, int n, int q, int32_t i)
{
    for (int k = 0; k < n; k++)
        if (halos[k] && shard_ghosts_bond_sent(halos[k], q, i))
            return 1;
    return 0;
}

/* A box of the exchange: body, then lo[3], hi[3]. */
enum { SHARD_GHOSTS_BOX = 7, SHARD_GHOSTS_MAX_BOXES = 256 };

/* Cells of the clustering: an open-addressing table keyed by (body, cell coordinates). */
typedef struct shard_ghosts_cell {
    int64_t key[4];
    int32_t id; /* dense index of the cell, -1: slot empty */
} shard_ghosts_cell;

static uint64_t shard_ghosts_hash(const int64_t *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int q = 0; q < 4; q++) {
        h ^= (uint64_t)k[q] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xbf58476d1ce4e5b9ull;
    }
    return h ^ (h >> 31);
}

/* The dense index of cell k, or -1 when absent; with `key_of` (room for a new one) it is added when absent:
 * key_of[id] then points at its key. */
static int32_t shard_ghosts_cell_id(shard_ghosts_cell *t, size_t mask, const int64_t *k, int32_t *n_cells,
                                    const int64_t **key_of)
{
    size_t h = (size_t)shard_ghosts_hash(k) & mask;
    for (;; h = (h + 1) & mask) {
        shard_ghosts_cell *c = &t[h];
        if (c->id < 0) {
            if (!key_of)
                return -1;
            memcpy(c->key, k, sizeof c->key);
            c->id = *n_cells;
            key_of[c->id] = c->key;
            return (*n_cells)++;
        }
        if (memcmp(c->key, k, sizeof c->key) == 0)
            return c->id;
    }
}

static int32_t shard_ghosts_root(int32_t *up, int32_t a)
{
    while (up[a] != a)
        a = up[a] = up[up[a]];
    return a;
}

/* Clusters of this rank's owned particles, one box each: particles of one body whose cells (of edge `cell`)
 * touch (26 neighbours) form a cluster, and its box is the bounding box of its particles.  A rank that owns one
 * compact piece of a body gets one box for it, as before; one whose pieces have flown apart gets one per piece,
 * so that its boxes do not stretch over the space in between.  The edge doubles until there are at most
 * SHARD_GHOSTS_MAX_BOXES clusters (or no longer lowers their number: one cell per body).  Returns the number
 * of boxes, written at g->mine. */
static size_t shard_ghosts_clusters(shard_ghosts *g, const shard_particles *p, double cell)
{
    size_t n = p->n_owned;
    shard_reserve((void **)&g->cluster, &g->cap_cluster, n + 1, sizeof *g->cluster);
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    /* scratch kept between rebuilds (a rebuild comes every few steps) */
    shard_reserve((void **)&g->cells, &g->cap_cells, cap, sizeof *g->cells);
    shard_reserve((void **)&g->cell_of, &g->cap_cell_of, n + 1, sizeof *g->cell_of);
    shard_reserve((void **)&g->cell_up, &g->cap_cell_up, n + 1, sizeof *g->cell_up);
    shard_reserve((void **)&g->cell_box, &g->cap_cell_box, n + 1, sizeof *g->cell_box);
    shard_reserve((void **)&g->cell_key, &g->cap_cell_key, n + 1, sizeof *g->cell_key);
    shard_ghosts_cell *t = g->cells;
    int32_t *cell_of = g->cell_of, *up = g->cell_up, *id = g->cell_box;
    const int64_t **key_of = g->cell_key;
    size_t n_boxes = 0, last = 0;
    for (int attempt = 0;; attempt++, cell *= 2.0) {
        for (size_t q = 0; q < cap; q++)
            t[q].id = -1;
        int32_t n_cells = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t k[4] = {p->body[i], (int64_t)floor(p->x[3 * i] / cell), (int64_t)floor(p->x[3 * i + 1] / cell),
                            (int64_t)floor(p->x[3 * i + 2] / cell)};
            cell_of[i] = shard_ghosts_cell_id(t, cap - 1, k, &n_cells, key_of);
        }
        for (int32_t c = 0; c < n_cells; c++)
            up[c] = c;
        /* union of touching cells: each cell looks at the 13 neighbours ahead of it */
        for (int32_t c = 0; c < n_cells; c++) {
            const int64_t *k = key_of[c];
            for (int dz = -1; dz <= 1; dz++)
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        if (dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx <= 0))))
                            continue;
                        int64_t q[4] = {k[0], k[1] + dx, k[2] + dy, k[3] + dz};
                        int32_t d = shard_ghosts_cell_id(t, cap - 1, q, &n_cells, NULL);
                        if (d < 0)
                            continue;
                        int32_t ra = shard_ghosts_root(up, c), rb = shard_ghosts_root(up, d);
                        if (ra != rb)
                            up[ra > rb ? ra : rb] = ra < rb ? ra : rb;
                    }
        }
        n_boxes = 0;
        for (int32_t c = 0; c < n_cells; c++)
            id[c] = shard_ghosts_root(up, c) == c ? (int32_t)n_boxes++ : -1;
        if (n_boxes <= SHARD_GHOSTS_MAX_BOXES || n_boxes == last || attempt >= 60)
            break;
        last = n_boxes;
    }
    shard_reserve((void **)&g->mine, &g->cap_mine, SHARD_GHOSTS_BOX * n_boxes + 1, sizeof *g->mine);
    double *out = g->mine;
    for (size_t b = 0; b < n_boxes; b++) {
        double *o = out + SHARD_GHOSTS_BOX * b;
        o[0] = -1.0;
        for (int k = 0; k < 3; k++)
            o[1 + k] = INFINITY, o[4 + k] = -INFINITY;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t b = id[shard_ghosts_root(up, cell_of[i])];
        g->cluster[i] = b;
        double *o = out + SHARD_GHOSTS_BOX * (size_t)b;
        o[0] = (double)p->body[i];
        for (int k = 0; k < 3; k++) {
            o[1 + k] = fmin(o[1 + k], p->x[3 * i + k]);
            o[4 + k] = fmax(o[4 + k], p->x[3 * i + k]);
        }
    }
    return n_boxes;
}

/* May particles of the bodies of boxes a and b touch (different bodies, or one that touches itself)? */
static int shard_ghosts_bodies_touch(const shard_ghosts *g, const double *a, const double *b)
{
    return a[0] != b[0] || g->self[(int)a[0]];
}

/* Collective: this rank's cluster boxes, then everyone's (g->boxes, box_count, box_displ), with the per-rank
 * arrays sized for np ranks.  Contacts join particles of different bodies (and of one body that touches
 * itself), so a particle is sent only where another body's box (or, for such a body, its own) is near: a
 * single-body block that cannot break sends no contact ghost.  Returns the number of this rank's boxes. */
static size_t shard_ghosts_gather_boxes(shard_ghosts *g, shard_comm *c, const shard_particles *p, double cutoff)
{
    size_t n_own = p->n_owned;
    int np = c->size;
    size_t n_mine = n_own ? shard_ghosts_clusters(g, p, 2.0 * cutoff) : 0;
    const double *mine = g->mine;
    shard_reserve((void **)&g->nbr, &g->cap_rank, (size_t)np + 1, sizeof(int));
    size_t cap = g->cap_rank;
    g->send_count = shard_realloc(g->send_count, cap * sizeof(int));
    g->recv_count = shard_realloc(g->recv_count, cap * sizeof(int));
    g->box_count = shard_realloc(g->box_count, cap * sizeof(int));
    g->box_displ = shard_realloc(g->box_displ, cap * sizeof(int));
    int n_mine_i = (int)n_mine * SHARD_GHOSTS_BOX;
    SHARD_MPI(c, MPI_Allgather(&n_mine_i, 1, MPI_INT, g->box_count, 1, MPI_INT, c->world));
    size_t total = 0;
    for (int q = 0; q < np; q++) {
        g->box_displ[q] = (int)total;
        total += (size_t)g->box_count[q];
    }
    shard_reserve((void **)&g->boxes, &g->cap_boxes, total + 1, sizeof *g->boxes);
    SHARD_MPI(c, MPI_Allgatherv(n_mine ? mine : g->boxes, n_mine_i, MPI_DOUBLE, g->boxes, g->box_count, g->box_displ,
                                MPI_DOUBLE, c->world));
    g->rebuild_bytes += (uint64_t)(np - 1) * (sizeof(int) + (uint64_t)n_mine_i * sizeof(double));
    return n_mine;
}

/* Neighbours (into g->nbr, ascending): the ranks with some box within cutoff of a box of this rank whose bodies
 * may touch.  Evaluated with the lower rank's boxes first so that both ranks of a pair compute exactly the same
 * expression and agree.  Returns their number. */
static int shard_ghosts_neighbours(shard_ghosts *g, const shard_comm *c, double cutoff)
{
    int np = c->size;
    const double *boxes = g->boxes;
    double cut2 = cutoff * cutoff;
    int n_nbr = 0;
    int *nbr = g->nbr;
    for (int q = 0; q < np; q++) {
        if (q == c->rank)
            continue;
        int lo_r = q < c->rank ? q : c->rank, hi_r = q < c->rank ? c->rank : q;
        const double *lo = boxes + g->box_displ[lo_r], *hi = boxes + g->box_displ[hi_r];
        int nlo = g->box_count[lo_r] / SHARD_GHOSTS_BOX, nhi = g->box_count[hi_r] / SHARD_GHOSTS_BOX;
        int near = 0;
        for (int a = 0; a < nlo && !near; a++)
            for (int b = 0; b < nhi && !near; b++) {
                const double *A = lo + SHARD_GHOSTS_BOX * a, *B = hi + SHARD_GHOSTS_BOX * b;
                near = shard_ghosts_bodies_touch(g, A, B) && shard_ghosts_box_gap2(A + 1, B + 1) < cut2;
            }
        if (near)
            nbr[n_nbr++] = q;
    }
    return n_nbr;
}

/* Send lists (g->send_idx, send_count per neighbour): for each neighbour, the boxes of it near each own
 * cluster, then the particles of those clusters near one of them that no bond plan sends there already.
 * Returns the particles sent, over all neighbours. */
static size_t shard_ghosts_send_lists(shard_ghosts *g, const shard_particles *p, shard_halo *const *bond_halos,
                                      int n_halos, size_t n_mine, int n_nbr, double cutoff)
{
    size_t n_own = p->n_owned;
    const double *mine = g->mine, *boxes = g->boxes;
    double cut2 = cutoff * cutoff;
    int *nbr = g->nbr, *send_count = g->send_count, *recv_count = g->recv_count;
    size_t n_send = 0;
    shard_reserve((void **)&g->near_start, &g->cap_near_start, n_mine + 2, sizeof *g->near_start);
    for (int k = 0; k < n_nbr; k++) {
        send_count[k] = recv_count[k] = 0;
        const double *bq = boxes + g->box_displ[nbr[k]];
        int nq = g->box_count[nbr[k]] / SHARD_GHOSTS_BOX;
        size_t nn = 0;
        for (size_t a = 0; a < n_mine; a++) {
            g->near_start[a] = (int32_t)nn;
            for (int b = 0; b < nq; b++) {
                const double *A = mine + SHARD_GHOSTS_BOX * a, *B = bq + SHARD_GHOSTS_BOX * b;
                if (shard_ghosts_bodies_touch(g, A, B) && shard_ghosts_box_gap2(A + 1, B + 1) < cut2) {
                    shard_reserve((void **)&g->near_box, &g->cap_near_box, nn + 1, sizeof *g->near_box);
                    g->near_box[nn++] = b;
                }
            }
        }
        g->near_start[n_mine] = (int32_t)nn;
        for (size_t i = 0; i < n_own; i++) {
            int32_t a = g->cluster[i];
            int near = 0;
            for (int32_t e = g->near_start[a]; e < g->near_start[a + 1] && !near; e++)
                near = shard_ghosts_point_gap2(bq + SHARD_GHOSTS_BOX * g->near_box[e] + 1, p->x + 3 * i) < cut2;
            if (!near || shard_ghosts_bond_sent_any(bond_halos, n_halos, nbr[k], (int32_t)i))
                continue;
            shard_reserve((void **)&g->send_idx, &g->cap_send, n_send + 1, sizeof *g->send_idx);
            g->send_idx[n_send++] = (int32_t)i;
            send_count[k]++;
        }
    }
    return n_send;
}

void shard_ghosts_rebuild(shard_ghosts *g, shard_comm *c, shard_particles *p, shard_halo *const *bond_halos,
                          int n_halos, double cutoff)
{
    size_t first = p->n_owned + p->n_bond_ghost;
    p->n_local = first;

    size_t n_mine = shard_ghosts_gather_boxes(g, c, p, cutoff);
    int n_nbr = shard_ghosts_neighbours(g, c, cutoff);
    size_t n_send = shard_ghosts_send_lists(g, p, bond_halos, n_halos, n_mine, n_nbr, cutoff);
    int *nbr = g->nbr, *send_count = g->send_count, *recv_count = g->recv_count;

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
        SHARD_MPI(c,
                  MPI_Irecv(g->rbuf + ro * rb, recv_count[k] * (int)rb, MPI_BYTE, nbr[k], 201, c->world, &req[2 * k]));
        SHARD_MPI(
            c, MPI_Isend(g->sbuf + so * rb, send_count[k] * (int)rb, MPI_BYTE, nbr[k], 201, c->world, &req[2 * k + 1]));
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
