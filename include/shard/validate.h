/* Validate (core): checks of the store's invariants that are too costly for every step of a production run:
 * a CSR list well formed (rows monotone, partners in range, each row sorted by partner global id, no self
 * partner), the owned / bond-ghost / contact-ghost split of the store consistent with its capacity, global ids in
 * range and owned ones distinct and never also a ghost, bodies in range, positions finite.
 *
 * Each check returns 0, or 1 with the first broken invariant described in `why`.  SHARD_VALIDATE(call) runs a
 * check in debug builds (SHARD_DEBUG: the sanitizer build of tests/sanitize) and aborts with the description when it
 * fails; in release builds it compiles to nothing.  The driver runs the pass at the module boundaries of the step
 * (after start-up, after a contact-ghost rebuild, after migration). Local; no MPI.
 */
#ifndef SHARD_VALIDATE_H
#define SHARD_VALIDATE_H

#include "shard/particles.h"

/* rows: the rows the list must have (c->n); cols: partners must be local indices below it; gid (may be NULL):
 * when given, every row must be sorted by strictly increasing gid[partner] and no partner may be the row itself
 * (self_ok = 0). */
int shard_validate_csr(const shard_csr *c, size_t rows, size_t cols, const int64_t *gid, int self_ok, char *why,
                       size_t len);

/* n_total: the run's particle count (global ids lie in [0, n_total)); n_bodies: the scene's bodies. */
int shard_validate_particles(const shard_particles *p, int64_t n_total, int n_bodies, char *why, size_t len);

#ifdef SHARD_DEBUG
#include <stdio.h>
#include <stdlib.h>
#define SHARD_VALIDATE(check_call_with_why)                                                                            \
    do {                                                                                                               \
        char why[256];                                                                                                 \
        if (check_call_with_why) {                                                                                     \
            fprintf(stderr, "shard: invariant broken: %s [%s:%d]\n", why, __FILE__, __LINE__);                         \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)
#else
#define SHARD_VALIDATE(check_call_with_why) ((void)0)
#endif

#endif
