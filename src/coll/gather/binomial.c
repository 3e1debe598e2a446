/* Binomial-tree gather. In virtual ranks (v = rank - root mod p) the subtree of v is the
 * contiguous range [v, v + mc_binomial_span(v)), so every node forwards one message: its subtree's blocks
 * in vrank order. The root receives straight into rbuf, except the one child range that
 * wraps past rank p-1 (vrank order is rotated against rank order), which is staged. */
#include "../../p2p/p2p.h"

/* Hockney: the root's children hold subtrees of 1, 2, 4, ... ranks (p-1 blocks in all) and
 * the deepest chain has ceil(log2 p) hops; every byte reaches the root's port once:
 * T = ceil(log2 p) * alpha + (p - 1) * m * beta. */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_ceil_log2(in->p) * h->alpha + (in->p - 1) * in->m * h->beta;
}

static int root_gather(mc_ctx_t *ctx, const mc_args_t *a, const mc_tree_t *t)
{
    int p = ctx->size, nreq = 0, rc = MPI_SUCCESS, rc2, wrap = -1;
    size_t m = a->count;
    char *rbuf = a->rbuf, *stage = NULL;
    MPI_Request req[MC_TREE_MAX];
    for (int i = 0; i < t->nchild && rc == MPI_SUCCESS; i++) {
        int c = t->child[i], n = mc_binomial_span(mc_vrank(c, a->root, p), p);
        char *dst = rbuf + (size_t)c * m;
        if (c + n > p) {        /* this range wraps around to rank 0 */
            wrap = i;
            if (!(dst = stage = mc_malloc((size_t)n * m))) { rc = MPI_ERR_NO_MEM; break; }
        }
        rc = mc_irecv(dst, (size_t)n * m, c, a->coll, ctx, &req[nreq]);
        if (rc == MPI_SUCCESS) nreq++;
    }
    if (rc == MPI_SUCCESS) mc_copy(rbuf + (size_t)a->root * m, a->sbuf, m);
    rc2 = mc_waitall(nreq, req);
    if (rc == MPI_SUCCESS) rc = rc2;
    if (rc == MPI_SUCCESS && wrap >= 0) {
        int c = t->child[wrap], n = mc_binomial_span(mc_vrank(c, a->root, p), p);
        mc_copy(rbuf + (size_t)c * m, stage, (size_t)(p - c) * m);
        mc_copy(rbuf, stage + (size_t)(p - c) * m, (size_t)(n - (p - c)) * m);
    }
    mc_free(stage);
    return rc;
}

/* Interior node: own block first, then each child's range at its vrank offset. */
static int inner_gather(mc_ctx_t *ctx, const mc_args_t *a, const mc_tree_t *t, int v)
{
    int p = ctx->size, nreq = 0, rc = MPI_SUCCESS, rc2, n = mc_binomial_span(v, p);
    size_t m = a->count;
    char *tmp = mc_malloc((size_t)n * m);
    MPI_Request req[MC_TREE_MAX];
    if (!tmp) return MPI_ERR_NO_MEM;
    for (int i = 0; i < t->nchild && rc == MPI_SUCCESS; i++) {
        int cv = mc_vrank(t->child[i], a->root, p);
        rc = mc_irecv(tmp + (size_t)(cv - v) * m, (size_t)mc_binomial_span(cv, p) * m, t->child[i], a->coll,
                      ctx, &req[nreq]);
        if (rc == MPI_SUCCESS) nreq++;
    }
    if (rc == MPI_SUCCESS) mc_copy(tmp, a->sbuf, m);
    rc2 = mc_waitall(nreq, req);
    if (rc == MPI_SUCCESS) rc = rc2;
    if (rc == MPI_SUCCESS) rc = mc_send(tmp, (size_t)n * m, t->parent, a->coll, ctx);
    mc_free(tmp);
    return rc;
}

static int gather_binomial(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_tree_t t;
    if (!a->count) return MPI_SUCCESS;
    mc_tree_binomial(&t, ctx->rank, ctx->size, a->root);
    if (t.parent < 0) return root_gather(ctx, a, &t);
    if (!t.nchild) return mc_send(a->sbuf, a->count, t.parent, a->coll, ctx);
    return inner_gather(ctx, a, &t, mc_vrank(ctx->rank, a->root, ctx->size));
}

const mc_alg_t mc_alg_gather_binomial = {
    .coll = MC_GATHER, .name = "binomial",
    .doc = "binomial tree on vranks; each node forwards its subtree's blocks in one message",
    .fn = gather_binomial, .ok = NULL, .cost = cost, .flags = 0,
};
