/* Linear and pairwise exchange over a general alltoallv layout; alltoall is the uniform
 * special case. Empty messages are skipped: both ends know every size (MPI requires the
 * send and receive sizes of a pair to match). */
#include "common.h"

mc_a2av_t mc_a2av_of_alltoall(const mc_args_t *a)
{
    mc_a2av_t v = {a->sbuf, a->rbuf, NULL, NULL, NULL, NULL, a->count, a->coll};
    return v;
}

mc_a2av_t mc_a2av_of_alltoallv(const mc_args_t *a)
{
    mc_a2av_t v = {a->sbuf, a->rbuf, a->scounts, a->sdispls, a->counts, a->displs, 0, a->coll};
    return v;
}

static void copy_self(const mc_ctx_t *ctx, const mc_a2av_t *v)
{
    size_t s = mc_a2av_slen(v, ctx->rank), n = mc_a2av_rlen(v, ctx->rank);
    mc_copy(mc_a2av_rptr(v, ctx->rank), mc_a2av_sptr(v, ctx->rank), s < n ? s : n);
}

/* ---------------------------------------------------------------- linear */
/* Receives from r-1, r-2, ... and sends to r+1, r+2, ...: every rank starts with a
 * different peer, so the first messages do not all hit one rank. */
static int post_all(const mc_ctx_t *ctx, const mc_a2av_t *v, MPI_Request *rq, int *n)
{
    int p = ctx->size, r = ctx->rank, rc = MPI_SUCCESS;
    for (int i = 1; i < p && rc == MPI_SUCCESS; i++) {
        int src = (r - i + p) % p;
        if (mc_a2av_rlen(v, src))
            rc = mc_irecv(mc_a2av_rptr(v, src), mc_a2av_rlen(v, src), src, v->coll, ctx, &rq[(*n)++]);
    }
    for (int i = 1; i < p && rc == MPI_SUCCESS; i++) {
        int dst = (r + i) % p;
        if (mc_a2av_slen(v, dst))
            rc = mc_isend(mc_a2av_sptr(v, dst), mc_a2av_slen(v, dst), dst, v->coll, ctx, &rq[(*n)++]);
    }
    if (rc != MPI_SUCCESS) (*n)--;      /* the failed call produced no request */
    return rc;
}

int mc_a2av_linear(const mc_ctx_t *ctx, const mc_a2av_t *v)
{
    int n = 0, rc;
    MPI_Request *rq = NULL;
    copy_self(ctx, v);
    if (ctx->size == 1) return MPI_SUCCESS;
    if (!(rq = mc_malloc(2 * (size_t)ctx->size * sizeof *rq))) return MPI_ERR_NO_MEM;
    rc = post_all(ctx, v, rq, &n);
    if (rc == MPI_SUCCESS) {
        rc = mc_waitall(n, rq);
    } else {
        /* the error is returned to the user; let what was posted finish on its own */
        for (int i = 0; i < n; i++) PMPI_Request_free(&rq[i]);
    }
    mc_free(rq);
    return rc;
}

/* ---------------------------------------------------------------- pairwise */
/* Blocking halves are safe: whoever only sends targets a rank that posts the matching
 * receive in the same step. */
static int xchg(const mc_ctx_t *ctx, const mc_a2av_t *v, int dst, int src)
{
    size_t sn = mc_a2av_slen(v, dst), rn = mc_a2av_rlen(v, src);
    const char *sb = mc_a2av_sptr(v, dst);
    char *rb = mc_a2av_rptr(v, src);
    return mc_sendrecv_nz(sb, sn, dst, rb, rn, src, v->coll, ctx);
}

/* Step i sends to r+i and receives from r-i: one message in and one out per rank and step.
 * For a power of two p the partner r XOR i makes every step a symmetric exchange. */
int mc_a2av_pairwise(const mc_ctx_t *ctx, const mc_a2av_t *v)
{
    int p = ctx->size, r = ctx->rank, x = mc_is_pof2(p);
    copy_self(ctx, v);
    for (int i = 1; i < p; i++) {
        int rc = xchg(ctx, v, x ? r ^ i : (r + i) % p, x ? r ^ i : (r - i + p) % p);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- costs */
/* All 2(p-1) messages are in flight at once: their latencies overlap and the bytes share
 * the port, T = alpha + (p - 1) m beta. Hockney has no contention term, so this is a lower
 * bound: many concurrent large flows congest (that is what pairwise avoids). */
double mc_a2av_linear_cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return in->p > 1 ? h->alpha + (in->p - 1) * in->m * h->beta : 0.0;
}

/* T = (p - 1)(alpha + m beta): p-1 lock-step exchanges of one block each way. */
double mc_a2av_pairwise_cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return (in->p - 1) * (h->alpha + in->m * h->beta);
}
