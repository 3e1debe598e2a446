/* Bruck (dissemination) barrier: at step k rank r signals r + 2^k and waits for r - 2^k
 * (mod p). After ceil(log2 p) steps every rank has heard, directly or through others, from
 * all ranks. Works for any p; the peers of different steps are distinct, so zero-byte
 * messages of one step can never be matched by another step's receive. */
#include "../../p2p/p2p.h"

static int barrier_bruck(mc_ctx_t *ctx, const mc_args_t *a)
{
    int p = ctx->size, r = ctx->rank, rc = MPI_SUCCESS;
    char s = 0, in = 0;
    for (int d = 1; d < p && rc == MPI_SUCCESS; d <<= 1)
        rc = mc_sendrecv(&s, 0, (r + d) % p, &in, 0, (r - d + p) % p, MC_BARRIER, ctx);
    return rc;
}

/* T = ceil(log2 p) * alpha: one zero-byte exchange per step. */
static double cost_bruck(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_ceil_log2(in->p) * h->alpha;
}

const mc_alg_t mc_alg_barrier_bruck = {
    .coll = MC_BARRIER, .name = "bruck", .doc = "dissemination: ceil(log2 p) steps of distance 2^k",
    .fn = barrier_bruck, .ok = NULL, .cost = cost_bruck, .flags = 0,
};
