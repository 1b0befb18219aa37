/* Checkpoint: parallel atomic writes and validated reads of the run's complete state (format in checkpoint.h).
 *
 * This file owns the checkpoint file: its sections (particles from the registry, bonds), the write protocol
 * (temporary name, collective write, flush and close, fsync, rename, pruning), the checksum, the readers with
 * their validation (the whole file on one rank, or in parallel, each rank its range of global ids), and the
 * fault-injection switch that the tests use.  It does not decide when to write (the
 * driver does) nor how the loaded state is distributed (partition.h).
 *
 * Why a crash never damages the latest complete checkpoint: the data goes to NAME.tmp; only after HDF5 has
 * closed it on every rank, and rank 0 has fsynced it, is it renamed to NAME (rename within a folder is atomic on
 * POSIX file systems), and only then are older files deleted.  A reader rejects a file without the `complete`
 * attribute, written last, so even a partial NAME.tmp given by hand is refused.
 */
#include "shard/checkpoint.h"

#include "h5io.h"

#include "shard/hash.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct shard_checkpoint {
    char dir[1024];
    long keep;
    int dir_made;
    long fault_step, fault_dataset; /* SHARD_FAULT_CHECKPOINT, or -1 */
    long files;
    uint64_t bytes;
    double seconds;
    char last[1100];
};

shard_checkpoint *shard_checkpoint_create(const char *dir, long keep)
{
    shard_checkpoint *ck = shard_calloc(1, sizeof *ck);
    snprintf(ck->dir, sizeof ck->dir, "%s", dir);
    ck->keep = keep > 0 ? keep : 1;
    ck->fault_step = ck->fault_dataset = -1;
    const char *f = getenv("SHARD_FAULT_CHECKPOINT");
    if (f && sscanf(f, "%ld:%ld", &ck->fault_step, &ck->fault_dataset) != 2)
        ck->fault_step = ck->fault_dataset = -1;
    return ck;
}

void shard_checkpoint_destroy(shard_checkpoint **ck)
{
    if (!ck || !*ck)
        return;
    free(*ck);
    *ck = NULL;
}

void shard_checkpoint_stats(const shard_checkpoint *ck, long *files, uint64_t *bytes, double *seconds)
{
    *files = ck ? ck->files : 0;
    *bytes = ck ? ck->bytes : 0;
    *seconds = ck ? ck->seconds : 0.0;
}

const char *shard_checkpoint_last_path(const shard_checkpoint *ck) { return ck ? ck->last : ""; }

/* ------------------------------------------------------------------------------------------------------------
 * Checksum: a sum over particles (exact and order-free in 64-bit integers) of a strong per-particle hash
 * ------------------------------------------------------------------------------------------------------------ */

static inline uint64_t shard_ckpt_mix(uint64_t h, uint64_t v) { return shard_hash_add(h, v); }

/* Every STATE row of a registry, element `row` of the store at `base`, component by component, each
 * zero-extended to 64 bits, into h. */
static uint64_t shard_ckpt_hash_rows(uint64_t h, const void *base, const shard_field_desc *rows, int n_rows,
                                     size_t row)
{
    for (int f = 0; f < n_rows; f++) {
        const shard_field_desc *d = &rows[f];
        if (!(d->flags & SHARD_FIELD_STATE))
            continue;
        const unsigned char *a = shard_field_array(base, d);
        for (int k = 0; k < d->ncomp; k++) {
            uint64_t v = 0;
            memcpy(&v, a + (row * (size_t)d->ncomp + (size_t)k) * d->elem_size, d->elem_size);
            h = shard_ckpt_mix(h, v);
        }
    }
    return h;
}

/* The hash of particle `row` of p: its state rows, then those of its section (blk at slot `slot`; NULL: none). */
static uint64_t shard_ckpt_hash_fields(const shard_particles *p, size_t row, const shard_block *blk, size_t slot)
{
    uint64_t h = shard_ckpt_hash_rows(0x5348415244ull /* "SHARD" */, p, shard_particle_fields,
                                      shard_particle_n_fields, row);
    if (blk)
        h = shard_ckpt_hash_rows(h, blk, blk->rows, blk->n_rows, slot);
    return h;
}

/* Row `row` of a pair list (keys and value bits) into h. */
static uint64_t shard_ckpt_hash_list_row(uint64_t h, const shard_pairlist *l, size_t row)
{
    if (!l->n)
        return h;
    for (int64_t e = l->start[row]; e < l->start[row + 1]; e++) {
        h = shard_ckpt_mix(h, (uint64_t)l->key[e]);
        for (int c = 0; c < l->width; c++) {
            uint64_t v;
            memcpy(&v, l->val + (size_t)l->width * (size_t)e + (size_t)c, sizeof v);
            h = shard_ckpt_mix(h, v);
        }
    }
    return h;
}

/* Does a block have a STATE row (and so a section in the file)? */
/* The hash of the module state records of sections[0..n) (data[k], bytes[k]; NULL: none), in section order:
 * of the records there only, so that a reader that asks for other sections without records agrees. */
static uint64_t shard_ckpt_hash_blobs(int n, const shard_checkpoint_section *sections, void *const *data,
                                      const size_t *bytes)
{
    uint64_t h = 0x5348524453544154ull;
    for (int k = 0; k < n; k++) {
        const unsigned char *b = data[k];
        if (!b)
            continue;
        h = shard_ckpt_mix(h, (uint64_t)bytes[k]);
        for (const char *c = sections[k].name; *c; c++)
            h = shard_ckpt_mix(h, (unsigned char)*c);
        for (size_t i = 0; b && i < bytes[k]; i += 8) {
            uint64_t w = 0;
            memcpy(&w, b + i, bytes[k] - i < 8 ? bytes[k] - i : 8);
            h = shard_ckpt_mix(h, w);
        }
    }
    return h;
}

