/* Ghosts: contact ghosts, rebuilt with a Verlet skin.
 *
 * Contacts arise between particles of different bodies, which were never bonded, so the bond halo does not cover
 * them.  On a rebuild every rank publishes one bounding box per body of its owned particles; an owned particle
 * within `cutoff` of another rank's box of a *different* body is sent there (unless that rank already holds it
 * as a bond ghost), and the received particles are appended after the bond ghosts.  cutoff = largest contact distance + skin, so until some particle has moved
 * more than skin/2 every pair that can touch is present on the owners of both (docs/architecture.md).
 */
#ifndef SHARD_GHOSTS_H
#define SHARD_GHOSTS_H

#include "shard/halo.h"
#include "shard/particles.h"

/* Collective.  Replaces the contact ghosts in p and the plan *contact_halo (destroyed and rebuilt).
 * Ghost records carry gid, body, flags, mass, volume, x, v. */
void shard_ghosts_rebuild(shard_comm *c, shard_particles *p, int n_bodies, const shard_halo *bond_halo,
                          double cutoff, shard_halo **contact_halo);

#endif
