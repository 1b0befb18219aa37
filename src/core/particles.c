/* Particles (core): the field registry, growth and release of the structure-of-arrays and of module blocks
 * (see particles.h). */
#include "shard/particles.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The registry (particles.h) at run time, generated from the same table that declares the members. */
const shard_field_desc shard_particle_fields[] = {
#define SHARD_DESC_(m, type, k, fl, nm)                                                                                \
    {#m, nm, SHARD_FIELD_TYPE_OF(type), sizeof(type), (k), (fl), offsetof(shard_particles, m)},
    SHARD_PARTICLE_FIELDS(SHARD_DESC_)
#undef SHARD_DESC_
};
const int shard_particle_n_fields = (int)(sizeof shard_particle_fields / sizeof shard_particle_fields[0]);

void shard_store_grow(void *base, const shard_field_desc *rows, int n_rows, size_t old_cap, size_t new_cap)
{
    for (int f = 0; f < n_rows; f++) {
        const shard_field_desc *d = &rows[f];
        void **slot = shard_field_slot(base, d);
        size_t rb = shard_field_row_bytes(d);
        *slot = shard_realloc(*slot, new_cap * rb);
        memset((char *)*slot + old_cap * rb, 0, (new_cap - old_cap) * rb);
    }
}

const shard_field_desc *shard_particles_row(const char *name)
{
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (strcmp(shard_particle_fields[f].name, name) == 0)
            return &shard_particle_fields[f];
    return NULL;
}

void shard_particles_reserve(shard_particles *p, size_t n)
{
    if (n <= p->capacity && p->gid)
        return;
    /* The first allocation is sized to the request plus a little room for contact ghosts: growing from a small
     * capacity by 1.5x would leave up to half of every array allocated and zeroed (touched) for nothing. */
    size_t cap = p->capacity == 0 ? n + n / 16 + 64 : p->capacity;
    while (cap < n)
        cap += cap / 2;
    shard_store_grow(p, shard_particle_fields, shard_particle_n_fields, p->capacity, cap);
    p->capacity = cap;
}

void shard_particles_alloc_rows(shard_particles *p, size_t n, unsigned flags)
{
    memset(p, 0, sizeof *p);
    for (int f = 0; f < shard_particle_n_fields; f++) {
        const shard_field_desc *d = &shard_particle_fields[f];
        if ((d->flags & flags) == flags)
            *shard_field_slot(p, d) = shard_calloc(n * (size_t)d->ncomp + 1, d->elem_size);
    }
    p->capacity = p->n_owned = p->n_local = n;
}

void shard_particles_free(shard_particles *p)
{
    if (!p)
        return;
    for (int f = 0; f < shard_particle_n_fields; f++)
        free(shard_field_array(p, &shard_particle_fields[f]));
    memset(p, 0, sizeof *p);
}

void shard_block_init(shard_block *b, const shard_field_desc *rows, int n_rows)
{
    SHARD_ASSERT(n_rows <= SHARD_BLOCK_MAX_ROWS);
    memset(b, 0, sizeof *b);
    b->rows = rows;
    b->n_rows = n_rows;
}

void shard_block_reserve(shard_block *b, size_t n)
{
    if (n <= b->capacity && (b->n_rows == 0 || b->col[0]))
        return;
    size_t cap = n + 1;
    shard_store_grow(b, b->rows, b->n_rows, b->capacity, cap);
    b->capacity = cap;
}

void shard_block_free(shard_block *b)
{
    if (!b)
        return;
    for (int f = 0; f < b->n_rows; f++)
        free(b->col[f]);
    const shard_field_desc *rows = b->rows;
    int n = b->n_rows;
    shard_block_init(b, rows, n);
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
