/* File I/O helpers shared by the readers in io/ and the driver: whole-file reading with a size limit. */
#ifndef SHARD_FILEIO_H
#define SHARD_FILEIO_H

#ifndef SHARD_LAYER_IO
#error "shard/fileio.h is an io header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/base.h"

/* Reads a whole file (fread in a loop, so that pipes and files whose size changes still work) into a new
 * NUL-terminated buffer (caller frees).  A file longer than max_bytes is not read past the limit.  Returns 0,
 * or an errno value with *stage saying what failed ("open", "read", or "size" with EFBIG when the file is
 * larger than max_bytes). Local. */
int shard_file_slurp(const char *path, size_t max_bytes, char **data, size_t *len, const char **stage);

/* shard_file_slurp with the message "<path>: cannot open|read <what>: <strerror>" (or "<path>: <what> is larger
 * than N MiB") in err; returns 0 or SHARD_EXIT_INPUT. Local. */
int shard_file_read_all(const char *path, const char *what, size_t max_bytes, char **text, size_t *len,
                        shard_error *err);

/* The largest scene file read (a scene is text of a few KiB; this stops /dev/zero or a mistaken binary). */
#define SHARD_SCENE_MAX_BYTES ((size_t)64 << 20)

#endif
