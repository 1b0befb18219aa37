/* Partition and start-up distribution (see partition.h). */
#include "shard/partition.h"

#include "comm_impl.h"

#include <metis.h>
#include <stddef.h>
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

/* What rank 0 sends to one rank: ids, ghost owners, bonds, and one array per registry row (particles.h) that
 * has SHARD_FIELD_STATE, for the owned particles and, for SHARD_FIELD_GHOST rows, the bond ghosts too.  Rows
 * the sender does not have (NULL arrays of the whole-run set) are not sent and arrive as zeros. */
enum { SHARD_PKG_MAX_FIELDS = 64 };
typedef struct shard_package {
    int64_t n_own, n_ghost, n_bonds;
    uint64_t present;    /* bit f: registry row f is sent */
    int64_t *gid;        /* n_own + n_ghost */
    int32_t *owner;      /* n_ghost */
    int32_t *bond_count; /* n_own */
    int32_t *bond_gid;   /* n_bonds */
    uint8_t *bond_broken;/* n_bonds */
    void *field[SHARD_PKG_MAX_FIELDS];
} shard_package;

/* Registry rows the package may carry: every state row but the global id, which the package sends itself. */
static int shard_package_carries(const shard_field_desc *d)
{
    return (d->flags & SHARD_FIELD_STATE) && d->offset != offsetof(shard_particles, gid);
}

static size_t shard_package_rows(const shard_package *k, const shard_field_desc *d)
{
    return (size_t)k->n_own + ((d->flags & SHARD_FIELD_GHOST) ? (size_t)k->n_ghost : 0);
}

static size_t shard_package_row_bytes(const shard_field_desc *d) { return (size_t)d->ncomp * d->elem_size; }

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
    k->bond_count = shard_malloc(((size_t)k->n_own + 1) * sizeof *k->bond_count);
    k->bond_gid = shard_malloc(((size_t)k->n_bonds + 1) * sizeof *k->bond_gid);
    k->bond_broken = shard_malloc((size_t)k->n_bonds + 1);
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (k->present >> f & 1u)
            k->field[f] = shard_malloc(shard_package_rows(k, &shard_particle_fields[f]) *
                                           shard_package_row_bytes(&shard_particle_fields[f]) + 1);
}

static void shard_package_free(shard_package *k)
{
    free(k->gid), free(k->owner), free(k->bond_count), free(k->bond_gid), free(k->bond_broken);
    for (int f = 0; f < SHARD_PKG_MAX_FIELDS; f++)
        free(k->field[f]);
    memset(k, 0, sizeof *k);
}

/* Rank 0: the package of rank r from the whole-run set (row = global id).  mark[] is scratch of n entries,
 * initialised to -1. */
static void shard_package_build(int r, const shard_particles *all, const shard_csr *g, const uint8_t *g_broken,
                                const int32_t *part, int32_t *mark, uint64_t present, shard_package *k)
{
    memset(k, 0, sizeof *k);
    size_t n = all->n_owned, ng = 0, ng_cap = 0;
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
    k->present = present;
    shard_package_alloc(k);
    size_t l = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        if (part[i] != r)
            continue;
        k->gid[l++] = (int64_t)i;
        k->bond_count[l - 1] = (int32_t)(g->start[i + 1] - g->start[i]);
        for (int64_t b = g->start[i]; b < g->start[i + 1]; b++, nb++) {
            k->bond_gid[nb] = g->idx[b];
            k->bond_broken[nb] = g_broken ? g_broken[b] : 0;
        }
    }
    for (size_t q = 0; q < ng; q++) {
        k->owner[q] = gh[q].owner;
        k->gid[l++] = gh[q].gid;
    }
    for (int f = 0; f < shard_particle_n_fields; f++) {
        if (!(present >> f & 1u))
            continue;
        const shard_field_desc *d = &shard_particle_fields[f];
        size_t rows = shard_package_rows(k, d), rb = shard_package_row_bytes(d);
        const char *src = shard_particles_array(all, d);
        char *dst = k->field[f];
        for (size_t q = 0; q < rows; q++)
            memcpy(dst + q * rb, src + (size_t)k->gid[q] * rb, rb);
    }
    free(gh);
}

