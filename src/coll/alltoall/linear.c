/* Linear alltoall: the alltoallv linear exchange on the uniform layout. */
#include "../alltoallv/common.h"

static int alltoall_linear(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_a2av_t v = mc_a2av_of_alltoall(a);
    return a->count ? mc_a2av_linear(ctx, &v) : MPI_SUCCESS;
}

const mc_alg_t mc_alg_alltoall_linear = {
    .coll = MC_ALLTOALL, .name = "linear", .doc = "all sends and receives posted at once",
    .fn = alltoall_linear, .ok = NULL, .cost = mc_a2av_linear_cost, .flags = 0,
};
