/* Checkpoint range reader: shard_checkpoint_load_range, the parallel read of a checkpoint, every rank its hyperslab
 * of the file's rows, then each row to the owner of its global id.
 *
 * The checks are those of the whole-file reader (shard_checkpoint_load, tests/support/checkpoint_whole.c: the
 * reference the tests compare this reader with), in the same order, each made where its data is, and every one ends
 * with an agreement, so that every rank takes the same path through the HDF5 calls and returns the same message.
 * Where a message names the first offender (a row, a particle), it is the one the whole-file reader names: checks
 * over file rows take the lowest failing rank's first (readers hold the rows in rank order), checks over global ids
 * the lowest failing owner's first (owners hold the ids in rank order), and the checks made by the owner of another
 * id than the one named (sections' duplicates, symmetry) take the smallest candidate over the ranks.
 */
#include "checkpoint_impl.h"

#include "shard/sorted.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SHARD_HAVE_HDF5

/* The reader's state: the file, the cut, and the global id and owner of each file row this rank reads. */
typedef struct shard_ckpt_par {
    shard_comm *c;
    hid_t f;
    const char *path;
    int rank, size;
    int64_t n, nb;
    int64_t first, n_local; /* the ids this rank owns, and the file rows it reads (the same cut) */
    int64_t *fgid;          /* per file row read: its global id */
    int32_t *dest;          /* per file row read: the owner of its id */
} shard_ckpt_par;

/* Collective: whether any rank failed, with the lowest failing rank's message on every rank. */
static int shard_ckpt_agree(shard_ckpt_par *k, shard_error *err) { return shard_comm_any_error(k->c, err); }

/* The verdicts of shard_ckpt_add_up. */
enum { SHARD_CKPT_ADDS_UP = 0, SHARD_CKPT_OVER = 1, SHARD_CKPT_SHORT = 2 };

/* Collective: the counts of this rank's file rows against the `total` entries of their dataset, as the
 * whole-file reader judges them: a negative count or a sum above total is SHARD_CKPT_OVER ("does not add
 * up"), a sum below it SHARD_CKPT_SHORT (*sum set); when they add up, *at is where this rank's entries start and
 * *mine how many they are.  The same verdict on every rank. */
static int shard_ckpt_add_up(shard_ckpt_par *k, const int32_t *count, int64_t total, int64_t *at, int64_t *mine,
                             int64_t *sum)
{
    int over = 0;
    int64_t s = 0;
    for (int64_t i = 0; i < k->n_local && !over; i++) {
        if (count[i] < 0 || count[i] > total - s)
            over = 1;
        else
            s += count[i];
    }
    shard_comm_max_ints(k->c, &over, 1);
    if (over)
        return SHARD_CKPT_OVER;
    /* Each rank's s is at most total <= 2^60, but p of them may not fit an int64: a rounded sum far beyond
     * total settles those, and below 2^62 the exact one cannot overflow. */
    double ds = (double)s;
    shard_comm_sum(k->c, &ds, 1);
    if (ds > 0x1p62)
        return SHARD_CKPT_OVER;
    *sum = shard_comm_sum_i64(k->c, s);
    if (*sum > total)
        return SHARD_CKPT_OVER;
    if (*sum < total)
        return SHARD_CKPT_SHORT;
    *at = shard_comm_exscan_i64(k->c, s);
    *mine = s;
    return SHARD_CKPT_ADDS_UP;
}

/* Global ids: a permutation of 0..n-1.  Each reader checks its rows' ids are in range; each owner that it is
 * sent exactly its n_local ids (counted before they travel, so that a corrupt file cannot send one rank more
 * than its share) and no id twice. */
