/* Binary tree (depth floor(log2 p), like the heap-ordered one) numbered in pre-order, so
 * that each subtree is a contiguous vrank range: every rank folds its two children's
 * partials into its own data and passes the result up, segment by segment. Rank order is
 * kept for non-commutative ops (see common.h). */
#include "common.h"

static int reduce_binary(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_red_tree(ctx, a, mc_red_tree_preorder, 2);
}

/* T = f * (floor(log2 p) + n_s - 1) * (alpha + m_s * (beta + gamma)), f = min(2, p - 1):
 * a parent receives and folds f partials per segment, which paces the pipeline, and the
 * first segment climbs floor(log2 p) = ceil(log2(p + 1)) - 1 levels of f steps each. */
static double cost_binary(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0.0;
    int f = in->p > 2 ? 2 : 1;
    return f * (mc_floor_log2(in->p) + mc_red_nseg(in) - 1) * mc_red_step(h, in->ms);
}

const mc_alg_t mc_alg_reduce_binary = {
    .coll = MC_REDUCE, .name = "binary",
    .doc = "binary tree, segments pipelined; non-commutative ops supported",
    .fn = reduce_binary, .ok = NULL, .cost = cost_binary, .flags = MC_ALG_SEGMENTED,
};
