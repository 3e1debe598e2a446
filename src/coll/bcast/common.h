/* Shared pieces of the broadcast algorithms: one segmented, pipelined tree broadcast that
 * every topology (flat, chain, binomial, binary, the split-binary halves) runs on, and the
 * Hockney helpers their cost functions share. */
#ifndef MC_BCAST_COMMON_H
#define MC_BCAST_COMMON_H
#include "../../p2p/p2p.h"

/* Broadcast n bytes of buf down one node's view of a tree: receive every segment from
 * `parent` (-1 at the tree's root) and forward it to the nchild ranks of `child`, in order.
 * segsize 0 sends the n bytes as one segment. */
int mc_bcast_seg(const mc_ctx_t *ctx, void *buf, size_t n, long segsize, int parent,
                 const int *child, int nchild);

/* The whole of a->rbuf down tree t (a->segsize segments). */
int mc_bcast_tree(const mc_ctx_t *ctx, const mc_args_t *a, const mc_tree_t *t);

/* Hockney: segments of the cost input (at least 1) and the time of one message of b bytes. */
double mc_bcast_nseg(const mc_cost_in_t *in);
double mc_bcast_msg(const mc_hockney_t *h, double bytes);
/* Binary tree broadcast and its cost (split_binary falls back to both). */
int mc_bcast_binary(const mc_ctx_t *ctx, const mc_args_t *a);
double mc_bcast_binary_cost(const mc_hockney_t *h, const mc_cost_in_t *in);
#endif
