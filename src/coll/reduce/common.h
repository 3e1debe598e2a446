/* Shared pieces of the reduce algorithms: one segmented, pipelined tree reduction that the
 * chain, binomial, binary and k-chain topologies run on, and the Hockney helpers of their
 * cost functions.
 *
 * Rank order. A tree whose subtrees are contiguous vrank ranges, each node first and its
 * children's ranges following in ascending order (pre-order numbering), reduces in vrank
 * order when every node folds "own, child 0, child 1, ..." left to right. The binomial tree,
 * the chains and mc_red_tree_preorder have that property. For a commutative op the tree is
 * rooted at the real root; for a non-commutative one it is rooted at rank 0 (vrank order
 * is then rank order) and rank 0 streams the result to the real root, segment by segment. */
#ifndef MC_REDUCE_COMMON_H
#define MC_REDUCE_COMMON_H
#include "../../p2p/p2p.h"

/* Builds this rank's view of a tree rooted at `root` (k: fan-out, ignored by some). */
typedef void (*mc_red_tree_fn)(mc_tree_t *t, int rank, int size, int root, int k);

/* Reduces a->sbuf of every rank into a->rbuf at a->root over the tree `build` makes
 * (a->segsize segments, receive of segment i+1 overlapped with the reduction of segment i).
 * The tree must be pre-ordered (see above) for non-commutative ops to stay in rank order. */
int mc_red_tree(mc_ctx_t *ctx, const mc_args_t *a, mc_red_tree_fn build, int k);

/* k-ary tree in pre-order numbering: vrank v's subtree is [v, v + n), its children split
 * the n - 1 vranks after v into k contiguous, nearly equal ranges (earlier ones larger).
 * Same depth as the heap-ordered k-ary tree; children listed in ascending vrank. */
void mc_red_tree_preorder(mc_tree_t *t, int rank, int size, int root, int k);

/* Hockney: segments of the cost input (at least 1), and the time to receive one segment
 * of b bytes and fold it into the accumulator (alpha + b * (beta + gamma)). */
double mc_red_nseg(const mc_cost_in_t *in);
double mc_red_step(const mc_hockney_t *h, double bytes);
#endif
