/* Scatterv through the node region, large blocks read straight from the root's sbuf: the
 * sizes differ between ranks, so the choice is made per block, by both of its ends.
 * The mechanism lives in allgatherv/shm_common.c ("Hybrid"). */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_scatterv(ctx, a, MC_MV_HYBRID); }

const mc_alg_t mc_alg_scatterv_shm_hybrid = {
    .coll = MC_SCATTERV, .name = "shm_hybrid",
    .doc = "shm_pipe, except that a block from 64 KiB (16 KiB on a far node) is read straight from the root's sbuf (CMA or zero copy) at the offset the root leaves in the block's slot; no posting round; DAV as shm_direct for those blocks, shm_pipe for the rest",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_scatter_hybrid, .dav = mc_mv_dav_scatter_hybrid, .flags = 0,
};