static int shard_ckpt_stateful(const shard_block *b)
{
    for (int r = 0; r < b->n_rows; r++)
        if (b->rows[r].flags & SHARD_FIELD_STATE)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------------------------------------------ */

/* Rank 0: deletes complete checkpoints of steps <= step beyond the newest `keep`. */
static void shard_ckpt_prune(const shard_checkpoint *ck, long step)
{
    size_t n = 0;
    long *steps = shard_io_step_files(ck->dir, "checkpoint", step, &n);
    for (size_t k = 0; k + (size_t)ck->keep < n; k++) { /* ascending: the oldest first */
        char path[1100];
        snprintf(path, sizeof path, "%s/checkpoint_%06ld.h5", ck->dir, steps[k]);
        unlink(path);
    }
    free(steps);
}

#ifdef SHARD_HAVE_HDF5

/* The test-only crash: every rank stops dead, as on a node failure, leaving the temporary file partial. */
static void shard_ckpt_fault(const shard_checkpoint *ck, long step, long dataset)
{
    if (ck->fault_step == step && ck->fault_dataset == dataset) {
        fflush(stdout);
        raise(SIGKILL);
    }
}

int shard_checkpoint_write(shard_checkpoint *ck, shard_comm *c, const shard_checkpoint_state *st,
                           shard_error *err)
{
    double t0 = shard_wtime();
    memset(err, 0, sizeof *err);
    int rank = shard_comm_rank(c);
    if (!ck->dir_made) {
        if (rank == 0)
            shard_io_mkdirs(ck->dir, err);
        if (shard_comm_agree(c, err, 0))
            return err->code;
        ck->dir_made = 1;
    }
    char path[1100], tmp[1110];
    snprintf(path, sizeof path, "%s/checkpoint_%06ld.h5", ck->dir, st->step);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);

    const shard_particles *p = st->p;
    size_t n_own = p->n_owned;
    int64_t n_global = shard_comm_sum_i64(c, (int64_t)n_own), first = shard_comm_exscan_i64(c, (int64_t)n_own);
    size_t nb = (size_t)st->bonds->start[n_own];
    int64_t nb_global = shard_comm_sum_i64(c, (int64_t)nb), bfirst = shard_comm_exscan_i64(c, (int64_t)nb);
    int32_t *count = shard_malloc((n_own + 1) * sizeof *count);
    int64_t *partner = shard_malloc((nb + 1) * sizeof *partner);
    uint8_t *broken = shard_calloc(nb + 1, 1);
    /* The section of each owned particle: the block whose owned range holds it (NULL: none). */
    const shard_block **sec_of = shard_calloc(n_own + 1, sizeof *sec_of);
    for (int k = 0; k < st->n_sections; k++) {
        const shard_block *b = st->sections[k].block;
        if (shard_ckpt_stateful(b))
            for (size_t i = b->first; i < b->first + b->n_owned; i++)
                sec_of[i] = b;
    }
    /* Pair lists: their rows are those of the owned particles, in order; counts per particle for the file. */
    int n_lists = st->n_lists < SHARD_CHECKPOINT_MAX_LISTS ? st->n_lists : SHARD_CHECKPOINT_MAX_LISTS;
    int32_t *lcount[SHARD_CHECKPOINT_MAX_LISTS];
    int64_t l_n[SHARD_CHECKPOINT_MAX_LISTS], l_first[SHARD_CHECKPOINT_MAX_LISTS];
    for (int q = 0; q < n_lists; q++) {
        const shard_pairlist *l = st->lists[q].list;
        l_n[q] = shard_comm_sum_i64(c, (int64_t)shard_pairlist_size(l));
        l_first[q] = shard_comm_exscan_i64(c, (int64_t)shard_pairlist_size(l));
        lcount[q] = shard_malloc((n_own + 1) * sizeof *lcount[q]);
        for (size_t i = 0; i < n_own; i++)
            lcount[q][i] = l->n ? (int32_t)(l->start[i + 1] - l->start[i]) : 0;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < n_own; i++) {
        int64_t b0 = st->bonds->start[i], b1 = st->bonds->start[i + 1];
        count[i] = (int32_t)(b1 - b0);
        uint64_t h = shard_ckpt_hash_fields(p, i, sec_of[i], sec_of[i] ? i - sec_of[i]->first : 0);
        for (int64_t b = b0; b < b1; b++) {
            partner[b] = p->gid[st->bonds->idx[b]];
            broken[b] = st->broken ? st->broken[b] : 0;
            h = shard_ckpt_mix(shard_ckpt_mix(h, (uint64_t)partner[b]), broken[b]);
        }
        for (int q = 0; q < n_lists; q++)
            h = shard_ckpt_hash_list_row(h, st->lists[q].list, i);
        sum += h;
    }
    uint64_t checksum = shard_comm_sum_u64(c, sum);
    int n_sec = st->n_sections < SHARD_CHECKPOINT_MAX_SECTIONS ? st->n_sections : SHARD_CHECKPOINT_MAX_SECTIONS;
    void *blob_data[SHARD_CHECKPOINT_MAX_SECTIONS];
    size_t blob_bytes[SHARD_CHECKPOINT_MAX_SECTIONS];
    for (int k = 0; k < n_sec; k++)
        blob_data[k] = (void *)st->sections[k].blob, blob_bytes[k] = st->sections[k].blob_bytes;
    uint64_t blob_sum = shard_ckpt_hash_blobs(n_sec, st->sections, blob_data, blob_bytes);

    uint64_t raw = (uint64_t)st->scene_len + (uint64_t)n_global * sizeof(int32_t) + (uint64_t)nb_global * 9u;
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (shard_particle_fields[f].flags & SHARD_FIELD_STATE)
            raw += (uint64_t)n_global * (uint64_t)shard_particle_fields[f].ncomp * shard_particle_fields[f].elem_size;
    /* Sections: rows and offsets of each (collective sums, the same on every rank). */
    int64_t sec_n[SHARD_CHECKPOINT_MAX_SECTIONS] = {0}, sec_first[SHARD_CHECKPOINT_MAX_SECTIONS] = {0};
    for (int k = 0; k < st->n_sections && k < SHARD_CHECKPOINT_MAX_SECTIONS; k++) {
        const shard_block *b = st->sections[k].block;
        if (!shard_ckpt_stateful(b))
            continue;
        sec_n[k] = shard_comm_sum_i64(c, (int64_t)b->n_owned);
        sec_first[k] = shard_comm_exscan_i64(c, (int64_t)b->n_owned);
        raw += (uint64_t)sec_n[k] * sizeof(int64_t);
        for (int r = 0; r < b->n_rows; r++)
            if (b->rows[r].flags & SHARD_FIELD_STATE)
                raw += (uint64_t)sec_n[k] * shard_field_row_bytes(&b->rows[r]);
    }
    for (int q = 0; q < n_lists; q++)
        raw += (uint64_t)n_global * sizeof(int32_t) +
               (uint64_t)l_n[q] * (sizeof(int64_t) + (uint64_t)st->lists[q].list->width * sizeof(double));
    for (int k = 0; k < n_sec; k++)
        raw += blob_data[k] ? (uint64_t)blob_bytes[k] : 0;
    shard_h5w w;
    long ndata = 0;
    shard_h5w_create(&w, c, tmp, raw);
    shard_h5w_attr_str(&w, 0, "format", "shard-checkpoint");
    shard_h5w_attr_i64(&w, 0, "format_version", SHARD_CHECKPOINT_FORMAT_VERSION);
    shard_h5w_attr_str(&w, 0, "shard_version", SHARD_VERSION_STRING);
    shard_h5w_attr_i64(&w, 0, "step", st->step);
    shard_h5w_attr_f64(&w, 0, "time", (double)st->step * st->dt);
    shard_h5w_attr_f64(&w, 0, "dt", st->dt);
    shard_h5w_attr_i64(&w, 0, "n_particles", n_global);
    shard_h5w_attr_i64(&w, 0, "n_bonds", nb_global);
    shard_h5w_attr_i64(&w, 0, "n_ranks", shard_comm_size(c));
    shard_h5w_attr_i64(&w, 0, "contacts", st->contacts);
    shard_h5w_attr_u64(&w, 0, "state_hash", st->state_hash);
    shard_h5w_attr_u64(&w, 0, "checksum", checksum);
    shard_h5w_attr_u64(&w, 0, "module_state_checksum", blob_sum);
    shard_h5w_attr_str(&w, 0, "scene_path", st->scene_path ? st->scene_path : "");
    shard_h5w_text(&w, 0, "scene", st->scene_text, st->scene_len);
    /* Section: particles, one dataset per state row of the registry. */
    hid_t g = shard_h5w_group(&w, 0, "particles");
    for (int f = 0; f < shard_particle_n_fields && g >= 0; f++) {
        const shard_field_desc *d = &shard_particle_fields[f];
        if (!(d->flags & SHARD_FIELD_STATE))
            continue;
        shard_h5w_rows(&w, g, d->name, d->type, d->ncomp, n_global, first, n_own, shard_particles_array(p, d));
        shard_ckpt_fault(ck, st->step, ++ndata);
    }
    if (g >= 0)
        H5Gclose(g);
    /* Sections: each matter module's per-particle state, with the global ids it belongs to. */
    for (int k = 0; k < st->n_sections && k < SHARD_CHECKPOINT_MAX_SECTIONS && !w.failed; k++) {
        const shard_block *b = st->sections[k].block;
        if (!shard_ckpt_stateful(b))
            continue;
        int64_t ns = sec_n[k], sfirst = sec_first[k];
        g = shard_h5w_group(&w, 0, st->sections[k].name);
        if (g < 0)
            break;
        shard_h5w_rows(&w, g, "global_id", SHARD_TYPE_I64, 1, ns, sfirst, b->n_owned, p->gid + b->first);
        for (int r = 0; r < b->n_rows; r++) {
            const shard_field_desc *d = &b->rows[r];
            if (!(d->flags & SHARD_FIELD_STATE))
                continue;
            shard_h5w_rows(&w, g, d->name, d->type, d->ncomp, ns, sfirst, b->n_owned, shard_field_array(b, d));
            shard_ckpt_fault(ck, st->step, ++ndata);
        }
        H5Gclose(g);
    }
    /* Sections: the pair lists (force terms' memories), as bonds: a count per particle, keys, values. */
    for (int q = 0; q < n_lists && !w.failed; q++) {
        const shard_pairlist *l = st->lists[q].list;
        size_t ne = shard_pairlist_size(l);
        g = shard_h5w_group(&w, 0, st->lists[q].name);
        if (g < 0)
            break;
        shard_h5w_rows(&w, g, "count", SHARD_TYPE_I32, 1, n_global, first, n_own, lcount[q]);
        shard_h5w_rows(&w, g, "key", SHARD_TYPE_I64, 1, l_n[q], l_first[q], ne, l->key);
        shard_h5w_rows(&w, g, "value", SHARD_TYPE_F64, l->width, l_n[q], l_first[q], ne, l->val);
        H5Gclose(g);
    }
    /* Modules' own state records: the same on every rank, so rank 0 writes them. */
    g = w.failed ? -1 : shard_h5w_group(&w, 0, "module_state");
    for (int k = 0; k < n_sec && g >= 0; k++)
        if (st->sections[k].blob) {
            size_t nbytes = st->sections[k].blob_bytes;
            shard_h5w_rows(&w, g, st->sections[k].name, SHARD_TYPE_U8, 1, (int64_t)nbytes, 0,
                           rank == 0 ? nbytes : 0, st->sections[k].blob);
        }
    if (g >= 0)
        H5Gclose(g);
    /* Section: bonds with their broken flags. */
    g = shard_h5w_group(&w, 0, "bonds");
    if (g >= 0) {
        shard_h5w_rows(&w, g, "count", SHARD_TYPE_I32, 1, n_global, first, n_own, count);
        shard_ckpt_fault(ck, st->step, ++ndata);
        shard_h5w_rows(&w, g, "partner", SHARD_TYPE_I64, 1, nb_global, bfirst, nb, partner);
        shard_ckpt_fault(ck, st->step, ++ndata);
        shard_h5w_rows(&w, g, "broken", SHARD_TYPE_U8, 1, nb_global, bfirst, nb, broken);
        shard_ckpt_fault(ck, st->step, ++ndata);
        H5Gclose(g);
    }
    shard_h5w_attr_i64(&w, 0, "complete", 1);
    shard_h5w_close(&w);
    free(count), free(partner), free(broken), free(sec_of);
    for (int q = 0; q < n_lists; q++)
        free(lcount[q]);

    /* A failed write has been agreed on by every rank, with the same message, and its file removed. */
    if (w.failed)
        shard_error_set(err, SHARD_EXIT_IO, "checkpoint '%s': %s", path, w.what);
    shard_comm_any_error(c, err);
    if (rank == 0) {
        if (err->code) {
            unlink(tmp);
        } else if (shard_io_fsync_path(tmp, 0) != 0) {
            shard_error_set(err, SHARD_EXIT_IO, "checkpoint '%s': fsync failed: %s", tmp, strerror(errno));
            unlink(tmp);
        } else if (rename(tmp, path) != 0) {
            shard_error_set(err, SHARD_EXIT_IO, "checkpoint '%s': cannot rename from '%s': %s", path, tmp,
                            strerror(errno));
            unlink(tmp);
        } else {
            shard_io_fsync_path(ck->dir, 1);
            shard_ckpt_prune(ck, st->step);
        }
    }
    if (shard_comm_agree(c, err, 0))
        return err->code;
    ck->files++;
    ck->bytes += w.bytes;
    snprintf(ck->last, sizeof ck->last, "%s", path);
    ck->seconds += shard_wtime() - t0;
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------------------------------------------ */

/* A scalar numeric attribute, converted by HDF5 to the memory type `mtype`. */
static int shard_ckpt_attr(hid_t f, const char *name, hid_t mtype, void *v)
{
    if (H5Aexists(f, name) <= 0)
        return -1;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    int rc = (a >= 0 && H5Aread(a, mtype, v) >= 0) ? 0 : -1;
    if (a >= 0)
        H5Aclose(a);
    return rc;
}
static int shard_ckpt_attr_i64(hid_t f, const char *name, int64_t *v) { return shard_ckpt_attr(f, name, H5T_NATIVE_INT64, v); }
static int shard_ckpt_attr_u64(hid_t f, const char *name, uint64_t *v) { return shard_ckpt_attr(f, name, H5T_NATIVE_UINT64, v); }
static int shard_ckpt_attr_f64(hid_t f, const char *name, double *v) { return shard_ckpt_attr(f, name, H5T_NATIVE_DOUBLE, v); }

/* A fixed-length string attribute into buf (truncated to len - 1). */
static int shard_ckpt_attr_str(hid_t f, const char *name, char *buf, size_t len)
{
    buf[0] = '\0';
    if (H5Aexists(f, name) <= 0)
        return -1;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t t = H5Aget_type(a);
    int rc = -1;
    if (t >= 0 && H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t)) {
        size_t sz = H5Tget_size(t);
        char *tmp = shard_calloc(sz + 1, 1);
        if (H5Aread(a, t, tmp) >= 0) {
            snprintf(buf, len, "%s", tmp);
            rc = 0;
        }
        free(tmp);
    }
    if (t >= 0)
        H5Tclose(t);
    H5Aclose(a);
    return rc;
}

