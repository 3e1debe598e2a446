/* Prefix reductions shared by scan (inclusive) and exscan (exclusive): one routine per
 * scheme with an `exclusive` flag. Defined in scan/linear.c and scan/recursive_doubling.c. */
#ifndef MC_COLL_PREFIX_H
#define MC_COLL_PREFIX_H
#include "../../p2p/p2p.h"

int mc_prefix_linear(mc_ctx_t *ctx, const mc_args_t *a, int exclusive);
double mc_prefix_linear_cost(const mc_hockney_t *h, const mc_cost_in_t *in, int exclusive);

int mc_prefix_rd(mc_ctx_t *ctx, const mc_args_t *a, int exclusive);
double mc_prefix_rd_cost(const mc_hockney_t *h, const mc_cost_in_t *in, int exclusive);
#endif
