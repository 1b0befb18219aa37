/* Checkpoint: parallel atomic writes and validated reads of the run's complete state (format in checkpoint.h).
 *
 * This file owns the checkpoint file: its sections (particles from the registry, bonds), the write protocol
 * (temporary name, collective write, flush and close, fsync, rename, pruning), the checksum, the reader with
 * its validation, and the fault-injection switch that the tests use.  It does not decide when to write (the
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

int shard_checkpoint_load(const char *path, int n_sections, const shard_checkpoint_section *sections,
                          int n_lists, const shard_checkpoint_list *lists, shard_checkpoint_data *d,
                          shard_error *err)
{
    memset(d, 0, sizeof *d);
    memset(err, 0, sizeof *err);
    struct stat stt;
    if (stat(path, &stt) != 0)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot open checkpoint: %s", path, strerror(errno));
    if (!S_ISREG(stt.st_mode))
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: not a file", path);
    shard_h5_quiet();
    if (H5Fis_hdf5(path) <= 0)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: not a readable HDF5 file (truncated or corrupt)", path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: HDF5 cannot open it (truncated or corrupt)", path);
    char fmt[64];
    int64_t version = 0, complete = 0, step = -1, n = -1, nb = -1, nranks = 0, contacts = 0;
    uint64_t checksum = 0;
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
               shard_ckpt_attr_u64(f, "checksum", &checksum)) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: a header attribute is missing or unreadable (step, time, dt, "
                                               "n_particles, n_bonds, n_ranks, contacts, state_hash, checksum)", path);
    } else if (n_sections > SHARD_CHECKPOINT_MAX_SECTIONS || n_lists > SHARD_CHECKPOINT_MAX_LISTS) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: more sections asked for than a checkpoint holds", path);
    } else if (step < 0 || step > SHARD_MAX_STEPS || n < 1 || n > INT32_MAX || nb < 0 || nb > INT32_MAX ||
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
    if (!err->code)
        shard_ckpt_load_body(f, path, n_sections, sections, n_lists, lists, d, checksum, err);
    if (H5Fclose(f) < 0 && !err->code)
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
    free(d->broken);
    memset(d, 0, sizeof *d);
}
