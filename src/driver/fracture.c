/* Fracture in the driver: the unbroken-bond lists the physics sees, and the pass after each step that breaks
 * bonds and turns particles whose stencil collapsed into debris (rules in fracture.h, kernels in the matter
 * modules).  Decisions are local to each bond's two owners, which reach the same verdict from the same bits;
 * the only messages are one allreduce per round ("did any rank make debris?") and, when one did, a halo
 * exchange of a flag per particle so that its partners break their side of its bonds.  Then the fragment
 * analysis: labels, the fragments and their statistics, the fragment centres the balancer asks for, and the
 * fragment tables of the output.  Its state is the record's two fracture parts (sim_fracture.h). */
#include "sim_impl.h"

#include "shard/sorted.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s->frac.active = the unbroken entries of s->bonds, row by row (rows stay sorted by partner id), rebuilt from row
 * `from` on (the rows before it are unchanged). */
static void shard_sim_active_rebuild(shard_sim *s, size_t from)
{
    const shard_csr *r = &s->bonds;
    size_t n = r->n, nb = (size_t)r->start[n];
    if (from == 0) {
        shard_csr_reserve(&s->frac.active, n, nb + 1);
        s->frac.active.n = n;
        s->frac.active.start[0] = 0;
    }
    int64_t k = s->frac.active.start[from];
    for (size_t i = from; i < n; i++) {
        for (int64_t b = r->start[i]; b < r->start[i + 1]; b++)
            if (!s->bond_broken[b])
                s->frac.active.idx[k++] = r->idx[b];
        s->frac.active.start[i + 1] = k;
    }
}

void shard_sim_fracture_setup(shard_sim *s)
{
    const shard_scene *sc = &s->scene;
    s->frag.step = -1;
    s->frac.self_contact = shard_calloc((size_t)sc->n_bodies + 1, 1);
    s->frac.on = 0;
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_matter *m = shard_sim_module_of(s, b)->def;
        const shard_matter_fracture *fr = m->fracture;
        if (fr && fr->breakable && fr->break_bonds && fr->breakable(sc, b) && m->bond_radius &&
            m->bond_radius(sc, b) > 0.0)
            s->frac.self_contact[b] = 1, s->frac.on = 1;
        /* a notched body's faces touch too, breakable or not; and bodies whose module needs its own
         * particles nearby (cloth collisions) */
        if (sc->bodies[b].n_notches > 0 || m->contact_reach)
            s->frac.self_contact[b] = 1;
    }
    if (s->frac.on)
        shard_sim_active_rebuild(s, 0);
}

void shard_sim_fracture_redistributed(shard_sim *s)
{
    if (s->frac.on)
        shard_sim_active_rebuild(s, 0);
    s->frag.step = -1; /* the labels were per owned particle */
}

void shard_sim_fracture_free(shard_sim *s)
{
    shard_csr_free(&s->frac.active);
    free(s->frag.label), free(s->frag.list);
    free(s->frac.self_contact), free(s->frac.changed), free(s->frac.debris), free(s->frac.flag), free(s->frac.lost);
}

/* Sorts and de-duplicates list[0..n); returns the new length. */
static size_t shard_sim_unique(int32_t *list, size_t n)
{
    if (n < 2)
        return n;
    qsort(list, n, sizeof *list, shard_sorted_cmp_i32);
    size_t m = 1;
    for (size_t k = 1; k < n; k++)
        if (list[k] != list[m - 1])
            list[m++] = list[k];
    return m;
}

void shard_sim_fracture_rebuilt(shard_sim *s) { s->frac.cand_stale = 0, s->frac.n_lost = 0; }

void shard_sim_fracture_reopen(shard_sim *s)
{
    if (!s->frac.cand_stale)
        return;
    /* Bonds broke here since the lists were built: their pairs may touch now.  The partners are owned or bond
     * ghosts, so only the rows of this rank's particles that lost bonds change (no ghost changes; x_build
     * stays): the broken partners within reach join them. */
    s->frac.n_lost = shard_sim_unique(s->frac.lost, s->frac.n_lost);
    shard_neighbor_contacts_reopen(&s->p, s->reach_radius, s->skin, &s->bonds, s->bond_broken, s->frac.lost,
                                   s->frac.n_lost, &s->cand);
    s->frac.cand_stale = 0, s->frac.n_lost = 0;
    shard_timer_stamp(&s->timer, s->ph_neigh, shard_wtime());
}

