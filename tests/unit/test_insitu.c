/* In-situ module without scripts, in every build: with no script it costs nothing and every call is a safe
 * no-op; `shard --version` gets the right Catalyst line; a build without ParaView refuses a script with a message
 * that says how to get Catalyst.  Scripts themselves are tested by tests/insitu (Catalyst builds only). */
#include "shard/comm.h"
#include "shard/insitu.h"
#include "test.h"

#include <string.h>

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    shard_error err = {.code = 99};
    shard_insitu *h = shard_insitu_create(c, 0, NULL, NULL, NULL, &err);
    SHARD_ENSURE(h == NULL);
    SHARD_ENSURE(err.code == 0);
    for (long step = 0; step < 3; step++)
        SHARD_ENSURE(!shard_insitu_wants(h, step));
    double x[3] = {0, 0, 0};
    shard_insitu_fields f = {.n = 1, .position = x};
    err.code = 99;
    SHARD_ENSURE(shard_insitu_execute(h, 0, 0.0, &f, &err) == 0);
    SHARD_ENSURE(err.code == 0);
    shard_insitu_destroy(&h);
    shard_insitu_destroy(NULL);
    SHARD_ENSURE(h == NULL);

    const char *v = shard_insitu_version();
#ifdef SHARD_HAVE_CATALYST
    SHARD_ENSURE(strncmp(v, "on (ParaView ", 13) == 0);
#else
    SHARD_ENSURE(strcmp(v, "off") == 0);
    const char *scripts[1] = {"extracts.py"};
    long every[1] = {10};
    h = shard_insitu_create(c, 1, scripts, every, "out", &err);
    SHARD_ENSURE(h == NULL);
    SHARD_ENSURE(err.code == SHARD_EXIT_INPUT);
    SHARD_ENSURE(strstr(err.msg, "Catalyst is not built into this shard") != NULL);
    SHARD_ENSURE(strstr(err.msg, "-DSHARD_WITH_CATALYST=ON") != NULL);
    SHARD_ENSURE(strstr(err.msg, "'extracts.py'") != NULL);
#endif
    int rc = SHARD_TEST_RESULT();
    shard_comm_finalize(&c);
    return rc;
}
