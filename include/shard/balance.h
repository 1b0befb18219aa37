/* Balance: the repartitioner of dynamic load balancing (Zoltan, Boman et al., Sandia; Debian's
 * libtrilinos-zoltan-dev).
 *
 * Given the owned particles' positions and costs, it decides a new owner for each, so that the ranks' summed
 * costs are within Zoltan's tolerance (3 %) of each other, moving few particles:
 *   rcb    recursive coordinate bisection (Berger & Bokhari 1987), reusing the previous cuts as the start
 *          (RCB_REUSE) so that a small drift of the cost moves few particles; ranks own boxes of space, which
 *          keeps contact ghosts few when fragments fly apart; points on a cut go to one side
 *          (RCB_RECTILINEAR_BLOCKS), so a piece the caller places at one point is never split;
 *   hsfc   Hilbert space-filling curve cut into pieces of equal cost (Zoltan's HSFC);
 *   graph  Zoltan's parallel hypergraph partitioner on the bond graph in repartitioning mode (Catalyurek et al.
 *          2009): it minimises the cut bonds plus the data moved.
 * Zoltan remaps the new parts onto the ranks that hold most of each (REMAP), so that particles stay where they
 * are when they can.  The partition never enters the physics: whatever it decides, the results are the same.
 */
#ifndef SHARD_BALANCE_H
#define SHARD_BALANCE_H

#ifndef SHARD_LAYER_DECOMPOSITION
#error                                                                                                                 \
    "shard/balance.h is a decomposition header: only its layer and the layers above it (io and the driver) include it"
#endif

#include "shard/halo.h"
#include "shard/particles.h"

typedef struct shard_balancer shard_balancer;

/* The methods (the scene's balance.method names them: rcb, hsfc, graph). */
typedef enum shard_balancer_method {
    SHARD_BALANCER_RCB = 0,
    SHARD_BALANCER_HSFC = 1,
    SHARD_BALANCER_GRAPH = 2,
    /* Not a scene's choice: the start-up's partition (partition.h), recursive coordinate bisection from
     * scratch, points on a cut split by weight (no RCB_RECTILINEAR_BLOCKS: a lattice plane may be cut, so the
     * parts' costs are within the tolerance whatever the lattice). */
    SHARD_BALANCER_STARTUP = 3,
} shard_balancer_method;

/* Collective: a repartitioner with the given method into as many parts as ranks; _parts: into nparts parts
 * (dest then holds a part number, 0 .. nparts-1, which is not a rank when nparts differs from the rank count:
 * `shard partition` predicts a partition for more ranks than it runs on). */
shard_balancer *shard_balancer_create(shard_comm *c, shard_balancer_method method);
shard_balancer *shard_balancer_create_parts(shard_comm *c, shard_balancer_method method, int nparts);

/* Collective.  dest[i] (i < p->n_owned) receives the new owner of owned particle i, from the point where[3 i]
 * the geometric methods place it at (points on a cut stay together: RCB_RECTILINEAR_BLOCKS), its cost
 * w[i] (> 0) and, for `graph`, its bonds (local indices; partners at or beyond n_owned are bond ghosts
 * of the plans halos[0..n_halos), NULL entries allowed).  Returns 0, or SHARD_EXIT_INTERNAL with err filled on
 * every rank when Zoltan fails. */
int shard_balancer_partition(shard_balancer *b, const shard_particles *p, const double *where, const double *w,
                             const shard_csr *bonds, shard_halo *const *halos, int n_halos, int32_t *dest,
                             shard_error *err);

/* The same with the owner of every local particle given (owner[i] for i < n_owned + n_bond_ghost): for a
 * store that has no halo plans yet (bonds and owner may be NULL for the geometric methods). */
int shard_balancer_partition_owners(shard_balancer *b, const shard_particles *p, const double *where, const double *w,
                                    const shard_csr *bonds, const int32_t *owner, int32_t *dest, shard_error *err);

/* Local: the partitioner library's version and id width, for `shard --version`. */
void shard_balancer_library_version(char *buf, size_t len);

/* Collective; NULL-safe; nulls the pointer. */
void shard_balancer_destroy(shard_balancer **b);

#endif
