/* Allgatherv by address posting: every rank reads every peer's block straight from its buffer.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_allgatherv(ctx, a, MC_MV_DIRECT); }

const mc_alg_t mc_alg_allgatherv_shm_direct = {
    .coll = MC_ALLGATHERV, .name = "shm_direct",
    .doc = "every rank posts its block; each reads every peer's block straight into rbuf (zero copy or CMA, order r+1, r+2, ...; pipe when unreachable, when CMA copies would stream, and near from 512 KiB mean blocks with ordinary buffers; zero-copy blocks pushed with streaming stores beyond the cache or on a far node); DAV 2p^2 m for equal blocks",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_allgatherv_direct, .dav = mc_mv_dav_allgather_direct, .flags = 0,
};
