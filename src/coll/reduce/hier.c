/* Hierarchical reduce: every node reduces to its representative (the rank with the root's
 * local rank, or the node's leader where the node has fewer ranks), then a binomial tree
 * across the nodes among the representatives combines the node results at the root. Node steps
 * run the movement-avoiding shared-memory reduce, or the binomial one without a region.
 * Commutative ops only: the tree across nodes combines node results out of rank order.
 *
 * Vectors longer than one segment (MCOLL_REDUCE_SEGSIZE, 256 KiB when unset or 0) are
 * pipelined: a representative reduces segment k inside its node, folds its children's segment
 * k in and sends it up with a nonblocking send, with the receives of segment k+1 already
 * posted, so the node reduce of segment k+1 overlaps the inter-node reduce of segment k. */
#include "../hier/hier.h"
#include "../../p2p/p2p.h"
#include "../../core/stats.h"
#include <math.h>

static int rep_of(const mc_hier_t *h, int node, int lr)
{
    int r = mc_hier_rank(h, node, lr);
    return r >= 0 ? r : mc_hier_rank(h, node, 0);
}

/* Node step: the node's partial into acc at the representative (local rank `to`). */
static int within(const mc_hier_t *h, const mc_args_t *a, int to, void *acc)
{
    if (h->P == 1) {
        mc_copy(acc, a->sbuf, a->count * a->extent);
        return MPI_SUCCESS;
    }
    mc_args_t nr = *a;
    nr.rbuf = acc;
    nr.root = to;
    return mc_hier_on_node(h->node, &nr, "shm_ma", "binomial");
}

/* Binomial tree over node indices rooted at the root's node: fold the children's partials
 * into acc, then pass it up. */
static int across(mc_ctx_t *ctx, const mc_hier_t *h, const mc_args_t *a, int lr, void *acc)
{
    mc_tree_t t;
    mc_tree_binomial(&t, h->n, h->N, ctx->node_of[a->root]);
    mc_stats_rounds(MC_REDUCE, (uint64_t)mc_ceil_log2(h->N));
    void *in = t.nchild ? mc_tmp_elems(a->count, a) : NULL;
    if (t.nchild && !in) return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int i = 0; rc == MPI_SUCCESS && i < t.nchild; i++) {
        rc = mc_recv_t(in, a->count, a, rep_of(h, t.child[i], lr), ctx);
        if (rc == MPI_SUCCESS) rc = mc_reduce_local(in, acc, a->count, a);
    }
    if (rc == MPI_SUCCESS && t.parent >= 0) rc = mc_send_t(acc, a->count, a, rep_of(h, t.parent, lr), ctx);
    mc_free(in);
    return rc;
}

#define DEFAULT_SEG (256L * 1024)
static long seg_of(const mc_args_t *a) { return a->segsize > 0 ? a->segsize : DEFAULT_SEG; }

/* Node step on elements [off, off + n): the node's partial into acc + off at local rank `to`. */
static int within_seg(const mc_hier_t *h, const mc_args_t *a, int to, void *acc, size_t off, size_t n)
{
    mc_args_t s = *a;
    s.sbuf = mc_elem(a->sbuf, off, a);
    s.count = n;
    s.bytes = n * a->extent;
    return within(h, &s, to, acc ? mc_elem(acc, off, a) : NULL);
}

/* Pipeline state of a representative: receive buffers of two segments per child (segment k in
 * set k % 2), the send of segment k-1 to the parent. */
typedef struct {
    mc_ctx_t *ctx;
    const mc_hier_t *h;
    const mc_args_t *a;
    mc_tree_t t;
    int lr;
    size_t per, nseg;
    char *in;                 /* [2][nchild][per elements] */
    MPI_Request rreq[2][MC_TREE_MAX], sreq;
} rpipe_t;

static size_t seg_len(const rpipe_t *q, size_t k) { return k + 1 < q->nseg ? q->per : q->a->count - k * q->per; }
static char *in_at(const rpipe_t *q, int set, int i)
{
    return q->in + ((size_t)set * (size_t)q->t.nchild + (size_t)i) * q->per * q->a->extent;
}

static int post_recvs(rpipe_t *q, size_t k)
{
    int rc = MPI_SUCCESS, set = (int)(k % 2);
    for (int i = 0; rc == MPI_SUCCESS && i < q->t.nchild; i++)
        rc = mc_irecv_t(in_at(q, set, i), seg_len(q, k), q->a, rep_of(q->h, q->t.child[i], q->lr), q->ctx,
                        &q->rreq[set][i]);
    return rc;
}

