/* Allgatherv through the node region, pipelined in double-buffered slices (yhccl Algorithm 4).
 * The mechanism lives in allgatherv/shm_common.c. */
#include "../allgatherv/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_mv_allgatherv(ctx, a, MC_MV_PIPE); }

const mc_alg_t mc_alg_allgatherv_shm_pipe = {
    .coll = MC_ALLGATHERV, .name = "shm_pipe",
    .doc = "node region: each rank copies slice k of its block into its slot's buffer k%nbuf (a ring of up to 1 MiB within the cache, else 2), all copy slice k-1 of every slot out (yhccl Alg. 4); own block sbuf->rbuf directly; DAV 2p(p+1)m for equal blocks; on a far node, from 16 KiB per rank, the direct protocol (CMA)",
    .fn = run, .ok = mc_mv_ok, .cost = mc_mv_cost_allgatherv_pipe, .dav = mc_mv_dav_allgather_pipe, .flags = 0,
};
