/* Migration of owned particles between ranks (see migrate.h). */
#include "shard/migrate.h"

#include "halo_impl.h"
#include "package_impl.h"

#include <stdlib.h>
#include <string.h>

/* A particle record travels as 64-bit words:
 *   gid, module, bond count, then one entry count per pair list,
 *   every carried particle row and every STATE row of its module's block (each padded to whole words),
 *   per bond: partner gid, (partner's new owner << 8 | broken),
 *   per pair list: per entry its key and its values. */
static size_t shard_migrate_words(size_t bytes) { return (bytes + 7) / 8; }

typedef struct shard_migrate_rec {
    int64_t module, gid;
    size_t at;           /* first word in the received buffer */
} shard_migrate_rec;

static int shard_migrate_cmp_rec(const void *a, const void *b)
{
    const shard_migrate_rec *x = a, *y = b;
    if (x->module != y->module)
        return (x->module > y->module) - (x->module < y->module);
    return (x->gid > y->gid) - (x->gid < y->gid);
}

/* Words of the fixed part of a record of module m (header and rows). */
static size_t shard_migrate_fixed_words(const shard_partition_kinds *kinds, const shard_block *blocks,
                                        uint64_t present, const uint64_t *mpresent, int m)
{
    size_t w = 3 + (size_t)kinds->n_lists;
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (present >> f & 1u)
            w += shard_migrate_words(shard_field_row_bytes(&shard_particle_fields[f]));
    for (int r = 0; r < blocks[m].n_rows; r++)
        if (mpresent[m] >> r & 1u)
            w += shard_migrate_words(shard_field_row_bytes(&blocks[m].rows[r]));
    return w;
}

static size_t shard_migrate_list_entries(const shard_pairlist *l, size_t i)
{
    return i < l->n ? (size_t)(l->start[i + 1] - l->start[i]) : 0;
}

/* Writes owned particle i's record at out; returns the words written. */
static size_t shard_migrate_pack(const shard_particles *p, const shard_partition_kinds *kinds,
                                 const shard_block *blocks, const shard_csr *bonds, const uint8_t *broken,
                                 const shard_pairlist *lists, const double *where, uint64_t present,
                                 const uint64_t *mpresent, size_t i, int64_t *out)
{
    int m = kinds->body_module[p->body[i]];
    int64_t *w = out;
    *w++ = p->gid[i];
    *w++ = m;
    *w++ = bonds->start[i + 1] - bonds->start[i];
    for (int q = 0; q < kinds->n_lists; q++)
        *w++ = (int64_t)shard_migrate_list_entries(&lists[q], i);
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (present >> f & 1u) {
            const shard_field_desc *d = &shard_particle_fields[f];
            size_t rb = shard_field_row_bytes(d), nw = shard_migrate_words(rb);
            w[nw - 1] = 0;
            memcpy(w, (const char *)shard_particles_array(p, d) + i * rb, rb);
            w += nw;
        }
    const shard_block *b = &blocks[m];
    size_t slot = i - b->first;
    for (int r = 0; r < b->n_rows; r++)
        if (mpresent[m] >> r & 1u) {
            size_t rb = shard_field_row_bytes(&b->rows[r]), nw = shard_migrate_words(rb);
            w[nw - 1] = 0;
            memcpy(w, (const char *)shard_field_array(b, &b->rows[r]) + slot * rb, rb);
            w += nw;
        }
    for (int64_t e = bonds->start[i]; e < bonds->start[i + 1]; e++) {
        size_t j = (size_t)bonds->idx[e];
        *w++ = p->gid[j];
        *w++ = (int64_t)where[j] << 8 | (broken ? broken[e] : 0);
    }
    for (int q = 0; q < kinds->n_lists; q++) {
        const shard_pairlist *l = &lists[q];
        size_t n = shard_migrate_list_entries(l, i), wd = (size_t)l->width;
        for (size_t t = 0; t < n; t++) {
            size_t e = (size_t)l->start[i] + t;
            *w++ = l->key[e];
            memcpy(w, l->val + wd * e, wd * sizeof *l->val);
            w += wd;
        }
    }
    return (size_t)(w - out);
}

static size_t shard_migrate_record_words(const shard_partition_kinds *kinds, const shard_pairlist *lists,
                                         const size_t *fixed, const int64_t *rec)
{
    size_t w = fixed[rec[1]] + 2 * (size_t)rec[2];
    for (int q = 0; q < kinds->n_lists; q++)
        w += (size_t)rec[3 + q] * (1 + (size_t)lists[q].width);
    return w;
}

