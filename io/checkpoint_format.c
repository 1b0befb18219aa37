/* Checkpoint format: the checksum of a file's particles and module records, and the checked reads of a file
 * (its header, the shape and type of each dataset, a dataset's rows), every failure named with what is wrong.
 * Both the parallel range reader (checkpoint_range.c) and the writer (the checksum) use them; the layout is in
 * checkpoint.h.
 */
#include "checkpoint_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------------------------
 * Checksum: a sum over particles (exact and order-free in 64-bit integers) of a strong per-particle hash
 * ------------------------------------------------------------------------------------------------------------ */

/* Every STATE row of a registry, element `row` of the store at `base`, component by component, each
 * zero-extended to 64 bits, into h. */
static uint64_t shard_ckpt_hash_rows(uint64_t h, const void *base, const shard_field_desc *rows, int n_rows, size_t row)
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
uint64_t shard_ckpt_hash_fields(const shard_particles *p, size_t row, const shard_block *blk, size_t slot)
{
    uint64_t h =
        shard_ckpt_hash_rows(0x5348415244ull /* "SHARD" */, p, shard_particle_fields, shard_particle_n_fields, row);
    if (blk)
        h = shard_ckpt_hash_rows(h, blk, blk->rows, blk->n_rows, slot);
    return h;
}

/* Row `row` of a pair list (keys and value bits) into h. */
uint64_t shard_ckpt_hash_list_row(uint64_t h, const shard_pairlist *l, size_t row)
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

/* The hash of the module state records of sections[0..n) (data[k], bytes[k]; NULL: none), in section order:
 * of the records there only, so that a reader that asks for other sections without records agrees. */
uint64_t shard_ckpt_hash_blobs(int n, const shard_checkpoint_section *sections, void *const *data, const size_t *bytes)
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

/* The scene text's checksum: its bytes up to the first NUL (what a reader gets back), 8 at a time, and their
 * number. */
uint64_t shard_ckpt_hash_text(const char *text, size_t len)
{
    len = text ? strnlen(text, len) : 0;
    uint64_t h = shard_ckpt_mix(0x5343454e45ull /* "SCENE" */, (uint64_t)len);
    for (size_t i = 0; i < len; i += 8) {
        uint64_t w = 0;
        memcpy(&w, text + i, len - i < 8 ? len - i : 8);
        h = shard_ckpt_mix(h, w);
    }
    return h;
}

/* Does a block have a STATE row (and so a section in the file)? */
int shard_ckpt_stateful(const shard_block *b)
{
    for (int r = 0; r < b->n_rows; r++)
        if (b->rows[r].flags & SHARD_FIELD_STATE)
            return 1;
    return 0;
}

#ifdef SHARD_HAVE_HDF5

/* ------------------------------------------------------------------------------------------------------------
 * Checked reads: the header and the shape and type of each dataset, every failure named
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
static int shard_ckpt_attr_i64(hid_t f, const char *name, int64_t *v)
{
    return shard_ckpt_attr(f, name, H5T_NATIVE_INT64, v);
}
static int shard_ckpt_attr_u64(hid_t f, const char *name, uint64_t *v)
{
    return shard_ckpt_attr(f, name, H5T_NATIVE_UINT64, v);
}
static int shard_ckpt_attr_f64(hid_t f, const char *name, double *v)
{
    return shard_ckpt_attr(f, name, H5T_NATIVE_DOUBLE, v);
}

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
hid_t shard_ckpt_open(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp, int64_t rows,
                      shard_error *err)
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
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: dataset %s has the wrong size (expected %lld rows)", path, name,
                            (long long)rows);
        else
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: dataset %s has the wrong size (expected %lld x %d)", path, name,
                            (long long)rows, ncomp);
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

/* The whole dataset `name` (checked as shard_ckpt_open does) into buf. */
int shard_ckpt_read(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp, int64_t rows, void *buf,
                    shard_error *err)
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

/* The rows of a 1-d dataset, or -1 when it is missing or not 1-d (err filled). */
int64_t shard_ckpt_rows_of(hid_t f, const char *path, const char *name, shard_error *err)
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

/* A dataset's shape (as shard_ckpt_open checks it) and its rows in the file: a contiguous dataset (the writer
 * makes no other) must have the storage its rows take, so that no size read from a file that does not hold the
 * rows is allocated. */
