/* Alltoallv through the node region, pipelined in double-buffered slices per (sender, receiver) pair.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_alltoallv(ctx, a, MC_MV_PIPE); }

/* m is all bytes a rank sends: the alltoall model with one block of m / p. */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    mc_cost_in_t b = *in;
    b.m = in->p > 0 ? in->m / in->p : in->m;
    return mc_mv_cost_alltoallv_pipe(h, &b);
}

const mc_alg_t mc_alg_alltoallv_shm_pipe = {
    .coll = MC_ALLTOALLV, .name = "shm_pipe",
    .doc = "node region: a double-buffered sub-slot per (sender, receiver) pair, senders copy slices in, receivers copy them out; DAV 2(2p-1)m (m = bytes sent, equal blocks)",
    .fn = run, .ok = mc_mv_ok_a2a, .cost = cost, .dav = mc_mv_dav_alltoallv_pipe, .flags = 0,
};