/* The receiver's package from the records: owned particles by (module, gid), ghosts by (module, owner, gid). */
static void shard_migrate_package(int me, const shard_partition_kinds *kinds, const shard_block *blocks,
                                  const shard_pairlist *lists, uint64_t present, const uint64_t *mpresent,
                                  const size_t *fixed, const int64_t *recv, const shard_migrate_rec *rec,
                                  size_t n_rec, shard_package *k)
{
    int nm = kinds->n_modules;
    memset(k, 0, sizeof *k);
    k->n_mod = nm;
    k->mod = shard_calloc(3 * (size_t)nm + 1, sizeof *k->mod);
    k->present = present;
    size_t ng = 0, ng_cap = 0;
    shard_partition_ghost *gh = NULL;
    for (size_t l = 0; l < n_rec; l++) {
        const int64_t *r = recv + rec[l].at;
        size_t nb = (size_t)r[2];
        const int64_t *bw = r + fixed[r[1]];
        k->mod[3 * r[1]]++;
        k->n_bonds += (int64_t)nb;
        for (size_t e = 0; e < nb; e++) {
            int32_t owner = (int32_t)(bw[2 * e + 1] >> 8);
            if (owner == me)
                continue;
            shard_reserve((void **)&gh, &ng_cap, ng + 1, sizeof *gh);
            gh[ng++] = (shard_partition_ghost){(int32_t)r[1], owner, bw[2 * e]};
        }
    }
    if (ng > 1)
        qsort(gh, ng, sizeof *gh, shard_partition_cmp_ghost);
    size_t u = 0;
    for (size_t q = 0; q < ng; q++)
        if (u == 0 || shard_partition_cmp_ghost(&gh[u - 1], &gh[q]) != 0)
            gh[u++] = gh[q];
    ng = u;
    for (size_t q = 0; q < ng; q++)
        k->mod[3 * gh[q].module + 1]++;
    for (int m = 0; m < nm; m++)
        k->mod[3 * m + 2] = (int64_t)mpresent[m];
    k->n_own = (int64_t)n_rec;
    k->n_ghost = (int64_t)ng;
    shard_package_alloc(k, kinds);
    shard_package_alloc_mod(k, blocks);
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (present >> f & 1u)
            memset(k->field[f], 0, shard_package_rows(k, &shard_particle_fields[f]) *
                                       shard_field_row_bytes(&shard_particle_fields[f]));
    for (int m = 0; m < nm; m++)
        for (int r = 0; r < blocks[m].n_rows; r++)
            if (mpresent[m] >> r & 1u)
                memset(k->mfield[m * SHARD_BLOCK_MAX_ROWS + r], 0,
                       shard_package_mod_rows(k, m, &blocks[m].rows[r]) * shard_field_row_bytes(&blocks[m].rows[r]));
    k->n_lists = kinds->n_lists;
    k->ltotal = shard_calloc((size_t)k->n_lists + 1, sizeof *k->ltotal);
    for (size_t l = 0; l < n_rec; l++)
        for (int q = 0; q < k->n_lists; q++)
            k->ltotal[q] += recv[rec[l].at + 3 + (size_t)q];
    shard_package_alloc_lists(k, lists);

    size_t nb_at = 0, *le = shard_calloc((size_t)k->n_lists + 1, sizeof *le);
    for (size_t l = 0; l < n_rec; l++) {
        const int64_t *r = recv + rec[l].at, *w = r + 3 + kinds->n_lists;
        int m = (int)r[1];
        k->gid[l] = r[0];
        for (int f = 0; f < shard_particle_n_fields; f++)
            if (present >> f & 1u) {
                size_t rb = shard_field_row_bytes(&shard_particle_fields[f]);
                memcpy((char *)k->field[f] + l * rb, w, rb);
                w += shard_migrate_words(rb);
            }
        size_t own, ghost;
        shard_package_mod_offsets(k, m, &own, &ghost);
        for (int rr = 0; rr < blocks[m].n_rows; rr++)
            if (mpresent[m] >> rr & 1u) {
                size_t rb = shard_field_row_bytes(&blocks[m].rows[rr]);
                memcpy((char *)k->mfield[m * SHARD_BLOCK_MAX_ROWS + rr] + (l - own) * rb, w, rb);
                w += shard_migrate_words(rb);
            }
        k->bond_count[l] = (int32_t)r[2];
        for (int64_t e = 0; e < r[2]; e++, nb_at++) {
            k->bond_gid[nb_at] = w[0];
            k->bond_broken[nb_at] = (uint8_t)(w[1] & 0xff);
            w += 2;
        }
        for (int q = 0; q < k->n_lists; q++) {
            size_t wd = (size_t)lists[q].width;
            k->lcount[q][l] = (int32_t)r[3 + q];
            for (int64_t t = 0; t < r[3 + q]; t++, le[q]++) {
                k->lkey[q][le[q]] = w[0];
                memcpy(k->lval[q] + wd * le[q], w + 1, wd * sizeof(double));
                w += 1 + wd;
            }
        }
    }
    free(le);
    for (size_t q = 0; q < ng; q++) {
        k->owner[q] = gh[q].owner;
        k->gid[(size_t)k->n_own + q] = gh[q].gid;
    }
    free(gh);
}

