/* In-situ visualisation with Catalyst built in: the interface of shard/insitu.h, which loads the Catalyst module
 * (libshard_catalyst.so, io/catalyst_adaptor.cxx) the first time a run asks for a script.
 *
 * This file owns the decisions that must cost nothing: which steps are due (wants), and whether ParaView is
 * loaded at all.  Linking ParaView into shard itself would load some 200 libraries into every process at start-up
 * (about 200 MiB of resident memory per rank and half a second, measured on Debian 12's ParaView 5.11) even in
 * runs without a script; loaded on demand, only runs that use Catalyst pay.  The module is looked for at
 * $SHARD_CATALYST_MODULE, beside the executable (and its parent folder, for the tests), then where the build put it.
 * It leaves the dataset and the scripts to the module.
 */
#include "shard/insitu.h"

#include "catalyst_module.h"
#include "shard/comm.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SHARD_CATALYST_MODULE_PATH
#error "the build defines SHARD_CATALYST_MODULE_PATH (cmake/catalyst.cmake)"
#endif

struct shard_insitu {
    void *module; /* dlopen handle; never closed (see below) */
    const shard_catalyst_api *api;
    void *impl;
    int n_scripts;
    long every[SHARD_INSITU_MAX_SCRIPTS];
    int due[SHARD_INSITU_MAX_SCRIPTS];
};

/* dlopen of the first candidate that loads; on failure the last loader message is in why.  Local. */
static void *shard_insitu_load(char *why, size_t len)
{
    char cand[3][PATH_MAX + 32];
    int n = 0;
    const char *env = getenv("SHARD_CATALYST_MODULE");
    if (env && env[0])
        snprintf(cand[n++], sizeof cand[0], "%s", env);
    char exe[PATH_MAX];
    ssize_t got = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (got > 0) {
        exe[got] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(cand[n++], sizeof cand[0], "%s/libshard_catalyst.so", exe);
        }
    }
    snprintf(cand[n++], sizeof cand[0], "%s", SHARD_CATALYST_MODULE_PATH);
    snprintf(why, len, "no candidate");
    for (int k = 0; k < n; k++) {
        if (access(cand[k], F_OK) != 0) {
            snprintf(why, len, "%.1000s: not found", cand[k]);
            continue;
        }
        /* RTLD_GLOBAL: the module brings libpython, whose symbols the Python extension modules that ParaView
         * imports later (numpy's among them) expect to find in the global scope. */
        void *h = dlopen(cand[k], RTLD_NOW | RTLD_GLOBAL);
        if (h)
            return h;
        snprintf(why, len, "%.1000s", dlerror());
    }
    return NULL;
}

shard_insitu *shard_insitu_create(shard_comm *c, int n_scripts, const char *const *scripts, const long *every,
                                  const char *out_dir, shard_error *err)
{
    memset(err, 0, sizeof *err);
    if (n_scripts <= 0)
        return NULL;
    /* Same inputs on every rank: these verdicts need no communication. */
    if (n_scripts > SHARD_INSITU_MAX_SCRIPTS) {
        shard_error_set(err, SHARD_EXIT_INPUT, "catalyst: at most %d scripts, got %d", SHARD_INSITU_MAX_SCRIPTS,
                        n_scripts);
        return NULL;
    }
    for (int k = 0; k < n_scripts; k++)
        if (every[k] < 1) {
            shard_error_set(err, SHARD_EXIT_INPUT, "catalyst script '%s': every must be an integer >= 1, got %ld",
                            scripts[k], every[k]);
            return NULL;
        }

    shard_insitu *h = shard_calloc(1, sizeof *h);
    char why[1100];
    h->module = shard_insitu_load(why, sizeof why);
    if (!h->module) {
        shard_error_set(err, SHARD_EXIT_INPUT,
                        "Catalyst: cannot load the Catalyst module (%s); rebuild shard, or "
                        "set SHARD_CATALYST_MODULE to libshard_catalyst.so",
                        why);
    } else {
        const shard_catalyst_api *(*entry)(void) = NULL;
        *(void **)&entry = dlsym(h->module, SHARD_CATALYST_ENTRY);
        h->api = entry ? entry() : NULL;
        if (!h->api || h->api->abi != SHARD_CATALYST_ABI)
            shard_error_set(err, SHARD_EXIT_INPUT,
                            "Catalyst: the Catalyst module does not match this shard "
                            "(rebuild both)");
    }
    /* A module that loads on one node but not on another must not leave the others inside ParaView's
     * collectives.  A loaded module is never closed: its libraries have run their static constructors and
     * registered exit handlers, which must still be there when the process ends. */
    if (shard_comm_any_error(c, err)) {
        free(h);
        return NULL;
    }
    /* The scripts learn their output folder from the environment (a legacy Catalyst script has no other input
     * from the adaptor); what the user set wins. */
    if (out_dir && out_dir[0])
        setenv("SHARD_CATALYST_OUT", out_dir, 0);
    h->impl = h->api->create(shard_comm_mpi(c), n_scripts, scripts, err);
    if (!h->impl) {
        free(h);
        return NULL;
    }
    h->n_scripts = n_scripts;
    memcpy(h->every, every, (size_t)n_scripts * sizeof *every);
    return h;
}

int shard_insitu_wants(const shard_insitu *h, long step)
{
    if (!h)
        return 0;
    for (int k = 0; k < h->n_scripts; k++)
        if (step % h->every[k] == 0)
            return 1;
    return 0;
}

int shard_insitu_execute(shard_insitu *h, long step, double time, const shard_insitu_fields *f, shard_error *err)
{
    memset(err, 0, sizeof *err);
    if (!h)
        return 0;
    int n_due = 0;
    for (int k = 0; k < h->n_scripts; k++)
        if (step % h->every[k] == 0)
            h->due[n_due++] = k;
    if (n_due == 0)
        return 0;
    return h->api->execute(h->impl, step, time, n_due, h->due, f, err);
}

void shard_insitu_destroy(shard_insitu **h)
{
    if (!h || !*h)
        return;
    (*h)->api->destroy((*h)->impl);
    free(*h);
    *h = NULL;
}

const char *shard_insitu_unavailable(void) { return NULL; }

const char *shard_insitu_version(void) { return "on (ParaView " SHARD_PARAVIEW_VERSION ")"; }
