/* Flat tree: the root sends every segment to every other rank itself. */
#include "common.h"

static int bcast_linear(mc_ctx_t *ctx, const mc_args_t *a)
{
    int p = ctx->size, rc;
    if (p == 1 || !a->count) return MPI_SUCCESS;
    if (ctx->rank != a->root)
        return mc_bcast_seg(ctx, a->rbuf, a->count, a->segsize, a->root, NULL, 0);
    /* the root's fan-out is p - 1: more than an mc_tree_t holds */
    int *child = mc_malloc((size_t)(p - 1) * sizeof *child);
    if (!child) return MPI_ERR_NO_MEM;
    for (int v = 1; v < p; v++) child[v - 1] = mc_rrank(v, a->root, p);
    rc = mc_bcast_seg(ctx, a->rbuf, a->count, a->segsize, -1, child, p - 1);
    mc_free(child);
    return rc;
}

/* T = n_s * (p - 1) * (alpha + m_s * beta): the root sends all n_s * (p - 1) messages in turn. */
static double cost_linear(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_bcast_nseg(in) * (in->p - 1) * mc_bcast_msg(h, in->ms);
}

const mc_alg_t mc_alg_bcast_linear = {
    .coll = MC_BCAST, .name = "linear", .doc = "flat tree: the root sends to every rank",
    .fn = bcast_linear, .ok = NULL, .cost = cost_linear, .flags = MC_ALG_SEGMENTED,
};
