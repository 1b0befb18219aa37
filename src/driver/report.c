/* The end-of-run report and the `shard check` summary (see run.h).  Every figure that sums over particles is
 * an exact sum (shard_comm_xsum), so the report has the same bits on any number of ranks; timings and memory are
 * gathered per rank and shown as min / avg / max, like LAMMPS. */
#include "sim_impl.h"

#include "shard/xsum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scene's balance.method and balance.cost names, by SHARD_BALANCE_* (scene.h). */
static const char *const shard_sim_balance_method[] = {
    [SHARD_BALANCE_RCB] = "rcb", [SHARD_BALANCE_HSFC] = "hsfc", [SHARD_BALANCE_GRAPH] = "graph"};
static const char *const shard_sim_balance_cost[] = {
    [SHARD_BALANCE_COST_TIME] = "time", [SHARD_BALANCE_COST_COUNTS] = "counts"};

/* Per body: mass, centre of mass (3), mean velocity (3), bounding box (6).  Collective; the sums are exact. */
enum { SHARD_BODY_STATS = 13 };
static double *shard_sim_body_stats(shard_sim *s)
{
    int nb = s->scene.n_bodies;
    shard_xsum *sum = shard_malloc(((size_t)nb * 7 + 1) * sizeof *sum);
    double *ext = shard_malloc(((size_t)nb * 6 + 1) * sizeof *ext);
    for (int k = 0; k < 7 * nb; k++)
        shard_xsum_init(&sum[k]);
    for (int b = 0; b < nb; b++)
        for (int k = 0; k < 6; k++)
            ext[6 * b + k] = -INFINITY; /* max of x and of -x */
    const shard_particles *p = &s->p;
    for (size_t i = 0; i < p->n_owned; i++) {
        int b = p->body[i];
        double m = p->mass[i];
        shard_xsum_add(&sum[7 * b], m);
        for (int k = 0; k < 3; k++) {
            shard_xsum_add(&sum[7 * b + 1 + k], m * p->x[3 * i + k]);
            shard_xsum_add(&sum[7 * b + 4 + k], m * p->v[3 * i + k]);
            ext[6 * b + k] = fmax(ext[6 * b + k], -p->x[3 * i + k]);
            ext[6 * b + 3 + k] = fmax(ext[6 * b + 3 + k], p->x[3 * i + k]);
        }
    }
    shard_comm_xsum(s->comm, sum, 7 * nb);
    shard_comm_max_doubles(s->comm, ext, 6 * nb);
    double *out = shard_malloc((size_t)nb * SHARD_BODY_STATS * sizeof *out);
    for (int b = 0; b < nb; b++) {
        double *o = out + SHARD_BODY_STATS * b, m = shard_xsum_round(&sum[7 * b]);
        o[0] = m;
        for (int k = 0; k < 3; k++) {
            o[1 + k] = shard_xsum_round(&sum[7 * b + 1 + k]) / m;
            o[4 + k] = shard_xsum_round(&sum[7 * b + 4 + k]) / m;
            o[7 + k] = -ext[6 * b + k];
            o[10 + k] = ext[6 * b + 3 + k];
        }
    }
    free(sum), free(ext);
    return out;
}

static void shard_sim_print_bodies(const shard_sim *s, const double *st)
{
    printf("Bodies at the end:\n");
    printf("  %-16s %10s %32s %32s %32s\n", "body", "mass (kg)", "centre of mass (m)", "mean velocity (m/s)",
           "extent (m)");
    for (int b = 0; b < s->scene.n_bodies; b++) {
        const double *o = st + SHARD_BODY_STATS * b;
        printf("  %-16s %10.4g   %9.4g %9.4g %9.4g   %9.4g %9.4g %9.4g   %9.4g %9.4g %9.4g\n", s->scene.bodies[b].name,
               o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[10] - o[7], o[11] - o[8], o[12] - o[9]);
    }
}