void shard_sim_fracture_sync(shard_sim *s)
{
    for (int m = 0; m < s->n_modules; m++) {
        shard_sim_module *md = &s->mod[m];
        const shard_matter_fracture *fr = md->def->fracture;
        int row = fr && fr->sync_row ? fr->sync_row(&s->scene) : -1;
        if (row < 0)
            continue;
        if (md->halo) {
            shard_halo_field f = shard_sim_block_field(md, row);
            shard_halo_forward(md->halo, 1, &f);
        }
        if (fr->synced) {
            shard_matter_ctx mc = {.ph = &s->phys, .block = &md->block, .bodies = md->bodies};
            fr->synced(&mc);
        }
    }
}

/* Each module's rebond (or, with `losing`, its losing hook) on its share of the sorted list changed[0..n)
 * (modules' owned particles are contiguous ranges); the debris they report is appended to s->frac.debris.
 * Returns its count; *row_changed is set when a module changed its sync row. */
static size_t shard_sim_rebond(shard_sim *s, const int32_t *changed, size_t n, int losing, int *row_changed)
{
    size_t nd = 0, q = 0;
    for (int m = 0; m < s->n_modules && q < n; m++) {
        shard_sim_module *md = &s->mod[m];
        size_t lo = md->block.first, hi = lo + md->block.n_owned, q0 = q;
        while (q < n && (size_t)changed[q] < hi)
            q++;
        const shard_matter_fracture *fr = md->def->fracture;
        if (q == q0 || (size_t)changed[q0] < lo || !fr)
            continue;
        shard_matter_ctx mc = {.ph = &s->phys, .block = &md->block, .bodies = md->bodies};
        if (losing && fr->losing)
            fr->losing(&mc, changed + q0, q - q0);
        else if (!losing && fr->rebond)
            nd += fr->rebond(&mc, changed + q0, q - q0, s->frac.debris + nd, row_changed);
    }
    return nd;
}

void shard_sim_fracture(shard_sim *s)
{
    if (!s->frac.on)
        return;
    shard_particles *p = &s->p;
    shard_timer_stamp(&s->timer, s->ph_other, shard_wtime());
    shard_reserve((void **)&s->frac.changed, &s->frac.cap, p->n_owned + 1, sizeof *s->frac.changed);
    size_t cap = s->frac.cap;
    s->frac.debris = shard_realloc(s->frac.debris, cap * sizeof *s->frac.debris);
    size_t nc = 0;
    for (int m = 0; m < s->n_modules; m++) {
        shard_sim_module *md = &s->mod[m];
        const shard_matter_fracture *fr = md->def->fracture;
        if (!fr || !fr->break_bonds || !md->has_bonds)
            continue;
        int row = fr->break_row ? fr->break_row(&s->scene) : -1;
        if (row >= 0 && md->halo) {
            shard_halo_field f = shard_sim_block_field(md, row);
            shard_timer_stamp(&s->timer, s->ph_fracture, shard_wtime());
            shard_halo_forward(md->halo, 1, &f);
            shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime()); /* exchanges and their waits: Comm */
        }
        shard_matter_ctx mc = {.ph = &s->phys, .block = &md->block, .bodies = md->bodies};
        nc += fr->break_bonds(&mc, s->bond_broken, s->frac.changed + nc);
    }
    /* Rounds: the particles that lost bonds recompute their moments; those left without a 3D stencil break
     * every bond they still have, their partners (told by a flag through the halo) break theirs, and the
     * particles that lost bonds this way go round again.  Bonds only break, so this ends.  The same
     * reduction says whether some rank changed a module's sync row (which particles are bond-based). */
    int row_changed = 0;
    for (;;) {
        nc = shard_sim_unique(s->frac.changed, nc);
        if (nc) { /* the list is sorted: rows before its first entry keep their bonds */
            shard_sim_rebond(s, s->frac.changed, nc, 1, NULL); /* phys.bonds still has the lost ones */
            shard_sim_active_rebuild(s, (size_t)s->frac.changed[0]);
            s->frac.cand_stale = 1;
            shard_reserve((void **)&s->frac.lost, &s->frac.lost_cap, s->frac.n_lost + nc, sizeof *s->frac.lost);
            memcpy(s->frac.lost + s->frac.n_lost, s->frac.changed, nc * sizeof *s->frac.lost);
            s->frac.n_lost += nc;
        }
        size_t nd = shard_sim_rebond(s, s->frac.changed, nc, 0, &row_changed);
        int any[2] = {nd > 0, row_changed};
        shard_timer_stamp(&s->timer, s->ph_fracture, shard_wtime());
        shard_comm_max_ints(s->comm, any, 2);
        shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime());
        row_changed = any[1];
        if (!any[0])
            break;
        size_t nl = p->n_owned + p->n_bond_ghost;
        shard_reserve((void **)&s->frac.flag, &s->frac.flag_cap, nl + 1, sizeof *s->frac.flag);
        memset(s->frac.flag, 0, (nl + 1) * sizeof *s->frac.flag);
        nc = 0;
        for (size_t q = 0; q < nd; q++) {
            size_t d = (size_t)s->frac.debris[q];
            s->frac.flag[d] = 1.0;
            for (int64_t b = s->bonds.start[d]; b < s->bonds.start[d + 1]; b++)
                s->bond_broken[b] = 1;
            s->frac.changed[nc++] = (int32_t)d;
        }
        shard_timer_stamp(&s->timer, s->ph_fracture, shard_wtime());
        for (int m = 0; m < s->n_modules; m++)
            if (s->mod[m].halo) {
                shard_halo_field f = shard_halo_field_of(s->mod[m].halo, s->frac.flag, 1);
                shard_halo_forward(s->mod[m].halo, 1, &f);
            }
        shard_timer_stamp(&s->timer, s->ph_comm, shard_wtime());
        for (size_t i = 0; i < p->n_owned; i++) {
            int lost = 0;
            for (int64_t b = s->bonds.start[i]; b < s->bonds.start[i + 1]; b++)
                if (!s->bond_broken[b] && s->frac.flag[s->bonds.idx[b]] != 0.0)
                    s->bond_broken[b] = 1, lost = 1;
            if (lost)
                s->frac.changed[nc++] = (int32_t)i;
        }
    }
    if (row_changed)
        shard_sim_fracture_sync(s);
    shard_timer_stamp(&s->timer, s->ph_fracture, shard_wtime());
}