static int shard_ckpt_par_gids(shard_ckpt_par *k, shard_error *err)
{
    int64_t nl = k->n_local, n = k->n;
    int p = k->size;
    k->fgid = shard_malloc(((size_t)nl + 1) * sizeof *k->fgid);
    k->dest = shard_malloc(((size_t)nl + 1) * sizeof *k->dest);
    shard_ckpt_read_part(k->f, k->path, "/particles/global_id", SHARD_TYPE_I64, 1, n, k->first, nl, k->fgid, err);
    if (shard_ckpt_agree(k, err))
        return err->code;
    int bad = 0;
    int64_t *cnt = shard_calloc((size_t)p + 1, sizeof *cnt);
    for (int64_t i = 0; i < nl && !bad; i++) {
        if (k->fgid[i] < 0 || k->fgid[i] >= n)
            bad = 1;
        else
            cnt[k->dest[i] = shard_ckpt_owner(k->fgid[i], n, p)]++;
    }
    shard_comm_max_ints(k->c, &bad, 1);
    if (!bad) {
        int64_t *in = shard_ckpt_transpose(k->c, cnt), got = 0;
        for (int s = 0; s < p; s++)
            got += in[s];
        bad = got != nl;
        free(in);
        shard_comm_max_ints(k->c, &bad, 1);
    }
    if (!bad) {
        size_t *count = shard_malloc(((size_t)p + 1) * sizeof *count);
        for (int r = 0; r < p; r++)
            count[r] = (size_t)cnt[r];
        size_t *at = shard_ckpt_offsets(count, p), n_recv = 0;
        int64_t *send = shard_malloc(((size_t)nl + 1) * sizeof *send);
        for (int64_t i = 0; i < nl; i++)
            send[at[k->dest[i]]++] = k->fgid[i];
        int64_t *recv = shard_ckpt_exchange(k->c, k->path, "/particles/global_id", send, count, &n_recv, err);
        free(send), free(count), free(at);
        if (!recv) {
            free(cnt);
            return err->code;
        }
        uint8_t *seen = shard_calloc((size_t)nl + 1, 1);
        for (size_t q = 0; q < n_recv && !bad; q++) {
            int64_t row = recv[q] - k->first;
            if (row < 0 || row >= nl || seen[row])
                bad = 1;
            else
                seen[row] = 1;
        }
        free(seen), free(recv);
        shard_comm_max_ints(k->c, &bad, 1);
    }
    free(cnt);
    if (bad)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: /particles/global_id is not a permutation of 0..%lld", k->path,
                        (long long)(n - 1));
    return err->code;
}

/* The particles' STATE rows: read for the file rows, then sent to the owners as records
 * (global id, each row's bytes in whole words) and stored at row = id - first. */
static int shard_ckpt_par_particles(shard_ckpt_par *k, shard_checkpoint_data *d, shard_error *err)
{
    int64_t nl = k->n_local;
    int p = k->size;
    shard_particles fp; /* the file rows this rank read */
    shard_particles_alloc_rows(&fp, (size_t)nl, SHARD_FIELD_STATE);
    size_t w = 1;
    for (int fi = 0; fi < shard_particle_n_fields; fi++) {
        const shard_field_desc *fd = &shard_particle_fields[fi];
        if (!(fd->flags & SHARD_FIELD_STATE))
            continue;
        w += shard_ckpt_words(shard_field_row_bytes(fd));
        char name[160];
        snprintf(name, sizeof name, "/particles/%s", fd->name);
        shard_ckpt_read_part(k->f, k->path, name, fd->type, fd->ncomp, k->n, k->first, nl,
                             shard_particles_array(&fp, fd), err);
        if (shard_ckpt_agree(k, err)) {
            shard_particles_free(&fp);
            return err->code;
        }
    }
    size_t *count = shard_calloc((size_t)p + 1, sizeof *count);
    for (int64_t i = 0; i < nl; i++)
        count[k->dest[i]] += w;
    size_t *at = shard_ckpt_offsets(count, p), n_recv = 0;
    int64_t *send = shard_calloc((size_t)nl * w + 1, sizeof *send);
    for (int64_t i = 0; i < nl; i++) {
        int64_t *o = send + at[k->dest[i]];
        at[k->dest[i]] += w;
        *o++ = k->fgid[i];
        for (int fi = 0; fi < shard_particle_n_fields; fi++) {
            const shard_field_desc *fd = &shard_particle_fields[fi];
            if (!(fd->flags & SHARD_FIELD_STATE))
                continue;
            size_t rb = shard_field_row_bytes(fd);
            memcpy(o, (const unsigned char *)shard_particles_array(&fp, fd) + (size_t)i * rb, rb);
            o += shard_ckpt_words(rb);
        }
    }
    shard_particles_free(&fp);
    int64_t *recv = shard_ckpt_exchange(k->c, k->path, "/particles", send, count, &n_recv, err);
    free(send), free(count), free(at);
    if (!recv)
        return err->code;
    shard_particles_alloc_rows(&d->p, (size_t)nl, SHARD_FIELD_STATE);
    for (size_t q = 0; q + w <= n_recv; q += w) {
        size_t row = (size_t)(recv[q] - k->first); /* in range, once each: the permutation was checked */
        const int64_t *o = recv + q + 1;
        for (int fi = 0; fi < shard_particle_n_fields; fi++) {
            const shard_field_desc *fd = &shard_particle_fields[fi];
            if (!(fd->flags & SHARD_FIELD_STATE))
                continue;
            size_t rb = shard_field_row_bytes(fd);
            memcpy((unsigned char *)shard_particles_array(&d->p, fd) + row * rb, o, rb);
            o += shard_ckpt_words(rb);
        }
    }
    free(recv);
    return 0;
}

/* What the owner of an id learns of a section's ids: the two smallest file rows that name each of its ids. */
typedef struct shard_ckpt_rows2 {
    int64_t first;
    int64_t *row1, *row2;
} shard_ckpt_rows2;

