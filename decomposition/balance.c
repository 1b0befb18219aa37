/* The repartitioner of dynamic load balancing, on Zoltan (see balance.h). */
#include "shard/balance.h"

#include "halo_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zoltan.h>

struct shard_balancer {
    shard_comm *comm;
    struct Zoltan_Struct *zz;
    shard_balancer_method method;
    int nparts;
};

/* What the callbacks see. */
typedef struct shard_balance_view {
    const shard_particles *p;
    const double *w, *where;
    const shard_csr *bonds;
    const int32_t *owner; /* per local particle: its owner (bond ghosts; owned: this rank) */
    int ngw;              /* ZOLTAN_ID_TYPE words of a global id */
} shard_balance_view;

static void shard_balance_put_gid(ZOLTAN_ID_PTR out, int ngw, int64_t gid)
{
    ZOLTAN_ID_TYPE w[4] = {0};
    memcpy(w, &gid, sizeof gid);
    for (int k = 0; k < ngw; k++)
        out[k] = w[k];
}

static int shard_balance_num_obj(void *data, int *ierr)
{
    const shard_balance_view *v = data;
    *ierr = ZOLTAN_OK;
    return (int)v->p->n_owned;
}

static void shard_balance_obj_list(void *data, int ngw, int nlw, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim,
                                   float *wgts, int *ierr)
{
    const shard_balance_view *v = data;
    (void)nlw;
    for (size_t i = 0; i < v->p->n_owned; i++) {
        shard_balance_put_gid(gids + (size_t)ngw * i, ngw, v->p->gid[i]);
        lids[i] = (ZOLTAN_ID_TYPE)i;
        if (wdim > 0)
            wgts[i] = (float)v->w[i];
    }
    *ierr = ZOLTAN_OK;
}

static int shard_balance_num_geom(void *data, int *ierr)
{
    (void)data;
    *ierr = ZOLTAN_OK;
    return 3;
}

static void shard_balance_geom(void *data, int ngw, int nlw, int n, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int dim,
                               double *geom, int *ierr)
{
    const shard_balance_view *v = data;
    (void)ngw, (void)nlw, (void)gids;
    for (int k = 0; k < n; k++)
        for (int d = 0; d < dim; d++)
            geom[(size_t)k * (size_t)dim + (size_t)d] = v->where[3 * (size_t)lids[k] + (size_t)d];
    *ierr = ZOLTAN_OK;
}

static void shard_balance_num_edges(void *data, int ngw, int nlw, int n, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                                    int *num_edges, int *ierr)
{
    const shard_balance_view *v = data;
    (void)ngw, (void)nlw, (void)gids;
    for (int k = 0; k < n; k++) {
        size_t i = (size_t)lids[k];
        num_edges[k] = (int)(v->bonds->start[i + 1] - v->bonds->start[i]);
    }
    *ierr = ZOLTAN_OK;
}

static void shard_balance_edges(void *data, int ngw, int nlw, int n, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                                int *num_edges, ZOLTAN_ID_PTR nbor_gids, int *nbor_procs, int wdim, float *ewgts,
                                int *ierr)
{
    const shard_balance_view *v = data;
    (void)nlw, (void)gids, (void)num_edges, (void)wdim, (void)ewgts;
    size_t e = 0;
    for (int k = 0; k < n; k++) {
        size_t i = (size_t)lids[k];
        for (int64_t b = v->bonds->start[i]; b < v->bonds->start[i + 1]; b++, e++) {
            size_t j = (size_t)v->bonds->idx[b];
            shard_balance_put_gid(nbor_gids + (size_t)ngw * e, ngw, v->p->gid[j]);
            nbor_procs[e] = v->owner[j];
        }
    }
    *ierr = ZOLTAN_OK;
}

shard_balancer *shard_balancer_create(shard_comm *c, shard_balancer_method method)
{
    return shard_balancer_create_parts(c, method, c->size);
}

