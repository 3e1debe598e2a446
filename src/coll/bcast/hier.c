/* Hierarchical broadcast: a binomial tree across the nodes among one representative per node,
 * then a broadcast inside every node from its representative. The representative is the rank
 * with the root's local rank (the root's lane, so the root's node needs no first node step);
 * a node with fewer ranks uses its leader (local rank 0) instead. Node steps run the
 * shared-memory pipe broadcast, or the binomial one when the node has no region. */
#include "../hier/hier.h"
#include "../../p2p/p2p.h"
#include "../../core/stats.h"

/* The representative of `node`: local rank lr there, or the node's leader. */
static int rep_of(const mc_hier_t *h, int node, int lr)
{
    int r = mc_hier_rank(h, node, lr);
    return r >= 0 ? r : mc_hier_rank(h, node, 0);
}

/* Binomial tree over node indices rooted at the root's node; ranks are representatives. */
static int across(mc_ctx_t *ctx, const mc_hier_t *h, const mc_args_t *a, int lr)
{
    mc_tree_t t;
    int rc = MPI_SUCCESS;
    mc_tree_binomial(&t, h->n, h->N, ctx->node_of[a->root]);
    mc_stats_rounds(MC_BCAST, (uint64_t)mc_ceil_log2(h->N));
    if (t.parent >= 0) rc = mc_recv(a->rbuf, a->count, rep_of(h, t.parent, lr), MC_BCAST, ctx);
    for (int i = 0; rc == MPI_SUCCESS && i < t.nchild; i++)
        rc = mc_send(a->rbuf, a->count, rep_of(h, t.child[i], lr), MC_BCAST, ctx);
    return rc;
}

static int bcast_hier(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc != MPI_SUCCESS || !a->count) return rc;
    int lr = ctx->local_of[a->root], rep = rep_of(h, h->n, lr);
    if (ctx->rank == rep) rc = across(ctx, h, a, lr);
    if (rc != MPI_SUCCESS || h->P == 1) return rc;
    mc_args_t nb = *a;
    nb.root = ctx->local_of[rep];
    return mc_hier_on_node(h->node, &nb, "shm_pipe", "binomial");
}

/* T = ceil(log2 N) * (alpha + m*beta) + T_shm_pipe(P, m). */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    double t = mc_ceil_log2(N) * (h->alpha + in->m * h->beta);
    const mc_alg_t *nb = mc_alg_find(MC_BCAST, "shm_pipe");
    if (P > 1 && nb && nb->cost) {
        mc_cost_in_t node = {.p = P, .m = in->m, .ms = in->m, .radix = in->radix, .sockets = 1};
        t += nb->cost(mc_hier_intra(h, in), &node);
    }
    return t;
}

const mc_alg_t mc_alg_bcast_hier = {
    .coll = MC_BCAST,
    .name = "hier",
    .doc = "binomial across nodes among the ranks with the root's local rank (node leaders where a "
           "node lacks it), then shm pipe broadcast in every node; >= 2 nodes, any P and root",
    .fn = bcast_hier,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = 0,
};