void shard_sim_fragments(shard_sim *s)
{
    if (!s->frac.on || s->frag.step == s->step)
        return;
    double t0 = shard_wtime();
    const shard_scene *sc = &s->scene;
    double m0 = INFINITY;
    for (int b = 0; b < sc->n_bodies; b++)
        if (s->frac.self_contact[b]) {
            const shard_body_def *bd = &sc->bodies[b];
            m0 = fmin(m0, sc->materials[bd->material].density * bd->spacing * bd->spacing * bd->spacing);
        }
    shard_halo *halos[SHARD_MATTER_MAX];
    for (int m = 0; m < s->n_modules; m++)
        halos[m] = s->mod[m].halo;
    shard_reserve((void **)&s->frag.label, &s->frag.label_cap, s->p.n_owned + s->p.n_bond_ghost + 1,
                  sizeof *s->frag.label);
    free(s->frag.list);
    shard_fragments_find(s->comm, &s->p, &s->frac.active, halos, s->n_modules, s->frac.self_contact, m0,
                         sc->fragments.fit_min, s->frag.label, &s->frag.list, &s->frag.n, &s->frag.stats);
    s->frag.step = s->step;
    s->frag.seconds += shard_wtime() - t0;
    s->frag.runs++;
}

/* The fragment labelled l among n sorted by label, or NULL. */
static const shard_fragment *shard_sim_find_fragment(const shard_fragment *f, size_t n, int64_t l)
{
    size_t i = shard_sorted_lower_i64_at(f, n, sizeof *f, offsetof(shard_fragment, label), l);
    return i < n && f[i].label == l ? &f[i] : NULL;
}

/* The centre and size of the fragment of every owned particle of a body that can break (NaN centre: none):
 * the fragment analysis holds each fragment on one rank (this one when all its particles are here, otherwise
 * the rank label mod ranks), so the others ask that rank, once per fragment.  Collective. */
