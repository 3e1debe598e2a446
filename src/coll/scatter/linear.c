/* Linear scatter: scatterv's flat tree with equal blocks. */
#include "../gatherv/linear.h"

static int scatter_linear(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_vlayout_t l = {NULL, NULL, a->count};
    return mc_scatterv_linear_run(ctx, a, &l);
}

const mc_alg_t mc_alg_scatter_linear = {
    .coll = MC_SCATTER, .name = "linear",
    .doc = "root sends every rank's block directly (nonblocking, all at once)",
    .fn = scatter_linear, .ok = NULL, .cost = mc_rooted_linear_cost, .flags = 0,
};
