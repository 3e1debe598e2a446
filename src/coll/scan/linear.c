/* Linear (chain) prefix reduction: rank r receives the prefix of ranks 0..r-1 from r-1,
 * combines it with its own data (prefix as the lower operand, so any op keeps rank order)
 * and forwards the result to r+1. Segmented: segment s moves down the chain while s+1
 * follows, so the chain is a pipeline. */
#include "prefix.h"
#include <math.h>

/* Hockney: p-1 hops, then the other n_s-1 segments drain one stage time each; a stage is
 * one message of m_s bytes plus one reduction. The exclusive scan reduces on ranks 1..p-2
 * only (none at p = 2), so its critical path has one reduction fewer:
 * scan   T = (p + n_s - 2) * (alpha + m_s * beta + m_s * gamma)
 * exscan T = (p + n_s - 2) * (alpha + m_s * beta) + (p + n_s - 3) * m_s * gamma, p > 2
 *          = n_s * (alpha + m_s * beta), p = 2. */
double mc_prefix_linear_cost(const mc_hockney_t *h, const mc_cost_in_t *in, int exclusive)
{
    double ms = in->ms > 0 && in->ms < in->m ? in->ms : in->m;
    double ns = ms > 0 ? ceil(in->m / ms) : 0, stages = in->p + ns - 2;
    double reductions = !exclusive ? stages : in->p > 2 ? stages - 1 : 0;
    if (in->p < 2 || ns == 0) return 0;
    return stages * (h->alpha + ms * h->beta) + reductions * ms * h->gamma;
}

/* One rank's buffers: `pre` receives the prefix of the lower ranks, `acc` (when this rank
 * must compute it) becomes pre op own data, `fwd` is what goes to r+1. An exclusive scan
 * in place computes acc in rbuf and restores the prefix into it after forwarding; one not
 * in place receives the prefix straight into rbuf. Either way one temporary at most. */
typedef struct {
    char *pre, *acc, *tmp;
    const char *fwd;
} chain_t;

static int chain_plan(chain_t *c, const mc_ctx_t *ctx, const mc_args_t *a, int exclusive)
{
    int r = ctx->rank, last = ctx->size - 1, inplace = a->sbuf == a->rbuf;
    int pre_in_rbuf = exclusive && !inplace;
    int acc_in_tmp = exclusive && !inplace && r > 0 && r < last;
    c->tmp = NULL;
    if ((r > 0 && !pre_in_rbuf) || acc_in_tmp)
        if (!(c->tmp = mc_tmp_elems(a->count, a))) return MPI_ERR_NO_MEM;
    c->pre = r == 0 ? NULL : pre_in_rbuf ? a->rbuf : c->tmp;
    if (!exclusive) c->acc = a->rbuf;
    else if (inplace) c->acc = r < last ? a->rbuf : NULL;
    else c->acc = acc_in_tmp ? c->tmp : NULL;
    c->fwd = c->acc ? c->acc : a->sbuf;
    return MPI_SUCCESS;
}

/* Elements [off, off + n) through this rank's stage of the chain. */
static int chain_segment(const chain_t *c, const mc_ctx_t *ctx, const mc_args_t *a,
                         int exclusive, size_t off, size_t n)
{
    int r = ctx->rank, rc = MPI_SUCCESS;
    size_t o = off * a->extent, bytes = n * a->extent;
    if (c->pre) rc = mc_recv_t(c->pre + o, n, a, r - 1, ctx);
    if (rc == MPI_SUCCESS && c->acc) {
        mc_copy(c->acc + o, (const char *)a->sbuf + o, bytes);
        if (c->pre) rc = mc_reduce_local(c->pre + o, c->acc + o, n, a);
    }
    if (rc == MPI_SUCCESS && r < ctx->size - 1) rc = mc_send_t(c->fwd + o, n, a, r + 1, ctx);
    if (rc == MPI_SUCCESS && exclusive && c->pre) mc_copy((char *)a->rbuf + o, c->pre + o, bytes);
    return rc;
}

int mc_prefix_linear(mc_ctx_t *ctx, const mc_args_t *a, int exclusive)
{
    size_t per, nseg = mc_segments(a->count, a->extent, a->segsize, &per);
    chain_t c;
    int rc;
    if (ctx->size == 1 || !nseg) {
        if (!exclusive) mc_copy(a->rbuf, a->sbuf, a->count * a->extent);
        return MPI_SUCCESS;
    }
    if ((rc = chain_plan(&c, ctx, a, exclusive)) != MPI_SUCCESS) return rc;
    for (size_t s = 0; s < nseg && rc == MPI_SUCCESS; s++) {
        size_t off = s * per, n = a->count - off < per ? a->count - off : per;
        rc = chain_segment(&c, ctx, a, exclusive, off, n);
    }
    mc_free(c.tmp);
    return rc;
}

static int scan_linear(mc_ctx_t *ctx, const mc_args_t *a) { return mc_prefix_linear(ctx, a, 0); }

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_prefix_linear_cost(h, in, 0);
}

const mc_alg_t mc_alg_scan_linear = {
    .coll = MC_SCAN, .name = "linear",
    .doc = "chain r-1 -> r: receive the prefix, combine, forward; segments pipeline",
    .fn = scan_linear, .ok = NULL, .cost = cost, .flags = MC_ALG_SEGMENTED,
};
