/* Pairwise exchange alltoallv: p-1 steps, one partner each way per step. */
#include "common.h"

static int alltoallv_pairwise(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_a2av_t v = mc_a2av_of_alltoallv(a);
    return mc_a2av_pairwise(ctx, &v);
}

const mc_alg_t mc_alg_alltoallv_pairwise = {
    .coll = MC_ALLTOALLV, .name = "pairwise", .doc = "pairwise exchange, p-1 steps",
    .fn = alltoallv_pairwise, .ok = NULL, .cost = mc_a2av_pairwise_cost, .flags = 0,
};
