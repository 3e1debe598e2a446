/* Recursive doubling allgather: the allgatherv version on the uniform layout, which is
 * always in rank order, so it works in rbuf without staging. */
#include "../allgatherv/common.h"

static int allgather_recdbl(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_agv_t v = mc_agv_of_allgather(a);
    return a->count ? mc_agv_recdbl(ctx, &v) : MPI_SUCCESS;
}

const mc_alg_t mc_alg_allgather_recursive_doubling = {
    .coll = MC_ALLGATHER, .name = "recursive_doubling",
    .doc = "recursive doubling, non-pof2 folded (2 extra steps)",
    .fn = allgather_recdbl, .ok = NULL, .cost = mc_agv_recdbl_cost, .flags = 0,
};
