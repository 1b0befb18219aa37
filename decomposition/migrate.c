/* Migration of owned particles between ranks (see migrate.h). */
#include "shard/migrate.h"

#include "halo_impl.h"
#include "package_impl.h"

#include "shard/sorted.h"

#include <stdlib.h>
#include <string.h>

/* A particle record travels as 64-bit words:
 *   gid, module, bond count, then one entry count per pair list,
 *   every carried particle row and every STATE row of its module's block (each padded to whole words),
 *   per bond: partner gid, (partner's new owner << 8 | broken),
 *   per pair list: per entry its key and its values. */
static size_t shard_migrate_words(size_t bytes) { return (bytes + 7) / 8; }

typedef struct shard_migrate_rec {
    int64_t module, gid; /* the key, (module, gid): shard_sorted_cmp_i64_pair */
    size_t at;           /* the header's index, then the record's row in the package */
} shard_migrate_rec;

/* Words of the fixed part of a record of module m (header and rows). */
static size_t shard_migrate_fixed_words(const shard_partition_kinds *kinds, const shard_block *blocks, uint64_t present,
                                        const uint64_t *mpresent, int m)
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

/* Words of owned particle i's record (as shard_migrate_pack writes it). */
static size_t shard_migrate_particle_words(const shard_partition_kinds *kinds, const size_t *fixed,
                                           const shard_particles *p, const shard_csr *bonds,
                                           const shard_pairlist *lists, size_t i)
{
    size_t w = fixed[kinds->body_module[p->body[i]]] + 2 * (size_t)(bonds->start[i + 1] - bonds->start[i]);
    for (int q = 0; q < kinds->n_lists; q++)
        w += shard_migrate_list_entries(&lists[q], i) * (1 + (size_t)lists[q].width);
    return w;
}

static size_t shard_migrate_record_words(const shard_partition_kinds *kinds, const shard_pairlist *lists,
                                         const size_t *fixed, const int64_t *rec)
{
    size_t w = fixed[rec[1]] + 2 * (size_t)rec[2];
    for (int q = 0; q < kinds->n_lists; q++)
        w += (size_t)rec[3 + q] * (1 + (size_t)lists[q].width);
    return w;
}

/* The receiver's side of a migration: the package, sized from the records' headers before any record arrives,
 * and filled record by record (from the rounds' buffers, or from this rank's own store for the particles that
 * stay), each at its final row: owned particles by (module, gid).  Bond ghosts are collected on the way and
 * appended once every record is in. */
typedef struct shard_migrate_recv {
    shard_package k;
    shard_migrate_rec *rec; /* n_rec: (module, gid, row), sorted by (module, gid) */
    size_t n_rec;
    int64_t *boff;   /* n_rec + 1: first bond entry of each row */
    int64_t **loff;  /* per list, n_rec + 1: first entry of each row */
    size_t *mod_own; /* per module: its first owned row */
    shard_partition_ghost *gh;
    size_t ng, ng_cap;
} shard_migrate_recv;

/* From the headers (H words each: gid, module, bond count, list entry counts), every record's row and the
 * package's arrays for the owned particles. */