/* The per-rank figures the report gathers after the timer phases' times, by offset from the number of phases. */
enum {
    SHARD_REPORT_LOOP,              /* loop wall time, s */
    SHARD_REPORT_MEM,               /* peak resident memory, bytes */
    SHARD_REPORT_OWNED,             /* owned particles */
    SHARD_REPORT_GHOSTS,            /* ghosts (bond and contact) */
    SHARD_REPORT_BYTES,             /* bytes sent through every exchange */
    SHARD_REPORT_BONDS,             /* bond entries of the owned particles */
    SHARD_REPORT_IO_SECONDS,        /* seconds in file writes */
    SHARD_REPORT_IO_BYTES,          /* bytes written */
    SHARD_REPORT_BOND_GHOSTS,       /* bond ghosts */
    SHARD_REPORT_HALO_BYTES,        /* bytes sent through bond halos */
    SHARD_REPORT_CONTACT_BYTES,     /* bytes sent to contact ghosts */
    SHARD_REPORT_REBUILD_BYTES,     /* of which in rebuilds */
    SHARD_REPORT_MIGRATE_BYTES,     /* bytes sent in migrations */
    SHARD_REPORT_BALANCE_SECONDS,   /* seconds in balancing */
    SHARD_REPORT_SAMPLE_SECONDS,    /* start-up: sampling (or reading), s */
    SHARD_REPORT_PARTITION_SECONDS, /* start-up: partition and migration, s */
    SHARD_REPORT_STARTUP_BYTES,     /* start-up: bytes sent */
    SHARD_REPORT_STARTUP_RSS,       /* start-up: peak resident memory after it, bytes */
    SHARD_REPORT_N
};

/* This rank's figures: the phases' times, then the figures above; *n_out and *n_ck get the files written. */
static void shard_sim_report_mine(shard_sim *s, double *mine, long *n_out, long *n_ck)
{
    const int NP = s->timer.n;
    for (int k = 0; k < NP; k++)
        mine[k] = s->timer.t[k];
    double *r = mine + NP;
    r[SHARD_REPORT_LOOP] = s->loop_wall;
    r[SHARD_REPORT_MEM] = shard_sim_peak_rss_bytes();
    r[SHARD_REPORT_OWNED] = (double)s->p.n_owned;
    r[SHARD_REPORT_GHOSTS] = (double)(s->p.n_local - s->p.n_owned);
    r[SHARD_REPORT_BYTES] = (double)shard_sim_bytes_sent(s);
    r[SHARD_REPORT_BONDS] = (double)s->bonds.start[s->p.n_owned];
    uint64_t b_out = 0, b_ck = 0;
    double t_out = 0.0, t_ck = 0.0;
    shard_output_stats(s->io.out, n_out, &b_out, &t_out);
    shard_checkpoint_stats(s->io.ckpt, n_ck, &b_ck, &t_ck);
    r[SHARD_REPORT_IO_SECONDS] = t_out + t_ck;
    r[SHARD_REPORT_IO_BYTES] = (double)(b_out + b_ck);
    r[SHARD_REPORT_BOND_GHOSTS] = (double)s->p.n_bond_ghost;
    r[SHARD_REPORT_HALO_BYTES] = (double)shard_sim_bond_halo_bytes(s);
    r[SHARD_REPORT_CONTACT_BYTES] = (double)shard_ghosts_bytes(s->ghosts);
    r[SHARD_REPORT_REBUILD_BYTES] = (double)shard_ghosts_rebuild_bytes(s->ghosts);
    r[SHARD_REPORT_MIGRATE_BYTES] = (double)s->bal.bytes;
    r[SHARD_REPORT_BALANCE_SECONDS] = s->bal.seconds;
    r[SHARD_REPORT_SAMPLE_SECONDS] = s->startup_seconds[0];
    r[SHARD_REPORT_PARTITION_SECONDS] = s->startup_seconds[1];
    r[SHARD_REPORT_STARTUP_BYTES] = (double)s->startup_bytes;
    r[SHARD_REPORT_STARTUP_RSS] = s->startup_rss;
}

