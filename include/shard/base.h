/* Shard base: the few things every module shares.
 *
 * The error record that non-MPI code fills and hands back (the driver decides whether the fault is local or
 * global and calls decomposition/ to stop the ranks), source locations for scene-file messages, small
 * allocation helpers that never return NULL silently, and 3-vector helpers.  Nothing here knows about MPI.
 */
#ifndef SHARD_BASE_H
#define SHARD_BASE_H

#include <stddef.h>
#include <stdint.h>

#define SHARD_VERSION_STRING "0.1.0"

/* Exit codes every rank uses (documented in docs/architecture.md). */
enum {
    SHARD_EXIT_OK = 0,
    SHARD_EXIT_USAGE = 2,     /* bad command line */
    SHARD_EXIT_INPUT = 3,     /* bad scene, mesh or other input file */
    SHARD_EXIT_RUNTIME = 4,   /* a run became invalid (NaN, lost particle) */
    SHARD_EXIT_INTERNAL = 5,  /* MPI failure, allocation failure, programmer error */
    SHARD_EXIT_IO = 6,        /* output or a checkpoint could not be written (full disk, no permission) */
};

/* A message for the user, already formatted ("scene.yaml:14:7: materials.steel.E: must be > 0, got -2e9"). */
typedef struct shard_error {
    int code; /* one of SHARD_EXIT_*, 0 while no error */
    char msg[1536];
} shard_error;

/* Where a value came from in a scene file: 1-based line and column, and the dotted key path. */
typedef struct shard_src_loc {
    int line, col;
    char key[160];
} shard_src_loc;

/* Formats err->msg (printf style) and sets err->code; returns code so callers can `return shard_error_set(...)`. */
int shard_error_set(shard_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "file:line:col: key: <fmt>" */
int shard_error_at(shard_error *err, const char *file, const shard_src_loc *loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Allocation that aborts the process with a message on failure (an out-of-memory rank cannot recover). */
void *shard_malloc(size_t bytes);
void *shard_calloc(size_t n, size_t size);
void *shard_realloc(void *p, size_t bytes);
#define SHARD_FREE(p) do { free(p); (p) = NULL; } while (0)

/* Grow-only buffer: ensures *cap >= need elements of `size` bytes, growing by 1.5x. */
void shard_reserve(void **p, size_t *cap, size_t need, size_t size);

#ifdef SHARD_DEBUG
#include <stdio.h>
#include <stdlib.h>
#define SHARD_ASSERT(c)                                                                                          \
    do {                                                                                                         \
        if (!(c)) {                                                                                              \
            fprintf(stderr, "shard: assertion failed: %s [%s:%d]\n", #c, __FILE__, __LINE__);                  \
            abort();                                                                                             \
        }                                                                                                        \
    } while (0)
#else
#define SHARD_ASSERT(c) ((void)0)
#endif

#endif
