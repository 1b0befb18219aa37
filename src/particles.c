/* Particle storage: growth and release of the structure-of-arrays (see particles.h). */
#include "shard/particles.h"

#include <stdlib.h>
#include <string.h>

/* One table drives growth: adding a per-particle field means adding one row here. */
#define SHARD_PARTICLE_FIELDS(X_)                                                                                \
    X_(gid, int64_t, 1) X_(body, int32_t, 1) X_(flags, uint32_t, 1) X_(X, double, 3) X_(x, double, 3)              \
    X_(v, double, 3) X_(B, double, 9) X_(a, double, 3) X_(vpres, double, 3) X_(mass, double, 1)                    \
    X_(volume, double, 1) X_(Ainv, double, 6) X_(eps_p, double, 6) X_(x_build, double, 3)

void shard_particles_reserve(shard_particles *p, size_t n)
{
    if (n <= p->capacity && p->gid)
        return;
    size_t cap = p->capacity < 64 ? 64 : p->capacity;
    while (cap < n)
        cap += cap / 2;
#define SHARD_GROW_(name, type, k)                                                                               \
    p->name = shard_realloc(p->name, cap * (k) * sizeof(type));                                                  \
    memset(p->name + p->capacity * (k), 0, (cap - p->capacity) * (k) * sizeof(type));
    SHARD_PARTICLE_FIELDS(SHARD_GROW_)
#undef SHARD_GROW_
    p->capacity = cap;
}

void shard_particles_free(shard_particles *p)
{
    if (!p)
        return;
#define SHARD_FREE_(name, type, k) free(p->name);
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
