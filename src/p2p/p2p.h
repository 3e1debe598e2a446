/* Point-to-point building blocks for the classic algorithms: byte and typed transfers on
 * the context's private communicator, local reduction, virtual trees and segmentation. */
#ifndef MC_P2P_H
#define MC_P2P_H
#include "../core/mc.h"

/* Byte transfers (n <= INT_MAX, else MPI_ERR_COUNT). The tag is the collective's. */
int mc_send(const void *buf, size_t n, int dst, mc_coll_t c, const mc_ctx_t *ctx);
int mc_recv(void *buf, size_t n, int src, mc_coll_t c, const mc_ctx_t *ctx);
int mc_sendrecv(const void *sbuf, size_t sn, int dst, void *rbuf, size_t rn, int src,
                mc_coll_t c, const mc_ctx_t *ctx);
/* mc_sendrecv that skips an empty direction (both sides know the sizes, so a zero-byte
 * message is never needed to match). A one-way step stays blocking-safe when the peer posts
 * the matching receive in the same step. */
int mc_sendrecv_nz(const void *sbuf, size_t sn, int dst, void *rbuf, size_t rn, int src,
                   mc_coll_t c, const mc_ctx_t *ctx);
int mc_isend(const void *buf, size_t n, int dst, mc_coll_t c, const mc_ctx_t *ctx, MPI_Request *r);
int mc_irecv(void *buf, size_t n, int src, mc_coll_t c, const mc_ctx_t *ctx, MPI_Request *r);

/* Typed transfers of `count` elements of a->dtype (reductions). */
int mc_send_t(const void *buf, size_t count, const mc_args_t *a, int dst, const mc_ctx_t *ctx);
int mc_recv_t(void *buf, size_t count, const mc_args_t *a, int src, const mc_ctx_t *ctx);
int mc_sendrecv_t(const void *sbuf, size_t scount, int dst, void *rbuf, size_t rcount, int src,
                  const mc_args_t *a, const mc_ctx_t *ctx);
int mc_isend_t(const void *buf, size_t count, const mc_args_t *a, int dst, const mc_ctx_t *ctx,
               MPI_Request *r);
int mc_irecv_t(void *buf, size_t count, const mc_args_t *a, int src, const mc_ctx_t *ctx,
               MPI_Request *r);
/* Waits (MPI_Waitall / MPI_Waitany with statuses ignored, MPI_Probe) that poll and yield the
 * core after mc_shm_spin_limit() polls where the MPI's own would not yield (MCOLL_P2P_POLL,
 * p2p.c). */
int mc_waitall(int n, MPI_Request *reqs);
int mc_waitany(int n, MPI_Request *reqs, int *idx);
int mc_probe(int src, int tag, MPI_Comm comm, MPI_Status *st);
/* Cancels and completes a receive that will never be waited for (error paths only). */
void mc_request_drop(MPI_Request *r);

/* inout[i] = in[i] op inout[i] for `count` elements: `in` is the lower-ranked operand, so
 * non-commutative ops stay in rank order when callers pass operands that way. */
int mc_reduce_local(const void *in, void *inout, size_t count, const mc_args_t *a);

/* memmove when the regions differ (the byte collectives' local step). */
void mc_copy(void *dst, const void *src, size_t n);

/* Buffer of `count` elements of a->dtype (count * extent bytes). */
void *mc_tmp_elems(size_t count, const mc_args_t *a);
/* Address of element i of a typed buffer. */
static inline char *mc_elem(const void *buf, size_t i, const mc_args_t *a)
{
    return (char *)buf + i * a->extent;
}

/* ---------------------------------------------------------------- trees */
/* Trees are built in "virtual rank" space (vrank = (rank - root) mod size, root = 0) and
 * returned in real ranks. Binomial children are listed by decreasing mask (vrank + 2^k for
 * k descending): for a power-of-two size that is largest subtree first; iterate backwards
 * for increasing vranks (what a rank-order reduction combines in). */
#define MC_TREE_MAX 64
typedef struct mc_tree {
    int parent;             /* -1 at the root */
    int nchild;
    int child[MC_TREE_MAX];
} mc_tree_t;

void mc_tree_binomial(mc_tree_t *t, int rank, int size, int root);
/* Vranks in the binomial subtree of vrank v: the contiguous range [v, v + span). */
static inline int mc_binomial_span(int v, int size)
{
    int low = v ? v & -v : size;
    return low < size - v ? low : size - v;
}
/* k-ary heap-ordered tree: vrank v has children k*v+1 .. k*v+k (binary: k = 2). */
void mc_tree_kary(mc_tree_t *t, int rank, int size, int root, int k);
/* Root with k chains of consecutive vranks (nearly equal lengths); k = 1 is the pipeline. */
void mc_tree_chain(mc_tree_t *t, int rank, int size, int root, int k);

static inline int mc_vrank(int rank, int root, int size) { return (rank - root + size) % size; }
static inline int mc_rrank(int vrank, int root, int size) { return (vrank + root) % size; }

/* ---------------------------------------------------------------- segmentation */
/* Splits `count` elements of `elsize` bytes into segments of at most `segsize` bytes
 * (whole elements, at least one). segsize 0 = one segment. Returns the number of segments
 * (0 when count is 0) and the elements per segment (the last one may be shorter). */
size_t mc_segments(size_t count, size_t elsize, long segsize, size_t *seg_elems);

/* Balanced split of n items into p parts: part i starts at mc_part_start(n, p, i). */
static inline size_t mc_part_start(size_t n, int p, int i)
{
    return (n / (size_t)p) * (size_t)i + ((size_t)i < n % (size_t)p ? (size_t)i : n % (size_t)p);
}
static inline size_t mc_part_len(size_t n, int p, int i)
{
    return n / (size_t)p + ((size_t)i < n % (size_t)p ? 1 : 0);
}
#endif
