/* Movement-avoiding (yhccl) reduce: windows of p slices in the node region, rank r
 * handles slice (r+1+j) mod p at step j (copy, then reductions, then the final piece), waiting
 * only for its neighbour; one copy per input byte. The results are left in the region and copied out by
 * the root, but for the root's own piece: its last reduction writes the root's rbuf (at 2 ranks
 * from 512 KiB the root's piece is the whole window: ma_whole). */
#include "../reduce_scatter/shm_common.h"

static const mc_sr_job_t job = {.dest = MC_SR_ROOT};

static int run(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_sr_ma(ctx, a, &job, 0);
}

static double dav(const mc_cost_in_t *in)
{
    mc_cost_in_t c = *in;
    c.sockets = 1;
    return mc_sr_ma_dav(MC_SR_ROOT, &c);
}

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_sr_ma_cost(MC_SR_ROOT, 0, h, in);
}

const mc_alg_t mc_alg_reduce_shm_ma = {
    .coll = MC_REDUCE,
    .name = "shm_ma",
    .doc = "movement-avoiding reduce-scatter into the region + root copy-out of the others' pieces (yhccl), "
           "DAV s(3p-1) + 2s(p-1)/p; at 2 ranks from 512 KiB the root's piece is the whole window, s(3p-1)",
    .fn = run,
    .ok = mc_sr_ma_ok,
    .cost = cost,
    .dav = dav,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