/* Opens dataset `name` and checks it has `rows` rows of ncomp values of a type like t. */
static hid_t shard_ckpt_open(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp,
                             int64_t rows, shard_error *err)
{
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: missing dataset %s", path, name);
        return -1;
    }
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot open dataset %s (the file is corrupt)", path, name);
        return -1;
    }
    hid_t sp = H5Dget_space(d), ty = H5Dget_type(d);
    hsize_t dims[2] = {0, 0};
    int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (nd >= 1 && nd <= 2)
        H5Sget_simple_extent_dims(sp, dims, NULL);
    int want_nd = ncomp == 1 ? 1 : 2;
    H5T_class_t cls = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
    H5T_class_t want_cls = t == SHARD_TYPE_F64 ? H5T_FLOAT : H5T_INTEGER;
    size_t size = ty >= 0 ? H5Tget_size(ty) : 0;
    int ok = 1;
    if (nd != want_nd || dims[0] != (hsize_t)rows || (nd == 2 && dims[1] != (hsize_t)ncomp)) {
        if (want_nd == 1)
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: dataset %s has the wrong size (expected %lld rows)", path,
                            name, (long long)rows);
        else
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: dataset %s has the wrong size (expected %lld x %d)", path,
                            name, (long long)rows, ncomp);
        ok = 0;
    } else if (cls != want_cls || size != H5Tget_size(shard_h5_mem_type(t))) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: dataset %s has the wrong element type", path, name);
        ok = 0;
    }
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    if (!ok) {
        H5Dclose(d);
        return -1;
    }
    return d;
}

