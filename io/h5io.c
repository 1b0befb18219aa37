/* The parallel HDF5 writer shared by output and checkpoints, and path helpers (see h5io.h). */
#include "h5io.h"

#include "shard/faults.h"
#include "shard/sorted.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

int64_t *shard_io_step_files(const char *dir, const char *prefix, long max_step, size_t *n)
{
    *n = 0;
    int64_t *steps = NULL;
    size_t cap = 0;
    DIR *dp = opendir(dir);
    if (!dp)
        return NULL;
    size_t pl = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        const char *name = e->d_name;
        char *end = NULL;
        if (strncmp(name, prefix, pl) != 0 || name[pl] != '_' || !isdigit((unsigned char)name[pl + 1]))
            continue;
        long s = strtol(name + pl + 1, &end, 10);
        char again[SHARD_PATH_MAX];
        snprintf(again, sizeof again, "%s_%06ld.h5", prefix, s);
        if (s < 0 || s > max_step || strcmp(again, name) != 0)
            continue;
        shard_reserve((void **)&steps, &cap, *n + 1, sizeof *steps);
        steps[(*n)++] = s;
    }
    closedir(dp);
    if (*n > 1)
        qsort(steps, *n, sizeof *steps, shard_sorted_cmp_i64);
    return steps;
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

int shard_io_mkdirs_once(shard_comm *c, const char *dir, int *made, shard_error *err)
{
    if (*made)
        return 0;
    if (shard_comm_rank(c) == 0)
        shard_io_mkdirs(dir, err);
    if (shard_comm_agree(c, err, 0))
        return err->code;
    *made = 1;
    return 0;
}

int shard_io_open_tmp(const char *tmp, char *why, size_t len)
{
    struct stat st;
    if (lstat(tmp, &st) == 0) {
        const char *what = S_ISLNK(st.st_mode)      ? "a symbolic link"
                           : S_ISDIR(st.st_mode)    ? "a folder"
                           : !S_ISREG(st.st_mode)   ? "not a regular file"
                           : st.st_uid != geteuid() ? "another user's file"
                                                    : NULL;
        if (what) {
            snprintf(why, len, "'%s' is %s: not replaced (remove it)", tmp, what);
            return -1;
        }
        if (unlink(tmp) != 0 && errno != ENOENT) {
            snprintf(why, len, "cannot remove the leftover '%s': %s", tmp, strerror(errno));
            return -1;
        }
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        snprintf(why, len, "cannot create '%s': %s", tmp, strerror(errno));
    return fd;
}

FILE *shard_io_fopen_tmp(const char *tmp, shard_error *err)
{
    char why[SHARD_PATH_MAX + 128];
    int fd = shard_io_open_tmp(tmp, why, sizeof why);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !fp) {
        snprintf(why, sizeof why, "cannot write '%s': %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
    }
    if (!fp)
        shard_error_set(err, SHARD_EXIT_IO, "%s", why);
    return fp;
}

int shard_io_mark_fd(shard_io_mark *m, int fd, long long at)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    m->at = at, m->size = (long long)st.st_size;
    m->dev = (unsigned long long)st.st_dev, m->ino = (unsigned long long)st.st_ino;
    m->mtime_s = (long long)st.st_mtim.tv_sec, m->mtime_ns = (long long)st.st_mtim.tv_nsec;
    return 0;
}

/* pwrite (write = 1) or pread of all of buf at off: 0, or -1 with errno set. */
static int shard_io_pio(int fd, int write, char *buf, size_t len, off_t off)
{
    while (len > 0) {
        ssize_t w = write ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        buf += w, len -= (size_t)w, off += w;
    }
    return 0;
}

