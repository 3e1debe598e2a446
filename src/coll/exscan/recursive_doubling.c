/* Recursive-doubling exclusive scan: the scan's scheme where partial excludes the rank
 * itself (rank 0 never has a lower partner, so its rbuf stays untouched). */
#include "../scan/prefix.h"

static int exscan_rd(mc_ctx_t *ctx, const mc_args_t *a) { return mc_prefix_rd(ctx, a, 1); }

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_prefix_rd_cost(h, in, 1);
}

const mc_alg_t mc_alg_exscan_recursive_doubling = {
    .coll = MC_EXSCAN, .name = "recursive_doubling",
    .doc = "log2(p) exchanges of block totals with r xor 2^k; exclusive prefix in rank order",
    .fn = exscan_rd, .ok = NULL, .cost = cost, .flags = 0,
};
