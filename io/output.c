/* Output: parallel HDF5 files per output time and their XDMF index (layout in output.h).
 *
 * This file owns the file names, the layout of one output file, the global-id index and the CSV tables; the
 * XDMF index is xdmf.c's, handed each complete file.  It
 * writes what the driver hands it and computes no physics.  The index (/particles/index) is built once: every
 * rank sends (global id, row) of its owned particles to the rank responsible for that block of ids, which then
 * writes its block as one contiguous hyperslab; particles never change rank, so the exchange is not repeated
 * (migration, when it comes, must call for a new one).  Rejected alternative: writing index[g] with one HDF5
 * point selection per particle, which is slow in collective mode and not contiguous on disk.  The cells table
 * (cloth triangles) is translated from global ids to rows through the same blocks at every write: each rank
 * asks the rank of each id's block for the rows of its distinct ids, so no rank ever holds the whole index.
 */
#include "shard/output.h"

#include "h5io.h"
#include "xdmf.h"

#include "shard/sorted.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct shard_output {
    char dir[SHARD_PATH_MAX];
    char *scene_path, *scene_text;
    size_t scene_len;
    int dir_made;
    /* global-id index block of this rank (built on the first write) */
    int index_built;
    int64_t n_global, first_row, index_first, index_n;
    int64_t *index;
    long files;
    uint64_t bytes;
    double seconds;
    long resume_step; /* the restart's step, or -1 */
    shard_xdmf xdmf;  /* rank 0: the XDMF index */
    char csv_seen[8][64]; /* CSV files this run has written to, and each as last written (shard_io_splice) */
    shard_io_mark csv_mark[8];
    int n_csv;
};

shard_output *shard_output_create(const char *dir, const char *scene_path, const char *scene_text, size_t scene_len)
{
    shard_output *o = shard_calloc(1, sizeof *o);
    snprintf(o->dir, sizeof o->dir, "%s", dir);
    size_t pl = strlen(scene_path ? scene_path : "");
    o->scene_path = shard_malloc(pl + 1);
    memcpy(o->scene_path, scene_path ? scene_path : "", pl + 1);
    o->scene_text = shard_malloc(scene_len + 1);
    if (scene_len)
        memcpy(o->scene_text, scene_text, scene_len);
    o->scene_text[scene_len] = '\0';
    o->scene_len = scene_len;
    o->resume_step = -1;
    shard_xdmf_init(&o->xdmf, o->dir);
    return o;
}

void shard_output_destroy(shard_output **op)
{
    if (!op || !*op)
        return;
    shard_output *o = *op;
    free(o->scene_path), free(o->scene_text), free(o->index);
    shard_xdmf_free(&o->xdmf);
    free(o);
    *op = NULL;
}

void shard_output_stats(const shard_output *o, long *files, uint64_t *bytes, double *seconds)
{
    *files = o ? o->files : 0;
    *bytes = o ? o->bytes : 0;
    *seconds = o ? o->seconds : 0.0;
}

void shard_output_resume(shard_output *o, shard_comm *c, const shard_interval *iv, long step, double dt)
{
    o->resume_step = step;
    if (shard_comm_rank(c) != 0)
        return;
    /* The files that are there (one pass over the folder, whatever the step count), in step order. */
    size_t n = 0;
    int64_t *steps = shard_io_step_files(o->dir, "particles", step, &n);
    for (size_t k = 0; k < n; k++)
        if (steps[k] == step || shard_interval_due(iv, steps[k], dt))
            shard_xdmf_list(&o->xdmf, steps[k], (double)steps[k] * dt, -1);
    free(steps);
}

void shard_output_owners_changed(shard_output *o)
{
    if (!o)
        return;
    free(o->index);
    o->index = NULL;
    o->index_built = 0;
}

#ifdef SHARD_HAVE_HDF5

/* The index block of this rank: ids [N r / P, N (r+1) / P). */
static int64_t shard_output_block_lo(int64_t n, int r, int size) { return n * r / size; }

/* The rank whose index block holds global id g (0 <= g < n). */
static int shard_output_block_of(int64_t n, int64_t g, int size)
{
    int r = (int)(g * size / (n > 0 ? n : 1));
    while (r + 1 < size && shard_output_block_lo(n, r + 1, size) <= g)
        r++;
    while (r > 0 && shard_output_block_lo(n, r, size) > g)
        r--;
    return r;
}

