/* Chain from vrank 0 through 1, 2, ..., p-1: every rank folds its data into the partial
 * coming up the chain and passes it on, segment by segment. Rank order is kept for
 * non-commutative ops (see common.h). */
#include "common.h"

static void chain1(mc_tree_t *t, int rank, int size, int root, int k)
{
    (void)k;
    mc_tree_chain(t, rank, size, root, 1);
}

static int reduce_pipeline(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_red_tree(ctx, a, chain1, 1);
}

/* T = (p + n_s - 2) * (alpha + m_s * (beta + gamma)): the first segment needs p - 1 steps
 * (receive + fold) to reach the root, the remaining n_s - 1 follow one step apart because
 * every rank has a single child. */
static double cost_pipeline(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0.0;
    return (in->p + mc_red_nseg(in) - 2) * mc_red_step(h, in->ms);
}

const mc_alg_t mc_alg_reduce_pipeline = {
    .coll = MC_REDUCE, .name = "pipeline",
    .doc = "segments stream up a single chain; non-commutative ops supported",
    .fn = reduce_pipeline, .ok = NULL, .cost = cost_pipeline, .flags = MC_ALG_SEGMENTED,
};
