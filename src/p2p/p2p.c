#include "p2p.h"
#include "../core/config.h"
#include "../core/stats.h"
#include "../shm/shm.h"
#include <sched.h>
#include <string.h>

#define COMM(ctx) ((ctx)->pcomm)

/* Every send to a rank of another node is counted here (MCOLL_STATS inter_msgs/inter_bytes),
 * so no algorithm counts its own messages. Node and lane contexts have their own tables: a
 * lane's members are all on different nodes, a node's all on one. */
static inline void count_inter(const mc_ctx_t *ctx, int dst, mc_coll_t c, size_t bytes)
{
    if (ctx->nnodes > 1 && dst >= 0 && dst < ctx->size && ctx->node_of[dst] != ctx->node)
        mc_stats_inter(c, 1, bytes);
}

/* One message of `count` elements of `base` (extent ext) as MPI sees it: (n, t). MPI counts
 * in an int, so above mc_int_max() elements the message is one element of a derived type -
 * q blocks of that many elements, then the r left - whose type signature is still count x
 * base: it matches what the peer posts for the same data however the peer describes it, and
 * needs no second message (a v-collective's block over 2 GiB is known to its two ends only,
 * so no rank may fail or fall back alone). msg_done frees the type; an operation already
 * posted with it completes normally (MPI_Type_free). */
typedef struct msg {
    int n;
    MPI_Datatype t;
} msg_t;

static int msg_make(msg_t *m, size_t count, MPI_Datatype base, MPI_Aint ext)
{
    size_t lim = mc_int_max();
    m->t = base;
    m->n = count <= lim ? (int)count : 1;
    if (count <= lim) return MPI_SUCCESS; /* every message but the huge: no division */
    size_t q = count / lim, r = count % lim;
    if (q > (size_t)INT_MAX) return MPI_ERR_COUNT; /* beyond 2^62 elements */
    MPI_Datatype blk;
    int rc = PMPI_Type_contiguous((int)lim, base, &blk);
    if (rc != MPI_SUCCESS) return rc;
    int len[2] = {(int)q, (int)r};
    MPI_Aint disp[2] = {0, (MPI_Aint)(q * lim) * ext};
    MPI_Datatype types[2] = {blk, base};
    rc = PMPI_Type_create_struct(r ? 2 : 1, len, disp, types, &m->t);
    PMPI_Type_free(&blk);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(&m->t)) != MPI_SUCCESS) PMPI_Type_free(&m->t);
    if (rc != MPI_SUCCESS) m->t = base;
    return rc;
}

static int msg_done(msg_t *m, MPI_Datatype base, int rc)
{
    if (m->t != base) PMPI_Type_free(&m->t);
    return rc;
}

/* MPICH's blocking calls poll without ever giving the core away, whatever its yield
 * settings: on an oversubscribed node the rank they wait for then runs only when the
 * scheduler's time slice ends (a 3-rank allreduce of 8 B on 2 cores took 4.8 ms). There the
 * blocking transfers post, then wait in mc_waitall, which yields after mc_shm_spin_limit()
 * polls (0.8 ms). Open MPI's waits yield on their own on an oversubscribed node (mpirun sets
 * mpi_yield_when_idle), and polling on top of them cost 10-15 % on a 4-rank allgather of
 * 8-64 KiB; elsewhere the blocking call is the cheaper. MCOLL_P2P_POLL overrides. */
static int polled(void)
{
    int forced = mc_cfg()->p2p_poll;
    if (forced >= 0) return forced;
#if defined(MPICH) && !defined(OPEN_MPI)
    return mc_host_oversubscribed();
#else
    return 0;
#endif
}