/* Over the ranks' rows of all (size rows of nv): min, avg, max and the rank of the max of every figure. */
static void shard_sim_report_spread(const double *all, int size, int nv, double (*st)[4])
{
    for (int k = 0; k < nv; k++) {
        st[k][0] = INFINITY, st[k][1] = 0.0, st[k][2] = -INFINITY, st[k][3] = 0;
        for (int r = 0; r < size; r++) {
            double v = all[(size_t)r * nv + (size_t)k];
            st[k][0] = fmin(st[k][0], v);
            st[k][1] += v / size;
            if (v > st[k][2])
                st[k][2] = v, st[k][3] = r;
        }
    }
}

/* The loop time, the table of the timer phases and the performance. */
static void shard_sim_report_phases(const shard_sim *s, double (*st)[4], int size, long steps)
{
    const int NP = s->timer.n;
    double loop = st[NP + SHARD_REPORT_LOOP][2];
    printf("\nLoop time of %.6g s on %d rank(s) for %ld steps with %lld particles\n", loop, size, steps,
           (long long)s->n_global);
    printf("\n%-10s | %10s | %10s | %10s | %8s | %7s | %6s\n", "Phase", "min (s)", "avg (s)", "max (s)", "max rank",
           "%varavg", "%total");
    printf("-----------+------------+------------+------------+----------+---------+-------\n");
    for (int k = 0; k < NP; k++) {
        double var = st[k][1] > 0.0 ? 100.0 * (st[k][2] - st[k][0]) / st[k][1] : 0.0;
        printf("%-10s | %10.4g | %10.4g | %10.4g | %8d | %7.1f | %6.2f\n", s->timer.name[k], st[k][0], st[k][1],
               st[k][2], (int)st[k][3], var, loop > 0.0 ? 100.0 * st[k][1] / loop : 0.0);
    }
    double ps = loop > 0.0 ? (double)s->n_global * (double)steps / loop : 0.0;
    printf("\nPerformance: %.4g particle-steps/s, %.4g particle-steps/s/core\n", ps, ps / size);
}

