/* Alltoallv through the node region, large blocks read straight from the sender's sbuf: the
 * sizes differ between ranks, so the choice is made per block, by both of its ends.
 * The mechanism lives in allgatherv/shm_common.c ("Hybrid"). */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_alltoallv(ctx, a, MC_MV_HYBRID); }

const mc_alg_t mc_alg_alltoallv_shm_hybrid = {
    .coll = MC_ALLTOALLV, .name = "shm_hybrid",
    .doc = "shm_pipe, except that a block from 64 KiB (16 KiB on a far node) within the cache is read straight from the sender's sbuf (CMA or zero copy) at the offset the sender leaves in the pair's sub-slot, after the pipe's steps; no posting round; DAV as shm_direct for those blocks, shm_pipe for the rest (m = bytes sent)",
    .fn = run, .ok = mc_mv_ok_a2a, .cost = mc_mv_cost_alltoallv_hybrid, .dav = mc_mv_dav_alltoallv_hybrid, .flags = 0,
};