/* The arrays of a package in sending order, with their sizes in bytes. */
static int shard_package_arrays(shard_package *k, void **ptr, size_t *bytes)
{
    size_t nl = (size_t)(k->n_own + k->n_ghost);
    int m = 0;
    ptr[m] = k->gid, bytes[m++] = nl * sizeof *k->gid;
    ptr[m] = k->owner, bytes[m++] = (size_t)k->n_ghost * sizeof *k->owner;
    ptr[m] = k->bond_count, bytes[m++] = (size_t)k->n_own * sizeof *k->bond_count;
    ptr[m] = k->bond_gid, bytes[m++] = (size_t)k->n_bonds * sizeof *k->bond_gid;
    ptr[m] = k->bond_broken, bytes[m++] = (size_t)k->n_bonds;
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (k->present >> f & 1u) {
            ptr[m] = k->field[f];
            bytes[m++] = shard_package_rows(k, &shard_particle_fields[f]) *
                         shard_package_row_bytes(&shard_particle_fields[f]);
        }
    return m;
}

static void shard_package_send(shard_comm *c, shard_package *k, int r)
{
    int64_t hdr[4] = {k->n_own, k->n_ghost, k->n_bonds, (int64_t)k->present};
    shard_mpi_send_big(c, hdr, sizeof hdr, r, 100);
    void *ptr[5 + SHARD_PKG_MAX_FIELDS];
    size_t bytes[5 + SHARD_PKG_MAX_FIELDS];
    int m = shard_package_arrays(k, ptr, bytes);
    for (int q = 0; q < m; q++)
        shard_mpi_send_big(c, ptr[q], bytes[q], r, 101);
}

static void shard_package_recv(shard_comm *c, shard_package *k)
{
    int64_t hdr[4];
    shard_mpi_recv_big(c, hdr, sizeof hdr, 0, 100);
    memset(k, 0, sizeof *k);
    k->n_own = hdr[0], k->n_ghost = hdr[1], k->n_bonds = hdr[2], k->present = (uint64_t)hdr[3];
    shard_package_alloc(k);
    void *ptr[5 + SHARD_PKG_MAX_FIELDS];
    size_t bytes[5 + SHARD_PKG_MAX_FIELDS];
    int m = shard_package_arrays(k, ptr, bytes);
    for (int q = 0; q < m; q++)
        shard_mpi_recv_big(c, ptr[q], bytes[q], 0, 101);
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

/* Unpacks a package into the particle store, the bond CSR and its broken flags, and builds the bond halo plan. */
static void shard_package_unpack(shard_comm *c, const shard_package *k, shard_particles *p, shard_csr *bonds,
                                 uint8_t **broken, shard_halo **halo)
{
    size_t n_own = (size_t)k->n_own, n_ghost = (size_t)k->n_ghost, nl = n_own + n_ghost;
    shard_particles_reserve(p, nl);
    p->n_owned = n_own, p->n_bond_ghost = n_ghost, p->n_local = nl;
    memcpy(p->gid, k->gid, nl * sizeof *p->gid);
    for (int f = 0; f < shard_particle_n_fields; f++) {
        const shard_field_desc *d = &shard_particle_fields[f];
        if (!shard_package_carries(d))
            continue;
        size_t bytes = shard_package_rows(k, d) * shard_package_row_bytes(d);
        if (k->present >> f & 1u)
            memcpy(shard_particles_array(p, d), k->field[f], bytes);
        else
            memset(shard_particles_array(p, d), 0, bytes);
    }
    memcpy(p->x_build, p->x, 3 * n_own * sizeof *p->x_build);
    if (broken) {
        *broken = shard_realloc(*broken, (size_t)k->n_bonds + 1);
        memcpy(*broken, k->bond_broken, (size_t)k->n_bonds);
    }

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

void shard_partition_distribute(shard_comm *c, const shard_particles *all, const shard_csr *g,
                                const uint8_t *g_broken, shard_particles *p, shard_csr *bonds, uint8_t **broken,
                                shard_halo **halo, int64_t *edge_cut)
{
    shard_package mine = {0};
    int64_t cut = 0;
    if (c->rank == 0) {
        size_t n = all->n_owned;
        uint64_t present = 0;
        SHARD_ASSERT(shard_particle_n_fields <= SHARD_PKG_MAX_FIELDS);
        for (int f = 0; f < shard_particle_n_fields; f++)
            if (shard_package_carries(&shard_particle_fields[f]) &&
                shard_particles_array(all, &shard_particle_fields[f]))
                present |= (uint64_t)1 << f;
        int32_t *part = shard_malloc((n + 1) * sizeof *part);
        cut = shard_partition_graph(n, g, c->size, part);
        int32_t *mark = shard_malloc((n + 1) * sizeof *mark);
        for (size_t i = 0; i < n; i++)
            mark[i] = -1;
        for (int r = c->size - 1; r >= 0; r--) {
            shard_package k;
            shard_package_build(r, all, g, g_broken, part, mark, present, &k);
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
    shard_package_unpack(c, &mine, p, bonds, broken, halo);
    shard_package_free(&mine);
}