static int send_as(const void *buf, size_t count, MPI_Datatype t, MPI_Aint ext, int dst, int tag,
                   const mc_ctx_t *ctx, MPI_Request *r)
{
    msg_t m;
    int rc = msg_make(&m, count, t, ext);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Request own;
    if (r || polled()) {
        rc = PMPI_Isend(buf, m.n, m.t, dst, tag, COMM(ctx), r ? r : &own);
        if (!r && rc == MPI_SUCCESS) rc = mc_waitall(1, &own);
    } else {
        rc = PMPI_Send(buf, m.n, m.t, dst, tag, COMM(ctx));
    }
    return msg_done(&m, t, rc);
}

static int recv_as(void *buf, size_t count, MPI_Datatype t, MPI_Aint ext, int src, int tag,
                   const mc_ctx_t *ctx, MPI_Request *r)
{
    msg_t m;
    int rc = msg_make(&m, count, t, ext);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Request own;
    if (r || polled()) {
        rc = PMPI_Irecv(buf, m.n, m.t, src, tag, COMM(ctx), r ? r : &own);
        if (!r && rc == MPI_SUCCESS) rc = mc_waitall(1, &own);
    } else {
        rc = PMPI_Recv(buf, m.n, m.t, src, tag, COMM(ctx), MPI_STATUS_IGNORE);
    }
    return msg_done(&m, t, rc);
}

static int sendrecv_as(const void *sbuf, size_t scount, int dst, void *rbuf, size_t rcount, int src,
                       MPI_Datatype t, MPI_Aint ext, int tag, const mc_ctx_t *ctx)
{
    msg_t ms, mr;
    int rc = msg_make(&ms, scount, t, ext);
    if (rc != MPI_SUCCESS) return rc;
    if ((rc = msg_make(&mr, rcount, t, ext)) != MPI_SUCCESS) return msg_done(&ms, t, rc);
    if (!polled()) {
        rc = PMPI_Sendrecv(sbuf, ms.n, ms.t, dst, tag, rbuf, mr.n, mr.t, src, tag, COMM(ctx),
                           MPI_STATUS_IGNORE);
    } else {
        MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        rc = PMPI_Irecv(rbuf, mr.n, mr.t, src, tag, COMM(ctx), &q[0]);
        if (rc == MPI_SUCCESS) rc = PMPI_Isend(sbuf, ms.n, ms.t, dst, tag, COMM(ctx), &q[1]);
        if (rc != MPI_SUCCESS)
            mc_request_drop(&q[0]);
        else
            rc = mc_waitall(2, q);
    }
    msg_done(&mr, t, rc);
    return msg_done(&ms, t, rc);
}

int mc_send(const void *buf, size_t n, int dst, mc_coll_t c, const mc_ctx_t *ctx)
{
    count_inter(ctx, dst, c, n);
    return send_as(buf, n, MPI_BYTE, 1, dst, MC_TAG(c), ctx, NULL);
}

int mc_recv(void *buf, size_t n, int src, mc_coll_t c, const mc_ctx_t *ctx)
{
    return recv_as(buf, n, MPI_BYTE, 1, src, MC_TAG(c), ctx, NULL);
}

int mc_sendrecv(const void *sbuf, size_t sn, int dst, void *rbuf, size_t rn, int src,
                mc_coll_t c, const mc_ctx_t *ctx)
{
    count_inter(ctx, dst, c, sn);
    return sendrecv_as(sbuf, sn, dst, rbuf, rn, src, MPI_BYTE, 1, MC_TAG(c), ctx);
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
    count_inter(ctx, dst, c, n);
    return send_as(buf, n, MPI_BYTE, 1, dst, MC_TAG(c), ctx, r);
}

int mc_irecv(void *buf, size_t n, int src, mc_coll_t c, const mc_ctx_t *ctx, MPI_Request *r)
{
    return recv_as(buf, n, MPI_BYTE, 1, src, MC_TAG(c), ctx, r);
}

int mc_send_t(const void *buf, size_t count, const mc_args_t *a, int dst, const mc_ctx_t *ctx)
{
    count_inter(ctx, dst, a->coll, count * a->extent);
    return send_as(buf, count, a->dtype, (MPI_Aint)a->extent, dst, MC_TAG(a->coll), ctx, NULL);
}

