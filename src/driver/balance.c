/* Dynamic load balancing: the cost of each rank, the decision to repartition, and the migration (see
 * sim_impl.h, docs/architecture.md "Load balancing" and docs/scenes.md `balance`). */
#include "sim_impl.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most contact ghosts a rank holds.  Collective. */
static double shard_sim_contact_ghosts_max(shard_sim *s)
{
    const shard_particles *p = &s->p;
    return shard_comm_max(s->comm, (double)(p->n_local - p->n_owned - p->n_bond_ghost));
}

void shard_sim_balance_setup(shard_sim *s)
{
    /* The first check is `every` steps into the run (or after its restart): the start's METIS partition, or
     * the restart's, is balanced already. */
    s->bal.last = s->step;
    s->bal.dec_prev_step = s->step;
    if (s->scene.balance.enabled && shard_comm_size(s->comm) > 1) {
        static const shard_balancer_method methods[] = {[SHARD_BALANCE_RCB] = SHARD_BALANCER_RCB,
                                                        [SHARD_BALANCE_HSFC] = SHARD_BALANCER_HSFC,
                                                        [SHARD_BALANCE_GRAPH] = SHARD_BALANCER_GRAPH};
        s->bal.balancer = shard_balancer_create(s->comm, methods[s->scene.balance.method]);
        s->bal.ghost_base = shard_sim_contact_ghosts_max(s);
    }
}

void shard_sim_balance_free(shard_sim *s) { shard_balancer_destroy(&s->bal.balancer); }

/* The force phases' time on this rank so far (the solid's and contact's terms, the neighbour search, the
 * fracture passes). */
static double shard_sim_force_time(const shard_sim *s)
{
    double t = s->timer.t[s->ph_neigh] + s->timer.t[s->ph_fracture];
    int seen[SHARD_PHASE_MAX] = {0};
    for (int k = 0; k < s->n_terms; k++)
        if (!seen[s->term[k].phase]) {
            seen[s->term[k].phase] = 1;
            t += s->timer.t[s->term[k].phase];
        }
    return t;
}

/* Each owned particle's cost w[i] and this rank's total.  `counts`: 1 + its unbroken bonds + its contact
 * candidates, the work of the solid's passes and of the contact term per particle.  `time`: the same shares of
 * the force phases' time this rank spent since the last check (the counts where none was measured). */
static double shard_sim_cost(shard_sim *s, double *w, int measure)
{
    const shard_particles *p = &s->p;
    const shard_csr *b = s->phys.bonds, *c = &s->cand;
    double total = 0.0;
    for (size_t i = 0; i < p->n_owned; i++) {
        double cand = c->n > i ? (double)(c->start[i + 1] - c->start[i]) : 0.0;
        w[i] = 1.0 + (double)(b->start[i + 1] - b->start[i]) + cand;
        total += w[i];
    }
    if (s->scene.balance.cost == SHARD_BALANCE_COST_TIME && measure) {
        double now = shard_sim_force_time(s), t = now - s->bal.time_prev;
        s->bal.time_prev = now;
        if (t > 0.0 && total > 0.0) {
            for (size_t i = 0; i < p->n_owned; i++)
                w[i] *= t / total;
            total = t;
        }
    }
    return total;
}

static double shard_sim_imbalance(shard_sim *s, double local)
{
    double sum = local;
    shard_comm_sum(s->comm, &sum, 1);
    double max = shard_comm_max(s->comm, local);
    return sum > 0.0 ? max / (sum / shard_comm_size(s->comm)) : 1.0;
}

/* Where the geometric methods see each owned particle: the centre of its fragment (bodies that can break) or of
 * its body (the others) when that piece has at most half a rank's share of the particles, so that a cut of
 * recursive bisection, which keeps points on a cut together, never splits it: small fragments and bodies stay
 * whole on one rank, which keeps the bond halo as it is; the particle's own position otherwise.  Collective. */
