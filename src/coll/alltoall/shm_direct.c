/* Alltoall by address posting: the alltoallv direct algorithm on the uniform layout.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_alltoallv(ctx, a, MC_MV_DIRECT); }

const mc_alg_t mc_alg_alltoall_shm_direct = {
    .coll = MC_ALLTOALL, .name = "shm_direct",
    .doc = "every rank posts sbuf; each reads its block from every peer straight into rbuf (zero copy or CMA, order r+1, r+2, ...; pipe when unreachable, when CMA copies would stream, and near from 512 KiB blocks with ordinary buffers); DAV 2p^2 m",
    .fn = run, .ok = mc_mv_ok_a2a, .cost = mc_mv_cost_alltoall_direct, .dav = mc_mv_dav_alltoall_direct, .flags = 0,
};
