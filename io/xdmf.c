/* The XDMF index of the output files: each file written whole once, then one grid appended per output (see
 * xdmf.h; the layout in shard/output.h).
 *
 * One file for ParaView's three readers (legacy XDMFReader, Xdmf3ReaderS, Xdmf3ReaderT; OpenDataFile and the
 * GUI pick Xdmf3ReaderS).  The Polyvertex topology carries its connectivity: Xdmf3 makes no cells without it
 * (the points are there but nothing renders), while Xdmf2 invents one vertex per point.  /particles/index is
 * that connectivity, a permutation of the rows, so vertex cell g is the particle with global id g.  HDF paths
 * are bare file names, resolved by every reader against the folder of the .xmf, so the folder can be moved;
 * Xdmf3 (ParaView 5.11) then needs the .xmf opened by a name with a folder part ("./particles.xmf", an
 * absolute path): a bare "particles.xmf" makes it look for "particles.xmfparticles_<step>.h5".  The stress is
 * stored whole (9 components, AttributeType Tensor): a Tensor6 would be expanded to 9 by XDMFReader but kept at
 * 6 by Xdmf3 (which has no expansion and skips Function/HyperSlab attributes), and VTK reads a 6-component
 * tensor in another order than XDMF's, so only the full tensor means the same thing in every reader.
 *
 * Rejected alternative: one small .xmf per output and a top-level collection that names them with XInclude.
 * ParaView 5.11 reads it with the legacy reader only: Xdmf3ReaderS/T, the default, find no time step in it; and
 * the top-level file would still grow by a line per output. */
#include "xdmf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The closing tags of every index file: an appended grid is written over them, followed by them again. */
static const char shard_xdmf_close[] = "  </Grid>\n </Domain>\n</Xdmf>\n";

void shard_xdmf_init(shard_xdmf *x, const char *dir)
{
    memset(x, 0, sizeof *x);
    snprintf(x->dir, sizeof x->dir, "%s", dir);
    for (int f = 0; f < SHARD_XDMF_FILES; f++)
        x->mark[f].at = -1;
}

void shard_xdmf_free(shard_xdmf *x)
{
    free(x->steps), free(x->times), free(x->cl_count);
    x->steps = NULL, x->times = NULL, x->cl_count = NULL;
    x->n_listed = x->cap_listed = 0;
}

void shard_xdmf_list(shard_xdmf *x, long step, double time, int64_t cells)
{
    if (x->n_listed == x->cap_listed) {
        x->cap_listed = x->cap_listed ? 2 * x->cap_listed : 64;
        x->steps = shard_realloc(x->steps, (size_t)x->cap_listed * sizeof *x->steps);
        x->times = shard_realloc(x->times, (size_t)x->cap_listed * sizeof *x->times);
        x->cl_count = shard_realloc(x->cl_count, (size_t)x->cap_listed * sizeof *x->cl_count);
    }
    x->steps[x->n_listed] = step;
    x->cl_count[x->n_listed] = cells;
    x->times[x->n_listed++] = time;
}

/* The name of index file f ("particles", the points table's group, the cells table's group), or NULL when the
 * output has no such table. */
static const char *shard_xdmf_name(const shard_xdmf *x, int f)
{
    const char *name = f == SHARD_XDMF_PARTICLES ? "particles" : f == SHARD_XDMF_POINTS ? x->pt_group : x->cl_group;
    return name[0] ? name : NULL;
}

/* The XDMF number type and precision of a column type. */
static void shard_xdmf_type(shard_field_type t, const char **nt, int *prec)
{
    switch (t) {
    case SHARD_TYPE_I32:
        *nt = "Int", *prec = 4;
        return;
    case SHARD_TYPE_U32:
        *nt = "UInt", *prec = 4;
        return;
    case SHARD_TYPE_I64:
        *nt = "Int", *prec = 8;
        return;
    case SHARD_TYPE_U8:
        *nt = "UChar", *prec = 1;
        return;
    case SHARD_TYPE_F64:
        *nt = "Float", *prec = 8;
        return;
    }
    *nt = "Float", *prec = 8;
}

/* The Geometry of a grid, n points at file:/group/position. */
static void shard_xdmf_geometry(FILE *fp, const char *file, const char *group, long long n)
{
    fprintf(fp,
            "    <Geometry GeometryType=\"XYZ\">\n     <DataItem Dimensions=\"%lld 3\" NumberType=\"Float\" "
            "Precision=\"8\" Format=\"HDF\">%s:/%s/position</DataItem>\n    </Geometry>\n",
            n, file, group);
}