int shard_io_splice(const char *path, shard_io_mark *m, long long at, const char *text, size_t len, const char *tail,
                    char *why, size_t wlen)
{
    size_t tl = strlen(tail);
    if (m->at < 0 || at < 0 || at > m->at || m->size - m->at != (long long)tl)
        return 1;
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 1;
    /* the bytes from `at` on: compared with the tail, and put back after a failed write */
    size_t n_old = (size_t)(m->size - at);
    char *old = shard_malloc(n_old + 1);
    struct stat st;
    int same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_dev == m->dev &&
               (unsigned long long)st.st_ino == m->ino && (long long)st.st_size == m->size &&
               (long long)st.st_mtim.tv_sec == m->mtime_s && (long long)st.st_mtim.tv_nsec == m->mtime_ns &&
               shard_io_pio(fd, 0, old, n_old, (off_t)at) == 0 && memcmp(old + (m->at - at), tail, tl) == 0;
    int rc = same ? 0 : 1, e = 0;
    long long end = at + (long long)len;
    if (same && end > m->size && (e = posix_fallocate(fd, (off_t)m->size, (off_t)(end - m->size))) != 0) {
        rc = -1;
        snprintf(why, wlen, "cannot reserve %lld bytes on disk (%s)", end - m->size, strerror(e));
        if (ftruncate(fd, (off_t)m->size) != 0) /* a reservation that ran out may have grown the file */
            snprintf(why + strlen(why), wlen - strlen(why), ", nor cut it back");
    } else if (same && (shard_io_pio(fd, 1, (char *)text, len, (off_t)at) != 0 ||
                        (end < m->size && ftruncate(fd, (off_t)end) != 0) || shard_io_mark_fd(m, fd, m->at) != 0)) {
        e = errno;
        rc = -1;
        int back = shard_io_pio(fd, 1, old, n_old, (off_t)at) == 0 && ftruncate(fd, (off_t)m->size) == 0;
        snprintf(why, wlen, "%s%s", strerror(e), back ? "" : ", and the old end not put back");
    }
    free(old);
    if (close(fd) != 0 && rc == 0) {
        snprintf(why, wlen, "%s", strerror(errno));
        rc = -1;
    }
    return rc;
}

