/* Whole-file reading for scene files and other small inputs (see fileio.h). */
#include "shard/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shard_file_read_all(const char *path, const char *what, char **text, size_t *len, shard_error *err)
{
    *text = NULL;
    *len = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot open %s: %s", path, what, strerror(errno));
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        shard_reserve((void **)&buf, &cap, n + 65536, 1);
        size_t got = fread(buf + n, 1, cap - n - 1, fp);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(fp);
    int saved = errno;
    fclose(fp);
    if (bad) {
        free(buf);
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot read %s: %s", path, what, strerror(saved));
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}
