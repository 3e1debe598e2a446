/* Pairwise exchange alltoall: the alltoallv pairwise exchange on the uniform layout. */
#include "../alltoallv/common.h"

static int alltoall_pairwise(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_a2av_t v = mc_a2av_of_alltoall(a);
    return a->count ? mc_a2av_pairwise(ctx, &v) : MPI_SUCCESS;
}

const mc_alg_t mc_alg_alltoall_pairwise = {
    .coll = MC_ALLTOALL, .name = "pairwise", .doc = "pairwise exchange, p-1 steps",
    .fn = alltoall_pairwise, .ok = NULL, .cost = mc_a2av_pairwise_cost, .flags = 0,
};
