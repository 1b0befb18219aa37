/* Partition and start-up distribution (see partition.h). */
#include "shard/partition.h"

#include "comm_impl.h"

#include <metis.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int shard_partition_graph(size_t n, const shard_csr *graph, int nparts, int32_t *part, int64_t *edge_cut,
                          shard_error *err)
{
    *edge_cut = 0;
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
    /* METIS_OK is 1; anything else is a failure.  No fallback: a silent partition by blocks of ids would hide
     * the fault and change every figure of the run. */
    if (rc != METIS_OK)
        return shard_error_set(err, SHARD_EXIT_INTERNAL,
                               "METIS_PartGraphKway failed (%s) partitioning %zu particles into %d parts",
                               rc == METIS_ERROR_MEMORY ? "out of memory" : rc == METIS_ERROR_INPUT ? "bad input"
                                                                                                  : "error",
                               n, nparts);
    *edge_cut = (int64_t)objval;
    return 0;
}

/* What rank 0 sends to one rank: ids, ghost owners, bonds, per-module counts, one array per particle registry
 * row that has SHARD_FIELD_STATE (owned particles, and ghosts for SHARD_FIELD_GHOST rows) and one per STATE row
 * of each module's block (that module's owned particles, and its ghosts for GHOST rows).  Rows the sender does
 * not have (NULL arrays of the whole-run set) are not sent and arrive as zeros. */
enum { SHARD_PKG_MAX_FIELDS = 64 };
typedef struct shard_package {
    int64_t n_own, n_ghost, n_bonds;
    int n_mod;
    uint64_t present;    /* bit f: particle registry row f is sent */
    int64_t *mod;        /* 3 per module: owned, ghosts, bit mask of the block rows sent */
    int64_t *gid;        /* n_own + n_ghost: owned by (module, gid), then ghosts by (module, owner, gid) */
    int32_t *owner;      /* n_ghost */
    int32_t *bond_count; /* n_own */
    int32_t *bond_gid;   /* n_bonds */
    uint8_t *bond_broken;/* n_bonds */
    void *field[SHARD_PKG_MAX_FIELDS];
    void **mfield;       /* n_mod * SHARD_BLOCK_MAX_ROWS */
    /* pair lists: per list, entries per owned particle, their keys and values */
    int n_lists;
    int64_t *ltotal;     /* n_lists: entries */
    int32_t **lcount;    /* n_lists x n_own */
    int64_t **lkey;      /* n_lists x ltotal */
    double **lval;       /* n_lists x ltotal x width */
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

static size_t shard_package_mod_rows(const shard_package *k, int m, const shard_field_desc *d)
{
    return (size_t)k->mod[3 * m] + ((d->flags & SHARD_FIELD_GHOST) ? (size_t)k->mod[3 * m + 1] : 0);
}

/* Offsets of module m's owned particles and ghosts in the package's gid list. */
static void shard_package_mod_offsets(const shard_package *k, int m, size_t *own, size_t *ghost)
{
    size_t o = 0, g = (size_t)k->n_own;
    for (int q = 0; q < m; q++)
        o += (size_t)k->mod[3 * q], g += (size_t)k->mod[3 * q + 1];
    *own = o, *ghost = g;
}

typedef struct shard_partition_ghost {
    int32_t module, owner;
    int32_t gid;
} shard_partition_ghost;

static int shard_partition_cmp_ghost(const void *a, const void *b)
{
    const shard_partition_ghost *x = a, *y = b;
    if (x->module != y->module)
        return (x->module > y->module) - (x->module < y->module);
    if (x->owner != y->owner)
        return (x->owner > y->owner) - (x->owner < y->owner);
    return (x->gid > y->gid) - (x->gid < y->gid);
}

static void shard_package_alloc(shard_package *k, const shard_partition_kinds *kinds)
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
                                           shard_field_row_bytes(&shard_particle_fields[f]) + 1);
    k->mfield = shard_calloc((size_t)k->n_mod * SHARD_BLOCK_MAX_ROWS + 1, sizeof *k->mfield);
    (void)kinds;
}

