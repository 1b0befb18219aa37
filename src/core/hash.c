/* Hash (core): the state hash of a run (see hash.h). */
#include "shard/hash.h"

#include <string.h>

uint64_t shard_hash_add_double(uint64_t h, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return shard_hash_add(h, bits);
}

uint64_t shard_hash_state_local(const shard_particles *p)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < p->n_owned; i++) {
        uint64_t h = shard_hash_mix((uint64_t)p->gid[i]);
        for (int k = 0; k < 3; k++)
            h = shard_hash_add_double(h, p->x[3 * i + k]);
        for (int k = 0; k < 3; k++)
            h = shard_hash_add_double(h, p->v[3 * i + k]);
        sum += h;
    }
    return sum;
}
