/* The start-up and restart distribution: from the share each rank sampled or read to its store, the
 * partition, and the migration to the parts (see partition.h). */
#include "shard/balance.h"
#include "shard/migrate.h"
#include "shard/partition.h"

#include "package_impl.h"

#include "shard/sorted.h"

#include <stdlib.h>
#include <string.h>

void shard_partition_ghost_where(shard_comm *c, const shard_particles *p, const int32_t *ghost_owner, double *where)
{
    int np = c->size;
    size_t n_own = p->n_owned, ng = p->n_bond_ghost;
    size_t *count = shard_calloc((size_t)np + 1, sizeof *count), *at = shard_calloc((size_t)np + 1, sizeof *at);
    for (size_t q = 0; q < ng; q++)
        count[ghost_owner[q]] += 2;
    for (int r = 1; r < np; r++)
        at[r] = at[r - 1] + count[r - 1];
    int64_t *req = shard_malloc((2 * ng + 1) * sizeof *req);
    for (size_t q = 0; q < ng; q++) {
        int64_t *w = req + at[ghost_owner[q]];
        w[0] = c->rank, w[1] = p->gid[n_own + q];
        at[ghost_owner[q]] += 2;
    }
    size_t n_req = 0;
    int64_t *got = shard_comm_exchange_i64(c, req, count, &n_req);
    free(req);
    /* Answers grouped by asker: the requests arrive in rank order of the askers. */
    shard_gidmap own = {0};
    shard_gidmap_build(&own, p->gid, n_own);
    memset(count, 0, ((size_t)np + 1) * sizeof *count);
    for (size_t w = 0; w < n_req; w += 2)
        count[got[w]] += 2;
    int64_t *ans = shard_malloc((n_req + 1) * sizeof *ans);
    for (size_t w = 0; w < n_req; w += 2) {
        int32_t i = shard_gidmap_find(&own, got[w + 1]);
        if (i < 0)
            shard_fail_one(c, SHARD_EXIT_INTERNAL,
                           "start-up: rank %d was asked for particle %lld, which it does "
                           "not hold",
                           c->rank, (long long)got[w + 1]);
        ans[w] = got[w + 1], ans[w + 1] = (int64_t)where[i];
    }
    free(got);
    shard_gidmap_free(&own);
    size_t n_ans = 0;
    int64_t *back = shard_comm_exchange_i64(c, ans, count, &n_ans);
    free(ans);
    shard_gidmap gh = {0};
    shard_gidmap_build(&gh, p->gid + n_own, ng);
    for (size_t w = 0; w < n_ans; w += 2) {
        int32_t j = shard_gidmap_find(&gh, back[w]);
        SHARD_ASSERT(j >= 0);
        where[n_own + (size_t)j] = (double)back[w + 1];
    }
    shard_gidmap_free(&gh);
    free(back), free(count), free(at);
}

/* The rank whose range holds gid: the last r with starts[r] <= gid. */
static int32_t shard_share_owner(const int64_t *starts, int size, int64_t gid)
{
    size_t after = shard_sorted_upper_i64(starts, (size_t)size, gid); /* the first r with starts[r] > gid */
    return after > 0 ? (int32_t)after - 1 : 0;
}

/* Collective: the bond ghosts of a share (the partners outside its range of ids, held by other ranks' shares),
 * by module, owner and id, each once, in a new array of *n_ghost. */
static shard_partition_ghost *shard_share_ghosts(shard_comm *c, const shard_share *in,
                                                 const shard_partition_kinds *kinds, size_t *n_ghost)
{
    int size = shard_comm_size(c);
    size_t n = in->p.n_owned;
    int64_t first = n ? in->p.gid[0] : 0;
    int64_t *starts = shard_malloc(((size_t)size + 1) * sizeof *starts);
    /* An empty share starts where the next rank's does: its rank is never an owner. */
    int64_t mine = n ? first : INT64_MAX;
    shard_comm_allgather_i64(c, mine, starts);
    for (int r = size - 1; r >= 0; r--)
        if (starts[r] == INT64_MAX)
            starts[r] = r + 1 < size ? starts[r + 1] : INT64_MAX;

    size_t ng = 0, cap = 0;
    shard_partition_ghost *gh = NULL;
    int64_t last = first + (int64_t)n;
    for (size_t i = 0; i < n; i++)
        for (int64_t e = in->bstart[i]; e < in->bstart[i + 1]; e++) {
            int64_t j = in->partner[e];
            if (j >= first && j < last)
                continue;
            shard_reserve((void **)&gh, &cap, ng + 1, sizeof *gh);
            gh[ng++] =
                (shard_partition_ghost){kinds->body_module[in->p.body[i]], shard_share_owner(starts, size, j), j};
        }
    if (ng > 1)
        qsort(gh, ng, sizeof *gh, shard_partition_cmp_ghost);
    size_t u = 0;
    for (size_t q = 0; q < ng; q++)
        if (u == 0 || shard_partition_cmp_ghost(&gh[u - 1], &gh[q]) != 0)
            gh[u++] = gh[q];
    free(starts);
    *n_ghost = u;
    return gh;
}

