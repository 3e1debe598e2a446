/* DPML-like small-message reduce-scatter: every rank copies its whole input into its slot
 * (inline in its flag line when it fits), then reductions in rank order (any op). Rank r's final piece goes
 * to its rbuf. */
#include "../reduce_scatter/shm_common.h"

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_sr_job_t job = {.dest = MC_SR_RS, .counts = a->counts, .displs = a->displs};
    return mc_sr_dpml(ctx, a, &job);
}

static double dav(const mc_cost_in_t *in)
{
    return mc_sr_dpml_dav(MC_SR_RS, in);
}

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_dpml_cost(MC_SR_RS, h, in);
}

const mc_alg_t mc_alg_reduce_scatter_shm_dpml = {
    .coll = MC_REDUCE_SCATTER,
    .name = "shm_dpml",
    .doc =
        "small: all inputs copied to the region, rank r reduces block r in rank order, one sync; DAV s(5p-3)",
    .fn = run,
    .ok = mc_sr_dpml_ok,
    .cost = cost,
    .dav = dav,
    .flags = 0,
};