static void shard_package_alloc_mod(shard_package *k, const shard_block *rows_of)
{
    for (int m = 0; m < k->n_mod; m++)
        for (int r = 0; r < rows_of[m].n_rows; r++)
            if ((uint64_t)k->mod[3 * m + 2] >> r & 1u) {
                const shard_field_desc *d = &rows_of[m].rows[r];
                k->mfield[m * SHARD_BLOCK_MAX_ROWS + r] =
                    shard_malloc(shard_package_mod_rows(k, m, d) * shard_field_row_bytes(d) + 1);
            }
}

/* The pair-list arrays of a package whose n_lists and ltotal are set. */
static void shard_package_alloc_lists(shard_package *k, const shard_pairlist *shape)
{
    k->lcount = shard_calloc((size_t)k->n_lists + 1, sizeof *k->lcount);
    k->lkey = shard_calloc((size_t)k->n_lists + 1, sizeof *k->lkey);
    k->lval = shard_calloc((size_t)k->n_lists + 1, sizeof *k->lval);
    for (int q = 0; q < k->n_lists; q++) {
        k->lcount[q] = shard_malloc(((size_t)k->n_own + 1) * sizeof **k->lcount);
        k->lkey[q] = shard_malloc(((size_t)k->ltotal[q] + 1) * sizeof **k->lkey);
        k->lval[q] = shard_malloc(((size_t)k->ltotal[q] * (size_t)shape[q].width + 1) * sizeof **k->lval);
    }
}

static void shard_package_free(shard_package *k)
{
    for (int q = 0; q < k->n_lists; q++)
        free(k->lcount[q]), free(k->lkey[q]), free(k->lval[q]);
    free(k->lcount), free(k->lkey), free(k->lval), free(k->ltotal);
    free(k->mod), free(k->gid), free(k->owner), free(k->bond_count), free(k->bond_gid), free(k->bond_broken);
    for (int f = 0; f < SHARD_PKG_MAX_FIELDS; f++)
        free(k->field[f]);
    if (k->mfield)
        for (int q = 0; q < k->n_mod * SHARD_BLOCK_MAX_ROWS; q++)
            free(k->mfield[q]);
    free(k->mfield);
    memset(k, 0, sizeof *k);
}

/* Rank 0: the package of rank r from the whole-run set (row = global id).  mark[] is scratch of n entries,
 * initialised to -1; module[i] is the module of particle i; mpresent[m] the block rows of module m sent. */
