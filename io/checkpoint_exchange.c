/* Checkpoint exchanges: how the parallel reader (checkpoint_range.c) cuts a file's rows and the global ids among
 * the ranks, and the exchanges it sends rows to their owners with, each bounded: in the words one exchange
 * carries (refused with an agreed message beyond), and in the records a rank receives in one round (so that a
 * corrupt file cannot make one rank hold more than its share).
 */
#include "checkpoint_impl.h"

#include <stdlib.h>
#include <string.h>

/* The most words one exchange may send from or deliver to a rank: MPI counts are int. */
#define SHARD_CKPT_MAX_WORDS ((uint64_t)INT32_MAX)

/* floor(n * r / p) without forming n * r (which overflows for large n): the first item of part r when n items
 * are cut into p parts.  It splits both the file's rows among the readers and the global ids among their owners
 * (the same cut: a rank reads as many rows as it owns ids). */
int64_t shard_ckpt_split(int64_t n, int r, int p)
{
    int64_t q = n / p, m = n % p; /* m * r < p^2 < 2^62 */
    return q * r + m * r / p;
}

/* The part of the cut above that holds item g (0 <= g < n): the largest r with split(n, r, p) <= g, which is
 * never an empty part.  The estimate in doubles is off by at most one part; the exact cut settles it. */
int shard_ckpt_owner(int64_t g, int64_t n, int p)
{
    int r = (int)((double)g / (double)n * (double)p);
    r = r < 0 ? 0 : r >= p ? p - 1 : r;
    while (r + 1 < p && shard_ckpt_split(n, r + 1, p) <= g)
        r++;
    while (r > 0 && shard_ckpt_split(n, r, p) > g)
        r--;
    return r;
}

size_t shard_ckpt_words(size_t bytes) { return (bytes + 7) / 8; }

/* Offsets of the destinations' groups in a send buffer: at[r] = count[0] + ... + count[r - 1]. New array. */
size_t *shard_ckpt_offsets(const size_t *count, int p)
{
    size_t *at = shard_calloc((size_t)p + 1, sizeof *at);
    for (int r = 0; r < p; r++)
        at[r + 1] = at[r] + count[r];
    return at;
}

/* Collective: in[s] = the value v[this rank] of rank s (v has one value per rank). New array of p values. */
int64_t *shard_ckpt_transpose(shard_comm *c, const int64_t *v)
{
    int p = shard_comm_size(c);
    size_t *one = shard_malloc(((size_t)p + 1) * sizeof *one), n = 0;
    for (int r = 0; r < p; r++)
        one[r] = 1;
    int64_t *in = shard_comm_exchange_i64(c, v, one, &n);
    free(one);
    return in;
}

/* Collective: the smallest pair (a, b) over the ranks, in lexicographic order (INT64_MAX, INT64_MAX: none),
 * into *a, *b on every rank. */
void shard_ckpt_min_pair(shard_comm *c, int64_t *a, int64_t *b)
{
    int p = shard_comm_size(c);
    int64_t *v = shard_malloc(((size_t)p + 1) * 2 * sizeof *v);
    size_t *two = shard_malloc(((size_t)p + 1) * sizeof *two), n = 0;
    for (int r = 0; r < p; r++)
        v[2 * r] = *a, v[2 * r + 1] = *b, two[r] = 2;
    int64_t *all = shard_comm_exchange_i64(c, v, two, &n);
    for (size_t s = 0; s + 1 < n; s += 2)
        if (all[s] < *a || (all[s] == *a && all[s + 1] < *b))
            *a = all[s], *b = all[s + 1];
    free(v), free(two), free(all);
}

/* Collective: shard_comm_exchange_i64 (count[r] words to rank r) once every rank knows that no rank sends or
 * receives more words than one exchange carries (beyond that it would abort): a checkpoint too large for this
 * rank count is refused with an agreed message instead.  NULL with err set on every rank when refused. */
