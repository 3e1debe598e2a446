/* Movement-avoiding scan: the windows' folds split by columns among the ranks; see
 * mc_sr_scan_ma. */
#include "../reduce_scatter/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a) { return mc_sr_scan_ma(ctx, a, 0); }
static double dav(const mc_cost_in_t *in) { return mc_sr_scan_ma_dav(0, in); }
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in) { return mc_sr_scan_ma_cost(0, h, in); }

const mc_alg_t mc_alg_scan_shm_ma = {
    .coll = MC_SCAN,
    .name = "shm_ma",
    .doc = "windows through the region, copied in; rank c folds column c of every slot into prefixes in rank order, then each rank copies its result out; DAV s(7p-3)",
    .fn = run,
    .ok = mc_sr_scan_ok,
    .cost = cost,
    .dav = dav,
    .flags = 0,
};