static int shard_ckpt_check_stored(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp,
                                   int64_t rows, shard_error *err)
{
    hid_t d = shard_ckpt_open(f, path, name, t, ncomp, rows, err);
    if (d < 0)
        return err->code;
    hid_t pl = H5Dget_create_plist(d);
    int contiguous = pl >= 0 && H5Pget_layout(pl) == H5D_CONTIGUOUS;
    if (pl >= 0)
        H5Pclose(pl);
    double want = (double)rows * (double)ncomp * (double)H5Tget_size(shard_h5_mem_type(t));
    if (contiguous && (double)H5Dget_storage_size(d) < want)
        shard_error_set(err, SHARD_EXIT_INPUT,
                        "%s: dataset %s: its %lld rows are not in the file (truncated or corrupt)", path, name,
                        (long long)rows);
    H5Dclose(d);
    return err->code;
}

/* The file by the serial driver, after the checks that name what is wrong with a path that is no checkpoint at
 * all; -1 with err filled. */
hid_t shard_ckpt_open_file(const char *path, shard_error *err)
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

/* The scene text into d (NUL-terminated), checked against its checksum `want`: the text a restart builds its run
 * from, so an edit of it is refused, not run. */
static int shard_ckpt_load_scene(hid_t f, const char *path, uint64_t want, shard_checkpoint_data *d, shard_error *err)
{
    hid_t sd = H5Lexists(f, "scene", H5P_DEFAULT) > 0 ? H5Dopen2(f, "scene", H5P_DEFAULT) : -1;
    hid_t st = sd >= 0 ? H5Dget_type(sd) : -1;
    if (st < 0 || H5Tget_class(st) != H5T_STRING || H5Tis_variable_str(st)) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: missing dataset scene", path);
    } else if ((double)H5Dget_storage_size(sd) < (double)H5Tget_size(st)) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: dataset scene: its text is not in the file (truncated or corrupt)",
                        path);
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
    if (!err->code && shard_ckpt_hash_text(d->scene_text, d->scene_len) != want)
        shard_error_set(err, SHARD_EXIT_INPUT,
                        "%s: /scene: the stored scene text does not match its checksum (it was edited or is corrupt)",
                        path);
    return err->code;
}

/* The root attributes and the scene text into d (step, time, dt, n, n_bonds, n_ranks, contacts, state_hash,
 * scene_path, scene_text), the checksum into *checksum, after every check of the header; n_particles and n_bonds
 * may be at most max_count (the whole-file loader: INT32_MAX). */
int shard_ckpt_load_header(hid_t f, const char *path, int n_sections, int n_lists, int64_t max_count,
                           shard_checkpoint_data *d, uint64_t *checksum, shard_error *err)
{
    char fmt[64];
    int64_t version = 0, complete = 0, step = -1, n = -1, nb = -1, nranks = 0, contacts = 0;
    uint64_t scene_sum = 0;
    if (shard_ckpt_attr_str(f, "format", fmt, sizeof fmt) != 0 || strcmp(fmt, "shard-checkpoint") != 0) {
        if (strcmp(fmt, "shard-output") == 0)
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: this is an output file, not a checkpoint", path);
        else
            shard_error_set(err, SHARD_EXIT_INPUT,
                            "%s: not a Shard checkpoint (no format attribute "
                            "'shard-checkpoint')",
                            path);
    } else if (shard_ckpt_attr_i64(f, "format_version", &version) != 0) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: no format_version attribute", path);
    } else if (version != SHARD_CHECKPOINT_FORMAT_VERSION) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: checkpoint format version %lld; this shard reads version %d", path,
                        (long long)version, SHARD_CHECKPOINT_FORMAT_VERSION);
    } else if (shard_ckpt_attr_i64(f, "complete", &complete) != 0 || complete != 1) {
        shard_error_set(err, SHARD_EXIT_INPUT,
                        "%s: incomplete checkpoint (its write was interrupted); use an "
                        "earlier one",
                        path);
    } else if (shard_ckpt_attr_i64(f, "step", &step) || shard_ckpt_attr_f64(f, "time", &d->time) ||
               shard_ckpt_attr_f64(f, "dt", &d->dt) || shard_ckpt_attr_i64(f, "n_particles", &n) ||
               shard_ckpt_attr_i64(f, "n_bonds", &nb) || shard_ckpt_attr_i64(f, "n_ranks", &nranks) ||
               shard_ckpt_attr_i64(f, "contacts", &contacts) || shard_ckpt_attr_u64(f, "state_hash", &d->state_hash) ||
               shard_ckpt_attr_u64(f, "checksum", checksum) || shard_ckpt_attr_u64(f, "scene_checksum", &scene_sum) ||
               shard_ckpt_attr_u64(f, "run_id", &d->run_id)) {
        shard_error_set(err, SHARD_EXIT_INPUT,
                        "%s: a header attribute is missing or unreadable (step, time, dt, "
                        "n_particles, n_bonds, n_ranks, contacts, state_hash, checksum, scene_checksum, run_id)",
                        path);
    } else if (n_sections > SHARD_CHECKPOINT_MAX_SECTIONS || n_lists > SHARD_CHECKPOINT_MAX_LISTS) {
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: more sections asked for than a checkpoint holds", path);
    } else if (step < 0 || step > SHARD_MAX_STEPS || n < 1 || n > max_count || nb < 0 || nb > max_count ||
               !(d->dt > 0.0) || !isfinite(d->dt)) {
        shard_error_set(err, SHARD_EXIT_INPUT,
                        "%s: header values out of range (step %lld, n_particles %lld, "
                        "n_bonds %lld, dt %g)",
                        path, (long long)step, (long long)n, (long long)nb, d->dt);
    } else if (d->time != (double)step * d->dt) {
        /* The writer stores time = step * dt exactly: a step that does not give back the time is not the run's. */
        shard_error_set(err, SHARD_EXIT_INPUT,
                        "%s: step %lld does not match the time %.17g s at dt %.17g s (the "
                        "header is corrupt)",
                        path, (long long)step, d->time, d->dt);
    }
    if (!err->code) {
        d->step = (long)step, d->n = n, d->n_bonds = nb, d->n_ranks = (int)nranks, d->contacts = contacts;
        shard_ckpt_attr_str(f, "scene_path", d->scene_path, sizeof d->scene_path);
        shard_ckpt_load_scene(f, path, scene_sum, d, err);
    }
    return err->code;
}