/* Memory, the start-up, the particles and ghosts per rank, the bonds and the bytes sent. */
static void shard_sim_report_ranks(const shard_sim *s, double (*st)[4], int size, int64_t contacts)
{
    const int NP = s->timer.n;
    const int MEM = NP + SHARD_REPORT_MEM, OWN = NP + SHARD_REPORT_OWNED, GH = NP + SHARD_REPORT_GHOSTS,
              BY = NP + SHARD_REPORT_BYTES;
    printf("Peak memory per rank: min %.1f MiB, avg %.1f MiB, max %.1f MiB (%.0f bytes per particle over all ranks)\n",
           st[MEM][0] / 1048576.0, st[MEM][1] / 1048576.0, st[MEM][2] / 1048576.0,
           st[MEM][1] * size / (double)s->n_global);
    const int SU0 = NP + SHARD_REPORT_SAMPLE_SECONDS, SU1 = NP + SHARD_REPORT_PARTITION_SECONDS,
              SUB = NP + SHARD_REPORT_STARTUP_BYTES, SUM = NP + SHARD_REPORT_STARTUP_RSS;
    printf("Start-up: %s on %d rank(s) in %.4g s, partitioned and distributed in %.4g s (slowest rank): %lld "
           "particle(s) moved, %.0f bytes sent; peak memory after start-up per rank: min %.1f MiB, avg %.1f MiB, "
           "max %.1f MiB (rank %d)\n",
           s->restarted_at >= 0 ? "read" : "sampled", size, st[SU0][2], st[SU1][2], (long long)s->startup_moved,
           st[SUB][1] * size, st[SUM][0] / 1048576.0, st[SUM][1] / 1048576.0, st[SUM][2] / 1048576.0, (int)st[SUM][3]);
    printf("Owned per rank: min %.0f avg %.1f max %.0f (imbalance %.3f); ghosts per rank: min %.0f avg %.1f max %.0f\n",
           st[OWN][0], st[OWN][1], st[OWN][2], st[OWN][1] > 0 ? st[OWN][2] / st[OWN][1] : 0.0, st[GH][0], st[GH][1],
           st[GH][2]);
    const int BG = NP + SHARD_REPORT_BOND_GHOSTS;
    printf("Bond ghosts per rank: min %.0f avg %.1f max %.0f (the halo lists; contact ghosts: the rest)\n", st[BG][0],
           st[BG][1], st[BG][2]);
    printf("Bonds: %lld (%.2f per particle), edge cut %lld; halo bytes sent: %.0f total; contact rebuilds %ld; "
           "active contacts %lld\n",
           (long long)s->n_bonds_global, (double)s->n_bonds_global / (double)s->n_global, (long long)s->edge_cut,
           st[BY][1] * size, s->rebuilds, (long long)contacts);
    const int BB = NP + SHARD_REPORT_HALO_BYTES, CB = NP + SHARD_REPORT_CONTACT_BYTES,
              RB = NP + SHARD_REPORT_REBUILD_BYTES, MB = NP + SHARD_REPORT_MIGRATE_BYTES;
    printf("Bytes sent: bond halos %.0f, contact ghosts %.0f (of which rebuilds %.0f), migrations %.0f; busiest "
           "rank %.0f (rank %d)\n",
           st[BB][1] * size, st[CB][1] * size, st[RB][1] * size, st[MB][1] * size, st[BY][2], (int)st[BY][3]);
}

/* The balancer's line (only with one). */
static void shard_sim_report_balance(const shard_sim *s, double (*st)[4])
{
    if (!s->bal.balancer)
        return;
    const shard_balance_def *bd = &s->scene.balance;
    printf("Balance (%s, %s cost, every %ld steps, threshold %g, ghost growth %g): %ld check(s), %ld "
           "migration(s) (%ld for ghost growth), %lld particle(s) moved; cost imbalance at the first check "
           "%.3f, largest %.3f",
           shard_sim_balance_method[bd->method], shard_sim_balance_cost[bd->cost], bd->every, bd->threshold,
           bd->ghost_growth, s->bal.checks, s->bal.runs, s->bal.ghost_triggers, (long long)s->bal.moved,
           s->bal.imb_first, s->bal.imb_max);
    if (s->bal.runs > 0)
        printf(", last migration %.3f -> %.3f", s->bal.imb_last_before, s->bal.imb_last_after);
    printf("; %.4g s on the slowest rank\n", st[s->timer.n + SHARD_REPORT_BALANCE_SECONDS][2]);
}

/* The output and checkpoint files written (only with either). */
static void shard_sim_report_io(const shard_sim *s, double (*st)[4], int size, long n_out, long n_ck)
{
    if (!s->io.out && !s->io.ckpt)
        return;
    const int NP = s->timer.n, IOT = NP + SHARD_REPORT_IO_SECONDS, IOB = NP + SHARD_REPORT_IO_BYTES;
    double loop = st[NP + SHARD_REPORT_LOOP][2];
    double bytes = st[IOB][1] * size, secs = st[IOT][2];
    printf("I/O: %ld output file(s), %ld checkpoint(s), %.4g MB written in %.4g s (slowest rank): write "
           "bandwidth %.4g MB/s; I/O phase %.2f %% of the loop time\n",
           n_out, n_ck, bytes / 1e6, secs, secs > 0.0 ? bytes / 1e6 / secs : 0.0,
           loop > 0.0 ? 100.0 * st[s->ph_io][1] / loop : 0.0);
    if (n_ck > 0)
        printf("Last checkpoint: %s\n", shard_checkpoint_last_path(s->io.ckpt));
}