static int shard_ckpt_read(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp,
                           int64_t rows, void *buf, shard_error *err)
{
    hid_t d = shard_ckpt_open(f, path, name, t, ncomp, rows, err);
    if (d < 0)
        return err->code;
    herr_t rc = rows > 0 ? H5Dread(d, shard_h5_mem_type(t), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : 0;
    H5Dclose(d);
    if (rc < 0)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot read dataset %s (the file is truncated or corrupt)",
                               path, name);
    return 0;
}

static int shard_ckpt_find(const int32_t *row, int64_t b0, int64_t b1, int32_t g)
{
    int64_t end = b1;
    while (b0 < b1) {
        int64_t mid = b0 + (b1 - b0) / 2;
        if (row[mid] < g)
            b0 = mid + 1;
        else
            b1 = mid;
    }
    return b0 < end && row[b0] == g;
}

/* Everything after the file is open and its header read: datasets, consistency, checksum. */
/* The rows of a 1-d dataset, or -1 when it is missing or not 1-d (err filled). */
static int64_t shard_ckpt_rows_of(hid_t f, const char *path, const char *name, shard_error *err)
{
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: missing dataset %s", path, name);
        return -1;
    }
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[1] = {0};
    int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (nd == 1)
        H5Sget_simple_extent_dims(sp, dims, NULL);
    if (sp >= 0)
        H5Sclose(sp);
    if (d >= 0)
        H5Dclose(d);
    if (nd != 1) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: dataset %s is not a list (the file is corrupt)", path, name);
        return -1;
    }
    return (int64_t)dims[0];
}

/* Section k: /<name>/global_id and every STATE row, scattered into d->blocks[k] by global id. */
static int shard_ckpt_load_section(hid_t f, const char *path, const shard_checkpoint_section *sec, int k,
                                   shard_checkpoint_data *d, shard_error *err)
{
    shard_block *b = &d->blocks[k];
    shard_block_init(b, sec->block->rows, sec->block->n_rows);
    if (!shard_ckpt_stateful(b))
        return 0;
    char name[256];
    snprintf(name, sizeof name, "/%s/global_id", sec->name);
    int64_t ns = shard_ckpt_rows_of(f, path, name, err), n = d->n;
    if (ns < 0)
        return err->code;
    if (ns > n)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: %s has %lld rows, more than the %lld particles", path,
                               name, (long long)ns, (long long)n);
    int64_t *gid = shard_malloc(((size_t)ns + 1) * sizeof *gid);
    if (shard_ckpt_read(f, path, name, SHARD_TYPE_I64, 1, ns, gid, err)) {
        free(gid);
        return err->code;
    }
    for (int64_t r = 0; r < ns; r++) {
        if (gid[r] < 0 || gid[r] >= n || d->section_of[gid[r]] != -1) {
            free(gid);
            return shard_error_set(err, SHARD_EXIT_INPUT, "%s: %s holds an id out of range or given twice (row %lld)",
                                   path, name, (long long)r);
        }
        d->section_of[gid[r]] = (int8_t)k;
    }
    unsigned char *tmp = NULL;
    size_t cap = 0;
    for (int r = 0; r < b->n_rows && !err->code; r++) {
        const shard_field_desc *fd = &b->rows[r];
        if (!(fd->flags & SHARD_FIELD_STATE))
            continue;
        size_t rb = shard_field_row_bytes(fd);
        *shard_field_slot(b, fd) = shard_calloc((size_t)n + 1, rb);
        shard_reserve((void **)&tmp, &cap, (size_t)ns * rb + 1, 1);
        snprintf(name, sizeof name, "/%s/%s", sec->name, fd->name);
        if (shard_ckpt_read(f, path, name, fd->type, fd->ncomp, ns, tmp, err))
            break;
        unsigned char *dst = shard_field_array(b, fd);
        for (int64_t q = 0; q < ns; q++)
            memcpy(dst + (size_t)gid[q] * rb, tmp + (size_t)q * rb, rb);
    }
    free(tmp), free(gid);
    return err->code;
}

/* Pair list q: /<name>/count per file row, keys and values row after row, rebuilt with row = global id. */
static int shard_ckpt_load_list(hid_t f, const char *path, const shard_checkpoint_list *li, int q,
                                const int64_t *gid, shard_checkpoint_data *d, shard_error *err)
{
    int64_t n = d->n;
    int w = li->list->width;
    shard_pairlist *l = &d->lists[q];
    shard_pairlist_init(l, w);
    char name[256];
    snprintf(name, sizeof name, "/%s/key", li->name);
    int64_t ne = shard_ckpt_rows_of(f, path, name, err);
    if (ne < 0)
        return err->code;
    if (ne > (int64_t)INT32_MAX) /* the bound of the bonds too: before anything is allocated from it */
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: /%s has %lld entries, more than a run can hold (2^31 - 1)",
                               path, li->name, (long long)ne);
    int32_t *count = shard_malloc(((size_t)n + 1) * sizeof *count);
    int64_t *key = shard_malloc(((size_t)ne + 1) * sizeof *key);
    double *val = shard_malloc(((size_t)ne * (size_t)w + 1) * sizeof *val);
    int64_t *row_of = shard_malloc(((size_t)n + 1) * sizeof *row_of), *at = shard_calloc((size_t)n + 2, sizeof *at);
    snprintf(name, sizeof name, "/%s/count", li->name);
    if (!shard_ckpt_read(f, path, name, SHARD_TYPE_I32, 1, n, count, err)) {
        snprintf(name, sizeof name, "/%s/key", li->name);
        shard_ckpt_read(f, path, name, SHARD_TYPE_I64, 1, ne, key, err);
    }
    if (!err->code) {
        snprintf(name, sizeof name, "/%s/value", li->name);
        shard_ckpt_read(f, path, name, SHARD_TYPE_F64, w, ne, val, err);
    }
    /* Entry offsets of each file row, then the rows in global-id order. */
    int64_t total = 0;
    for (int64_t r = 0; r < n && !err->code; r++) {
        if (count[r] < 0 || total + count[r] > ne)
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: /%s/count does not add up to its %lld keys", path, li->name,
                            (long long)ne);
        row_of[gid[r]] = total;
        at[gid[r]] = count[r];
        total += count[r];
    }
    if (!err->code && total != ne)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: /%s/count adds up to %lld, not its %lld keys", path, li->name,
                        (long long)total, (long long)ne);
    if (!err->code) {
        shard_pairlist_reset(l, (size_t)n);
        for (int64_t g = 0; g < n && !err->code; g++)
            for (int64_t e = row_of[g]; e < row_of[g] + at[g]; e++) {
                if (e > row_of[g] && key[e] <= key[e - 1]) {
                    shard_error_set(err, SHARD_EXIT_INPUT, "%s: /%s of particle %lld: keys not increasing", path,
                                    li->name, (long long)g);
                    break;
                }
                shard_pairlist_push(l, (size_t)g, key[e], val + (size_t)w * (size_t)e);
            }
        shard_pairlist_finish(l);
    }
    free(count), free(key), free(val), free(row_of), free(at);
    return err->code;
}

