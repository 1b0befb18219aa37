/* Private to the checkpoint files of io/ (checkpoint.c, checkpoint_format.c, checkpoint_exchange.c,
 * checkpoint_range.c) and to the whole-file reader the tests compare the parallel one with
 * (tests/support/checkpoint_whole.c): the checksum, the checked reads of a file's header and datasets, and the
 * cut and the bounded exchanges of the parallel reader.  The format itself is described in checkpoint.h.
 */
#ifndef SHARD_IO_CHECKPOINT_IMPL_H
#define SHARD_IO_CHECKPOINT_IMPL_H

#include "shard/checkpoint.h"
#include "shard/hash.h"

#include "h5io.h"

/* Checksum (checkpoint_format.c): a sum over particles (exact and order-free in 64-bit integers) of a strong
 * per-particle hash. */
static inline uint64_t shard_ckpt_mix(uint64_t h, uint64_t v) { return shard_hash_add(h, v); }
/* The hash of particle `row` of p: its state rows, then those of its section (blk at slot `slot`; NULL: none). */
uint64_t shard_ckpt_hash_fields(const shard_particles *p, size_t row, const shard_block *blk, size_t slot);
/* Row `row` of a pair list (keys and value bits) into h. */
uint64_t shard_ckpt_hash_list_row(uint64_t h, const shard_pairlist *l, size_t row);
/* The hash of the module state records of sections[0..n) (data[k], bytes[k]; NULL: none), in section order. */
uint64_t shard_ckpt_hash_blobs(int n, const shard_checkpoint_section *sections, void *const *data, const size_t *bytes);
/* The scene text's checksum (its bytes up to the first NUL). */
uint64_t shard_ckpt_hash_text(const char *text, size_t len);
/* Does a block have a STATE row (and so a section in the file)? */
int shard_ckpt_stateful(const shard_block *b);

#ifdef SHARD_HAVE_HDF5
/* Checked reads (checkpoint_format.c).  Every one fills err with "PATH: <what is wrong>" (SHARD_EXIT_INPUT). */
/* Opens dataset `name` and checks it has `rows` rows of ncomp values of a type like t; -1 when not. */
hid_t shard_ckpt_open(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp, int64_t rows,
                      shard_error *err);
/* The whole dataset `name` (checked as shard_ckpt_open does) into buf. */
int shard_ckpt_read(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp, int64_t rows, void *buf,
                    shard_error *err);
/* The rows of a 1-d dataset, or -1 when it is missing or not 1-d. */
int64_t shard_ckpt_rows_of(hid_t f, const char *path, const char *name, shard_error *err);
/* The file, opened read-only by one process after the checks that name what is wrong with a path that is no
 * checkpoint at all; -1 when not. */
hid_t shard_ckpt_open_file(const char *path, shard_error *err);
/* The root attributes and the scene text into d, the checksum into *checksum, after every check of the header;
 * n_particles and n_bonds may be at most max_count. */
int shard_ckpt_load_header(hid_t f, const char *path, int n_sections, int n_lists, int64_t max_count,
                           shard_checkpoint_data *d, uint64_t *checksum, shard_error *err);
/* The module state records of the sections asked for into d->blob, checked against their checksum. */
int shard_ckpt_load_blobs(hid_t f, const char *path, int n_sections, const shard_checkpoint_section *sections,
                          shard_checkpoint_data *d, shard_error *err);
/* The bodies' identities (/bodies) into d (after shard_ckpt_check_sizes: d->n is the file's). */
int shard_ckpt_load_bodies(hid_t f, const char *path, shard_checkpoint_data *d, shard_error *err);
/* Rows [at, at + count) of dataset `name` (checked as shard_ckpt_open does) into buf, by an independent read. */
int shard_ckpt_read_part(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp, int64_t rows,
                         int64_t at, int64_t count, void *buf, shard_error *err);
/* Every dataset the readers allocate for, against the header's counts n and nb and against the file (its rows
 * stored), before anything is allocated; the first failure in the readers' order. */
int shard_ckpt_check_sizes(hid_t f, const char *path, int64_t n, int64_t nb, int n_sections,
                           const shard_checkpoint_section *sections, int n_lists, const shard_checkpoint_list *lists,
                           shard_error *err);
/* Only the checks of a dataset's shape. */
int shard_ckpt_check_shape(hid_t f, const char *path, const char *name, shard_field_type t, int ncomp, int64_t rows,
                           shard_error *err);
#endif

/* The parallel reader's cut and exchanges (checkpoint_exchange.c). */
/* The largest count the range reader takes from a file (particles, bond entries, list entries): 2^60, so that
 * no sum of counts can overflow; a file with more rows than that could not be stored (8 bytes a row). */
#define SHARD_CKPT_MAX_COUNT (INT64_C(1) << 60)
/* floor(n * r / p) without forming n * r: the first item of part r when n items are cut into p parts. */
int64_t shard_ckpt_split(int64_t n, int r, int p);
/* The part of the cut above that holds item g (0 <= g < n). */
int shard_ckpt_owner(int64_t g, int64_t n, int p);
/* Whole 64-bit words of `bytes` bytes. */
size_t shard_ckpt_words(size_t bytes);
/* Offsets of the destinations' groups in a send buffer: at[r] = count[0] + ... + count[r - 1]. New array. */
size_t *shard_ckpt_offsets(const size_t *count, int p);
/* Collective: in[s] = the value v[this rank] of rank s. New array of p values. */
int64_t *shard_ckpt_transpose(shard_comm *c, const int64_t *v);
/* Collective: the smallest pair (a, b) over the ranks, in lexicographic order, into *a, *b on every rank. */
void shard_ckpt_min_pair(shard_comm *c, int64_t *a, int64_t *b);
/* Collective: shard_comm_exchange_i64 once every rank knows that it fits one exchange; NULL with err set on
 * every rank when it does not. */
int64_t *shard_ckpt_exchange(shard_comm *c, const char *path, const char *what, const int64_t *send,
                             const size_t *count, size_t *n_recv, shard_error *err);
/* What a rank does with the records a round of shard_ckpt_exchange_rounds brings it (n records of w words). */
typedef void (*shard_ckpt_take_fn)(void *ctx, const int64_t *rec, size_t n);
/* Collective: records of w words sent in rounds in which no rank receives more than `budget` records. */
void shard_ckpt_exchange_rounds(shard_comm *c, const int64_t *send, const size_t *count, size_t w, size_t budget,
                                shard_ckpt_take_fn take, void *ctx);

#endif