/* The module state records of the sections asked for (those the file has) into d->blob, checked against the
 * root attribute module_state_checksum. */
int shard_ckpt_load_blobs(hid_t f, const char *path, int n_sections, const shard_checkpoint_section *sections,
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
        if (shard_ckpt_check_stored(f, path, name, SHARD_TYPE_U8, 1, bytes, err))
            return err->code;
        d->blob[k] = shard_malloc((size_t)bytes + 1);
        d->blob_bytes[k] = (size_t)bytes;
        if (shard_ckpt_read(f, path, name, SHARD_TYPE_U8, 1, bytes, d->blob[k], err))
            return err->code;
    }
    if (shard_ckpt_hash_blobs(n_sections, sections, d->blob, d->blob_bytes) != want)
        return shard_error_set(err, SHARD_EXIT_INPUT,
                               "%s: module state checksum mismatch: the data is corrupt "
                               "(or written for other kinds of matter)",
                               path);
    return 0;
}

/* The bodies' identities (/bodies) into d, after the sizes have been checked (n is the file's): at most one body
 * per particle, every dataset stored.  Their values are the restart's to compare with its scene. */
int shard_ckpt_load_bodies(hid_t f, const char *path, shard_checkpoint_data *d, shard_error *err)
{
    enum { W = SHARD_CHECKPOINT_NAME };
    static const struct {
        const char *name;
        shard_field_type type;
        int ncomp;
    } ds[6] = {{"/bodies/name", SHARD_TYPE_U8, W},      {"/bodies/kind", SHARD_TYPE_U8, W},
               {"/bodies/material", SHARD_TYPE_U8, W},  {"/bodies/count", SHARD_TYPE_I64, 1},
               {"/bodies/first_id", SHARD_TYPE_I64, 1}, {"/bodies/mass", SHARD_TYPE_F64, 1}};
    int64_t nb = shard_ckpt_rows_of(f, path, "/bodies/count", err);
    if (nb < 0)
        return err->code;
    if (nb < 1 || nb > d->n || nb > INT32_MAX)
        return shard_error_set(err, SHARD_EXIT_INPUT,
                               "%s: /bodies: %lld bodies for %lld particles (the file is corrupt)", path, (long long)nb,
                               (long long)d->n);
    for (int k = 0; k < 6 && !err->code; k++)
        shard_ckpt_check_stored(f, path, ds[k].name, ds[k].type, ds[k].ncomp, nb, err);
    if (err->code)
        return err->code;
    d->n_bodies = (int)nb;
    d->bodies = shard_calloc((size_t)nb, sizeof *d->bodies);
    unsigned char *buf = shard_malloc((size_t)nb * W + 1);
    for (int k = 0; k < 6 && !shard_ckpt_read(f, path, ds[k].name, ds[k].type, ds[k].ncomp, nb, buf, err); k++)
        for (int64_t b = 0; b < nb; b++) {
            shard_checkpoint_body *o = &d->bodies[b];
            void *to[6] = {o->name, o->kind, o->material, &o->count, &o->first, &o->mass};
            size_t size = k < 3 ? W : 8;
            memcpy(to[k], buf + (size_t)b * size, size);
            if (k < 3)
                ((char *)to[k])[W - 1] = '\0';
        }
    free(buf);
    return err->code;
}

