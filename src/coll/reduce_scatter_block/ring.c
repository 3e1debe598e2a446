/* Ring reduce-scatter-block: the reduce-scatter ring with p equal blocks. */
#include "../reduce_scatter/common.h"

static int reduce_scatter_block_ring(mc_ctx_t *ctx, const mc_args_t *a)
{
    size_t *counts;
    int rc = mc_rs_block_layout(ctx->size, a->count, &counts);
    if (rc != MPI_SUCCESS) return rc;
    rc = mc_reduce_scatter_ring(ctx, a, counts, counts + ctx->size);
    mc_free(counts);
    return rc;
}

const mc_alg_t mc_alg_reduce_scatter_block_ring = {
    .coll = MC_REDUCE_SCATTER_BLOCK, .name = "ring",
    .doc = "ring of p-1 steps, segmented; bandwidth-optimal, commutative ops",
    .fn = reduce_scatter_block_ring, .ok = NULL, .cost = mc_rs_ring_cost,
    .flags = MC_ALG_COMMUTATIVE_ONLY | MC_ALG_SEGMENTED,
};