int shard_io_fsync_path(const char *path, int is_dir)
{
    int fd = open(path, is_dir ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NOFOLLOW);
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

size_t shard_h5_type_size(shard_field_type t) { return H5Tget_size(shard_h5_mem_type(t)); }

/* What HDF5 adds to a file beyond its raw data (superblock, object headers, group B-trees and heaps): about
 * 9 kB for an output file and 8 kB for a checkpoint.  A file that needs more gets it from the reservations
 * before each dataset and before the flush. */
#define SHARD_H5W_META 16384

static void shard_h5w_fail(shard_h5w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void shard_h5w_fail(shard_h5w *w, const char *fmt, ...)
{
    if (!w->what[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->what, sizeof w->what, fmt, ap);
        va_end(ap);
    }
    w->mine = 1;
}

int shard_h5w_agree(shard_h5w *w)
{
    int first = shard_comm_first_failure(w->c, w->mine);
    w->mine = 0;
    /* The first agreed failure names the cause on every rank; later ones (the close of a failed file) do not
     * replace it.  Every rank takes the same branch: first and w->failed are the same everywhere. */
    if (first >= 0 && !w->failed) {
        shard_comm_bcast(w->c, w->what, sizeof w->what, first);
        w->failed = 1;
    }
    return w->failed;
}

/* Rank 0: makes [0, upto) of the file allocated on disk (a shorter file grows to upto; HDF5 cuts it back to
 * its end of allocated space when it flushes).  Only ranges not reserved before are allocated, and always
 * before anything is written there.  Other ranks do nothing. */
static void shard_h5w_reserve(shard_h5w *w, uint64_t upto, const char *what)
{
    if (w->rank != 0 || w->fd < 0 || upto <= w->reserved)
        return;
    int e = posix_fallocate(w->fd, (off_t)w->reserved, (off_t)(upto - w->reserved));
    if (e == 0)
        w->reserved = upto;
    else
        shard_h5w_fail(w, "cannot reserve %.1f kB on disk %s (%s)", (double)upto / 1e3, what, strerror(e));
}

/* Rank 0: reserves through the end of dataset d's rows (parallel HDF5 allocates a contiguous dataset when it
 * creates it, at its end of allocated space), and with them the metadata allocated before.  HDF5 1.10 cannot
 * tell its end of allocated space with the MPI-IO driver (H5Fget_eoa wants a SWMR driver, H5Fget_filesize
 * fails after the first write), so the writer keeps the largest end of data it has seen. */
static void shard_h5w_reserve_rows(shard_h5w *w, hid_t d, const char *name)
{
    if (w->rank != 0)
        return;
    haddr_t off = H5Dget_offset(d);
    hsize_t size = H5Dget_storage_size(d);
    if (off == HADDR_UNDEF || size == 0)
        return;
    if ((uint64_t)off + size > w->end)
        w->end = (uint64_t)off + size;
    char what[300];
    snprintf(what, sizeof what, "before dataset '%s'", name);
    shard_h5w_reserve(w, (uint64_t)off + size, what);
}

void shard_h5w_create(shard_h5w *w, shard_comm *c, const char *path, uint64_t raw)
{
    memset(w, 0, sizeof *w);
    w->c = c;
    w->comm = *(const MPI_Comm *)shard_comm_mpi(c);
    w->rank = shard_comm_rank(c);
    w->size = shard_comm_size(c);
    w->file = w->dxpl = -1;
    w->fd = -1;
    snprintf(w->path, sizeof w->path, "%s", path);
    shard_h5_quiet();
    int late = shard_io_faults_installed()->reserve_late; /* tests only (faults.h) */
    uint64_t expect = late ? SHARD_H5W_META : raw + SHARD_H5W_META;
    /* Room first, before HDF5 holds anything that it would have to write: a full disk stops here with nothing
     * to close. */
    if (w->rank == 0) {
        char why[SHARD_H5W_PATH + 128];
        w->fd = shard_io_open_tmp(path, why, sizeof why);
        if (w->fd < 0)
            shard_h5w_fail(w, "%s", why);
        else
            shard_h5w_reserve(w, expect, "for the file");
    }
    if (shard_h5w_agree(w))
        return;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, w->comm, MPI_INFO_NULL);
    /* Metadata reads and writes through collective calls: one rank touches the file for them, not all. */
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
    errno = 0;
    w->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (w->file < 0) {
        shard_h5w_fail(w, "cannot create the file (%s)", errno ? strerror(errno) : "HDF5 error");
    } else {
        w->dxpl = H5Pcreate(H5P_DATASET_XFER);
        H5Pset_dxpl_mpio(w->dxpl, H5FD_MPIO_COLLECTIVE);
        /* H5Fcreate truncated the file, and the blocks reserved with it: the metadata allowance first, so that
         * a file given up from here on always has blocks to free for the metadata written when it is closed. */
        w->reserved = 0;
        shard_h5w_reserve(w, SHARD_H5W_META, "for the file");
        shard_h5w_reserve(w, expect, "for the file");
    }
    shard_h5w_agree(w);
    /* Closing is collective: a file that only some ranks could open cannot be closed by any of them. */
    int open_here = w->file >= 0, open_all = shard_comm_first_failure(w->c, !open_here) < 0;
    if (open_here && !open_all)
        shard_fail_one(c, SHARD_EXIT_IO, "'%s' could be created on some ranks only: %s", path,
                       w->what[0] ? w->what : "HDF5 error");
}

hid_t shard_h5w_group(shard_h5w *w, hid_t loc, const char *name)
{
    if (w->failed)
        return -1;
    hid_t g = H5Gcreate2(loc ? loc : w->file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        shard_h5w_fail(w, "cannot create group '%s'", name);
    if (shard_h5w_agree(w) && g >= 0) {
        H5Gclose(g);
        g = -1;
    }
    return g;
}

void shard_h5w_rows(shard_h5w *w, hid_t loc, const char *name, shard_field_type type, int ncomp, int64_t n_global,
                    int64_t first, size_t n_local, const void *data)
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
    if (d < 0)
        shard_h5w_fail(w, "cannot create dataset '%s'", name);
    else /* its rows are allocated now (parallel HDF5 allocates contiguous datasets at creation) */
        shard_h5w_reserve_rows(w, d, name);
    if (shard_h5w_agree(w) || n_global == 0) { /* an empty dataset has nothing to write */
        if (d >= 0 && H5Dclose(d) < 0)
            shard_h5w_fail(w, "cannot close dataset '%s'", name);
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
        w->bytes += (uint64_t)n_local * (uint64_t)ncomp * (uint64_t)shard_h5_type_size(type);
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
    shard_h5w_agree(w);
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
    if (d < 0)
        shard_h5w_fail(w, "cannot create dataset '%s'", name);
    else
        shard_h5w_reserve_rows(w, d, name);
    if (!shard_h5w_agree(w)) {
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
    }
    if (d >= 0 && H5Dclose(d) < 0)
        shard_h5w_fail(w, "cannot close dataset '%s'", name);
    H5Sclose(sp);
    H5Tclose(t);
    shard_h5w_agree(w);
}

/* Local: closes whatever is still open in the file (an error path that forgot a group), so that H5Fclose
 * really closes it. */
static void shard_h5w_close_objects(hid_t file)
{
    unsigned types = H5F_OBJ_LOCAL | H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_DATATYPE | H5F_OBJ_ATTR;
    ssize_t n = H5Fget_obj_count(file, types);
    if (n <= 0)
        return;
    hid_t *ids = shard_malloc((size_t)n * sizeof *ids);
    n = H5Fget_obj_ids(file, types, (size_t)n, ids);
    for (ssize_t k = 0; k < n; k++) {
        if (H5Iget_type(ids[k]) == H5I_ATTR)
            H5Aclose(ids[k]);
        else
            H5Oclose(ids[k]);
    }
    free(ids);
}

int shard_h5w_close(shard_h5w *w)
{
    /* Every rank has the file open or none has (shard_h5w_create), and w->failed is the same everywhere, so
     * every rank makes the same calls below. */
    if (w->file >= 0) {
        if (!w->failed) {
            /* The metadata HDF5 flushes lies below the end of the data or in the little it allocated after. */
            shard_h5w_reserve(w, w->end + SHARD_H5W_META, "before the metadata is flushed");
            if (!shard_h5w_agree(w)) {
                errno = 0;
                if (H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0)
                    shard_h5w_fail(w, "cannot flush the file (%s)", errno ? strerror(errno) : "HDF5 error");
                shard_h5w_agree(w);
            }
        }
        /* A failed file is thrown away: its blocks are freed first, so that the metadata HDF5 still writes when
         * it closes the file finds room on a full disk (a failed H5Fclose would leave HDF5 1.10 to crash at
         * MPI_Finalize). */
        if (w->failed && w->rank == 0 && w->fd >= 0 && ftruncate(w->fd, 0) == 0)
            w->reserved = 0;
        shard_h5w_close_objects(w->file);
        errno = 0;
        if (H5Fclose(w->file) < 0)
            shard_h5w_fail(w, "cannot close the file (%s)", errno ? strerror(errno) : "HDF5 error");
        w->file = -1;
    }
    if (w->dxpl >= 0)
        H5Pclose(w->dxpl);
    w->dxpl = -1;
    shard_h5w_agree(w);
    if (w->rank == 0 && w->fd >= 0) {
        if (w->failed)
            unlink(w->path);
        close(w->fd);
        w->fd = -1;
    }
    return w->failed;
}

#endif
