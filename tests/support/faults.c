/* The fault injection of the test build of shard (shard_faults: src/main.c with this file; tests/CMakeLists.txt).
 * Before main, the io layer's fault hooks (shard/faults.h) are installed from the environment:
 *   SHARD_FAULT_CHECKPOINT=STEP:N   every rank stops dead (SIGKILL, as on a node failure) right after dataset N of
 *                                   the checkpoint of step STEP, leaving its temporary file partial
 *   SHARD_FAULT_RESERVE=late        the HDF5 writer reserves no room for the datasets when it creates a file, so
 *                                   that a full disk is met in the datasets or in the metadata flush
 * The shard program itself installs none: it reads neither variable. */
#include "shard/faults.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long fault_step = -1, fault_dataset = -1;

static void fault_checkpoint_dataset(long step, long n)
{
    if (step == fault_step && n == fault_dataset) {
        fflush(stdout);
        raise(SIGKILL);
    }
}

__attribute__((constructor)) static void faults_from_environment(void)
{
    shard_io_faults f = {0};
    const char *ck = getenv("SHARD_FAULT_CHECKPOINT");
    if (ck && sscanf(ck, "%ld:%ld", &fault_step, &fault_dataset) == 2)
        f.checkpoint_dataset = fault_checkpoint_dataset;
    const char *reserve = getenv("SHARD_FAULT_RESERVE");
    f.reserve_late = reserve && strcmp(reserve, "late") == 0;
    shard_io_set_faults(&f);
}
