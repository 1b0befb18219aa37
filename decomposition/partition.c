/* Partition and start-up distribution (see partition.h). */
#include "shard/partition.h"

#include "comm_impl.h"

#include <metis.h>
#include <stdlib.h>
#include <string.h>

int64_t shard_partition_graph(size_t n, const shard_csr *graph, int nparts, int32_t *part)
{
    if (nparts <= 1 || n == 0) {
        for (size_t i = 0; i < n; i++)
            part[i] = 0;
        return 0;
    }
    idx_t nv = (idx_t)n, ncon = 1, np = nparts, objval = 0;
    idx_t *xadj = shard_malloc((n + 1) * sizeof *xadj);
    idx_t *vwgt = shard_malloc(n * sizeof *vwgt);
    for (size_t i = 0; i <= n; i++)
        xadj[i] = (idx_t)graph->start[i];
    for (size_t i = 0; i < n; i++)
        vwgt[i] = 1 + (idx_t)(graph->start[i + 1] - graph->start[i]);
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 7; /* fixed: the same scene partitions the same way every time */
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t *pt = (idx_t *)part; /* idx_t is int32 in Debian's METIS (checked at compile time below) */
    _Static_assert(sizeof(idx_t) == sizeof(int32_t), "METIS idx_t must be 32-bit");
    int rc = METIS_PartGraphKway(&nv, &ncon, xadj, graph->idx, vwgt, NULL, NULL, &np, NULL, NULL, options, &objval,
                                 pt);
    free(xadj);
    free(vwgt);
    if (rc != METIS_OK) {
        /* METIS_OK is 1; anything else is a failure (out of memory or bad input). Fall back to blocks of ids,
         * which is a valid (if worse) partition. */
        for (size_t i = 0; i < n; i++)
            part[i] = (int32_t)((int64_t)i * nparts / (int64_t)n);
        objval = 0;
        for (size_t i = 0; i < n; i++)
            for (int64_t b = graph->start[i]; b < graph->start[i + 1]; b++)
                objval += part[graph->idx[b]] != part[i];
        objval /= 2;
    }
    return (int64_t)objval;
}

/* What rank 0 sends to one rank. */
typedef struct shard_package {
    int64_t n_own, n_ghost, n_bonds;
    int64_t *gid;        /* n_own + n_ghost */
    int32_t *owner;      /* n_ghost */
    double *X, *v, *vpres;
    int32_t *body;
    uint32_t *flags;
    int32_t *bond_count; /* n_own */
    int32_t *bond_gid;   /* n_bonds */
} shard_package;

typedef struct shard_partition_ghost {
    int32_t owner;
    int32_t gid;
} shard_partition_ghost;

static int shard_partition_cmp_ghost(const void *a, const void *b)
{
    const shard_partition_ghost *x = a, *y = b;
    if (x->owner != y->owner)
        return (x->owner > y->owner) - (x->owner < y->owner);
    return (x->gid > y->gid) - (x->gid < y->gid);
}

static void shard_package_alloc(shard_package *k)
{
    size_t nl = (size_t)(k->n_own + k->n_ghost);
    k->gid = shard_malloc((nl + 1) * sizeof *k->gid);
    k->owner = shard_malloc(((size_t)k->n_ghost + 1) * sizeof *k->owner);
    k->X = shard_malloc((3 * nl + 1) * sizeof *k->X);
    k->v = shard_malloc((3 * nl + 1) * sizeof *k->v);
    k->vpres = shard_malloc((3 * nl + 1) * sizeof *k->vpres);
    k->body = shard_malloc((nl + 1) * sizeof *k->body);
    k->flags = shard_malloc((nl + 1) * sizeof *k->flags);
    k->bond_count = shard_malloc(((size_t)k->n_own + 1) * sizeof *k->bond_count);
    k->bond_gid = shard_malloc(((size_t)k->n_bonds + 1) * sizeof *k->bond_gid);
}

static void shard_package_free(shard_package *k)
{
    free(k->gid), free(k->owner), free(k->X), free(k->v), free(k->vpres), free(k->body), free(k->flags);
    free(k->bond_count), free(k->bond_gid);
    memset(k, 0, sizeof *k);
}

