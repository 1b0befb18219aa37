/* Particles: the structure-of-arrays store of one rank's particles, and CSR neighbour lists.
 *
 * A rank stores its owned particles first (sorted by global id), then the ghosts of bonded partners owned
 * elsewhere ("bond ghosts", fixed for the run), then contact ghosts (rebuilt with the Verlet skin).  3-vectors
 * are stored as x[3*i + k].  Per-particle solid state (pseudo-inverse moment matrix, plastic strain) exists for
 * owned particles only; the force matrix B exists for owned particles and bond ghosts.  This module owns the
 * storage and its growth; it does not know who fills it.
 */
#ifndef SHARD_PARTICLES_H
#define SHARD_PARTICLES_H

#include "shard/base.h"

/* Particle flags. */
enum {
    SHARD_PF_PRESCRIBED = 1u << 0, /* velocity prescribed for the whole run (vpres; zero = fixed) */
};

typedef struct shard_particles {
    size_t n_owned;       /* owned particles, [0, n_owned) */
    size_t n_bond_ghost;  /* bond ghosts, [n_owned, n_owned + n_bond_ghost) */
    size_t n_local;       /* owned + bond ghosts + contact ghosts */
    size_t capacity;

    /* every local particle */
    int64_t *gid;         /* global id, stable for the run */
    int32_t *body;        /* body index in the scene */
    uint32_t *flags;
    double *X;            /* rest (reference) position, 3 per particle */
    double *x;            /* current position */
    double *v;            /* velocity */
    double *B;            /* solid force matrix v * P * A^+ (9, row-major); owned + bond ghosts */
    double *mass;         /* kg (ghosts too: contact needs the partner's mass) */
    double *volume;       /* m^3 */

    /* owned only (arrays sized to capacity so that growth is uniform) */
    double *a;            /* acceleration from the last force evaluation */
    double *vpres;        /* prescribed velocity (3) for SHARD_PF_PRESCRIBED particles */
    double *Ainv;         /* pseudo-inverse of the moment matrix, symmetric: xx xy xz yy yz zz */
    double *eps_p;        /* plastic Green strain, symmetric: xx xy xz yy yz zz */
    double *x_build;      /* position at the last contact-list build (Verlet skin check) */
} shard_particles;

/* Compressed sparse rows over owned particles: the partners of i are idx[start[i] .. start[i+1]). */
typedef struct shard_csr {
    size_t n;             /* rows */
    int64_t *start;       /* n + 1 */
    int32_t *idx;         /* local indices (or global ones where documented) */
    size_t cap;           /* capacity of idx */
    size_t row_cap;       /* capacity of start */
} shard_csr;

/* Ensures room for n particles in every array (keeps contents). Local. */
void shard_particles_reserve(shard_particles *p, size_t n);
/* Frees all arrays; NULL-safe on members; zeroes the struct. Local. */
void shard_particles_free(shard_particles *p);

void shard_csr_reserve(shard_csr *c, size_t rows, size_t entries);
void shard_csr_free(shard_csr *c);

#endif
