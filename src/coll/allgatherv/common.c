/* Ring and recursive doubling over a general allgatherv layout; allgather is the uniform
 * special case. */
#include "common.h"

mc_agv_t mc_agv_of_allgather(const mc_args_t *a)
{
    mc_agv_t v = {a->sbuf, a->rbuf, NULL, NULL, a->count, a->coll};
    return v;
}

mc_agv_t mc_agv_of_allgatherv(const mc_args_t *a)
{
    mc_agv_t v = {a->sbuf, a->rbuf, a->counts, a->displs, 0, a->coll};
    return v;
}

/* ---------------------------------------------------------------- ring */
/* Step s forwards the block received in step s-1 (own block first): after p-1 steps every
 * block has travelled around the ring. */
int mc_agv_ring(const mc_ctx_t *ctx, const mc_agv_t *v)
{
    int p = ctx->size, r = ctx->rank, right = (r + 1) % p, left = (r - 1 + p) % p;
    mc_copy(v->rbuf + mc_agv_disp(v, r), v->sbuf, mc_agv_len(v, r));
    for (int s = 0; s < p - 1; s++) {
        int sb = (r - s + p) % p, rb = (r - s - 1 + p) % p;
        int rc = mc_sendrecv_nz(v->rbuf + mc_agv_disp(v, sb), mc_agv_len(v, sb), right,
                             v->rbuf + mc_agv_disp(v, rb), mc_agv_len(v, rb), left, v->coll, ctx);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- recursive doubling */
/* Recursive doubling exchanges the blocks of a contiguous rank range, so it runs on a
 * working buffer holding the blocks packed in rank order (pre[i] = offset of block i,
 * pre[p] = total). Non-power-of-two p folds to pof2 "new ranks": for i < rem the pair
 * (2i, 2i+1) is new rank i, represented by 2i+1; rank r >= 2*rem is new rank r - rem. A run
 * of new ranks then still covers a contiguous range of real ranks. */
typedef struct {
    char *work;
    const size_t *pre;
    int pof2, rem;
} fold_t;

static int first_real(const fold_t *f, int u) { return u < f->rem ? 2 * u : u + f->rem; }
static int rep_real(const fold_t *f, int u) { return u < f->rem ? 2 * u + 1 : u + f->rem; }
static char *run_ptr(const fold_t *f, int u) { return f->work + f->pre[first_real(f, u)]; }
static size_t run_len(const fold_t *f, int u, int n)
{
    return f->pre[first_real(f, u + n)] - f->pre[first_real(f, u)];
}

/* New rank u holds the runs of its aligned group; each step doubles the group. */
static int recdbl_pof2(const mc_ctx_t *ctx, const fold_t *f, int u, mc_coll_t c)
{
    for (int mask = 1; mask < f->pof2; mask <<= 1) {
        int pu = u ^ mask, g = u & ~(mask - 1), pg = pu & ~(mask - 1), peer = rep_real(f, pu);
        int rc = mc_sendrecv_nz(run_ptr(f, g), run_len(f, g, mask), peer, run_ptr(f, pg),
                             run_len(f, pg, mask), peer, c, ctx);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* Even ranks below 2*rem hand their block to their odd neighbour and get everything back. */
static int recdbl_folded(const mc_ctx_t *ctx, const fold_t *f, int p, mc_coll_t c)
{
    int r = ctx->rank, rc;
    const size_t *pre = f->pre;
    if (r < 2 * f->rem && r % 2 == 0) {
        rc = mc_sendrecv_nz(f->work + pre[r], pre[r + 1] - pre[r], r + 1, NULL, 0, r + 1, c, ctx);
        if (rc != MPI_SUCCESS) return rc;
        return mc_sendrecv_nz(NULL, 0, r + 1, f->work, pre[p], r + 1, c, ctx);
    }
    if (r < 2 * f->rem) {
        rc = mc_sendrecv_nz(NULL, 0, r - 1, f->work + pre[r - 1], pre[r] - pre[r - 1], r - 1, c, ctx);
        if (rc != MPI_SUCCESS) return rc;
    }
    rc = recdbl_pof2(ctx, f, r < 2 * f->rem ? r / 2 : r - f->rem, c);
    if (rc != MPI_SUCCESS || r >= 2 * f->rem) return rc;
    return mc_sendrecv_nz(f->work, pre[p], r - 1, NULL, 0, r - 1, c, ctx);
}

/* True when the non-empty blocks sit in rank order without gaps, so rbuf itself can be the
 * working buffer (from rbuf + *base); always so for allgather. */
static int rank_ordered(const mc_agv_t *v, const size_t *pre, int p, size_t *base)
{
    int have = 0;
    for (int i = 0; i < p; i++) {
        size_t d = mc_agv_disp(v, i);
        if (!mc_agv_len(v, i)) continue;
        if (d < pre[i] || (have && d - pre[i] != *base)) return 0;
        *base = d - pre[i];
        have = 1;
    }
    return 1;
}

static void unpack(const mc_ctx_t *ctx, const mc_agv_t *v, const char *tmp, const size_t *pre)
{
    for (int i = 0; i < ctx->size; i++)
        if (i != ctx->rank) mc_copy(v->rbuf + mc_agv_disp(v, i), tmp + pre[i], mc_agv_len(v, i));
    mc_copy(v->rbuf + mc_agv_disp(v, ctx->rank), v->sbuf, mc_agv_len(v, ctx->rank));
}

int mc_agv_recdbl(const mc_ctx_t *ctx, const mc_agv_t *v)
{
    int p = ctx->size, r = ctx->rank, rc = MPI_SUCCESS;
    size_t base = 0, *pre = mc_malloc((size_t)(p + 1) * sizeof *pre);
    char *tmp = NULL;
    fold_t f = {v->rbuf, pre, 1 << mc_floor_log2(p), 0};
    if (!pre) return MPI_ERR_NO_MEM;
    f.rem = p - f.pof2;
    pre[0] = 0;
    for (int i = 0; i < p; i++) pre[i + 1] = pre[i] + mc_agv_len(v, i);
    if (!pre[p]) goto cleanup;
    if (rank_ordered(v, pre, p, &base)) {
        f.work += base;
    } else if (!(f.work = tmp = mc_malloc(pre[p]))) {
        rc = MPI_ERR_NO_MEM;
        goto cleanup;
    }
    mc_copy(f.work + pre[r], v->sbuf, mc_agv_len(v, r));
    rc = recdbl_folded(ctx, &f, p, v->coll);
    if (rc == MPI_SUCCESS && tmp) unpack(ctx, v, tmp, pre);
cleanup:
    mc_free(tmp);
    mc_free(pre);
    return rc;
}

/* ---------------------------------------------------------------- costs */
/* T = (p - 1)(alpha + m beta): p-1 steps, one block in and one out per step. */
double mc_agv_ring_cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return (in->p - 1) * (h->alpha + in->m * h->beta);
}

/* Step k exchanges the blocks of 2^k new ranks, of which min(2^k, rem) hold two:
 * T = log2(pof2) alpha + sum_k (2^k + min(2^k, rem)) m beta, which is
 * log2(p) alpha + (p - 1) m beta for a power of two. Otherwise add the fold
 * (alpha + m beta) and the result back to the folded ranks (alpha + p m beta). */
double mc_agv_recdbl_cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int pof2 = 1 << mc_floor_log2(in->p), rem = in->p - pof2;
    double t = 0.0;
    for (int b = 1; b < pof2; b <<= 1) t += h->alpha + (b + (b < rem ? b : rem)) * in->m * h->beta;
    if (rem) t += 2 * h->alpha + (1.0 + in->p) * in->m * h->beta;
    return t;
}
