/* Broadcast by address posting (pip-mcoll III-C): readers copy straight from the root's buffer.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_bcast(ctx, a, MC_MV_DIRECT); }

const mc_alg_t mc_alg_bcast_shm_direct = {
    .coll = MC_BCAST, .name = "shm_direct",
    .doc = "every rank posts its buffer; readers copy parts 1..p-1 from the root's, staggered, while the root writes part 0 into every reader's (zero copy or CMA; pipe when unreachable, when CMA copies would stream, and near from 2 MiB with ordinary buffers); DAV 2(p-1)m",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_bcast_direct, .dav = mc_mv_dav_bcast_direct, .flags = 0,
};
