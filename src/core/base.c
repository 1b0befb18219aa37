/* Base (core): error records, allocation that fails loudly, grow-only buffers, the fatal handler (base.h). */
#include "shard/base.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the control character at s (n bytes left), or 0 (see shard_text_control). */
static size_t shard_text_control_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x20 || s[0] == 0x7f)
        return 1;
    return s[0] == 0xc2 && n > 1 && s[1] >= 0x80 && s[1] <= 0x9f ? 2 : 0;
}

long shard_text_control(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (shard_text_control_len((const unsigned char *)s + i, len - i))
            return (long)i;
    return -1;
}

void shard_text_printable(char *msg)
{
    size_t len = strlen(msg);
    for (size_t i = 0; i < len; i++)
        for (size_t k = shard_text_control_len((const unsigned char *)msg + i, len - i); k > 0; k--)
            msg[i + k - 1] = '?';
}

int shard_error_set(shard_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    shard_text_printable(err->msg);
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
    shard_text_printable(err->msg);
    err->code = SHARD_EXIT_INPUT;
    return SHARD_EXIT_INPUT;
}

void shard_list_append(char *buf, size_t size, size_t *used, const char *name)
{
    if (*used == 0 && size > 0)
        buf[0] = '\0';
    if (*used >= size)
        return;
    int w = snprintf(buf + *used, size - *used, "%s%s", *used ? ", " : "", name);
    *used += w > 0 ? (size_t)w : 0;
}

/* The process's fatal handler: which process it is (and so what it must do to stop the others) is known only
 * to decomposition/, which installs its own. */
static shard_fatal_fn shard_base_fatal_handler;

void shard_set_fatal_handler(shard_fatal_fn fn) { shard_base_fatal_handler = fn; }

void shard_fatal(int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    shard_text_printable(msg);
    if (shard_base_fatal_handler)
        shard_base_fatal_handler(code, msg);
    fprintf(stderr, "shard: error: %s\n", msg);
    fflush(stderr);
    exit(code);
}

static _Noreturn void shard_base_oom(size_t bytes, const char *file, int line)
{
    shard_fatal(SHARD_EXIT_INTERNAL, "out of memory: %zu bytes (%.3g GiB) requested at %s:%d", bytes,
                (double)bytes / 1073741824.0, file, line);
}

void *shard_malloc_at(size_t bytes, const char *file, int line)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        shard_base_oom(bytes, file, line);
    return p;
}

void *shard_calloc_at(size_t n, size_t size, const char *file, int line)
{
    if (size && n > SIZE_MAX / size)
        shard_base_oom(SIZE_MAX, file, line);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        shard_base_oom(n * size, file, line);
    return p;
}

void *shard_realloc_at(void *p, size_t bytes, const char *file, int line)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q)
        shard_base_oom(bytes, file, line);
    return q;
}

void shard_reserve_at(void **p, size_t *cap, size_t need, size_t size, const char *file, int line)
{
    if (need <= *cap && *p)
        return;
    size_t c = *cap < 16 ? 16 : *cap;
    while (c < need)
        c += c / 2;
    if (size && c > SIZE_MAX / size)
        shard_base_oom(SIZE_MAX, file, line);
    *p = shard_realloc_at(*p, c * size, file, line);
    *cap = c;
}
