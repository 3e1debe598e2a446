/* Recursive-halving reduce-scatter-block: the reduce-scatter one with p equal blocks. */
#include "../reduce_scatter/common.h"

static int reduce_scatter_block_halving(mc_ctx_t *ctx, const mc_args_t *a)
{
    size_t *counts;
    int rc = mc_rs_block_layout(ctx->size, a->count, &counts);
    if (rc != MPI_SUCCESS) return rc;
    rc = mc_reduce_scatter_halving(ctx, a, counts, counts + ctx->size);
    mc_free(counts);
    return rc;
}

const mc_alg_t mc_alg_reduce_scatter_block_recursive_halving = {
    .coll = MC_REDUCE_SCATTER_BLOCK, .name = "recursive_halving",
    .doc = "recursive halving in log2(p) steps, non-power-of-two by folding; keeps rank order",
    .fn = reduce_scatter_block_halving, .ok = NULL, .cost = mc_rs_halving_cost, .flags = 0,
};