static void shard_package_build(int r, const shard_partition_kinds *kinds, const shard_particles *all,
                                const shard_block *all_blocks, const shard_block *rows_of, const shard_csr *g,
                                const uint8_t *g_broken, const int32_t *part, const int32_t *module, int32_t *mark,
                                uint64_t present, const uint64_t *mpresent, shard_package *k)
{
    memset(k, 0, sizeof *k);
    int nm = kinds->n_modules;
    k->n_mod = nm;
    k->mod = shard_calloc(3 * (size_t)nm + 1, sizeof *k->mod);
    size_t n = all->n_owned, ng = 0, ng_cap = 0;
    shard_partition_ghost *gh = NULL;
    for (size_t i = 0; i < n; i++) {
        if (part[i] != r)
            continue;
        k->n_own++;
        k->mod[3 * module[i]]++;
        k->n_bonds += g->start[i + 1] - g->start[i];
        for (int64_t b = g->start[i]; b < g->start[i + 1]; b++) {
            int32_t j = g->idx[b];
            if (part[j] != r && mark[j] != r) {
                mark[j] = r;
                shard_reserve((void **)&gh, &ng_cap, ng + 1, sizeof *gh);
                gh[ng++] = (shard_partition_ghost){module[j], part[j], j};
            }
        }
    }
    if (ng > 1)
        qsort(gh, ng, sizeof *gh, shard_partition_cmp_ghost);
    for (size_t q = 0; q < ng; q++)
        k->mod[3 * gh[q].module + 1]++;
    for (int m = 0; m < nm; m++)
        k->mod[3 * m + 2] = (int64_t)mpresent[m];
    k->n_ghost = (int64_t)ng;
    k->present = present;
    shard_package_alloc(k, kinds);
    shard_package_alloc_mod(k, rows_of);
    /* Owned particles by module, then id: a counting pass gives each module's start. */
    size_t *at = shard_calloc((size_t)nm + 1, sizeof *at);
    for (int m = 1; m <= nm; m++)
        at[m] = at[m - 1] + (size_t)k->mod[3 * (m - 1)];
    for (size_t i = 0; i < n; i++)
        if (part[i] == r)
            k->gid[at[module[i]]++] = (int64_t)i;
    free(at);
    size_t nb = 0;
    for (size_t l = 0; l < (size_t)k->n_own; l++) {
        size_t i = (size_t)k->gid[l];
        k->bond_count[l] = (int32_t)(g->start[i + 1] - g->start[i]);
        for (int64_t b = g->start[i]; b < g->start[i + 1]; b++, nb++) {
            k->bond_gid[nb] = g->idx[b];
            k->bond_broken[nb] = g_broken ? g_broken[b] : 0;
        }
    }
    for (size_t q = 0; q < ng; q++) {
        k->owner[q] = gh[q].owner;
        k->gid[(size_t)k->n_own + q] = gh[q].gid;
    }
    free(gh);
    /* Pair lists: the rows of the owned particles, in their order. */
    k->n_lists = kinds->n_lists;
    k->ltotal = shard_calloc((size_t)k->n_lists + 1, sizeof *k->ltotal);
    for (int q = 0; q < k->n_lists; q++) {
        const shard_pairlist *a = &kinds->all_lists[q];
        for (size_t l = 0; a->n && l < (size_t)k->n_own; l++)
            k->ltotal[q] += a->start[k->gid[l] + 1] - a->start[k->gid[l]];
    }
    shard_package_alloc_lists(k, kinds->all_lists);
    for (int q = 0; q < k->n_lists; q++) {
        const shard_pairlist *a = &kinds->all_lists[q];
        size_t e = 0, w = (size_t)a->width;
        for (size_t l = 0; l < (size_t)k->n_own; l++) {
            int64_t b0 = a->n ? a->start[k->gid[l]] : 0, b1 = a->n ? a->start[k->gid[l] + 1] : 0;
            k->lcount[q][l] = (int32_t)(b1 - b0);
            for (int64_t b = b0; b < b1; b++, e++) {
                k->lkey[q][e] = a->key[b];
                memcpy(k->lval[q] + w * e, a->val + w * (size_t)b, w * sizeof *a->val);
            }
        }
    }
    for (int f = 0; f < shard_particle_n_fields; f++) {
        if (!(present >> f & 1u))
            continue;
        const shard_field_desc *d = &shard_particle_fields[f];
        size_t rows = shard_package_rows(k, d), rb = shard_field_row_bytes(d);
        const char *src = shard_particles_array(all, d);
        char *dst = k->field[f];
        for (size_t q = 0; q < rows; q++)
            memcpy(dst + q * rb, src + (size_t)k->gid[q] * rb, rb);
    }
    for (int m = 0; m < nm; m++) {
        size_t own, ghost;
        shard_package_mod_offsets(k, m, &own, &ghost);
        for (int rr = 0; rr < rows_of[m].n_rows; rr++) {
            if (!(mpresent[m] >> rr & 1u))
                continue;
            const shard_field_desc *d = &rows_of[m].rows[rr];
            size_t rb = shard_field_row_bytes(d), no = (size_t)k->mod[3 * m];
            const char *src = shard_field_array(&all_blocks[m], d);
            char *dst = k->mfield[m * SHARD_BLOCK_MAX_ROWS + rr];
            for (size_t q = 0; q < shard_package_mod_rows(k, m, d); q++) {
                size_t l = q < no ? own + q : ghost + (q - no);
                memcpy(dst + q * rb, src + (size_t)k->gid[l] * rb, rb);
            }
        }
    }
}