static void shard_sim_balance_points(shard_sim *s, double *where)
{
    const shard_particles *p = &s->p;
    const shard_scene *sc = &s->scene;
    size_t nb = (size_t)sc->n_bodies;
    double share = 0.5 * (double)s->n_global / shard_comm_size(s->comm);
    double *sum = shard_calloc(4 * nb + 1, sizeof *sum);
    for (size_t i = 0; i < p->n_owned; i++) {
        double *b = sum + 4 * (size_t)p->body[i];
        for (int k = 0; k < 3; k++)
            b[k] += p->mass[i] * p->x[3 * i + k];
        b[3] += p->mass[i];
    }
    shard_comm_sum(s->comm, sum, (int)(4 * nb));
    double *fc = NULL, *fn = NULL;
    if (s->frac.on) {
        fc = shard_malloc((3 * p->n_owned + 3) * sizeof *fc);
        fn = shard_malloc((p->n_owned + 1) * sizeof *fn);
        shard_sim_fragment_centres(s, fc, fn);
    }
    for (size_t i = 0; i < p->n_owned; i++) {
        int b = p->body[i];
        const double *src = p->x + 3 * i;
        if (s->frac.self_contact[b]) {
            if (fc && !isnan(fc[3 * i]) && fn[i] <= share)
                src = fc + 3 * i;
        } else if ((double)s->body_count[b] <= share && sum[4 * (size_t)b + 3] > 0.0) {
            double *c = sum + 4 * (size_t)b;
            for (int k = 0; k < 3; k++)
                where[3 * i + k] = c[k] / c[3];
            continue;
        }
        memcpy(where + 3 * i, src, 3 * sizeof *where);
    }
    free(sum), free(fc), free(fn);
}

void shard_sim_migrate(shard_sim *s, const int32_t *dest, shard_migrate_stats *st)
{
    int *has_halo = shard_calloc((size_t)s->n_modules + 1, sizeof *has_halo);
    shard_halo **halos = shard_calloc((size_t)s->n_modules + 1, sizeof *halos);
    shard_block *blocks = shard_calloc((size_t)s->n_modules + 1, sizeof *blocks);
    for (int m = 0; m < s->n_modules; m++) {
        has_halo[m] = s->mod[m].has_bonds;
        halos[m] = s->mod[m].halo;
        blocks[m] = s->mod[m].block;
        s->halo_bytes_past += shard_halo_bytes(halos[m]);
    }
    shard_pairlist lists[SHARD_CHECKPOINT_MAX_LISTS];
    for (int q = 0; q < s->n_mem; q++)
        lists[q] = s->mem_term[q]->memory[s->mem_term[q]->cur];
    shard_partition_kinds kinds = {
        .n_modules = s->n_modules, .body_module = s->body_module, .has_halo = has_halo, .n_lists = s->n_mem};
    shard_migrate(s->comm, &kinds, dest, &s->p, blocks, &s->bonds, &s->bond_broken, halos, lists, st);
    for (int q = 0; q < s->n_mem; q++)
        s->mem_term[q]->memory[s->mem_term[q]->cur] = lists[q];
    for (int m = 0; m < s->n_modules; m++) {
        s->mod[m].block = blocks[m];
        s->mod[m].halo = halos[m];
        /* the new plans' first bytes filled their ghosts: counted as migration bytes, not as halo traffic */
        s->halo_bytes_past -= shard_halo_bytes(halos[m]);
    }
    free(blocks), free(halos), free(has_halo);
    shard_output_owners_changed(s->io.out);
    shard_sim_masses(s);
    shard_sim_fracture_redistributed(s);
    shard_sim_prepare_local(s);
    shard_timer_stamp(&s->timer, s->ph_balance, shard_wtime()); /* the rebuild is charged to Neigh */
    shard_sim_rebuild(s);
    /* Cut bonds: each is held by both owners. */
    int64_t cut = 0;
    for (size_t i = 0; i < s->p.n_owned; i++)
        for (int64_t e = s->bonds.start[i]; e < s->bonds.start[i + 1]; e++)
            cut += (size_t)s->bonds.idx[e] >= s->p.n_owned;
    s->edge_cut = shard_comm_sum_i64(s->comm, cut) / 2;
}