shard_balancer *shard_balancer_create_parts(shard_comm *c, shard_balancer_method method, int nparts)
{
    static int initialised;
    if (!initialised) {
        float version = 0.0f;
        if (Zoltan_Initialize(0, NULL, &version) != ZOLTAN_OK)
            shard_fail_one(c, SHARD_EXIT_INTERNAL, "Zoltan_Initialize failed");
        initialised = 1;
    }
    shard_balancer *b = shard_calloc(1, sizeof *b);
    b->comm = c;
    b->method = method;
    b->nparts = nparts;
    b->zz = Zoltan_Create(c->world);
    if (!b->zz)
        shard_fail_one(c, SHARD_EXIT_INTERNAL, "Zoltan_Create failed");
    int ngw = (int)((sizeof(int64_t) + sizeof(ZOLTAN_ID_TYPE) - 1) / sizeof(ZOLTAN_ID_TYPE));
    char words[8];
    snprintf(words, sizeof words, "%d", ngw);
    Zoltan_Set_Param(b->zz, "DEBUG_LEVEL", "0");
    Zoltan_Set_Param(b->zz, "NUM_GID_ENTRIES", words);
    Zoltan_Set_Param(b->zz, "NUM_LID_ENTRIES", "1");
    Zoltan_Set_Param(b->zz, "OBJ_WEIGHT_DIM", "1");
    Zoltan_Set_Param(b->zz, "EDGE_WEIGHT_DIM", "0");
    Zoltan_Set_Param(b->zz, "RETURN_LISTS", "PARTS");
    Zoltan_Set_Param(b->zz, "IMBALANCE_TOL", "1.03");
    Zoltan_Set_Param(b->zz, "REMAP", "1");
    char parts[16];
    snprintf(parts, sizeof parts, "%d", nparts);
    Zoltan_Set_Param(b->zz, "NUM_GLOBAL_PARTS", parts);
    if (method == SHARD_BALANCER_STARTUP) {
        Zoltan_Set_Param(b->zz, "LB_METHOD", "RCB");
        Zoltan_Set_Param(b->zz, "LB_APPROACH", "PARTITION");
    } else if (method == SHARD_BALANCER_RCB) {
        Zoltan_Set_Param(b->zz, "LB_METHOD", "RCB");
        Zoltan_Set_Param(b->zz, "RCB_REUSE", "1");
        Zoltan_Set_Param(b->zz, "RCB_RECTILINEAR_BLOCKS", "1");
    } else if (method == SHARD_BALANCER_HSFC) {
        Zoltan_Set_Param(b->zz, "LB_METHOD", "HSFC");
    } else {
        Zoltan_Set_Param(b->zz, "LB_METHOD", "GRAPH");
        Zoltan_Set_Param(b->zz, "GRAPH_PACKAGE", "PHG");
        Zoltan_Set_Param(b->zz, "LB_APPROACH", "REPARTITION");
        Zoltan_Set_Param(b->zz, "CHECK_GRAPH", "0");
        Zoltan_Set_Param(b->zz, "PHG_RANDOMIZE_INPUT", "0");
    }
    return b;
}

int shard_balancer_partition(shard_balancer *b, const shard_particles *p, const double *where, const double *w,
                             const shard_csr *bonds, shard_halo *const *halos, int n_halos, int32_t *dest,
                             shard_error *err)
{
    size_t nl = p->n_owned + p->n_bond_ghost;
    int32_t *owner = shard_malloc((nl + 1) * sizeof *owner);
    for (size_t i = 0; i < nl; i++)
        owner[i] = b->comm->rank;
    for (int m = 0; m < n_halos; m++) {
        const shard_halo *h = halos[m];
        for (int k = 0; h && k < h->n_nbr; k++)
            for (int q = 0; q < h->recv_count[k]; q++)
                owner[h->recv_first + (size_t)h->recv_displ[k] + (size_t)q] = h->nbr[k];
    }
    int rc = shard_balancer_partition_owners(b, p, where, w, bonds, owner, dest, err);
    free(owner);
    return rc;
}

