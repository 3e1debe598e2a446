#include "common.h"
#include <math.h>

/* One segment to every child. Sends already posted are completed even when a later post
 * fails, so the buffer is never left with a pending send behind the caller's back. */
static int send_children(const mc_ctx_t *ctx, const char *seg, size_t len, const int *child,
                         int nchild, MPI_Request *sreq)
{
    int rc = MPI_SUCCESS, posted = 0;
    for (; posted < nchild && rc == MPI_SUCCESS; posted++)
        rc = mc_isend(seg, len, child[posted], MC_BCAST, ctx, &sreq[posted]);
    if (rc != MPI_SUCCESS) posted--;
    int rc2 = mc_waitall(posted, sreq);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* The receive of segment i+1 is posted before segment i is forwarded, so a non-leaf
 * receives the next segment while it sends the current one; two receive slots suffice
 * because segment i's slot is reused only after segment i has been waited for. */
static int run(const mc_ctx_t *ctx, char *buf, size_t n, size_t per, size_t nseg, int parent,
               const int *child, int nchild, MPI_Request *sreq)
{
    MPI_Request rreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rc = MPI_SUCCESS;
    if (parent >= 0) rc = mc_irecv(buf, per, parent, MC_BCAST, ctx, &rreq[0]);
    for (size_t i = 0; i < nseg && rc == MPI_SUCCESS; i++) {
        size_t off = i * per, len = n - off < per ? n - off : per;
        if (parent >= 0 && i + 1 < nseg) {
            size_t noff = off + per, nlen = n - noff < per ? n - noff : per;
            rc = mc_irecv(buf + noff, nlen, parent, MC_BCAST, ctx, &rreq[(i + 1) & 1]);
        }
        if (rc == MPI_SUCCESS && parent >= 0) rc = mc_waitall(1, &rreq[i & 1]);
        if (rc == MPI_SUCCESS) rc = send_children(ctx, buf + off, len, child, nchild, sreq);
    }
    mc_request_drop(&rreq[0]);
    mc_request_drop(&rreq[1]);
    return rc;
}

int mc_bcast_seg(const mc_ctx_t *ctx, void *buf, size_t n, long segsize, int parent,
                 const int *child, int nchild)
{
    size_t per, nseg = mc_segments(n, 1, segsize, &per);
    if (!nseg || (parent < 0 && nchild == 0)) return MPI_SUCCESS;
    MPI_Request *sreq = NULL;
    if (nchild > 0 && !(sreq = mc_malloc((size_t)nchild * sizeof *sreq))) return MPI_ERR_NO_MEM;
    int rc = run(ctx, buf, n, per, nseg, parent, child, nchild, sreq);
    mc_free(sreq);
    return rc;
}

int mc_bcast_tree(const mc_ctx_t *ctx, const mc_args_t *a, const mc_tree_t *t)
{
    return mc_bcast_seg(ctx, a->rbuf, a->count, a->segsize, t->parent, t->child, t->nchild);
}

double mc_bcast_nseg(const mc_cost_in_t *in)
{
    if (in->ms <= 0 || in->m <= in->ms) return 1.0;
    return ceil(in->m / in->ms);
}

double mc_bcast_msg(const mc_hockney_t *h, double bytes)
{
    return h->alpha + bytes * h->beta;
}

/* T = (floor(log2 p) + n_s - 1) * f * (alpha + m_s * beta), f = min(2, p - 1) sends per step:
 * the deepest leaf is floor(log2 p) = ceil(log2(p + 1)) - 1 hops away and the other n_s - 1
 * segments follow one step apart; a step is the f sends of one segment by a parent. (The
 * paper's "2 alpha + m_s beta" step charges one transfer for two sends; Hockney serializes
 * the sender, so both transfers count.) */
double mc_bcast_binary_cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0.0;
    int f = in->p > 2 ? 2 : 1;
    return (mc_floor_log2(in->p) + mc_bcast_nseg(in) - 1) * f * mc_bcast_msg(h, in->ms);
}

int mc_bcast_binary(const mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_tree_t t;
    if (ctx->size == 1 || !a->count) return MPI_SUCCESS;
    mc_tree_kary(&t, ctx->rank, ctx->size, a->root, 2);
    return mc_bcast_tree(ctx, a, &t);
}
