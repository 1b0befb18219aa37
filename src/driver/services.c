/* The collective services a module's collective hooks get (matter.h, shard_collective): exact sums, maxima and
 * gathers over the ranks, through decomposition/comm.c, so that the physics modules stay free of MPI. */
#include "sim_impl.h"

static void shard_sim_svc_xsum(void *impl, shard_xsum *acc, int n)
{
    shard_comm_xsum(((shard_sim *)impl)->comm, acc, n);
}

static void shard_sim_svc_max_doubles(void *impl, double *v, int n)
{
    shard_comm_max_doubles(((shard_sim *)impl)->comm, v, n);
}

static void shard_sim_svc_max_ints(void *impl, int *v, int n) { shard_comm_max_ints(((shard_sim *)impl)->comm, v, n); }

static void *shard_sim_svc_allgather(void *impl, const void *mine, size_t bytes, size_t *total)
{
    return shard_comm_allgather_bytes(((shard_sim *)impl)->comm, mine, bytes, total);
}

static void shard_sim_svc_refresh(void *impl)
{
    shard_sim *s = impl;
    shard_sim_forward_xv(s);
    shard_ghosts_forward(s->ghosts, &s->p, s->ghost_rows, 2); /* x and v */
}

void shard_sim_collective_init(shard_sim *s)
{
    s->svc = (shard_collective){.impl = s,
                                .rank = shard_comm_rank(s->comm),
                                .size = shard_comm_size(s->comm),
                                .xsum = shard_sim_svc_xsum,
                                .max_doubles = shard_sim_svc_max_doubles,
                                .max_ints = shard_sim_svc_max_ints,
                                .allgather = shard_sim_svc_allgather,
                                .refresh = shard_sim_svc_refresh};
}
