/* Fragment (core): one fragment of a breaking body, the statistics of a set of them, and the local part of
 * finding them.  The physics of breaking is in fracture.h; fragments across ranks in fragment_comm.h.
 *
 * Fragments: connected components of the unbroken bond graph.  The label of a fragment is the smallest global
 * id among its particles, so labels do not depend on the rank count.  Locally (this module) a union-find over
 * the owned particles and their unbroken bonds between owned particles; across ranks the labels propagate over
 * the bond ghosts until no label changes (decomposition/fragment_comm.c).  Per fragment: particle count, mass,
 * centre of mass, linear momentum, kinetic energy of the translation (|P|^2 / 2M) and about the centre (the
 * rest), bounding box; all sums exact, so every figure has the same bits on any rank count.
 *
 * Statistics: the number of fragments, the largest one's share of the mass, the mass histogram in octaves of
 * the smallest particle mass m_0 (bin k: m / m_0 in [2^k, 2^(k+1))) with its cumulative mass fraction, and the
 * exponent tau of n(m) ~ m^-tau by maximum likelihood (Clauset, Shalizi & Newman 2009, eq. 3.7, their
 * approximation for discrete sizes): tau = 1 + n / sum ln(m_i / ((k_min - 1/2) m_0)) over the n fragments of at
 * least k_min particles (scene key fragments.fit_min), the largest fragment left out (the residue of a body
 * that did not shatter is no member of the distribution), with standard error (tau - 1) / sqrt(n).
 */
#ifndef SHARD_FRAGMENT_H
#define SHARD_FRAGMENT_H

#include "shard/particles.h"

#include <stdint.h>

/* Labels of the owned particles [0, n_owned) from the union-find over their unbroken bonds (bonds: the
 * unbroken ones) to owned partners: label[i] = the smallest global id of i's local component; root[i] the
 * component's representative (an owned index).  Particles without bonds are their own fragment. Local. */
void shard_fragments_local(const shard_particles *p, const shard_csr *bonds, int32_t *root, int64_t *label);

/* One round of propagation: with label[j] of every bond ghost j current (the owners' labels), each local
 * component takes the smallest label among its members and their ghost partners; owned labels are rewritten.
 * Returns the number of components whose label fell (0: converged here). Local. */
size_t shard_fragments_propagate(const shard_particles *p, const shard_csr *bonds, const int32_t *root, int64_t *label);

/* One fragment, as written to the output (above). */
typedef struct shard_fragment {
    int64_t label;         /* smallest global id of its particles */
    int64_t count;         /* particles */
    double mass;           /* kg */
    double center[3];      /* m */
    double momentum[3];    /* kg m/s */
    double ke_translation; /* J: |P|^2 / (2 M) */
    double ke_internal;    /* J: the kinetic energy about the centre of mass */
    double box_min[3], box_max[3];
} shard_fragment;

/* The statistics of a fragment set (every figure from exact global sums: the same on every rank). */
#define SHARD_FRAGMENT_BINS 64
typedef struct shard_fragment_stats {
    int64_t n_fragments;
    double total_mass;   /* of the particles of breakable bodies */
    double largest_mass; /* the largest fragment's mass (smallest label on a tie) */
    int64_t largest_label;
    double m0;  /* smallest particle mass: the unit of the histogram */
    int n_bins; /* bins 0 .. n_bins - 1 hold every fragment */
    int64_t bin_count[SHARD_FRAGMENT_BINS];
    double bin_mass[SHARD_FRAGMENT_BINS];
    double tau, tau_error; /* NaN when fewer than 2 fragments enter the fit */
    int64_t n_fit;
    double fit_min_mass; /* (fit_min - 1/2) m0 */
} shard_fragment_stats;

/* The histogram bin of mass m for unit m0 (m / m0 in [2^k, 2^(k+1)), k >= 0; a relative tolerance of 1e-9
 * keeps a fragment of exactly 2^k particles in bin k whatever the rounding of its mass). Local. */
int shard_fragment_bin(double m, double m0);

/* tau and its error from n fragments and the sum of ln(m_i / m_lo) (NaN when n < 2 or the sum <= 0). Local. */
void shard_fragment_fit(int64_t n, double sum_log, double *tau, double *err);

#endif
