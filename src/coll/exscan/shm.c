/* Shared-memory exscan: windows of the inputs through the region slots, any op (rank order
 * kept); see mc_sr_scan. */
#include "../reduce_scatter/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_sr_scan(ctx, a, 1);
}
static double dav(const mc_cost_in_t *in)
{
    return mc_sr_scan_dav(1, in);
}
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_scan_cost(1, h, in);
}

const mc_alg_t mc_alg_exscan_shm = {
    .coll = MC_EXSCAN,
    .name = "shm",
    .doc = "windowed through the region: ranks 0..p-2 copy their window in, rank r combines slots 0..r-1 in "
           "rank order; DAV 2ps+1.5(p-1)(p-2)s; from 8 KiB per rank (16 KiB over the ranks) its trial "
           "may read the lower ranks' inputs directly (CMA / zero copy) instead",
    .fn = run,
    .ok = mc_sr_scan_ok,
    .cost = cost,
    .dav = dav,
    .flags = 0,
};
