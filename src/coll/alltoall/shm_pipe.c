/* Alltoall through the node region: the alltoallv pipe on the uniform layout.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_alltoallv(ctx, a, MC_MV_PIPE); }

const mc_alg_t mc_alg_alltoall_shm_pipe = {
    .coll = MC_ALLTOALL, .name = "shm_pipe",
    .doc = "node region: a sub-slot per (sender, receiver) pair (a ring of up to 1 MiB within the cache, else double buffered), senders copy slices in, receivers copy them out; DAV 2p(2p-1)m; on a far node, from 16 KiB per rank, the direct protocol (CMA)",
    .fn = run, .ok = mc_mv_ok_a2a, .cost = mc_mv_cost_alltoall_pipe, .dav = mc_mv_dav_alltoall_pipe, .flags = 0,
};