static void shard_ckpt_take_rows(void *ctx, const int64_t *rec, size_t n)
{
    shard_ckpt_rows2 *t = ctx;
    for (size_t q = 0; q < n; q++) {
        int64_t i = rec[2 * q] - t->first, row = rec[2 * q + 1];
        if (row < t->row1[i]) {
            t->row2[i] = t->row1[i];
            t->row1[i] = row;
        } else if (row < t->row2[i]) {
            t->row2[i] = row;
        }
    }
}

/* Section k: /<name>/global_id, then every STATE row.  The whole-file reader stops at the first file row whose
 * id is out of range or already taken (by an earlier row of this section or by an earlier section): the reader
 * of a row checks its range, the owner of an id the rest (its first row offends when an earlier section has the
 * id, its second row otherwise), and the smallest offending row over the ranks is named. */
static int shard_ckpt_par_section(shard_ckpt_par *k, const shard_checkpoint_section *sec, int ks,
                                  shard_checkpoint_data *d, shard_error *err)
{
    shard_block *b = &d->blocks[ks];
    shard_block_init(b, sec->block->rows, sec->block->n_rows);
    if (!shard_ckpt_stateful(b))
        return 0;
    int p = k->size;
    int64_t n = k->n, nl = k->n_local;
    char name[256];
    snprintf(name, sizeof name, "/%s/global_id", sec->name);
    int64_t ns = shard_ckpt_rows_of(k->f, k->path, name, err);
    if (!err->code && ns > n)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: %s has %lld rows, more than the %lld particles", k->path, name,
                        (long long)ns, (long long)n);
    if (shard_ckpt_agree(k, err))
        return err->code;
    int64_t sa = shard_ckpt_split(ns, k->rank, p), sn = shard_ckpt_split(ns, k->rank + 1, p) - sa;
    int64_t *sgid = shard_malloc(((size_t)sn + 1) * sizeof *sgid);
    shard_ckpt_read_part(k->f, k->path, name, SHARD_TYPE_I64, 1, ns, sa, sn, sgid, err);
    if (shard_ckpt_agree(k, err)) {
        free(sgid);
        return err->code;
    }
    int32_t *sdest = shard_malloc(((size_t)sn + 1) * sizeof *sdest);
    int64_t bad_row = INT64_MAX, none = INT64_MAX;
    size_t *count = shard_calloc((size_t)p + 1, sizeof *count);
    for (int64_t q = 0; q < sn; q++) {
        if (sgid[q] < 0 || sgid[q] >= n) {
            sdest[q] = -1;
            if (bad_row == INT64_MAX)
                bad_row = sa + q;
        } else {
            count[sdest[q] = shard_ckpt_owner(sgid[q], n, p)]++;
        }
    }
    size_t *at = shard_ckpt_offsets(count, p);
    int64_t *send = shard_malloc((2 * (size_t)sn + 1) * sizeof *send);
    for (int64_t q = 0; q < sn; q++)
        if (sdest[q] >= 0) {
            int64_t *o = send + 2 * at[sdest[q]]++;
            o[0] = sgid[q], o[1] = sa + q;
        }
    free(at);
    shard_ckpt_rows2 t = {k->first, shard_malloc(((size_t)nl + 1) * sizeof *t.row1),
                          shard_malloc(((size_t)nl + 1) * sizeof *t.row2)};
    for (int64_t i = 0; i < nl; i++)
        t.row1[i] = t.row2[i] = INT64_MAX;
    /* A valid section sends an owner at most its n_local ids (the slack only saves rounds on small ranks). */
    shard_ckpt_exchange_rounds(k->c, send, count, 2, (size_t)nl + 64, shard_ckpt_take_rows, &t);
    free(send);
    for (int64_t i = 0; i < nl; i++) {
        int64_t off = d->section_of[i] != -1 ? t.row1[i] : t.row2[i];
        bad_row = off < bad_row ? off : bad_row;
    }
    shard_ckpt_min_pair(k->c, &bad_row, &none);
    if (bad_row != INT64_MAX) {
        free(t.row1), free(t.row2), free(sgid), free(sdest), free(count);
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: %s holds an id out of range or given twice (row %lld)",
                               k->path, name, (long long)bad_row);
    }
    for (int64_t i = 0; i < nl; i++)
        if (t.row1[i] != INT64_MAX)
            d->section_of[i] = (int8_t)ks;
    free(t.row1), free(t.row2);
    /* The STATE rows of the section's file rows, then to the owners (at most n_local each: the ids are distinct). */
    shard_block fb; /* the section's file rows this rank read */
    shard_block_init(&fb, b->rows, b->n_rows);
    size_t w = 1;
    for (int r = 0; r < b->n_rows && !err->code; r++) {
        const shard_field_desc *fd = &b->rows[r];
        if (!(fd->flags & SHARD_FIELD_STATE))
            continue;
        size_t rb = shard_field_row_bytes(fd);
        w += shard_ckpt_words(rb);
        *shard_field_slot(b, fd) = shard_calloc((size_t)nl + 1, rb);
        *shard_field_slot(&fb, fd) = shard_calloc((size_t)sn + 1, rb);
        snprintf(name, sizeof name, "/%s/%s", sec->name, fd->name);
        shard_ckpt_read_part(k->f, k->path, name, fd->type, fd->ncomp, ns, sa, sn, shard_field_array(&fb, fd), err);
        shard_ckpt_agree(k, err);
    }
    int64_t *recv = NULL;
    size_t n_recv = 0;
    if (!err->code) {
        for (int r = 0; r < p; r++)
            count[r] *= w;
        at = shard_ckpt_offsets(count, p);
        send = shard_calloc((size_t)sn * w + 1, sizeof *send);
        for (int64_t q = 0; q < sn; q++) {
            int64_t *o = send + at[sdest[q]];
            at[sdest[q]] += w;
            *o++ = sgid[q];
            for (int r = 0; r < b->n_rows; r++) {
                const shard_field_desc *fd = &b->rows[r];
                if (!(fd->flags & SHARD_FIELD_STATE))
                    continue;
                size_t rb = shard_field_row_bytes(fd);
                memcpy(o, (const unsigned char *)shard_field_array(&fb, fd) + (size_t)q * rb, rb);
                o += shard_ckpt_words(rb);
            }
        }
        free(at);
        recv = shard_ckpt_exchange(k->c, k->path, sec->name, send, count, &n_recv, err);
        free(send);
    }
    for (size_t q = 0; recv && q + w <= n_recv; q += w) {
        size_t row = (size_t)(recv[q] - k->first);
        const int64_t *o = recv + q + 1;
        for (int r = 0; r < b->n_rows; r++) {
            const shard_field_desc *fd = &b->rows[r];
            if (!(fd->flags & SHARD_FIELD_STATE))
                continue;
            size_t rb = shard_field_row_bytes(fd);
            memcpy((unsigned char *)shard_field_array(b, fd) + row * rb, o, rb);
            o += shard_ckpt_words(rb);
        }
    }
    free(recv), free(sgid), free(sdest), free(count);
    shard_block_free(&fb);
    return err->code;
}

