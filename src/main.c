/* The shard command line: run, check, --help, --version.  Parses arguments on every rank (they are the same
 * everywhere), so a usage error is a global error: rank 0 prints it, every rank exits with code 2. */
#include "shard/balance.h"
#include "shard/comm.h"
#include "shard/insitu.h"
#include "shard/partition_report.h"
#include "shard/run.h"
#include "shard_git_hash.h" /* generated at build time (cmake/git_hash.cmake) */

#include <errno.h>
#include <libfyaml.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef SHARD_HAVE_HDF5
#include <hdf5.h>
#endif

static const char *shard_usage =
    "usage: shard run [SCENE.yaml] [--steps N | --until T] [--dt DT] [--out DIR] [--restart FILE]\n"
    "                 [--catalyst SCRIPT.py]... [--catalyst-every N] [--quiet]\n"
    "       shard check SCENE.yaml\n"
    "       shard partition SCENE.yaml --ranks P [--per-rank] [--csv FILE]\n"
    "       shard --help | --version\n"
    "\n"
    "  run      run a scene (without SCENE: the demo, jobs/scenes/demo.yaml)\n"
    "  check    validate a scene and print its summary (bodies, particles, materials, time step)\n"
    "  partition  partition a scene for P ranks without running it: owned and ghost counts, edge cut,\n"
    "           halo bytes per step, imbalance, neighbour ranks (one process is enough)\n"
    "\n"
    "  --steps N    number of steps (overrides run.steps / run.end_time)\n"
    "  --until T    simulated end time in seconds (overrides run.steps / run.end_time)\n"
    "  --dt DT      time step in seconds (overrides run.dt)\n"
    "  --out DIR    folder of every file the run writes (overrides run.output_dir, output.dir and\n"
    "               checkpoint.dir)\n"
    "  --restart FILE  continue from checkpoint FILE, on any number of ranks (SCENE, when given, must be the\n"
    "               scene file it was written with; without SCENE its stored copy is used)\n"
    "  --catalyst SCRIPT.py  run a ParaView Catalyst script in situ (repeatable; with the scene's catalyst:)\n"
    "  --catalyst-every N    steps between runs of the --catalyst scripts (default 1; step 0 included)\n"
    "  --quiet      no progress or diagnostics, only the final report\n"
    "  --ranks P    (partition) number of ranks to partition for\n"
    "  --per-rank   (partition) one line per rank\n"
    "  --csv FILE   (partition) write the per-rank figures as CSV\n"
    "\n"
    "Run on several ranks with: mpiexec -n 4 shard run SCENE.yaml\n";

static void shard_main_version(void)
{
    char mpi[256];
    shard_comm_library_version(mpi, sizeof mpi);
    printf("shard %s (git %s)\n", SHARD_VERSION_STRING, SHARD_GIT_HASH);
    printf("MPI: %s\n", mpi);
    char zoltan[128];
    shard_balancer_library_version(zoltan, sizeof zoltan);
    printf("Zoltan: %s\n", zoltan);
#ifdef SHARD_HAVE_HDF5
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    printf("HDF5: %u.%u.%u (parallel)\n", maj, min, rel);
#else
    printf("HDF5: not built in\n");
#endif
    printf("libfyaml: %s\n", fy_library_version());
    printf("Catalyst: %s\n", shard_insitu_version());
}

/* The demo scene: ./jobs/scenes/demo.yaml, else beside the executable's source tree (build/../jobs/...). */
static const char *shard_main_demo(char *buf, size_t len)
{
    const char *rel = "jobs/scenes/demo.yaml";
    if (access(rel, R_OK) == 0)
        return rel;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            const char *up[] = {"..", "../..", "../share/shard"};
            for (size_t k = 0; k < sizeof up / sizeof up[0]; k++) {
                snprintf(buf, len, "%s/%s/%s", exe, up[k], k == 2 ? "scenes/demo.yaml" : rel);
                if (access(buf, R_OK) == 0)
                    return buf;
            }
        }
    }
    return rel;
}

static int shard_main_number(const char *opt, const char *s, double *out, char *msg, size_t len)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (!s[0] || *end || errno || !(v >= 0.0) || !isfinite(v)) {
        snprintf(msg, len, "%s: expected a finite non-negative number, got '%s'", opt, s);
        return 1;
    }
    *out = v;
    return 0;
}

