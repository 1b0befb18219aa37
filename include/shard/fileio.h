/* File I/O helpers shared by the readers in io/ and the driver: whole-file reading with a size limit. */
#ifndef SHARD_FILEIO_H
#define SHARD_FILEIO_H

#ifndef SHARD_LAYER_IO
#error "shard/fileio.h is an io header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/base.h"

/* Returned (negative, unlike the errno values) for a path that is not a regular file: a folder, a FIFO, a
 * device, a socket.  Such a file is never read: /dev/zero would never end, a FIFO would wait for a writer. */
#define SHARD_FILE_NOT_REGULAR (-1)

/* Whether path (a link followed) is a regular file, without opening it: 0, an errno value with *stage "open", or
 * SHARD_FILE_NOT_REGULAR with *stage saying what it is ("a FIFO (named pipe)", "a folder", ...). Local. */
int shard_file_regular(const char *path, const char **stage);

/* Reads a whole regular file into a new NUL-terminated buffer (caller frees).  The file is opened without
 * waiting (a FIFO is refused, not waited on), and its size from fstat is checked against max_bytes before
 * anything is allocated.  Returns 0, SHARD_FILE_NOT_REGULAR (*stage: what it is, as shard_file_regular), or an
 * errno value with *stage saying what failed ("open", "read", or "size" with EFBIG when the file is larger than
 * max_bytes). Local. */
int shard_file_slurp(const char *path, size_t max_bytes, char **data, size_t *len, const char **stage);

/* shard_file_slurp with the message "<path>: cannot open|read <what>: <strerror>", "<path>: the <what> is a
 * FIFO (named pipe), not a regular file" or "<path>: the <what> is larger than N MiB" in err; returns 0 or
 * SHARD_EXIT_INPUT. Local. */
int shard_file_read_all(const char *path, const char *what, size_t max_bytes, char **text, size_t *len,
                        shard_error *err);

/* The largest scene file read (a scene is text of a few KiB; this stops /dev/zero or a mistaken binary). */
#define SHARD_SCENE_MAX_BYTES ((size_t)64 << 20)

#endif
