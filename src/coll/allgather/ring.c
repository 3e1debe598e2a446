/* Ring allgather: the allgatherv ring on the uniform layout. */
#include "../allgatherv/common.h"

static int allgather_ring(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_agv_t v = mc_agv_of_allgather(a);
    return a->count ? mc_agv_ring(ctx, &v) : MPI_SUCCESS;
}

const mc_alg_t mc_alg_allgather_ring = {
    .coll = MC_ALLGATHER, .name = "ring", .doc = "ring, p-1 neighbour steps",
    .fn = allgather_ring, .ok = NULL, .cost = mc_agv_ring_cost, .flags = 0,
};