void shard_sim_fragment_centres(shard_sim *s, double *centre, double *count)
{
    shard_sim_fragments(s);
    const shard_particles *p = &s->p;
    int size = shard_comm_size(s->comm), me = shard_comm_rank(s->comm);
    /* the labels of the fragments held elsewhere, each once, in increasing order */
    int64_t *want = shard_malloc((p->n_owned + 1) * sizeof *want);
    size_t n_want = 0;
    for (size_t i = 0; i < p->n_owned; i++) {
        int64_t l = s->frag.label[i];
        if (l >= 0 && !shard_sim_find_fragment(s->frag.list, s->frag.n, l))
            want[n_want++] = l;
    }
    if (n_want > 1)
        qsort(want, n_want, sizeof *want, shard_sorted_cmp_i64);
    size_t u = 0;
    for (size_t q = 0; q < n_want; q++)
        if (u == 0 || want[u - 1] != want[q])
            want[u++] = want[q];
    n_want = u;
    /* requests (label, asking rank) grouped by holder; answers (label, count, centre bits x 3) by asker */
    size_t *n_ask = shard_calloc((size_t)size + 1, sizeof *n_ask), *at = shard_calloc((size_t)size + 1, sizeof *at);
    for (size_t q = 0; q < n_want; q++)
        n_ask[want[q] % size] += 2;
    for (int r = 1; r < size; r++)
        at[r] = at[r - 1] + n_ask[r - 1];
    int64_t *ask = shard_malloc((2 * n_want + 1) * sizeof *ask);
    for (size_t q = 0; q < n_want; q++) {
        size_t r = (size_t)(want[q] % size);
        ask[at[r]++] = want[q], ask[at[r]++] = me;
    }
    size_t n_got = 0;
    int64_t *got = shard_comm_exchange_i64(s->comm, ask, n_ask, &n_got);
    memset(n_ask, 0, ((size_t)size + 1) * sizeof *n_ask);
    memset(at, 0, ((size_t)size + 1) * sizeof *at);
    for (size_t k = 0; k + 1 < n_got; k += 2)
        n_ask[got[k + 1]] += 5;
    for (int r = 1; r < size; r++)
        at[r] = at[r - 1] + n_ask[r - 1];
    int64_t *ans = shard_malloc((5 * (n_got / 2) + 1) * sizeof *ans);
    for (size_t k = 0; k + 1 < n_got; k += 2) {
        const shard_fragment *f = shard_sim_find_fragment(s->frag.list, s->frag.n, got[k]);
        int64_t *a = ans + at[got[k + 1]];
        at[got[k + 1]] += 5;
        a[0] = got[k], a[1] = f ? f->count : 0;
        double c[3] = {NAN, NAN, NAN};
        if (f)
            memcpy(c, f->center, sizeof c);
        memcpy(a + 2, c, sizeof c);
    }
    size_t n_back = 0;
    int64_t *back = shard_comm_exchange_i64(s->comm, ans, n_ask, &n_back);
    /* the answers come grouped by holder: sorted by label (a fragment's first member) for the lookup */
    size_t nb = n_back / 5;
    shard_fragment *known = shard_calloc(nb + 1, sizeof *known);
    for (size_t q = 0; q < nb; q++) {
        known[q].label = back[5 * q], known[q].count = back[5 * q + 1];
        memcpy(known[q].center, back + 5 * q + 2, sizeof known[q].center);
    }
    if (nb > 1)
        qsort(known, nb, sizeof *known, shard_sorted_cmp_i64);
    for (size_t i = 0; i < p->n_owned; i++) {
        centre[3 * i] = NAN, count[i] = 0.0;
        int64_t l = s->frag.label[i];
        if (l < 0)
            continue;
        const shard_fragment *f = shard_sim_find_fragment(s->frag.list, s->frag.n, l);
        if (!f)
            f = shard_sim_find_fragment(known, nb, l);
        if (f) {
            memcpy(centre + 3 * i, f->center, sizeof f->center);
            count[i] = (double)f->count;
        }
    }
    free(want), free(n_ask), free(at), free(ask), free(got), free(ans), free(back), free(known);
}

const shard_fragment_stats *shard_sim_fragment_stats(shard_sim *s, const shard_fragment **frags, size_t *n_frags)
{
    if (!s->frac.on)
        return NULL;
    shard_sim_fragments(s);
    if (frags)
        *frags = s->frag.list;
    if (n_frags)
        *n_frags = s->frag.n;
    return &s->frag.stats;
}

int64_t shard_sim_broken_bonds(shard_sim *s)
{
    int64_t n = 0;
    if (s->frac.on)
        for (int64_t b = 0; b < s->bonds.start[s->p.n_owned]; b++)
            n += s->bond_broken[b];
    /* every bond has an entry in each of its two rows */
    return shard_comm_sum_i64(s->comm, n) / 2;
}

