/* Socket-aware movement-avoiding reduce-scatter-block: MA within each socket (real, or
 * MCOLL_VSOCKET_SIZE) into a per-socket partial, then rank r reduces its piece across the m
 * partials; fewer neighbour waits than the flat MA for 2m-2 more bytes of DAV per byte. Rank r's final piece
 * goes to its rbuf. */
#include "../reduce_scatter/shm_common.h"

static const mc_sr_job_t job = {.dest = MC_SR_RS};

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_sr_ma(ctx, a, &job, 1);
}

static double dav(const mc_cost_in_t *in)
{
    return mc_sr_ma_dav(MC_SR_RS, in);
}

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_ma_cost(MC_SR_RS, 1, h, in);
}

const mc_alg_t mc_alg_reduce_scatter_block_shm_ma_socket = {
    .coll = MC_REDUCE_SCATTER_BLOCK,
    .name = "shm_ma_socket",
    .doc = "socket-aware movement-avoiding reduce-scatter (yhccl), DAV s(3p+2m-3) for any socket sizes",
    .fn = run,
    .ok = mc_sr_ma_socket_ok,
    .cost = cost,
    .dav = dav,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