/* Pair list q: counts per file row, keys and values row after row.  The counts must add up (checked over the
 * ranks); each row travels to its owner as (id, count, then key and value words per entry); the owner checks the
 * keys increase in each row (in id order, as the whole-file reader does, so the lowest failing owner's first
 * row is the particle it names). */
static int shard_ckpt_par_list(shard_ckpt_par *k, const shard_checkpoint_list *li, int q, shard_checkpoint_data *d,
                               shard_error *err)
{
    int p = k->size;
    int64_t nl = k->n_local;
    int w = li->list->width;
    shard_pairlist *l = &d->lists[q];
    shard_pairlist_init(l, w);
    char name[256];
    snprintf(name, sizeof name, "/%s/key", li->name);
    int64_t ne = shard_ckpt_rows_of(k->f, k->path, name, err);
    if (!err->code && ne > SHARD_CKPT_MAX_COUNT)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: /%s has %lld entries, more than a checkpoint can hold (2^60)",
                        k->path, li->name, (long long)ne);
    if (shard_ckpt_agree(k, err))
        return err->code;
    int32_t *count = shard_malloc(((size_t)nl + 1) * sizeof *count);
    snprintf(name, sizeof name, "/%s/count", li->name);
    shard_ckpt_read_part(k->f, k->path, name, SHARD_TYPE_I32, 1, k->n, k->first, nl, count, err);
    if (!shard_ckpt_agree(k, err)) {
        snprintf(name, sizeof name, "/%s/key", li->name);
        shard_ckpt_check_shape(k->f, k->path, name, SHARD_TYPE_I64, 1, ne, err);
    }
    if (!shard_ckpt_agree(k, err)) {
        snprintf(name, sizeof name, "/%s/value", li->name);
        shard_ckpt_check_shape(k->f, k->path, name, SHARD_TYPE_F64, w, ne, err);
    }
    int64_t e0 = 0, n_mine = 0, total = 0;
    int verdict = shard_ckpt_agree(k, err) ? SHARD_CKPT_ADDS_UP : shard_ckpt_add_up(k, count, ne, &e0, &n_mine, &total);
    if (verdict == SHARD_CKPT_OVER)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: /%s/count does not add up to its %lld keys", k->path, li->name,
                        (long long)ne);
    else if (verdict == SHARD_CKPT_SHORT)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: /%s/count adds up to %lld, not its %lld keys", k->path, li->name,
                        (long long)total, (long long)ne);
    if (err->code) {
        free(count);
        return err->code;
    }
    int64_t *key = shard_malloc(((size_t)n_mine + 1) * sizeof *key);
    double *val = shard_malloc(((size_t)n_mine * (size_t)w + 1) * sizeof *val);
    snprintf(name, sizeof name, "/%s/key", li->name);
    shard_ckpt_read_part(k->f, k->path, name, SHARD_TYPE_I64, 1, ne, e0, n_mine, key, err);
    if (!shard_ckpt_agree(k, err)) {
        snprintf(name, sizeof name, "/%s/value", li->name);
        shard_ckpt_read_part(k->f, k->path, name, SHARD_TYPE_F64, w, ne, e0, n_mine, val, err);
    }
    int64_t *recv = NULL;
    size_t n_recv = 0;
    if (!shard_ckpt_agree(k, err)) {
        size_t *words = shard_calloc((size_t)p + 1, sizeof *words);
        for (int64_t i = 0; i < nl; i++)
            words[k->dest[i]] += 2 + (size_t)count[i] * (1 + (size_t)w);
        size_t *at = shard_ckpt_offsets(words, p);
        int64_t *send = shard_malloc((at[p] + 1) * sizeof *send);
        for (int64_t i = 0, e = 0; i < nl; i++) {
            int64_t *o = send + at[k->dest[i]];
            at[k->dest[i]] += 2 + (size_t)count[i] * (1 + (size_t)w);
            *o++ = k->fgid[i];
            *o++ = count[i];
            for (int32_t t = 0; t < count[i]; t++, e++) {
                *o++ = key[e];
                memcpy(o, val + (size_t)w * (size_t)e, (size_t)w * sizeof *val);
                o += w;
            }
        }
        recv = shard_ckpt_exchange(k->c, k->path, li->name, send, words, &n_recv, err);
        free(send), free(words), free(at);
    }
    free(key), free(val), free(count);
    if (!recv)
        return err->code;
    /* The rows by id: counts, starts, then the entries in place. */
    int64_t *where = shard_malloc(((size_t)nl + 1) * sizeof *where); /* each row's record in recv */
    shard_pairlist_reset(l, (size_t)nl);
    for (size_t o = 0; o + 2 <= n_recv; o += 2 + (size_t)recv[o + 1] * (1 + (size_t)w))
        where[recv[o] - k->first] = (int64_t)o;
    for (int64_t i = 0; i < nl; i++)
        l->start[i + 1] = l->start[i] + recv[where[i] + 1];
    size_t ne_here = (size_t)l->start[nl];
    l->cap = ne_here;
    l->key = shard_malloc((ne_here + 1) * sizeof *l->key);
    l->val = shard_malloc((ne_here * (size_t)w + 1) * sizeof *l->val);
    for (int64_t i = 0; i < nl; i++) {
        const int64_t *o = recv + where[i] + 2;
        for (int64_t e = l->start[i]; e < l->start[i + 1]; e++, o += 1 + w) {
            l->key[e] = o[0];
            memcpy(l->val + (size_t)w * (size_t)e, o + 1, (size_t)w * sizeof *l->val);
            if (e > l->start[i] && l->key[e] <= l->key[e - 1] && !err->code)
                shard_error_set(err, SHARD_EXIT_INPUT, "%s: /%s of particle %lld: keys not increasing", k->path,
                                li->name, (long long)(k->first + i));
        }
    }
    l->closed = (size_t)nl;
    l->fill = (int64_t)ne_here;
    free(where), free(recv);
    return shard_ckpt_agree(k, err);
}