static int shard_ckpt_load_body(hid_t f, const char *path, int n_sections, const shard_checkpoint_section *sections,
                                int n_lists, const shard_checkpoint_list *lists, shard_checkpoint_data *d,
                                uint64_t checksum, shard_error *err)
{
    int64_t n = d->n, nb = d->n_bonds;
    int64_t *gid = shard_malloc(((size_t)n + 1) * sizeof *gid);
    if (shard_ckpt_read(f, path, "/particles/global_id", SHARD_TYPE_I64, 1, n, gid, err)) {
        free(gid);
        return err->code;
    }
    /* Global ids must be a permutation of 0 .. n-1: row r of the file holds particle gid[r]. */
    uint8_t *seen = shard_calloc((size_t)n + 1, 1);
    for (int64_t r = 0; r < n && !err->code; r++) {
        if (gid[r] < 0 || gid[r] >= n || seen[gid[r]])
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: /particles/global_id is not a permutation of 0..%lld",
                            path, (long long)(n - 1));
        else
            seen[gid[r]] = 1;
    }
    free(seen);
    shard_particles_alloc_rows(&d->p, (size_t)n, SHARD_FIELD_STATE);
    size_t tmp_cap = 0;
    unsigned char *tmp = NULL;
    for (int fi = 0; fi < shard_particle_n_fields && !err->code; fi++) {
        const shard_field_desc *fd = &shard_particle_fields[fi];
        if (!(fd->flags & SHARD_FIELD_STATE))
            continue;
        size_t rb = (size_t)fd->ncomp * fd->elem_size;
        shard_reserve((void **)&tmp, &tmp_cap, (size_t)n * rb + 1, 1);
        char name[160];
        snprintf(name, sizeof name, "/particles/%s", fd->name);
        if (shard_ckpt_read(f, path, name, fd->type, fd->ncomp, n, tmp, err))
            break;
        unsigned char *dst = shard_particles_array(&d->p, fd);
        for (int64_t r = 0; r < n; r++)
            memcpy(dst + (size_t)gid[r] * rb, tmp + (size_t)r * rb, rb);
    }
    free(tmp);
    d->section_of = shard_malloc((size_t)n + 1);
    memset(d->section_of, -1, (size_t)n + 1);
    for (int k = 0; k < n_sections && !err->code; k++)
        shard_ckpt_load_section(f, path, &sections[k], k, d, err);
    for (int q = 0; q < n_lists && !err->code; q++)
        shard_ckpt_load_list(f, path, &lists[q], q, gid, d, err);

    /* Bonds: counts per file row, partners row after row; rebuilt as a CSR with row = global id. */
    int32_t *count = shard_malloc(((size_t)n + 1) * sizeof *count);
    int64_t *partner = shard_malloc(((size_t)nb + 1) * sizeof *partner);
    d->broken = shard_malloc((size_t)nb + 1);
    uint8_t *broken_file = shard_malloc((size_t)nb + 1);
    if (!err->code)
        shard_ckpt_read(f, path, "/bonds/count", SHARD_TYPE_I32, 1, n, count, err);
    if (!err->code)
        shard_ckpt_read(f, path, "/bonds/partner", SHARD_TYPE_I64, 1, nb, partner, err);
    if (!err->code)
        shard_ckpt_read(f, path, "/bonds/broken", SHARD_TYPE_U8, 1, nb, broken_file, err);
    int64_t total = 0;
    for (int64_t r = 0; r < n && !err->code; r++) {
        if (count[r] < 0 || total + count[r] > nb)
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: /bonds/count does not add up to n_bonds = %lld", path,
                            (long long)nb);
        else
            total += count[r];
    }
    if (!err->code && total != nb)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: /bonds/count adds up to %lld, not n_bonds = %lld", path,
                        (long long)total, (long long)nb);
    if (!err->code) {
        shard_csr_reserve(&d->bonds, (size_t)n, (size_t)nb + 1);
        d->bonds.n = (size_t)n;
        d->bonds.start[0] = 0;
        for (int64_t r = 0; r < n; r++)
            d->bonds.start[gid[r] + 1] = count[r];
        for (int64_t g = 0; g < n; g++)
            d->bonds.start[g + 1] += d->bonds.start[g];
        int64_t fb = 0;
        for (int64_t r = 0; r < n && !err->code; r++) {
            int64_t g = gid[r], out = d->bonds.start[g];
            for (int32_t q = 0; q < count[r]; q++, fb++, out++) {
                int64_t j = partner[fb];
                if (j < 0 || j >= n || j == g || broken_file[fb] > 1 ||
                    (q > 0 && j <= partner[fb - 1])) {
                    shard_error_set(err, SHARD_EXIT_INPUT,
                                    "%s: bond list of particle %lld is invalid (partners must be other particles' "
                                    "ids in increasing order, broken flags 0 or 1)",
                                    path, (long long)g);
                    break;
                }
                d->bonds.idx[out] = (int32_t)j;
                d->broken[out] = broken_file[fb];
            }
        }
    }
    /* Bonds are symmetric (the force assembly gathers from both ends, and METIS needs an undirected graph). */
    for (int64_t g = 0; g < n && !err->code; g++)
        for (int64_t b = d->bonds.start[g]; b < d->bonds.start[g + 1]; b++) {
            int32_t j = d->bonds.idx[b];
            if (!shard_ckpt_find(d->bonds.idx, d->bonds.start[j], d->bonds.start[j + 1], (int32_t)g)) {
                shard_error_set(err, SHARD_EXIT_INPUT, "%s: bond %lld-%d has no partner bond %d-%lld", path,
                                (long long)g, j, j, (long long)g);
                break;
            }
        }
    free(count), free(partner), free(broken_file), free(gid);
    if (err->code)
        return err->code;
    uint64_t sum = 0;
    for (int64_t g = 0; g < n; g++) {
        int sec = d->section_of[g];
        uint64_t h = shard_ckpt_hash_fields(&d->p, (size_t)g, sec >= 0 ? &d->blocks[sec] : NULL, (size_t)g);
        for (int64_t b = d->bonds.start[g]; b < d->bonds.start[g + 1]; b++)
            h = shard_ckpt_mix(shard_ckpt_mix(h, (uint64_t)(int64_t)d->bonds.idx[b]), d->broken[b]);
        for (int q = 0; q < n_lists; q++)
            h = shard_ckpt_hash_list_row(h, &d->lists[q], (size_t)g);
        sum += h;
    }
    if (sum != checksum)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: checksum mismatch: the data is corrupt", path);
    return 0;
}

/* The file by the serial driver, after the checks that name what is wrong with a path that is no checkpoint at
 * all; -1 with err filled. */
