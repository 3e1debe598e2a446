/* Movement-avoiding exscan: the windows' folds split by columns among the ranks; see
 * mc_sr_scan_ma. */
#include "../reduce_scatter/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_sr_scan_ma(ctx, a, 1); }
static double dav(const mc_cost_in_t *in) { return mc_sr_scan_ma_dav(1, in); }
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in) { return mc_sr_scan_ma_cost(1, h, in); }

const mc_alg_t mc_alg_exscan_shm_ma = {
    .coll = MC_EXSCAN,
    .name = "shm_ma",
    .doc = "windows through the region, copied in by ranks 0..p-2; rank c folds column c into prefixes in rank order, rank r copies slot r-1 out; DAV s(7p-10)",
    .fn = run,
    .ok = mc_sr_scan_ok,
    .cost = cost,
    .dav = dav,
    .flags = 0,
};
