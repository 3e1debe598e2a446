/* Heap-ordered binary tree (vrank v feeds 2v+1 and 2v+2); segments pipelined down it. The
 * body lives in common.c because split_binary degrades to it. */
#include "common.h"

static int bcast_binary(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_bcast_binary(ctx, a);
}

const mc_alg_t mc_alg_bcast_binary = {
    .coll = MC_BCAST, .name = "binary", .doc = "binary tree, segments pipelined",
    .fn = bcast_binary, .ok = NULL, .cost = mc_bcast_binary_cost, .flags = MC_ALG_SEGMENTED,
};