/* What the owner of j does with the question "does j's row hold g?" (j, g) of a bond g-j: the smallest (g, j)
 * whose answer is no. */
typedef struct shard_ckpt_sym {
    int64_t first;
    const int64_t *start, *partner;
    int64_t g, j;
} shard_ckpt_sym;

static void shard_ckpt_take_sym(void *ctx, const int64_t *rec, size_t n)
{
    shard_ckpt_sym *t = ctx;
    for (size_t q = 0; q < n; q++) {
        int64_t j = rec[2 * q], g = rec[2 * q + 1], i = j - t->first;
        if (shard_sorted_find_i64(t->partner + t->start[i], (size_t)(t->start[i + 1] - t->start[i]), g) < 0 &&
            (g < t->g || (g == t->g && j < t->j)))
            t->g = g, t->j = j;
    }
}

/* Bonds: counts per file row (adding up to n_bonds), partners and broken flags row after row.  The reader of a
 * row checks its list (partners in range, other particles, increasing; flags 0 or 1: the lowest failing reader's
 * first row is the file's first); the rows travel to their owners as (id, count, then partner and flag per
 * entry); the symmetry of each bond g-j is asked of the owner of j. */
static int shard_ckpt_par_bonds(shard_ckpt_par *k, shard_checkpoint_data *d, shard_error *err)
{
    int p = k->size;
    int64_t nl = k->n_local, n = k->n, nb = k->nb;
    int32_t *count = shard_malloc(((size_t)nl + 1) * sizeof *count);
    shard_ckpt_read_part(k->f, k->path, "/bonds/count", SHARD_TYPE_I32, 1, n, k->first, nl, count, err);
    if (!shard_ckpt_agree(k, err))
        shard_ckpt_check_shape(k->f, k->path, "/bonds/partner", SHARD_TYPE_I64, 1, nb, err);
    if (!shard_ckpt_agree(k, err))
        shard_ckpt_check_shape(k->f, k->path, "/bonds/broken", SHARD_TYPE_U8, 1, nb, err);
    int64_t b0 = 0, n_mine = 0, total = 0;
    int verdict = shard_ckpt_agree(k, err) ? SHARD_CKPT_ADDS_UP : shard_ckpt_add_up(k, count, nb, &b0, &n_mine, &total);
    if (verdict == SHARD_CKPT_OVER)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: /bonds/count does not add up to n_bonds = %lld", k->path,
                        (long long)nb);
    else if (verdict == SHARD_CKPT_SHORT)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: /bonds/count adds up to %lld, not n_bonds = %lld", k->path,
                        (long long)total, (long long)nb);
    if (err->code) {
        free(count);
        return err->code;
    }
    int64_t *partner = shard_malloc(((size_t)n_mine + 1) * sizeof *partner);
    uint8_t *broken = shard_malloc((size_t)n_mine + 1);
    shard_ckpt_read_part(k->f, k->path, "/bonds/partner", SHARD_TYPE_I64, 1, nb, b0, n_mine, partner, err);
    if (!shard_ckpt_agree(k, err))
        shard_ckpt_read_part(k->f, k->path, "/bonds/broken", SHARD_TYPE_U8, 1, nb, b0, n_mine, broken, err);
    if (!shard_ckpt_agree(k, err)) {
        for (int64_t i = 0, e = 0; i < nl && !err->code; i++) {
            int64_t g = k->fgid[i];
            for (int32_t q = 0; q < count[i]; q++, e++) {
                int64_t j = partner[e];
                if (j < 0 || j >= n || j == g || broken[e] > 1 || (q > 0 && j <= partner[e - 1])) {
                    shard_error_set(err, SHARD_EXIT_INPUT,
                                    "%s: bond list of particle %lld is invalid (partners must be other particles' "
                                    "ids in increasing order, broken flags 0 or 1)",
                                    k->path, (long long)g);
                    break;
                }
            }
        }
        shard_ckpt_agree(k, err);
    }
    int64_t *recv = NULL;
    size_t n_recv = 0;
    if (!err->code) {
        size_t *words = shard_calloc((size_t)p + 1, sizeof *words);
        for (int64_t i = 0; i < nl; i++)
            words[k->dest[i]] += 2 + 2 * (size_t)count[i];
        size_t *at = shard_ckpt_offsets(words, p);
        int64_t *send = shard_malloc((at[p] + 1) * sizeof *send);
        for (int64_t i = 0, e = 0; i < nl; i++) {
            int64_t *o = send + at[k->dest[i]];
            at[k->dest[i]] += 2 + 2 * (size_t)count[i];
            *o++ = k->fgid[i];
            *o++ = count[i];
            for (int32_t q = 0; q < count[i]; q++, e++) {
                *o++ = partner[e];
                *o++ = broken[e];
            }
        }
        recv = shard_ckpt_exchange(k->c, k->path, "/bonds", send, words, &n_recv, err);
        free(send), free(words), free(at);
    }
    free(count), free(partner), free(broken);
    if (!recv)
        return err->code;
    /* The rows by id. */
    int64_t *where = shard_malloc(((size_t)nl + 1) * sizeof *where);
    for (size_t o = 0; o + 2 <= n_recv; o += 2 + 2 * (size_t)recv[o + 1])
        where[recv[o] - k->first] = (int64_t)o;
    d->bonds.n = (size_t)nl;
    d->bonds.row_cap = (size_t)nl + 1;
    d->bonds.start = shard_malloc(((size_t)nl + 1) * sizeof *d->bonds.start);
    d->bonds.start[0] = 0;
    for (int64_t i = 0; i < nl; i++)
        d->bonds.start[i + 1] = d->bonds.start[i] + recv[where[i] + 1];
    size_t nb_here = (size_t)d->bonds.start[nl];
    d->partner = shard_malloc((nb_here + 1) * sizeof *d->partner);
    d->broken = shard_malloc(nb_here + 1);
    for (int64_t i = 0; i < nl; i++) {
        const int64_t *o = recv + where[i] + 2;
        for (int64_t e = d->bonds.start[i]; e < d->bonds.start[i + 1]; e++, o += 2) {
            d->partner[e] = o[0];
            d->broken[e] = (uint8_t)o[1];
        }
    }
    free(where), free(recv);
    /* Symmetry (the force assembly gathers from both ends, and the graph balancer takes an undirected graph): for
     * every bond g-j, (j, g) to the owner of j, who looks for g in j's row.  A valid file sends an owner as many
     * questions as its rows hold bonds. */
    size_t *cnt = shard_calloc((size_t)p + 1, sizeof *cnt);
    int32_t *jdest = shard_malloc((nb_here + 1) * sizeof *jdest);
    for (size_t e = 0; e < nb_here; e++)
        cnt[jdest[e] = shard_ckpt_owner(d->partner[e], n, p)]++;
    size_t *at = shard_ckpt_offsets(cnt, p);
    int64_t *ask = shard_malloc((2 * nb_here + 1) * sizeof *ask);
    for (int64_t i = 0; i < nl; i++)
        for (int64_t e = d->bonds.start[i]; e < d->bonds.start[i + 1]; e++) {
            int64_t *o = ask + 2 * at[jdest[e]]++;
            o[0] = d->partner[e], o[1] = k->first + i;
        }
    free(at), free(jdest);
    shard_ckpt_sym t = {k->first, d->bonds.start, d->partner, INT64_MAX, INT64_MAX};
    shard_ckpt_exchange_rounds(k->c, ask, cnt, 2, nb_here + 64, shard_ckpt_take_sym, &t);
    free(ask), free(cnt);
    shard_ckpt_min_pair(k->c, &t.g, &t.j);
    if (t.g != INT64_MAX)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: bond %lld-%lld has no partner bond %lld-%lld", k->path,
                        (long long)t.g, (long long)t.j, (long long)t.j, (long long)t.g);
    return err->code;
}