/* The final diagnostics and, with fracture, the broken bonds and the fragments (frag_max: the slowest rank's
 * time in the fragment analysis). */
static void shard_sim_report_final(const shard_sim *s, const shard_diag *d, double frag_max)
{
    printf("Final: t = %.6e s, kinetic %.6e J, elastic %.6e J, momentum %.6e %.6e %.6e, inverted %lld\n",
           shard_sim_now(s), d->kinetic, d->elastic, d->momentum[0], d->momentum[1], d->momentum[2],
           (long long)d->inverted);
    if (!s->frac.on)
        return;
    const shard_fragment_stats *fs = &s->frag.stats;
    printf("Fracture: %lld of %lld bonds (particle pairs) broken (%.3g %%); %lld fragment(s), the largest "
           "%.6g of the mass (label %lld)",
           (long long)d->broken_bonds, (long long)(s->n_bonds_global / 2),
           s->n_bonds_global > 0 ? 200.0 * (double)d->broken_bonds / (double)s->n_bonds_global : 0.0,
           (long long)fs->n_fragments, fs->total_mass > 0.0 ? fs->largest_mass / fs->total_mass : 0.0,
           (long long)fs->largest_label);
    if (isfinite(fs->tau))
        printf(", tau %.4f +- %.4f (%lld fragments of >= %ld particles)", fs->tau, fs->tau_error, (long long)fs->n_fit,
               s->scene.fragments.fit_min);
    printf("\nFragment analysis: %ld run(s), %.4g s in all on the slowest rank (in the I/O row at output "
           "steps)\n",
           s->frag.runs, frag_max);
}

/* The modules' lines (before the per-body table: they may hold this rank's own figures, which the table and the
 * lines after it, the same on any rank count, do not). */
static void shard_sim_report_modules(shard_sim *s)
{
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].def->report && s->mod[m].used) {
            char line[1024];
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            s->mod[m].def->report(&mc, line, sizeof line);
            printf("%s\n", line);
        }
}

void shard_sim_report(shard_sim *s)
{
    int rank = shard_comm_rank(s->comm), size = shard_comm_size(s->comm);
    /* Per-rank values gathered on rank 0: the phases, then the figures of SHARD_REPORT_*. */
    const int NV = s->timer.n + SHARD_REPORT_N;
    double mine[SHARD_PHASE_MAX + SHARD_REPORT_N];
    long n_out = 0, n_ck = 0;
    shard_sim_report_mine(s, mine, &n_out, &n_ck);
    double *all = rank == 0 ? shard_malloc((size_t)size * NV * sizeof *all) : NULL;
    shard_comm_gather(s->comm, mine, NV, all);
    uint64_t hash = shard_sim_hash(s);
    shard_diag d = shard_sim_diagnostics(s);
    shard_sim_warn_inverted(s, &d);
    shard_sim_fragments(s); /* the end report's fragment line (collective; nothing without fracture) */
    double frag_max = shard_comm_max(s->comm, s->frag.seconds);
    double *bodies = shard_sim_body_stats(s);
    if (rank != 0) {
        free(bodies);
        return;
    }
    double st[SHARD_PHASE_MAX + SHARD_REPORT_N][4]; /* min, avg, max, argmax */
    shard_sim_report_spread(all, size, NV, st);
    free(all);
    long steps = s->step - (s->restarted_at >= 0 ? s->restarted_at : 0); /* steps this process ran */
    shard_sim_report_phases(s, st, size, steps);
    shard_sim_report_ranks(s, st, size, d.contacts);
    shard_sim_report_balance(s, st);
    shard_sim_report_io(s, st, size, n_out, n_ck);
    shard_sim_report_final(s, &d, frag_max);
    shard_sim_report_modules(s);
    shard_sim_print_bodies(s, bodies);
    free(bodies);
    printf("State hash: %016llx\n", (unsigned long long)hash);
    fflush(stdout);
}

