/* Xsum over the ranks: the collective half of exact sums (the accumulator is src/core/xsum.c, shard/xsum.h).
 *
 * The reduction is a plain MPI_Allreduce with MPI_SUM on the accumulators' int64 words, not a user MPI_Op:
 * after shard_xsum_normalise every limb below the top one is a digit in [-2^31, 2^31), so the sum over P ranks
 * stays within P * 2^31 < 2^63 for any P < 2^32 and is exact; the result is a valid (unnormalised) carry-save
 * accumulator with the exact global sum, and the NaN/inf counters add up as they should.  A built-in operation
 * needs no MPI_Op_create/free pair to own and stays on the library's tuned (and offloadable) reduction paths; the
 * price is sending all 576 bytes of each accumulator where a user operation could send fewer. */
#include "comm_impl.h"
#include "shard/xsum.h"

#include <limits.h>

/* Words per MPI call, so that the int count never overflows (n * SHARD_XSUM_WORDS can exceed INT_MAX). */
#define SHARD_XSUM_CHUNK (INT_MAX / SHARD_XSUM_WORDS)

void shard_comm_xsum(shard_comm *c, shard_xsum *acc, int n)
{
    for (int i = 0; i < n; i++)
        shard_xsum_normalise(&acc[i]);
    for (int i = 0; i < n; i += SHARD_XSUM_CHUNK) {
        int m = n - i < SHARD_XSUM_CHUNK ? n - i : SHARD_XSUM_CHUNK;
        SHARD_MPI(c, MPI_Allreduce(MPI_IN_PLACE, &acc[i], m * SHARD_XSUM_WORDS, MPI_INT64_T, MPI_SUM, c->world));
    }
    for (int i = 0; i < n; i++)
        shard_xsum_normalise(&acc[i]); /* also resets the summed `pending` words */
}

void shard_comm_sum_exact(shard_comm *c, const double *terms, size_t count, int n, double *out)
{
    enum { group = 8 };
    shard_xsum acc[group];
    for (int k0 = 0; k0 < n; k0 += group) {
        int m = n - k0 < group ? n - k0 : group;
        for (int k = 0; k < m; k++) {
            shard_xsum_init(&acc[k]);
            shard_xsum_add_n(&acc[k], terms + k0 + k, count, (size_t)n);
        }
        shard_comm_xsum(c, acc, m);
        for (int k = 0; k < m; k++)
            out[k0 + k] = shard_xsum_round(&acc[k]);
    }
}
