/* Comm: MPI start-up and shutdown, the two error paths, and the reductions (see comm.h).  This and the other
 * files of decomposition/ are the only ones that call MPI. */
#include "comm_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The process's rank, for the fatal handler (one process is one rank; tests that build several runs in one
 * process build them on the same world). */
static int shard_comm_fatal_rank = -1;

/* A fault only this process sees and cannot recover from (out of memory): the rank and the message, then
 * MPI_Abort takes every rank down with the code (mpiexec exits with it). */
static void shard_comm_fatal(int code, const char *msg)
{
    fprintf(stderr, "shard: error on rank %d: %s\n", shard_comm_fatal_rank, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

shard_comm *shard_comm_init(int *argc, char ***argv)
{
    int ok = 0;
    if (MPI_Initialized(&ok) != MPI_SUCCESS || (!ok && MPI_Init(argc, argv) != MPI_SUCCESS)) {
        fprintf(stderr, "shard: error: MPI_Init failed\n");
        exit(SHARD_EXIT_INTERNAL);
    }
    shard_comm *c = shard_calloc(1, sizeof *c);
    c->world = MPI_COMM_WORLD;
    SHARD_MPI(c, MPI_Comm_set_errhandler(c->world, MPI_ERRORS_RETURN));
    SHARD_MPI(c, MPI_Comm_rank(c->world, &c->rank));
    SHARD_MPI(c, MPI_Comm_size(c->world, &c->size));
    shard_comm_fatal_rank = c->rank;
    shard_set_fatal_handler(shard_comm_fatal);
    return c;
}

void shard_comm_finalize(shard_comm **c)
{
    if (!c || !*c)
        return;
    int fin = 0;
    SHARD_MPI(*c, MPI_Finalized(&fin));
    if (!fin)
        SHARD_MPI(*c, MPI_Finalize());
    shard_set_fatal_handler(NULL);
    free(*c);
    *c = NULL;
}

int shard_comm_rank(const shard_comm *c) { return c->rank; }
int shard_comm_size(const shard_comm *c) { return c->size; }
double shard_wtime(void) { return MPI_Wtime(); }

void shard_comm_library_version(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING] = "MPI (unknown version)";
    int n = 0;
    MPI_Get_library_version(v, &n); /* informative only: a failure leaves the default text */
    char *nl = strchr(v, ',');
    if (nl)
        *nl = '\0';
    snprintf(buf, len, "%s", v);
}

void shard_fail_all(shard_comm *c, int code, const char *msg)
{
    if (c->rank == 0) {
        char text[2048];
        snprintf(text, sizeof text, "%s", msg);
        shard_text_printable(text);
        fprintf(stderr, "shard: error: %s\n", text);
        fflush(stderr);
    }
    fflush(stdout);
    /* Every rank is here (the fault is global); a barrier that failed could only be followed by an exit. */
    if (MPI_Barrier(c->world) == MPI_SUCCESS)
        MPI_Finalize();
    exit(code);
}

void shard_fail_one_at(shard_comm *c, int code, const char *file, int line, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    shard_text_printable(msg);
    fprintf(stderr, "shard: error on rank %d: %s [%s:%d]\n", c ? c->rank : -1, msg, file, line);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

void shard_mpi_check_at(shard_comm *c, int rc, const char *call, const char *file, int line)
{
    if (rc == MPI_SUCCESS)
        return;
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    shard_fail_one_at(c, SHARD_EXIT_INTERNAL, file, line, "%s failed: %s", call, s);
}

int shard_comm_agree(shard_comm *c, shard_error *err, int root)
{
    SHARD_MPI(c, MPI_Bcast(err, (int)sizeof *err, MPI_BYTE, root, c->world));
    return err->code;
}

int shard_comm_first_failure(shard_comm *c, int failed)
{
    int mine = failed ? c->rank : c->size, first = c->size;
    SHARD_MPI(c, MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->world));
    return first == c->size ? -1 : first;
}

int shard_comm_any_error(shard_comm *c, shard_error *err)
{
    int first = shard_comm_first_failure(c, err->code != 0);
    return first < 0 ? 0 : shard_comm_agree(c, err, first);
}

void shard_comm_bcast(shard_comm *c, void *buf, size_t bytes, int root)
{
    char *p = buf;
    while (bytes > 0) {
        int chunk = bytes > (1u << 30) ? (1 << 30) : (int)bytes;
        SHARD_MPI(c, MPI_Bcast(p, chunk, MPI_BYTE, root, c->world));
        p += chunk;
        bytes -= (size_t)chunk;
    }
}

double shard_comm_max(shard_comm *c, double v)
{
    double r = v;
    SHARD_MPI(c, MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, c->world));
    return r;
}

void shard_comm_sum(shard_comm *c, double *v, int n)
{
    SHARD_MPI(c, MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, c->world));
}

void shard_comm_max_ints(shard_comm *c, int *v, int n)
{
    SHARD_MPI(c, MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MAX, c->world));
}

void shard_comm_max_doubles(shard_comm *c, double *v, int n)
{
    SHARD_MPI(c, MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, c->world));
}

uint64_t shard_comm_sum_u64(shard_comm *c, uint64_t v)
{
    uint64_t r = v;
    SHARD_MPI(c, MPI_Allreduce(&v, &r, 1, MPI_UINT64_T, MPI_SUM, c->world));
    return r;
}

