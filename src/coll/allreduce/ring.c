/* Ring allreduce: ring reduce-scatter over p balanced blocks of the vector (segmented), then
 * ring allgather of the reduced blocks. Bandwidth-optimal; the partials wrap around the
 * ring, so commutative ops only. Each block is reduced by one rank and then copied, so the
 * result is bitwise identical everywhere. */
#include "../reduce_scatter/common.h"

/* After the reduce-scatter rank r owns block r; step k forwards block r-k to r+1. */
static int allgather_ring(mc_ctx_t *ctx, const mc_args_t *a, const size_t *counts, const size_t *displs)
{
    int p = ctx->size, r = ctx->rank;
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;
        int rc = mc_sendrecv_t(mc_elem(a->rbuf, displs[sb], a), counts[sb], (r + 1) % p,
                               mc_elem(a->rbuf, displs[rb], a), counts[rb], (r - 1 + p) % p, a, ctx);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

static int allreduce_ring(mc_ctx_t *ctx, const mc_args_t *a)
{
    int p = ctx->size, r = ctx->rank;
    if (!a->count) return MPI_SUCCESS;
    size_t *counts = mc_malloc(sizeof(size_t) * 2 * (size_t)p);
    if (!counts) return MPI_ERR_NO_MEM;
    size_t *displs = counts + p;
    for (int i = 0; i < p; i++) {
        counts[i] = mc_part_len(a->count, p, i);
        displs[i] = mc_part_start(a->count, p, i);
    }
    int rc = mc_rs_ring(ctx, a, a->sbuf, counts, displs, mc_elem(a->rbuf, displs[r], a));
    if (rc == MPI_SUCCESS) rc = allgather_ring(ctx, a, counts, displs);
    mc_free(counts);
    return rc;
}

/* b = m/p per block, ns = ceil(b/ms) segments per reduce-scatter step:
 * (p-1)*(ns*alpha + b*beta + b*gamma) + (p-1)*(alpha + b*beta); unsegmented that is
 * 2(p-1)*alpha + 2(p-1)/p*m*beta + (p-1)/p*m*gamma. */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    double b = in->m / in->p;
    return mc_rs_ring_cost(h, in) + (in->p - 1) * (h->alpha + b * h->beta);
}

const mc_alg_t mc_alg_allreduce_ring = {
    .coll = MC_ALLREDUCE, .name = "ring",
    .doc = "ring reduce-scatter (segmented) + ring allgather; bandwidth-optimal, commutative ops",
    .fn = allreduce_ring, .ok = NULL, .cost = cost,
    .flags = MC_ALG_COMMUTATIVE_ONLY | MC_ALG_SEGMENTED,
};
