/* The parallel HDF5 writer shared by output and checkpoints, and path helpers (see h5io.h). */
#include "h5io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int shard_io_path(char *out, size_t len, shard_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out, len, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= len)
        return shard_error_set(err, SHARD_EXIT_INPUT, "path too long: %.200s...", out);
    return 0;
}

int shard_io_mkdirs(const char *dir, shard_error *err)
{
    char buf[4096];
    if (shard_io_path(buf, sizeof buf, err, "%s", dir))
        return err->code;
    for (char *s = buf + 1;; s++) {
        char keep = *s;
        if (keep == '/' || keep == '\0') {
            *s = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return shard_error_set(err, SHARD_EXIT_IO, "cannot create folder '%s': %s", buf, strerror(errno));
            *s = keep;
        }
        if (keep == '\0')
            break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return shard_error_set(err, SHARD_EXIT_IO, "'%s' is not a folder", dir);
    return 0;
}

int shard_io_fsync_path(const char *path, int is_dir)
{
    int fd = open(path, is_dir ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return is_dir ? 0 : rc;
}

#ifdef SHARD_HAVE_HDF5

void shard_h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

hid_t shard_h5_file_type(shard_field_type t)
{
    switch (t) {
    case SHARD_TYPE_I32:
        return H5T_STD_I32LE;
    case SHARD_TYPE_U32:
        return H5T_STD_U32LE;
    case SHARD_TYPE_I64:
        return H5T_STD_I64LE;
    case SHARD_TYPE_U8:
        return H5T_STD_U8LE;
    case SHARD_TYPE_F64:
        return H5T_IEEE_F64LE;
    }
    return H5T_IEEE_F64LE;
}

hid_t shard_h5_mem_type(shard_field_type t)
{
    switch (t) {
    case SHARD_TYPE_I32:
        return H5T_NATIVE_INT32;
    case SHARD_TYPE_U32:
        return H5T_NATIVE_UINT32;
    case SHARD_TYPE_I64:
        return H5T_NATIVE_INT64;
    case SHARD_TYPE_U8:
        return H5T_NATIVE_UINT8;
    case SHARD_TYPE_F64:
        return H5T_NATIVE_DOUBLE;
    }
    return H5T_NATIVE_DOUBLE;
}

static void shard_h5w_fail(shard_h5w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void shard_h5w_fail(shard_h5w *w, const char *fmt, ...)
{
    if (!w->what[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->what, sizeof w->what, fmt, ap);
        va_end(ap);
    }
    w->failed = 1;
}

void shard_h5w_create(shard_h5w *w, shard_comm *c, const char *path)
{
    memset(w, 0, sizeof *w);
    w->comm = *(const MPI_Comm *)shard_comm_mpi(c);
    w->rank = shard_comm_rank(c);
    w->file = w->dxpl = -1;
    shard_h5_quiet();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, w->comm, MPI_INFO_NULL);
    /* Metadata reads and writes through collective calls: one rank touches the file for them, not all. */
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
    errno = 0;
    w->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (w->file < 0)
        shard_h5w_fail(w, "cannot create '%s' (%s)", path, errno ? strerror(errno) : "HDF5 error");
    w->dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(w->dxpl, H5FD_MPIO_COLLECTIVE);
    shard_h5w_agree(w);
}

int shard_h5w_agree(shard_h5w *w)
{
    int any = w->failed;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, w->comm);
    w->failed = any;
    return any;
}

hid_t shard_h5w_group(shard_h5w *w, hid_t loc, const char *name)
{
    if (w->failed)
        return -1;
    hid_t g = H5Gcreate2(loc ? loc : w->file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        shard_h5w_fail(w, "cannot create group '%s'", name);
    return g;
}

void shard_h5w_rows(shard_h5w *w, hid_t loc, const char *name, shard_field_type type, int ncomp,
                    int64_t n_global, int64_t first, size_t n_local, const void *data)
{
    if (w->failed)
        return;
    int rank = ncomp == 1 ? 1 : 2;
    hsize_t dims[2] = {(hsize_t)n_global, (hsize_t)ncomp};
    hsize_t start[2] = {(hsize_t)first, 0}, count[2] = {(hsize_t)n_local, (hsize_t)ncomp};
    hid_t fspace = H5Screate_simple(rank, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    /* Every row is written: filling the dataset first would write it twice. */
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    hid_t d = H5Dcreate2(loc ? loc : w->file, name, shard_h5_file_type(type), fspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    if (d < 0) {
        shard_h5w_fail(w, "cannot create dataset '%s'", name);
        H5Sclose(fspace);
        shard_h5w_agree(w);
        return;
    }
    hsize_t mdims[2] = {n_local > 0 ? (hsize_t)n_local : 1, (hsize_t)ncomp};
    hid_t mspace = H5Screate_simple(rank, mdims, NULL);
    static const double dummy[16];
    if (n_local > 0) {
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    } else {
        H5Sselect_none(fspace);
        H5Sselect_none(mspace);
        data = dummy;
    }
    errno = 0;
    if (H5Dwrite(d, shard_h5_mem_type(type), mspace, fspace, w->dxpl, data) < 0)
        shard_h5w_fail(w, "cannot write dataset '%s' (%s)", name, errno ? strerror(errno) : "HDF5 error");
    else
        w->bytes += (uint64_t)n_local * (uint64_t)ncomp * (uint64_t)H5Tget_size(shard_h5_mem_type(type));
    H5Sclose(mspace);
    H5Sclose(fspace);
    if (H5Dclose(d) < 0)
        shard_h5w_fail(w, "cannot close dataset '%s'", name);
    shard_h5w_agree(w);
}

static void shard_h5w_attr(shard_h5w *w, hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
    if (w->failed)
        return;
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc ? loc : w->file, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || H5Awrite(a, mtype, v) < 0)
        shard_h5w_fail(w, "cannot write attribute '%s'", name);
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
}

void shard_h5w_attr_i64(shard_h5w *w, hid_t loc, const char *name, int64_t v)
{
    shard_h5w_attr(w, loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

void shard_h5w_attr_u64(shard_h5w *w, hid_t loc, const char *name, uint64_t v)
{
    shard_h5w_attr(w, loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &v);
}

void shard_h5w_attr_f64(shard_h5w *w, hid_t loc, const char *name, double v)
{
    shard_h5w_attr(w, loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

void shard_h5w_attr_str(shard_h5w *w, hid_t loc, const char *name, const char *s)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(s) > 0 ? strlen(s) : 1);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    shard_h5w_attr(w, loc, name, t, t, strlen(s) > 0 ? s : "");
    H5Tclose(t);
}

void shard_h5w_text(shard_h5w *w, hid_t loc, const char *name, const char *text, size_t len)
{
    if (w->failed)
        return;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, len > 0 ? len : 1);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(loc ? loc : w->file, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0) {
        shard_h5w_fail(w, "cannot create dataset '%s'", name);
    } else {
        hid_t msp = H5Screate(H5S_SCALAR);
        if (w->rank != 0) {
            H5Sselect_none(sp);
            H5Sselect_none(msp);
        }
        const char *data = len > 0 ? text : "";
        if (H5Dwrite(d, t, msp, sp, w->dxpl, data) < 0)
            shard_h5w_fail(w, "cannot write dataset '%s'", name);
        else if (w->rank == 0)
            w->bytes += len;
        H5Sclose(msp);
        H5Dclose(d);
    }
    H5Sclose(sp);
    H5Tclose(t);
    shard_h5w_agree(w);
}

int shard_h5w_close(shard_h5w *w)
{
    if (w->file >= 0) {
        errno = 0;
        if (!w->failed && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0)
            shard_h5w_fail(w, "cannot flush the file (%s)", errno ? strerror(errno) : "HDF5 error");
        if (H5Fclose(w->file) < 0)
            shard_h5w_fail(w, "cannot close the file (%s)", errno ? strerror(errno) : "HDF5 error");
        w->file = -1;
    }
    if (w->dxpl >= 0)
        H5Pclose(w->dxpl);
    w->dxpl = -1;
    return shard_h5w_agree(w);
}

#endif
