/* The XDMF index appended in place (io/xdmf.c, shard_io_splice in io/h5io.c): after every output the index is
 * byte for byte what writing it whole gives, for the particles, a points table and a cells table (with outputs
 * that have no triangles); a file changed, replaced, removed or made a symbolic link behind the writer's back is
 * written whole again (a link replaced, its target untouched); a step written twice replaces its grid; an output
 * that one index cannot take (a folder at a temporary name, a full disk) leaves every index file and the listing
 * as they were. */
#include "test.h"
#include "xdmf.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const shard_column cols[] = {{"position", SHARD_TYPE_F64, 3, NULL},
                                    {"velocity", SHARD_TYPE_F64, 3, NULL},
                                    {"stress", SHARD_TYPE_F64, 9, NULL},
                                    {"body", SHARD_TYPE_I32, 1, NULL},
                                    {"global_id", SHARD_TYPE_I64, 1, NULL}};
static const shard_column frame_cols[] = {{"position", SHARD_TYPE_F64, 3, NULL},
                                          {"index", SHARD_TYPE_I64, 1, NULL},
                                          {"orientation", SHARD_TYPE_F64, 4, NULL}};
static const shard_output_table frames = {.group = "frames", .n_rows = 2, .n_cols = 3, .cols = frame_cols, .points = 1};

/* The whole contents of a file (NUL-terminated; "" when it cannot be read); caller frees. */
static char *slurp(const char *dir, const char *name)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    char *text = calloc(1, 1);
    size_t n = 0;
    char buf[4096];
    size_t r;
    while (f && (r = fread(buf, 1, sizeof buf, f)) > 0) {
        text = realloc(text, n + r + 1);
        memcpy(text + n, buf, r);
        text[n += r] = '\0';
    }
    if (f)
        fclose(f);
    return text;
}

/* Output k: triangles on every output but the multiples of 3 (cl_rows -2: none; the cells index is then not
 * touched). */
static int64_t triangles(long k) { return k % 3 == 0 ? -2 : 10 + k; }

static int add(shard_xdmf *x, long step, int with_cells, shard_error *err)
{
    memset(err, 0, sizeof *err);
    return shard_xdmf_add(x, step, 0.5 * (double)step, 100, 5, cols, &frames, 2, with_cells ? "surfaces" : NULL,
                          triangles(step), err);
}

