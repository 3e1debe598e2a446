/* Direct chunk-parallel reduce-scatter-block (pip-mcoll): rank i reduces chunk i of every rank's
 * posted input (shared heap pointer or CMA) in L2-sized blocks; falls back to shm_ma when the
 * posts are unreachable. Rank r's final piece goes to its rbuf. */
#include "../reduce_scatter/shm_common.h"

static const mc_sr_job_t job = {.dest = MC_SR_RS};

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_sr_direct(ctx, a, &job);
}

static double dav(const mc_cost_in_t *in)
{
    return mc_sr_direct_dav(MC_SR_RS, in);
}

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_direct_cost(MC_SR_RS, h, in);
}

const mc_alg_t mc_alg_reduce_scatter_block_shm_direct = {
    .coll = MC_REDUCE_SCATTER_BLOCK,
    .name = "shm_direct",
    .doc = "direct: rank i reduces block i of all posted inputs (heap pointer or CMA) into rbuf; DAV zero "
           "copy 3s(p-1); shm_ma unless every buffer is zero copy (or MCOLL_SHM_PATH=cma)",
    .fn = run,
    .ok = mc_sr_ma_ok,
    .cost = cost,
    .dav = dav,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
