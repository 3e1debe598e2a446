/* Binomial tree: vrank v folds in the partials of v + 1, v + 2, v + 4, ... (each a
 * contiguous vrank range) and sends the result to v minus its lowest set bit. Segmented
 * and pipelined; rank order is kept for non-commutative ops (see common.h). */
#include "common.h"

static void binomial(mc_tree_t *t, int rank, int size, int root, int k)
{
    (void)k;
    mc_tree_binomial(t, rank, size, root);
}

static int reduce_binomial(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_red_tree(ctx, a, binomial, 2);
}

/* T = n_s * ceil(log2 p) * (alpha + m_s * (beta + gamma)): the root receives and folds
 * ceil(log2 p) partials per segment, which paces the pipeline; the first segment itself
 * takes ceil(log2 p) steps, which is the root's share of it. */
static double cost_binomial(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_red_nseg(in) * mc_ceil_log2(in->p) * mc_red_step(h, in->ms);
}

const mc_alg_t mc_alg_reduce_binomial = {
    .coll = MC_REDUCE, .name = "binomial",
    .doc = "binomial tree, segments pipelined; non-commutative ops supported",
    .fn = reduce_binomial, .ok = NULL, .cost = cost_binomial, .flags = MC_ALG_SEGMENTED,
};