int64_t shard_comm_sum_i64(shard_comm *c, int64_t v)
{
    int64_t r = v;
    SHARD_MPI(c, MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_SUM, c->world));
    return r;
}

void shard_comm_gather(shard_comm *c, const double *local, int n, double *all)
{
    SHARD_MPI(c, MPI_Gather(local, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, c->world));
}

void shard_comm_barrier(shard_comm *c) { SHARD_MPI(c, MPI_Barrier(c->world)); }

int64_t shard_comm_exscan_i64(shard_comm *c, int64_t v)
{
    int64_t r = 0;
    SHARD_MPI(c, MPI_Exscan(&v, &r, 1, MPI_INT64_T, MPI_SUM, c->world));
    return c->rank == 0 ? 0 : r; /* MPI leaves rank 0's result undefined */
}

void shard_comm_sum_i64s(shard_comm *c, int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i += (size_t)INT32_MAX) {
        int m = n - i < (size_t)INT32_MAX ? (int)(n - i) : INT32_MAX;
        SHARD_MPI(c, MPI_Allreduce(MPI_IN_PLACE, v + i, m, MPI_INT64_T, MPI_SUM, c->world));
    }
}

void shard_comm_allgather_i64(shard_comm *c, int64_t v, int64_t *all)
{
    SHARD_MPI(c, MPI_Allgather(&v, 1, MPI_INT64_T, all, 1, MPI_INT64_T, c->world));
}

void *shard_comm_allgather_bytes(shard_comm *c, const void *mine, size_t bytes, size_t *total)
{
    int p = c->size;
    if (bytes > (size_t)INT32_MAX)
        shard_fail_one(c, SHARD_EXIT_INTERNAL, "allgather of %zu bytes exceeds MPI's int counts", bytes);
    int *counts = shard_malloc(((size_t)p + 1) * sizeof *counts);
    int *displ = shard_malloc(((size_t)p + 1) * sizeof *displ);
    int mine_count = (int)bytes;
    SHARD_MPI(c, MPI_Allgather(&mine_count, 1, MPI_INT, counts, 1, MPI_INT, c->world));
    int64_t sum = 0;
    for (int r = 0; r < p; r++) {
        displ[r] = (int)sum;
        sum += counts[r];
        if (sum > INT32_MAX)
            shard_fail_one(c, SHARD_EXIT_INTERNAL, "allgather of %lld bytes in all exceeds MPI's int counts",
                           (long long)sum);
    }
    char *all = shard_malloc((size_t)sum + 1);
    SHARD_MPI(c, MPI_Allgatherv(mine, mine_count, MPI_BYTE, all, counts, displ, MPI_BYTE, c->world));
    free(counts), free(displ);
    *total = (size_t)sum;
    return all;
}

void shard_comm_profile(shard_comm *c, int on) { SHARD_MPI(c, MPI_Pcontrol(on)); }

int64_t *shard_comm_exchange_i64(shard_comm *c, const int64_t *send, const size_t *count, size_t *n_recv)
{
    int p = c->size;
    int *sc = shard_calloc((size_t)p + 1, sizeof *sc), *rc = shard_calloc((size_t)p + 1, sizeof *rc);
    int *sd = shard_calloc((size_t)p + 1, sizeof *sd), *rd = shard_calloc((size_t)p + 1, sizeof *rd);
    for (int r = 0; r < p; r++) {
        if (count[r] > (size_t)INT32_MAX || (size_t)sd[r] + count[r] > (size_t)INT32_MAX)
            shard_fail_one(c, SHARD_EXIT_INTERNAL, "exchange of %zu values to rank %d exceeds MPI's int counts",
                           count[r], r);
        sc[r] = (int)count[r];
        sd[r + 1] = sd[r] + sc[r];
    }
    SHARD_MPI(c, MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, c->world));
    for (int r = 0; r < p; r++) {
        if ((int64_t)rd[r] + rc[r] > INT32_MAX)
            shard_fail_one(c, SHARD_EXIT_INTERNAL, "exchange receives more values than MPI's int counts allow");
        rd[r + 1] = rd[r] + rc[r];
    }
    int64_t *recv = shard_malloc(((size_t)rd[p] + 1) * sizeof *recv);
    SHARD_MPI(c, MPI_Alltoallv(send, sc, sd, MPI_INT64_T, recv, rc, rd, MPI_INT64_T, c->world));
    *n_recv = (size_t)rd[p];
    free(sc), free(rc), free(sd), free(rd);
    return recv;
}

const void *shard_comm_mpi(const shard_comm *c) { return &c->world; }

void shard_mpi_send_big(shard_comm *c, const void *buf, size_t bytes, int dest, int tag)
{
    const char *p = buf;
    do {
        int chunk = bytes > (1u << 30) ? (1 << 30) : (int)bytes;
        SHARD_MPI(c, MPI_Send(p, chunk, MPI_BYTE, dest, tag, c->world));
        p += chunk;
        bytes -= (size_t)chunk;
    } while (bytes > 0);
}

void shard_mpi_recv_big(shard_comm *c, void *buf, size_t bytes, int src, int tag)
{
    char *p = buf;
    do {
        int chunk = bytes > (1u << 30) ? (1 << 30) : (int)bytes;
        SHARD_MPI(c, MPI_Recv(p, chunk, MPI_BYTE, src, tag, c->world, MPI_STATUS_IGNORE));
        p += chunk;
        bytes -= (size_t)chunk;
    } while (bytes > 0);
}
