/* Hierarchical reduce: every node reduces to its representative (the rank with the root's
 * local rank, or the node's leader where the node has fewer ranks), then a binomial tree
 * across the nodes among the representatives combines the node results at the root. Node steps
 * run the movement-avoiding shared-memory reduce, or the binomial one without a region.
 * Commutative ops only: the tree across nodes combines node results out of rank order. */
#include "../hier/hier.h"
#include "../../p2p/p2p.h"
#include "../../core/stats.h"

static int rep_of(const mc_hier_t *h, int node, int lr)
{
    int r = mc_hier_rank(h, node, lr);
    return r >= 0 ? r : mc_hier_rank(h, node, 0);
}

/* Node step: the node's partial into acc at the representative (local rank `to`). */
static int within(const mc_hier_t *h, const mc_args_t *a, int to, void *acc)
{
    if (h->P == 1) {
        mc_copy(acc, a->sbuf, a->count * a->extent);
        return MPI_SUCCESS;
    }
    mc_args_t nr = *a;
    nr.rbuf = acc;
    nr.root = to;
    return mc_hier_on_node(h->node, &nr, "shm_ma", "binomial");
}

/* Binomial tree over node indices rooted at the root's node: fold the children's partials
 * into acc, then pass it up. */
static int across(mc_ctx_t *ctx, const mc_hier_t *h, const mc_args_t *a, int lr, void *acc)
{
    mc_tree_t t;
    mc_tree_binomial(&t, h->n, h->N, ctx->node_of[a->root]);
    mc_stats_rounds(MC_REDUCE, (uint64_t)mc_ceil_log2(h->N));
    void *in = t.nchild ? mc_tmp_elems(a->count, a) : NULL;
    if (t.nchild && !in) return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int i = 0; rc == MPI_SUCCESS && i < t.nchild; i++) {
        rc = mc_recv_t(in, a->count, a, rep_of(h, t.child[i], lr), ctx);
        if (rc == MPI_SUCCESS) rc = mc_reduce_local(in, acc, a->count, a);
    }
    if (rc == MPI_SUCCESS && t.parent >= 0) rc = mc_send_t(acc, a->count, a, rep_of(h, t.parent, lr), ctx);
    mc_free(in);
    return rc;
}

static int reduce_hier(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc != MPI_SUCCESS || !a->count) return rc;
    int lr = ctx->local_of[a->root], rep = rep_of(h, h->n, lr);
    /* the root accumulates in its rbuf, other representatives in a scratch vector */
    void *tmp = NULL, *acc = a->rbuf;
    if (ctx->rank == rep && rep != a->root && !(acc = tmp = mc_tmp_elems(a->count, a)))
        return MPI_ERR_NO_MEM;
    rc = within(h, a, ctx->local_of[rep], acc);
    if (rc == MPI_SUCCESS && ctx->rank == rep) rc = across(ctx, h, a, lr, acc);
    mc_free(tmp);
    return rc;
}

/* T = T_shm_ma(P, m) + ceil(log2 N) * (alpha + m*(beta + gamma)). */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    double t = mc_ceil_log2(N) * (h->alpha + in->m * (h->beta + h->gamma));
    const mc_alg_t *nr = mc_alg_find(MC_REDUCE, "shm_ma");
    if (P > 1 && nr && nr->cost) {
        mc_cost_in_t node = {.p = P, .m = in->m, .ms = in->m, .radix = in->radix, .sockets = 1};
        t += nr->cost(mc_hier_intra(h, in), &node);
    }
    return t;
}

const mc_alg_t mc_alg_reduce_hier = {
    .coll = MC_REDUCE,
    .name = "hier",
    .doc = "shm MA reduce in every node to the rank with the root's local rank (leader where a node "
           "lacks it), binomial across nodes to the root; >= 2 nodes, any P and root, commutative ops",
    .fn = reduce_hier,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
