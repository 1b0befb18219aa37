/* The whole-file checkpoint reader (tests only): shard_checkpoint_load, one process reading and validating a
 * whole checkpoint, the reference the parallel reader (shard_checkpoint_load_range, io/checkpoint_range.c) is
 * compared with: the same rows, the same refusals with the same messages.  It reads the header and the module
 * records with the product's checked reads (io/checkpoint_format.c) and the datasets whole.
 */
#include "checkpoint_whole.h"

#include "checkpoint_impl.h"

#include "shard/sorted.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SHARD_HAVE_HDF5

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

/* Everything after the file is open and its header read: datasets, consistency, checksum. */
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
    /* Bonds are symmetric (the force assembly gathers from both ends, and the graph balancer takes an undirected
     * graph). */
    for (int64_t g = 0; g < n && !err->code; g++)
        for (int64_t b = d->bonds.start[g]; b < d->bonds.start[g + 1]; b++) {
            int32_t j = d->bonds.idx[b];
            const int32_t *row = d->bonds.idx + d->bonds.start[j];
            size_t nj = (size_t)(d->bonds.start[j + 1] - d->bonds.start[j]);
            size_t at = shard_sorted_lower_i32(row, nj, (int32_t)g);
            if (!(at < nj && row[at] == (int32_t)g)) {
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
    hid_t f = shard_ckpt_open_file(path, err);
    if (f < 0)
        return err->code;
    uint64_t checksum = 0;
    if (!shard_ckpt_load_header(f, path, n_sections, n_lists, INT32_MAX, d, &checksum, err) &&
        !shard_ckpt_load_blobs(f, path, n_sections, sections, d, err) &&
        !shard_ckpt_check_sizes(f, path, d->n, d->n_bonds, n_sections, sections, n_lists, lists, err) &&
        !shard_ckpt_load_bodies(f, path, d, err))
        shard_ckpt_load_body(f, path, n_sections, sections, n_lists, lists, d, checksum, err);
    if (H5Fclose(f) < 0 && !err->code)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: HDF5 cannot close it (corrupt)", path);
    if (err->code)
        shard_checkpoint_data_free(d);
    else
        d->n_local = d->n; /* first = 0: every particle, row = global id */
    return err->code;
}

#else

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