/* Rank 0: the package of rank r.  mark[] is scratch of n entries, initialised to -1. */
static void shard_package_build(int r, const shard_sampled *s, const shard_csr *g, const int32_t *part,
                                int32_t *mark, shard_package *k)
{
    memset(k, 0, sizeof *k);
    size_t n = s->n, ng = 0, ng_cap = 0;
    shard_partition_ghost *gh = NULL;
    for (size_t i = 0; i < n; i++) {
        if (part[i] != r)
            continue;
        k->n_own++;
        k->n_bonds += g->start[i + 1] - g->start[i];
        for (int64_t b = g->start[i]; b < g->start[i + 1]; b++) {
            int32_t j = g->idx[b];
            if (part[j] != r && mark[j] != r) {
                mark[j] = r;
                shard_reserve((void **)&gh, &ng_cap, ng + 1, sizeof *gh);
                gh[ng++] = (shard_partition_ghost){part[j], j};
            }
        }
    }
    if (ng > 1)
        qsort(gh, ng, sizeof *gh, shard_partition_cmp_ghost);
    k->n_ghost = (int64_t)ng;
    shard_package_alloc(k);
    size_t l = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        if (part[i] != r)
            continue;
        k->gid[l++] = (int64_t)i;
        k->bond_count[l - 1] = (int32_t)(g->start[i + 1] - g->start[i]);
        for (int64_t b = g->start[i]; b < g->start[i + 1]; b++)
            k->bond_gid[nb++] = g->idx[b];
    }
    for (size_t q = 0; q < ng; q++) {
        k->owner[q] = gh[q].owner;
        k->gid[l++] = gh[q].gid;
    }
    for (size_t q = 0; q < l; q++) {
        size_t i = (size_t)k->gid[q];
        memcpy(k->X + 3 * q, s->X + 3 * i, 3 * sizeof(double));
        memcpy(k->v + 3 * q, s->v + 3 * i, 3 * sizeof(double));
        memcpy(k->vpres + 3 * q, s->vpres + 3 * i, 3 * sizeof(double));
        k->body[q] = s->body[i];
        k->flags[q] = s->flags[i];
    }
    free(gh);
}

#define SHARD_PKG_ARRAYS(X_, k, nl)                                                                              \
    X_(k->gid, (nl) * sizeof *k->gid) X_(k->owner, (size_t)k->n_ghost * sizeof *k->owner)                        \
    X_(k->X, 3 * (nl) * sizeof *k->X) X_(k->v, 3 * (nl) * sizeof *k->v) X_(k->vpres, 3 * (nl) * sizeof *k->vpres) \
    X_(k->body, (nl) * sizeof *k->body) X_(k->flags, (nl) * sizeof *k->flags)                                     \
    X_(k->bond_count, (size_t)k->n_own * sizeof *k->bond_count)                                                   \
    X_(k->bond_gid, (size_t)k->n_bonds * sizeof *k->bond_gid)

static void shard_package_send(shard_comm *c, shard_package *k, int r)
{
    int64_t hdr[3] = {k->n_own, k->n_ghost, k->n_bonds};
    shard_mpi_send_big(c, hdr, sizeof hdr, r, 100);
    size_t nl = (size_t)(k->n_own + k->n_ghost);
#define SHARD_SEND_(ptr, bytes) shard_mpi_send_big(c, ptr, bytes, r, 101);
    SHARD_PKG_ARRAYS(SHARD_SEND_, k, nl)
#undef SHARD_SEND_
}

static void shard_package_recv(shard_comm *c, shard_package *k)
{
    int64_t hdr[3];
    shard_mpi_recv_big(c, hdr, sizeof hdr, 0, 100);
    k->n_own = hdr[0], k->n_ghost = hdr[1], k->n_bonds = hdr[2];
    shard_package_alloc(k);
    size_t nl = (size_t)(k->n_own + k->n_ghost);
#define SHARD_RECV_(ptr, bytes) shard_mpi_recv_big(c, ptr, bytes, 0, 101);
    SHARD_PKG_ARRAYS(SHARD_RECV_, k, nl)
#undef SHARD_RECV_
}

typedef struct shard_partition_key {
    int64_t gid;
    int32_t local;
} shard_partition_key;

static int shard_partition_cmp_key(const void *a, const void *b)
{
    int64_t x = ((const shard_partition_key *)a)->gid, y = ((const shard_partition_key *)b)->gid;
    return (x > y) - (x < y);
}

static int32_t shard_partition_lookup(const shard_partition_key *keys, size_t n, int64_t gid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (keys[mid].gid < gid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < n && keys[lo].gid == gid) ? keys[lo].local : -1;
}

