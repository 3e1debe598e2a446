/* Linear alltoallv: every receive and send posted at once, then one wait. */
#include "common.h"

static int alltoallv_linear(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_a2av_t v = mc_a2av_of_alltoallv(a);
    return mc_a2av_linear(ctx, &v);
}

const mc_alg_t mc_alg_alltoallv_linear = {
    .coll = MC_ALLTOALLV, .name = "linear", .doc = "all sends and receives posted at once",
    .fn = alltoallv_linear, .ok = NULL, .cost = mc_a2av_linear_cost, .flags = 0,
};
