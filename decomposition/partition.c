/* Partition and start-up distribution (see partition.h). */
#include "shard/partition.h"

#include "package_impl.h"

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
        uint64_t *mpresent = shard_calloc((size_t)kinds->n_modules + 1, sizeof *mpresent);
        uint64_t present = shard_package_present(all, kinds->n_modules, blocks, all_blocks, mpresent);
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
