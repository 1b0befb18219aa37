/* The start-up (see docs/architecture.md, "From input to state hash"): every rank samples its share of the
 * lattice planes and bonds it with a ghost layer (sample.h), or reads its range of a checkpoint (checkpoint.h);
 * the share becomes a store with bond ghosts, the shares are partitioned in parallel and the particles migrate
 * to their parts (partition.h).  No rank ever holds more than its share.  After any distribution (start-up,
 * restart, migration) the particles' masses and the modules' precomputation are derived here. */
#include "sim_impl.h"

#include "shard/validate.h"

#include "shard/partition.h"
#include "shard/sample.h"
#include "shard/xsum.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

void shard_sim_validate(const shard_sim *s)
{
#ifdef SHARD_DEBUG
    const shard_particles *p = &s->p;
    int nb = s->scene.n_bodies;
    SHARD_VALIDATE(shard_validate_particles(p, s->body_first[nb], nb, why, sizeof why));
    SHARD_VALIDATE(shard_validate_csr(&s->bonds, p->n_owned, p->n_owned + p->n_bond_ghost, p->gid, 0, why, sizeof why));
    SHARD_VALIDATE(shard_validate_csr(&s->cand, p->n_owned, p->n_local, p->gid, 0, why, sizeof why));
#else
    (void)s;
#endif
}

double shard_sim_peak_rss_bytes(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss * 1024.0;
}

int shard_sim_share_distribute(shard_sim *s, shard_share *in, void (*release)(void *ctx), void *ctx,
                               const shard_partition_kinds *kinds, shard_block *blocks, shard_halo **halos,
                               shard_pairlist *mem_mine, shard_error *err)
{
    shard_comm *c = s->comm;
    shard_comm_profile(c, 0); /* the distribution's traffic is the Start-up line's, not the run's */
    int32_t *ghost_owner = NULL;
    shard_partition_share_store(c, in, release, ctx, kinds, &s->p, blocks, &s->bonds, &s->bond_broken, mem_mine,
                                &ghost_owner);
    shard_migrate_stats st;
    int rc = shard_partition_distribute_share(c, kinds, ghost_owner, &s->p, blocks, &s->bonds, &s->bond_broken, halos,
                                              mem_mine, &s->edge_cut, &st, err);
    free(ghost_owner);
    /* The new plans' first bytes filled their ghosts: start-up bytes, not halo traffic. */
    for (int m = 0; m < kinds->n_modules; m++)
        s->halo_bytes_past -= shard_halo_bytes(halos[m]);
    s->startup_moved = shard_comm_sum_i64(c, st.sent);
    s->startup_bytes = st.bytes;
    shard_comm_profile(c, 1);
    return rc;
}

int shard_share_sample(shard_comm *c, const shard_scene *sc, const double *h, shard_share *out, int64_t *body_count,
                       int64_t *n_global, int64_t *n_bonds_global, shard_error *err)
{
    int rank = shard_comm_rank(c), size = shard_comm_size(c), nb = sc->n_bodies;
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    /* Every rank reads the meshes and makes the size checks: the same verdict everywhere. */
    shard_sample_plan plan;
    int rc = shard_sample_plan_make(sc, size, &plan, err);
    if (shard_comm_any_error(c, err))
        return err->code;
    (void)rc;
    shard_sample_share sh;
    shard_sample_share_points(sc, &plan, h, rank, size, &sh);
    int64_t t = plan.plane0[nb];
    int64_t *count = shard_calloc((size_t)t + 1, sizeof *count);
    memcpy(count + sh.first_plane, sh.count, (size_t)(sh.end_plane - sh.first_plane) * sizeof *count);
    shard_comm_sum_i64s(c, count, (size_t)t);
    *n_global = 0;
    for (int b = 0; b < nb; b++) {
        int64_t m = 0;
        for (int64_t g = plan.plane0[b]; g < plan.plane0[b + 1]; g++)
            m += count[g];
        body_count[b] = m;
        *n_global += m;
        if (m == 0 && !err->code)
            shard_sample_empty_body(sc, b, err);
    }
    if (!err->code && (int64_t)size > *n_global)
        shard_error_at(err, sc->path, &sc->bodies[0].loc,
                       "the scene has %lld particle(s) in total, fewer than the %d ranks it runs on",
                       (long long)*n_global, size);
    if (err->code) { /* every rank reached it from the same sums */
        free(count);
        shard_sample_share_free(&sh);
        shard_sample_plan_free(&plan);
        return err->code;
    }
    shard_sample_share_ids(&plan, count, &sh);
    free(count);
    shard_csr bonds = {0};
    int n_notch = shard_sample_n_notches(sc);
    int64_t *cut = shard_calloc((size_t)n_notch + 1, sizeof *cut);
    shard_sample_share_bonds(sc, h, &sh, &bonds, cut);
    shard_comm_sum_i64s(c, cut, (size_t)n_notch);
    shard_sample_notches_missed(sc, cut, err);
    free(cut);
    if (err->code) {
        shard_csr_free(&bonds);
        shard_sample_share_free(&sh);
        shard_sample_plan_free(&plan);
        return err->code;
    }

    /* The own points become the share's rows (ids first .. first + n - 1, in order). */
    size_t n = 0;
    for (size_t i = 0; i < sh.n; i++)
        n += (size_t)shard_sample_share_own(&sh, i);
    shard_particles_alloc_rows(&out->p, n, SHARD_FIELD_STATE);
    shard_particles *p = &out->p;
    out->bstart = shard_malloc((n + 1) * sizeof *out->bstart);
    size_t nbonds = 0;
    for (size_t i = 0; i < sh.n; i++)
        if (shard_sample_share_own(&sh, i))
            nbonds += (size_t)(bonds.start[i + 1] - bonds.start[i]);
    out->partner = shard_malloc((nbonds + 1) * sizeof *out->partner);
    /* Angular velocities are about each body's centre: an exact sum over the ranks. */
    shard_xsum *acc = shard_malloc(((size_t)nb * 3 + 1) * sizeof *acc);
    for (int k = 0; k < 3 * nb; k++)
        shard_xsum_init(&acc[k]);
    size_t r = 0, e_out = 0;
    out->bstart[0] = 0;
    for (size_t i = 0; i < sh.n; i++) {
        if (!shard_sample_share_own(&sh, i))
            continue;
        p->gid[r] = sh.gid[i];
        p->body[r] = sh.body[i];
        memcpy(p->X + 3 * r, sh.X + 3 * i, 3 * sizeof *p->X);
        memcpy(p->x + 3 * r, sh.X + 3 * i, 3 * sizeof *p->x);
        for (int k = 0; k < 3; k++)
            shard_xsum_add_n(&acc[3 * sh.body[i] + k], sh.X + 3 * i + k, 1, 1);
        for (int64_t e = bonds.start[i]; e < bonds.start[i + 1]; e++)
            out->partner[e_out++] = sh.gid[bonds.idx[e]];
        out->bstart[++r] = (int64_t)e_out;
    }
    shard_csr_free(&bonds);
    shard_sample_share_free(&sh);
    shard_sample_plan_free(&plan);
    shard_comm_xsum(c, acc, 3 * nb);
    double *centre = shard_malloc(((size_t)nb * 3 + 1) * sizeof *centre);
    for (int b = 0; b < nb; b++)
        for (int k = 0; k < 3; k++)
            centre[3 * b + k] = shard_xsum_round(&acc[3 * b + k]) / (double)body_count[b];
    free(acc);
    for (size_t i = 0; i < n; i++)
        shard_sample_motion(&sc->bodies[p->body[i]], centre + 3 * p->body[i], p->X + 3 * i, p->v + 3 * i,
                            p->vpres + 3 * i, &p->flags[i]);
    free(centre);
    *n_bonds_global = shard_comm_sum_i64(c, (int64_t)nbonds);
    return 0;
}