/* The point attributes of a grid over n points: file:/group/<column> for every column but position and index
 * (the geometry and the connectivity). */
static void shard_xdmf_attributes(FILE *fp, const char *file, const char *group, long long n, int n_cols,
                                  const shard_column *cols)
{
    for (int q = 0; q < n_cols; q++) {
        const shard_column *col = &cols[q];
        if (strcmp(col->name, "position") == 0 || strcmp(col->name, "index") == 0)
            continue;
        const char *kind = col->ncomp == 1   ? "Scalar"
                           : col->ncomp == 3 ? "Vector"
                           : col->ncomp == 6 ? "Tensor6"
                           : col->ncomp == 9 ? "Tensor"
                                             : "Matrix";
        const char *nt = "Float";
        int prec = 8;
        shard_xdmf_type(col->type, &nt, &prec);
        char dims[64];
        if (col->ncomp == 1)
            snprintf(dims, sizeof dims, "%lld", n);
        else
            snprintf(dims, sizeof dims, "%lld %d", n, col->ncomp);
        fprintf(fp,
                "    <Attribute Name=\"%s\" AttributeType=\"%s\" Center=\"Node\">\n"
                "     <DataItem Dimensions=\"%s\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">"
                "%s:/%s/%s</DataItem>\n    </Attribute>\n",
                col->name, kind, dims, nt, prec, file, group, col->name);
    }
}

/* The number of triangles in the file of listed output k (a file of an earlier run, after a restart), or -2
 * when it has none (written without cloth, or unreadable). */
