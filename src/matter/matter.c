/* Matter: the table of the kinds of matter this build knows (see matter.h).  A new kind is a module file
 * (src/matter/<kind>/<kind>_module.c defining a const shard_matter) and one row here. */
#include "shard/matter.h"

#include <string.h>

extern const shard_matter shard_matter_solid;
extern const shard_matter shard_matter_rigid;
extern const shard_matter shard_matter_cloth;

static const shard_matter *const shard_matter_rows[] = {
    &shard_matter_solid,
    &shard_matter_rigid,
    &shard_matter_cloth,
};

const shard_matter *const *shard_matter_table(int *n)
{
    *n = (int)(sizeof shard_matter_rows / sizeof shard_matter_rows[0]);
    return shard_matter_rows;
}

int shard_matter_find(const shard_matter *const *table, int n, const char *kind)
{
    for (int k = 0; k < n; k++)
        if (strcmp(table[k]->kind, kind) == 0)
            return k;
    return -1;
}

const shard_matter *shard_matter_of(const shard_scene *sc, int b)
{
    int n;
    const shard_matter *const *table = shard_matter_table(&n);
    int k = shard_matter_find(table, n, sc->bodies[b].kind);
    return k >= 0 ? table[k] : NULL;
}

int shard_matter_of_has(const shard_scene *sc, int b, unsigned flags)
{
    const shard_matter *m = shard_matter_of(sc, b);
    return m && (m->flags & flags) == flags;
}
