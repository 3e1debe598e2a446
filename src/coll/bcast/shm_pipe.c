/* Broadcast through the node region, pipelined in double-buffered slices (yhccl Algorithm 3).
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_bcast(ctx, a, MC_MV_PIPE); }

const mc_alg_t mc_alg_bcast_shm_pipe = {
    .coll = MC_BCAST, .name = "shm_pipe",
    .doc = "node region: root copies slice k into buffer k%nbuf (a ring of up to 1 MiB within the cache, else 2; on a crowded node up to 256 KiB in half op%2 of the data area, so a root need not wait for the last op's readers) while readers copy slice k-1 out (yhccl Alg. 3, adaptive nt copies; <= 2 KiB a fan-out exchange, inline in the root's flag line up to 120 B); DAV 2pm; on a far node, from 16 KiB per rank, the direct protocol (CMA)",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_bcast_pipe, .dav = mc_mv_dav_bcast_pipe, .flags = 0,
};