static void shard_migrate_recv_open(shard_migrate_recv *rv, const shard_partition_kinds *kinds,
                                    const shard_block *blocks, const shard_pairlist *lists, uint64_t present,
                                    const uint64_t *mpresent, const int64_t *hdr, size_t n_rec)
{
    int nm = kinds->n_modules, nl = kinds->n_lists;
    size_t H = 3 + (size_t)nl;
    memset(rv, 0, sizeof *rv);
    rv->n_rec = n_rec;
    rv->rec = shard_malloc((n_rec + 1) * sizeof *rv->rec);
    for (size_t a = 0; a < n_rec; a++)
        rv->rec[a] = (shard_migrate_rec){hdr[H * a + 1], hdr[H * a], a};
    if (n_rec > 1)
        qsort(rv->rec, n_rec, sizeof *rv->rec, shard_sorted_cmp_i64_pair);
    shard_package *k = &rv->k;
    k->n_mod = nm;
    k->mod = shard_calloc(3 * (size_t)nm + 1, sizeof *k->mod);
    k->present = present;
    k->n_own = (int64_t)n_rec;
    rv->boff = shard_malloc((n_rec + 1) * sizeof *rv->boff);
    rv->loff = shard_calloc((size_t)nl + 1, sizeof *rv->loff);
    for (int q = 0; q < nl; q++)
        rv->loff[q] = shard_malloc((n_rec + 1) * sizeof **rv->loff);
    k->n_lists = nl;
    k->ltotal = shard_calloc((size_t)nl + 1, sizeof *k->ltotal);
    rv->boff[0] = 0;
    for (size_t l = 0; l < n_rec; l++) {
        const int64_t *h = hdr + H * rv->rec[l].at;
        k->mod[3 * h[1]]++;
        rv->boff[l + 1] = rv->boff[l] + h[2];
        for (int q = 0; q < nl; q++) {
            rv->loff[q][l] = k->ltotal[q];
            k->ltotal[q] += h[3 + q];
        }
    }
    for (int q = 0; q < nl; q++)
        rv->loff[q][n_rec] = k->ltotal[q];
    k->n_bonds = rv->boff[n_rec];
    for (int m = 0; m < nm; m++)
        k->mod[3 * m + 2] = (int64_t)mpresent[m];
    /* The ghosts are not known yet: the arrays hold the owned rows and grow when they are (recv_close). */
    shard_package_alloc(k, kinds);
    shard_package_alloc_mod(k, blocks);
    shard_package_alloc_lists(k, lists);
    rv->mod_own = shard_calloc((size_t)nm + 1, sizeof *rv->mod_own);
    for (int m = 1; m < nm; m++)
        rv->mod_own[m] = rv->mod_own[m - 1] + (size_t)k->mod[3 * (m - 1)];
    for (size_t l = 0; l < n_rec; l++) {
        const int64_t *h = hdr + H * rv->rec[l].at;
        k->gid[l] = h[0];
        k->bond_count[l] = (int32_t)h[2];
        for (int q = 0; q < nl; q++)
            k->lcount[q][l] = (int32_t)h[3 + q];
        rv->rec[l].at = l; /* from here on: the row */
    }
}

/* One record (as shard_migrate_pack wrote it) into its row. */
static void shard_migrate_recv_put(shard_migrate_recv *rv, int me, const shard_partition_kinds *kinds,
                                   const shard_block *blocks, const shard_pairlist *lists, const int64_t *r)
{
    shard_package *k = &rv->k;
    shard_migrate_rec key = {r[1], r[0], 0};
    const shard_migrate_rec *hit = bsearch(&key, rv->rec, rv->n_rec, sizeof key, shard_sorted_cmp_i64_pair);
    SHARD_ASSERT(hit);
    size_t l = hit->at;
    int m = (int)r[1];
    const int64_t *w = r + 3 + kinds->n_lists;
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (k->present >> f & 1u) {
            size_t rb = shard_field_row_bytes(&shard_particle_fields[f]);
            memcpy((char *)k->field[f] + l * rb, w, rb);
            w += shard_migrate_words(rb);
        }
    for (int rr = 0; rr < blocks[m].n_rows; rr++)
        if ((uint64_t)k->mod[3 * m + 2] >> rr & 1u) {
            size_t rb = shard_field_row_bytes(&blocks[m].rows[rr]);
            memcpy((char *)k->mfield[m * SHARD_BLOCK_MAX_ROWS + rr] + (l - rv->mod_own[m]) * rb, w, rb);
            w += shard_migrate_words(rb);
        }
    for (int64_t e = 0, at = rv->boff[l]; e < r[2]; e++, at++) {
        k->bond_gid[at] = w[0];
        k->bond_broken[at] = (uint8_t)(w[1] & 0xff);
        int32_t owner = (int32_t)(w[1] >> 8);
        if (owner != me) {
            shard_reserve((void **)&rv->gh, &rv->ng_cap, rv->ng + 1, sizeof *rv->gh);
            rv->gh[rv->ng++] = (shard_partition_ghost){m, owner, w[0]};
        }
        w += 2;
    }
    for (int q = 0; q < k->n_lists; q++) {
        size_t wd = (size_t)lists[q].width;
        for (int64_t t = 0, at = rv->loff[q][l]; t < r[3 + q]; t++, at++) {
            k->lkey[q][at] = w[0];
            memcpy(k->lval[q] + wd * (size_t)at, w + 1, wd * sizeof(double));
            w += 1 + wd;
        }
    }
}