/* A share's bonds as local indices of the store (rows in store order, src_of[k] the share's row of store row k,
 * pos[i] the store row of the share's row i; each row keeps its increasing partner order), with their broken
 * flags; the partners outside the range are the store's ghosts, rows n + q, p->gid set. */
static void shard_share_bonds(const shard_share *in, const shard_particles *p, size_t ng, const size_t *pos,
                              const size_t *src_of, shard_csr *bonds, uint8_t **broken)
{
    size_t n = in->p.n_owned;
    int64_t first = n ? in->p.gid[0] : 0, last = first + (int64_t)n;
    shard_gidmap gk = {0};
    shard_gidmap_build(&gk, p->gid + n, ng);
    size_t nb = n ? (size_t)(in->bstart[n] - in->bstart[0]) : 0;
    shard_csr_reserve(bonds, n, nb + 1);
    bonds->n = n;
    bonds->start[0] = 0;
    *broken = shard_realloc(*broken, nb + 1);
    size_t e_out = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = src_of[k];
        for (int64_t e = in->bstart[i]; e < in->bstart[i + 1]; e++, e_out++) {
            int64_t j = in->partner[e];
            size_t local;
            if (j >= first && j < last) {
                local = pos[j - first];
            } else {
                int32_t q = shard_gidmap_find(&gk, j);
                SHARD_ASSERT(q >= 0);
                local = n + (size_t)q;
            }
            bonds->idx[e_out] = (int32_t)local;
            (*broken)[e_out] = in->broken ? in->broken[e] : 0;
        }
        bonds->start[k + 1] = (int64_t)e_out;
    }
    shard_gidmap_free(&gk);
}

int shard_partition_share_store(shard_comm *c, shard_share *in, void (*release)(void *ctx), void *ctx,
                                const shard_partition_kinds *kinds, shard_particles *p, shard_block *blocks,
                                shard_csr *bonds, uint8_t **broken, shard_pairlist *mem_mine, int32_t **ghost_owner_out)
{
    int nm = kinds->n_modules;
    size_t n = in->p.n_owned;
    /* Owned rows by module, id order kept (a counting pass). */
    size_t *mod_at = shard_calloc((size_t)nm + 1, sizeof *mod_at);
    for (size_t i = 0; i < n; i++)
        mod_at[kinds->body_module[in->p.body[i]] + 1]++;
    for (int m = 0; m < nm; m++)
        mod_at[m + 1] += mod_at[m];
    size_t *pos = shard_malloc((n + 1) * sizeof *pos), *src_of = shard_malloc((n + 1) * sizeof *src_of);
    {
        size_t *fill = shard_malloc(((size_t)nm + 1) * sizeof *fill);
        memcpy(fill, mod_at, ((size_t)nm + 1) * sizeof *fill);
        for (size_t i = 0; i < n; i++) {
            size_t at = fill[kinds->body_module[in->p.body[i]]]++;
            pos[i] = at, src_of[at] = i;
        }
        free(fill);
    }
    /* Bond ghosts: partners outside the range, by module, owner and id. */
    size_t ng = 0;
    shard_partition_ghost *gh = shard_share_ghosts(c, in, kinds, &ng);

    /* The store: owned rows, then the ghosts with their ids only. */
    shard_particles_reserve(p, n + ng);
    p->n_owned = n, p->n_bond_ghost = ng, p->n_local = n + ng;
    for (int f = 0; f < shard_particle_n_fields; f++) {
        const shard_field_desc *d = &shard_particle_fields[f];
        if (!(d->flags & SHARD_FIELD_STATE))
            continue;
        size_t rb = shard_field_row_bytes(d);
        char *dst = shard_particles_array(p, d);
        const char *src = shard_particles_array(&in->p, d);
        memset(dst, 0, (n + ng) * rb);
        for (size_t k = 0; src && k < n; k++)
            memcpy(dst + k * rb, src + src_of[k] * rb, rb);
    }
    for (size_t q = 0; q < ng; q++)
        p->gid[n + q] = gh[q].gid;
    memcpy(p->x_build, p->x, 3 * n * sizeof *p->x_build);
    int32_t *ghost_owner = shard_malloc((ng + 1) * sizeof *ghost_owner);
    size_t *gmod = shard_calloc((size_t)nm + 1, sizeof *gmod);
    for (size_t q = 0; q < ng; q++)
        ghost_owner[q] = gh[q].owner, gmod[gh[q].module + 1]++;
    free(gh);
    for (int m = 0; m < nm; m++)
        gmod[m + 1] += gmod[m];
    for (int m = 0; m < nm; m++) {
        shard_block *b = &blocks[m];
        shard_block_free(b);
        b->first = mod_at[m], b->n_owned = mod_at[m + 1] - mod_at[m];
        b->ghost_first = n + gmod[m], b->n_ghost = gmod[m + 1] - gmod[m];
        shard_block_reserve(b, b->n_owned + b->n_ghost);
        const shard_block *sb = in->mod_rows ? &in->mod_rows[m] : NULL;
        for (int r = 0; sb && r < b->n_rows; r++) {
            const shard_field_desc *d = &b->rows[r];
            if (!(d->flags & SHARD_FIELD_STATE) || !sb->col[r])
                continue;
            size_t rb = shard_field_row_bytes(d);
            char *dst = shard_field_array(b, d);
            const char *src = shard_field_array(sb, d);
            for (size_t k = 0; k < b->n_owned; k++)
                memcpy(dst + k * rb, src + src_of[b->first + k] * rb, rb);
        }
    }
    free(gmod);

    /* Bonds as local indices (rows keep their increasing partner order), with their broken flags. */
    shard_share_bonds(in, p, ng, pos, src_of, bonds, broken);
    /* The force terms' memories: the owned rows, in store order. */
    for (int q = 0; q < kinds->n_lists; q++) {
        shard_pairlist *l = &mem_mine[q];
        const shard_pairlist *a = in->lists ? &in->lists[q] : NULL;
        shard_pairlist_reset(l, n);
        for (size_t k = 0; a && a->n && k < n; k++)
            for (int64_t e = a->start[src_of[k]]; e < a->start[src_of[k] + 1]; e++)
                shard_pairlist_push(l, k, a->key[e], a->val + (size_t)a->width * (size_t)e);
        shard_pairlist_finish(l);
    }
    free(pos), free(src_of), free(mod_at);
    if (release)
        release(ctx);
    *ghost_owner_out = ghost_owner;
    return 0;
}

