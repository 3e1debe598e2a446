/* Building blocks shared by the reduce-scatter family and the allreduce algorithms made of a
 * reduce-scatter and an allgather (ring, Rabenseifner). Everything is in elements of a->dtype.
 *
 * Rank order for non-commutative ops is kept by one rule everywhere: when two partials meet,
 * the one covering the lower contiguous range of ranks is the left operand. Since
 * mc_reduce_local writes into its right operand, the result lands in whichever of two
 * buffers held the upper partial; callers track that with a two-buffer pair (buf[2], cur). */
#ifndef MC_RS_COMMON_H
#define MC_RS_COMMON_H
#include "../../p2p/p2p.h"

/* n elements, local copy (memmove when the regions differ). */
static inline void mc_rs_copy(void *dst, const void *src, size_t n, const mc_args_t *a)
{
    mc_copy(dst, src, n * a->extent);
}

/* buf[*cur] holds my partial, buf[!*cur] the partner's, both at element offset off.
 * Leaves lower op upper in one of them and points *cur at it. */
int mc_rs_combine(void *buf[2], int *cur, size_t off, size_t n, int mine_lower, const mc_args_t *a);

/* Folding a non-power-of-two p onto q = 2^floor(log2 p) virtual ranks: the first
 * rem = p - q pairs (2i, 2i+1) become virtual rank i, held by the odd rank (the even one is
 * folded away); rank r >= 2*rem is virtual rank r - rem. Virtual ranks cover contiguous,
 * ascending rank ranges, so rank order survives the fold. */
typedef struct mc_fold {
    int q, rem, k;      /* k = log2 q */
    int v;              /* this rank's virtual rank, -1 when folded away */
} mc_fold_t;

void mc_fold_init(mc_fold_t *f, int p, int rank);
static inline int mc_fold_real(const mc_fold_t *f, int v) { return v < f->rem ? 2 * v + 1 : v + f->rem; }
/* First real rank covered by virtual rank v. */
static inline int mc_fold_first(const mc_fold_t *f, int v) { return v < f->rem ? 2 * v : v + f->rem; }

/* Whole-vector fold for allreduce: the even rank of a pair sends its n elements (buf[*cur])
 * to the odd one, which combines them as the left operand. mc_fold_out returns the final
 * vector from the odd rank to the even one. No-ops for ranks outside the pairs. */
int mc_fold_in(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf[2], int *cur, size_t n);
int mc_fold_out(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf, size_t n);

/* An allreduce over the folded power-of-two group: copies sbuf to rbuf, folds the extra
 * ranks in, runs `core` on the q participants (it must leave the result in a->rbuf), and
 * sends the result back out to the folded ranks. */
typedef int (*mc_fold_core_fn)(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf[2], int *cur);
int mc_fold_allreduce(mc_ctx_t *ctx, const mc_args_t *a, mc_fold_core_fn core);

/* Slot range [*lo, *lo + *len) that virtual rank v owns after `levels` halving steps of
 * the distance-doubling schedule (bit i of v picks the half at step i). After all k steps
 * it is the single slot bitrev_k(v). */
void mc_rs_slot_range(int v, int levels, int q, int *lo, int *len);
int mc_rs_bitrev(int v, int k);

/* Recursive halving over the q virtual ranks. The vector is cut into q slots, slot s being
 * elements [sd[s], sd[s+1]) (sd has q + 1 entries). buf[*cur] holds this rank's input in
 * that layout; buf[!*cur] is scratch of the same size. At step i the partner is v ^ 2^i
 * (groups of 2^(i+1) consecutive virtual ranks), so every partial covers a contiguous rank
 * range. On return slot bitrev(v) of buf[*cur] holds the reduction over all ranks. */
int mc_rs_halving(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf[2], int *cur,
                  const size_t *sd);

/* The inverse: recursive doubling allgather of the slots in buf (distance q/2 first), from
 * slot bitrev(v) owned to all slots. */
int mc_ag_doubling(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf, const size_t *sd);

/* Ring reduce-scatter of p blocks (counts/displs) from the read-only src; this rank's reduced
 * block is written to dst (which may overlap src: it is written after the last read). The
 * partial moves r+1 -> r+2 -> ... -> r, so the operand order wraps around: commutative ops
 * only. Each step is cut into segments of a->segsize bytes so the reduction of one segment
 * overlaps the transfer of the next. */
int mc_rs_ring(mc_ctx_t *ctx, const mc_args_t *a, const void *src, const size_t *counts,
               const size_t *displs, void *dst);

/* The general reduce-scatter algorithms (a->sbuf holds sum(counts) elements, result of
 * counts[rank] elements to a->rbuf); the _block variants call them with equal counts. */
int mc_reduce_scatter_ring(mc_ctx_t *ctx, const mc_args_t *a, const size_t *counts, const size_t *displs);
int mc_reduce_scatter_halving(mc_ctx_t *ctx, const mc_args_t *a, const size_t *counts,
                              const size_t *displs);

/* Equal blocks of `count` elements: counts and displs in one allocation (*counts, displs at
 * *counts + p), to mc_free. */
int mc_rs_block_layout(int p, size_t count, size_t **counts);

/* Costs shared by the reduce-scatter and reduce-scatter-block entries (m = whole vector). */
double mc_rs_ring_cost(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_rs_halving_cost(const mc_hockney_t *h, const mc_cost_in_t *in);
#endif