int mc_recv_t(void *buf, size_t count, const mc_args_t *a, int src, const mc_ctx_t *ctx)
{
    return recv_as(buf, count, a->dtype, (MPI_Aint)a->extent, src, MC_TAG(a->coll), ctx, NULL);
}

int mc_sendrecv_t(const void *sbuf, size_t scount, int dst, void *rbuf, size_t rcount, int src,
                  const mc_args_t *a, const mc_ctx_t *ctx)
{
    count_inter(ctx, dst, a->coll, scount * a->extent);
    return sendrecv_as(sbuf, scount, dst, rbuf, rcount, src, a->dtype, (MPI_Aint)a->extent,
                       MC_TAG(a->coll), ctx);
}

int mc_isend_t(const void *buf, size_t count, const mc_args_t *a, int dst, const mc_ctx_t *ctx,
               MPI_Request *r)
{
    count_inter(ctx, dst, a->coll, count * a->extent);
    return send_as(buf, count, a->dtype, (MPI_Aint)a->extent, dst, MC_TAG(a->coll), ctx, r);
}

int mc_irecv_t(void *buf, size_t count, const mc_args_t *a, int src, const mc_ctx_t *ctx,
               MPI_Request *r)
{
    return recv_as(buf, count, a->dtype, (MPI_Aint)a->extent, src, MC_TAG(a->coll), ctx, r);
}

/* The arguments of the non-blocking call a polled wait repeats. */
typedef struct {
    int n, *idx;
    MPI_Request *reqs;
    int src, tag;
    MPI_Comm comm;
    MPI_Status *st;
} poll_arg_t;

static int test_all(const poll_arg_t *a, int *done)
{
    return PMPI_Testall(a->n, a->reqs, done, MPI_STATUSES_IGNORE);
}
static int test_any(const poll_arg_t *a, int *done)
{
    return PMPI_Testany(a->n, a->reqs, a->idx, done, MPI_STATUS_IGNORE);
}
static int test_probe(const poll_arg_t *a, int *done)
{
    return PMPI_Iprobe(a->src, a->tag, a->comm, done, a->st);
}

/* Repeats test until it is done or fails, yielding the core after mc_shm_spin_limit() polls. */
static int poll_until(int (*test)(const poll_arg_t *, int *), const poll_arg_t *a)
{
    for (int polls = 0, limit = mc_shm_spin_limit();; polls++) {
        int done = 0, rc = test(a, &done);
        if (rc != MPI_SUCCESS || done) return rc;
        if (polls >= limit) sched_yield();
    }
}

int mc_waitall(int n, MPI_Request *reqs)
{
    if (n <= 0) return MPI_SUCCESS;
    if (!polled()) return PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    return poll_until(test_all, &(poll_arg_t){.n = n, .reqs = reqs});
}

int mc_waitany(int n, MPI_Request *reqs, int *idx)
{
    if (!polled()) return PMPI_Waitany(n, reqs, idx, MPI_STATUS_IGNORE);
    return poll_until(test_any, &(poll_arg_t){.n = n, .reqs = reqs, .idx = idx});
}

int mc_probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    if (!polled()) return PMPI_Probe(src, tag, comm, st);
    return poll_until(test_probe, &(poll_arg_t){.src = src, .tag = tag, .comm = comm, .st = st});
}

void mc_request_drop(MPI_Request *r)
{
    if (*r == MPI_REQUEST_NULL) return;
    PMPI_Cancel(r);
    PMPI_Wait(r, MPI_STATUS_IGNORE);
}

int mc_reduce_local(const void *in, void *inout, size_t count, const mc_args_t *a)
{
    return mc_reduce_pieces(in, inout, count, a->dtype, (MPI_Aint)a->extent, a->op);
}

void mc_copy(void *dst, const void *src, size_t n)
{
    if (n && dst != src) mc_memmove(dst, src, n);
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