/* The checksum: each owner's sum of its particles' hashes (those of the whole-file reader, row for row), summed
 * over the ranks: the same total on every rank. */
static int shard_ckpt_par_checksum(shard_ckpt_par *k, int n_lists, shard_checkpoint_data *d, uint64_t checksum,
                                   shard_error *err)
{
    uint64_t sum = 0;
    for (int64_t i = 0; i < k->n_local; i++) {
        int sec = d->section_of[i];
        uint64_t h = shard_ckpt_hash_fields(&d->p, (size_t)i, sec >= 0 ? &d->blocks[sec] : NULL, (size_t)i);
        for (int64_t b = d->bonds.start[i]; b < d->bonds.start[i + 1]; b++)
            h = shard_ckpt_mix(shard_ckpt_mix(h, (uint64_t)d->partner[b]), d->broken[b]);
        for (int q = 0; q < n_lists; q++)
            h = shard_ckpt_hash_list_row(h, &d->lists[q], (size_t)i);
        sum += h;
    }
    if (shard_comm_sum_u64(k->c, sum) != checksum)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: checksum mismatch: the data is corrupt", k->path);
    return err->code;
}

/* The header, from rank 0 to every rank (rank 0 read it: one reader of the metadata instead of all). */
typedef struct shard_ckpt_head {
    long step;
    double time, dt;
    int64_t n, n_bonds, contacts;
    int n_ranks, n_bodies;
    uint64_t state_hash, checksum, run_id;
    size_t scene_len;
    char scene_path[1024];
} shard_ckpt_head;

