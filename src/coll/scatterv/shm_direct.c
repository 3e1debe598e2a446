/* Scatterv by address posting: every rank reads its block from the root's buffer.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_scatterv(ctx, a, MC_MV_DIRECT); }

const mc_alg_t mc_alg_scatterv_shm_direct = {
    .coll = MC_SCATTERV, .name = "shm_direct",
    .doc = "root posts sbuf and its displacements; every rank reads its block straight from it (zero copy or CMA; pipe when unreachable); DAV 2pm for equal blocks",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_scatterv_direct, .dav = mc_mv_dav_rooted_direct, .flags = 0,
};
