/* Hash (core): the 64-bit mixing function every hash in Shard is built from, and the state hash of a run.
 *
 * The state hash is what every run prints at its end and what the invariance tests compare: the sum mod 2^64
 * of a strong hash of each owned particle's (global id, x, v) bits.  Integer addition is associative, so the
 * sum over ranks is the same whatever the partition and the order.  Checkpoint checksums (io/checkpoint.c)
 * and the mesh reader's vertex-welding table (io/mesh_io.c) use the same mixing function.
 */
#ifndef SHARD_HASH_H
#define SHARD_HASH_H

#include "shard/particles.h"

#include <stdint.h>

/* The splitmix64 output function (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number
 * generators"): z + golden gamma, then the variant-13 finaliser.  Every input bit reaches every output bit. */
static inline uint64_t shard_hash_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* h combined with the 64 bits of v. */
static inline uint64_t shard_hash_add(uint64_t h, uint64_t v) { return shard_hash_mix(h ^ v); }

/* h combined with the bit pattern of a double (so +0.0 and -0.0, and NaN payloads, differ). */
uint64_t shard_hash_add_double(uint64_t h, double d);

/* Order-independent 64-bit hash of the owned particles' (gid, x, v): the sum mod 2^64 of a strong per-particle
 * hash.  The sum over ranks (integer, so exact) is the state hash of the run, equal for any partition. Local. */
uint64_t shard_hash_state_local(const shard_particles *p);

#endif