int shard_checkpoint_load_range(shard_comm *c, const char *path, int n_sections,
                                const shard_checkpoint_section *sections, int n_lists,
                                const shard_checkpoint_list *lists, shard_checkpoint_data *d, shard_error *err)
{
    memset(d, 0, sizeof *d);
    memset(err, 0, sizeof *err);
    int rank = shard_comm_rank(c), size = shard_comm_size(c);
    shard_ckpt_head h;
    memset(&h, 0, sizeof h);
    shard_h5_quiet();
    if (rank == 0) {
        hid_t f = shard_ckpt_open_file(path, err);
        if (f >= 0) {
            if (!shard_ckpt_load_header(f, path, n_sections, n_lists, SHARD_CKPT_MAX_COUNT, d, &h.checksum, err) &&
                !shard_ckpt_load_blobs(f, path, n_sections, sections, d, err) &&
                !shard_ckpt_check_sizes(f, path, d->n, d->n_bonds, n_sections, sections, n_lists, lists, err))
                shard_ckpt_load_bodies(f, path, d, err);
            if (H5Fclose(f) < 0 && !err->code)
                shard_error_set(err, SHARD_EXIT_INPUT, "%s: HDF5 cannot close it (corrupt)", path);
        }
        h.step = d->step, h.time = d->time, h.dt = d->dt, h.n = d->n, h.n_bonds = d->n_bonds;
        h.contacts = d->contacts, h.n_ranks = d->n_ranks, h.state_hash = d->state_hash, h.scene_len = d->scene_len;
        h.run_id = d->run_id, h.n_bodies = d->n_bodies;
        memcpy(h.scene_path, d->scene_path, sizeof h.scene_path);
    }
    if (shard_comm_agree(c, err, 0)) {
        shard_checkpoint_data_free(d);
        return err->code;
    }
    shard_comm_bcast(c, &h, sizeof h, 0);
    if (rank != 0) {
        d->step = h.step, d->time = h.time, d->dt = h.dt, d->n = h.n, d->n_bonds = h.n_bonds;
        d->contacts = h.contacts, d->n_ranks = h.n_ranks, d->state_hash = h.state_hash, d->scene_len = h.scene_len;
        d->run_id = h.run_id, d->n_bodies = h.n_bodies;
        memcpy(d->scene_path, h.scene_path, sizeof d->scene_path);
        d->scene_text = shard_calloc(h.scene_len + 1, 1);
        d->bodies = shard_calloc((size_t)h.n_bodies + 1, sizeof *d->bodies);
    }
    shard_comm_bcast(c, d->scene_text, h.scene_len + 1, 0);
    shard_comm_bcast(c, d->bodies, (size_t)h.n_bodies * sizeof *d->bodies, 0);
    for (int k = 0; k < n_sections; k++) {
        int64_t bytes = rank == 0 ? (d->blob[k] ? (int64_t)d->blob_bytes[k] : -1) : 0;
        shard_comm_bcast(c, &bytes, sizeof bytes, 0);
        if (bytes < 0)
            continue;
        if (rank != 0)
            d->blob[k] = shard_malloc((size_t)bytes + 1), d->blob_bytes[k] = (size_t)bytes;
        shard_comm_bcast(c, d->blob[k], (size_t)bytes, 0);
    }

    /* The data, on every rank through the MPI-IO driver (reads are independent: see shard_ckpt_read_part). */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, *(const MPI_Comm *)shard_comm_mpi(c), MPI_INFO_NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (shard_comm_first_failure(c, f < 0) >= 0) {
        /* Closing is collective: a file open on some ranks only can be closed by none of them. */
        if (f >= 0)
            shard_fail_one(c, SHARD_EXIT_INPUT, "%s: HDF5 could open it on some ranks only", path);
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: HDF5 cannot open it (truncated or corrupt)", path);
        shard_checkpoint_data_free(d);
        return err->code;
    }
    shard_ckpt_par k = {.c = c, .f = f, .path = path, .rank = rank, .size = size, .n = d->n, .nb = d->n_bonds};
    k.first = shard_ckpt_split(d->n, rank, size);
    k.n_local = shard_ckpt_split(d->n, rank + 1, size) - k.first;
    d->first = k.first, d->n_local = k.n_local;
    if (!shard_ckpt_par_gids(&k, err) && !shard_ckpt_par_particles(&k, d, err)) {
        d->section_of = shard_malloc((size_t)k.n_local + 1);
        memset(d->section_of, -1, (size_t)k.n_local + 1);
        for (int s = 0; s < n_sections && !err->code; s++)
            shard_ckpt_par_section(&k, &sections[s], s, d, err);
        for (int q = 0; q < n_lists && !err->code; q++)
            shard_ckpt_par_list(&k, &lists[q], q, d, err);
        if (!err->code && !shard_ckpt_par_bonds(&k, d, err))
            shard_ckpt_par_checksum(&k, n_lists, d, h.checksum, err);
    }
    free(k.fgid), free(k.dest);
    int closed = H5Fclose(f) >= 0;
    if (shard_comm_first_failure(c, !closed) >= 0 && !err->code)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: HDF5 cannot close it (corrupt)", path);
    if (err->code)
        shard_checkpoint_data_free(d);
    return err->code;
}

#else

int shard_checkpoint_load_range(shard_comm *c, const char *path, int n_sections,
                                const shard_checkpoint_section *sections, int n_lists,
                                const shard_checkpoint_list *lists, shard_checkpoint_data *d, shard_error *err)
{
    (void)c, (void)n_sections, (void)sections, (void)n_lists, (void)lists;
    memset(d, 0, sizeof *d);
    return shard_error_set(err, SHARD_EXIT_INPUT,
                           "%s: this shard was built without parallel HDF5 and cannot "
                           "read checkpoints",
                           path);
}

#endif
