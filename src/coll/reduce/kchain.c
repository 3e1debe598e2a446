/* k chains of consecutive vranks hang off the root (k = a->radix): partials stream up each
 * chain and the root folds the k chain heads in ascending order, segment by segment. Rank
 * order is kept for non-commutative ops (see common.h). */
#include "common.h"

static int reduce_kchain(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_red_tree(ctx, a, mc_tree_chain, a->radix);
}

/* T = (L - 1 + k * n_s) * (alpha + m_s * (beta + gamma)), k = min(radix, p - 1) chains of
 * at most L = ceil((p - 1) / k) ranks: the first segment climbs L - 1 steps to the chain
 * heads, and the root then folds k partials per segment for all n_s segments. k = 1 gives
 * the pipeline, k = p - 1 the flat tree. */
static double cost_kchain(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0.0;
    int k = in->radix < 1 ? 1 : in->radix;
    if (k > in->p - 1) k = in->p - 1;
    if (k > MC_TREE_MAX) k = MC_TREE_MAX;
    int len = (in->p - 1 + k - 1) / k;
    return (len - 1 + k * mc_red_nseg(in)) * mc_red_step(h, in->ms);
}

const mc_alg_t mc_alg_reduce_kchain = {
    .coll = MC_REDUCE, .name = "kchain",
    .doc = "k chains (k = radix) feeding the root, segments pipelined; non-commutative ops supported",
    .fn = reduce_kchain, .ok = NULL, .cost = cost_kchain,
    .flags = MC_ALG_SEGMENTED | MC_ALG_RADIX,
};