int shard_balancer_partition_owners(shard_balancer *b, const shard_particles *p, const double *where, const double *w,
                                    const shard_csr *bonds, const int32_t *owner, int32_t *dest, shard_error *err)
{
    memset(err, 0, sizeof *err);
    shard_comm *c = b->comm;
    size_t n_own = p->n_owned;
    shard_balance_view v = {.p = p,
                            .w = w,
                            .where = where,
                            .bonds = bonds,
                            .owner = owner,
                            .ngw = (int)((sizeof(int64_t) + sizeof(ZOLTAN_ID_TYPE) - 1) / sizeof(ZOLTAN_ID_TYPE))};
    Zoltan_Set_Num_Obj_Fn(b->zz, shard_balance_num_obj, &v);
    Zoltan_Set_Obj_List_Fn(b->zz, shard_balance_obj_list, &v);
    Zoltan_Set_Num_Geom_Fn(b->zz, shard_balance_num_geom, &v);
    Zoltan_Set_Geom_Multi_Fn(b->zz, shard_balance_geom, &v);
    if (b->method == SHARD_BALANCER_GRAPH) {
        Zoltan_Set_Num_Edges_Multi_Fn(b->zz, shard_balance_num_edges, &v);
        Zoltan_Set_Edge_List_Multi_Fn(b->zz, shard_balance_edges, &v);
    }
    int changes = 0, ngw = 0, nlw = 0, n_imp = 0, n_exp = 0;
    ZOLTAN_ID_PTR imp_g = NULL, imp_l = NULL, exp_g = NULL, exp_l = NULL;
    int *imp_p = NULL, *imp_part = NULL, *exp_p = NULL, *exp_part = NULL;
    int rc = Zoltan_LB_Partition(b->zz, &changes, &ngw, &nlw, &n_imp, &imp_g, &imp_l, &imp_p, &imp_part, &n_exp, &exp_g,
                                 &exp_l, &exp_p, &exp_part);
    int failed = rc != ZOLTAN_OK;
    /* RETURN_LISTS PARTS: the export lists hold every object with its new part. */
    for (size_t i = 0; i < n_own; i++)
        dest[i] = b->nparts == c->size ? c->rank : -1;
    if (!failed)
        for (int k = 0; k < n_exp; k++) {
            size_t i = (size_t)exp_l[k];
            if (i >= n_own || exp_part[k] < 0 || exp_part[k] >= b->nparts) {
                failed = 1;
                break;
            }
            dest[i] = exp_part[k];
        }
    for (size_t i = 0; i < n_own && !failed; i++)
        failed = dest[i] < 0;
    Zoltan_LB_Free_Part(&imp_g, &imp_l, &imp_p, &imp_part);
    Zoltan_LB_Free_Part(&exp_g, &exp_l, &exp_p, &exp_part);
    if (failed)
        shard_error_set(err, SHARD_EXIT_INTERNAL,
                        "Zoltan_LB_Partition failed (code %d) %spartitioning %zu "
                        "particles on rank %d",
                        rc, b->method == SHARD_BALANCER_STARTUP ? "" : "re", n_own, c->rank);
    return shard_comm_any_error(c, err);
}

void shard_balancer_library_version(char *buf, size_t len)
{
    snprintf(buf, len, "%.2f (global ids: %d x %d-bit words)", (double)ZOLTAN_VERSION_NUMBER,
             (int)((sizeof(int64_t) + sizeof(ZOLTAN_ID_TYPE) - 1) / sizeof(ZOLTAN_ID_TYPE)),
             (int)(8 * sizeof(ZOLTAN_ID_TYPE)));
}

void shard_balancer_destroy(shard_balancer **bp)
{
    if (!bp || !*bp)
        return;
    Zoltan_Destroy(&(*bp)->zz);
    free(*bp);
    *bp = NULL;
}