/* A column of n rows of k doubles (or int64 when i64) in a new buffer, from the fragment records. */
static void *shard_sim_frag_column(const shard_fragment *f, size_t n, size_t offset, int k, int i64)
{
    size_t elem = i64 ? sizeof(int64_t) : sizeof(double);
    unsigned char *col = shard_malloc(n * (size_t)k * elem + 1);
    for (size_t q = 0; q < n; q++)
        memcpy(col + q * (size_t)k * elem, (const unsigned char *)&f[q] + offset, (size_t)k * elem);
    return col;
}

/* Bins 0..nb of the histogram of st: edges m0 2^k, 2^(k+1), masses, and the mass fraction in bins >= k. */
static void shard_sim_fragment_histogram(const shard_fragment_stats *st, size_t nb, double *lo, double *hi,
                                         double *mass, double *cum)
{
    double above = 0.0;
    for (size_t k = nb; k-- > 0;) {
        lo[k] = ldexp(st->m0, (int)k), hi[k] = ldexp(st->m0, (int)k + 1);
        mass[k] = st->bin_mass[k];
        above += st->bin_mass[k];
        cum[k] = st->total_mass > 0.0 ? above / st->total_mass : 0.0;
    }
}

int shard_sim_fragment_globals(shard_sim *s, shard_sim_insitu_frag *v, shard_insitu_global *g)
{
    if (!s->frac.on)
        return 0;
    shard_sim_fragments(s);
    const shard_fragment_stats *st = &s->frag.stats;
    size_t nb = (size_t)st->n_bins;
    shard_sim_fragment_histogram(st, nb, v->bin_min, v->bin_max, v->mass, v->cumulative);
    for (size_t k = 0; k < nb; k++)
        v->count[k] = (double)st->bin_count[k];
    v->n_fragments = (double)st->n_fragments;
    v->largest_fraction = st->total_mass > 0.0 ? st->largest_mass / st->total_mass : 0.0;
    v->tau = st->tau, v->tau_error = st->tau_error, v->n_fit = (double)st->n_fit;
    const shard_insitu_global list[SHARD_SIM_INSITU_FRAG_GLOBALS] = {
        {"fragment_bin_min", nb, v->bin_min},          {"fragment_bin_max", nb, v->bin_max},
        {"fragment_bin_count", nb, v->count},          {"fragment_bin_mass", nb, v->mass},
        {"fragment_cumulative", nb, v->cumulative},    {"n_fragments", 1, &v->n_fragments},
        {"largest_fraction", 1, &v->largest_fraction}, {"fragment_tau", 1, &v->tau},
        {"fragment_tau_error", 1, &v->tau_error},      {"fragment_n_fit", 1, &v->n_fit},
    };
    memcpy(g, list, sizeof list);
    return SHARD_SIM_INSITU_FRAG_GLOBALS;
}

