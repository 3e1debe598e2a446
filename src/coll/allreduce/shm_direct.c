/* Direct chunk-parallel allreduce (pip-mcoll): rank i reduces chunk i of every rank's
 * posted input (shared heap pointer or CMA) in L2-sized blocks; falls back to shm_ma when the
 * posts are unreachable. The result is left in the region and copied out by every rank. */
#include "../reduce_scatter/shm_common.h"

static const mc_sr_job_t job = {.dest = MC_SR_ALL};

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_sr_direct(ctx, a, &job);
}

static double dav(const mc_cost_in_t *in)
{
    return mc_sr_direct_dav(MC_SR_ALL, in);
}

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_direct_cost(MC_SR_ALL, h, in);
}

const mc_alg_t mc_alg_allreduce_shm_direct = {
    .coll = MC_ALLREDUCE,
    .name = "shm_direct",
    .doc = "direct: rank i reduces chunk i of all posted inputs, then reads the other chunks from their "
           "owners; DAV zero copy 5s(p-1); shm_ma unless every buffer is zero copy (or MCOLL_SHM_PATH=cma)",
    .fn = run,
    .ok = mc_sr_ma_ok,
    .cost = cost,
    .dav = dav,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