void shard_share_free(shard_share *sh)
{
    shard_particles_free(&sh->p);
    free(sh->bstart), free(sh->partner);
    memset(sh, 0, sizeof *sh);
}

/* The start-up partition of the shares into nparts parts: Zoltan's recursive coordinate bisection of the rest
 * positions, weight 1 + bonds per particle (the solid's work; docs/architecture.md, "Start-up and restart"). */
int shard_partition_share(shard_comm *c, const shard_particles *p, const shard_csr *bonds, int nparts, int32_t *part,
                          shard_error *err)
{
    size_t n_own = p->n_owned;
    double *w = shard_malloc((n_own + 1) * sizeof *w);
    for (size_t i = 0; i < n_own; i++)
        w[i] = 1.0 + (double)(bonds->start[i + 1] - bonds->start[i]);
    shard_balancer *b = shard_balancer_create_parts(c, SHARD_BALANCER_STARTUP, nparts);
    int rc = shard_balancer_partition_owners(b, p, p->X, w, NULL, NULL, part, err);
    shard_balancer_destroy(&b);
    free(w);
    return rc;
}

int shard_partition_distribute_share(shard_comm *c, const shard_partition_kinds *kinds, const int32_t *ghost_owner,
                                     shard_particles *p, shard_block *blocks, shard_csr *bonds, uint8_t **broken,
                                     shard_halo **halos, shard_pairlist *lists, int64_t *edge_cut,
                                     shard_migrate_stats *stats, shard_error *err)
{
    memset(err, 0, sizeof *err);
    memset(stats, 0, sizeof *stats);
    size_t n_own = p->n_owned, nl = p->n_owned + p->n_bond_ghost;
    if (edge_cut)
        *edge_cut = 0;
    if (c->size == 1) {
        /* One rank: the share is the whole run and already in the store's order; nothing moves. */
        for (int m = 0; m < kinds->n_modules; m++)
            halos[m] =
                kinds->has_halo[m] ? shard_halo_create(c, 0, NULL, NULL, NULL, NULL, blocks[m].ghost_first) : NULL;
        return 0;
    }
    double *where = shard_malloc((nl + 1) * sizeof *where);
    int32_t *dest = shard_malloc((n_own + 1) * sizeof *dest);
    int rc = shard_partition_share(c, p, bonds, c->size, dest, err);
    if (rc) {
        free(where), free(dest);
        return rc;
    }
    for (size_t i = 0; i < n_own; i++)
        where[i] = (double)dest[i];
    free(dest);
    shard_partition_ghost_where(c, p, ghost_owner, where);
    /* Cut bonds, each once (from its lower id). */
    int64_t cut = 0;
    for (size_t i = 0; i < n_own; i++)
        for (int64_t e = bonds->start[i]; e < bonds->start[i + 1]; e++) {
            size_t j = (size_t)bonds->idx[e];
            cut += p->gid[i] < p->gid[j] && where[i] != where[j];
        }
    cut = shard_comm_sum_i64(c, cut);
    if (edge_cut)
        *edge_cut = cut;
    shard_migrate_to(c, kinds, where, p, blocks, bonds, broken, halos, lists, stats);
    free(where);
    return 0;
}
