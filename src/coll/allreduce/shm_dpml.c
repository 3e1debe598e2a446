/* DPML-like small-message allreduce: every rank copies its whole input into its slot
 * (inline in its flag line when it fits), then reductions in rank order (any op). The result is left in the
 * region and copied out by every rank. */
#include "../reduce_scatter/shm_common.h"

static const mc_sr_job_t job = {.dest = MC_SR_ALL};

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_sr_dpml(ctx, a, &job);
}

static double dav(const mc_cost_in_t *in)
{
    return mc_sr_dpml_dav(MC_SR_ALL, in);
}

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_dpml_cost(MC_SR_ALL, h, in);
}

const mc_alg_t mc_alg_allreduce_shm_dpml = {
    .coll = MC_ALLREDUCE,
    .name = "shm_dpml",
    .doc = "small: all inputs copied to the region; <=32K (256K at 2 ranks) every rank reduces all (DAV "
           "ps(3p-1)), else parts + copy-out (s(7p-3)); rank order",
    .fn = run,
    .ok = mc_sr_dpml_ok,
    .cost = cost,
    .dav = dav,
    .flags = 0,
};