static hid_t shard_ckpt_open_file(const char *path, shard_error *err)
{
    struct stat stt;
    if (stat(path, &stt) != 0) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot open checkpoint: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(stt.st_mode)) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: not a file", path);
        return -1;
    }
    shard_h5_quiet();
    if (H5Fis_hdf5(path) <= 0) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: not a readable HDF5 file (truncated or corrupt)", path);
        return -1;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: HDF5 cannot open it (truncated or corrupt)", path);
    return f;
}

/* The root attributes and the scene text into d (step, time, dt, n, n_bonds, n_ranks, contacts, state_hash,
 * scene_path, scene_text), the checksum into *checksum, after every check of the header; n_particles and n_bonds
 * may be at most max_count (the whole-file loader: INT32_MAX). */
static int shard_ckpt_load_header(hid_t f, const char *path, int n_sections, int n_lists, int64_t max_count,
                                  shard_checkpoint_data *d, uint64_t *checksum, shard_error *err)
{
    char fmt[64];
    int64_t version = 0, complete = 0, step = -1, n = -1, nb = -1, nranks = 0, contacts = 0;
    if (shard_ckpt_attr_str(f, "format", fmt, sizeof fmt) != 0 || strcmp(fmt, "shard-checkpoint") != 0) {
        if (strcmp(fmt, "shard-output") == 0)
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: this is an output file, not a checkpoint", path);
        else
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: not a Shard checkpoint (no format attribute "
                                                   "'shard-checkpoint')", path);
    } else if (shard_ckpt_attr_i64(f, "format_version", &version) != 0) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: no format_version attribute", path);
    } else if (version != SHARD_CHECKPOINT_FORMAT_VERSION) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: checkpoint format version %lld; this shard reads version %d",
                        path, (long long)version, SHARD_CHECKPOINT_FORMAT_VERSION);
    } else if (shard_ckpt_attr_i64(f, "complete", &complete) != 0 || complete != 1) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: incomplete checkpoint (its write was interrupted); use an "
                                               "earlier one", path);
    } else if (shard_ckpt_attr_i64(f, "step", &step) || shard_ckpt_attr_f64(f, "time", &d->time) ||
               shard_ckpt_attr_f64(f, "dt", &d->dt) || shard_ckpt_attr_i64(f, "n_particles", &n) ||
               shard_ckpt_attr_i64(f, "n_bonds", &nb) || shard_ckpt_attr_i64(f, "n_ranks", &nranks) ||
               shard_ckpt_attr_i64(f, "contacts", &contacts) ||
               shard_ckpt_attr_u64(f, "state_hash", &d->state_hash) ||
               shard_ckpt_attr_u64(f, "checksum", checksum)) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: a header attribute is missing or unreadable (step, time, dt, "
                                               "n_particles, n_bonds, n_ranks, contacts, state_hash, checksum)", path);
    } else if (n_sections > SHARD_CHECKPOINT_MAX_SECTIONS || n_lists > SHARD_CHECKPOINT_MAX_LISTS) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: more sections asked for than a checkpoint holds", path);
    } else if (step < 0 || step > SHARD_MAX_STEPS || n < 1 || n > max_count || nb < 0 || nb > max_count ||
               !(d->dt > 0.0) || !isfinite(d->dt)) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: header values out of range (step %lld, n_particles %lld, "
                                               "n_bonds %lld, dt %g)", path, (long long)step, (long long)n,
                        (long long)nb, d->dt);
    } else if (d->time != (double)step * d->dt) {
        /* The writer stores time = step * dt exactly: a step that does not give back the time is not the run's. */
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: step %lld does not match the time %.17g s at dt %.17g s (the "
                                               "header is corrupt)", path, (long long)step, d->time, d->dt);
    }
    if (!err->code) {
        d->step = (long)step, d->n = n, d->n_bonds = nb, d->n_ranks = (int)nranks, d->contacts = contacts;
        shard_ckpt_attr_str(f, "scene_path", d->scene_path, sizeof d->scene_path);
        hid_t sd = H5Lexists(f, "scene", H5P_DEFAULT) > 0 ? H5Dopen2(f, "scene", H5P_DEFAULT) : -1;
        hid_t st = sd >= 0 ? H5Dget_type(sd) : -1;
        if (st < 0 || H5Tget_class(st) != H5T_STRING || H5Tis_variable_str(st)) {
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: missing dataset scene", path);
        } else {
            size_t len = H5Tget_size(st);
            d->scene_text = shard_calloc(len + 1, 1);
            if (H5Dread(sd, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, d->scene_text) < 0)
                shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot read dataset scene (the file is corrupt)", path);
            d->scene_len = strlen(d->scene_text);
        }
        if (st >= 0)
            H5Tclose(st);
        if (sd >= 0)
            H5Dclose(sd);
    }
    return err->code;
}

/* The module state records of the sections asked for (those the file has) into d->blob, checked against the
 * root attribute module_state_checksum. */
static int shard_ckpt_load_blobs(hid_t f, const char *path, int n_sections, const shard_checkpoint_section *sections,
                                 shard_checkpoint_data *d, shard_error *err)
{
    uint64_t want = 0;
    if (shard_ckpt_attr_u64(f, "module_state_checksum", &want) != 0)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: no module_state_checksum attribute", path);
    char name[256];
    for (int k = 0; k < n_sections; k++) {
        snprintf(name, sizeof name, "/module_state/%s", sections[k].name);
        if (H5Lexists(f, "/module_state", H5P_DEFAULT) <= 0 || H5Lexists(f, name, H5P_DEFAULT) <= 0)
            continue;
        int64_t bytes = shard_ckpt_rows_of(f, path, name, err);
        if (bytes < 0)
            return err->code;
        if (bytes > (INT64_C(1) << 34))
            return shard_error_set(err, SHARD_EXIT_INPUT, "%s: dataset %s is too large (the file is corrupt)", path,
                                   name);
        d->blob[k] = shard_malloc((size_t)bytes + 1);
        d->blob_bytes[k] = (size_t)bytes;
        if (shard_ckpt_read(f, path, name, SHARD_TYPE_U8, 1, bytes, d->blob[k], err))
            return err->code;
    }
    if (shard_ckpt_hash_blobs(n_sections, sections, d->blob, d->blob_bytes) != want)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: module state checksum mismatch: the data is corrupt "
                               "(or written for other kinds of matter)", path);
    return 0;
}

int shard_checkpoint_load(const char *path, int n_sections, const shard_checkpoint_section *sections,
                          int n_lists, const shard_checkpoint_list *lists, shard_checkpoint_data *d,
                          shard_error *err)
{
    memset(d, 0, sizeof *d);
    memset(err, 0, sizeof *err);
    hid_t f = shard_ckpt_open_file(path, err);
    if (f < 0)
        return err->code;
    uint64_t checksum = 0;
    if (!shard_ckpt_load_header(f, path, n_sections, n_lists, INT32_MAX, d, &checksum, err) &&
        !shard_ckpt_load_blobs(f, path, n_sections, sections, d, err))
        shard_ckpt_load_body(f, path, n_sections, sections, n_lists, lists, d, checksum, err);
    if (H5Fclose(f) < 0 && !err->code)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: HDF5 cannot close it (corrupt)", path);
    if (err->code)
        shard_checkpoint_data_free(d);
    else
        d->n_local = d->n; /* first = 0: every particle, row = global id */
    return err->code;
}

