/* Double ring: a zero-byte token leaves rank 0 and travels to the right twice around the
 * ring. After the first lap every rank has entered; a rank leaves once it has seen the
 * token twice (and passed it on). */
#include "../../p2p/p2p.h"

static int barrier_double_ring(mc_ctx_t *ctx, const mc_args_t *a)
{
    int p = ctx->size, r = ctx->rank, rc = MPI_SUCCESS;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    char dummy = 0;
    if (p == 1) return MPI_SUCCESS;
    for (int lap = 0; lap < 2 && rc == MPI_SUCCESS; lap++) {
        if (r == 0) {
            rc = mc_send(&dummy, 0, right, MC_BARRIER, ctx);
            if (rc == MPI_SUCCESS) rc = mc_recv(&dummy, 0, left, MC_BARRIER, ctx);
        } else {
            rc = mc_recv(&dummy, 0, left, MC_BARRIER, ctx);
            if (rc == MPI_SUCCESS) rc = mc_send(&dummy, 0, right, MC_BARRIER, ctx);
        }
    }
    return rc;
}

/* T = 2 * p * alpha: two full laps of p sequential zero-byte messages. */
static double cost_double_ring(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return in->p > 1 ? 2.0 * in->p * h->alpha : 0.0;
}

const mc_alg_t mc_alg_barrier_double_ring = {
    .coll = MC_BARRIER, .name = "double_ring", .doc = "token twice around the ring from rank 0",
    .fn = barrier_double_ring, .ok = NULL, .cost = cost_double_ring, .flags = 0,
};
