/* Recursive doubling: the largest power of two q <= p exchange with rank XOR 2^k for
 * k = 0 .. log2 q - 1. The p - q extra ranks r >= q first report to r - q (which enters the
 * exchange on their behalf) and are released by it at the end: floor(log2 p) + 2 steps. */
#include "../../p2p/p2p.h"

static int exchange(const mc_ctx_t *ctx, int q)
{
    char s = 0, r = 0;
    int rc = MPI_SUCCESS;
    for (int mask = 1; mask < q && rc == MPI_SUCCESS; mask <<= 1) {
        int peer = ctx->rank ^ mask;
        rc = mc_sendrecv(&s, 0, peer, &r, 0, peer, MC_BARRIER, ctx);
    }
    return rc;
}

static int barrier_recursive_doubling(mc_ctx_t *ctx, const mc_args_t *a)
{
    int p = ctx->size, r = ctx->rank, q = 1 << mc_floor_log2(p), rc;
    char dummy = 0;
    if (p == 1) return MPI_SUCCESS;
    if (r >= q) {
        rc = mc_send(&dummy, 0, r - q, MC_BARRIER, ctx);
        return rc == MPI_SUCCESS ? mc_recv(&dummy, 0, r - q, MC_BARRIER, ctx) : rc;
    }
    int extra = r + q < p;
    rc = extra ? mc_recv(&dummy, 0, r + q, MC_BARRIER, ctx) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS) rc = exchange(ctx, q);
    if (rc == MPI_SUCCESS && extra) rc = mc_send(&dummy, 0, r + q, MC_BARRIER, ctx);
    return rc;
}

/* T = log2(p) * alpha for p a power of two, else (floor(log2 p) + 2) * alpha: the fold-in
 * and the release add one step each. */
static double cost_recursive_doubling(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0.0;
    int steps = mc_floor_log2(in->p) + (mc_is_pof2(in->p) ? 0 : 2);
    return steps * h->alpha;
}

const mc_alg_t mc_alg_barrier_recursive_doubling = {
    .coll = MC_BARRIER, .name = "recursive_doubling",
    .doc = "pairwise exchanges at distance 2^k; extra ranks fold in and out",
    .fn = barrier_recursive_doubling, .ok = NULL, .cost = cost_recursive_doubling, .flags = 0,
};
