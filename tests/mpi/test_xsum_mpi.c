/* Exact global sums over the ranks (shard_comm_xsum, shard_comm_sum_exact): the same bits on any rank count.
 *
 * usage: mpiexec -n N test_xsum_mpi
 * ranks: 1 2 3 4 5 6 7 8
 * 10^5 terms come from a seeded, stateless generator (term i is a hash of i, so each rank makes only its own):
 * pairs of huge terms (up to 2^976) that cancel exactly, subnormals, and moderate terms of both signs.  They are
 * dealt to the ranks round-robin, in blocks, and by a hash of the index; each way, every rank adds its terms into
 * one accumulator, one collective call combines them, and the rounded total must have the bits rank 0 gets by
 * adding all terms into one accumulator alone, and the recorded bits below (which Python's math.fsum and an
 * exact fractions.Fraction sum of the same terms give: tests/mpi/test_xsum_mpi_reference.py).  The same
 * for 3-vectors through shard_comm_sum_exact.  A plain MPI_SUM of each rank's double partial sum is printed for
 * comparison, of all terms and of the moderate ones alone: it changes with the rank count and the dealing, and
 * is not checked.
 * Every rank exits 0 (pass) or 1 (fail). */
#include "shard/comm.h"
#include "shard/hash.h"
#include "shard/xsum.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NTERMS = 100000, NVEC = 33332 }; /* NVEC even: each vector component takes whole pairs */

/* Recorded totals (hex bits): all terms, and components 0, 1, 2 of the vectors, v[3j + k] = term(k NVEC + j). */
static const uint64_t recorded_total = 0xc1fbd8e30fb43140ull; /* -0x1.bd8e30fb4314p+32 */
static const uint64_t recorded_vec[3] = {0x41f760328fef1590ull, 0xc21bd50732284c16ull, 0x421004a91dfc2cf0ull};

static uint64_t mix(uint64_t z) { return shard_hash_mix(z); }

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* random sign and significand from r, exponent field in [emin, emin + span) */
static double make_double(uint64_t r, uint64_t emin, uint64_t span)
{
    uint64_t e = emin + mix(r) % span;
    return from_bits((r & 0x800fffffffffffffull) | e << 52);
}

/* Term i: pairs (2p, 2p + 1) share a kind; a quarter are +X, -X with X up to 2^976, an eighth subnormals. */
static double term(int64_t i)
{
    uint64_t h = mix(0x5eed0000ull + (uint64_t)(i / 2));
    uint64_t kind = h % 8, r = mix(h ^ (uint64_t)i);
    if (kind < 2) {
        double x = make_double(h, 1600, 400);
        return i % 2 ? -x : x;
    }
    if (kind == 2)
        return make_double(r, 0, 3);
    return make_double(r, 1023 - 30, 61);
}

typedef enum { DEAL_ROUND_ROBIN, DEAL_BLOCKS, DEAL_HASH, DEAL_COUNT } deal_kind;
static const char *const deal_names[DEAL_COUNT] = {"round-robin", "blocks", "hash"};

static int owner(deal_kind d, int64_t i, int64_t n, int size)
{
    switch (d) {
    case DEAL_ROUND_ROBIN:
        return (int)(i % size);
    case DEAL_BLOCKS:
        return (int)(i * size / n);
    default:
        return (int)(mix(0xdea1ull ^ (uint64_t)i) % (uint64_t)size);
    }
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int rank = shard_comm_rank(c), size = shard_comm_size(c), fail = 0;
    double *mine = malloc(NTERMS * sizeof *mine);

    /* rank 0 alone: every term, in index order, into one accumulator */
    uint64_t ref_total = 0, ref_vec[3] = {0, 0, 0};
    if (rank == 0) {
        shard_xsum all, vec[3];
        shard_xsum_init(&all);
        for (int k = 0; k < 3; k++)
            shard_xsum_init(&vec[k]);
        for (int64_t i = 0; i < NTERMS; i++) {
            shard_xsum_add(&all, term(i));
            if (i < 3 * NVEC)
                shard_xsum_add(&vec[i / NVEC], term(i));
        }
        ref_total = bits_of(shard_xsum_round(&all));
        for (int k = 0; k < 3; k++)
            ref_vec[k] = bits_of(shard_xsum_round(&vec[k]));
        printf("%d ranks: rank 0 alone: total %a = 0x%016" PRIx64 ", vectors 0x%016" PRIx64 " 0x%016" PRIx64
               " 0x%016" PRIx64 "\n",
               size, from_bits(ref_total), ref_total, ref_vec[0], ref_vec[1], ref_vec[2]);
        if (ref_total != recorded_total || memcmp(ref_vec, recorded_vec, sizeof ref_vec) != 0) {
            fprintf(stderr, "FAIL: rank 0's sums differ from the recorded bits 0x%016" PRIx64 "\n", recorded_total);
            fail = 1;
        }
    }

    for (int d = 0; d < DEAL_COUNT; d++) {
        size_t n = 0;
        for (int64_t i = 0; i < NTERMS; i++)
            if (owner((deal_kind)d, i, NTERMS, size) == rank)
                mine[n++] = term(i);
        shard_xsum acc;
        shard_xsum_init(&acc);
        shard_xsum_add_n(&acc, mine, n, 1);
        shard_comm_xsum(c, &acc, 1);
        uint64_t got = bits_of(shard_xsum_round(&acc));

        /* plain double sums: of all terms, and of the benign ones alone (between 2^-31 and 2^31 in magnitude) */
        double plain[2] = {0.0, 0.0};
        for (size_t i = 0; i < n; i++) {
            plain[0] += mine[i];
            if (fabs(mine[i]) >= 0x1p-31 && fabs(mine[i]) < 0x1p31)
                plain[1] += mine[i];
        }
        shard_comm_sum(c, plain, 2);

        if (got != recorded_total || (rank == 0 && got != ref_total)) {
            fprintf(stderr, "FAIL rank %d, %s: exact sum 0x%016" PRIx64 ", expected 0x%016" PRIx64 "\n", rank,
                    deal_names[d], got, recorded_total);
            fail = 1;
        }
        if (rank == 0)
            printf("%d ranks, %-11s: exact 0x%016" PRIx64 " (%.17g); plain MPI_SUM 0x%016" PRIx64
                   " (%.17g), of the benign terms 0x%016" PRIx64 " (%.17g)\n",
                   size, deal_names[d], got, from_bits(got), bits_of(plain[0]), plain[0], bits_of(plain[1]),
                   plain[1]);
    }

    /* 3-vectors dealt by hash, through shard_comm_sum_exact */
    size_t nv = 0;
    for (int64_t j = 0; j < NVEC; j++)
        if (owner(DEAL_HASH, j, NVEC, size) == rank) {
            for (int k = 0; k < 3; k++)
                mine[3 * nv + (size_t)k] = term(k * NVEC + j);
            nv++;
        }
    double out[3];
    shard_comm_sum_exact(c, mine, nv, 3, out);
    for (int k = 0; k < 3; k++)
        if (bits_of(out[k]) != recorded_vec[k] || (rank == 0 && bits_of(out[k]) != ref_vec[k])) {
            fprintf(stderr, "FAIL rank %d, vector component %d: 0x%016" PRIx64 ", expected 0x%016" PRIx64 "\n", rank,
                    k, bits_of(out[k]), recorded_vec[k]);
            fail = 1;
        }
    if (rank == 0)
        printf("%d ranks, vectors: %a %a %a\n", size, out[0], out[1], out[2]);

    free(mine);
    shard_comm_max_ints(c, &fail, 1);
    shard_comm_finalize(&c);
    return fail;
}