static void shard_output_build_index(shard_output *o, shard_comm *c, size_t n_owned, const int64_t *gid)
{
    int size = shard_comm_size(c), me = shard_comm_rank(c);
    int64_t n = o->n_global;
    size_t *count = shard_calloc((size_t)size + 1, sizeof *count), *at = shard_calloc((size_t)size + 1, sizeof *at);
    int *dest = shard_malloc((n_owned + 1) * sizeof *dest);
    for (size_t i = 0; i < n_owned; i++) {
        int r = shard_output_block_of(n, gid[i], size);
        dest[i] = r;
        count[r] += 2;
    }
    for (int r = 0; r < size; r++)
        at[r + 1] = at[r] + count[r];
    int64_t *sbuf = shard_malloc((at[size] + 1) * sizeof *sbuf);
    for (size_t i = 0; i < n_owned; i++) {
        int r = dest[i];
        sbuf[at[r]++] = gid[i];
        sbuf[at[r]++] = o->first_row + (int64_t)i;
    }
    size_t n_recv = 0;
    int64_t *rbuf = shard_comm_exchange_i64(c, sbuf, count, &n_recv);
    o->index_first = shard_output_block_lo(n, me, size);
    o->index_n = shard_output_block_lo(n, me + 1, size) - o->index_first;
    o->index = shard_malloc(((size_t)o->index_n + 1) * sizeof *o->index);
    for (int64_t k = 0; k < o->index_n; k++)
        o->index[k] = -1;
    for (size_t k = 0; k + 1 < n_recv; k += 2)
        o->index[rbuf[k] - o->index_first] = rbuf[k + 1];
    free(count), free(at), free(dest), free(sbuf), free(rbuf);
    o->index_built = 1;
}

/* Collective: ids[0..m) (global ids of particles) become their rows in /particles, index[id].  Each rank asks
 * the rank of each block for the rows of its distinct ids in the block (sorted, so the requests are already in
 * rank order), learns how many each rank asks of it, answers in the order asked, and substitutes.  An id that
 * is out of range or has no row is a caller's error: fatal. */
static void shard_output_rows_of(shard_output *o, shard_comm *c, int64_t *ids, size_t m)
{
    int size = shard_comm_size(c);
    int64_t n = o->n_global;
    int64_t *want = shard_malloc((m + 1) * sizeof *want);
    if (m)
        memcpy(want, ids, m * sizeof *want);
    qsort(want, m, sizeof *want, shard_sorted_cmp_i64);
    size_t nw = 0;
    for (size_t k = 0; k < m; k++)
        if (nw == 0 || want[nw - 1] != want[k])
            want[nw++] = want[k];
    if (nw && (want[0] < 0 || want[nw - 1] >= n))
        shard_fatal(SHARD_EXIT_INTERNAL, "output: a triangle names particle %lld of %lld",
                    (long long)(want[0] < 0 ? want[0] : want[nw - 1]), (long long)n);
    size_t *count = shard_calloc((size_t)size + 1, sizeof *count), *ones = shard_calloc((size_t)size + 1, sizeof *ones);
    int64_t *count64 = shard_calloc((size_t)size + 1, sizeof *count64);
    for (size_t k = 0; k < nw; k++)
        count[shard_output_block_of(n, want[k], size)]++;
    for (int r = 0; r < size; r++)
        count64[r] = (int64_t)count[r], ones[r] = 1;
    size_t n_asked = 0, n_from = 0, n_rows = 0;
    int64_t *asked = shard_comm_exchange_i64(c, want, count, &n_asked);
    int64_t *from = shard_comm_exchange_i64(c, count64, ones, &n_from); /* from[r]: ids rank r asked me */
    for (size_t k = 0; k < n_asked; k++) {
        int64_t g = asked[k];
        int64_t row = g >= o->index_first && g < o->index_first + o->index_n ? o->index[g - o->index_first] : -1;
        if (row < 0)
            shard_fatal(SHARD_EXIT_INTERNAL, "output: a triangle names particle %lld, which has no row", (long long)g);
        asked[k] = row;
    }
    for (int r = 0; r < size; r++)
        count[r] = (size_t)from[r];
    int64_t *rows = shard_comm_exchange_i64(c, asked, count, &n_rows);
    if (n_rows != nw)
        shard_fatal(SHARD_EXIT_INTERNAL, "output: %zu rows came back for %zu ids", n_rows, nw);
    for (size_t i = 0; i < m; i++)
        ids[i] = rows[shard_sorted_find_i64(want, nw, ids[i])];
    free(want), free(count), free(ones), free(count64), free(asked), free(from), free(rows);
}

