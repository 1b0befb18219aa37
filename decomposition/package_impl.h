/* Private to decomposition/: the package of particles one rank receives (partition.c at start-up and restart,
 * migrate.c when particles change rank) and how it becomes a rank's store, blocks, bonds and halo plans. */
#ifndef SHARD_PACKAGE_IMPL_H
#define SHARD_PACKAGE_IMPL_H

#include "comm_impl.h"
#include "shard/partition.h"

/* What one rank receives at start-up, a restart or a migration: ids, ghost owners, bonds, per-module counts,
 * one array per particle registry row that has SHARD_FIELD_STATE (owned particles, and ghosts for
 * SHARD_FIELD_GHOST rows) and one per STATE row of each module's block (that module's owned particles, and its
 * ghosts for GHOST rows).  Rows the sender does not have (NULL arrays of the whole-run set) are not sent and
 * arrive as zeros. */
enum { SHARD_PKG_MAX_FIELDS = 64 };
typedef struct shard_package {
    int64_t n_own, n_ghost, n_bonds;
    int n_mod;
    uint64_t present;     /* bit f: particle registry row f is sent */
    int64_t *mod;         /* 3 per module: owned, ghosts, bit mask of the block rows sent */
    int64_t *gid;         /* n_own + n_ghost: owned by (module, gid), then ghosts by (module, owner, gid) */
    int32_t *owner;       /* n_ghost */
    int32_t *bond_count;  /* n_own */
    int64_t *bond_gid;    /* n_bonds */
    uint8_t *bond_broken; /* n_bonds */
    void *field[SHARD_PKG_MAX_FIELDS];
    void **mfield; /* n_mod * SHARD_BLOCK_MAX_ROWS */
    /* pair lists: per list, entries per owned particle, their keys and values */
    int n_lists;
    int64_t *ltotal;  /* n_lists: entries */
    int32_t **lcount; /* n_lists x n_own */
    int64_t **lkey;   /* n_lists x ltotal */
    double **lval;    /* n_lists x ltotal x width */
} shard_package;

/* Registry rows the package may carry: every state row but the global id, which the package sends itself. */
int shard_package_carries(const shard_field_desc *d);
/* The rows a sender holding `src` (and module blocks src_blocks, NULL: none) carries: bit f of the result for
 * particle registry row f, bit r of mpresent[m] for STATE row r of module m (rows_of[m] gives its rows). */
uint64_t shard_package_present(const shard_particles *src, int n_mod, const shard_block *rows_of,
                               const shard_block *src_blocks, uint64_t *mpresent);
/* Rows of registry row d in the package: the owned particles, and the ghosts for SHARD_FIELD_GHOST rows. */
size_t shard_package_rows(const shard_package *k, const shard_field_desc *d);
/* The same for block row d of module m. */
size_t shard_package_mod_rows(const shard_package *k, int m, const shard_field_desc *d);
/* Offsets of module m's owned particles and ghosts in the package's gid list. */
void shard_package_mod_offsets(const shard_package *k, int m, size_t *own, size_t *ghost);

/* A bond ghost while a package is assembled: sorted by module, owner, global id. */
typedef struct shard_partition_ghost {
    int32_t module, owner;
    int64_t gid;
} shard_partition_ghost;

int shard_partition_cmp_ghost(const void *a, const void *b);

/* The arrays of a package whose counts (n_own, n_ghost, n_bonds, present, n_mod, mod) are set: ids, owners,
 * bonds and the particle rows (alloc), the block rows (alloc_mod), the pair lists once n_lists and ltotal are
 * set (alloc_lists).  free releases everything and zeroes the record. */
void shard_package_alloc(shard_package *k, const shard_partition_kinds *kinds);
void shard_package_alloc_mod(shard_package *k, const shard_block *rows_of);
void shard_package_alloc_lists(shard_package *k, const shard_pairlist *shape);
void shard_package_free(shard_package *k);

/* Collective (the halo plans): unpacks a package into the particle store, the module blocks, the bond CSR and
 * its broken flags, and builds the halo plans of the modules with has_halo and the pair lists. */
void shard_package_unpack(shard_comm *c, const shard_partition_kinds *kinds, const shard_package *k, shard_particles *p,
                          shard_block *blocks, shard_csr *bonds, uint8_t **broken, shard_halo **halos,
                          shard_pairlist *lists);

#endif
