/* Hierarchical barrier: a node barrier (everyone of the node has arrived), a dissemination
 * barrier among the node leaders (every node has arrived), then a second node barrier that
 * the leaders enter only after that (release). The node barriers use the shared-memory flags,
 * or the dissemination barrier point-to-point without a region. */
#include "../hier/hier.h"
#include "../../core/stats.h"

static int barrier_hier(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc == MPI_SUCCESS && h->P > 1) rc = mc_hier_on_node(h->node, a, "shm", "bruck");
    if (rc == MPI_SUCCESS && h->l == 0) {
        /* lane 0 is exactly the node leaders, one per node */
        const mc_alg_t *bruck = mc_alg_find(MC_BARRIER, "bruck");
        mc_stats_rounds(MC_BARRIER, (uint64_t)mc_ceil_log2(h->N));
        rc = bruck ? bruck->fn(h->lane, a) : MPI_ERR_INTERN;
    }
    if (rc == MPI_SUCCESS && h->P > 1) rc = mc_hier_on_node(h->node, a, "shm", "bruck");
    return rc;
}

/* T = ceil(log2 N) * alpha + 2 * ceil(log2 P) * alpha (node flag rounds, same alpha). */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    return mc_ceil_log2(N) * h->alpha + 2.0 * mc_ceil_log2(P) * mc_hier_intra(h, in)->alpha;
}

const mc_alg_t mc_alg_barrier_hier = {
    .coll = MC_BARRIER,
    .name = "hier",
    .doc = "node barrier (shm flags), dissemination among node leaders, node release; >= 2 nodes, any P",
    .fn = barrier_hier,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = 0,
};
