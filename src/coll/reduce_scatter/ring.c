/* Ring reduce-scatter: p-1 steps; at step k rank r passes the partial of block r-k-1 to r+1
 * and adds its own input to the partial of block r-k-2 from r-1, which after the last step
 * is block r. Bandwidth-optimal ((p-1)/p of the vector sent and reduced), p-1 latencies;
 * the partials wrap around the ring, so commutative ops only. */
#include "common.h"

int mc_reduce_scatter_ring(mc_ctx_t *ctx, const mc_args_t *a, const size_t *counts, const size_t *displs)
{
    return mc_rs_ring(ctx, a, a->sbuf, counts, displs, a->rbuf);
}

static int reduce_scatter_ring(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_reduce_scatter_ring(ctx, a, a->counts, a->displs);
}

const mc_alg_t mc_alg_reduce_scatter_ring = {
    .coll = MC_REDUCE_SCATTER, .name = "ring",
    .doc = "ring of p-1 steps, segmented; bandwidth-optimal, commutative ops",
    .fn = reduce_scatter_ring, .ok = NULL, .cost = mc_rs_ring_cost,
    .flags = MC_ALG_COMMUTATIVE_ONLY | MC_ALG_SEGMENTED,
};
