/* The matter module of a body, private to physics: for code that sees the scene but not the driver's choice of
 * module per body (the common force terms, a module's hooks that take the scene only), so that it tests a
 * body's kind by its module's row and flags (matter.h), never by the kind's name. */
#ifndef SHARD_MATTER_OF_H
#define SHARD_MATTER_OF_H

#include "shard/matter.h"

/* The row of this build's matter table that body b's kind names, or NULL (a kind of a test's own table).
 * Local. */
static inline const shard_matter *shard_matter_of(const shard_scene *sc, int b)
{
    int n;
    const shard_matter *const *table = shard_matter_table(&n);
    int k = shard_matter_find(table, n, sc->bodies[b].kind);
    return k >= 0 ? table[k] : NULL;
}

/* Whether body b's module has all of the flags (SHARD_MATTER_*). Local. */
static inline int shard_matter_of_has(const shard_scene *sc, int b, unsigned flags)
{
    const shard_matter *m = shard_matter_of(sc, b);
    return m && (m->flags & flags) == flags;
}

#endif