/* ------------------------------------------------------------------------------------------------------------
 * Reading in parallel: every rank its hyperslab of the file's rows, then each row to the owner of its global id
 *
 * The checks are those of the whole-file reader, in the same order, each made where its data is, and every one
 * ends with an agreement, so that every rank takes the same path through the HDF5 calls and returns the same
 * message.  Where a message names the first offender (a row, a particle), it is the one the whole-file reader
 * names: checks over file rows take the lowest failing rank's first (readers hold the rows in rank order),
 * checks over global ids the lowest failing owner's first (owners hold the ids in rank order), and the
 * checks made by the owner of another id than the one named (sections' duplicates, symmetry) take the smallest
 * candidate over the ranks.
 * ------------------------------------------------------------------------------------------------------------ */

/* The largest count the range reader takes from a file (particles, bond entries, list entries): 2^60, so that
 * no sum of counts below can overflow; a file with more rows than that could not be stored (8 bytes a row). */
#define SHARD_CKPT_MAX_COUNT (INT64_C(1) << 60)
/* The most words one exchange may send from or deliver to a rank: MPI counts are int. */
#define SHARD_CKPT_MAX_WORDS ((uint64_t)INT32_MAX)

/* floor(n * r / p) without forming n * r (which overflows for large n): the first item of part r when n items
 * are cut into p parts.  It splits both the file's rows among the readers and the global ids among their owners
 * (the same cut: a rank reads as many rows as it owns ids). */
static int64_t shard_ckpt_split(int64_t n, int r, int p)
{
    int64_t q = n / p, m = n % p; /* m * r < p^2 < 2^62 */
    return q * r + m * r / p;
}

/* The part of the cut above that holds item g (0 <= g < n): the largest r with split(n, r, p) <= g, which is
 * never an empty part.  The estimate in doubles is off by at most one part; the exact cut settles it. */
static int shard_ckpt_owner(int64_t g, int64_t n, int p)
{
    int r = (int)((double)g / (double)n * (double)p);
    r = r < 0 ? 0 : r >= p ? p - 1 : r;
    while (r + 1 < p && shard_ckpt_split(n, r + 1, p) <= g)
        r++;
    while (r > 0 && shard_ckpt_split(n, r, p) > g)
        r--;
    return r;
}

static size_t shard_ckpt_words(size_t bytes) { return (bytes + 7) / 8; }

/* Offsets of the destinations' groups in a send buffer: at[r] = count[0] + ... + count[r - 1]. New array. */
static size_t *shard_ckpt_offsets(const size_t *count, int p)
{
    size_t *at = shard_calloc((size_t)p + 1, sizeof *at);
    for (int r = 0; r < p; r++)
        at[r + 1] = at[r] + count[r];
    return at;
}

/* Collective: in[s] = the value v[this rank] of rank s (v has one value per rank). New array of p values. */
static int64_t *shard_ckpt_transpose(shard_comm *c, const int64_t *v)
{
    int p = shard_comm_size(c);
    size_t *one = shard_malloc(((size_t)p + 1) * sizeof *one), n = 0;
    for (int r = 0; r < p; r++)
        one[r] = 1;
    int64_t *in = shard_comm_exchange_i64(c, v, one, &n);
    free(one);
    return in;
}

/* Collective: the smallest pair (a, b) over the ranks, in lexicographic order (INT64_MAX, INT64_MAX: none),
 * into *a, *b on every rank. */
static void shard_ckpt_min_pair(shard_comm *c, int64_t *a, int64_t *b)
{
    int p = shard_comm_size(c);
    int64_t *v = shard_malloc(((size_t)p + 1) * 2 * sizeof *v);
    size_t *two = shard_malloc(((size_t)p + 1) * sizeof *two), n = 0;
    for (int r = 0; r < p; r++)
        v[2 * r] = *a, v[2 * r + 1] = *b, two[r] = 2;
    int64_t *all = shard_comm_exchange_i64(c, v, two, &n);
    for (size_t s = 0; s + 1 < n; s += 2)
        if (all[s] < *a || (all[s] == *a && all[s + 1] < *b))
            *a = all[s], *b = all[s + 1];
    free(v), free(two), free(all);
}

/* Collective: shard_comm_exchange_i64 (count[r] words to rank r) once every rank knows that no rank sends or
 * receives more words than one exchange carries (beyond that it would abort): a checkpoint too large for this
 * rank count is refused with an agreed message instead.  NULL with err set on every rank when refused. */
static int64_t *shard_ckpt_exchange(shard_comm *c, const char *path, const char *what, const int64_t *send,
                                    const size_t *count, size_t *n_recv, shard_error *err)
{
    int p = shard_comm_size(c);
    int64_t *cw = shard_malloc(((size_t)p + 1) * sizeof *cw);
    uint64_t out = 0, got = 0;
    for (int r = 0; r < p; r++)
        cw[r] = (int64_t)count[r], out += count[r];
    int64_t *in = shard_ckpt_transpose(c, cw);
    for (int r = 0; r < p; r++)
        got += (uint64_t)in[r];
    free(cw), free(in);
    if (out > SHARD_CKPT_MAX_WORDS || got > SHARD_CKPT_MAX_WORDS)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: %s: rank %d would exchange %llu words at once, more than one "
                        "exchange carries (2^31 - 1): read it on more ranks", path, what, shard_comm_rank(c),
                        (unsigned long long)(out > got ? out : got));
    *n_recv = 0;
    if (shard_comm_any_error(c, err))
        return NULL;
    return shard_comm_exchange_i64(c, send, count, n_recv);
}

/* What a rank does with the records a round of shard_ckpt_exchange_rounds brings it (n records of w words). */
typedef void (*shard_ckpt_take_fn)(void *ctx, const int64_t *rec, size_t n);

/* Collective: sends records of w words (send: grouped by destination, count[r] records to rank r) in rounds in
 * which no rank receives more than `budget` records, nor sends more than one exchange carries, and hands each
 * round's arrivals to take(ctx, ...).  Why rounds: the checks that send an id to its owner (a section's ids, a
 * bond's reverse) send a valid file's owner about its share, but a corrupt file's owner anything up to every
 * entry of the file (every id the same); the rounds keep the memory of the check O(budget) whatever the file.
 * An owner asked for more than its budget grants it to the senders in rank order; a valid file takes one round. */
