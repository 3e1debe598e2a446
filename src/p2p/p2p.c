#include "p2p.h"
#include "../core/stats.h"
#include <string.h>

#define COMM(ctx) ((ctx)->pcomm)

static int too_big(size_t n) { return n > (size_t)INT_MAX; }

/* Every send to a rank of another node is counted here (MCOLL_STATS inter_msgs/inter_bytes),
 * so no algorithm counts its own messages. Node and lane contexts have their own tables: a
 * lane's members are all on different nodes, a node's all on one. */
static inline void count_inter(const mc_ctx_t *ctx, int dst, mc_coll_t c, size_t bytes)
{
    if (ctx->nnodes > 1 && dst >= 0 && dst < ctx->size && ctx->node_of[dst] != ctx->node)
        mc_stats_inter(c, 1, bytes);
}

int mc_send(const void *buf, size_t n, int dst, mc_coll_t c, const mc_ctx_t *ctx)
{
    if (too_big(n)) return MPI_ERR_COUNT;
    count_inter(ctx, dst, c, n);
    return PMPI_Send(buf, (int)n, MPI_BYTE, dst, MC_TAG(c), COMM(ctx));
}

int mc_recv(void *buf, size_t n, int src, mc_coll_t c, const mc_ctx_t *ctx)
{
    if (too_big(n)) return MPI_ERR_COUNT;
    return PMPI_Recv(buf, (int)n, MPI_BYTE, src, MC_TAG(c), COMM(ctx), MPI_STATUS_IGNORE);
}

int mc_sendrecv(const void *sbuf, size_t sn, int dst, void *rbuf, size_t rn, int src,
                mc_coll_t c, const mc_ctx_t *ctx)
{
    if (too_big(sn) || too_big(rn)) return MPI_ERR_COUNT;
    count_inter(ctx, dst, c, sn);
    return PMPI_Sendrecv(sbuf, (int)sn, MPI_BYTE, dst, MC_TAG(c), rbuf, (int)rn, MPI_BYTE, src,
                         MC_TAG(c), COMM(ctx), MPI_STATUS_IGNORE);
}

int mc_sendrecv_nz(const void *sbuf, size_t sn, int dst, void *rbuf, size_t rn, int src,
                   mc_coll_t c, const mc_ctx_t *ctx)
{
    if (sn && rn) return mc_sendrecv(sbuf, sn, dst, rbuf, rn, src, c, ctx);
    if (sn) return mc_send(sbuf, sn, dst, c, ctx);
    if (rn) return mc_recv(rbuf, rn, src, c, ctx);
    return MPI_SUCCESS;
}

int mc_isend(const void *buf, size_t n, int dst, mc_coll_t c, const mc_ctx_t *ctx, MPI_Request *r)
{
    if (too_big(n)) return MPI_ERR_COUNT;
    count_inter(ctx, dst, c, n);
    return PMPI_Isend(buf, (int)n, MPI_BYTE, dst, MC_TAG(c), COMM(ctx), r);
}

int mc_irecv(void *buf, size_t n, int src, mc_coll_t c, const mc_ctx_t *ctx, MPI_Request *r)
{
    if (too_big(n)) return MPI_ERR_COUNT;
    return PMPI_Irecv(buf, (int)n, MPI_BYTE, src, MC_TAG(c), COMM(ctx), r);
}

int mc_send_t(const void *buf, size_t count, const mc_args_t *a, int dst, const mc_ctx_t *ctx)
{
    if (too_big(count)) return MPI_ERR_COUNT;
    count_inter(ctx, dst, a->coll, count * a->extent);
    return PMPI_Send(buf, (int)count, a->dtype, dst, MC_TAG(a->coll), COMM(ctx));
}

int mc_recv_t(void *buf, size_t count, const mc_args_t *a, int src, const mc_ctx_t *ctx)
{
    if (too_big(count)) return MPI_ERR_COUNT;
    return PMPI_Recv(buf, (int)count, a->dtype, src, MC_TAG(a->coll), COMM(ctx), MPI_STATUS_IGNORE);
}

