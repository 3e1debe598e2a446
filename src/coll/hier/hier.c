/* Two-level view of a communicator (hier.h). */
#include "hier.h"
#include <stdlib.h>

int mc_hier_size(const mc_hier_t *h, int node)
{
    int k = 0;
    while (k < h->Pmax && mc_hier_rank(h, node, k) >= 0) k++;
    return k;
}

int mc_hier_ok(const mc_ctx_t *ctx, const mc_args_t *a)
{
    (void)a;
    return ctx->nnodes >= 2 && ctx->lane_comm != MPI_COMM_NULL; /* a lane context has none */
}

void mc_hier_free(mc_hier_t *h)
{
    if (!h) return;
    mc_ctx_free(h->node);
    mc_ctx_free(h->lane);
    free(h->rank_of);
    free(h);
}

/* The tables and the node and lane contexts come from the context (no communication). */
static int build(mc_ctx_t *ctx, mc_hier_t *h)
{
    h->N = ctx->nnodes, h->n = ctx->node;
    h->P = ctx->local_size, h->l = ctx->local_rank;
    h->Pmin = h->Pmax = ctx->node_size[0];
    for (int k = 1; k < h->N; k++) {
        if (ctx->node_size[k] < h->Pmin) h->Pmin = ctx->node_size[k];
        if (ctx->node_size[k] > h->Pmax) h->Pmax = ctx->node_size[k];
    }
    h->rank_of = malloc(sizeof(int) * (size_t)h->N * (size_t)h->Pmax);
    if (!h->rank_of) return MPI_ERR_NO_MEM;
    for (size_t i = 0; i < (size_t)h->N * (size_t)h->Pmax; i++) h->rank_of[i] = -1;
    for (int r = 0; r < ctx->size; r++)
        h->rank_of[(size_t)ctx->node_of[r] * (size_t)h->Pmax + (size_t)ctx->local_of[r]] = r;
    int rc = mc_ctx_derive(ctx, 0, &h->node);
    if (rc == MPI_SUCCESS) rc = mc_ctx_derive(ctx, 1, &h->lane);
    return rc;
}

int mc_hier_get(mc_ctx_t *ctx, const mc_hier_t **out)
{
    if (!ctx->hier) {
        mc_hier_t *h = calloc(1, sizeof *h);
        if (!h) return MPI_ERR_NO_MEM;
        int rc = build(ctx, h);
        if (rc != MPI_SUCCESS) {
            mc_hier_free(h);
            return rc;
        }
        ctx->hier = h;
    }
    *out = ctx->hier;
    return MPI_SUCCESS;
}

int mc_hier_on_node(mc_ctx_t *node, const mc_args_t *a, const char *shm, const char *p2p)
{
    const mc_alg_t *alg = mc_alg_find(a->coll, shm);
    if (!alg || !mc_alg_applicable(alg, node, a)) alg = mc_alg_find(a->coll, p2p);
    return alg ? alg->fn(node, a) : MPI_ERR_INTERN;
}

void mc_hier_shape(const mc_cost_in_t *in, int *N, int *P)
{
    int p = in->p > 0 ? in->p : 1;
    *N = in->nodes > 0 && in->nodes <= p ? in->nodes : p;
    *P = p / *N;
}

double mc_hier_step(const mc_hockney_t *h, const mc_cost_in_t *in, const mc_alg_t *a, const mc_cost_in_t *node)
{
    if (!a || !a->cost || node->p <= 1) return 0;
    mc_hockney_t s = *mc_hier_intra(h, in);
    if (a->dav) s.beta /= 2;
    return a->cost(&s, node);
}

double mc_hier_node_cost(const mc_hockney_t *h, mc_coll_t c, const char *alg, int P, double m)
{
    mc_cost_in_t node = {.p = P, .m = m, .ms = m, .radix = 4, .sockets = 1, .nodes = 1};
    return mc_hier_step(h, &node, mc_alg_find(c, alg), &node);
}
