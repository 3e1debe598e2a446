/* Gather through the node region: the gatherv pipe on the uniform layout.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_gatherv(ctx, a, MC_MV_PIPE); }

const mc_alg_t mc_alg_gather_shm_pipe = {
    .coll = MC_GATHER, .name = "shm_pipe",
    .doc = "node region: non-roots copy slices of their block into their slot (a ring of up to 1 MiB within the cache, else double buffered), the root copies them out; blocks up to 2 KiB with each writer's STEP line, without the pipeline's bookkeeping; DAV 2(2p-1)m; on a far node, from 16 KiB per rank, the direct protocol (CMA); with trials, from 8 KiB per rank the trial's choice",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_gather_pipe, .dav = mc_mv_dav_rooted_pipe, .flags = 0,
};