/* Collective: the cells table's triangles as rows of /particles in a new array (caller frees), after checking
 * the table's contract. */
static int64_t *shard_output_cells(shard_output *o, shard_comm *c, const shard_output_table *tb)
{
    if (tb->n_cols != 1 || strcmp(tb->cols[0].name, "triangles") != 0 || tb->cols[0].type != SHARD_TYPE_I64 ||
        tb->cols[0].ncomp != 3 || tb->points)
        shard_fatal(SHARD_EXIT_INTERNAL, "output: cells table '%s' is not one column \"triangles\" of 3 int64",
                    tb->group);
    size_t m = 3 * tb->n_rows;
    int64_t *ids = shard_malloc((m + 1) * sizeof *ids);
    if (m)
        memcpy(ids, tb->cols[0].data, m * sizeof *ids);
    shard_output_rows_of(o, c, ids, m);
    return ids;
}

/* Rank 0, once the file is complete: renamed from its temporary name and added to the XDMF index; an output
 * that the index cannot take is taken back. */
static void shard_output_publish(shard_output *o, long step, double time, const char *path, const char *tmp, int n_cols,
                                 const shard_column *cols, int n_tables, const shard_output_table *tables,
                                 const int64_t *table_rows, int cells, shard_error *err)
{
    int existed = access(path, F_OK) == 0;
    if (rename(tmp, path) != 0) {
        shard_error_set(err, SHARD_EXIT_IO, "output '%s': cannot rename from '%s': %s", path, tmp, strerror(errno));
        unlink(tmp);
        return;
    }
    const shard_output_table *pt = NULL;
    int64_t pt_rows = 0;
    for (int t = 0; t < n_tables && t < 8; t++)
        if (tables[t].points)
            pt = &tables[t], pt_rows = table_rows[t];
    /* The index could not be brought up to date: the output is taken back, so that the index on disk still
     * lists exactly the outputs there (a file that replaced one of an earlier run is kept: that run's index may
     * list it). */
    if (shard_xdmf_add(&o->xdmf, step, time, o->n_global, n_cols, cols, pt, pt_rows,
                       cells >= 0 ? tables[cells].group : NULL, cells >= 0 ? table_rows[cells] : -2, err)) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        shard_error_set(err, SHARD_EXIT_IO, "output '%s' %s: %s", path, existed ? "kept" : "removed", why);
        if (!existed)
            unlink(path);
    }
}