/* Unpacks a package into the particle store and bond CSR, and builds the bond halo plan. */
static void shard_package_unpack(shard_comm *c, const shard_package *k, shard_particles *p, shard_csr *bonds,
                                 shard_halo **halo)
{
    size_t n_own = (size_t)k->n_own, n_ghost = (size_t)k->n_ghost, nl = n_own + n_ghost;
    shard_particles_reserve(p, nl);
    p->n_owned = n_own, p->n_bond_ghost = n_ghost, p->n_local = nl;
    memcpy(p->gid, k->gid, nl * sizeof *p->gid);
    memcpy(p->X, k->X, 3 * nl * sizeof *p->X);
    memcpy(p->x, k->X, 3 * nl * sizeof *p->x);
    memcpy(p->v, k->v, 3 * nl * sizeof *p->v);
    memcpy(p->vpres, k->vpres, 3 * nl * sizeof *p->vpres);
    memcpy(p->body, k->body, nl * sizeof *p->body);
    memcpy(p->flags, k->flags, nl * sizeof *p->flags);
    memcpy(p->x_build, k->X, 3 * n_own * sizeof *p->x_build);

    shard_partition_key *keys = shard_malloc((nl + 1) * sizeof *keys);
    for (size_t i = 0; i < nl; i++)
        keys[i] = (shard_partition_key){p->gid[i], (int32_t)i};
    qsort(keys, nl, sizeof *keys, shard_partition_cmp_key);
    shard_csr_reserve(bonds, n_own, (size_t)k->n_bonds + 1);
    bonds->n = n_own;
    bonds->start[0] = 0;
    size_t b = 0;
    for (size_t i = 0; i < n_own; i++) {
        for (int32_t q = 0; q < k->bond_count[i]; q++, b++)
            bonds->idx[b] = shard_partition_lookup(keys, nl, k->bond_gid[b]);
        bonds->start[i + 1] = (int64_t)b;
    }
    free(keys);

    /* Halo: neighbours are the owners of my ghosts (ghosts are grouped by owner).  I send owned i to q when i
     * has a partner owned by q; iterating i in increasing id gives the order q expects (its ghosts from me are
     * sorted by id). */
    int n_nbr = 0;
    int *nbr = shard_malloc((n_ghost + 1) * sizeof *nbr), *recv_count = shard_malloc((n_ghost + 1) * sizeof(int));
    for (size_t q = 0; q < n_ghost; q++) {
        if (n_nbr == 0 || nbr[n_nbr - 1] != k->owner[q]) {
            nbr[n_nbr] = k->owner[q];
            recv_count[n_nbr++] = 0;
        }
        recv_count[n_nbr - 1]++;
    }
    int *send_count = shard_calloc((size_t)n_nbr + 1, sizeof(int));
    int32_t **lists = shard_calloc((size_t)n_nbr + 1, sizeof *lists);
    size_t *caps = shard_calloc((size_t)n_nbr + 1, sizeof *caps);
    for (size_t i = 0; i < n_own; i++) {
        for (int64_t e = bonds->start[i]; e < bonds->start[i + 1]; e++) {
            size_t j = (size_t)bonds->idx[e];
            if (j < n_own)
                continue;
            int owner = k->owner[j - n_own];
            int lo = 0, hi = n_nbr;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (nbr[mid] < owner)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (send_count[lo] > 0 && lists[lo][send_count[lo] - 1] == (int32_t)i)
                continue;
            shard_reserve((void **)&lists[lo], &caps[lo], (size_t)send_count[lo] + 1, sizeof **lists);
            lists[lo][send_count[lo]++] = (int32_t)i;
        }
    }
    size_t total = 0;
    for (int q = 0; q < n_nbr; q++)
        total += (size_t)send_count[q];
    int32_t *send_idx = shard_malloc((total + 1) * sizeof *send_idx);
    total = 0;
    for (int q = 0; q < n_nbr; q++) {
        if (send_count[q])
            memcpy(send_idx + total, lists[q], (size_t)send_count[q] * sizeof *send_idx);
        total += (size_t)send_count[q];
        free(lists[q]);
    }
    *halo = shard_halo_create(c, n_nbr, nbr, send_count, send_idx, recv_count, n_own);
    free(nbr), free(recv_count), free(send_count), free(lists), free(caps), free(send_idx);
}

void shard_partition_distribute(shard_comm *c, const shard_sampled *s, const shard_csr *g, shard_particles *p,
                                shard_csr *bonds, shard_halo **halo, int64_t *edge_cut)
{
    shard_package mine = {0};
    int64_t cut = 0;
    if (c->rank == 0) {
        int32_t *part = shard_malloc((s->n + 1) * sizeof *part);
        cut = shard_partition_graph(s->n, g, c->size, part);
        int32_t *mark = shard_malloc((s->n + 1) * sizeof *mark);
        for (size_t i = 0; i < s->n; i++)
            mark[i] = -1;
        for (int r = c->size - 1; r >= 0; r--) {
            shard_package k;
            shard_package_build(r, s, g, part, mark, &k);
            if (r == 0) {
                mine = k;
            } else {
                shard_package_send(c, &k, r);
                shard_package_free(&k);
            }
        }
        free(mark);
        free(part);
    } else {
        shard_package_recv(c, &mine);
    }
    shard_comm_bcast(c, &cut, sizeof cut, 0);
    if (edge_cut)
        *edge_cut = cut;
    shard_package_unpack(c, &mine, p, bonds, halo);
    shard_package_free(&mine);
}
