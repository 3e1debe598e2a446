/* Scatter by address posting: every rank reads its block from the root's buffer.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_scatterv(ctx, a, MC_MV_DIRECT); }

const mc_alg_t mc_alg_scatter_shm_direct = {
    .coll = MC_SCATTER, .name = "shm_direct",
    .doc = "root posts sbuf; every rank reads its block straight from it (zero copy or CMA; pipe when unreachable, and near from 1 MiB blocks with ordinary buffers); DAV 2pm",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_scatter_direct, .dav = mc_mv_dav_rooted_direct, .flags = 0,
};