void shard_migrate(shard_comm *c, const shard_partition_kinds *kinds, const int32_t *dest, shard_particles *p,
                   shard_block *blocks, shard_csr *bonds, uint8_t **broken, shard_halo **halos,
                   shard_pairlist *lists, shard_migrate_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    int nm = kinds->n_modules, me = c->rank, np = c->size;
    size_t n_own = p->n_owned, nl = p->n_owned + p->n_bond_ghost;

    /* The new owner of every bond ghost, from its owner through the old plans. */
    double *where = shard_malloc((nl + 1) * sizeof *where);
    for (size_t i = 0; i < n_own; i++)
        where[i] = (double)dest[i];
    for (int m = 0; m < nm; m++)
        if (halos[m]) {
            uint64_t b0 = shard_halo_bytes(halos[m]);
            shard_halo_field f = shard_halo_field_of(halos[m], where, 1);
            shard_halo_forward(halos[m], 1, &f);
            stats->bytes += shard_halo_bytes(halos[m]) - b0;
        }

    uint64_t *mpresent = shard_calloc((size_t)nm + 1, sizeof *mpresent);
    uint64_t present = shard_package_present(p, nm, blocks, blocks, mpresent);
    size_t *fixed = shard_calloc((size_t)nm + 1, sizeof *fixed);
    for (int m = 0; m < nm; m++)
        fixed[m] = shard_migrate_fixed_words(kinds, blocks, present, mpresent, m);

    /* Records grouped by destination. */
    size_t *count = shard_calloc((size_t)np + 1, sizeof *count), *at = shard_calloc((size_t)np + 1, sizeof *at);
    for (size_t i = 0; i < n_own; i++) {
        SHARD_ASSERT(dest[i] >= 0 && dest[i] < np);
        int m = kinds->body_module[p->body[i]];
        size_t w = fixed[m] + 2 * (size_t)(bonds->start[i + 1] - bonds->start[i]);
        for (int q = 0; q < kinds->n_lists; q++)
            w += shard_migrate_list_entries(&lists[q], i) * (1 + (size_t)lists[q].width);
        count[dest[i]] += w;
        stats->sent += dest[i] != me;
    }
    for (int r = 1; r < np; r++)
        at[r] = at[r - 1] + count[r - 1];
    size_t total = np > 0 ? at[np - 1] + count[np - 1] : 0;
    int64_t *sbuf = shard_malloc((total + 1) * sizeof *sbuf);
    const uint8_t *br = broken ? *broken : NULL;
    for (size_t i = 0; i < n_own; i++)
        at[dest[i]] += shard_migrate_pack(p, kinds, blocks, bonds, br, lists, where, present, mpresent, i,
                                          sbuf + at[dest[i]]);
    for (int r = 0; r < np; r++)
        if (r != me)
            stats->bytes += count[r] * sizeof(int64_t);
    size_t n_words = 0;
    int64_t *recv = shard_comm_exchange_i64(c, sbuf, count, &n_words);
    free(sbuf), free(count), free(at), free(where);

    size_t n_rec = 0, cap = 0;
    shard_migrate_rec *rec = NULL;
    for (size_t w = 0; w < n_words;) {
        shard_reserve((void **)&rec, &cap, n_rec + 1, sizeof *rec);
        rec[n_rec++] = (shard_migrate_rec){recv[w + 1], recv[w], w};
        w += shard_migrate_record_words(kinds, lists, fixed, recv + w);
    }
    if (n_rec > 1)
        qsort(rec, n_rec, sizeof *rec, shard_migrate_cmp_rec);
    stats->received = (int64_t)n_rec - ((int64_t)n_own - stats->sent);

    shard_package k;
    shard_migrate_package(me, kinds, blocks, lists, present, mpresent, fixed, recv, rec, n_rec, &k);
    free(recv), free(rec), free(fixed);
    for (int m = 0; m < nm; m++)
        shard_halo_destroy(&halos[m]);
    shard_package_unpack(c, kinds, &k, p, blocks, bonds, broken, halos, lists);
    shard_package_free(&k);

    /* The new bond ghosts' state rows, from their owners through the new plans. */
    for (int m = 0; m < nm; m++) {
        shard_halo *h = halos[m];
        if (!h)
            continue;
        shard_halo_rows rows[SHARD_PKG_MAX_FIELDS + SHARD_BLOCK_MAX_ROWS];
        int n = 0;
        for (int f = 0; f < shard_particle_n_fields; f++) {
            const shard_field_desc *d = &shard_particle_fields[f];
            if ((present >> f & 1u) && (d->flags & SHARD_FIELD_GHOST))
                rows[n++] = (shard_halo_rows){shard_particles_array(p, d), shard_field_row_bytes(d), 0,
                                              h->recv_first};
        }
        shard_block *b = &blocks[m];
        for (int r = 0; r < b->n_rows; r++)
            if ((mpresent[m] >> r & 1u) && (b->rows[r].flags & SHARD_FIELD_GHOST))
                rows[n++] = (shard_halo_rows){shard_field_array(b, &b->rows[r]), shard_field_row_bytes(&b->rows[r]),
                                              b->first, b->n_owned};
        uint64_t b0 = shard_halo_bytes(h);
        shard_halo_forward_rows(h, n, rows);
        stats->bytes += shard_halo_bytes(h) - b0;
    }
    free(mpresent);
}
