/* Fault injection for the tests (io layer): points in the writers where a test can make a run fail as a node
 * failure or a full disk would.  The shard program installs nothing, so it has no fault injection and no
 * environment variable reaches one; the test build of the program (tests/support/faults.c, linked into
 * shard_faults) installs these hooks from its environment (SHARD_FAULT_CHECKPOINT, SHARD_FAULT_RESERVE).
 */
#ifndef SHARD_FAULTS_H
#define SHARD_FAULTS_H

#ifndef SHARD_LAYER_IO
#error "shard/faults.h is an io header: only its layer and the layers above it (the driver, the tests) include it"
#endif

typedef struct shard_io_faults {
    /* Called on every rank right after dataset n (1, 2, ...) of the checkpoint of step `step` is written; NULL:
     * none.  The tests' hook stops the process dead there (SIGKILL), leaving the temporary file partial. */
    void (*checkpoint_dataset)(long step, long n);
    /* Non-zero: the HDF5 writer reserves only the metadata allowance when it creates a file, so that a full
     * disk is met in the datasets or the flush, with part of the file written (h5io.h). */
    int reserve_late;
} shard_io_faults;

/* Installs the faults (a copy; NULL: none).  Local, before the run. */
void shard_io_set_faults(const shard_io_faults *f);
/* The faults installed: every member zero unless a test program installed some. */
const shard_io_faults *shard_io_faults_installed(void);

#endif
