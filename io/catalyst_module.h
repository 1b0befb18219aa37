/* Private to io/: the entry points of the Catalyst module (io/catalyst_adaptor.cxx, built as
 * libshard_catalyst.so) that io/insitu.c finds with dlsym.
 *
 * The module is loaded only when a run asks for a script, so this boundary carries plain C types: the MPI
 * communicator travels as a pointer to an MPI_Comm, and the module reports errors in a shard_error, agreed among
 * the ranks by itself.  SHARD_CATALYST_ABI changes whenever this table or shard_insitu_fields changes, so a
 * module left over from an older build is refused instead of misread.
 */
#ifndef SHARD_CATALYST_MODULE_H
#define SHARD_CATALYST_MODULE_H

#include "shard/insitu.h"

#define SHARD_CATALYST_ABI 4
#define SHARD_CATALYST_ENTRY "shard_catalyst_module"

typedef struct shard_catalyst_api {
    int abi; /* SHARD_CATALYST_ABI of the module */
    /* Collective over *mpi_comm (an MPI_Comm).  Checks and loads the scripts (see shard_insitu_create; the
     * caller has checked the count).  NULL with the same *err on every rank on failure. */
    void *(*create)(const void *mpi_comm, int n_scripts, const char *const *scripts, shard_error *err);
    /* Collective: runs the scripts listed in due[0..n_due) (indices into create's list) on *f. */
    int (*execute)(void *impl, long step, double time, int n_due, const int *due, const shard_insitu_fields *f,
                   shard_error *err);
    /* Collective: finalises the scripts and Catalyst. */
    void (*destroy)(void *impl);
} shard_catalyst_api;

#ifdef __cplusplus
extern "C"
#endif
    const shard_catalyst_api *
    shard_catalyst_module(void);

#endif
