/* Flat tree: every rank sends its segments to the root, which folds them in descending rank
 * order, acc = r_j op acc for j = p-1 .. 0, so non-commutative ops come out in rank order
 * and the root's own data is only ever a read-only left operand. One receive is posted a
 * step ahead of the fold, so the root's temporary is two segments (four in place). */
#include "common.h"

typedef struct lin {
    mc_ctx_t *ctx;
    const mc_args_t *a;
    size_t nseg, per, steps;    /* step u = segment u / p, rank p - 1 - u % p */
    int in_place;               /* accumulate in tmp, not in rbuf (it holds the root's data) */
    char *rcv;                  /* [2] segments: received operands */
    char *acc;                  /* [2] segments, in place only */
    MPI_Request req[2];
} lin_t;

static size_t seg_len(const lin_t *l, size_t s)
{
    size_t off = s * l->per;
    return l->a->count - off < l->per ? l->a->count - off : l->per;
}

static int step_rank(const lin_t *l, size_t u) { return l->ctx->size - 1 - (int)(u % (size_t)l->ctx->size); }

static char *acc_of(const lin_t *l, size_t s)
{
    if (l->in_place) return l->acc + (s & 1) * l->per * l->a->extent;
    return mc_elem(l->a->rbuf, s * l->per, l->a);
}

static char *rcv_of(const lin_t *l, size_t u) { return l->rcv + (u & 1) * l->per * l->a->extent; }

/* Rank p - 1 opens each segment's fold: its data goes straight into the accumulator. */
static int post(lin_t *l, size_t u)
{
    if (u >= l->steps) return MPI_SUCCESS;
    size_t s = u / (size_t)l->ctx->size;
    int j = step_rank(l, u);
    if (j == l->a->root) return MPI_SUCCESS;
    char *dst = j == l->ctx->size - 1 ? acc_of(l, s) : rcv_of(l, u);
    return mc_irecv_t(dst, seg_len(l, s), l->a, j, l->ctx, &l->req[u & 1]);
}

static int step(lin_t *l, size_t u)
{
    const mc_args_t *a = l->a;
    size_t s = u / (size_t)l->ctx->size, n = seg_len(l, s);
    int j = step_rank(l, u), rc = post(l, u + 1);
    const char *own = mc_elem(a->sbuf, s * l->per, a);
    if (rc == MPI_SUCCESS && j != a->root) rc = mc_waitall(1, &l->req[u & 1]);
    if (rc != MPI_SUCCESS) return rc;
    if (j == l->ctx->size - 1 && j == a->root) mc_copy(acc_of(l, s), own, n * a->extent);
    else if (j != l->ctx->size - 1)
        rc = mc_reduce_local(j == a->root ? own : rcv_of(l, u), acc_of(l, s), n, a);
    if (j == 0 && l->in_place) mc_copy(mc_elem(a->rbuf, s * l->per, a), acc_of(l, s), n * a->extent);
    return rc;
}

static int root_run(lin_t *l)
{
    int rc = post(l, 0);
    for (size_t u = 0; u < l->steps && rc == MPI_SUCCESS; u++) rc = step(l, u);
    if (rc != MPI_SUCCESS)
        for (int i = 0; i < 2; i++) mc_request_drop(&l->req[i]);
    return rc;
}

static int root_side(lin_t *l)
{
    size_t n = l->per * l->a->extent;
    l->in_place = l->a->sbuf == l->a->rbuf;
    l->steps = l->nseg * (size_t)l->ctx->size;
    l->req[0] = l->req[1] = MPI_REQUEST_NULL;
    l->rcv = mc_malloc(2 * n);
    l->acc = l->in_place ? mc_malloc(2 * n) : NULL;
    int rc = !l->rcv || (l->in_place && !l->acc) ? MPI_ERR_NO_MEM : root_run(l);
    mc_free(l->rcv);
    mc_free(l->acc);
    return rc;
}

static int reduce_linear(mc_ctx_t *ctx, const mc_args_t *a)
{
    lin_t l = {.ctx = ctx, .a = a};
    int rc = MPI_SUCCESS;
    if (!a->count) return MPI_SUCCESS;
    if (ctx->size == 1) {
        mc_copy(a->rbuf, a->sbuf, a->count * a->extent);
        return MPI_SUCCESS;
    }
    l.nseg = mc_segments(a->count, a->extent, a->segsize, &l.per);
    if (ctx->rank == a->root) return root_side(&l);
    for (size_t s = 0; s < l.nseg && rc == MPI_SUCCESS; s++)
        rc = mc_send_t(mc_elem(a->sbuf, s * l.per, a), seg_len(&l, s), a, a->root, ctx);
    return rc;
}

/* T = n_s * (p - 1) * (alpha + m_s * (beta + gamma)): the root receives and folds all
 * n_s * (p - 1) segments itself, one after another. */
static double cost_linear(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_red_nseg(in) * (in->p - 1) * mc_red_step(h, in->ms);
}

const mc_alg_t mc_alg_reduce_linear = {
    .coll = MC_REDUCE, .name = "linear",
    .doc = "flat tree: the root folds every rank's segments in rank order; non-commutative ops supported",
    .fn = reduce_linear, .ok = NULL, .cost = cost_linear, .flags = MC_ALG_SEGMENTED,
};
