/* Linear gatherv: the root posts one receive per non-empty block, then copies its own. */
#include "linear.h"

double mc_rooted_linear_cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return (in->p - 1) * (h->alpha + in->m * h->beta);
}

/* Posts every receive before the local copy so the copy overlaps the transfers. Requests
 * already posted are always waited for, even after a failed post, so none leaks. */
static int root_gatherv(mc_ctx_t *ctx, const mc_args_t *a, const mc_vlayout_t *l)
{
    int p = ctx->size, root = a->root, nreq = 0, rc = MPI_SUCCESS, rc2;
    MPI_Request *req = p > 1 ? mc_malloc((size_t)(p - 1) * sizeof *req) : NULL;
    char *rbuf = a->rbuf;
    if (p > 1 && !req) return MPI_ERR_NO_MEM;
    for (int i = 0; i < p && rc == MPI_SUCCESS; i++) {
        if (i == root || !mc_vlen(l, i)) continue;
        rc = mc_irecv(rbuf + mc_voff(l, i), mc_vlen(l, i), i, a->coll, ctx, &req[nreq]);
        if (rc == MPI_SUCCESS) nreq++;
    }
    if (rc == MPI_SUCCESS) mc_copy(rbuf + mc_voff(l, root), a->sbuf, a->count);
    rc2 = mc_waitall(nreq, req);
    mc_free(req);
    return rc != MPI_SUCCESS ? rc : rc2;
}

int mc_gatherv_linear_run(mc_ctx_t *ctx, const mc_args_t *a, const mc_vlayout_t *l)
{
    if (ctx->rank == a->root) return root_gatherv(ctx, a, l);
    return a->count ? mc_send(a->sbuf, a->count, a->root, a->coll, ctx) : MPI_SUCCESS;
}

static int gatherv_linear(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_vlayout_t l = {a->counts, a->displs, 0};
    return mc_gatherv_linear_run(ctx, a, &l);
}

const mc_alg_t mc_alg_gatherv_linear = {
    .coll = MC_GATHERV, .name = "linear",
    .doc = "root receives every rank's block directly (nonblocking, all at once)",
    .fn = gatherv_linear, .ok = NULL, .cost = mc_rooted_linear_cost, .flags = 0,
};
