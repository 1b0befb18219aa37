/* Packages: what a rank receives, and how it becomes its store (see package_impl.h). */
#include "package_impl.h"

#include "shard/sorted.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int shard_package_carries(const shard_field_desc *d)
{
    return (d->flags & SHARD_FIELD_STATE) && d->offset != offsetof(shard_particles, gid);
}

uint64_t shard_package_present(const shard_particles *src, int n_mod, const shard_block *rows_of,
                               const shard_block *src_blocks, uint64_t *mpresent)
{
    uint64_t present = 0;
    SHARD_ASSERT(shard_particle_n_fields <= SHARD_PKG_MAX_FIELDS);
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (shard_package_carries(&shard_particle_fields[f]) && shard_particles_array(src, &shard_particle_fields[f]))
            present |= (uint64_t)1 << f;
    for (int m = 0; m < n_mod; m++) {
        mpresent[m] = 0;
        for (int r = 0; r < rows_of[m].n_rows; r++)
            if ((rows_of[m].rows[r].flags & SHARD_FIELD_STATE) && src_blocks && src_blocks[m].col[r])
                mpresent[m] |= (uint64_t)1 << r;
    }
    return present;
}

size_t shard_package_rows(const shard_package *k, const shard_field_desc *d)
{
    return (size_t)k->n_own + ((d->flags & SHARD_FIELD_GHOST) ? (size_t)k->n_ghost : 0);
}

size_t shard_package_mod_rows(const shard_package *k, int m, const shard_field_desc *d)
{
    return (size_t)k->mod[3 * m] + ((d->flags & SHARD_FIELD_GHOST) ? (size_t)k->mod[3 * m + 1] : 0);
}

void shard_package_mod_offsets(const shard_package *k, int m, size_t *own, size_t *ghost)
{
    size_t o = 0, g = (size_t)k->n_own;
    for (int q = 0; q < m; q++)
        o += (size_t)k->mod[3 * q], g += (size_t)k->mod[3 * q + 1];
    *own = o, *ghost = g;
}

int shard_partition_cmp_ghost(const void *a, const void *b)
{
    const shard_partition_ghost *x = a, *y = b;
    if (x->module != y->module)
        return (x->module > y->module) - (x->module < y->module);
    if (x->owner != y->owner)
        return (x->owner > y->owner) - (x->owner < y->owner);
    return (x->gid > y->gid) - (x->gid < y->gid);
}

void shard_package_alloc(shard_package *k, const shard_partition_kinds *kinds)
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
                                           shard_field_row_bytes(&shard_particle_fields[f]) +
                                       1);
    k->mfield = shard_calloc((size_t)k->n_mod * SHARD_BLOCK_MAX_ROWS + 1, sizeof *k->mfield);
    (void)kinds;
}

void shard_package_alloc_mod(shard_package *k, const shard_block *rows_of)
{
    for (int m = 0; m < k->n_mod; m++)
        for (int r = 0; r < rows_of[m].n_rows; r++)
            if ((uint64_t)k->mod[3 * m + 2] >> r & 1u) {
                const shard_field_desc *d = &rows_of[m].rows[r];
                k->mfield[m * SHARD_BLOCK_MAX_ROWS + r] =
                    shard_malloc(shard_package_mod_rows(k, m, d) * shard_field_row_bytes(d) + 1);
            }
}

void shard_package_alloc_lists(shard_package *k, const shard_pairlist *shape)
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

void shard_package_free(shard_package *k)
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

/* Local index of a global id among the rank's particles: an open-addressing table (global ids are >= 0; -1
 * marks an empty slot), twice the particles in size.  A sorted array with a binary search per bond cost 16 %
 * of a 10^6-particle run with one migration (32 lookups per particle, ~20 probes each). */
typedef struct shard_gid_table {
    int64_t *gid;
    int32_t *local;
    size_t mask;
} shard_gid_table;

static size_t shard_gid_slot(const shard_gid_table *t, int64_t gid)
{
    uint64_t h = (uint64_t)gid * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 29)) & t->mask;
}

static void shard_gid_table_make(shard_gid_table *t, const int64_t *gid, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    t->mask = cap - 1;
    t->gid = shard_malloc(cap * sizeof *t->gid);
    t->local = shard_malloc(cap * sizeof *t->local);
    for (size_t q = 0; q < cap; q++)
        t->gid[q] = -1;
    for (size_t i = 0; i < n; i++) {
        size_t h = shard_gid_slot(t, gid[i]);
        while (t->gid[h] >= 0)
            h = (h + 1) & t->mask;
        t->gid[h] = gid[i], t->local[h] = (int32_t)i;
    }
}

static int32_t shard_gid_table_find(const shard_gid_table *t, int64_t gid)
{
    for (size_t h = shard_gid_slot(t, gid);; h = (h + 1) & t->mask) {
        if (t->gid[h] == gid)
            return t->local[h];
        if (t->gid[h] < 0)
            return -1;
    }
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
            size_t lo = shard_sorted_lower_int(nbr, (size_t)n_nbr, k->owner[j - n_own]);
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

void shard_package_unpack(shard_comm *c, const shard_partition_kinds *kinds, const shard_package *k, shard_particles *p,
                          shard_block *blocks, shard_csr *bonds, uint8_t **broken, shard_halo **halos,
                          shard_pairlist *lists)
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

    shard_gid_table keys;
    shard_gid_table_make(&keys, p->gid, nl);
    shard_csr_reserve(bonds, n_own, (size_t)k->n_bonds + 1);
    bonds->n = n_own;
    bonds->start[0] = 0;
    size_t b = 0;
    for (size_t i = 0; i < n_own; i++) {
        for (int32_t q = 0; q < k->bond_count[i]; q++, b++)
            bonds->idx[b] = shard_gid_table_find(&keys, k->bond_gid[b]);
        bonds->start[i + 1] = (int64_t)b;
    }
    free(keys.gid), free(keys.local);
    for (int m = 0; m < kinds->n_modules; m++) {
        halos[m] = NULL;
        if (kinds->has_halo[m])
            halos[m] = shard_partition_halo(c, k, bonds, blocks[m].first, blocks[m].n_owned, blocks[m].ghost_first,
                                            blocks[m].n_ghost);
    }
}
