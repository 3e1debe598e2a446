/* Binomial-tree scatter, the mirror of the binomial gather. In virtual ranks (v = rank -
 * root mod p) the subtree of v is the contiguous range [v, v + mc_binomial_span(v)): each node receives
 * that range in one message, keeps its own block and passes each child its sub-range,
 * largest subtree first (it has the deepest remaining path). The root sends straight from
 * sbuf, except the one child range that wraps past rank p-1, which is packed first. */
#include "../../p2p/p2p.h"

/* Hockney: the root sends subtrees of ..., 4, 2, 1 ranks (p-1 blocks in all) and the
 * deepest chain has ceil(log2 p) hops; every byte leaves the root's port once:
 * T = ceil(log2 p) * alpha + (p - 1) * m * beta. */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_ceil_log2(in->p) * h->alpha + (in->p - 1) * in->m * h->beta;
}

/* Sends ranks [c, c + n) mod p of the root's sbuf to child c. */
static int root_send(mc_ctx_t *ctx, const mc_args_t *a, int c, int n)
{
    int p = ctx->size, rc;
    size_t m = a->count, head = (size_t)(p - c) * m;
    const char *sbuf = a->sbuf;
    char *pack;
    if (c + n <= p) return mc_send(sbuf + (size_t)c * m, (size_t)n * m, c, a->coll, ctx);
    if (!(pack = mc_malloc((size_t)n * m))) return MPI_ERR_NO_MEM;
    mc_copy(pack, sbuf + (size_t)c * m, head);
    mc_copy(pack + head, sbuf, (size_t)n * m - head);
    rc = mc_send(pack, (size_t)n * m, c, a->coll, ctx);
    mc_free(pack);
    return rc;
}

static int root_scatter(mc_ctx_t *ctx, const mc_args_t *a, const mc_tree_t *t)
{
    int rc = MPI_SUCCESS, p = ctx->size;
    for (int i = 0; i < t->nchild && rc == MPI_SUCCESS; i++)
        rc = root_send(ctx, a, t->child[i], mc_binomial_span(mc_vrank(t->child[i], a->root, p), p));
    if (rc == MPI_SUCCESS)
        mc_copy(a->rbuf, (const char *)a->sbuf + (size_t)a->root * a->count, a->count);
    return rc;
}

/* Interior node: the range arrives with this node's block first, children's at vrank offsets. */
static int inner_scatter(mc_ctx_t *ctx, const mc_args_t *a, const mc_tree_t *t, int v)
{
    int p = ctx->size, rc;
    size_t m = a->count;
    char *tmp = mc_malloc((size_t)mc_binomial_span(v, p) * m);
    if (!tmp) return MPI_ERR_NO_MEM;
    rc = mc_recv(tmp, (size_t)mc_binomial_span(v, p) * m, t->parent, a->coll, ctx);
    for (int i = 0; i < t->nchild && rc == MPI_SUCCESS; i++) {
        int cv = mc_vrank(t->child[i], a->root, p);
        rc = mc_send(tmp + (size_t)(cv - v) * m, (size_t)mc_binomial_span(cv, p) * m, t->child[i], a->coll,
                     ctx);
    }
    if (rc == MPI_SUCCESS) mc_copy(a->rbuf, tmp, m);
    mc_free(tmp);
    return rc;
}

static int scatter_binomial(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_tree_t t;
    if (!a->count) return MPI_SUCCESS;
    mc_tree_binomial(&t, ctx->rank, ctx->size, a->root);
    if (t.parent < 0) return root_scatter(ctx, a, &t);
    if (!t.nchild) return mc_recv(a->rbuf, a->count, t.parent, a->coll, ctx);
    return inner_scatter(ctx, a, &t, mc_vrank(ctx->rank, a->root, ctx->size));
}

const mc_alg_t mc_alg_scatter_binomial = {
    .coll = MC_SCATTER, .name = "binomial",
    .doc = "binomial tree on vranks; each node receives its subtree's blocks in one message",
    .fn = scatter_binomial, .ok = NULL, .cost = cost, .flags = 0,
};
