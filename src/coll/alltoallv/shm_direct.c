/* Alltoallv by address posting: every rank reads its blocks straight from the senders' buffers.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_alltoallv(ctx, a, MC_MV_DIRECT); }

/* m is all bytes a rank sends: the alltoall model with one block of m / p. */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    mc_cost_in_t b = *in;
    b.m = in->p > 0 ? in->m / in->p : in->m;
    return mc_mv_cost_alltoallv_direct(h, &b);
}

const mc_alg_t mc_alg_alltoallv_shm_direct = {
    .coll = MC_ALLTOALLV, .name = "shm_direct",
    .doc = "every rank posts sbuf and its send displacements; each reads its block from every peer straight into rbuf (zero copy or CMA; pipe when unreachable or when CMA copies would stream); DAV 2pm (m = bytes sent, equal blocks)",
    .fn = run, .ok = mc_mv_ok_a2a, .cost = cost, .dav = mc_mv_dav_alltoallv_direct, .flags = 0,
};