/* Rows [at, at + count) of dataset `name` (of `rows` rows of ncomp values like t: checked as shard_ckpt_read
 * does) into buf, by an independent read (a rank's failure cannot leave another waiting in a collective one). */
int shard_ckpt_read_part(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp, int64_t rows,
                         int64_t at, int64_t count, void *buf, shard_error *err)
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

/* The sizes of every dataset the readers allocate for, against the header's counts n and nb and the file, before
 * anything is allocated: the particles' rows, the sections (global ids at most n, their rows), the pair lists
 * and the bonds, in the order the readers read them. */
int shard_ckpt_check_sizes(hid_t f, const char *path, int64_t n, int64_t nb, int n_sections,
                           const shard_checkpoint_section *sections, int n_lists, const shard_checkpoint_list *lists,
                           shard_error *err)
{
    char name[256];
    for (int fi = 0; fi < shard_particle_n_fields && !err->code; fi++) {
        const shard_field_desc *fd = &shard_particle_fields[fi];
        if (!(fd->flags & SHARD_FIELD_STATE))
            continue;
        snprintf(name, sizeof name, "/particles/%s", fd->name);
        shard_ckpt_check_stored(f, path, name, fd->type, fd->ncomp, n, err);
    }
    for (int k = 0; k < n_sections && !err->code; k++) {
        const shard_block *b = sections[k].block;
        if (!shard_ckpt_stateful(b))
            continue;
        snprintf(name, sizeof name, "/%s/global_id", sections[k].name);
        int64_t ns = shard_ckpt_rows_of(f, path, name, err);
        if (!err->code && ns > n)
            shard_error_set(err, SHARD_EXIT_INPUT, "%s: %s has %lld rows, more than the %lld particles", path, name,
                            (long long)ns, (long long)n);
        if (!err->code)
            shard_ckpt_check_stored(f, path, name, SHARD_TYPE_I64, 1, ns, err);
        for (int r = 0; r < b->n_rows && !err->code; r++)
            if (b->rows[r].flags & SHARD_FIELD_STATE) {
                snprintf(name, sizeof name, "/%s/%s", sections[k].name, b->rows[r].name);
                shard_ckpt_check_stored(f, path, name, b->rows[r].type, b->rows[r].ncomp, ns, err);
            }
    }
    for (int q = 0; q < n_lists && !err->code; q++) {
        snprintf(name, sizeof name, "/%s/key", lists[q].name);
        int64_t ne = shard_ckpt_rows_of(f, path, name, err);
        snprintf(name, sizeof name, "/%s/count", lists[q].name);
        if (!err->code && !shard_ckpt_check_stored(f, path, name, SHARD_TYPE_I32, 1, n, err)) {
            snprintf(name, sizeof name, "/%s/key", lists[q].name);
            shard_ckpt_check_stored(f, path, name, SHARD_TYPE_I64, 1, ne, err);
        }
        snprintf(name, sizeof name, "/%s/value", lists[q].name);
        if (!err->code)
            shard_ckpt_check_stored(f, path, name, SHARD_TYPE_F64, lists[q].list->width, ne, err);
    }
    if (!err->code)
        shard_ckpt_check_stored(f, path, "/bonds/count", SHARD_TYPE_I32, 1, n, err);
    if (!err->code)
        shard_ckpt_check_stored(f, path, "/bonds/partner", SHARD_TYPE_I64, 1, nb, err);
    if (!err->code)
        shard_ckpt_check_stored(f, path, "/bonds/broken", SHARD_TYPE_U8, 1, nb, err);
    return err->code;
}

/* Only the checks of a dataset's shape (the whole-file reader reads it here; the range reader reads it once the
 * counts say where its rows are). */
int shard_ckpt_check_shape(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp, int64_t rows,
                           shard_error *err)
{
    hid_t d = shard_ckpt_open(f, path, name, t, ncomp, rows, err);
    if (d >= 0)
        H5Dclose(d);
    return err->code;
}

#endif
