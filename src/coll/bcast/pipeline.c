/* Chain from the root through vranks 1, 2, ..., p-1; segments stream down the chain. */
#include "common.h"

static int bcast_pipeline(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_tree_t t;
    if (ctx->size == 1 || !a->count) return MPI_SUCCESS;
    mc_tree_chain(&t, ctx->rank, ctx->size, a->root, 1);
    return mc_bcast_tree(ctx, a, &t);
}

/* T = (p + n_s - 2) * (alpha + m_s * beta): the first segment needs p - 1 hops to reach the
 * chain's end, the remaining n_s - 1 segments follow one step apart. */
static double cost_pipeline(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0.0;
    return (in->p + mc_bcast_nseg(in) - 2) * mc_bcast_msg(h, in->ms);
}

const mc_alg_t mc_alg_bcast_pipeline = {
    .coll = MC_BCAST, .name = "pipeline", .doc = "segments stream down a single chain",
    .fn = bcast_pipeline, .ok = NULL, .cost = cost_pipeline, .flags = MC_ALG_SEGMENTED,
};