int shard_output_write(shard_output *o, shard_comm *c, long step, double time, size_t n_owned, int n_cols,
                       const shard_column *cols, int n_tables, const shard_output_table *tables, shard_error *err)
{
    double t0 = shard_wtime();
    memset(err, 0, sizeof *err);
    int rank = shard_comm_rank(c);
    const int64_t *gid = NULL;
    for (int q = 0; q < n_cols; q++)
        if (strcmp(cols[q].name, "global_id") == 0)
            gid = cols[q].data;
    if (shard_io_mkdirs_once(c, o->dir, &o->dir_made, err))
        return err->code;
    if (!o->index_built) {
        o->n_global = shard_comm_sum_i64(c, (int64_t)n_owned);
        o->first_row = shard_comm_exscan_i64(c, (int64_t)n_owned);
        shard_output_build_index(o, c, n_owned, gid);
    }
    /* The cells table's ids translated to rows, with the index as it is now (rebuilt after a migration). */
    int cells = -1;
    int64_t *cell_rows = NULL;
    for (int t = 0; t < n_tables && t < 8; t++)
        if (tables[t].cells) {
            if (cells >= 0)
                shard_fatal(SHARD_EXIT_INTERNAL, "output: more than one cells table");
            cells = t;
            cell_rows = shard_output_cells(o, c, &tables[t]);
        }
    /* Written under a temporary name and renamed when complete, so that a file under the final name is always
     * complete (a restart takes every such file back into the index) and one of the same name from an earlier
     * run survives a failed rewrite. */
    char path[SHARD_PATH_MAX + 64], tmp[SHARD_PATH_MAX + 72];
    if (shard_io_path(path, sizeof path, err, "%s/particles_%06ld.h5", o->dir, step) ||
        shard_io_path(tmp, sizeof tmp, err, "%s.tmp", path)) {
        shard_comm_any_error(c, err);
        free(cell_rows);
        return err->code;
    }
    uint64_t raw = (uint64_t)o->scene_len + (uint64_t)o->n_global * sizeof(int64_t);
    for (int q = 0; q < n_cols; q++)
        raw += (uint64_t)o->n_global * (uint64_t)cols[q].ncomp * shard_h5_type_size(cols[q].type);
    int64_t table_rows[8] = {0}, table_first[8] = {0};
    for (int t = 0; t < n_tables && t < 8; t++) {
        table_rows[t] = shard_comm_sum_i64(c, (int64_t)tables[t].n_rows);
        table_first[t] = shard_comm_exscan_i64(c, (int64_t)tables[t].n_rows);
        for (int q = 0; q < tables[t].n_cols; q++)
            raw += (uint64_t)table_rows[t] * (uint64_t)tables[t].cols[q].ncomp *
                   shard_h5_type_size(tables[t].cols[q].type);
    }
    shard_h5w w;
    shard_h5w_create(&w, c, tmp, raw);
    shard_h5w_attr_str(&w, 0, "format", "shard-output");
    shard_h5w_attr_i64(&w, 0, "format_version", SHARD_OUTPUT_FORMAT_VERSION);
    shard_h5w_attr_str(&w, 0, "shard_version", SHARD_VERSION_STRING);
    shard_h5w_attr_i64(&w, 0, "step", step);
    shard_h5w_attr_f64(&w, 0, "time", time);
    shard_h5w_attr_i64(&w, 0, "n_particles", o->n_global);
    shard_h5w_attr_i64(&w, 0, "n_ranks", shard_comm_size(c));
    shard_h5w_text(&w, 0, "scene", o->scene_text, o->scene_len);
    hid_t g = shard_h5w_group(&w, 0, "particles");
    if (g >= 0) {
        shard_h5w_attr_i64(&w, g, "count", o->n_global);
        for (int q = 0; q < n_cols; q++)
            shard_h5w_rows(&w, g, cols[q].name, cols[q].type, cols[q].ncomp, o->n_global, o->first_row, n_owned,
                           cols[q].data);
        shard_h5w_rows(&w, g, "index", SHARD_TYPE_I64, 1, o->n_global, o->index_first, (size_t)o->index_n, o->index);
        H5Gclose(g);
    }
    for (int t = 0; t < n_tables && t < 8; t++) {
        const shard_output_table *tb = &tables[t];
        hid_t tg = shard_h5w_group(&w, 0, tb->group);
        if (tg < 0)
            continue;
        shard_h5w_attr_i64(&w, tg, "count", table_rows[t]);
        for (int a = 0; a < tb->n_attrs; a++) {
            if (tb->attrs[a].is_int)
                shard_h5w_attr_i64(&w, tg, tb->attrs[a].name, tb->attrs[a].i);
            else
                shard_h5w_attr_f64(&w, tg, tb->attrs[a].name, tb->attrs[a].f);
        }
        for (int q = 0; q < tb->n_cols; q++)
            shard_h5w_rows(&w, tg, tb->cols[q].name, tb->cols[q].type, tb->cols[q].ncomp, table_rows[t], table_first[t],
                           tb->n_rows, t == cells ? cell_rows : tb->cols[q].data);
        H5Gclose(tg);
    }
    free(cell_rows);
    /* A failure is agreed on by every rank (same message everywhere) and the temporary file is removed. */
    if (shard_h5w_close(&w))
        return shard_error_set(err, SHARD_EXIT_IO, "output '%s': %s", path, w.what);
    o->bytes += w.bytes;
    if (rank == 0)
        shard_output_publish(o, step, time, path, tmp, n_cols, cols, n_tables, tables, table_rows, cells, err);
    o->seconds += shard_wtime() - t0;
    if (shard_comm_agree(c, err, 0))
        return err->code;
    o->files++;
    return 0;
}