static int64_t shard_xdmf_cells_in_file(const shard_xdmf *x, long k)
{
    int64_t n = -2;
#ifdef SHARD_HAVE_HDF5
    char path[SHARD_PATH_MAX + 64], dset[128];
    if (snprintf(path, sizeof path, "%s/particles_%06ld.h5", x->dir, x->steps[k]) >= (int)sizeof path)
        return -2;
    snprintf(dset, sizeof dset, "%s/triangles", x->cl_group);
    shard_h5_quiet();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return -2;
    if (H5Lexists(f, x->cl_group, H5P_DEFAULT) > 0 && H5Lexists(f, dset, H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
        hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
        hsize_t dims[2] = {0, 0};
        if (sp >= 0 && H5Sget_simple_extent_ndims(sp) == 2 && H5Sget_simple_extent_dims(sp, dims, NULL) == 2 &&
            dims[1] == 3)
            n = (int64_t)dims[0];
        if (sp >= 0)
            H5Sclose(sp);
        if (d >= 0)
            H5Dclose(d);
    }
    H5Fclose(f);
#else
    (void)x, (void)k;
#endif
    return n;
}

/* Grid k of index file f, or nothing when that output has no row there (a file without the cells table).
 * particles.xmf and the points table's index: a Polyvertex grid of n points at group/position with
 * connectivity group/index and the columns as attributes.  The cells table's: a Triangle grid, its triangles
 * (rows of /particles) as the connectivity, over the N points of /particles/position with the attributes of
 * particles.xmf (the same arrays on the same points, so a cloth is coloured like its particles); each grid has
 * its own triangle count. */
static void shard_xdmf_grid(shard_xdmf *x, int f, long k, FILE *fp)
{
    if (f == SHARD_XDMF_CELLS && x->cl_count[k] == -1)
        x->cl_count[k] = shard_xdmf_cells_in_file(x, k);
    if (f == SHARD_XDMF_CELLS && x->cl_count[k] < 0)
        return;
    char file[64];
    snprintf(file, sizeof file, "particles_%06ld.h5", x->steps[k]);
    fprintf(fp, "   <Grid Name=\"step_%06ld\" GridType=\"Uniform\">\n", x->steps[k]);
    fprintf(fp, "    <Time Value=\"%.17g\"/>\n", x->times[k]);
    const char *group = f == SHARD_XDMF_POINTS ? x->pt_group : "particles";
    long long n = (long long)(f == SHARD_XDMF_POINTS ? x->pt_rows : x->n_global);
    if (f == SHARD_XDMF_CELLS) {
        long long m = (long long)x->cl_count[k];
        fprintf(fp,
                "    <Topology TopologyType=\"Triangle\" NumberOfElements=\"%lld\">\n"
                "     <DataItem Dimensions=\"%lld 3\" NumberType=\"Int\" Precision=\"8\" Format=\"HDF\">"
                "%s:/%s/triangles</DataItem>\n    </Topology>\n",
                m, m, file, x->cl_group);
    } else {
        fprintf(fp,
                "    <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"%lld\" NodesPerElement=\"1\">\n"
                "     <DataItem Dimensions=\"%lld\" NumberType=\"Int\" Precision=\"8\" Format=\"HDF\">"
                "%s:/%s/index</DataItem>\n    </Topology>\n",
                n, n, file, group);
    }
    shard_xdmf_geometry(fp, file, group, n);
    if (f == SHARD_XDMF_POINTS)
        shard_xdmf_attributes(fp, file, group, n, x->pt_n_cols, x->pt_cols);
    else
        shard_xdmf_attributes(fp, file, "particles", n, x->n_cols, x->cols);
    fprintf(fp, "   </Grid>\n");
}

/* DIR/<name>.xmf of index file f written whole, every listed output, through a temporary file and a rename;
 * its mark set for the appends that follow. */
static int shard_xdmf_whole(shard_xdmf *x, int f, shard_error *err)
{
    const char *name = shard_xdmf_name(x, f);
    char tmp[SHARD_PATH_MAX + 72], path[SHARD_PATH_MAX + 64];
    x->mark[f].at = -1;
    if (shard_io_path(path, sizeof path, err, "%s/%s.xmf", x->dir, name) ||
        shard_io_path(tmp, sizeof tmp, err, "%s.tmp", path))
        return SHARD_EXIT_IO;
    FILE *fp = shard_io_fopen_tmp(tmp, err);
    if (!fp)
        return SHARD_EXIT_IO;
    fprintf(fp,
            "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n"
            " <Domain>\n  <Grid Name=\"%s\" GridType=\"Collection\" CollectionType=\"Temporal\">\n",
            name);
    for (long k = 0; k < x->n_listed; k++)
        shard_xdmf_grid(x, f, k, fp);
    long long at = (long long)ftell(fp);
    fputs(shard_xdmf_close, fp);
    shard_io_mark mark;
    int bad = fflush(fp) != 0 || ferror(fp) || at < 0 || shard_io_mark_fd(&mark, fileno(fp), at) != 0;
    if (fclose(fp) != 0 || bad) {
        unlink(tmp);
        return shard_error_set(err, SHARD_EXIT_IO, "cannot write '%s' (disk full?)", tmp);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return shard_error_set(err, SHARD_EXIT_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
    }
    x->mark[f] = mark;
    return 0;
}

/* Index file f brought up to date with the last listed output: its grid appended in place over the closing
 * tags, or the file written whole (the first time, or when the file on disk is not the one last written).
 * *how: 0 nothing written, 1 appended (*was: the offset of the closing tags before), 2 written whole. */
static int shard_xdmf_update(shard_xdmf *x, int f, int *how, long long *was, shard_error *err)
{
    *how = 0;
    const char *name = shard_xdmf_name(x, f);
    if (!name)
        return 0;
    shard_io_mark *m = &x->mark[f];
    if (m->at >= 0) {
        char *text = NULL, path[SHARD_PATH_MAX + 64], why[SHARD_PATH_MAX + 160];
        size_t len = 0;
        FILE *fp = open_memstream(&text, &len);
        if (!fp)
            shard_fatal(SHARD_EXIT_INTERNAL, "out of memory for a grid of the index '%s.xmf'", name);
        shard_xdmf_grid(x, f, x->n_listed - 1, fp);
        long long grid = (long long)ftell(fp);
        fputs(shard_xdmf_close, fp);
        fclose(fp);
        int rc = 0; /* a grid of nothing (a file without the cells table): nothing to append */
        if (grid > 0 && shard_io_path(path, sizeof path, err, "%s/%s.xmf", x->dir, name))
            rc = -2;
        else if (grid > 0)
            rc = shard_io_splice(path, m, m->at, text, len, shard_xdmf_close, why, sizeof why);
        free(text);
        if (rc == -1)
            shard_error_set(err, SHARD_EXIT_IO, "cannot append to '%s': %s", path, why);
        if (rc == 0 && grid > 0)
            *how = 1, *was = m->at, m->at += grid;
        if (rc != 1) /* 1: the file on disk is not the one this run wrote */
            return rc ? SHARD_EXIT_IO : 0;
    }
    int rc = shard_xdmf_whole(x, f, err);
    *how = rc ? 0 : 2;
    return rc;
}

/* Whether two lists of columns differ (names, types, components). */
static int shard_xdmf_cols_differ(int n, const shard_column *a, int m, const shard_column *b)
{
    int differ = n != m;
    for (int q = 0; q < n && !differ; q++)
        differ = strcmp(a[q].name, b[q].name) != 0 || a[q].type != b[q].type || a[q].ncomp != b[q].ncomp;
    return differ;
}

/* What the grids show, from this output's columns and tables (a table once seen stays: an output without it
 * has no grid in the cells index, and the points index goes on listing every output); returns 1 when it
 * changed. */
static int shard_xdmf_layout(shard_xdmf *x, int64_t n_global, int n_cols, const shard_column *cols,
                             const shard_output_table *pt, int64_t pt_rows, const char *cl_group)
{
    n_cols = n_cols < 32 ? n_cols : 32;
    int pt_n = pt ? (pt->n_cols < 16 ? pt->n_cols : 16) : 0;
    int changed = n_global != x->n_global || shard_xdmf_cols_differ(n_cols, cols, x->n_cols, x->cols) ||
                  (pt && (strcmp(pt->group, x->pt_group) != 0 || pt_rows != x->pt_rows ||
                          shard_xdmf_cols_differ(pt_n, pt->cols, x->pt_n_cols, x->pt_cols))) ||
                  (cl_group && strcmp(cl_group, x->cl_group) != 0);
    x->n_global = n_global;
    x->n_cols = n_cols;
    memcpy(x->cols, cols, (size_t)n_cols * sizeof *cols);
    if (pt) {
        snprintf(x->pt_group, sizeof x->pt_group, "%s", pt->group);
        x->pt_n_cols = pt_n;
        memcpy(x->pt_cols, pt->cols, (size_t)pt_n * sizeof *x->pt_cols);
        x->pt_rows = pt_rows;
    }
    if (cl_group)
        snprintf(x->cl_group, sizeof x->cl_group, "%s", cl_group);
    return changed;
}

int shard_xdmf_add(shard_xdmf *x, long step, double time, int64_t n_global, int n_cols, const shard_column *cols,
                   const shard_output_table *pt, int64_t pt_rows, const char *cl_group, int64_t cl_rows,
                   shard_error *err)
{
    /* A new layout, or a step written again (its grid replaced, not appended): every file is written whole. */
    int again = x->n_listed > 0 && x->steps[x->n_listed - 1] == step;
    if (shard_xdmf_layout(x, n_global, n_cols, cols, pt, pt_rows, cl_group) || again)
        for (int f = 0; f < SHARD_XDMF_FILES; f++)
            x->mark[f].at = -1;
    long listed = x->n_listed;
    int64_t count = again ? x->cl_count[listed - 1] : 0;
    if (again)
        x->cl_count[listed - 1] = cl_group ? cl_rows : -2, x->times[listed - 1] = time;
    else
        shard_xdmf_list(x, step, time, cl_group ? cl_rows : -2);
    int how[SHARD_XDMF_FILES] = {0};
    long long was[SHARD_XDMF_FILES] = {0};
    int rc = 0;
    for (int f = 0; f < SHARD_XDMF_FILES && !rc; f++)
        rc = shard_xdmf_update(x, f, &how[f], &was[f], err);
    if (!rc)
        return 0;
    /* Taken back: the listing as it was, and the files this output changed (an append cut off, a file written
     * whole written again; a file that cannot be is written whole at the next output). */
    if (again)
        x->cl_count[listed - 1] = count;
    else
        x->n_listed = listed;
    for (int f = 0; f < SHARD_XDMF_FILES; f++) {
        char path[SHARD_PATH_MAX + 64], why[SHARD_PATH_MAX + 160];
        shard_error e2 = {0};
        const char *name = shard_xdmf_name(x, f);
        if (how[f] == 1 && snprintf(path, sizeof path, "%s/%s.xmf", x->dir, name) < (int)sizeof path &&
            shard_io_splice(path, &x->mark[f], was[f], shard_xdmf_close, strlen(shard_xdmf_close), shard_xdmf_close,
                            why, sizeof why) == 0)
            x->mark[f].at = was[f];
        else if (how[f] == 1 || (how[f] == 2 && shard_xdmf_whole(x, f, &e2)))
            x->mark[f].at = -1;
    }
    return rc;
}
