/* Binomial tree: every rank forwards each segment to its children, largest subtree first. */
#include "common.h"

static int bcast_binomial(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_tree_t t;
    if (ctx->size == 1 || !a->count) return MPI_SUCCESS;
    mc_tree_binomial(&t, ctx->rank, ctx->size, a->root);
    return mc_bcast_tree(ctx, a, &t);
}

/* T = ceil(log2 p) * n_s * (alpha + m_s * beta): the root has ceil(log2 p) children and sends
 * every segment to each of them, and it is the busiest sender. */
static double cost_binomial(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_ceil_log2(in->p) * mc_bcast_nseg(in) * mc_bcast_msg(h, in->ms);
}

const mc_alg_t mc_alg_bcast_binomial = {
    .coll = MC_BCAST, .name = "binomial", .doc = "binomial tree, segments pipelined",
    .fn = bcast_binomial, .ok = NULL, .cost = cost_binomial, .flags = MC_ALG_SEGMENTED,
};