int shard_sim_fragment_tables_make(shard_sim *s, shard_sim_fragment_tables *ft, shard_output_table *tables)
{
    memset(ft, 0, sizeof *ft);
    shard_sim_fragments(s);
    const shard_fragment_stats *st = &s->frag.stats;
    size_t n = s->frag.n;
    static const struct {
        const char *name;
        size_t offset;
        int k, i64;
    } fc[11] = {
        {"label", offsetof(shard_fragment, label), 1, 1},
        {"count", offsetof(shard_fragment, count), 1, 1},
        {"mass", offsetof(shard_fragment, mass), 1, 0},
        {"center", offsetof(shard_fragment, center), 3, 0},
        {"momentum", offsetof(shard_fragment, momentum), 3, 0},
        {"ke_translation", offsetof(shard_fragment, ke_translation), 1, 0},
        {"ke_internal", offsetof(shard_fragment, ke_internal), 1, 0},
        {"box_min", offsetof(shard_fragment, box_min), 3, 0},
        {"box_max", offsetof(shard_fragment, box_max), 3, 0},
    };
    int nc = 9;
    for (int q = 0; q < nc; q++) {
        ft->buf[q] = shard_sim_frag_column(s->frag.list, n, fc[q].offset, fc[q].k, fc[q].i64);
        ft->cols[q] = (shard_column){fc[q].name, fc[q].i64 ? SHARD_TYPE_I64 : SHARD_TYPE_F64, fc[q].k, ft->buf[q]};
    }
    int64_t broken = shard_sim_broken_bonds(s);
    shard_output_attr a[10] = {
        {"n_fragments", 1, st->n_fragments, 0},
        {"total_mass", 0, 0, st->total_mass},
        {"largest_mass", 0, 0, st->largest_mass},
        {"largest_label", 1, st->largest_label, 0},
        {"tau", 0, 0, st->tau},
        {"tau_error", 0, 0, st->tau_error},
        {"n_fit", 1, st->n_fit, 0},
        {"fit_min_mass", 0, 0, st->fit_min_mass},
        {"m0", 0, 0, st->m0},
        {"broken_bonds", 1, broken, 0},
    };
    memcpy(ft->attrs, a, sizeof a);
    tables[0] = (shard_output_table){
        .group = "fragments", .n_rows = n, .n_cols = nc, .cols = ft->cols, .n_attrs = 10, .attrs = ft->attrs};
    /* the histogram: every rank has it; rank 0 writes it */
    size_t nb = shard_comm_rank(s->comm) == 0 ? (size_t)st->n_bins : 0;
    double *lo = shard_malloc((nb + 1) * sizeof *lo), *hi = shard_malloc((nb + 1) * sizeof *hi);
    double *mass = shard_malloc((nb + 1) * sizeof *mass), *cum = shard_malloc((nb + 1) * sizeof *cum);
    int64_t *count = shard_malloc((nb + 1) * sizeof *count);
    shard_sim_fragment_histogram(st, nb, lo, hi, mass, cum);
    for (size_t k = 0; k < nb; k++)
        count[k] = st->bin_count[k];
    void *hb[5] = {lo, hi, count, mass, cum};
    static const char *const hn[5] = {"bin_min", "bin_max", "count", "mass", "cumulative"};
    for (int q = 0; q < 5; q++) {
        ft->buf[11 + q] = hb[q];
        ft->hcols[q] = (shard_column){hn[q], q == 2 ? SHARD_TYPE_I64 : SHARD_TYPE_F64, 1, hb[q]};
    }
    tables[1] = (shard_output_table){.group = "fragments/histogram", .n_rows = nb, .n_cols = 5, .cols = ft->hcols};
    return 2;
}

void shard_sim_fragment_tables_free(shard_sim_fragment_tables *ft)
{
    for (int q = 0; q < 16; q++)
        free(ft->buf[q]);
    memset(ft, 0, sizeof *ft);
}

int shard_sim_fragment_csv(shard_sim *s, const shard_sim_fragment_tables *ft, shard_error *err)
{
    const shard_fragment_stats *st = &s->frag.stats;
    int rank0 = shard_comm_rank(s->comm) == 0;
    double t = shard_sim_now(s);
    char line[512];
    snprintf(line, sizeof line, "%ld,%.9g,%lld,%.9g,%.9g,%.6g,%.6g,%lld,%lld\n", s->step, t, (long long)st->n_fragments,
             st->total_mass > 0.0 ? st->largest_mass / st->total_mass : 0.0, st->largest_mass, st->tau, st->tau_error,
             (long long)st->n_fit, (long long)ft->attrs[9].i);
    int rc = shard_output_csv(s->io.out, s->comm, "fragments.csv",
                              "step,time,n_fragments,largest_fraction,largest_mass,tau,tau_error,n_fit,"
                              "broken_bonds\n",
                              line, err);
    if (rc)
        return rc;
    char *rows = shard_malloc((size_t)SHARD_FRAGMENT_BINS * 200 + 1);
    size_t used = 0;
    rows[0] = '\0';
    if (rank0) {
        const double *lo = ft->hcols[0].data, *hi = ft->hcols[1].data, *mass = ft->hcols[3].data;
        const double *cum = ft->hcols[4].data;
        const int64_t *count = ft->hcols[2].data;
        for (int k = 0; k < st->n_bins; k++)
            used += (size_t)snprintf(rows + used, 200, "%ld,%.9g,%.9g,%.9g,%lld,%.9g,%.9g\n", s->step, t, lo[k], hi[k],
                                     (long long)count[k], mass[k], cum[k]);
    }
    rc = shard_output_csv(s->io.out, s->comm, "fragments_histogram.csv",
                          "step,time,bin_min,bin_max,count,mass,cumulative\n", rows, err);
    free(rows);
    return rc;
}
