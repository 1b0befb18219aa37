/* Private to io/: the parallel HDF5 writer shared by the output and checkpoint modules, and small helpers for
 * the serial reader of checkpoints.
 *
 * A file is created on the run's communicator with the MPI-IO driver; every dataset is written collectively,
 * each rank its own rows as one hyperslab starting at the exclusive prefix sum of the rows of the ranks below
 * it (no gather to rank 0).  Metadata operations are collective too (HDF5 requires every rank to create every
 * object with the same arguments).  After each dataset the ranks agree on whether anything failed, so a
 * failure on one rank (a full disk seen by an MPI-IO aggregator) stops every rank at the same point instead of
 * leaving some in a collective call that others never reach.  The first failure is kept as a message.
 */
#ifndef SHARD_IO_H5IO_H
#define SHARD_IO_H5IO_H

#include "shard/comm.h"
#include "shard/particles.h"

#ifdef SHARD_HAVE_HDF5
#include <hdf5.h>
#include <mpi.h>

typedef struct shard_h5w {
    hid_t file, dxpl;
    MPI_Comm comm;
    int rank;
    int failed;          /* some rank failed (after the last agreement) or this rank did (before it) */
    uint64_t bytes;      /* raw data bytes this rank wrote */
    char what[512];      /* this rank's first failure */
} shard_h5w;

/* Silences HDF5's own error stack printing (we report our own messages).  Local; idempotent. */
void shard_h5_quiet(void);

/* Collective: creates (truncates) path on c's communicator. */
void shard_h5w_create(shard_h5w *w, shard_comm *c, const char *path);
/* Collective: a group under loc (the file when loc is 0). Returns its id or -1; close with H5Gclose. */
hid_t shard_h5w_group(shard_h5w *w, hid_t loc, const char *name);
/* Collective: dataset `name` of n_global rows of ncomp values (1-d when ncomp == 1); this rank writes rows
 * [first, first + n_local) from data.  Every rank passes the same name, type, ncomp and n_global. */
void shard_h5w_rows(shard_h5w *w, hid_t loc, const char *name, shard_field_type type, int ncomp,
                    int64_t n_global, int64_t first, size_t n_local, const void *data);
/* Collective, same value on every rank: scalar attributes on loc. */
void shard_h5w_attr_i64(shard_h5w *w, hid_t loc, const char *name, int64_t v);
void shard_h5w_attr_u64(shard_h5w *w, hid_t loc, const char *name, uint64_t v);
void shard_h5w_attr_f64(shard_h5w *w, hid_t loc, const char *name, double v);
void shard_h5w_attr_str(shard_h5w *w, hid_t loc, const char *name, const char *s);
/* Collective: a scalar fixed-length string dataset (rank 0's text is written; long scene files do not fit the
 * 64 KiB attribute limit, hence a dataset). */
void shard_h5w_text(shard_h5w *w, hid_t loc, const char *name, const char *text, size_t len);
/* Collective: every rank learns whether any rank failed; returns w->failed. */
int shard_h5w_agree(shard_h5w *w);
/* Collective: flushes and closes; returns w->failed after a last agreement. */
int shard_h5w_close(shard_h5w *w);

/* HDF5 types for registry element types: the file type (little-endian, fixed size) and the memory type. */
hid_t shard_h5_file_type(shard_field_type t);
hid_t shard_h5_mem_type(shard_field_type t);
#endif

/* "path.tmp" etc.: snprintf that reports truncation as an error message.  Returns 0 or SHARD_EXIT_INPUT. */
int shard_io_path(char *out, size_t len, shard_error *err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* mkdir -p.  Returns 0, or SHARD_EXIT_IO with err filled. Local. */
int shard_io_mkdirs(const char *dir, shard_error *err);
/* fsync of a file or a folder by name (best effort for folders). Returns 0 or -1 with errno set. Local. */
int shard_io_fsync_path(const char *path, int is_dir);

#endif
