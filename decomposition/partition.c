/* The start-up and restart distribution: from the share each rank sampled or read to its store, the
 * partition, and the migration to the parts (see partition.h). */
#include "shard/balance.h"
#include "shard/migrate.h"
#include "shard/partition.h"

#include "package_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct shard_share_key {
    int64_t gid;
    size_t local;
} shard_share_key;

static int shard_share_cmp_key(const void *a, const void *b)
{
    const shard_share_key *x = a, *y = b;
    return (x->gid > y->gid) - (x->gid < y->gid);
}

/* Sorted (gid, local index) pairs of rows [r0, r1). */
static shard_share_key *shard_share_keys(const shard_particles *p, size_t r0, size_t r1)
{
    shard_share_key *k = shard_malloc((r1 - r0 + 1) * sizeof *k);
    for (size_t i = r0; i < r1; i++)
        k[i - r0] = (shard_share_key){p->gid[i], i};
    qsort(k, r1 - r0, sizeof *k, shard_share_cmp_key);
    return k;
}

static size_t shard_share_find(const shard_share_key *k, size_t n, int64_t gid)
{
    shard_share_key q = {gid, 0};
    const shard_share_key *hit = bsearch(&q, k, n, sizeof *k, shard_share_cmp_key);
    return hit ? hit->local : (size_t)-1;
}

void shard_partition_ghost_where(shard_comm *c, const shard_particles *p, const int32_t *ghost_owner,
                                 double *where)
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
    shard_share_key *own = shard_share_keys(p, 0, n_own);
    memset(count, 0, ((size_t)np + 1) * sizeof *count);
    for (size_t w = 0; w < n_req; w += 2)
        count[got[w]] += 2;
    int64_t *ans = shard_malloc((n_req + 1) * sizeof *ans);
    for (size_t w = 0; w < n_req; w += 2) {
        size_t i = shard_share_find(own, n_own, got[w + 1]);
        if (i == (size_t)-1)
            shard_fail_one(c, SHARD_EXIT_INTERNAL, "start-up: rank %d was asked for particle %lld, which it does "
                           "not hold", c->rank, (long long)got[w + 1]);
        ans[w] = got[w + 1], ans[w + 1] = (int64_t)where[i];
    }
    free(got), free(own);
    size_t n_ans = 0;
    int64_t *back = shard_comm_exchange_i64(c, ans, count, &n_ans);
    free(ans);
    shard_share_key *gh = shard_share_keys(p, n_own, n_own + ng);
    for (size_t w = 0; w < n_ans; w += 2) {
        size_t j = shard_share_find(gh, ng, back[w]);
        SHARD_ASSERT(j != (size_t)-1);
        where[j] = (double)back[w + 1];
    }
    free(back), free(gh), free(count), free(at);
}

/* The rank whose range holds gid: the last r with starts[r] <= gid. */
static int32_t shard_share_owner(const int64_t *starts, int size, int64_t gid)
{
    int lo = 0, hi = size - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (starts[mid] <= gid)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int shard_partition_share_store(shard_comm *c, shard_share *in, void (*release)(void *ctx), void *ctx,
                                const shard_partition_kinds *kinds, shard_particles *p, shard_block *blocks,
                                shard_csr *bonds, uint8_t **broken, shard_pairlist *mem_mine, int32_t **ghost_owner_out)
{
    int size = shard_comm_size(c), nm = kinds->n_modules;
    size_t n = in->p.n_owned;
    int64_t first = n ? in->p.gid[0] : 0;
    int64_t *starts = shard_malloc(((size_t)size + 1) * sizeof *starts);
    /* An empty share starts where the next rank's does: its rank is never an owner. */
    int64_t mine = n ? first : INT64_MAX;
    shard_comm_allgather_i64(c, mine, starts);
    for (int r = size - 1; r >= 0; r--)
        if (starts[r] == INT64_MAX)
            starts[r] = r + 1 < size ? starts[r + 1] : INT64_MAX;

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
    size_t ng = 0, cap = 0;
    shard_partition_ghost *gh = NULL;
    int64_t last = first + (int64_t)n;
    for (size_t i = 0; i < n; i++)
        for (int64_t e = in->bstart[i]; e < in->bstart[i + 1]; e++) {
            int64_t j = in->partner[e];
            if (j >= first && j < last)
                continue;
            shard_reserve((void **)&gh, &cap, ng + 1, sizeof *gh);
            gh[ng++] = (shard_partition_ghost){kinds->body_module[in->p.body[i]], shard_share_owner(starts, size, j), j};
        }
    if (ng > 1)
        qsort(gh, ng, sizeof *gh, shard_partition_cmp_ghost);
    size_t u = 0;
    for (size_t q = 0; q < ng; q++)
        if (u == 0 || shard_partition_cmp_ghost(&gh[u - 1], &gh[q]) != 0)
            gh[u++] = gh[q];
    ng = u;
    free(starts);

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
    shard_share_key *gk = shard_malloc((ng + 1) * sizeof *gk);
    for (size_t q = 0; q < ng; q++)
        gk[q] = (shard_share_key){gh[q].gid, n + q};
    qsort(gk, ng, sizeof *gk, shard_share_cmp_key);
    free(gh);
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
                shard_share_key key = {j, 0};
                const shard_share_key *hit = bsearch(&key, gk, ng, sizeof *gk, shard_share_cmp_key);
                SHARD_ASSERT(hit);
                local = (size_t)hit->local;
            }
            bonds->idx[e_out] = (int32_t)local;
            (*broken)[e_out] = in->broken ? in->broken[e] : 0;
        }
        bonds->start[k + 1] = (int64_t)e_out;
    }
    free(gk);
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
int shard_partition_share(shard_comm *c, const shard_particles *p, const shard_csr *bonds, int nparts,
                          int32_t *part, shard_error *err)
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
            halos[m] = kinds->has_halo[m] ? shard_halo_create(c, 0, NULL, NULL, NULL, NULL, blocks[m].ghost_first)
                                          : NULL;
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
