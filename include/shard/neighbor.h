/* Neighbour search: cell lists, reference bonds of meshless bodies, and contact candidate lists.
 *
 * Bonds are built once from rest positions: particle j is a partner of i when both belong to the same body and
 * |X_j - X_i| < h (the body's support radius, support x spacing; pairs within a relative 1e-12 of h, where the
 * weight is 0, are left out, so that an integer support does not bond a lattice shell by rounding).  The rule is
 * symmetric, which the gather-only force assembly relies on (solid.h); rows are sorted by partner global id.  Contact
 * candidates are rebuilt with a Verlet skin: j (any local particle of another body) is a candidate of owned i when |x_j
 * - x_i| < r_i + r_j + skin; rows are sorted by partner global id so that force sums do not depend on the partition.
 * This module does not communicate.
 */
#ifndef SHARD_NEIGHBOR_H
#define SHARD_NEIGHBOR_H

#ifndef SHARD_LAYER_PHYSICS
#error "shard/neighbor.h is a physics header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/particles.h"

/* How many cells of any cell list the particles may span along an axis (2^50): the driver stops a run whose
 * particles leave that domain (integrate.h), so cell coordinates always fit in int64 with room to spare. */
#define SHARD_DOMAIN_CELLS 1125899906842624.0

/* A cell list over n points: a dense grid when the bounding box is compact, otherwise the occupied cells only,
 * sorted by their (iz, iy, ix) coordinates (no linear key, so points any distance apart within
 * SHARD_DOMAIN_CELLS cells are fine). */
typedef struct shard_cells {
    double origin[3], inv_size;
    int64_t dims[3];
    int dense;
    size_t n, n_cells;
    int64_t *start; /* dense: n_cells + 1 offsets; sparse: per occupied cell, n_keys + 1 offsets */
    int64_t *keys;  /* sparse only: 3 per occupied cell, (iz, iy, ix), sorted */
    size_t n_keys;
    int32_t *order; /* point indices sorted by cell */
    size_t cap_start, cap_keys, cap_order;
    int64_t *tmp; /* scratch keys */
    size_t cap_tmp;
} shard_cells;

/* Builds the cell list of n points x (stride 3) with cells of edge `size`.  Reuses the struct's buffers. */
void shard_cells_build(shard_cells *c, size_t n, const double *x, double size);
/* The range [*s, *e) in c->order of the cell (ix, iy, iz) (empty if outside or absent). */
void shard_cells_range(const shard_cells *c, int64_t ix, int64_t iy, int64_t iz, int64_t *s, int64_t *e);
/* Integer cell coordinates of a point. */
void shard_cells_coord(const shard_cells *c, const double p[3], int64_t ijk[3]);
void shard_cells_free(shard_cells *c);

/* Reference bonds of n particles with positions X (global arrays, index = global id), bodies contiguous in id
 * order: body b spans [body_start[b], body_start[b+1]) with support radius h[b] (h[b] <= 0: no bonds).  Fills a CSR
 * with global ids (int32: at most 2^31 particles are partitioned centrally).  Local. */
void shard_neighbor_bonds(size_t n, const double *X, int n_bodies, const int64_t *body_start, const double *h,
                          shard_csr *bonds);

/* After bonds broke: adds to the candidate rows of the listed owned particles (sorted, each once) their partners
 * in ref_bonds whose bond is broken (`broken`, per entry) and that are now within reach (the contact radii
 * plus two skins: each may move up to a skin from here before the skin check, which measures from the last
 * build, calls for a rebuild), keeping every row sorted by global id.  Every pair that can touch before the next
 * rebuild is then a candidate, without a cell search: the only pairs a break adds are the bond's own. Local. */
void shard_neighbor_contacts_reopen(const shard_particles *p, const double *radius, double skin,
                                    const shard_csr *ref_bonds, const uint8_t *broken, const int32_t *rows,
                                    size_t n_rows, shard_csr *cand);

/* Contact candidates of the owned particles among all local particles (owned and ghosts).  radius[b] is the
 * contact radius of body b; a particle's own body is a candidate too where self[b] is set (bodies that can
 * break), except the partners an unbroken bond of `bonds` joins to it (rows by partner id; NULL: none): the
 * solid holds those, and when a bond breaks the driver reopens those rows (above; self may be NULL: none).  Fills
 * cand (rows = owned, entries = local indices sorted by global id). Local. */
void shard_neighbor_contacts(const shard_particles *p, const double *radius, const uint8_t *self,
                             const shard_csr *bonds, double skin, shard_cells *cells, shard_csr *cand);

#endif
