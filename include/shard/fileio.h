/* File I/O helpers shared by the readers in io/ and the driver. */
#ifndef SHARD_FILEIO_H
#define SHARD_FILEIO_H

#include "shard/base.h"

/* Reads a whole file into a new NUL-terminated buffer (caller frees).  On failure fills err with
 * "<path>: cannot open <what>: <strerror>" and returns SHARD_EXIT_INPUT. Local. */
int shard_file_read_all(const char *path, const char *what, char **text, size_t *len, shard_error *err);

#endif