/* Grows a package array of `own` rows by `ghost` zeroed rows (rows of rb bytes). */
static void *shard_migrate_grow(void *a, size_t own, size_t ghost, size_t rb)
{
    a = shard_realloc(a, (own + ghost) * rb + 1);
    memset((char *)a + own * rb, 0, ghost * rb);
    return a;
}

/* Every record is in: the bond ghosts (by module, owner, gid) join the package, whose ghost rows of the
 * SHARD_FIELD_GHOST arrays are zeros until the new plans fill them. */
static void shard_migrate_recv_close(shard_migrate_recv *rv, const shard_block *blocks)
{
    shard_package *k = &rv->k;
    int nm = k->n_mod;
    if (rv->ng > 1)
        qsort(rv->gh, rv->ng, sizeof *rv->gh, shard_partition_cmp_ghost);
    size_t u = 0;
    for (size_t q = 0; q < rv->ng; q++)
        if (u == 0 || shard_partition_cmp_ghost(&rv->gh[u - 1], &rv->gh[q]) != 0)
            rv->gh[u++] = rv->gh[q];
    size_t ng = u, n_own = (size_t)k->n_own;
    for (size_t q = 0; q < ng; q++)
        k->mod[3 * rv->gh[q].module + 1]++;
    k->n_ghost = (int64_t)ng;
    k->gid = shard_realloc(k->gid, (n_own + ng + 1) * sizeof *k->gid);
    k->owner = shard_realloc(k->owner, (ng + 1) * sizeof *k->owner);
    for (size_t q = 0; q < ng; q++) {
        k->owner[q] = rv->gh[q].owner;
        k->gid[n_own + q] = rv->gh[q].gid;
    }
    for (int f = 0; f < shard_particle_n_fields; f++)
        if ((k->present >> f & 1u) && (shard_particle_fields[f].flags & SHARD_FIELD_GHOST))
            k->field[f] = shard_migrate_grow(k->field[f], n_own, ng, shard_field_row_bytes(&shard_particle_fields[f]));
    for (int m = 0; m < nm; m++)
        for (int r = 0; r < blocks[m].n_rows; r++)
            if (((uint64_t)k->mod[3 * m + 2] >> r & 1u) && (blocks[m].rows[r].flags & SHARD_FIELD_GHOST))
                k->mfield[m * SHARD_BLOCK_MAX_ROWS + r] =
                    shard_migrate_grow(k->mfield[m * SHARD_BLOCK_MAX_ROWS + r], (size_t)k->mod[3 * m],
                                       (size_t)k->mod[3 * m + 1], shard_field_row_bytes(&blocks[m].rows[r]));
    free(rv->gh), free(rv->rec), free(rv->boff), free(rv->mod_own);
    for (int q = 0; q < k->n_lists; q++)
        free(rv->loff[q]);
    free(rv->loff);
    rv->gh = NULL, rv->rec = NULL, rv->boff = NULL, rv->mod_own = NULL, rv->loff = NULL;
}

/* The new bond ghosts' state rows (the SHARD_FIELD_GHOST rows of the particles' and the modules' arrays that
 * travel), from their owners through the new plans. */