void shard_sim_balance(shard_sim *s, int quiet)
{
    const shard_balance_def *bd = &s->scene.balance;
    if (!s->bal.balancer || s->step % bd->every != 0 || s->step == s->bal.last)
        return;
    shard_timer_stamp(&s->timer, s->ph_other, shard_wtime());
    double t0 = shard_wtime();
    s->bal.last = s->step;
    shard_particles *p = &s->p;
    double *w = shard_malloc((p->n_owned + 1) * sizeof *w);
    double before = shard_sim_imbalance(s, shard_sim_cost(s, w, 1));
    if (s->bal.checks++ == 0)
        s->bal.imb_first = before;
    s->bal.imb_max = fmax(s->bal.imb_max, before);
    /* Contact ghosts that grew past ghost_growth x their number after the last partition (and past a tenth of
     * the average owned particles, so that bodies coming into contact do not trigger it) mean that ranks own
     * particles far apart: fragments flying apart. */
    double ghosts = shard_sim_contact_ghosts_max(s);
    double floor = 0.1 * (double)s->n_global / shard_comm_size(s->comm);
    int grown = bd->ghost_growth > 0.0 && ghosts > bd->ghost_growth * fmax(s->bal.ghost_base, floor);
    if (!grown && before <= bd->threshold && bd->threshold > 1.0) {
        free(w);
        s->bal.seconds += shard_wtime() - t0;
        shard_timer_stamp(&s->timer, s->ph_balance, shard_wtime());
        return;
    }
    int32_t *dest = shard_malloc((p->n_owned + 1) * sizeof *dest);
    shard_halo *halos[SHARD_MATTER_MAX];
    for (int m = 0; m < s->n_modules; m++)
        halos[m] = s->mod[m].halo;
    shard_error e;
    double *where = shard_malloc((3 * p->n_owned + 3) * sizeof *where);
    shard_sim_balance_points(s, where);
    int rc = shard_balancer_partition(s->bal.balancer, p, where, w, s->phys.bonds, halos, s->n_modules, dest, &e);
    free(where);
    if (rc)
        shard_fail_all(s->comm, e.code, e.msg);
    double t1 = shard_wtime();
    /* A partition that moves nothing (Zoltan reuses its cuts and remaps parts) changes nothing: no migration. */
    int64_t leaving = 0;
    for (size_t i = 0; i < p->n_owned; i++)
        leaving += dest[i] != shard_comm_rank(s->comm);
    if (shard_comm_sum_i64(s->comm, leaving) == 0) {
        free(dest), free(w);
        s->bal.seconds += shard_wtime() - t0;
        if (shard_comm_rank(s->comm) == 0 && !quiet) {
            printf("balance step %ld: imbalance %.3f, the new partition is the current one (partition %.3g s)\n",
                   s->step, before, t1 - t0);
            fflush(stdout);
        }
        shard_timer_stamp(&s->timer, s->ph_balance, shard_wtime());
        return;
    }
    /* The imbalance after it, in the same cost as before: each rank's share of the particles' costs at their
     * new owners (the measured time cannot be measured again until steps have run). */
    int np = shard_comm_size(s->comm);
    double *share = shard_calloc((size_t)np + 1, sizeof *share), most = 0.0, all = 0.0;
    for (size_t i = 0; i < p->n_owned; i++)
        share[dest[i]] += w[i];
    shard_comm_sum(s->comm, share, np);
    for (int r = 0; r < np; r++)
        most = fmax(most, share[r]), all += share[r];
    double after = all > 0.0 ? most / (all / np) : 1.0;
    free(share), free(w);
    int64_t cut_before = s->edge_cut;
    shard_migrate_stats st;
    shard_sim_migrate(s, dest, &st);
    free(dest);
    int64_t moved = shard_comm_sum_i64(s->comm, st.sent);
    uint64_t bytes = shard_comm_sum_u64(s->comm, st.bytes);
    s->bal.runs++;
    s->bal.ghost_triggers += grown && before <= bd->threshold;
    s->bal.ghost_base = shard_sim_contact_ghosts_max(s);
    s->bal.moved += moved;
    s->bal.bytes += st.bytes;
    s->bal.imb_last_before = before, s->bal.imb_last_after = after;
    double t2 = shard_wtime();
    s->bal.seconds += t2 - t0;
    if (shard_comm_rank(s->comm) == 0 && !quiet) {
        printf("balance step %ld: imbalance %.3f -> %.3f, contact ghosts (busiest rank) %.0f -> %.0f, %lld "
               "particle(s) moved (%.4g MB) in %.3g s (partition %.3g s, migration %.3g s), edge cut %lld -> %lld\n",
               s->step, before, after, ghosts, s->bal.ghost_base, (long long)moved, (double)bytes / 1e6, t2 - t0,
               t1 - t0, t2 - t1, (long long)cut_before, (long long)s->edge_cut);
        fflush(stdout);
    }
    /* the migration's contact-ghost rebuild was charged to Neigh; the rest is balancing */
    shard_timer_stamp(&s->timer, s->ph_balance, shard_wtime());
}

