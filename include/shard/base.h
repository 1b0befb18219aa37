/* Base (core): the few things every module shares.
 *
 * The error record that non-MPI code fills and hands back (the driver decides whether the fault is local or
 * global and calls decomposition/ to stop the ranks), source locations for scene-file messages, and allocation
 * that never returns NULL: a failed allocation names its size and the file and line that asked, and ends the
 * run through the fatal handler (exit code SHARD_EXIT_INTERNAL, 5).  decomposition/comm.c installs a handler
 * that prefixes the rank and aborts every rank; without one (tools, tests) the process prints and exits.
 * Nothing here knows about MPI.
 */
#ifndef SHARD_BASE_H
#define SHARD_BASE_H

#include <stddef.h>
#include <stdint.h>

#define SHARD_VERSION_STRING "0.1.0"

/* Longest names (bodies, materials, obstacles) and paths the scene and the writers keep, with the NUL. */
#define SHARD_NAME_MAX 64
#define SHARD_PATH_MAX 1024
/* The most steps a run (or a restart's step counter) may take: at a microsecond per step for one particle it is
 * twelve days, so anything more is a unit mistake (a tiny dt_safety, an end time in the wrong unit). */
#define SHARD_MAX_STEPS 1000000000000LL

/* Exit codes every rank uses (documented in docs/architecture.md). */
enum {
    SHARD_EXIT_OK = 0,
    SHARD_EXIT_USAGE = 2,    /* bad command line */
    SHARD_EXIT_INPUT = 3,    /* bad scene, mesh or other input file */
    SHARD_EXIT_RUNTIME = 4,  /* a run became invalid (NaN, lost particle) */
    SHARD_EXIT_INTERNAL = 5, /* MPI failure, allocation failure, programmer error */
    SHARD_EXIT_IO = 6,       /* output or a checkpoint could not be written (full disk, no permission) */
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

/* The offset of the first character of s[0..len) that a terminal acts on instead of showing it: a C0 control
 * (bytes 0x00-0x1f, tab and newline too), DEL (0x7f), or a C1 control (U+0080-U+009F, in UTF-8 0xc2 0x80-0x9f);
 * -1 when there is none.  Names and paths in a scene are refused with one (scene_keys.c). */
long shard_text_control(const char *s, size_t len);
/* Every control character of the NUL-terminated msg replaced by '?' (a C1 character's two bytes each by one). */
void shard_text_printable(char *msg);

/* Formats err->msg (printf style) and sets err->code; returns code so callers can `return shard_error_set(...)`.
 * Here, in shard_error_at and shard_fatal (and in the ranks' shard_fail_all / shard_fail_one), the message is made
 * printable (shard_text_printable): a name or path taken from a file or the command line never reaches the
 * terminal raw. */
int shard_error_set(shard_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "file:line:col: key: <fmt>" */
int shard_error_at(shard_error *err, const char *file, const shard_src_loc *loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Appends ", name" (just "name" when *used is 0) to the list in buf of `size` bytes, for "allowed: a, b, c"
 * messages; stops quietly when the buffer is full. */
void shard_list_append(char *buf, size_t size, size_t *used, const char *name);

/* The end of the run for a fault that only this process sees and cannot recover from (out of memory).  The
 * handler gets the exit code and a message without the "shard: error" prefix and must not return. */
typedef void (*shard_fatal_fn)(int code, const char *msg);
/* Installs the process's fatal handler (NULL restores the default: print "shard: error: MSG", exit(code)). */
void shard_set_fatal_handler(shard_fatal_fn fn);
#ifdef __cplusplus /* the Catalyst module (C++) reads this header too */
[[noreturn]]
#else
_Noreturn
#endif
void shard_fatal(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation that never returns NULL: on failure, "out of memory: N bytes (X GiB) requested at FILE:LINE"
 * through shard_fatal with SHARD_EXIT_INTERNAL.  n * size of shard_calloc is checked for overflow. */
void *shard_malloc_at(size_t bytes, const char *file, int line);
void *shard_calloc_at(size_t n, size_t size, const char *file, int line);
void *shard_realloc_at(void *p, size_t bytes, const char *file, int line);
#define shard_malloc(bytes) shard_malloc_at((bytes), __FILE__, __LINE__)
#define shard_calloc(n, size) shard_calloc_at((n), (size), __FILE__, __LINE__)
#define shard_realloc(p, bytes) shard_realloc_at((p), (bytes), __FILE__, __LINE__)

/* Grow-only buffer: ensures *cap >= need elements of `size` bytes, growing by 1.5x. */
void shard_reserve_at(void **p, size_t *cap, size_t need, size_t size, const char *file, int line);
#define shard_reserve(p, cap, need, size) shard_reserve_at((p), (cap), (need), (size), __FILE__, __LINE__)

#ifdef SHARD_DEBUG
#include <stdio.h>
#include <stdlib.h>
#define SHARD_ASSERT(c)                                                                                                \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "shard: assertion failed: %s [%s:%d]\n", #c, __FILE__, __LINE__);                          \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)
#else
#define SHARD_ASSERT(c) ((void)0)
#endif

#endif
