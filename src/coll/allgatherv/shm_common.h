/* Shared-memory data movement (bcast, allgather(v), gather(v), scatter(v), alltoall(v)),
 * written once for a general "blocks" description and two data paths:
 *
 *  pipe    staged through the node region in slices, double buffered by slice parity (yhccl
 *          Algorithms 3-4): a writer copies slice k of each of its channels into buffer k%2 of
 *          the channel (adaptive copy, temporal), readers copy slice k-1 out (adaptive copy,
 *          non-temporal). Works whatever the buffers are.
 *  direct  every rank posts its user buffer; peers read (or write) their part straight from
 *          (into) it by zero copy or CMA (pip-mcoll §III-C address posting). Falls back to
 *          the pipe when some posted buffer is unreachable.
 *
 * Every collective is a special case of one of two shapes, all sizes in bytes:
 *  "all-gather shape": rank w owns one block (cnt[w] bytes, sbuf) that a set of readers copy
 *      to dsp[w] of their rbuf: allgather(v) (all read), gather(v) (root reads), and bcast
 *      (only the root's block is non-empty, in place at the root).
 *  "all-to-all shape": rank w sends a distinct block to every d: alltoall(v), and scatter(v)
 *      (only the root sends).
 * The per-collective files are thin wrappers around the entry points below. */
#ifndef MC_SHM_MOVE_H
#define MC_SHM_MOVE_H
#include "../../shm/shm.h"

/* p blocks: cnt == NULL means the uniform layout (count bytes at i * count). */
typedef struct mc_blk {
    const size_t *cnt, *dsp;
    size_t count;
} mc_blk_t;

static inline size_t mc_blk_len(const mc_blk_t *b, int i) { return b->cnt ? b->cnt[i] : b->count; }
static inline size_t mc_blk_off(const mc_blk_t *b, int i)
{
    return b->cnt ? b->dsp[i] : (size_t)i * b->count;
}

enum { MC_MV_PIPE, MC_MV_DIRECT, MC_MV_HYBRID };   /* hybrid: gatherv, scatterv, alltoallv */

/* Entry points: `how` is MC_MV_PIPE, MC_MV_DIRECT or (gatherv, scatterv, alltoallv)
 * MC_MV_HYBRID. allgatherv also runs allgather, gatherv gather, and so on (the uniform case
 * is recognized from a->coll). */
int mc_mv_bcast(mc_ctx_t *ctx, const mc_args_t *a, int how);
int mc_mv_allgatherv(mc_ctx_t *ctx, const mc_args_t *a, int how);
int mc_mv_gatherv(mc_ctx_t *ctx, const mc_args_t *a, int how);
int mc_mv_scatterv(mc_ctx_t *ctx, const mc_args_t *a, int how);
int mc_mv_alltoallv(mc_ctx_t *ctx, const mc_args_t *a, int how);

/* Applicability: mc_shm_alg_ok plus room in the data area for the layout (all-to-all needs
 * 2 p^2 buffers of at least a flag line; the others 2 p buffers and a p-entry table). */
int mc_mv_ok(const mc_ctx_t *ctx, const mc_args_t *a);
int mc_mv_ok_a2a(const mc_ctx_t *ctx, const mc_args_t *a);

/* Data-access volume for equal blocks (what the copy kernels count, all ranks together), not
 * in place. m = a->bytes: the message (bcast), one block (allgather(v), gather(v),
 * scatter(v), alltoall), all bytes a rank sends (alltoallv: p blocks). */
double mc_mv_dav_bcast_pipe(const mc_cost_in_t *in);
double mc_mv_dav_bcast_direct(const mc_cost_in_t *in);
double mc_mv_dav_allgather_pipe(const mc_cost_in_t *in);
double mc_mv_dav_allgather_direct(const mc_cost_in_t *in);
double mc_mv_dav_rooted_pipe(const mc_cost_in_t *in);      /* gather(v), scatter(v) */
double mc_mv_dav_rooted_direct(const mc_cost_in_t *in);
double mc_mv_dav_alltoall_pipe(const mc_cost_in_t *in);
double mc_mv_dav_alltoall_direct(const mc_cost_in_t *in);
double mc_mv_dav_alltoallv_pipe(const mc_cost_in_t *in);
double mc_mv_dav_alltoallv_direct(const mc_cost_in_t *in);
/* hybrid, equal blocks of m (alltoallv: m / p) near and within the caches: direct from
 * 64 KiB (gather below 256 KiB), the pipe below */
double mc_mv_dav_gather_hybrid(const mc_cost_in_t *in);
double mc_mv_dav_scatter_hybrid(const mc_cost_in_t *in);
double mc_mv_dav_alltoallv_hybrid(const mc_cost_in_t *in);

/* Hockney costs: alpha per flag round trip, beta per byte a rank copies (copies of
 * different ranks overlap). The uniform collectives' count their trials (MCOLL_SHM_TRIAL),
 * the v-collectives' and the hybrids' (no trials) their rules. */
double mc_mv_cost_bcast_pipe(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_bcast_direct(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_allgather_pipe(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_allgather_direct(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_allgatherv_pipe(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_allgatherv_direct(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_rooted_pipe(const mc_hockney_t *h, const mc_cost_in_t *in);   /* gatherv, scatterv */
double mc_mv_cost_rooted_direct(const mc_hockney_t *h, const mc_cost_in_t *in); /* the hybrids' copies */
double mc_mv_cost_scatterv_direct(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_scatter_pipe(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_scatter_direct(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_gather_pipe(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_gather_direct(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_gatherv_direct(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_alltoall_pipe(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_alltoall_direct(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_alltoallv_pipe(const mc_hockney_t *h, const mc_cost_in_t *in); /* m: one block */
double mc_mv_cost_alltoallv_direct(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_gather_hybrid(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_scatter_hybrid(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_mv_cost_alltoallv_hybrid(const mc_hockney_t *h, const mc_cost_in_t *in);   /* m: bytes sent */
#endif