/* The arrays of a package in sending order, with their sizes in bytes. */
static int shard_package_arrays(shard_package *k, const shard_block *rows_of, const int *widths, void **ptr,
                                size_t *bytes)
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
                         shard_field_row_bytes(&shard_particle_fields[f]);
        }
    for (int q = 0; q < k->n_mod; q++)
        for (int r = 0; r < rows_of[q].n_rows; r++)
            if ((uint64_t)k->mod[3 * q + 2] >> r & 1u) {
                const shard_field_desc *d = &rows_of[q].rows[r];
                ptr[m] = k->mfield[q * SHARD_BLOCK_MAX_ROWS + r];
                bytes[m++] = shard_package_mod_rows(k, q, d) * shard_field_row_bytes(d);
            }
    for (int q = 0; q < k->n_lists; q++) {
        ptr[m] = k->lcount[q], bytes[m++] = (size_t)k->n_own * sizeof **k->lcount;
        ptr[m] = k->lkey[q], bytes[m++] = (size_t)k->ltotal[q] * sizeof **k->lkey;
        ptr[m] = k->lval[q], bytes[m++] = (size_t)k->ltotal[q] * (size_t)widths[q] * sizeof **k->lval;
    }
    return m;
}

enum { SHARD_PKG_MAX_LISTS = 8, SHARD_PKG_MAX_ARRAYS = 5 + SHARD_PKG_MAX_FIELDS + 8 * SHARD_BLOCK_MAX_ROWS +
                                                     3 * SHARD_PKG_MAX_LISTS };

static void shard_package_send(shard_comm *c, shard_package *k, const shard_block *rows_of, const int *widths,
                               int r)
{
    int64_t hdr[6] = {k->n_own, k->n_ghost, k->n_bonds, (int64_t)k->present, k->n_mod, k->n_lists};
    shard_mpi_send_big(c, hdr, sizeof hdr, r, 100);
    shard_mpi_send_big(c, k->mod, 3 * (size_t)k->n_mod * sizeof *k->mod, r, 100);
    shard_mpi_send_big(c, k->ltotal, (size_t)k->n_lists * sizeof *k->ltotal, r, 100);
    void *ptr[SHARD_PKG_MAX_ARRAYS];
    size_t bytes[SHARD_PKG_MAX_ARRAYS];
    int m = shard_package_arrays(k, rows_of, widths, ptr, bytes);
    for (int q = 0; q < m; q++)
        shard_mpi_send_big(c, ptr[q], bytes[q], r, 101);
}