int mc_sendrecv_t(const void *sbuf, size_t scount, int dst, void *rbuf, size_t rcount, int src,
                  const mc_args_t *a, const mc_ctx_t *ctx)
{
    if (too_big(scount) || too_big(rcount)) return MPI_ERR_COUNT;
    count_inter(ctx, dst, a->coll, scount * a->extent);
    return PMPI_Sendrecv(sbuf, (int)scount, a->dtype, dst, MC_TAG(a->coll), rbuf, (int)rcount,
                         a->dtype, src, MC_TAG(a->coll), COMM(ctx), MPI_STATUS_IGNORE);
}

int mc_isend_t(const void *buf, size_t count, const mc_args_t *a, int dst, const mc_ctx_t *ctx,
               MPI_Request *r)
{
    if (too_big(count)) return MPI_ERR_COUNT;
    count_inter(ctx, dst, a->coll, count * a->extent);
    return PMPI_Isend(buf, (int)count, a->dtype, dst, MC_TAG(a->coll), COMM(ctx), r);
}

int mc_irecv_t(void *buf, size_t count, const mc_args_t *a, int src, const mc_ctx_t *ctx,
               MPI_Request *r)
{
    if (too_big(count)) return MPI_ERR_COUNT;
    return PMPI_Irecv(buf, (int)count, a->dtype, src, MC_TAG(a->coll), COMM(ctx), r);
}

int mc_waitall(int n, MPI_Request *reqs)
{
    return n > 0 ? PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
}

int mc_reduce_local(const void *in, void *inout, size_t count, const mc_args_t *a)
{
    if (!count) return MPI_SUCCESS;
    if (too_big(count)) return MPI_ERR_COUNT;
    return PMPI_Reduce_local(in, inout, (int)count, a->dtype, a->op);
}

void mc_copy(void *dst, const void *src, size_t n)
{
    if (n && dst != src) memmove(dst, src, n);
}

void *mc_tmp_elems(size_t count, const mc_args_t *a)
{
    return mc_malloc(count * a->extent);
}

/* ---------------------------------------------------------------- trees */
void mc_tree_binomial(mc_tree_t *t, int rank, int size, int root)
{
    int v = mc_vrank(rank, root, size), mask = 1;
    t->nchild = 0;
    t->parent = -1;
    while (mask < size && !(v & mask)) mask <<= 1;
    if (v) t->parent = mc_rrank(v & ~mask, root, size);
    /* children v + m for every m below v's lowest set bit, largest first */
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < size) t->child[t->nchild++] = mc_rrank(v + mask, root, size);
}

void mc_tree_kary(mc_tree_t *t, int rank, int size, int root, int k)
{
    int v = mc_vrank(rank, root, size);
    if (k < 1) k = 1;
    if (k > MC_TREE_MAX) k = MC_TREE_MAX;
    t->parent = v ? mc_rrank((v - 1) / k, root, size) : -1;
    t->nchild = 0;
    for (int i = 1; i <= k && (long)k * v + i < size; i++)
        t->child[t->nchild++] = mc_rrank(k * v + i, root, size);
}

void mc_tree_chain(mc_tree_t *t, int rank, int size, int root, int k)
{
    int v = mc_vrank(rank, root, size), n = size - 1;
    if (k < 1) k = 1;
    if (k > MC_TREE_MAX) k = MC_TREE_MAX;
    if (k > n) k = n > 0 ? n : 1;
    t->parent = -1;
    t->nchild = 0;
    /* chain j holds vranks [1 + start_j, 1 + start_j + len_j) */
    for (int j = 0; j < k && n > 0; j++) {
        int s = 1 + (int)mc_part_start((size_t)n, k, j), len = (int)mc_part_len((size_t)n, k, j);
        if (!len) continue;
        if (v == 0) t->child[t->nchild++] = mc_rrank(s, root, size);
        if (v >= s && v < s + len) {
            t->parent = mc_rrank(v == s ? 0 : v - 1, root, size);
            if (v + 1 < s + len) t->child[t->nchild++] = mc_rrank(v + 1, root, size);
        }
    }
}

size_t mc_segments(size_t count, size_t elsize, long segsize, size_t *seg_elems)
{
    if (!count) { *seg_elems = 0; return 0; }
    size_t per = count;
    if (segsize > 0 && elsize) {
        per = (size_t)segsize / elsize;
        if (!per) per = 1;
        if (per > count) per = count;
    }
    *seg_elems = per;
    return (count + per - 1) / per;
}
