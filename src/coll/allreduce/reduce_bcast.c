/* Reduce then broadcast: binomial reduce to rank 0, binomial broadcast from it. Rank v of the
 * binomial tree rooted at 0 covers ranks [v, v + 2^j) and its children cover the next
 * ranges up, so combining the children in ascending order (own partial as left operand)
 * keeps rank order. Rank 0 alone reduces the result, so it is identical everywhere. */
#include "../reduce_scatter/common.h"

static int reduce_to_zero(mc_ctx_t *ctx, const mc_args_t *a, const mc_tree_t *t, void *buf[2], int *cur)
{
    int rc = MPI_SUCCESS;
    /* the child list is largest subtree first: walk it backwards for ascending ranks */
    for (int c = t->nchild - 1; rc == MPI_SUCCESS && c >= 0; c--) {
        rc = mc_recv_t(buf[!*cur], a->count, a, t->child[c], ctx);
        if (rc == MPI_SUCCESS) rc = mc_rs_combine(buf, cur, 0, a->count, 1, a);
    }
    if (rc == MPI_SUCCESS && t->parent >= 0) rc = mc_send_t(buf[*cur], a->count, a, t->parent, ctx);
    return rc;
}

static int bcast_from_zero(mc_ctx_t *ctx, const mc_args_t *a, const mc_tree_t *t)
{
    int rc = t->parent >= 0 ? mc_recv_t(a->rbuf, a->count, a, t->parent, ctx) : MPI_SUCCESS;
    for (int c = 0; rc == MPI_SUCCESS && c < t->nchild; c++)
        rc = mc_send_t(a->rbuf, a->count, a, t->child[c], ctx);
    return rc;
}

static int allreduce_reduce_bcast(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_tree_t t;
    int cur = 0, rc;
    if (!a->count) return MPI_SUCCESS;
    mc_rs_copy(a->rbuf, a->sbuf, a->count, a);
    mc_tree_binomial(&t, ctx->rank, ctx->size, 0);
    void *tmp = t.nchild ? mc_tmp_elems(a->count, a) : NULL;
    if (t.nchild && !tmp) return MPI_ERR_NO_MEM;
    void *buf[2] = {a->rbuf, tmp};
    rc = reduce_to_zero(ctx, a, &t, buf, &cur);
    if (rc == MPI_SUCCESS && t.parent < 0) mc_rs_copy(a->rbuf, buf[cur], a->count, a);
    if (rc == MPI_SUCCESS) rc = bcast_from_zero(ctx, a, &t);
    mc_free(tmp);
    return rc;
}

/* L = ceil(log2 p) rounds down (alpha + m*beta + m*gamma) and up (alpha + m*beta):
 * L*(2*alpha + 2*m*beta + m*gamma). */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_ceil_log2(in->p) * (2 * h->alpha + 2 * in->m * h->beta + in->m * h->gamma);
}

const mc_alg_t mc_alg_allreduce_reduce_bcast = {
    .coll = MC_ALLREDUCE, .name = "reduce_bcast",
    .doc = "binomial reduce to rank 0 + binomial broadcast; keeps rank order",
    .fn = allreduce_reduce_bcast, .ok = NULL, .cost = cost, .flags = 0,
};