/* Every index file of a (appended) and b (written whole at every output) the same. */
static int same_files(const char *a, const char *b)
{
    const char *names[] = {"particles.xmf", "frames.xmf", "surfaces.xmf"};
    int same = 1;
    for (int f = 0; f < 3; f++) {
        char *ta = slurp(a, names[f]), *tb = slurp(b, names[f]);
        if (strcmp(ta, tb) != 0) {
            fprintf(stderr, "FAIL: %s differs between the appended and the whole index\n", names[f]);
            same = 0;
        }
        free(ta), free(tb);
    }
    return same;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

int main(void)
{
    char root[] = "/tmp/shard-test-xdmf-XXXXXX";
    SHARD_ENSURE(mkdtemp(root) != NULL);
    char da[sizeof root + 8], db[sizeof root + 8], path[2048], link_target[2048];
    snprintf(da, sizeof da, "%s/a", root), snprintf(db, sizeof db, "%s/b", root);
    mkdir(da, 0777), mkdir(db, 0777);
    shard_xdmf a, b;
    shard_xdmf_init(&a, da), shard_xdmf_init(&b, db);
    shard_error err;

    /* 1 output without the cells table, then 11 with; b written whole every time */
    for (long k = 0; k < 12; k++) {
        SHARD_ENSURE(add(&a, k, k > 0, &err) == 0);
        for (int f = 0; f < SHARD_XDMF_FILES; f++)
            b.mark[f].at = -1;
        SHARD_ENSURE(add(&b, k, k > 0, &err) == 0);
        SHARD_ENSURE(same_files(da, db));
        if (k > 1) /* appended, not written whole: the temporary name was never used again */
            SHARD_ENSURE(a.mark[SHARD_XDMF_PARTICLES].at > 0);
    }
    char *text = slurp(da, "particles.xmf");
    SHARD_ENSURE(count(text, "<Grid Name=\"step_") == 12);
    free(text);
    text = slurp(da, "surfaces.xmf");
    SHARD_ENSURE(count(text, "<Grid Name=\"step_") == 8); /* 1, 2, 4, 5, 7, 8, 10, 11 */
    free(text);

    /* a step written again: its grid replaced */
    SHARD_ENSURE(add(&a, 11, 1, &err) == 0 && add(&b, 11, 1, &err) == 0 && same_files(da, db));
    text = slurp(da, "particles.xmf");
    SHARD_ENSURE(count(text, "step_000011") == 1);
    free(text);

    /* changed behind the writer's back: edited in place at its end, edited at its head (the same size: the
     * modification time tells, a clock tick later), removed, replaced by a link */
    const char *edits[2][2] = {{"</Xdmf>\n", "</XDMF>\n"}, {"Version=\"2.0\"", "Version=\"3.0\""}};
    for (int e = 0; e < 2; e++) {
        struct timespec tick = {0, 20 * 1000 * 1000};
        nanosleep(&tick, NULL);
        text = slurp(da, "particles.xmf");
        char *at = strstr(text, edits[e][0]);
        SHARD_ENSURE(at != NULL);
        snprintf(path, sizeof path, "%s/particles.xmf", da);
        FILE *f = fopen(path, "r+");
        SHARD_ENSURE(f && at && fseek(f, at - text, SEEK_SET) == 0 && fputs(edits[e][1], f) >= 0 && fclose(f) == 0);
        free(text);
        SHARD_ENSURE(add(&a, 12 + e, 1, &err) == 0 && add(&b, 12 + e, 1, &err) == 0 && same_files(da, db));
    }
    snprintf(path, sizeof path, "%s/frames.xmf", da);
    SHARD_ENSURE(unlink(path) == 0);
    SHARD_ENSURE(add(&a, 14, 1, &err) == 0 && add(&b, 14, 1, &err) == 0 && same_files(da, db));
    snprintf(link_target, sizeof link_target, "%s/target", root);
    FILE *f = fopen(link_target, "w");
    SHARD_ENSURE(f && fputs("precious\n", f) >= 0 && fclose(f) == 0);
    snprintf(path, sizeof path, "%s/surfaces.xmf", da);
    SHARD_ENSURE(unlink(path) == 0 && symlink(link_target, path) == 0);
    SHARD_ENSURE(add(&a, 16, 1, &err) == 0 && add(&b, 16, 1, &err) == 0 && same_files(da, db));
    struct stat st;
    SHARD_ENSURE(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    text = slurp(root, "target");
    SHARD_ENSURE(strcmp(text, "precious\n") == 0);
    free(text);

    /* an output the cells index cannot take (a folder at its temporary name, and its file gone): taken back,
     * particles.xmf and frames.xmf as they were, and the next output lists what it should */
    char *before[2] = {slurp(da, "particles.xmf"), slurp(da, "frames.xmf")};
    snprintf(path, sizeof path, "%s/surfaces.xmf", da);
    SHARD_ENSURE(unlink(path) == 0);
    snprintf(path, sizeof path, "%s/surfaces.xmf.tmp", da);
    SHARD_ENSURE(mkdir(path, 0777) == 0);
    long listed = a.n_listed;
    SHARD_ENSURE(add(&a, 17, 1, &err) == SHARD_EXIT_IO && strstr(err.msg, "surfaces.xmf.tmp") != NULL);
    SHARD_ENSURE(a.n_listed == listed);
    char *after[2] = {slurp(da, "particles.xmf"), slurp(da, "frames.xmf")};
    SHARD_ENSURE(strcmp(before[0], after[0]) == 0 && strcmp(before[1], after[1]) == 0);
    SHARD_ENSURE(rmdir(path) == 0);
    SHARD_ENSURE(add(&a, 17, 1, &err) == 0 && add(&b, 17, 1, &err) == 0 && same_files(da, db));
    for (int k = 0; k < 2; k++)
        free(before[k]), free(after[k]);

    /* a full disk met by an append (a file size limit: the reservation fails with EFBIG): the output taken back,
     * every index file as it was */
    const char *names[] = {"particles.xmf", "frames.xmf", "surfaces.xmf"};
    char *kept[3];
    for (int k = 0; k < 3; k++)
        kept[k] = slurp(da, names[k]);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim, tight;
    SHARD_ENSURE(getrlimit(RLIMIT_FSIZE, &lim) == 0);
    tight = lim;
    tight.rlim_cur = (rlim_t)strlen(kept[0]) + 100;
    SHARD_ENSURE(setrlimit(RLIMIT_FSIZE, &tight) == 0);
    listed = a.n_listed;
    int rc = add(&a, 18, 1, &err);
    SHARD_ENSURE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    SHARD_ENSURE(rc == SHARD_EXIT_IO && strstr(err.msg, "particles.xmf") != NULL && a.n_listed == listed);
    for (int k = 0; k < 3; k++) {
        char *now = slurp(da, names[k]);
        SHARD_ENSURE(strcmp(now, kept[k]) == 0);
        free(now), free(kept[k]);
    }
    SHARD_ENSURE(add(&a, 18, 1, &err) == 0 && add(&b, 18, 1, &err) == 0 && same_files(da, db));

    shard_xdmf_free(&a), shard_xdmf_free(&b);
    char cmd[sizeof root + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    if (shard_test_failures == 0 && system(cmd) != 0)
        fprintf(stderr, "note: %s not removed\n", root);
    return SHARD_TEST_RESULT();
}
