/* Two-level view of a communicator for the algorithms that span nodes (pip-mcoll multi-object
 * algorithms, hierarchical compositions): N nodes (real, or virtual with MCOLL_VNODE_SIZE),
 * P ranks on this node, lanes (the ranks with the same local rank, one per node that has it).
 * Node and local indices come from the context's tables (nodes numbered by their lowest comm
 * rank, local ranks in comm rank order), never from rank arithmetic, so reordered and split
 * communicators work. */
#ifndef MC_HIER_H
#define MC_HIER_H
#include "../../core/mc.h"

typedef struct mc_hier {
    int N, n;         /* nodes; this rank's node */
    int P, l;         /* ranks on this node; this rank's local rank */
    int Pmin, Pmax;   /* fewest / most ranks on a node (uniform iff equal) */
    int *rank_of;     /* [N * Pmax]: comm rank of (node, local) at [node * Pmax + local], -1 if none */
    mc_ctx_t *node;   /* context of the node communicator: its shm engine and p2p */
    mc_ctx_t *lane;   /* context of the lane communicator: rank i = lane member on the i-th node
                       * that has local rank l (nodes in order) */
} mc_hier_t;

/* The view of ctx, built on first use from ctx's tables (no communication, no communicator
 * created: mc_ctx_derive). Freed with ctx. */
int mc_hier_get(mc_ctx_t *ctx, const mc_hier_t **out);
/* Comm rank of local rank `local` on node `node`, or -1 when that node has fewer ranks. */
static inline int mc_hier_rank(const mc_hier_t *h, int node, int local)
{
    return local < h->Pmax ? h->rank_of[(size_t)node * (size_t)h->Pmax + (size_t)local] : -1;
}
/* Ranks on node `node`. */
int mc_hier_size(const mc_hier_t *h, int node);
/* Applicability shared by the algorithms that span nodes: at least two nodes, an
 * intracommunicator (the entry layer guarantees it). */
int mc_hier_ok(const mc_ctx_t *ctx, const mc_args_t *a);
/* Runs a->coll on the node context with the shared-memory algorithm `shm`, or the
 * point-to-point `p2p` when shm does not apply there (no region: MCOLL_SHM=0, or creation
 * failed). a is already expressed for the node communicator (root, counts). */
int mc_hier_on_node(mc_ctx_t *node, const mc_args_t *a, const char *shm, const char *p2p);
/* N x P shape of a cost input: in->nodes nodes of p / nodes ranks; without a node count
 * (0), one rank per node. */
void mc_hier_shape(const mc_cost_in_t *in, int *N, int *P);
/* Parameters of the node steps of an algorithm across nodes: in->intra when the caller has
 * separate intra-node parameters (mc_cost_eval at the inter level), else h. */
static inline const mc_hockney_t *mc_hier_intra(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return in->intra ? in->intra : h;
}
/* Cost of a node step run by the shared-memory algorithm `a` (NULL: 0) with input `node`,
 * for an algorithm across nodes evaluated with line h and input in. Shared-memory costs
 * charge beta per byte of data-access volume; a copied byte is two of those, and is charged
 * as one byte of the intra-node line: beta = intra beta / 2. */
double mc_hier_step(const mc_hockney_t *h, const mc_cost_in_t *in, const mc_alg_t *a, const mc_cost_in_t *node);
/* Hockney cost of the registered algorithm `alg` of collective c on one node of P ranks with
 * m bytes per rank: 0 when P <= 1 or there is no such algorithm. */
double mc_hier_node_cost(const mc_hockney_t *h, mc_coll_t c, const char *alg, int P, double m);
/* Frees a view (the context's destructor calls it). */
void mc_hier_free(mc_hier_t *h);
#endif
