/* Private to io/: the parallel HDF5 writer shared by the output and checkpoint modules, the HDF5 types of the
 * registry's element types, and path helpers (folders, step files, fsync).
 *
 * A file is created on the run's communicator with the MPI-IO driver; every dataset is written collectively,
 * each rank its own rows as one hyperslab starting at the exclusive prefix sum of the rows of the ranks below
 * it (no gather to rank 0).  Metadata operations are collective too (HDF5 requires every rank to create every
 * object with the same arguments).
 *
 * Failures.  A write that fails inside HDF5 cannot be recovered collectively: on a full disk Open MPI's
 * MPI-IO (ompio) reports success for writes it did not make, ROMIO reports the error only on the ranks that
 * wrote, HDF5's collective metadata flush then leaves ranks in different calls (a hang), and after a failed
 * H5Fclose HDF5 1.10 crashes in MPI_Finalize.  So the space is reserved before HDF5 needs it: rank 0 allocates
 * the expected size of the file (posix_fallocate) before the file is created, again right after, through the
 * end of each dataset before its rows are written, and a metadata allowance beyond the last one before the
 * metadata is flushed.  A full disk (or quota) is met by rank 0's reservation, outside HDF5, and every write
 * HDF5 makes lands in allocated blocks.  Other write errors inside HDF5 (EIO) are not covered.
 *
 * Every operation below is made by every rank or by none: each one ends with an agreement (one allreduce) on
 * whether any rank failed, and after a failure every later operation is skipped on every rank.  The message
 * is the one of the lowest failing rank, the same on every rank.  A file that failed is closed (after its
 * blocks are freed, so that HDF5 can write the metadata it flushes on close even on a full disk) and removed.
 */
#ifndef SHARD_IO_H5IO_H
#define SHARD_IO_H5IO_H

#include "shard/comm.h"
#include "shard/particles.h"

#include <stdio.h>

#ifdef SHARD_HAVE_HDF5
#include <hdf5.h>
#include <mpi.h>

#define SHARD_H5W_PATH 4096

typedef struct shard_h5w {
    hid_t file, dxpl;
    MPI_Comm comm;
    shard_comm *c;
    int rank, size;
    int failed;        /* some rank failed, as of the last agreement: the same on every rank */
    int mine;          /* this rank failed since the last agreement */
    int fd;            /* rank 0: the file, for the reservations; -1 elsewhere */
    uint64_t reserved; /* rank 0: bytes [0, reserved) of the file are allocated on disk */
    uint64_t end;      /* rank 0: the largest end of a dataset's rows in the file so far */
    uint64_t bytes;    /* raw data bytes this rank wrote */
    char path[SHARD_H5W_PATH];
    char what[512]; /* the first failure (after an agreement: the lowest failing rank's) */
} shard_h5w;

/* Silences HDF5's own error stack printing (we report our own messages).  Local; idempotent. */
void shard_h5_quiet(void);

/* Collective: creates path (a temporary name: shard_io_open_tmp) on c's communicator, after rank 0 has reserved
 * `raw` bytes of data plus an allowance for the metadata on disk.  The fault reserve_late (faults.h, tests only)
 * reserves the allowance alone, so that a full disk is met before a dataset or before the flush, with part of
 * the file written. */
void shard_h5w_create(shard_h5w *w, shard_comm *c, const char *path, uint64_t raw);
/* Collective: a group under loc (the file when loc is 0). Returns its id or -1 (on every rank once any failed);
 * close with H5Gclose. */
hid_t shard_h5w_group(shard_h5w *w, hid_t loc, const char *name);
/* Collective: dataset `name` of n_global rows of ncomp values (1-d when ncomp == 1); this rank writes rows
 * [first, first + n_local) from data.  Every rank passes the same name, type, ncomp and n_global. */
void shard_h5w_rows(shard_h5w *w, hid_t loc, const char *name, shard_field_type type, int ncomp, int64_t n_global,
                    int64_t first, size_t n_local, const void *data);
/* Collective, same value on every rank: scalar attributes on loc. */
void shard_h5w_attr_i64(shard_h5w *w, hid_t loc, const char *name, int64_t v);
void shard_h5w_attr_u64(shard_h5w *w, hid_t loc, const char *name, uint64_t v);
void shard_h5w_attr_f64(shard_h5w *w, hid_t loc, const char *name, double v);
void shard_h5w_attr_str(shard_h5w *w, hid_t loc, const char *name, const char *s);
/* Collective: a scalar fixed-length string dataset (rank 0's text is written; long scene files do not fit the
 * 64 KiB attribute limit, hence a dataset). */
