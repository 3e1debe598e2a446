/* DPML-like small-message reduce: every rank copies its whole input into its slot
 * (inline in its flag line when it fits), then reductions in rank order (any op). The result is left in the
 * region and copied out by the root. */
#include "../reduce_scatter/shm_common.h"

static const mc_sr_job_t job = {.dest = MC_SR_ROOT};

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_sr_dpml(ctx, a, &job);
}

static double dav(const mc_cost_in_t *in)
{
    return mc_sr_dpml_dav(MC_SR_ROOT, in);
}

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_dpml_cost(MC_SR_ROOT, h, in);
}

const mc_alg_t mc_alg_reduce_shm_dpml = {
    .coll = MC_REDUCE,
    .name = "shm_dpml",
    .doc = "small: all inputs copied to the region (<=2K all but the root's, DAV s(5p-5)); <=16K the "
           "root reduces all (DAV s(5p-3)), else parts + root copy-out of the others' (s(5p-3) + "
           "2s(p-1)/p); rank order",
    .fn = run,
    .ok = mc_sr_dpml_ok,
    .cost = cost,
    .dav = dav,
    .flags = 0,
};
