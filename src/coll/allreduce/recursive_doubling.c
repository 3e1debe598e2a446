/* Recursive-doubling allreduce: log2(q) exchanges of the whole vector with partners at
 * distance 1, 2, 4, ... (q = largest power of two <= p; the other ranks are folded in
 * pairwise first and get the result at the end). Partners always hold partials of adjacent
 * contiguous rank ranges and both compute lower op upper, so the result is in rank order and
 * bitwise identical everywhere. Latency-optimal; for small vectors. */
#include "../reduce_scatter/common.h"

static int exchange_all(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf[2], int *cur)
{
    for (int i = 0; i < f->k; i++) {
        int peer = mc_fold_real(f, f->v ^ (1 << i));
        int rc = mc_sendrecv_t(buf[*cur], a->count, peer, buf[!*cur], a->count, peer, a, ctx);
        if (rc == MPI_SUCCESS) rc = mc_rs_combine(buf, cur, 0, a->count, !(f->v >> i & 1), a);
        if (rc != MPI_SUCCESS) return rc;
    }
    mc_rs_copy(a->rbuf, buf[*cur], a->count, a);
    return MPI_SUCCESS;
}

static int allreduce_recursive_doubling(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_fold_allreduce(ctx, a, exchange_all);
}

/* k = log2 q, f = [p != q]: every exchange is alpha + m*beta + m*gamma; the fold adds one
 * message in (reduced) and one out:
 * (k + 2f)*alpha + (k + 2f)*m*beta + (k + f)*m*gamma. */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int k = mc_floor_log2(in->p), f = (1 << k) != in->p;
    return (k + 2 * f) * (h->alpha + in->m * h->beta) + (k + f) * in->m * h->gamma;
}

const mc_alg_t mc_alg_allreduce_recursive_doubling = {
    .coll = MC_ALLREDUCE, .name = "recursive_doubling",
    .doc = "log2(p) whole-vector exchanges, non-power-of-two by folding; keeps rank order",
    .fn = allreduce_recursive_doubling, .ok = NULL, .cost = cost, .flags = 0,
};
