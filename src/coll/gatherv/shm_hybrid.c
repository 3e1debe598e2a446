/* Gatherv through the node region, large blocks written straight into the root's rbuf: the
 * sizes differ between ranks, so the choice is made per block, by both of its ends.
 * The mechanism lives in allgatherv/shm_common.c ("Hybrid"). */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_gatherv(ctx, a, MC_MV_HYBRID); }

const mc_alg_t mc_alg_gatherv_shm_hybrid = {
    .coll = MC_GATHERV, .name = "shm_hybrid",
    .doc = "shm_pipe, except that a block of 64-256 KiB (16 KiB and up on a far node) within the cache is written straight into the root's rbuf (CMA or zero copy) at the offset the root leaves in the block's slot; no posting round; DAV as shm_direct for those blocks, shm_pipe for the rest",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_gather_hybrid, .dav = mc_mv_dav_gather_hybrid, .flags = 0,
};
