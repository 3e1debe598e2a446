/* Hierarchical broadcast: a binomial tree across the nodes among one representative per node,
 * then a broadcast inside every node from its representative. The representative is the rank
 * with the root's local rank (the root's lane, so the root's node needs no first node step);
 * a node with fewer ranks uses its leader (local rank 0) instead. Node steps run the
 * shared-memory pipe broadcast, or the binomial one when the node has no region.
 *
 * Messages longer than one segment (MCOLL_BCAST_SEGSIZE, 256 KiB when unset or 0) are
 * pipelined: a representative receives segment k from its parent, forwards it to its children
 * with nonblocking sends and posts the receive of segment k+1, then broadcasts segment k inside
 * its node while those transfers proceed; every node rank runs the same sequence of segment
 * broadcasts. */
#include "../hier/hier.h"
#include "../../p2p/p2p.h"
#include "../../core/stats.h"
#include <math.h>

/* The representative of `node`: local rank lr there, or the node's leader. */
static int rep_of(const mc_hier_t *h, int node, int lr)
{
    int r = mc_hier_rank(h, node, lr);
    return r >= 0 ? r : mc_hier_rank(h, node, 0);
}

/* Binomial tree over node indices rooted at the root's node; ranks are representatives. */
static int across(mc_ctx_t *ctx, const mc_hier_t *h, const mc_args_t *a, int lr)
{
    mc_tree_t t;
    int rc = MPI_SUCCESS;
    mc_tree_binomial(&t, h->n, h->N, ctx->node_of[a->root]);
    mc_stats_rounds(MC_BCAST, (uint64_t)mc_ceil_log2(h->N));
    if (t.parent >= 0) rc = mc_recv(a->rbuf, a->count, rep_of(h, t.parent, lr), MC_BCAST, ctx);
    for (int i = 0; rc == MPI_SUCCESS && i < t.nchild; i++)
        rc = mc_send(a->rbuf, a->count, rep_of(h, t.child[i], lr), MC_BCAST, ctx);
    return rc;
}

/* Segment size of the pipelined path: the configured one, else DEFAULT_SEG. */
#define DEFAULT_SEG (256L * 1024)
static long seg_of(const mc_args_t *a) { return a->segsize > 0 ? a->segsize : DEFAULT_SEG; }

/* Node step on bytes [off, off + len) of the buffer, from local rank `from`. */
static int node_seg(const mc_hier_t *h, const mc_args_t *a, size_t off, size_t len, int from)
{
    mc_args_t nb = *a;
    nb.rbuf = (char *)a->rbuf + off;
    nb.count = nb.bytes = len;
    nb.root = from;
    return mc_hier_on_node(h->node, &nb, "shm_pipe", "binomial");
}

/* The representative's side of segment k: wait for it, pass it on (nonblocking; the sends of
 * segment k-2 are completed first, so at most two segments' sends are in flight), post the
 * receive of segment k+1. */
typedef struct {
    mc_ctx_t *ctx;
    const mc_hier_t *h;
    mc_tree_t t;
    int lr;
    MPI_Request rreq, sreq[2][MC_TREE_MAX];
    int ns[2];
} pipe_t;

static int pipe_step(pipe_t *q, const mc_args_t *a, size_t k, size_t nseg, size_t per)
{
    char *buf = a->rbuf;
    size_t off = k * per, len = k + 1 < nseg ? per : a->count - off;
    int rc = MPI_SUCCESS, b = (int)(k % 2);
    if (q->t.parent >= 0) {
        rc = mc_waitall(1, &q->rreq);
        size_t next = off + per;
        if (rc == MPI_SUCCESS && k + 1 < nseg)
            rc = mc_irecv(buf + next, k + 2 < nseg ? per : a->count - next, rep_of(q->h, q->t.parent, q->lr),
                          MC_BCAST, q->ctx, &q->rreq);
    }
    if (rc == MPI_SUCCESS) rc = mc_waitall(q->ns[b], q->sreq[b]);
    q->ns[b] = 0;
    for (int i = 0; rc == MPI_SUCCESS && i < q->t.nchild; i++) {
        rc = mc_isend(buf + off, len, rep_of(q->h, q->t.child[i], q->lr), MC_BCAST, q->ctx, &q->sreq[b][i]);
        if (rc == MPI_SUCCESS) q->ns[b]++;
    }
    return rc;
}