static void shard_package_recv(shard_comm *c, const shard_partition_kinds *kinds, const shard_block *rows_of,
                               const shard_pairlist *list_shape, const int *widths, shard_package *k)
{
    int64_t hdr[6];
    shard_mpi_recv_big(c, hdr, sizeof hdr, 0, 100);
    memset(k, 0, sizeof *k);
    k->n_own = hdr[0], k->n_ghost = hdr[1], k->n_bonds = hdr[2], k->present = (uint64_t)hdr[3];
    k->n_mod = (int)hdr[4], k->n_lists = (int)hdr[5];
    k->mod = shard_malloc((3 * (size_t)k->n_mod + 1) * sizeof *k->mod);
    shard_mpi_recv_big(c, k->mod, 3 * (size_t)k->n_mod * sizeof *k->mod, 0, 100);
    k->ltotal = shard_calloc((size_t)k->n_lists + 1, sizeof *k->ltotal);
    shard_mpi_recv_big(c, k->ltotal, (size_t)k->n_lists * sizeof *k->ltotal, 0, 100);
    shard_package_alloc(k, kinds);
    shard_package_alloc_mod(k, rows_of);
    shard_package_alloc_lists(k, list_shape);
    void *ptr[SHARD_PKG_MAX_ARRAYS];
    size_t bytes[SHARD_PKG_MAX_ARRAYS];
    int m = shard_package_arrays(k, rows_of, widths, ptr, bytes);
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

/* The halo plan of one module: its ghosts [g0, g0 + ng) (grouped by owner), sent particles its owned ones
 * [o0, o0 + no) with a partner owned by the neighbour.  Iterating i in local order gives the order the
 * neighbour expects: its ghosts from me are sorted by id, and a module's owned particles are in id order. */
static shard_halo *shard_partition_halo(shard_comm *c, const shard_package *k, const shard_csr *bonds, size_t o0,
                                        size_t no, size_t g0, size_t ng)
{
    size_t n_own = (size_t)k->n_own;
    int n_nbr = 0;
    int *nbr = shard_malloc((ng + 1) * sizeof *nbr), *recv_count = shard_malloc((ng + 1) * sizeof(int));
    for (size_t q = 0; q < ng; q++) {
        int owner = k->owner[g0 - n_own + q];
        if (n_nbr == 0 || nbr[n_nbr - 1] != owner) {
            nbr[n_nbr] = owner;
            recv_count[n_nbr++] = 0;
        }
        recv_count[n_nbr - 1]++;
    }
    int *send_count = shard_calloc((size_t)n_nbr + 1, sizeof(int));
    int32_t **lists = shard_calloc((size_t)n_nbr + 1, sizeof *lists);
    size_t *caps = shard_calloc((size_t)n_nbr + 1, sizeof *caps);
    for (size_t i = o0; i < o0 + no; i++) {
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
    shard_halo *h = shard_halo_create(c, n_nbr, nbr, send_count, send_idx, recv_count, g0);
    free(nbr), free(recv_count), free(send_count), free(lists), free(caps), free(send_idx);
    return h;
}

/* Unpacks a package into the particle store, the module blocks, the bond CSR and its broken flags, and builds
 * the halo plans. */
static void shard_package_unpack(shard_comm *c, const shard_partition_kinds *kinds, const shard_package *k,
                                 shard_particles *p, shard_block *blocks, shard_csr *bonds, uint8_t **broken,
                                 shard_halo **halos, shard_pairlist *lists)
{
    for (int q = 0; q < k->n_lists; q++) {
        shard_pairlist *l = &lists[q];
        shard_pairlist_reset(l, (size_t)k->n_own);
        size_t e = 0;
        for (size_t i = 0; i < (size_t)k->n_own; i++)
            for (int32_t t = 0; t < k->lcount[q][i]; t++, e++)
                shard_pairlist_push(l, i, k->lkey[q][e], k->lval[q] + (size_t)l->width * e);
        shard_pairlist_finish(l);
    }
    size_t n_own = (size_t)k->n_own, n_ghost = (size_t)k->n_ghost, nl = n_own + n_ghost;
    shard_particles_reserve(p, nl);
    p->n_owned = n_own, p->n_bond_ghost = n_ghost, p->n_local = nl;
    memcpy(p->gid, k->gid, nl * sizeof *p->gid);
    for (int f = 0; f < shard_particle_n_fields; f++) {
        const shard_field_desc *d = &shard_particle_fields[f];
        if (!shard_package_carries(d))
            continue;
        size_t bytes = shard_package_rows(k, d) * shard_field_row_bytes(d);
        if (k->present >> f & 1u)
            memcpy(shard_particles_array(p, d), k->field[f], bytes);
        else
            memset(shard_particles_array(p, d), 0, bytes);
    }
    memcpy(p->x_build, p->x, 3 * n_own * sizeof *p->x_build);
    for (int m = 0; m < kinds->n_modules; m++) {
        shard_block *b = &blocks[m];
        size_t own, ghost;
        shard_package_mod_offsets(k, m, &own, &ghost);
        shard_block_free(b);
        b->first = own, b->n_owned = (size_t)k->mod[3 * m];
        b->ghost_first = ghost, b->n_ghost = (size_t)k->mod[3 * m + 1];
        shard_block_reserve(b, b->n_owned + b->n_ghost);
        for (int r = 0; r < b->n_rows; r++)
            if ((uint64_t)k->mod[3 * m + 2] >> r & 1u) {
                const shard_field_desc *d = &b->rows[r];
                memcpy(shard_field_array(b, d), k->mfield[m * SHARD_BLOCK_MAX_ROWS + r],
                       shard_package_mod_rows(k, m, d) * shard_field_row_bytes(d));
            }
    }
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
    for (int m = 0; m < kinds->n_modules; m++) {
        halos[m] = NULL;
        if (kinds->has_halo[m])
            halos[m] = shard_partition_halo(c, k, bonds, blocks[m].first, blocks[m].n_owned,
                                            blocks[m].ghost_first, blocks[m].n_ghost);
    }
}

int shard_partition_distribute(shard_comm *c, const shard_partition_kinds *kinds, const shard_particles *all,
                               const shard_block *all_blocks, const shard_csr *g, const uint8_t *g_broken,
                               shard_particles *p, shard_block *blocks, shard_csr *bonds, uint8_t **broken,
                               shard_halo **halos, shard_pairlist *lists, int64_t *edge_cut, shard_error *err)
{
    int widths[SHARD_PKG_MAX_LISTS];
    SHARD_ASSERT(kinds->n_lists <= SHARD_PKG_MAX_LISTS);
    for (int q = 0; q < kinds->n_lists; q++)
        widths[q] = lists[q].width;
    memset(err, 0, sizeof *err);
    shard_package mine = {0};
    int64_t cut = 0;
    int32_t *part = NULL;
    if (c->rank == 0) {
        size_t n = all->n_owned;
        part = shard_malloc((n + 1) * sizeof *part);
        shard_partition_graph(n, g, c->size, part, &cut, err);
    }
    /* The partition's verdict reaches every rank before any package is sent, so a METIS failure ends the run
     * on all ranks at the same point. */
    if (shard_comm_agree(c, err, 0)) {
        free(part);
        return err->code;
    }
    if (c->rank == 0) {
        size_t n = all->n_owned;
        uint64_t present = 0;
        SHARD_ASSERT(shard_particle_n_fields <= SHARD_PKG_MAX_FIELDS);
        for (int f = 0; f < shard_particle_n_fields; f++)
            if (shard_package_carries(&shard_particle_fields[f]) &&
                shard_particles_array(all, &shard_particle_fields[f]))
                present |= (uint64_t)1 << f;
        uint64_t *mpresent = shard_calloc((size_t)kinds->n_modules + 1, sizeof *mpresent);
        for (int m = 0; m < kinds->n_modules; m++)
            for (int r = 0; r < blocks[m].n_rows; r++)
                if ((blocks[m].rows[r].flags & SHARD_FIELD_STATE) && all_blocks && all_blocks[m].col[r])
                    mpresent[m] |= (uint64_t)1 << r;
        int32_t *module = shard_malloc((n + 1) * sizeof *module);
        for (size_t i = 0; i < n; i++)
            module[i] = kinds->body_module[all->body[i]];
        int32_t *mark = shard_malloc((n + 1) * sizeof *mark);
        for (size_t i = 0; i < n; i++)
            mark[i] = -1;
        for (int r = c->size - 1; r >= 0; r--) {
            shard_package k;
            shard_package_build(r, kinds, all, all_blocks, blocks, g, g_broken, part, module, mark, present,
                                mpresent, &k);
            if (r == 0) {
                mine = k;
            } else {
                shard_package_send(c, &k, blocks, widths, r);
                shard_package_free(&k);
            }
        }
        free(mark), free(module), free(mpresent);
    } else {
        shard_package_recv(c, kinds, blocks, lists, widths, &mine);
    }
    free(part);
    shard_comm_bcast(c, &cut, sizeof cut, 0);
    if (edge_cut)
        *edge_cut = cut;
    shard_package_unpack(c, kinds, &mine, p, blocks, bonds, broken, halos, lists);
    shard_package_free(&mine);
    return 0;
}
