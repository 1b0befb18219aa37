/* Ghosts: contact ghosts, rebuilt with a Verlet skin.
 *
 * Contacts arise between particles of different bodies, which were never bonded, so the bond halo does not
 * cover them.  On a rebuild every rank publishes one bounding box per body of its owned particles; an owned
 * particle within `cutoff` of another rank's box of a *different* body is sent there (unless that rank already
 * holds it as a bond ghost), and the received particles are appended after the bond ghosts.  cutoff = largest
 * contact distance + skin, so until some particle has moved more than skin/2 every pair that can touch is
 * present on the owners of both (docs/architecture.md).  A ghost record is every particle registry row flagged
 * SHARD_FIELD_CONTACT (fields.h), packed row by row, so a module that needs more of its contact partners adds
 * the flag to a row and nothing here changes.  The object keeps its buffers and its halo plan between
 * rebuilds (the plan's graph communicator survives while the neighbour ranks stay the same) and counts every
 * byte it sends: the records of each rebuild, the counts exchanged before them and the forward exchanges.
 */
#ifndef SHARD_GHOSTS_H
#define SHARD_GHOSTS_H

#ifndef SHARD_LAYER_DECOMPOSITION
#error "shard/ghosts.h is a decomposition header: only its layer and the layers above it (io and the driver) include it"
#endif

#include "shard/halo.h"
#include "shard/particles.h"

typedef struct shard_ghosts shard_ghosts;

/* Local: an empty set of contact ghosts for a run with n_bodies bodies; self[b] (may be NULL: none) marks the
 * bodies that touch themselves (their bonds can break), whose particles are sent near the same body's box
 * too (copied). */
shard_ghosts *shard_ghosts_create(int n_bodies, const uint8_t *self);

/* Collective.  Replaces the contact ghosts in p (appended after the bond ghosts) and the exchange plan.
 * bond_halos[0..n_halos) are the plans whose ghosts the receiver already holds (NULL entries allowed). */
void shard_ghosts_rebuild(shard_ghosts *g, shard_comm *c, shard_particles *p, shard_halo *const *bond_halos,
                          int n_halos, double cutoff);

/* At most this many rows in one forward exchange. */
#define SHARD_GHOSTS_MAX_ROWS 8

/* Collective over the neighbourhood: forwards the registry rows rows[0..n) (rows of SHARD_PARTICLE_FIELDS of
 * type double, the same list on every rank; n <= SHARD_GHOSTS_MAX_ROWS) of the owned particles to their contact
 * ghosts.  A rebuild's records carry the SHARD_FIELD_CONTACT rows; other rows a term reads at ghosts are forwarded
 * after it. */
void shard_ghosts_forward(shard_ghosts *g, shard_particles *p, const shard_field_desc *const *rows, int n);

/* Local: bytes this rank has sent for contact ghosts so far (rebuilds and forwards), and the plan (NULL before
 * the first rebuild). */
uint64_t shard_ghosts_bytes(const shard_ghosts *g);
/* Local: of those, the bytes of the rebuilds (boxes, counts and records). */
uint64_t shard_ghosts_rebuild_bytes(const shard_ghosts *g);
const shard_halo *shard_ghosts_halo(const shard_ghosts *g);

/* Collective; NULL-safe; nulls the pointer. */
void shard_ghosts_destroy(shard_ghosts **g);

#endif