static int pipelined(mc_ctx_t *ctx, const mc_hier_t *h, const mc_args_t *a, int lr, int rep)
{
    size_t per, nseg = mc_segments(a->count, 1, seg_of(a), &per);
    int is_rep = ctx->rank == rep, from = ctx->local_of[rep], rc = MPI_SUCCESS, rc2;
    pipe_t q = {.ctx = ctx, .h = h, .lr = lr, .rreq = MPI_REQUEST_NULL};
    if (is_rep) {
        mc_tree_binomial(&q.t, h->n, h->N, ctx->node_of[a->root]);
        mc_stats_rounds(MC_BCAST, (uint64_t)mc_ceil_log2(h->N) + nseg - 1);
        if (q.t.parent >= 0)
            rc = mc_irecv(a->rbuf, per, rep_of(h, q.t.parent, lr), MC_BCAST, ctx, &q.rreq);
    }
    for (size_t k = 0; rc == MPI_SUCCESS && k < nseg; k++) {
        if (is_rep) rc = pipe_step(&q, a, k, nseg, per);
        if (rc == MPI_SUCCESS && h->P > 1)
            rc = node_seg(h, a, k * per, k + 1 < nseg ? per : a->count - k * per, from);
    }
    /* on an error, still complete what was posted (the peers match it) */
    rc2 = mc_waitall(1, &q.rreq);
    if (rc == MPI_SUCCESS) rc = rc2;
    for (int b = 0; b < 2; b++) {
        rc2 = mc_waitall(q.ns[b], q.sreq[b]);
        if (rc == MPI_SUCCESS) rc = rc2;
    }
    return rc;
}

static int bcast_hier(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc != MPI_SUCCESS || !a->count) return rc;
    int lr = ctx->local_of[a->root], rep = rep_of(h, h->n, lr);
    if (a->count > (size_t)seg_of(a)) return pipelined(ctx, h, a, lr, rep);
    if (ctx->rank == rep) rc = across(ctx, h, a, lr);
    if (rc != MPI_SUCCESS || h->P == 1) return rc;
    return node_seg(h, a, 0, a->count, ctx->local_of[rep]);
}

/* L = ceil(log2 N) levels, k segments of s bytes (k = 1, s = m when m fits one segment):
 * a representative sends each segment to up to L children (L(alpha + s beta)) while its node
 * broadcasts the previous one (T_shm_pipe(P, s)); the slower of the two paces the pipeline:
 * T = L(alpha + s beta) + (k - 1) max(L(alpha + s beta), T_shm_pipe(P, s)) + T_shm_pipe(P, s).
 * For k = 1: ceil(log2 N)(alpha + m beta) + T_shm_pipe(P, m). */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    double m = in->m, s = in->ms > 0 && in->ms < m ? in->ms : (m > DEFAULT_SEG ? DEFAULT_SEG : m);
    double k = s > 0 ? ceil(m / s) : 1, L = mc_ceil_log2(N);
    double net = L * (h->alpha + s * h->beta), node = mc_hier_node_cost(mc_hier_intra(h, in), MC_BCAST, "shm_pipe", P, s);
    return net + (k > 1 ? (k - 1) * (net > node ? net : node) : 0) + node;
}

const mc_alg_t mc_alg_bcast_hier = {
    .coll = MC_BCAST,
    .name = "hier",
    .doc = "binomial across nodes among the ranks with the root's local rank (node leaders where a "
           "node lacks it), then shm pipe broadcast in every node; segments (segsize, default 256 KiB) "
           "pipelined: node broadcast of one overlaps the inter-node transfer of the next; >= 2 nodes, "
           "any P and root",
    .fn = bcast_hier,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = MC_ALG_SEGMENTED,
};
