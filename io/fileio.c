/* Whole-file reading for scene files, meshes and other inputs (see fileio.h). */
#include "shard/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not a regular one is, for the messages. */
static const char *shard_file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a plain file";
}

int shard_file_regular(const char *path, const char **stage)
{
    struct stat st;
    *stage = "open";
    if (stat(path, &st) != 0)
        return errno ? errno : EIO;
    if (!S_ISREG(st.st_mode)) {
        *stage = shard_file_kind(st.st_mode);
        return SHARD_FILE_NOT_REGULAR;
    }
    return 0;
}

int shard_file_slurp(const char *path, size_t max_bytes, char **data, size_t *len, const char **stage)
{
    *data = NULL;
    *len = 0;
    *stage = "open";
    /* Without O_NONBLOCK, opening a FIFO would wait for a writer: it is refused below instead, unread. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return errno ? errno : EIO;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = errno ? errno : EIO;
    } else if (!S_ISREG(st.st_mode)) {
        *stage = shard_file_kind(st.st_mode);
        rc = SHARD_FILE_NOT_REGULAR;
    } else if (st.st_size < 0 || (uintmax_t)st.st_size > max_bytes) {
        *stage = "size";
        rc = EFBIG;
    }
    if (rc) {
        close(fd);
        return rc;
    }
    /* The size the file has now, checked above, bounds the buffer: a file that grows while it is read is read as
     * it was when opened, one that shrinks up to its new end. */
    size_t size = (size_t)st.st_size, n = 0;
    char *buf = shard_malloc(size + 1);
    while (n < size) {
        ssize_t got = read(fd, buf + n, size - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            *stage = "read";
            rc = errno ? errno : EIO;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (rc) {
        free(buf);
        return rc;
    }
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
    if (e == SHARD_FILE_NOT_REGULAR)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: the %s is %s, not a regular file", path, what, stage);
    if (e == EFBIG)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: the %s is larger than %zu MiB (is it the right file?)", path,
                               what, max_bytes >> 20);
    return shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot %s %s: %s", path, stage, what, strerror(e));
}
