/* Whole-file reading for scene files, meshes and other inputs (see fileio.h). */
#include "shard/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shard_file_slurp(const char *path, size_t max_bytes, char **data, size_t *len, const char **stage)
{
    *data = NULL;
    *len = 0;
    *stage = "open";
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return errno ? errno : EIO;
    size_t cap = 0, n = 0;
    char *buf = NULL;
    int rc = 0;
    for (;;) {
        if (n > max_bytes) {
            *stage = "size";
            rc = EFBIG;
            break;
        }
        shard_reserve((void **)&buf, &cap, n + 65536 + 1, 1);
        size_t want = cap - n - 1;
        if (want > max_bytes + 1 - n)
            want = max_bytes + 1 - n;
        size_t got = fread(buf + n, 1, want, fp);
        n += got;
        if (got == 0)
            break;
    }
    if (!rc && ferror(fp)) {
        *stage = "read";
        rc = errno ? errno : EIO;
    }
    fclose(fp);
    if (rc) {
        free(buf);
        return rc;
    }
    if (!buf)
        buf = shard_malloc(1);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

int shard_file_read_all(const char *path, const char *what, size_t max_bytes, char **text, size_t *len,
                        shard_error *err)
{
    const char *stage;
    int e = shard_file_slurp(path, max_bytes, text, len, &stage);
    if (!e)
        return 0;
    if (e == EFBIG)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: the %s is larger than %zu MiB (is it the right file?)", path,
                               what, max_bytes >> 20);
    return shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot %s %s: %s", path, stage, what, strerror(e));
}