int64_t *shard_ckpt_exchange(shard_comm *c, const char *path, const char *what, const int64_t *send,
                             const size_t *count, size_t *n_recv, shard_error *err)
{
    int p = shard_comm_size(c);
    int64_t *cw = shard_malloc(((size_t)p + 1) * sizeof *cw);
    uint64_t out = 0, got = 0;
    for (int r = 0; r < p; r++)
        cw[r] = (int64_t)count[r], out += count[r];
    int64_t *in = shard_ckpt_transpose(c, cw);
    for (int r = 0; r < p; r++)
        got += (uint64_t)in[r];
    free(cw), free(in);
    if (out > SHARD_CKPT_MAX_WORDS || got > SHARD_CKPT_MAX_WORDS)
        shard_error_set(err, SHARD_EXIT_INPUT,
                        "%s: %s: rank %d would exchange %llu words at once, more than one "
                        "exchange carries (2^31 - 1): read it on more ranks",
                        path, what, shard_comm_rank(c), (unsigned long long)(out > got ? out : got));
    *n_recv = 0;
    if (shard_comm_any_error(c, err))
        return NULL;
    return shard_comm_exchange_i64(c, send, count, n_recv);
}

/* Collective: sends records of w words (send: grouped by destination, count[r] records to rank r) in rounds in
 * which no rank receives more than `budget` records, nor sends more than one exchange carries, and hands each
 * round's arrivals to take(ctx, ...).  Why rounds: the checks that send an id to its owner (a section's ids, a
 * bond's reverse) send a valid file's owner about its share, but a corrupt file's owner anything up to every
 * entry of the file (every id the same); the rounds keep the memory of the check O(budget) whatever the file.
 * An owner asked for more than its budget grants it to the senders in rank order; a valid file takes one round. */
void shard_ckpt_exchange_rounds(shard_comm *c, const int64_t *send, const size_t *count, size_t w, size_t budget,
                                shard_ckpt_take_fn take, void *ctx)
{
    int p = shard_comm_size(c);
    size_t cap = (size_t)(SHARD_CKPT_MAX_WORDS / 2) / w; /* records a rank may send or receive in a round */
    budget = budget < 1 ? 1 : budget > cap ? cap : budget;
    size_t *at = shard_ckpt_offsets(count, p), *sent = shard_calloc((size_t)p + 1, sizeof *sent);
    size_t *words = shard_calloc((size_t)p + 1, sizeof *words);
    int64_t *ask = shard_calloc((size_t)p + 1, sizeof *ask);
    int64_t *buf = shard_malloc((cap < at[p] ? cap : at[p]) * w * sizeof *buf + sizeof *buf);
    for (;;) {
        size_t left = cap;
        for (int r = 0; r < p; r++) {
            size_t want = count[r] - sent[r];
            ask[r] = (int64_t)(want < left ? want : left);
            left -= (size_t)ask[r];
        }
        int64_t *in = shard_ckpt_transpose(c, ask); /* in[s]: what rank s asks to send here */
        int64_t asked = 0;
        for (int s = 0; s < p; s++)
            asked += in[s];
        int over = asked > (int64_t)budget;
        shard_comm_max_ints(c, &over, 1);
        if (over) { /* every rank answers: the grants in rank order of the senders, within the budget */
            int64_t room = (int64_t)budget;
            for (int s = 0; s < p; s++) {
                in[s] = in[s] < room ? in[s] : room;
                room -= in[s];
            }
            int64_t *grant = shard_ckpt_transpose(c, in);
            memcpy(ask, grant, (size_t)p * sizeof *ask);
            free(grant);
        }
        free(in);
        size_t fill = 0;
        for (int r = 0; r < p; r++) {
            size_t m = (size_t)ask[r] * w;
            memcpy(buf + fill, send + (at[r] + sent[r]) * w, m * sizeof *buf);
            words[r] = m;
            fill += m;
            sent[r] += (size_t)ask[r];
        }
        size_t n_recv = 0;
        int64_t *recv = shard_comm_exchange_i64(c, buf, words, &n_recv);
        take(ctx, recv, n_recv / w);
        free(recv);
        int64_t rest = 0;
        for (int r = 0; r < p; r++)
            rest += (int64_t)(count[r] - sent[r]);
        if (shard_comm_sum_i64(c, rest) == 0)
            break;
    }
    free(at), free(sent), free(words), free(ask), free(buf);
}
