/* Comm: the ranks, and every collective decision Shard takes (decomposition/comm.c).
 *
 * This header is the only window the rest of the code has on MPI, and it does not include mpi.h: physics and
 * I/O code receive arrays, the driver calls these functions between phases.  Errors follow two rules
 * (docs/architecture.md): a fault every rank sees at the same call ends the run with shard_fail_all (rank 0
 * prints, all ranks exit with the same code); a fault only one rank sees either becomes global through
 * shard_comm_agree / shard_comm_any_error first, or ends the run with shard_fail_one (MPI_Abort).
 */
#ifndef SHARD_COMM_H
#define SHARD_COMM_H

#ifndef SHARD_LAYER_DECOMPOSITION
#error "shard/comm.h is a decomposition header: only its layer and the layers above it (io and the driver) include it"
#endif

#include "shard/base.h"

typedef struct shard_comm shard_comm;

/* Initialises MPI (MPI_ERRORS_RETURN on the world communicator) and installs the fatal handler of base.h:
 * an unrecoverable local fault (out of memory) prints "shard: error on rank N: ..." and aborts every rank with
 * its code. Collective. */
shard_comm *shard_comm_init(int *argc, char ***argv);
/* Finalises MPI; NULL-safe, nulls the pointer. Collective. */
void shard_comm_finalize(shard_comm **c);

int shard_comm_rank(const shard_comm *c);
int shard_comm_size(const shard_comm *c);
double shard_wtime(void);
/* "Open MPI v4.1.4, ..." for --version. Local. */
void shard_comm_library_version(char *buf, size_t len);

/* Collective: rank 0 prints "shard: error: <msg>" once; every rank finalises and exits with `code`. */
_Noreturn void shard_fail_all(shard_comm *c, int code, const char *msg);
/* Local: prints "shard: error on rank N: <msg> [file:line]" and aborts every rank with `code`. */
_Noreturn void shard_fail_one_at(shard_comm *c, int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define shard_fail_one(c, code, ...) shard_fail_one_at((c), (code), __FILE__, __LINE__, __VA_ARGS__)

/* Collective: every rank gets root's error record; returns its code (0 = no error). */
int shard_comm_agree(shard_comm *c, shard_error *err, int root);
/* Collective: if any rank has err->code != 0, every rank gets the record of the lowest such rank. */
int shard_comm_any_error(shard_comm *c, shard_error *err);

/* Collective: the lowest rank whose `failed` is nonzero, or -1 when none is. */
int shard_comm_first_failure(shard_comm *c, int failed);

/* Collective broadcasts and reductions.  shard_comm_sum of doubles rounds in an order that depends on the rank
 * count: use it only for figures that may differ in the last bits (timings); sums that are printed or change
 * state use the exact sums below (shard_comm_xsum), min / max or integer sums, which are exact. */
void shard_comm_bcast(shard_comm *c, void *buf, size_t bytes, int root);
double shard_comm_max(shard_comm *c, double v);
void shard_comm_sum(shard_comm *c, double *v, int n);
void shard_comm_max_ints(shard_comm *c, int *v, int n);
void shard_comm_max_doubles(shard_comm *c, double *v, int n);
uint64_t shard_comm_sum_u64(shard_comm *c, uint64_t v);
int64_t shard_comm_sum_i64(shard_comm *c, int64_t v);
/* Rank 0 receives every rank's n values (size * n doubles in rank order); other ranks may pass NULL. */
void shard_comm_gather(shard_comm *c, const double *local, int n, double *all);
void shard_comm_barrier(shard_comm *c);
/* Collective: the sum of v over the ranks below this one (0 on rank 0): where this rank's rows start in a
 * dataset written in rank order. */
int64_t shard_comm_exscan_i64(shard_comm *c, int64_t v);

/* Collective: v[0..n) becomes the sum over the ranks (exact: integers). */
void shard_comm_sum_i64s(shard_comm *c, int64_t *v, size_t n);
/* Collective: all[r] = rank r's v (size entries). */
void shard_comm_allgather_i64(shard_comm *c, int64_t v, int64_t *all);
/* Collective: every rank's `bytes` bytes at `mine`, concatenated in rank order in a new array (caller frees;
 * never NULL) of *total bytes. */
void *shard_comm_allgather_bytes(shard_comm *c, const void *mine, size_t bytes, size_t *total);
/* Local: MPI_Pcontrol(on): 0 asks a PMPI profiling tool to stop counting, 1 to count again.  Shard brackets its
 * start-up distribution with it, so that a profile (and the halo-bytes test's own count) holds the run's
 * traffic, which the end report gives apart from the start-up's. */
void shard_comm_profile(shard_comm *c, int on);

/* Collective: every rank sends count[r] values of send (rank after rank, in rank order) to rank r, and
 * receives what every rank sent it, in rank order, in a new array (caller frees) of *n_recv values. */
int64_t *shard_comm_exchange_i64(shard_comm *c, const int64_t *send, const size_t *count, size_t *n_recv);

/* The MPI communicator behind c, as an opaque pointer to an MPI_Comm.  Only decomposition/ and io/ (parallel
 * HDF5 opens files on a communicator) may cast it; everything else stays MPI-free. Local. */
const void *shard_comm_mpi(const shard_comm *c);

/* Exact sums (decomposition/xsum_comm.c): every rank adds its terms into shard_xsum accumulators (shard/xsum.h,
 * no MPI), one collective call combines them, and each total is rounded once, so its bits do not depend on the
 * rank count or on which rank owned which term.  The typedef repeats shard/xsum.h's (C11 allows it), so that this
 * header needs only that one name. */
typedef struct shard_xsum shard_xsum;
/* Collective: acc[0..n-1] becomes, on every rank, the exact sum of all ranks' acc[0..n-1] (normalised). */
void shard_comm_xsum(shard_comm *c, shard_xsum *acc, int n);
/* Collective: out[k] = sum over all ranks and i < count (this rank's count) of terms[i * n + k], k < n, rounded
 * once to the nearest double (ties to even); the same bits on every rank and for every rank count.  One
 * reduction per 8 components, no allocation. */
void shard_comm_sum_exact(shard_comm *c, const double *terms, size_t count, int n, double *out);

#endif
