/* Linear gather: gatherv's flat tree with equal blocks. */
#include "../gatherv/linear.h"

static int gather_linear(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_vlayout_t l = {NULL, NULL, a->count};
    return mc_gatherv_linear_run(ctx, a, &l);
}

const mc_alg_t mc_alg_gather_linear = {
    .coll = MC_GATHER, .name = "linear",
    .doc = "root receives every rank's block directly (nonblocking, all at once)",
    .fn = gather_linear, .ok = NULL, .cost = mc_rooted_linear_cost, .flags = 0,
};