/* Segment k after its node step: fold the children's copies in, post the next receives, send up. */
static int across_seg(rpipe_t *q, char *acc, size_t k)
{
    int set = (int)(k % 2), rc = mc_waitall(q->t.nchild, q->rreq[set]);
    size_t n = seg_len(q, k);
    char *mine = mc_elem(acc, k * q->per, q->a);
    for (int i = 0; rc == MPI_SUCCESS && i < q->t.nchild; i++) rc = mc_reduce_local(in_at(q, set, i), mine, n, q->a);
    if (rc == MPI_SUCCESS && k + 1 < q->nseg) rc = post_recvs(q, k + 1);
    if (rc == MPI_SUCCESS && q->t.parent >= 0) {
        rc = mc_waitall(1, &q->sreq);
        if (rc == MPI_SUCCESS) rc = mc_isend_t(mine, n, q->a, rep_of(q->h, q->t.parent, q->lr), q->ctx, &q->sreq);
    }
    return rc;
}

/* Cancels nothing: on an error the posted requests are still completed (the peers match them). */
static int drain(rpipe_t *q, int rc)
{
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < q->t.nchild; i++) {
            int rc2 = mc_waitall(1, &q->rreq[s][i]);
            if (rc == MPI_SUCCESS) rc = rc2;
        }
    int rc2 = mc_waitall(1, &q->sreq);
    return rc == MPI_SUCCESS ? rc2 : rc;
}

static int pipelined(mc_ctx_t *ctx, const mc_hier_t *h, const mc_args_t *a, int lr, int rep, void *acc)
{
    rpipe_t q = {.ctx = ctx, .h = h, .a = a, .lr = lr, .sreq = MPI_REQUEST_NULL};
    q.nseg = mc_segments(a->count, a->extent, seg_of(a), &q.per);
    int is_rep = ctx->rank == rep, to = ctx->local_of[rep], rc = MPI_SUCCESS;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < MC_TREE_MAX; i++) q.rreq[s][i] = MPI_REQUEST_NULL;
    if (is_rep) {
        mc_tree_binomial(&q.t, h->n, h->N, ctx->node_of[a->root]);
        mc_stats_rounds(MC_REDUCE, (uint64_t)mc_ceil_log2(h->N) + q.nseg - 1);
        if (q.t.nchild && !(q.in = mc_tmp_elems(2 * (size_t)q.t.nchild * q.per, a))) return MPI_ERR_NO_MEM;
        rc = post_recvs(&q, 0);
    }
    for (size_t k = 0; rc == MPI_SUCCESS && k < q.nseg; k++) {
        rc = within_seg(h, a, to, is_rep ? acc : NULL, k * q.per, seg_len(&q, k));
        if (rc == MPI_SUCCESS && is_rep) rc = across_seg(&q, acc, k);
    }
    if (is_rep) rc = drain(&q, rc);
    mc_free(q.in);
    return rc;
}

static int reduce_hier(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc != MPI_SUCCESS || !a->count) return rc;
    int lr = ctx->local_of[a->root], rep = rep_of(h, h->n, lr);
    /* the root accumulates in its rbuf, other representatives in a scratch vector */
    void *tmp = NULL, *acc = a->rbuf;
    if (ctx->rank == rep && rep != a->root && !(acc = tmp = mc_tmp_elems(a->count, a)))
        return MPI_ERR_NO_MEM;
    if (a->count * a->extent > (size_t)seg_of(a)) {
        rc = pipelined(ctx, h, a, lr, rep, acc);
    } else {
        rc = within(h, a, ctx->local_of[rep], acc);
        if (rc == MPI_SUCCESS && ctx->rank == rep) rc = across(ctx, h, a, lr, acc);
    }
    mc_free(tmp);
    return rc;
}

/* L = ceil(log2 N) levels, k segments of s bytes (k = 1, s = m when m fits one segment): a
 * representative reduces segment k+1 in its node (T_shm_ma(P, s)) while segment k crosses one
 * level (alpha + s(beta + gamma) per child, up to L children); the slower paces the pipeline:
 * T = T_shm_ma(P, s) + (k - 1) max(T_shm_ma(P, s), L(alpha + s(beta + gamma)))
 *     + L(alpha + s(beta + gamma)).
 * For k = 1: T_shm_ma(P, m) + ceil(log2 N)(alpha + m(beta + gamma)). */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    double m = in->m, s = in->ms > 0 && in->ms < m ? in->ms : (m > DEFAULT_SEG ? DEFAULT_SEG : m);
    double k = s > 0 ? ceil(m / s) : 1;
    double net = mc_ceil_log2(N) * (h->alpha + s * (h->beta + h->gamma));
    double node = mc_hier_node_cost(mc_hier_intra(h, in), MC_REDUCE, "shm_ma", P, s);
    return node + (k > 1 ? (k - 1) * (net > node ? net : node) : 0) + net;
}

const mc_alg_t mc_alg_reduce_hier = {
    .coll = MC_REDUCE,
    .name = "hier",
    .doc = "shm MA reduce in every node to the rank with the root's local rank (leader where a node "
           "lacks it), binomial across nodes to the root; segments (segsize, default 256 KiB) pipelined: "
           "node reduce of one overlaps the inter-node reduce of the previous; >= 2 nodes, any P and "
           "root, commutative ops",
    .fn = reduce_hier,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = MC_ALG_COMMUTATIVE_ONLY | MC_ALG_SEGMENTED,
};