/* shard partition SCENE --ranks P [--per-rank] [--csv FILE] */
static int shard_main_partition(shard_comm *c, int argc, char **argv)
{
    char msg[1024] = "";
    shard_partition_opts o = {0};
    for (int i = 2; i < argc && !msg[0]; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--per-rank")) {
            o.per_rank = 1;
        } else if (!strcmp(a, "--ranks") || !strcmp(a, "--csv")) {
            if (i + 1 >= argc) {
                snprintf(msg, sizeof msg, "%s needs a value", a);
                break;
            }
            const char *val = argv[++i];
            if (!strcmp(a, "--csv")) {
                o.csv = val;
            } else {
                char *end = NULL;
                long p = strtol(val, &end, 10);
                if (!val[0] || *end || p < 1 || p > 1000000)
                    snprintf(msg, sizeof msg, "--ranks: expected a rank count from 1 to 1000000, got '%s'", val);
                o.nparts = (int)p;
            }
        } else if (a[0] == '-' && a[1]) {
            snprintf(msg, sizeof msg, "unknown option '%s' for partition (see shard --help)", a);
        } else if (!o.scene) {
            o.scene = a;
        } else {
            snprintf(msg, sizeof msg, "more than one scene given ('%s' and '%s')", o.scene, a);
        }
    }
    if (!msg[0] && !o.scene)
        snprintf(msg, sizeof msg, "partition needs a scene file (shard partition SCENE.yaml --ranks P)");
    if (!msg[0] && o.nparts < 1)
        snprintf(msg, sizeof msg, "partition needs --ranks P");
    if (msg[0])
        shard_fail_all(c, SHARD_EXIT_USAGE, msg);
    shard_error err;
    if (shard_partition_report(c, &o, &err))
        shard_fail_all(c, err.code, err.msg);
    shard_comm_finalize(&c);
    return 0;
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int rank = shard_comm_rank(c);
    char msg[1024] = "";
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (!cmd || !strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        if (rank == 0)
            fputs(shard_usage, cmd ? stdout : stderr);
        shard_comm_finalize(&c);
        return cmd ? 0 : SHARD_EXIT_USAGE;
    }
    if (!strcmp(cmd, "--version")) {
        if (rank == 0)
            shard_main_version();
        shard_comm_finalize(&c);
        return 0;
    }
    if (!strcmp(cmd, "partition"))
        return shard_main_partition(c, argc, argv);
    if (strcmp(cmd, "run") && strcmp(cmd, "check")) {
        snprintf(msg, sizeof msg, "unknown command '%s' (use run, check or partition; see shard --help)", cmd);
        shard_fail_all(c, SHARD_EXIT_USAGE, msg);
    }
    int check = !strcmp(cmd, "check"), quiet = 0;
    const char *scene = NULL;
    shard_overrides ov = shard_default_overrides();
    for (int i = 2; i < argc && !msg[0]; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--catalyst") || !strcmp(a, "--catalyst-every")) {
            if (!has_value) {
                snprintf(msg, sizeof msg, "%s needs a value", a);
                break;
            }
            const char *val = argv[++i];
            if (check) {
                snprintf(msg, sizeof msg, "%s is for shard run, not shard check", a);
            } else if (!strcmp(a, "--catalyst")) {
                if (ov.n_catalyst == (int)(sizeof ov.catalyst / sizeof ov.catalyst[0]))
                    snprintf(msg, sizeof msg, "--catalyst: at most %d scripts",
                             (int)(sizeof ov.catalyst / sizeof ov.catalyst[0]));
                else
                    ov.catalyst[ov.n_catalyst++] = val;
            } else {
                char *end = NULL;
                long e = strtol(val, &end, 10);
                if (!val[0] || *end || e < 1)
                    snprintf(msg, sizeof msg, "--catalyst-every: expected a positive integer, got '%s'", val);
                ov.catalyst_every = e;
            }
        } else if (!strcmp(a, "--steps") || !strcmp(a, "--until") || !strcmp(a, "--dt") || !strcmp(a, "--out") ||
                   !strcmp(a, "--restart")) {
            if (!has_value) {
                snprintf(msg, sizeof msg, "%s needs a value", a);
                break;
            }
            const char *val = argv[++i];
            double d = 0.0;
            if (!strcmp(a, "--out")) {
                if (!val[0])
                    snprintf(msg, sizeof msg, "--out: expected a folder name, got ''");
                ov.out_dir = val;
            } else if (!strcmp(a, "--restart")) {
                ov.restart = val;
                if (check)
                    snprintf(msg, sizeof msg, "--restart is for shard run, not shard check");
            } else if (!shard_main_number(a, val, &d, msg, sizeof msg)) {
                if (!strcmp(a, "--steps")) {
                    if (d != (double)(long)d || d < 1)
                        snprintf(msg, sizeof msg, "--steps: expected a positive integer, got '%s'", val);
                    ov.steps = (long)d;
                } else if (!strcmp(a, "--until")) {
                    if (d <= 0.0)
                        snprintf(msg, sizeof msg, "--until: expected a time > 0, got '%s'", val);
                    ov.until = d;
                } else {
                    if (d <= 0.0)
                        snprintf(msg, sizeof msg, "--dt: expected a time step > 0, got '%s'", val);
                    ov.dt = d;
                }
            }
        } else if (a[0] == '-' && a[1]) {
            snprintf(msg, sizeof msg, "unknown option '%s' (see shard --help)", a);
        } else if (!scene) {
            scene = a;
        } else {
            snprintf(msg, sizeof msg, "more than one scene given ('%s' and '%s')", scene, a);
        }
    }
    if (!msg[0] && ov.steps > 0 && ov.until > 0.0)
        snprintf(msg, sizeof msg, "give --steps or --until, not both");
    if (!msg[0] && check && !scene)
        snprintf(msg, sizeof msg, "check needs a scene file (shard check SCENE.yaml)");
    if (msg[0])
        shard_fail_all(c, SHARD_EXIT_USAGE, msg);
    char demo[PATH_MAX + 64];
    if (!scene && !ov.restart)
        scene = shard_main_demo(demo, sizeof demo);

    shard_error err;
    shard_sim *sim = shard_sim_open(c, scene, &ov, &err);
    if (!sim)
        shard_fail_all(c, err.code ? err.code : SHARD_EXIT_INPUT, err.msg);
    if (check) {
        shard_sim_summary(sim);
    } else {
        shard_sim_run(sim, quiet);
        shard_sim_report(sim);
    }
    shard_sim_destroy(&sim);
    shard_comm_finalize(&c);
    return 0;
}