uint64_t shard_sim_bond_halo_bytes(const shard_sim *s)
{
    uint64_t b = s->halo_bytes_past;
    for (int m = 0; m < s->n_modules; m++)
        b += shard_halo_bytes(s->mod[m].halo);
    return b;
}

uint64_t shard_sim_bytes_sent(const shard_sim *s)
{
    return shard_sim_bond_halo_bytes(s) + shard_ghosts_bytes(s->ghosts) + s->bal.bytes;
}

int shard_sim_decomposition_csv(shard_sim *s, shard_error *err)
{
    const shard_particles *p = &s->p;
    double *w = shard_malloc((p->n_owned + 1) * sizeof *w);
    double imb = shard_sim_imbalance(s, shard_sim_cost(s, w, 0));
    free(w);
    uint64_t bytes = shard_sim_bytes_sent(s);
    long steps = s->bal.dec_prev_step >= 0 ? s->step - s->bal.dec_prev_step : 0;
    double per_step = steps > 0 ? (double)(bytes - s->bal.dec_prev_bytes) / (double)steps : 0.0;
    s->bal.dec_prev_step = s->step, s->bal.dec_prev_bytes = bytes;
    enum { OWN, BOND, CONTACT, BYTES, NV };
    double v[NV] = {(double)p->n_owned, (double)p->n_bond_ghost, (double)(p->n_local - p->n_owned - p->n_bond_ghost),
                    per_step};
    double max[NV], sum[NV];
    memcpy(max, v, sizeof v), memcpy(sum, v, sizeof v);
    shard_comm_max_doubles(s->comm, max, NV);
    shard_comm_sum(s->comm, sum, NV);
    double np = (double)shard_comm_size(s->comm);
    char line[512];
    snprintf(line, sizeof line, "%ld,%.9g,%d,%.0f,%.1f,%.0f,%.1f,%.0f,%.1f,%.0f,%.1f,%.4f,%lld,%ld,%lld\n", s->step,
             shard_sim_now(s), shard_comm_size(s->comm), max[OWN], sum[OWN] / np, max[BOND], sum[BOND] / np,
             max[CONTACT], sum[CONTACT] / np, max[BYTES], sum[BYTES] / np, imb, (long long)s->edge_cut, s->bal.runs,
             (long long)s->bal.moved);
    return shard_output_csv(s->io.out, s->comm, "decomposition.csv",
                            "step,time,ranks,owned_max,owned_avg,bond_ghosts_max,bond_ghosts_avg,contact_ghosts_max,"
                            "contact_ghosts_avg,bytes_per_step_max,bytes_per_step_avg,cost_imbalance,edge_cut,"
                            "migrations,particles_moved\n",
                            line, err);
}
