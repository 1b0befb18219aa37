/* `shard partition`: partition statistics for P ranks without running (see partition_report.h). */
#include "shard/partition_report.h"

#include "sim_impl.h"

#include "shard/fileio.h"
#include "shard/partition.h"
#include "shard/partition_stats.h"
#include "shard/sample.h"
#include "shard/scene.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void shard_partition_row(const char *name, const int64_t *v, int n, double scale)
{
    double mn = INFINITY, mx = -INFINITY, sum = 0.0;
    for (int k = 0; k < n; k++) {
        double x = (double)v[k] * scale;
        mn = fmin(mn, x), mx = fmax(mx, x), sum += x;
    }
    double avg = sum / n;
    printf("  %-18s %14.0f %14.1f %14.0f %10.3f\n", name, mn, avg, mx, avg > 0 ? mx / avg : 0.0);
}

/* Every rank: the scene's text from rank 0, parsed; the bond radius and module of every body. */
static int shard_partition_scene(shard_comm *c, const char *path, shard_scene *sc, double **h, int32_t **module,
                                 int *n_modules, shard_error *err)
{
    char *text = NULL;
    size_t len = 0;
    if (shard_comm_rank(c) == 0)
        shard_file_read_all(path, "scene file", SHARD_SCENE_MAX_BYTES, &text, &len, err);
    if (shard_comm_agree(c, err, 0)) {
        free(text);
        return err->code;
    }
    uint64_t n64 = len;
    shard_comm_bcast(c, &n64, sizeof n64, 0);
    char *buf = shard_malloc((size_t)n64 + 1);
    if (shard_comm_rank(c) == 0)
        memcpy(buf, text, (size_t)n64);
    free(text);
    shard_comm_bcast(c, buf, (size_t)n64, 0);
    buf[n64] = '\0';
    int rc = shard_scene_parse(path, buf, (size_t)n64, sc, err);
    free(buf);
    if (!rc)
        rc = shard_sim_load_meshes(sc, err);
    /* Bond radii from the bodies' matter modules, as the run would have them. */
    shard_sim_tables tb;
    shard_sim_default_tables(NULL, &tb);
    *n_modules = tb.n_modules;
    *h = shard_malloc(((size_t)sc->n_bodies + 1) * sizeof **h);
    *module = shard_malloc(((size_t)sc->n_bodies + 1) * sizeof **module);
    for (int b = 0; b < sc->n_bodies && !rc; b++) {
        int m = sc->bodies[b].module; /* the scene was read with this build's table */
        (*h)[b] = tb.modules[m]->bond_radius ? tb.modules[m]->bond_radius(sc, b) : 0.0;
        (*module)[b] = m;
    }
    return rc; /* every rank parsed the same text: the same verdict */
}

static void shard_partition_print(const shard_partition_opts *o, int procs, int64_t n, int64_t nb, double tpart,
                                  const shard_part_stats *st)
{
    printf("Partition of %s for %d rank(s) (recursive coordinate bisection of the rest positions, weight 1 + "
           "bonds, as the run's start-up; computed on %d process(es))\n",
           o->scene, o->nparts, procs);
    printf("Particles: %lld, bonds: %lld (%.2f per particle), edge cut: %lld (%.2f %% of bonds)\n", (long long)n,
           (long long)nb, (double)nb / (double)n, (long long)st->edge_cut,
           nb > 0 ? 200.0 * (double)st->edge_cut / (double)nb : 0.0);
    printf("Partitioning time: %.3f s\n", tpart);
    printf("\n  %-18s %14s %14s %14s %10s\n", "per rank", "min", "avg", "max", "max/avg");
    shard_partition_row("owned", st->owned, o->nparts, 1.0);
    shard_partition_row("bonds (work)", st->bonds, o->nparts, 1.0);
    shard_partition_row("bond ghosts", st->ghosts, o->nparts, 1.0);
    shard_partition_row("neighbour ranks", st->neighbors, o->nparts, 1.0);
    shard_partition_row("halo bytes/step", st->ghosts, o->nparts, SHARD_HALO_BYTES_PER_GHOST);
    int64_t total_ghosts = 0;
    for (int k = 0; k < o->nparts; k++)
        total_ghosts += st->ghosts[k];
    printf("\nHalo bytes per step, all ranks: %.6g (x, v and B of every bond ghost; contact ghosts not "
           "counted)\n",
           (double)total_ghosts * SHARD_HALO_BYTES_PER_GHOST);
    if (o->per_rank) {
        printf("\n%6s %12s %12s %12s %10s %14s\n", "rank", "owned", "bonds", "ghosts", "neighbours", "halo_bytes");
        for (int k = 0; k < o->nparts; k++)
            printf("%6d %12lld %12lld %12lld %10lld %14lld\n", k, (long long)st->owned[k], (long long)st->bonds[k],
                   (long long)st->ghosts[k], (long long)st->neighbors[k],
                   (long long)st->ghosts[k] * SHARD_HALO_BYTES_PER_GHOST);
    }
    fflush(stdout);
}