#else

int shard_output_write(shard_output *o, shard_comm *c, long step, double time, size_t n_owned, int n_cols,
                       const shard_column *cols, int n_tables, const shard_output_table *tables, shard_error *err)
{
    (void)o, (void)c, (void)step, (void)time, (void)n_owned, (void)n_cols, (void)cols, (void)n_tables, (void)tables;
    return shard_error_set(err, SHARD_EXIT_IO, "this shard was built without parallel HDF5: no output");
}

#endif

/* Rank 0: the lines of `path` (after its header) whose leading step is <= keep, into *text (caller frees). */
static char *shard_output_csv_keep(const char *path, long keep, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *text = NULL, line[4096];
    size_t cap = 0;
    int first = 1;
    while (fgets(line, sizeof line, f)) {
        if (first) { /* the header: written again by the caller */
            first = 0;
            continue;
        }
        char *end = NULL;
        long step = strtol(line, &end, 10);
        size_t n = strlen(line);
        if (end == line || step > keep || line[n - 1] != '\n') /* the last line of a killed append: cut short */
            continue;
        shard_reserve((void **)&text, &cap, *len + n + 1, 1);
        memcpy(text + *len, line, n + 1);
        *len += n;
    }
    fclose(f);
    return text;
}

/* Rank 0: DIR/name written whole through a temporary file and a rename: the header, the lines of the file there
 * whose step is <= keep (none when keep < 0), then rows; *m set for the appends that follow. */
static void shard_output_csv_whole(const char *path, const char *header, long keep, const char *rows,
                                   shard_io_mark *m, shard_error *err)
{
    char tmp[SHARD_PATH_MAX + 88];
    if (shard_io_path(tmp, sizeof tmp, err, "%s.tmp", path))
        return;
    size_t len = 0;
    char *kept = keep >= 0 ? shard_output_csv_keep(path, keep, &len) : NULL;
    FILE *f = shard_io_fopen_tmp(tmp, err);
    int ok = f && fputs(header, f) >= 0 && (len == 0 || fwrite(kept, 1, len, f) == len) && fputs(rows, f) >= 0 &&
             fflush(f) == 0 && shard_io_mark_fd(m, fileno(f), 0) == 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (f && (!ok || rename(tmp, path) != 0)) { /* only the file made here is removed */
        shard_error_set(err, SHARD_EXIT_IO, "'%s': cannot write: %s", path, strerror(errno));
        unlink(tmp);
    }
    m->at = err->code ? -1 : m->size;
    free(kept);
}

int shard_output_csv(shard_output *o, shard_comm *c, const char *name, const char *header, const char *rows,
                     shard_error *err)
{
    memset(err, 0, sizeof *err);
    if (shard_comm_rank(c) == 0) {
        char path[SHARD_PATH_MAX + 80], why[SHARD_PATH_MAX + 160];
        int k = 0;
        while (k < o->n_csv && strcmp(o->csv_seen[k], name) != 0)
            k++;
        if (k == o->n_csv && k < 8) { /* the run's first rows of this table */
            snprintf(o->csv_seen[o->n_csv++], sizeof o->csv_seen[0], "%s", name);
            o->csv_mark[k].at = -1;
        }
        shard_io_mark scratch = {.at = -1}, *m = k < 8 ? &o->csv_mark[k] : &scratch;
        if (!o->dir_made)
            shard_io_mkdirs(o->dir, err);
        if (!err->code && !shard_io_path(path, sizeof path, err, "%s/%s", o->dir, name)) {
            /* appended in place to the file this run wrote; else written whole: this run's lines so far, or
             * (first rows) the earlier run's up to the restart */
            int rc = shard_io_splice(path, m, m->at, rows, strlen(rows), "", why, sizeof why);
            if (rc == 0)
                m->at = m->size;
            else if (rc < 0)
                shard_error_set(err, SHARD_EXIT_IO, "'%s': cannot append: %s", path, why);
            else
                shard_output_csv_whole(path, header, m->at >= 0 ? LONG_MAX : o->resume_step, rows, m, err);
        }
    }
    return shard_comm_agree(c, err, 0) ? err->code : 0;
}
