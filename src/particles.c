/* Particle storage: the field registry, growth and release of the structure-of-arrays (see particles.h). */
#include "shard/particles.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The registry (particles.h) at run time, generated from the same table that drives growth below. */
const shard_field_desc shard_particle_fields[] = {
#define SHARD_DESC_(m, type, k, fl, nm)                                                                          \
    {#m, nm, SHARD_FIELD_TYPE_OF(type), sizeof(type), (k), (fl), offsetof(shard_particles, m)},
    SHARD_PARTICLE_FIELDS(SHARD_DESC_)
#undef SHARD_DESC_
};
const int shard_particle_n_fields = (int)(sizeof shard_particle_fields / sizeof shard_particle_fields[0]);

void shard_particles_reserve(shard_particles *p, size_t n)
{
    if (n <= p->capacity && p->gid)
        return;
    /* The first allocation is sized to the request plus a little room for contact ghosts: growing from a small
     * capacity by 1.5x would leave up to half of every array allocated and zeroed (touched) for nothing. */
    size_t cap = p->capacity == 0 ? n + n / 16 + 64 : p->capacity;
    while (cap < n)
        cap += cap / 2;
#define SHARD_GROW_(name, type, k, fl, nm)                                                                       \
    p->name = shard_realloc(p->name, cap * (k) * sizeof(type));                                                  \
    memset(p->name + p->capacity * (k), 0, (cap - p->capacity) * (k) * sizeof(type));
    SHARD_PARTICLE_FIELDS(SHARD_GROW_)
#undef SHARD_GROW_
    p->capacity = cap;
}

void shard_particles_alloc_rows(shard_particles *p, size_t n, unsigned flags)
{
    memset(p, 0, sizeof *p);
    for (int f = 0; f < shard_particle_n_fields; f++) {
        const shard_field_desc *d = &shard_particle_fields[f];
        if ((d->flags & flags) == flags)
            *shard_particles_array_slot(p, d) = shard_calloc(n * (size_t)d->ncomp + 1, d->elem_size);
    }
    p->capacity = p->n_owned = p->n_local = n;
}

void shard_particles_free(shard_particles *p)
{
    if (!p)
        return;
#define SHARD_FREE_(name, type, k, fl, nm) free(p->name);
    SHARD_PARTICLE_FIELDS(SHARD_FREE_)
#undef SHARD_FREE_
    memset(p, 0, sizeof *p);
}

void shard_csr_reserve(shard_csr *c, size_t rows, size_t entries)
{
    if (rows + 1 > c->row_cap || !c->start) {
        c->row_cap = rows + 1 + (rows + 1) / 2;
        c->start = shard_realloc(c->start, c->row_cap * sizeof *c->start);
    }
    if (entries > c->cap || !c->idx) {
        c->cap = entries + entries / 2 + 16;
        c->idx = shard_realloc(c->idx, c->cap * sizeof *c->idx);
    }
}

void shard_csr_free(shard_csr *c)
{
    if (!c)
        return;
    free(c->start);
    free(c->idx);
    memset(c, 0, sizeof *c);
}