static void shard_migrate_forward_ghosts(shard_halo **halos, int nm, shard_particles *p, shard_block *blocks,
                                         uint64_t present, const uint64_t *mpresent, shard_migrate_stats *stats)
{
    for (int m = 0; m < nm; m++) {
        shard_halo *h = halos[m];
        if (!h)
            continue;
        shard_halo_rows rows[SHARD_PKG_MAX_FIELDS + SHARD_BLOCK_MAX_ROWS];
        int n = 0;
        for (int f = 0; f < shard_particle_n_fields; f++) {
            const shard_field_desc *d = &shard_particle_fields[f];
            if ((present >> f & 1u) && (d->flags & SHARD_FIELD_GHOST))
                rows[n++] = (shard_halo_rows){shard_particles_array(p, d), shard_field_row_bytes(d), 0, h->recv_first};
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
}

void shard_migrate(shard_comm *c, const shard_partition_kinds *kinds, const int32_t *dest, shard_particles *p,
                   shard_block *blocks, shard_csr *bonds, uint8_t **broken, shard_halo **halos, shard_pairlist *lists,
                   shard_migrate_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    size_t n_own = p->n_owned, nl = p->n_owned + p->n_bond_ghost;
    /* The new owner of every bond ghost, from its owner through the old plans. */
    double *where = shard_malloc((nl + 1) * sizeof *where);
    for (size_t i = 0; i < n_own; i++)
        where[i] = (double)dest[i];
    for (int m = 0; m < kinds->n_modules; m++)
        if (halos[m]) {
            uint64_t b0 = shard_halo_bytes(halos[m]);
            shard_halo_field f = shard_halo_field_of(halos[m], where, 1);
            shard_halo_forward(halos[m], 1, &f);
            stats->bytes += shard_halo_bytes(halos[m]) - b0;
        }
    uint64_t forwarded = stats->bytes;
    shard_migrate_to(c, kinds, where, p, blocks, bonds, broken, halos, lists, stats);
    stats->bytes += forwarded;
    free(where);
}

void shard_migrate_to(shard_comm *c, const shard_partition_kinds *kinds, const double *where, shard_particles *p,
                      shard_block *blocks, shard_csr *bonds, uint8_t **broken, shard_halo **halos,
                      shard_pairlist *lists, shard_migrate_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    int nm = kinds->n_modules, me = c->rank, np = c->size, nl = kinds->n_lists;
    size_t n_own = p->n_owned, H = 3 + (size_t)nl;

    uint64_t *mpresent = shard_calloc((size_t)nm + 1, sizeof *mpresent);
    uint64_t present = shard_package_present(p, nm, blocks, blocks, mpresent);
    size_t *fixed = shard_calloc((size_t)nm + 1, sizeof *fixed);
    for (int m = 0; m < nm; m++)
        fixed[m] = shard_migrate_fixed_words(kinds, blocks, present, mpresent, m);
    const uint8_t *br = broken ? *broken : NULL;

    /* The records in the order they are sent: by destination, then local index. */
    size_t *count = shard_calloc((size_t)np + 1, sizeof *count), *at = shard_calloc((size_t)np + 1, sizeof *at);
    int32_t *dest = shard_malloc((n_own + 1) * sizeof *dest);
    for (size_t i = 0; i < n_own; i++) {
        dest[i] = (int32_t)where[i];
        SHARD_ASSERT(dest[i] >= 0 && dest[i] < np);
        count[dest[i]]++;
        stats->sent += dest[i] != me;
    }
    for (int r = 1; r < np; r++)
        at[r] = at[r - 1] + count[r - 1];
    size_t *order = shard_malloc((n_own + 1) * sizeof *order);
    for (size_t i = 0; i < n_own; i++)
        order[at[dest[i]]++] = i;

    /* 1. The headers, which size every receiver's package before any record arrives. */
    int64_t *hdr = shard_malloc((H * n_own + 1) * sizeof *hdr);
    for (size_t o = 0; o < n_own; o++) {
        size_t i = order[o];
        int64_t *h = hdr + H * o;
        h[0] = p->gid[i], h[1] = kinds->body_module[p->body[i]], h[2] = bonds->start[i + 1] - bonds->start[i];
        for (int q = 0; q < nl; q++)
            h[3 + q] = (int64_t)shard_migrate_list_entries(&lists[q], i);
    }
    for (int r = 0; r < np; r++) {
        if (r != me)
            stats->bytes += H * count[r] * sizeof(int64_t);
        count[r] *= H;
    }
    size_t n_hdr = 0;
    int64_t *hrecv = shard_comm_exchange_i64(c, hdr, count, &n_hdr);
    free(hdr);
    shard_migrate_recv rv;
    shard_migrate_recv_open(&rv, kinds, blocks, lists, present, mpresent, hrecv, n_hdr / H);
    free(hrecv);
    stats->received = (int64_t)rv.n_rec - ((int64_t)n_own - stats->sent);

    /* 2. The records, in rounds of at most round_words words sent per rank (at least one record each; the last
     * round takes what is left): an eighth of what the rank sends, within [1/8, 1] x SHARD_MIGRATE_ROUND_WORDS,
     * so that beside its store and its package a rank holds buffers of about a quarter of what it sends.  The
     * particles that stay go from the store to their rows directly. */
    size_t scratch_cap = 0, round_cap = 0;
    int64_t *scratch = NULL, *sbuf = NULL;
    int64_t left = 0;
    for (size_t o = 0; o < n_own; o++) {
        size_t i = order[o];
        size_t w = shard_migrate_particle_words(kinds, fixed, p, bonds, lists, i);
        if (dest[i] == me) {
            shard_reserve((void **)&scratch, &scratch_cap, w + 1, sizeof *scratch);
            shard_migrate_pack(p, kinds, blocks, bonds, br, lists, where, present, mpresent, i, scratch);
            shard_migrate_recv_put(&rv, me, kinds, blocks, lists, scratch);
        } else {
            left += (int64_t)w;
        }
    }
    free(scratch);
    int64_t round_words = (int64_t)kinds->round_words;
    if (!round_words) {
        round_words = left / SHARD_MIGRATE_MIN_ROUNDS;
        round_words = round_words < SHARD_MIGRATE_ROUND_WORDS / 8 ? SHARD_MIGRATE_ROUND_WORDS / 8
                      : round_words > SHARD_MIGRATE_ROUND_WORDS   ? SHARD_MIGRATE_ROUND_WORDS
                                                                  : round_words;
    }
    int64_t rounds = (left + round_words - 1) / round_words;
    rounds = (int64_t)shard_comm_max(c, (double)rounds);
    size_t o = 0;
    for (int64_t round = 0; round < rounds; round++) {
        memset(count, 0, ((size_t)np + 1) * sizeof *count);
        size_t used = 0;
        for (; o < n_own; o++) {
            size_t i = order[o];
            if (dest[i] == me)
                continue;
            size_t w = shard_migrate_particle_words(kinds, fixed, p, bonds, lists, i);
            if (used > 0 && used + w > (size_t)round_words && round + 1 < rounds)
                break;
            shard_reserve((void **)&sbuf, &round_cap, used + w + 1, sizeof *sbuf);
            used += shard_migrate_pack(p, kinds, blocks, bonds, br, lists, where, present, mpresent, i, sbuf + used);
            count[dest[i]] += w;
        }
        stats->bytes += used * sizeof(int64_t);
        size_t n_words = 0;
        int64_t *recv = shard_comm_exchange_i64(c, sbuf, count, &n_words);
        for (size_t w = 0; w < n_words;) {
            shard_migrate_recv_put(&rv, me, kinds, blocks, lists, recv + w);
            w += shard_migrate_record_words(kinds, lists, fixed, recv + w);
        }
        free(recv);
    }
    SHARD_ASSERT(o == n_own || rounds == 0);
    free(sbuf), free(order), free(count), free(at), free(dest), free(fixed);
    shard_migrate_recv_close(&rv, blocks);

    for (int m = 0; m < nm; m++)
        shard_halo_destroy(&halos[m]);
    shard_package_unpack(c, kinds, &rv.k, p, blocks, bonds, broken, halos, lists);
    shard_package_free(&rv.k);

    shard_migrate_forward_ghosts(halos, nm, p, blocks, present, mpresent, stats);
    free(mpresent);
}
