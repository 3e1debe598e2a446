/* Bruck alltoall (radix 2): ceil(log2 p) steps of about p/2 blocks each, for small blocks.
 * Slot j of rank r starts as the block for rank r + j. Step k ships every slot whose index
 * has bit k set to r + 2^k, which keeps it in slot j: after all steps slot j has moved j
 * ranks, so rank q holds in slot j the block from rank q - j. The work happens in rbuf;
 * placing slot j at rbuf block q - j is an involution, done by swaps. */
#include "../../p2p/p2p.h"
#include <string.h>

typedef struct {
    char *work, *pack, *recv;
    size_t n;
} bruck_t;

/* Slot j = sbuf block r + j (mod p). */
static void rotate_in(const mc_ctx_t *ctx, const mc_args_t *a, char *work)
{
    size_t n = a->count, head = (size_t)(ctx->size - ctx->rank) * n;
    mc_memmove(work, (const char *)a->sbuf + (size_t)ctx->rank * n, head);
    mc_memmove(work + head, a->sbuf, (size_t)ctx->rank * n);
}

/* Copies the slots with `bit` set between work and a packed buffer; returns their count. */
static size_t gather_slots(const bruck_t *b, int p, int bit, int to_pack)
{
    size_t k = 0;
    for (int j = bit; j < p; j++) {
        if (!(j & bit)) continue;
        char *slot = b->work + (size_t)j * b->n;
        if (to_pack) mc_memmove(b->pack + k * b->n, slot, b->n);
        else mc_memmove(slot, b->recv + k * b->n, b->n);
        k++;
    }
    return k;
}

static int bruck_steps(const mc_ctx_t *ctx, const bruck_t *b, mc_coll_t c)
{
    int p = ctx->size, r = ctx->rank;
    for (int bit = 1; bit < p; bit <<= 1) {
        size_t bytes = gather_slots(b, p, bit, 1) * b->n;
        int rc = mc_sendrecv(b->pack, bytes, (r + bit) % p, b->recv, bytes, (r - bit + p) % p, c, ctx);
        if (rc != MPI_SUCCESS) return rc;
        gather_slots(b, p, bit, 0);
    }
    return MPI_SUCCESS;
}

/* rbuf block (r - j) mod p takes slot j; pack (>= one block) is the swap space. */
static void rotate_out(const mc_ctx_t *ctx, const bruck_t *b)
{
    int p = ctx->size, r = ctx->rank;
    for (int j = 0; j < p; j++) {
        int f = (r - j + p) % p;
        if (j >= f) continue;
        char *x = b->work + (size_t)j * b->n, *y = b->work + (size_t)f * b->n;
        mc_memmove(b->pack, x, b->n);
        mc_memmove(x, y, b->n);
        mc_memmove(y, b->pack, b->n);
    }
}

static int alltoall_bruck(mc_ctx_t *ctx, const mc_args_t *a)
{
    int p = ctx->size, rc;
    size_t half = (size_t)(p + 1) / 2 * a->count;   /* most slots one step ships */
    bruck_t b = {a->rbuf, NULL, NULL, a->count};
    if (!a->count) return MPI_SUCCESS;
    rotate_in(ctx, a, b.work);
    if (p == 1) return MPI_SUCCESS;
    b.pack = mc_malloc(2 * half);
    if (!b.pack) return MPI_ERR_NO_MEM;
    b.recv = b.pack + half;
    rc = bruck_steps(ctx, &b, a->coll);
    if (rc == MPI_SUCCESS) rotate_out(ctx, &b);
    mc_free(b.pack);
    return rc;
}

/* T = ceil(log2 p) (alpha + (p/2) m beta): every step ships the slots with one index bit
 * set, about half of the p blocks (local packing not counted). */
static double cost_bruck(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_ceil_log2(in->p) * (h->alpha + in->p / 2.0 * in->m * h->beta);
}

const mc_alg_t mc_alg_alltoall_bruck = {
    .coll = MC_ALLTOALL, .name = "bruck", .doc = "Bruck, radix 2, ceil(log2 p) packed steps",
    .fn = alltoall_bruck, .ok = NULL, .cost = cost_bruck, .flags = 0,
};