int shard_sim_share_sample(shard_sim *s, shard_share *out, shard_error *err)
{
    const shard_scene *sc = &s->scene;
    double *h = shard_malloc(((size_t)sc->n_bodies + 1) * sizeof *h);
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_matter *m = shard_sim_module_of(s, b)->def;
        h[b] = m->bond_radius ? m->bond_radius(sc, b) : 0.0;
    }
    int rc = shard_share_sample(s->comm, sc, h, out, s->body_count, &s->n_global, &s->n_bonds_global, err);
    free(h);
    return rc;
}

/* Splits each module's owned particles into those whose bond partners are all owned (computable while a halo
 * exchange is in flight) and the others. */
static void shard_sim_split_owned(shard_sim *s)
{
    for (int m = 0; m < s->n_modules; m++) {
        shard_sim_module *md = &s->mod[m];
        const shard_block *b = &md->block;
        md->inner = shard_realloc(md->inner, (b->n_owned + 1) * sizeof *md->inner);
        md->outer = shard_realloc(md->outer, (b->n_owned + 1) * sizeof *md->outer);
        md->n_inner = md->n_outer = 0;
        for (size_t i = b->first; i < b->first + b->n_owned; i++) {
            int ghost = 0;
            for (int64_t e = s->bonds.start[i]; e < s->bonds.start[i + 1] && !ghost; e++)
                ghost = (size_t)s->bonds.idx[e] >= s->p.n_owned;
            if (ghost)
                md->outer[md->n_outer++] = (int32_t)i;
            else
                md->inner[md->n_inner++] = (int32_t)i;
        }
    }
}

void shard_sim_masses(shard_sim *s)
{
    /* Each particle stands for one lattice cell of its body (see docs/architecture.md for why not the
     * kernel-density estimate of the paper's §2.6). */
    const shard_scene *sc = &s->scene;
    shard_particles *p = &s->p;
    for (size_t i = 0; i < p->n_local; i++) {
        int b = p->body[i];
        const shard_body_def *bd = &sc->bodies[b];
        const shard_sim_module *md = &s->mod[s->body_module[b]];
        double vol = bd->spacing * bd->spacing * bd->spacing;
        if (md->def->particle_volume) /* a surface's vertices: their share of its area x thickness */
            vol = md->def->particle_volume(sc, b, p->gid[i] - s->body_first[b],
                                           (const char *)md->bodies + (size_t)b * md->def->body_bytes);
        p->volume[i] = vol;
        p->mass[i] = sc->materials[bd->material].density * vol;
    }
}

void shard_sim_prepare_local(shard_sim *s)
{
    s->phys.broken = s->bond_broken; /* a migration reallocates the flags */
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].def->prepare) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            s->mod[m].def->prepare(&mc);
        }
    if (s->frac.on) /* a restart's broken bonds may have made particles bond-based */
        shard_sim_fracture_sync(s);
    shard_sim_split_owned(s);
    shard_reserve((void **)&s->f, &s->f_cap, 3 * s->p.n_owned + 3, sizeof *s->f);
}
