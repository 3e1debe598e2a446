/* Ring allgatherv: p-1 steps, each rank forwards to its right neighbour the block it got
 * from its left one. Any counts/displs; no temporary buffer. */
#include "common.h"

static int allgatherv_ring(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_agv_t v = mc_agv_of_allgatherv(a);
    return mc_agv_ring(ctx, &v);
}

const mc_alg_t mc_alg_allgatherv_ring = {
    .coll = MC_ALLGATHERV, .name = "ring", .doc = "ring, p-1 neighbour steps",
    .fn = allgatherv_ring, .ok = NULL, .cost = mc_agv_ring_cost, .flags = 0,
};
