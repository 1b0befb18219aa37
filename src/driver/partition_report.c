/* `shard partition`: partition statistics for P ranks without running (see partition_report.h). */
#include "shard/partition_report.h"

#include "sim_impl.h"

#include "shard/fileio.h"
#include "shard/neighbor.h"
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

static int shard_partition_work(const shard_partition_opts *o, shard_error *err)
{
    char *text = NULL;
    size_t len = 0;
    shard_scene sc = {0};
    shard_sampled g = {0};
    shard_csr gb = {0};
    int32_t *part = NULL;
    shard_part_stats st = {0};
    int rc = shard_file_read_all(o->scene, "scene file", SHARD_SCENE_MAX_BYTES, &text, &len, err);
    if (!rc)
        rc = shard_scene_parse(o->scene, text, len, &sc, err);
    double *h = NULL;
    if (!rc) {
        /* Bond radii from the bodies' matter modules, as the run would have them. */
        shard_sim_tables tb;
        shard_sim_default_tables(NULL, &tb);
        h = shard_malloc(((size_t)sc.n_bodies + 1) * sizeof *h);
        for (int b = 0; b < sc.n_bodies && !rc; b++) {
            int m = shard_sim_kind_of(&sc, &tb, b, err);
            if (m < 0)
                rc = err->code;
            else
                h[b] = tb.modules[m]->bond_radius ? tb.modules[m]->bond_radius(&sc, b) : 0.0;
        }
    }
    if (!rc)
        rc = shard_sample_scene_bonds(&sc, h, &g, &gb, err);
    if (!rc && (int64_t)g.n < o->nparts)
        rc = shard_error_at(err, sc.path, &sc.bodies[0].loc,
                            "the scene has %zu particle(s) in total, fewer than the %d ranks asked for", g.n,
                            o->nparts);
    int64_t cut = 0;
    double t0 = shard_wtime();
    if (!rc) {
        part = shard_malloc((g.n + 1) * sizeof *part);
        rc = shard_partition_graph(g.n, &gb, o->nparts, part, &cut, err);
    }
    if (!rc) {
        double tpart = shard_wtime() - t0;
        shard_part_stats_compute(g.n, &gb, o->nparts, part, &st);
        int64_t nb = gb.start[g.n];
        printf("Partition of %s for %d rank(s) (METIS k-way, vertex weight 1 + bonds)\n", o->scene, o->nparts);
        printf("Particles: %zu, bonds: %lld (%.2f per particle), edge cut: %lld (METIS: %lld; %.2f %% of bonds)\n",
               g.n, (long long)nb, (double)nb / (double)g.n, (long long)st.edge_cut, (long long)cut,
               nb > 0 ? 200.0 * (double)st.edge_cut / (double)nb : 0.0);
        printf("Partitioning time: %.3f s\n", tpart);
        printf("\n  %-18s %14s %14s %14s %10s\n", "per rank", "min", "avg", "max", "max/avg");
        shard_partition_row("owned", st.owned, o->nparts, 1.0);
        shard_partition_row("bonds (work)", st.bonds, o->nparts, 1.0);
        shard_partition_row("bond ghosts", st.ghosts, o->nparts, 1.0);
        shard_partition_row("neighbour ranks", st.neighbors, o->nparts, 1.0);
        shard_partition_row("halo bytes/step", st.ghosts, o->nparts, SHARD_HALO_BYTES_PER_GHOST);
        int64_t total_ghosts = 0;
        for (int k = 0; k < o->nparts; k++)
            total_ghosts += st.ghosts[k];
        printf("\nHalo bytes per step, all ranks: %.6g (x, v and B of every bond ghost; contact ghosts not "
               "counted)\n",
               (double)total_ghosts * SHARD_HALO_BYTES_PER_GHOST);
        if (o->per_rank) {
            printf("\n%6s %12s %12s %12s %10s %14s\n", "rank", "owned", "bonds", "ghosts", "neighbours",
                   "halo_bytes");
            for (int k = 0; k < o->nparts; k++)
                printf("%6d %12lld %12lld %12lld %10lld %14lld\n", k, (long long)st.owned[k], (long long)st.bonds[k],
                       (long long)st.ghosts[k], (long long)st.neighbors[k],
                       (long long)st.ghosts[k] * SHARD_HALO_BYTES_PER_GHOST);
        }
        if (o->csv) {
            FILE *fp = fopen(o->csv, "w");
            if (!fp) {
                rc = shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot write CSV: %s", o->csv, strerror(errno));
            } else {
                fprintf(fp, "rank,owned,bonds,ghosts,neighbours,halo_bytes\n");
                for (int k = 0; k < o->nparts; k++)
                    fprintf(fp, "%d,%lld,%lld,%lld,%lld,%lld\n", k, (long long)st.owned[k], (long long)st.bonds[k],
                            (long long)st.ghosts[k], (long long)st.neighbors[k],
                            (long long)st.ghosts[k] * SHARD_HALO_BYTES_PER_GHOST);
                if (fclose(fp) != 0)
                    rc = shard_error_set(err, SHARD_EXIT_INPUT, "%s: cannot write CSV: %s", o->csv,
                                         strerror(errno));
            }
        }
        fflush(stdout);
    }
    shard_part_stats_free(&st);
    free(part), free(h);
    shard_csr_free(&gb);
    shard_sampled_free(&g);
    shard_scene_free(&sc);
    free(text);
    return rc;
}

int shard_partition_report(shard_comm *c, const shard_partition_opts *o, shard_error *err)
{
    memset(err, 0, sizeof *err);
    if (shard_comm_rank(c) == 0)
        shard_partition_work(o, err);
    return shard_comm_agree(c, err, 0);
}
