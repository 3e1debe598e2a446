/* Split-binary broadcast (collective-models-decision §4.2 + READING-NOTES).
 *
 * The non-root vranks form two binary subtrees, interleaved so that they pair up naturally:
 * side 0 ("left") holds the odd vranks, side 1 ("right") the even ones, and the i-th node of
 * a side is vrank 2i + 1 + side, heap-ordered within its side. The message is cut in two
 * halves; half s flows down side s (segmented, pipelined), then left node v and right node
 * v + 1 swap halves. With p even the last vrank p - 1 is a left node without a partner:
 * it receives the right half from the root. */
#include "common.h"

typedef struct half {
    size_t off, len;
} half_t;

static half_t half_of(size_t count, int side)
{
    size_t len0 = count - count / 2;
    return side == 0 ? (half_t){0, len0} : (half_t){len0, count / 2};
}

/* This node's links within its side's subtree, as real ranks. */
static void side_tree(int v, int p, int root, int *parent, int child[2], int *nchild)
{
    int side = (v - 1) % 2, i = (v - 1) / 2, n = (p - side) / 2;
    *parent = mc_rrank(i == 0 ? 0 : 2 * ((i - 1) / 2) + 1 + side, root, p);
    *nchild = 0;
    for (int c = 2 * i + 1; c <= 2 * i + 2 && c < n; c++)
        child[(*nchild)++] = mc_rrank(2 * c + 1 + side, root, p);
}

/* Root: segment i of both halves goes out together, one to each subtree. */
static int root_phase(const mc_ctx_t *ctx, const mc_args_t *a)
{
    int p = ctx->size, rc = MPI_SUCCESS;
    char *buf = a->rbuf;
    half_t h[2] = {half_of(a->count, 0), half_of(a->count, 1)};
    size_t per[2], n[2];
    for (int s = 0; s < 2; s++) n[s] = mc_segments(h[s].len, 1, a->segsize, &per[s]);
    for (size_t i = 0; rc == MPI_SUCCESS && (i < n[0] || i < n[1]); i++) {
        MPI_Request r[2];
        int nr = 0;
        for (int s = 0; s < 2 && rc == MPI_SUCCESS; s++) {
            if (i >= n[s]) continue;
            size_t off = i * per[s], len = h[s].len - off < per[s] ? h[s].len - off : per[s];
            rc = mc_isend(buf + h[s].off + off, len, mc_rrank(1 + s, a->root, p), MC_BCAST, ctx,
                          &r[nr]);
            if (rc == MPI_SUCCESS) nr++;
        }
        int rc2 = mc_waitall(nr, r);
        if (rc == MPI_SUCCESS) rc = rc2;
    }
    if (rc == MPI_SUCCESS && p % 2 == 0)
        rc = mc_send(buf + h[1].off, h[1].len, mc_rrank(p - 1, a->root, p), MC_BCAST, ctx);
    return rc;
}

/* Non-root: receive and forward this side's half, then fetch the other half. */
static int node_phase(const mc_ctx_t *ctx, const mc_args_t *a)
{
    int p = ctx->size, v = mc_vrank(ctx->rank, a->root, p), side = (v - 1) % 2;
    int parent, child[2], nchild;
    char *buf = a->rbuf;
    half_t mine = half_of(a->count, side), other = half_of(a->count, 1 - side);
    side_tree(v, p, a->root, &parent, child, &nchild);
    int rc = mc_bcast_seg(ctx, buf + mine.off, mine.len, a->segsize, parent, child, nchild);
    if (rc != MPI_SUCCESS) return rc;
    int pv = side == 0 ? v + 1 : v - 1;
    if (pv >= p) return mc_recv(buf + other.off, other.len, a->root, MC_BCAST, ctx);
    return mc_sendrecv(buf + mine.off, mine.len, mc_rrank(pv, a->root, p), buf + other.off,
                       other.len, mc_rrank(pv, a->root, p), MC_BCAST, ctx);
}

static int bcast_split_binary(mc_ctx_t *ctx, const mc_args_t *a)
{
    /* with fewer than two bytes or no second subtree there is nothing to split */
    if (ctx->size < 3 || a->count < 2) return mc_bcast_binary(ctx, a);
    return ctx->rank == a->root ? root_phase(ctx, a) : node_phase(ctx, a);
}

/* T = (D + n_h - 1) * 2 * (alpha + s * beta) + alpha + (m / 2) * beta, with halves of m/2
 * bytes cut into n_h = ceil(m / 2 / s) segments of s = min(m_s, m / 2) bytes. The larger
 * (left) subtree has p/2 nodes, so its deepest node is D = floor(log2(p / 2)) + 1 hops from
 * the root; every parent (the root included) sends two messages per pipeline step; the final
 * swap is one full-duplex exchange of a half. */
static double cost_split_binary(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->p < 3 || in->m < 2) return mc_bcast_binary_cost(h, in);
    double half = in->m / 2, s = in->ms > 0 && in->ms < half ? in->ms : half;
    mc_cost_in_t hin = {.p = in->p, .m = half, .ms = s, .radix = in->radix};
    int depth = mc_floor_log2(in->p / 2) + 1;
    return (depth + mc_bcast_nseg(&hin) - 1) * 2 * mc_bcast_msg(h, s) + mc_bcast_msg(h, half);
}

const mc_alg_t mc_alg_bcast_split_binary = {
    .coll = MC_BCAST, .name = "split_binary",
    .doc = "halves down two binary subtrees, then mirror nodes swap halves",
    .fn = bcast_split_binary, .ok = NULL, .cost = cost_split_binary, .flags = MC_ALG_SEGMENTED,
};
