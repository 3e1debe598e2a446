/* Linear fan-in/fan-out: every rank reports to rank 0, which then releases them all. */
#include "../../p2p/p2p.h"

/* Rank 0 collects the p - 1 reports through nonblocking receives, then sends the releases. */
static int root_side(const mc_ctx_t *ctx)
{
    int p = ctx->size, rc;
    char dummy = 0;
    MPI_Request *r = mc_malloc((size_t)(p - 1) * sizeof *r);
    if (!r) return MPI_ERR_NO_MEM;
    int posted = 0;
    for (rc = MPI_SUCCESS; posted < p - 1 && rc == MPI_SUCCESS; posted++)
        rc = mc_irecv(&dummy, 0, posted + 1, MC_BARRIER, ctx, &r[posted]);
    if (rc != MPI_SUCCESS) posted--;
    int rc2 = mc_waitall(posted, r);
    if (rc == MPI_SUCCESS) rc = rc2;
    for (int i = 1; i < p && rc == MPI_SUCCESS; i++)
        rc = mc_send(&dummy, 0, i, MC_BARRIER, ctx);
    mc_free(r);
    return rc;
}

static int barrier_linear(mc_ctx_t *ctx, const mc_args_t *a)
{
    char dummy = 0;
    if (ctx->size == 1) return MPI_SUCCESS;
    if (ctx->rank == 0) return root_side(ctx);
    int rc = mc_send(&dummy, 0, 0, MC_BARRIER, ctx);
    return rc == MPI_SUCCESS ? mc_recv(&dummy, 0, 0, MC_BARRIER, ctx) : rc;
}

/* T = alpha + (p - 1) * alpha = p * alpha: the p - 1 reports arrive in parallel in about one
 * latency (paper §5's observation), then the root sends p - 1 releases one after another. */
static double cost_linear(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return in->p > 1 ? in->p * h->alpha : 0.0;
}

const mc_alg_t mc_alg_barrier_linear = {
    .coll = MC_BARRIER, .name = "linear", .doc = "fan-in to rank 0, then fan-out releases",
    .fn = barrier_linear, .ok = NULL, .cost = cost_linear, .flags = 0,
};
