/* Fault injection for the tests: the hooks a test program installed, or none (see faults.h). */
#include "shard/faults.h"

#include <string.h>

static shard_io_faults shard_io_faults_now;

void shard_io_set_faults(const shard_io_faults *f)
{
    if (f)
        shard_io_faults_now = *f;
    else
        memset(&shard_io_faults_now, 0, sizeof shard_io_faults_now);
}

const shard_io_faults *shard_io_faults_installed(void) { return &shard_io_faults_now; }
