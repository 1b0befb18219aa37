/* Base helpers: error records, allocation that fails loudly, grow-only buffers. */
#include "shard/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int shard_error_set(shard_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int shard_error_at(shard_error *err, const char *file, const shard_src_loc *loc, const char *fmt, ...)
{
    int n;
    if (loc && loc->line > 0)
        n = snprintf(err->msg, sizeof err->msg, "%s:%d:%d: %s: ", file, loc->line, loc->col, loc->key);
    else if (loc && loc->key[0])
        n = snprintf(err->msg, sizeof err->msg, "%s: %s: ", file, loc->key);
    else
        n = snprintf(err->msg, sizeof err->msg, "%s: ", file);
    if (n < 0 || (size_t)n >= sizeof err->msg)
        n = (int)sizeof err->msg - 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
    va_end(ap);
    err->code = SHARD_EXIT_INPUT;
    return SHARD_EXIT_INPUT;
}

static void shard_oom(size_t bytes)
{
    fprintf(stderr, "shard: error: out of memory allocating %zu bytes\n", bytes);
    abort();
}

void *shard_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        shard_oom(bytes);
    return p;
}

void *shard_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        shard_oom(n * size);
    return p;
}

void *shard_realloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q)
        shard_oom(bytes);
    return q;
}

void shard_reserve(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap && *p)
        return;
    size_t c = *cap < 16 ? 16 : *cap;
    while (c < need)
        c += c / 2;
    *p = shard_realloc(*p, c * size);
    *cap = c;
}
