/* Socket-aware movement-avoiding reduce: MA within each socket (real, or
 * MCOLL_VSOCKET_SIZE) into a per-socket partial, then rank r reduces its piece across the m
 * partials; fewer neighbour waits than the flat MA for 2m-2 more bytes of DAV per byte. The result is left in
 * the region and copied out by the root. */
#include "../reduce_scatter/shm_common.h"

static const mc_sr_job_t job = {.dest = MC_SR_ROOT};

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_sr_ma(ctx, a, &job, 1);
}

static double dav(const mc_cost_in_t *in)
{
    return mc_sr_ma_dav(MC_SR_ROOT, in);
}

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_ma_cost(MC_SR_ROOT, 1, h, in);
}

const mc_alg_t mc_alg_reduce_shm_ma_socket = {
    .coll = MC_REDUCE,
    .name = "shm_ma_socket",
    .doc = "socket-aware movement-avoiding reduce (yhccl), DAV s(3p+2m-3) + 2s(p-1)/p for any socket sizes",
    .fn = run,
    .ok = mc_sr_ma_socket_ok,
    .cost = cost,
    .dav = dav,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
