/* Gatherv by address posting (pip-mcoll III-C): every rank writes into the root's buffer.
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_gatherv(ctx, a, MC_MV_DIRECT); }

const mc_alg_t mc_alg_gatherv_shm_direct = {
    .coll = MC_GATHERV, .name = "shm_direct",
    .doc = "root posts rbuf and its displacements; every rank writes its block straight into it (zero copy; outside the shared heap CMA, staged through the pipe when the copies stream and from 1 MiB blocks unless every rank finds the node far); DAV 2pm for equal blocks",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_gatherv_direct, .dav = mc_mv_dav_rooted_direct, .flags = 0,
};
