/* Fragments across ranks: connected components of the unbroken bond graph, their properties and statistics
 * (definitions in fragment.h).
 *
 * Labelling: each rank labels its owned particles by a union-find over their unbroken bonds between owned
 * particles (label = the smallest global id of the local component), then the labels go round the bond
 * ghosts' halos until no component's label falls anywhere (one allreduce per round; the rounds are at most the
 * number of rank boundaries a fragment crosses, plus one).  The label of a fragment is then the smallest global
 * id among its particles, whatever the partition.
 * Properties: per fragment, exact sums (xsum.h) of m, m x, m v and m |v|^2 over its particles, with count and
 * bounding box.  A fragment whose particles are all on one rank (its local part has no unbroken bond to a
 * ghost) is summed and rounded there; the others send their accumulators to a home rank (label mod ranks),
 * which merges them exactly.  Every figure is rounded once from the exact sum, so it has the same bits on any
 * number of ranks; each fragment is held by exactly one rank.
 * Statistics (fragment.h): from reductions of the held fragments, exact where they sum doubles.
 */
#ifndef SHARD_FRAGMENT_COMM_H
#define SHARD_FRAGMENT_COMM_H

#ifndef SHARD_LAYER_DECOMPOSITION
#error                                                                                                                 \
    "shard/fragment_comm.h is a decomposition header: only its layer and the layers above it (io and the driver) include it"
#endif

#include "shard/comm.h"
#include "shard/fragment.h"
#include "shard/halo.h"

/* Collective.  p: the rank's particles (owned, then bond ghosts); bonds: the unbroken bonds of the owned
 * particles; halos[0..n_halos): the bond-ghost halos (NULL entries skipped); selected[b]: body b takes part
 * (bodies that can break); m0: the histogram's unit mass; fit_min: the fit's smallest fragment (particles).
 * Fills label[i] for every owned particle (-1 outside the selected bodies; label needs room for the owned
 * particles and bond ghosts), *frags with the fragments this rank holds (sorted by label; caller frees) and
 * *st with the statistics (the same on every rank). */
void shard_fragments_find(shard_comm *c, const shard_particles *p, const shard_csr *bonds, shard_halo *const *halos,
                          int n_halos, const uint8_t *selected, double m0, long fit_min, int64_t *label,
                          shard_fragment **frags, size_t *n_frags, shard_fragment_stats *st);

#endif
