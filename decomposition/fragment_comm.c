/* Fragments across ranks (see fragment_comm.h). */
#include "shard/fragment_comm.h"

#include "shard/sorted.h"
#include "shard/xsum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The exact sums of one fragment's part on a rank: m, m x (3), m v (3), m |v|^2. */
enum { FR_M = 0, FR_MX, FR_MV = FR_MX + 3, FR_MV2 = FR_MV + 3, FR_N_ACC };
typedef struct shard_fragment_part {
    int64_t label, count;
    double lo[3], hi[3];
    shard_xsum acc[FR_N_ACC];
} shard_fragment_part;

/* int64 words of a part on the wire: label, count, box (6 doubles' bits), the accumulators. */
#define FR_WORDS (2 + 6 + FR_N_ACC * SHARD_XSUM_WORDS)

static void shard_fragment_part_init(shard_fragment_part *f, int64_t label)
{
    f->label = label;
    f->count = 0;
    for (int k = 0; k < 3; k++)
        f->lo[k] = INFINITY, f->hi[k] = -INFINITY;
    for (int k = 0; k < FR_N_ACC; k++)
        shard_xsum_init(&f->acc[k]);
}

static void shard_fragment_part_add(shard_fragment_part *f, const shard_particles *p, size_t i)
{
    double m = p->mass[i];
    const double *x = p->x + 3 * i, *v = p->v + 3 * i;
    f->count++;
    shard_xsum_add(&f->acc[FR_M], m);
    for (int k = 0; k < 3; k++) {
        shard_xsum_add(&f->acc[FR_MX + k], m * x[k]);
        shard_xsum_add(&f->acc[FR_MV + k], m * v[k]);
        f->lo[k] = fmin(f->lo[k], x[k]);
        f->hi[k] = fmax(f->hi[k], x[k]);
    }
    shard_xsum_add(&f->acc[FR_MV2], m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
}

static void shard_fragment_part_merge(shard_fragment_part *f, const shard_fragment_part *g)
{
    f->count += g->count;
    for (int k = 0; k < 3; k++)
        f->lo[k] = fmin(f->lo[k], g->lo[k]), f->hi[k] = fmax(f->hi[k], g->hi[k]);
    for (int k = 0; k < FR_N_ACC; k++)
        shard_xsum_merge(&f->acc[k], &g->acc[k]);
}

/* The fragment of a complete set of sums, each figure rounded once. */
static shard_fragment shard_fragment_of(const shard_fragment_part *f)
{
    shard_fragment r = {.label = f->label, .count = f->count};
    r.mass = shard_xsum_round(&f->acc[FR_M]);
    double p2 = 0.0;
    for (int k = 0; k < 3; k++) {
        r.center[k] = shard_xsum_round(&f->acc[FR_MX + k]) / r.mass;
        r.momentum[k] = shard_xsum_round(&f->acc[FR_MV + k]);
        p2 += r.momentum[k] * r.momentum[k];
        r.box_min[k] = f->lo[k], r.box_max[k] = f->hi[k];
    }
    double ke = 0.5 * shard_xsum_round(&f->acc[FR_MV2]);
    r.ke_translation = 0.5 * p2 / r.mass;
    r.ke_internal = fmax(0.0, ke - r.ke_translation);
    return r;
}

static void shard_fragment_pack(const shard_fragment_part *f, int64_t *w)
{
    w[0] = f->label, w[1] = f->count;
    memcpy(w + 2, f->lo, 3 * sizeof(double));
    memcpy(w + 5, f->hi, 3 * sizeof(double));
    for (int k = 0; k < FR_N_ACC; k++) {
        shard_xsum a = f->acc[k];
        shard_xsum_normalise(&a);
        memcpy(w + 8 + k * SHARD_XSUM_WORDS, &a, sizeof a);
    }
}

static void shard_fragment_unpack(const int64_t *w, shard_fragment_part *f)
{
    f->label = w[0], f->count = w[1];
    memcpy(f->lo, w + 2, 3 * sizeof(double));
    memcpy(f->hi, w + 5, 3 * sizeof(double));
    for (int k = 0; k < FR_N_ACC; k++)
        memcpy(&f->acc[k], w + 8 + k * SHARD_XSUM_WORDS, sizeof f->acc[k]);
}

/* Sort keys: owned particles by (label, index). */
typedef struct shard_fragment_key {
    int64_t label;
    int32_t i;
} shard_fragment_key;

static int shard_fragment_key_cmp(const void *a, const void *b)
{
    const shard_fragment_key *x = a, *y = b;
    if (x->label != y->label)
        return (x->label > y->label) - (x->label < y->label);
    return (x->i > y->i) - (x->i < y->i);
}

/* Labels of every owned particle: local union-find, then rounds over the halos until none falls. */
static void shard_fragments_label(shard_comm *c, const shard_particles *p, const shard_csr *bonds,
                                  shard_halo *const *halos, int n_halos, int64_t *label)
{
    size_t n = p->n_owned, nl = p->n_owned + p->n_bond_ghost;
    int32_t *root = shard_malloc((n + 1) * sizeof *root);
    double *wire = shard_malloc((nl + 1) * sizeof *wire);
    shard_fragments_local(p, bonds, root, label);
    for (;;) {
        /* global ids stay below 2^53 (at most 2^31 particles start), so a double carries a label exactly */
        for (size_t i = 0; i < n; i++)
            wire[i] = (double)label[i];
        for (int h = 0; h < n_halos; h++)
            if (halos[h]) {
                shard_halo_field f = shard_halo_field_of(halos[h], wire, 1);
                shard_halo_forward(halos[h], 1, &f);
            }
        for (size_t j = n; j < nl; j++)
            label[j] = (int64_t)wire[j];
        int fell = shard_fragments_propagate(p, bonds, root, label) > 0;
        shard_comm_max_ints(c, &fell, 1);
        if (!fell)
            break;
    }
    free(wire), free(root);
}

/* Collective: the statistics of the fragments every rank holds (out[0..n_out) here). */
static void shard_fragments_stats(shard_comm *c, const shard_fragment *out, size_t n_out, double m0, long fit_min,
                                  shard_fragment_stats *st)
{
    memset(st, 0, sizeof *st);
    st->m0 = m0;
    st->n_fragments = shard_comm_sum_i64(c, (int64_t)n_out);
    double big = -INFINITY;
    for (size_t q = 0; q < n_out; q++)
        big = fmax(big, out[q].mass);
    st->largest_mass = shard_comm_max(c, big);
    double lab = -INFINITY; /* the smallest label among the largest: a maximum of -label */
    for (size_t q = 0; q < n_out; q++)
        if (out[q].mass == st->largest_mass)
            lab = fmax(lab, -(double)out[q].label);
    st->largest_label = st->n_fragments > 0 ? (int64_t)(-shard_comm_max(c, lab)) : -1;
    /* histogram, total mass and the fit's sum: exact sums of per-fragment terms */
    enum { T_TOTAL = 0, T_LOG, T_FIT, T_BINS };
    int nt = T_BINS + 2 * SHARD_FRAGMENT_BINS;
    double *terms = shard_calloc((n_out + 1) * (size_t)nt, sizeof *terms);
    st->fit_min_mass = ((double)fit_min - 0.5) * m0;
    for (size_t q = 0; q < n_out; q++) {
        double *t = terms + q * (size_t)nt;
        t[T_TOTAL] = out[q].mass;
        if (out[q].count >= fit_min && out[q].label != st->largest_label) {
            t[T_LOG] = log(out[q].mass / st->fit_min_mass);
            t[T_FIT] = 1.0;
        }
        int k = shard_fragment_bin(out[q].mass, m0);
        t[T_BINS + k] = 1.0;
        t[T_BINS + SHARD_FRAGMENT_BINS + k] = out[q].mass;
    }
    double *sum = shard_malloc((size_t)nt * sizeof *sum);
    shard_comm_sum_exact(c, terms, n_out, nt, sum);
    free(terms);
    st->total_mass = sum[T_TOTAL];
    st->n_fit = (int64_t)sum[T_FIT];
    shard_fragment_fit(st->n_fit, sum[T_LOG], &st->tau, &st->tau_error);
    st->n_bins = 0;
    for (int k = 0; k < SHARD_FRAGMENT_BINS; k++) {
        st->bin_count[k] = (int64_t)sum[T_BINS + k];
        st->bin_mass[k] = sum[T_BINS + SHARD_FRAGMENT_BINS + k];
        if (st->bin_count[k] > 0)
            st->n_bins = k + 1;
    }
    free(sum);
}

void shard_fragments_find(shard_comm *c, const shard_particles *p, const shard_csr *bonds, shard_halo *const *halos,
                          int n_halos, const uint8_t *selected, double m0, long fit_min, int64_t *label,
                          shard_fragment **frags, size_t *n_frags, shard_fragment_stats *st)
{
    size_t n = p->n_owned;
    int size = shard_comm_size(c);
    shard_fragments_label(c, p, bonds, halos, n_halos, label);

    /* The selected owned particles by label; a group whose members have no unbroken bond to a ghost is a
     * whole fragment. */
    shard_fragment_key *key = shard_malloc((n + 1) * sizeof *key);
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        if (!selected[p->body[i]]) {
            label[i] = -1;
            continue;
        }
        key[nk++] = (shard_fragment_key){label[i], (int32_t)i};
    }
    if (nk > 1)
        qsort(key, nk, sizeof *key, shard_fragment_key_cmp);
    shard_fragment *out = NULL;
    size_t n_out = 0, cap_out = 0;
    int64_t *send = NULL;
    size_t *count = shard_calloc((size_t)size + 1, sizeof *count);
    size_t n_send = 0, cap_send = 0;
    /* parts bound elsewhere, grouped by home rank afterwards: first collected with their home */
    typedef struct {
        int home;
        size_t at;
    } shard_fragment_away;
    shard_fragment_away *away = NULL;
    size_t n_away = 0, cap_away = 0;
    shard_fragment_part *part = shard_malloc(sizeof *part);
    for (size_t a = 0; a < nk;) {
        size_t b = a;
        int spans = 0;
        shard_fragment_part_init(part, key[a].label);
        while (b < nk && key[b].label == key[a].label) {
            size_t i = (size_t)key[b].i;
            shard_fragment_part_add(part, p, i);
            for (int64_t e = bonds->start[i]; e < bonds->start[i + 1] && !spans; e++)
                spans = (size_t)bonds->idx[e] >= n;
            b++;
        }
        if (!spans) {
            shard_reserve((void **)&out, &cap_out, n_out + 1, sizeof *out);
            out[n_out++] = shard_fragment_of(part);
        } else {
            shard_reserve((void **)&send, &cap_send, (n_send + 1) * FR_WORDS, sizeof *send);
            shard_fragment_pack(part, send + n_send * FR_WORDS);
            shard_reserve((void **)&away, &cap_away, n_away + 1, sizeof *away);
            away[n_away++] = (shard_fragment_away){(int)(part->label % size), n_send};
            n_send++;
        }
        a = b;
    }
    free(key);
    /* Parts in home-rank order for the exchange (a counting sort: one pass to count, one to place). */
    int64_t *buf = shard_malloc((n_send * FR_WORDS + 1) * sizeof *buf);
    size_t *place = shard_calloc((size_t)size + 1, sizeof *place);
    for (size_t q = 0; q < n_away; q++)
        count[away[q].home] += FR_WORDS;
    for (int r = 0; r < size; r++)
        place[r + 1] = place[r] + count[r];
    for (size_t q = 0; q < n_away; q++) {
        memcpy(buf + place[away[q].home], send + away[q].at * FR_WORDS, FR_WORDS * sizeof *buf);
        place[away[q].home] += FR_WORDS;
    }
    free(send), free(away), free(place);
    size_t n_recv = 0;
    int64_t *recv = shard_comm_exchange_i64(c, buf, count, &n_recv);
    free(buf), free(count);
    /* The home merges the parts of each label (exact: the order does not matter). */
    size_t np = n_recv / FR_WORDS;
    int64_t *order = shard_malloc((2 * np + 1) * sizeof *order);
    for (size_t q = 0; q < np; q++)
        order[2 * q] = recv[q * FR_WORDS], order[2 * q + 1] = (int64_t)q;
    if (np > 1)
        qsort(order, np, 2 * sizeof *order, shard_sorted_cmp_i64); /* by label alone */
    shard_fragment_part *other = shard_malloc(sizeof *other);
    for (size_t a = 0; a < np;) {
        shard_fragment_unpack(recv + (size_t)order[2 * a + 1] * FR_WORDS, part);
        size_t b = a + 1;
        while (b < np && order[2 * b] == order[2 * a]) {
            shard_fragment_unpack(recv + (size_t)order[2 * b + 1] * FR_WORDS, other);
            shard_fragment_part_merge(part, other);
            b++;
        }
        shard_reserve((void **)&out, &cap_out, n_out + 1, sizeof *out);
        out[n_out++] = shard_fragment_of(part);
        a = b;
    }
    free(order), free(recv), free(part), free(other);
    if (n_out > 1) /* (out is NULL when this rank holds none); by label, the first member */
        qsort(out, n_out, sizeof *out, shard_sorted_cmp_i64);
    *frags = out;
    *n_frags = n_out;
    shard_fragments_stats(c, out, n_out, m0, fit_min, st);
}