void shard_h5w_text(shard_h5w *w, hid_t loc, const char *name, const char *text, size_t len);
/* Collective: every rank learns whether any rank failed (and the first failure's message); returns w->failed. */
int shard_h5w_agree(shard_h5w *w);
/* Collective: flushes and closes; returns w->failed after a last agreement.  A failed file is removed (by
 * rank 0, after every rank has closed it). */
int shard_h5w_close(shard_h5w *w);

/* Bytes of one element of a registry type in memory (and in the file). */
size_t shard_h5_type_size(shard_field_type t);

/* HDF5 types for registry element types: the file type (little-endian, fixed size) and the memory type. */
hid_t shard_h5_file_type(shard_field_type t);
hid_t shard_h5_mem_type(shard_field_type t);
#endif

/* "path.tmp" etc.: snprintf that reports truncation as an error message.  Returns 0 or SHARD_EXIT_INPUT. */
int shard_io_path(char *out, size_t len, shard_error *err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The steps of the files DIR/<prefix>_<step>.h5 (step written with at least 6 digits, as the writers name them)
 * with step <= max_step, in increasing order, in a new array (caller frees) of *n.  One pass over the folder.
 * Local. */
int64_t *shard_io_step_files(const char *dir, const char *prefix, long max_step, size_t *n);
/* mkdir -p.  Returns 0, or SHARD_EXIT_IO with err filled. Local. */
int shard_io_mkdirs(const char *dir, shard_error *err);
/* Collective: mkdir -p of dir by rank 0 unless *made, agreed on by every rank; *made set once it is there.
 * Returns 0, or SHARD_EXIT_IO with the same err on every rank. */
int shard_io_mkdirs_once(shard_comm *c, const char *dir, int *made, shard_error *err);
/* Creates the temporary file tmp for writing, never through what another party put at that name: opened with
 * O_CREAT | O_EXCL | O_NOFOLLOW, after removing a leftover only when it is a regular file of this user (a write
 * an earlier run did not finish).  A symbolic link, a folder, a FIFO or another user's file there is left alone
 * and refused.  Returns the descriptor, or -1 with the reason in why ("'x.tmp' is a symbolic link: not replaced
 * (remove it)", "cannot create 'x.tmp': ...").  Local. */
int shard_io_open_tmp(const char *tmp, char *why, size_t len);
/* shard_io_open_tmp as a stdio stream; NULL with err (SHARD_EXIT_IO) filled.  Local. */
FILE *shard_io_fopen_tmp(const char *tmp, shard_error *err);
/* A file as this process last wrote it, for shard_io_splice: where its next text goes (before its closing
 * text), and what it was (device, inode, size, modification time), so that a file that anyone else changed or
 * replaced since is never written into.  at < 0: no such file. */
typedef struct shard_io_mark {
    long long at, size;
    unsigned long long dev, ino;
    long long mtime_s, mtime_ns;
} shard_io_mark;
/* *m from the open file fd after its last write, its next text at `at`.  Returns 0 or -1 (fstat failed). */
int shard_io_mark_fd(shard_io_mark *m, int fd, long long at);
/* Rewrites the end of the file path in place: its bytes from `at` (0 <= at <= m->size) to its end become
 * text[0..len).  Only when the file is the one m describes (a regular file reached without a symbolic link, the
 * same device, inode, size and modification time) and its bytes from m->at on are `tail`; then the space the file
 * grows by is reserved (posix_fallocate), so that a full disk is met before anything is written, and the text
 * is written in one call (pwrite) and the file cut at at + len.  A failed write puts the old bytes back and the
 * file at its old size.  Returns 0 (m->size and the identity updated; m->at is the caller's), 1 when the file
 * is not the one m describes (nothing written: the caller writes it whole), or -1 with the reason in why
 * (without the path).  Local. */
int shard_io_splice(const char *path, shard_io_mark *m, long long at, const char *text, size_t len, const char *tail,
                    char *why, size_t wlen);
/* fsync of a file or a folder by name (best effort for folders; a file is not reached through a symbolic
 * link). Returns 0 or -1 with errno set. Local. */
int shard_io_fsync_path(const char *path, int is_dir);

#endif
