/* Linear scatterv: the root sends every non-empty block directly, then copies its own. */
#include "../gatherv/linear.h"

/* Sends are nonblocking so the local copy overlaps them; posted sends are always waited
 * for, even after a failed post. */
static int root_scatterv(mc_ctx_t *ctx, const mc_args_t *a, const mc_vlayout_t *l)
{
    int p = ctx->size, root = a->root, nreq = 0, rc = MPI_SUCCESS, rc2;
    MPI_Request *req = p > 1 ? mc_malloc((size_t)(p - 1) * sizeof *req) : NULL;
    const char *sbuf = a->sbuf;
    if (p > 1 && !req) return MPI_ERR_NO_MEM;
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++) {
        if (i == root || !mc_vlen(l, i)) continue;
        rc = mc_isend(sbuf + mc_voff(l, i), mc_vlen(l, i), i, a->coll, ctx, &req[nreq]);
        if (rc == MPI_SUCCESS) nreq++;
    }
    if (rc == MPI_SUCCESS) mc_copy(a->rbuf, sbuf + mc_voff(l, root), a->count);
    rc2 = mc_waitall(nreq, req);
    mc_free(req);
    return rc != MPI_SUCCESS ? rc : rc2;
}

int mc_scatterv_linear_run(mc_ctx_t *ctx, const mc_args_t *a, const mc_vlayout_t *l)
{
    if (ctx->rank == a->root) return root_scatterv(ctx, a, l);
    return a->count ? mc_recv(a->rbuf, a->count, a->root, a->coll, ctx) : MPI_SUCCESS;
}

static int scatterv_linear(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_vlayout_t l = {a->counts, a->displs, 0};
    return mc_scatterv_linear_run(ctx, a, &l);
}

const mc_alg_t mc_alg_scatterv_linear = {
    .coll = MC_SCATTERV, .name = "linear",
    .doc = "root sends every rank's block directly (nonblocking, all at once)",
    .fn = scatterv_linear, .ok = NULL, .cost = mc_rooted_linear_cost, .flags = 0,
};
