/* Linear (chain) exclusive scan: the scan chain, where rank r keeps the received prefix. */
#include "../scan/prefix.h"

static int exscan_linear(mc_ctx_t *ctx, const mc_args_t *a) { return mc_prefix_linear(ctx, a, 1); }

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_prefix_linear_cost(h, in, 1);
}

const mc_alg_t mc_alg_exscan_linear = {
    .coll = MC_EXSCAN, .name = "linear",
    .doc = "chain r-1 -> r: keep the received prefix, forward it combined; segments pipeline",
    .fn = exscan_linear, .ok = NULL, .cost = cost, .flags = MC_ALG_SEGMENTED,
};
