/* Glue between the algorithm registry and the node region. */
#include "shm.h"
#include "../core/config.h"

int mc_shm_alg_ok(const mc_ctx_t *ctx, const mc_args_t *a)
{
    return ctx->nnodes == 1 && !ctx->shm_failed && mc_cfg()->shm;
}

/* The region could not be created: the call still has to run, with a point-to-point
 * algorithm (later calls decline through mc_shm_alg_ok). */
static int run_fallback(mc_ctx_t *ctx, const mc_args_t *a)
{
    for (int i = 0; i < mc_alg_count(a->coll); i++) {
        const mc_alg_t *alg = mc_alg_at(a->coll, i);
        if (!alg->dav && mc_alg_applicable(alg, ctx, a)) {
            int rc = mc_ctx_p2p(ctx); /* every rank is here: region creation agreed it failed */
            return rc == MPI_SUCCESS ? alg->fn(ctx, a) : rc;
        }
    }
    return MPI_ERR_INTERN;
}

int mc_shm_enter_slow(mc_ctx_t *ctx, const mc_args_t *a, mc_shm_t **sh, int *rc)
{
    *rc = mc_shm_get(ctx, sh);
    if (*rc != MPI_SUCCESS) return 0;
    if (*sh) return 1;
    *rc = run_fallback(ctx, a);
    return 0;
}
