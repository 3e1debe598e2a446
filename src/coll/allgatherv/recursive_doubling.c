/* Recursive doubling allgatherv: log2 p exchanges of doubling rank ranges; non-power-of-two
 * p folds pairs of ranks (two extra steps). Blocks not laid out in rank order are staged in a
 * packed temporary buffer. */
#include "common.h"

static int allgatherv_recdbl(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_agv_t v = mc_agv_of_allgatherv(a);
    return mc_agv_recdbl(ctx, &v);
}

const mc_alg_t mc_alg_allgatherv_recursive_doubling = {
    .coll = MC_ALLGATHERV, .name = "recursive_doubling",
    .doc = "recursive doubling, non-pof2 folded, rank-order staging when needed",
    .fn = allgatherv_recdbl, .ok = NULL, .cost = mc_agv_recdbl_cost, .flags = 0,
};