static void shard_sim_print_interval(const shard_interval *iv, const char *sep)
{
    if (iv->every > 0)
        printf("%ld steps%s", iv->every, sep);
    else
        printf("%g s%s", iv->every_time, sep);
}

void shard_sim_summary(shard_sim *s)
{
    if (shard_comm_rank(s->comm) != 0)
        return;
    const shard_scene *sc = &s->scene;
    printf("Scene %s: OK\n", sc->path);
    printf("Materials (%d):\n", sc->n_materials);
    for (int m = 0; m < sc->n_materials; m++) {
        const shard_material *mt = &sc->materials[m];
        printf("  %-16s density %g kg/m^3, E %g Pa, nu %g, k_v %g Pa, damping %g s, plasticity yield %g creep %g "
               "1/s max %g, contact stiffness %s%g, damping %g, friction %g\n",
               mt->name, mt->density, mt->E, mt->nu, mt->volume_stiffness, mt->damping, mt->yield, mt->creep,
               mt->max_plastic, mt->contact_stiffness > 0 ? "" : "auto ", mt->contact_stiffness, mt->contact_damping,
               mt->friction);
    }
    printf("Bodies (%d):\n", sc->n_bodies);
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_body_def *bd = &sc->bodies[b];
        const shard_matter *m = shard_sim_module_of(s, b)->def;
        char more[160] = "";
        if (m->describe)
            m->describe(sc, b, more, sizeof more);
        printf("  %-16s %-8s %-6s material %-12s spacing %g m, %s%s%lld particles\n", bd->name,
               shard_shape_name(bd->shape.kind), bd->kind, sc->materials[bd->material].name, bd->spacing, more,
               more[0] ? ", " : "", (long long)s->body_count[b]);
    }
    printf("Obstacles (%d):\n", sc->n_obstacles);
    for (int o = 0; o < sc->n_obstacles; o++)
        printf("  %-16s %s, friction %g\n", sc->obstacles[o].name, shard_obstacle_name(sc->obstacles[o].kind),
               sc->obstacles[o].friction);
    printf("Particles: %lld, bonds: %lld (%.2f per particle)\n", (long long)s->n_global, (long long)s->n_bonds_global,
           (double)s->n_bonds_global / (double)s->n_global);
    printf("Time step: %.6g s (%s limit, safety %g), %ld steps to t = %.6g s\n", s->dt, s->dt_limit, sc->run.dt_safety,
           s->total_steps, (double)s->total_steps * s->dt);
    printf("Output directory: %s\n", sc->run.output_dir);
    if (sc->output.enabled) {
        printf("Output: %s/particles_<step>.h5 and particles.xmf, every ",
               sc->output.dir[0] ? sc->output.dir : sc->run.output_dir);
        shard_sim_print_interval(&sc->output.interval, ";");
        for (int f = 0; f < shard_output_count(sc); f++)
            if (sc->output.fields & 1u << f)
                printf(" %s", shard_output_info(sc, f)->name);
        printf("\n");
    }
    if (sc->balance.enabled) {
        printf("Balance: %s, %s cost, checked every %ld steps, threshold %g, ghost growth %g%s\n",
               shard_sim_balance_method[sc->balance.method], shard_sim_balance_cost[sc->balance.cost],
               sc->balance.every, sc->balance.threshold, sc->balance.ghost_growth,
               shard_comm_size(s->comm) > 1 ? "" : " (one rank: nothing to balance)");
    }
    if (sc->checkpoint.enabled) {
        printf("Checkpoints: %s/checkpoint_<step>.h5, every ",
               sc->checkpoint.dir[0] ? sc->checkpoint.dir : sc->run.output_dir);
        shard_sim_print_interval(&sc->checkpoint.interval, "");
        printf(", keeping %ld\n", sc->checkpoint.keep);
    }
    fflush(stdout);
}
