/* In-situ visualisation when Shard is built without ParaView (SHARD_WITH_CATALYST off or ParaView not found).
 *
 * Implements include/shard/insitu.h so that the driver needs no #ifdef: asking for a Catalyst script is a
 * global input error that says how to get Catalyst, and with no script every call is a no-op.  The CMake build
 * compiles either this file or io/catalyst_adaptor.cxx, never both.
 */
#include "shard/insitu.h"

#include <string.h>

shard_insitu *shard_insitu_create(shard_comm *c, int n_scripts, const char *const *scripts, const long *every,
                                  const char *out_dir, shard_error *err)
{
    memset(err, 0, sizeof *err);
    /* Every rank sees the same n_scripts (same scene text, same command line): no communication needed. */
    if (n_scripts > 0)
        shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot run catalyst script '%s'", shard_insitu_unavailable(),
                        scripts[0]);
    return NULL;
}

const char *shard_insitu_unavailable(void)
{
    return "Catalyst is not built into this shard (rebuild with -DSHARD_WITH_CATALYST=ON and paraview-dev installed)";
}

int shard_insitu_wants(const shard_insitu *h, long step) { return 0; }

int shard_insitu_execute(shard_insitu *h, long step, double time, const shard_insitu_fields *f, shard_error *err)
{
    memset(err, 0, sizeof *err);
    return 0;
}

void shard_insitu_destroy(shard_insitu **h)
{
    if (h)
        *h = NULL;
}

const char *shard_insitu_version(void) { return "off"; }
