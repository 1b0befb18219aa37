/* Forces: the common force table, the terms that act on particles of every kind (contact between bodies,
 * contact with obstacles, mass-proportional damping, surface tractions).
 *
 * The force on a particle is the sum of the terms of its module (matter.h) and of these, in increasing
 * `order` (SHARD_FORCE_ORDER_*): solid, cloth internal, contact between bodies, obstacles, mass damping,
 * tractions, rigid coupling.
 * The driver merges the two lists once at set-up and then loops over the merged table; a new term is a row
 * here (or in its module) and needs no driver change (docs/architecture.md, "How to add a force term").
 */
#ifndef SHARD_FORCES_H
#define SHARD_FORCES_H

#ifndef SHARD_LAYER_PHYSICS
#error "shard/forces.h is a physics header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/matter.h"

/* The common force terms of this build, in table order.  Static storage. */
const shard_force_term *const *shard_force_table(int *n);

#endif
