/* Movement-avoiding (yhccl) allreduce: windows of p slices in the node region, rank r
 * handles slice (r+1+j) mod p at step j (copy, then reductions, then the final piece), waiting
 * only for its neighbour; one copy per input byte. The result is left in the region and copied out by every
 * rank. */
#include "../reduce_scatter/shm_common.h"

static const mc_sr_job_t job = {.dest = MC_SR_ALL};

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_sr_ma(ctx, a, &job, 0);
}

static double dav(const mc_cost_in_t *in)
{
    mc_cost_in_t c = *in;
    c.sockets = 1;
    return mc_sr_ma_dav(MC_SR_ALL, &c);
}

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_ma_cost(MC_SR_ALL, 0, h, in);
}

const mc_alg_t mc_alg_allreduce_shm_ma = {
    .coll = MC_ALLREDUCE,
    .name = "shm_ma",
    .doc = "movement-avoiding reduce-scatter into the region + copy-out (yhccl), DAV s(5p-1); 32K-256K at 2 "
           "ranks (32K from 3) timed against the symmetric exchange (MCOLL_SHM_TRIAL)",
    .fn = run,
    .ok = mc_sr_ma_ok,
    .cost = cost,
    .dav = dav,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