static void shard_ckpt_exchange_rounds(shard_comm *c, const int64_t *send, const size_t *count, size_t w,
                                       size_t budget, shard_ckpt_take_fn take, void *ctx)
{
    int p = shard_comm_size(c);
    size_t cap = (size_t)(SHARD_CKPT_MAX_WORDS / 2) / w; /* records a rank may send or receive in a round */
    budget = budget < 1 ? 1 : budget > cap ? cap : budget;
    size_t *at = shard_ckpt_offsets(count, p), *sent = shard_calloc((size_t)p + 1, sizeof *sent);
    size_t *words = shard_calloc((size_t)p + 1, sizeof *words);
    int64_t *ask = shard_calloc((size_t)p + 1, sizeof *ask);
    int64_t *buf = shard_malloc((cap < at[p] ? cap : at[p]) * w * sizeof *buf + sizeof *buf);
    for (;;) {
        size_t left = cap;
        for (int r = 0; r < p; r++) {
            size_t want = count[r] - sent[r];
            ask[r] = (int64_t)(want < left ? want : left);
            left -= (size_t)ask[r];
        }
        int64_t *in = shard_ckpt_transpose(c, ask); /* in[s]: what rank s asks to send here */
        int64_t asked = 0;
        for (int s = 0; s < p; s++)
            asked += in[s];
        int over = asked > (int64_t)budget;
        shard_comm_max_ints(c, &over, 1);
        if (over) { /* every rank answers: the grants in rank order of the senders, within the budget */
            int64_t room = (int64_t)budget;
            for (int s = 0; s < p; s++) {
                in[s] = in[s] < room ? in[s] : room;
                room -= in[s];
            }
            int64_t *grant = shard_ckpt_transpose(c, in);
            memcpy(ask, grant, (size_t)p * sizeof *ask);
            free(grant);
        }
        free(in);
        size_t fill = 0;
        for (int r = 0; r < p; r++) {
            size_t m = (size_t)ask[r] * w;
            memcpy(buf + fill, send + (at[r] + sent[r]) * w, m * sizeof *buf);
            words[r] = m;
            fill += m;
            sent[r] += (size_t)ask[r];
        }
        size_t n_recv = 0;
        int64_t *recv = shard_comm_exchange_i64(c, buf, words, &n_recv);
        take(ctx, recv, n_recv / w);
        free(recv);
        int64_t rest = 0;
        for (int r = 0; r < p; r++)
            rest += (int64_t)(count[r] - sent[r]);
        if (shard_comm_sum_i64(c, rest) == 0)
            break;
    }
    free(at), free(sent), free(words), free(ask), free(buf);
}

/* Rows [at, at + count) of dataset `name` (of `rows` rows of ncomp values like t: checked as shard_ckpt_read
 * does) into buf, by an independent read (a rank's failure cannot leave another waiting in a collective one). */
static int shard_ckpt_read_part(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp,
                                int64_t rows, int64_t at, int64_t count, void *buf, shard_error *err)
{
    hid_t d = shard_ckpt_open(f, path, name, t, ncomp, rows, err);
    if (d < 0)
        return err->code;
    herr_t rc = 0;
    if (count > 0) {
        int nd = ncomp == 1 ? 1 : 2;
        hsize_t start[2] = {(hsize_t)at, 0}, cnt[2] = {(hsize_t)count, (hsize_t)ncomp};
        hid_t fs = H5Dget_space(d), ms = H5Screate_simple(nd, cnt, NULL);
        rc = fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0
                 ? -1
                 : H5Dread(d, shard_h5_mem_type(t), ms, fs, H5P_DEFAULT, buf);
        if (ms >= 0)
            H5Sclose(ms);
        if (fs >= 0)
            H5Sclose(fs);
    }
    H5Dclose(d);
    if (rc < 0)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot read dataset %s (the file is truncated or corrupt)",
                               path, name);
    return 0;
}

/* Only the checks of a dataset's shape (the whole-file reader reads it here; this one reads it once the counts
 * say where its rows are). */
static int shard_ckpt_check_shape(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp,
                                  int64_t rows, shard_error *err)
{
    hid_t d = shard_ckpt_open(f, path, name, t, ncomp, rows, err);
    if (d >= 0)
        H5Dclose(d);
    return err->code;
}

static int shard_ckpt_find64(const int64_t *row, int64_t b0, int64_t b1, int64_t g)
{
    int64_t end = b1;
    while (b0 < b1) {
        int64_t mid = b0 + (b1 - b0) / 2;
        if (row[mid] < g)
            b0 = mid + 1;
        else
            b1 = mid;
    }
    return b0 < end && row[b0] == g;
}

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
        if (!shard_ckpt_find64(t->partner, t->start[i], t->start[i + 1], g) &&
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
    /* Symmetry (the force assembly gathers from both ends, and METIS needs an undirected graph): for every bond
     * g-j, (j, g) to the owner of j, who looks for g in j's row.  A valid file sends an owner as many questions
     * as its rows hold bonds. */
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
    int n_ranks;
    uint64_t state_hash, checksum;
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
            if (!shard_ckpt_load_header(f, path, n_sections, n_lists, SHARD_CKPT_MAX_COUNT, d, &h.checksum, err))
                shard_ckpt_load_blobs(f, path, n_sections, sections, d, err);
            if (H5Fclose(f) < 0 && !err->code)
                shard_error_set(err, SHARD_EXIT_INPUT, "%s: HDF5 cannot close it (corrupt)", path);
        }
        h.step = d->step, h.time = d->time, h.dt = d->dt, h.n = d->n, h.n_bonds = d->n_bonds;
        h.contacts = d->contacts, h.n_ranks = d->n_ranks, h.state_hash = d->state_hash, h.scene_len = d->scene_len;
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
        memcpy(d->scene_path, h.scene_path, sizeof d->scene_path);
        d->scene_text = shard_calloc(h.scene_len + 1, 1);
    }
    shard_comm_bcast(c, d->scene_text, h.scene_len + 1, 0);
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

int shard_checkpoint_write(shard_checkpoint *ck, shard_comm *c, const shard_checkpoint_state *st,
                           shard_error *err)
{
    (void)ck, (void)c, (void)st;
    (void)shard_ckpt_prune;
    (void)shard_ckpt_hash_fields;
    (void)shard_ckpt_stateful;
    (void)shard_ckpt_hash_blobs;
    return shard_error_set(err, SHARD_EXIT_IO, "this shard was built without parallel HDF5: no checkpoints");
}

int shard_checkpoint_load(const char *path, int n_sections, const shard_checkpoint_section *sections,
                          int n_lists, const shard_checkpoint_list *lists, shard_checkpoint_data *d,
                          shard_error *err)
{
    (void)n_sections, (void)sections, (void)n_lists, (void)lists;
    memset(d, 0, sizeof *d);
    return shard_error_set(err, SHARD_EXIT_INPUT, "%s: this shard was built without parallel HDF5 and cannot "
                                                  "read checkpoints", path);
}

int shard_checkpoint_load_range(shard_comm *c, const char *path, int n_sections,
                                const shard_checkpoint_section *sections, int n_lists,
                                const shard_checkpoint_list *lists, shard_checkpoint_data *d, shard_error *err)
{
    (void)c, (void)n_sections, (void)sections, (void)n_lists, (void)lists;
    memset(d, 0, sizeof *d);
    return shard_error_set(err, SHARD_EXIT_INPUT, "%s: this shard was built without parallel HDF5 and cannot "
                                                  "read checkpoints", path);
}

#endif

void shard_checkpoint_data_free(shard_checkpoint_data *d)
{
    if (!d)
        return;
    free(d->scene_text);
    shard_particles_free(&d->p);
    for (int k = 0; k < SHARD_CHECKPOINT_MAX_SECTIONS; k++)
        if (d->blocks[k].rows)
            shard_block_free(&d->blocks[k]);
    free(d->section_of);
    for (int q = 0; q < SHARD_CHECKPOINT_MAX_LISTS; q++)
        shard_pairlist_free(&d->lists[q]);
    shard_csr_free(&d->bonds);
    free(d->partner);
    free(d->broken);
    for (int k = 0; k < SHARD_CHECKPOINT_MAX_SECTIONS; k++)
        free(d->blob[k]);
    memset(d, 0, sizeof *d);
}
