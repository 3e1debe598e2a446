/* Bruck allgather: ceil(log2 p) steps for any p. Rank r keeps the blocks rotated so that
 * its own comes first (slot j = block of rank r + j); step k sends the first
 * min(2^k, p - 2^k) slots to r - 2^k and appends as many from r + 2^k. A final
 * un-rotation puts the slots in rank order. Rank 0's rotation is the identity, so it works
 * in rbuf directly. */
#include "../../p2p/p2p.h"
#include <string.h>

static int bruck_steps(const mc_ctx_t *ctx, char *work, size_t n, mc_coll_t c)
{
    int p = ctx->size, r = ctx->rank;
    for (int dist = 1; dist < p; dist <<= 1) {
        size_t bytes = (size_t)(dist < p - dist ? dist : p - dist) * n;
        int rc = mc_sendrecv(work, bytes, (r - dist + p) % p, work + (size_t)dist * n, bytes,
                             (r + dist) % p, c, ctx);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

static int allgather_bruck(mc_ctx_t *ctx, const mc_args_t *a)
{
    int p = ctx->size, r = ctx->rank, rc;
    size_t n = a->count, head = (size_t)(p - r) * n;
    char *rbuf = a->rbuf, *tmp = NULL, *work = rbuf;
    if (!n) return MPI_SUCCESS;
    if (r && !(work = tmp = mc_malloc((size_t)p * n))) return MPI_ERR_NO_MEM;
    mc_copy(work, a->sbuf, n);
    rc = bruck_steps(ctx, work, n, a->coll);
    if (rc == MPI_SUCCESS && tmp) {
        mc_memmove(rbuf + (size_t)r * n, tmp, head);
        mc_memmove(rbuf, tmp + head, (size_t)r * n);
    }
    mc_free(tmp);
    return rc;
}

/* T = ceil(log2 p) alpha + (p - 1) m beta: the step sizes 1, 2, 4, ... (the last one cut
 * to what is missing) add up to the p - 1 foreign blocks. */
static double cost_bruck(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_ceil_log2(in->p) * h->alpha + (in->p - 1) * in->m * h->beta;
}

const mc_alg_t mc_alg_allgather_bruck = {
    .coll = MC_ALLGATHER, .name = "bruck", .doc = "Bruck concatenation, ceil(log2 p) steps",
    .fn = allgather_bruck, .ok = NULL, .cost = cost_bruck, .flags = 0,
};
