/* Fragment: the local part of the fragment analysis (see fragment.h). */
#include "shard/fragment.h"

#include <math.h>

static int32_t shard_fragment_root(int32_t *root, int32_t i)
{
    while (root[i] != i) {
        root[i] = root[root[i]]; /* path halving */
        i = root[i];
    }
    return i;
}

void shard_fragments_local(const shard_particles *p, const shard_csr *bonds, int32_t *root, int64_t *label)
{
    size_t n = p->n_owned;
    for (size_t i = 0; i < n; i++)
        root[i] = (int32_t)i;
    for (size_t i = 0; i < n; i++)
        for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
            size_t j = (size_t)bonds->idx[b];
            if (j >= n || j < i)
                continue;
            int32_t ri = shard_fragment_root(root, (int32_t)i), rj = shard_fragment_root(root, (int32_t)j);
            if (ri != rj) { /* the smaller index becomes the representative: the result is the same either way */
                if (ri < rj)
                    root[rj] = ri;
                else
                    root[ri] = rj;
            }
        }
    for (size_t i = 0; i < n; i++)
        root[i] = shard_fragment_root(root, (int32_t)i);
    /* the component's smallest global id, gathered at its representative */
    for (size_t i = 0; i < n; i++)
        label[i] = p->gid[i];
    for (size_t i = 0; i < n; i++)
        if (p->gid[i] < label[root[i]])
            label[root[i]] = p->gid[i];
    for (size_t i = 0; i < n; i++)
        label[i] = label[root[i]];
}

size_t shard_fragments_propagate(const shard_particles *p, const shard_csr *bonds, const int32_t *root, int64_t *label)
{
    size_t n = p->n_owned, fell = 0;
    /* Every member holds its component's label, so the representative's entry is the component's: lower it
     * from the ghost partners of every member, then hand it to every member. */
    for (size_t i = 0; i < n; i++)
        for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
            size_t j = (size_t)bonds->idx[b];
            if (j >= n && label[j] < label[root[i]]) {
                label[root[i]] = label[j];
                fell++;
            }
        }
    for (size_t i = 0; i < n; i++)
        label[i] = label[root[i]];
    return fell;
}

int shard_fragment_bin(double m, double m0)
{
    int e;
    frexp(m / m0 * (1.0 + 1e-9), &e); /* m / m0 = f 2^e, f in [0.5, 1): bin e - 1 */
    int k = e - 1;
    return k < 0 ? 0 : k >= SHARD_FRAGMENT_BINS ? SHARD_FRAGMENT_BINS - 1 : k;
}

void shard_fragment_fit(int64_t n, double sum_log, double *tau, double *err)
{
    if (n < 2 || !(sum_log > 0.0)) {
        *tau = *err = NAN;
        return;
    }
    *tau = 1.0 + (double)n / sum_log;
    *err = (*tau - 1.0) / sqrt((double)n);
}
