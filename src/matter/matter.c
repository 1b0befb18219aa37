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

const shard_matter *shard_matter_of(const shard_scene *sc, int b) { return sc->modules[sc->bodies[b].module]; }

int shard_matter_of_has(const shard_scene *sc, int b, unsigned flags)
{
    return (shard_matter_of(sc, b)->flags & flags) == flags;
}

const void *shard_matter_section(const shard_scene *sc, const shard_matter *m)
{
    for (int k = 0; k < sc->n_modules; k++)
        if (sc->modules[k] == m)
            return sc->sections[k];
    return NULL;
}

int shard_output_first(const shard_scene *sc, int m)
{
    int f = SHARD_OUT_COUNT;
    for (int k = 0; k < m; k++)
        f += sc->modules[k]->n_out_fields;
    return f;
}

int shard_output_count(const shard_scene *sc) { return shard_output_first(sc, sc->n_modules); }

const shard_output_field_info *shard_output_info(const shard_scene *sc, int f)
{
    if (f < SHARD_OUT_COUNT)
        return &shard_output_fields[f];
    f -= SHARD_OUT_COUNT;
    for (int k = 0; k < sc->n_modules; k++) {
        if (f < sc->modules[k]->n_out_fields)
            return &sc->modules[k]->out_fields[f];
        f -= sc->modules[k]->n_out_fields;
    }
    return NULL;
}

int shard_output_find(const shard_scene *sc, const char *name)
{
    for (int f = 0, n = shard_output_count(sc); f < n; f++)
        if (strcmp(shard_output_info(sc, f)->name, name) == 0)
            return f;
    return -1;
}

unsigned shard_output_all(const shard_scene *sc)
{
    int n = shard_output_count(sc);
    return n >= 32 ? ~0u : (1u << n) - 1u;
}