static int shard_partition_csv(const shard_partition_opts *o, const shard_part_stats *st, shard_error *err)
{
    FILE *fp = fopen(o->csv, "w");
    if (!fp)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot write CSV: %s", o->csv, strerror(errno));
    fprintf(fp, "rank,owned,bonds,ghosts,neighbours,halo_bytes\n");
    for (int k = 0; k < o->nparts; k++)
        fprintf(fp, "%d,%lld,%lld,%lld,%lld,%lld\n", k, (long long)st->owned[k], (long long)st->bonds[k],
                (long long)st->ghosts[k], (long long)st->neighbors[k],
                (long long)st->ghosts[k] * SHARD_HALO_BYTES_PER_GHOST);
    if (fclose(fp) != 0)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot write CSV: %s", o->csv, strerror(errno));
    return 0;
}

int shard_partition_report(shard_comm *c, const shard_partition_opts *o, shard_error *err)
{
    memset(err, 0, sizeof *err);
    shard_scene sc = {0};
    double *h = NULL;
    int32_t *module = NULL;
    int n_modules = 0;
    if (shard_partition_scene(c, o->scene, &sc, &h, &module, &n_modules, err)) {
        free(h), free(module);
        shard_scene_free(&sc);
        return err->code;
    }
    /* The run's start-up, without the migration: every process samples its share of the lattice planes (so the
     * memory per process is that of a run on as many ranks), then the shares are partitioned into nparts
     * parts, whatever the number of processes. */
    int rc = 0;
    if (shard_sample_check_sizes(&sc, shard_comm_size(c), err) == 0) {
        shard_share share;
        int64_t n = 0, nb = 0;
        int64_t *body_count = shard_calloc((size_t)sc.n_bodies + 1, sizeof *body_count);
        rc = shard_share_sample(c, &sc, h, &share, body_count, &n, &nb, err);
        free(body_count);
        if (!rc && n < o->nparts)
            rc = shard_error_at(err, sc.path, &sc.bodies[0].loc,
                                "the scene has %lld particle(s) in total, fewer than the %d ranks asked for",
                                (long long)n, o->nparts);
        if (rc) {
            shard_share_free(&share);
        } else {
            int *has_halo = shard_calloc((size_t)n_modules + 1, sizeof *has_halo);
            shard_partition_kinds kinds = {.n_modules = n_modules, .body_module = module, .has_halo = has_halo};
            shard_block *blocks = shard_calloc((size_t)n_modules + 1, sizeof *blocks);
            shard_particles p;
            memset(&p, 0, sizeof p);
            shard_csr bonds = {0};
            uint8_t *broken = NULL;
            int32_t *ghost_owner = NULL;
            shard_partition_share_store(c, &share, NULL, NULL, &kinds, &p, blocks, &bonds, &broken, NULL, &ghost_owner);
            shard_share_free(&share);
            double t0 = shard_wtime();
            int32_t *part = shard_malloc((p.n_owned + 1) * sizeof *part);
            rc = shard_partition_share(c, &p, &bonds, o->nparts, part, err);
            double tpart = shard_comm_max(c, shard_wtime() - t0);
            if (!rc) {
                size_t nl = p.n_owned + p.n_bond_ghost;
                double *where = shard_malloc((nl + 1) * sizeof *where);
                for (size_t i = 0; i < p.n_owned; i++)
                    where[i] = (double)part[i];
                shard_partition_ghost_where(c, &p, ghost_owner, where);
                shard_part_stats st;
                shard_part_stats_compute_dist(c, &p, &bonds, where, o->nparts, &st);
                free(where);
                if (shard_comm_rank(c) == 0) {
                    shard_partition_print(o, shard_comm_size(c), n, nb, tpart, &st);
                    if (o->csv)
                        shard_partition_csv(o, &st, err);
                }
                shard_part_stats_free(&st);
                rc = shard_comm_agree(c, err, 0);
            }
            free(part), free(ghost_owner), free(broken), free(has_halo);
            for (int m = 0; m < n_modules; m++)
                shard_block_free(&blocks[m]);
            free(blocks);
            shard_csr_free(&bonds);
            shard_particles_free(&p);
        }
    } else {
        rc = err->code;
    }
    free(h), free(module);
    shard_scene_free(&sc);
    return rc;
}
