/* Hierarchical gather: every node gathers its ranks' blocks (local-rank order) at its
 * representative (the rank with the root's local rank, or the node's leader where the node has
 * fewer ranks), then a binomial tree across the nodes, rooted at the root's node, carries the
 * node blocks to the root. In node vranks (v = node - root's node mod N) the subtree of v is
 * the node range [v, v + span), so every representative forwards one message: its subtree's
 * node blocks in vrank order. Binomial rather than linear across nodes: the root's port
 * receives the same (size - P_root) blocks either way, the tree needs ceil(log2 N) latencies
 * instead of N - 1. Each representative posts its receives before its node step, so the node
 * gather overlaps the traffic from its children.
 *
 * Rank order: node blocks are contiguous in comm rank order only when the ranks are numbered
 * node by node (reordered or split communicators break that), so the root receives a
 * subtree straight into rbuf only when the subtree's ranks are consecutive there; any other
 * part is staged and its blocks are placed one by one. */
#include "../hier/hier.h"
#include "../../p2p/p2p.h"
#include "../../core/stats.h"

typedef struct {
    mc_ctx_t *ctx;
    const mc_hier_t *h;
    const mc_args_t *a;
    int lr, rn;      /* root's local rank, root's node */
    size_t *off;     /* [N + 1] byte offset of node vrank v in vrank order (prefix of sizes) */
} gh_t;

static int node_at(const gh_t *g, int v) { return (v + g->rn) % g->h->N; }

static int rep_of(const gh_t *g, int node)
{
    int r = mc_hier_rank(g->h, node, g->lr);
    return r >= 0 ? r : mc_hier_rank(g->h, node, 0);
}

/* First comm rank of node vranks [v, v + n) when their ranks, in vrank then local order, are
 * consecutive comm ranks (the part can then live in rbuf as is); -1 otherwise. */
static int consecutive(const gh_t *g, int v, int n)
{
    int first = mc_hier_rank(g->h, node_at(g, v), 0), next = first;
    for (int i = v; i < v + n; i++)
        for (int k = 0, s = mc_hier_size(g->h, node_at(g, i)); k < s; k++)
            if (mc_hier_rank(g->h, node_at(g, i), k) != next++) return -1;
    return first;
}

/* Blocks of node vranks [v, v + n), staged in vrank/local order at src, to their ranks' slots. */
static void place(const gh_t *g, int v, int n, const char *src)
{
    size_t m = g->a->count;
    for (int i = v; i < v + n; i++)
        for (int k = 0, s = mc_hier_size(g->h, node_at(g, i)); k < s; k++, src += m)
            mc_copy((char *)g->a->rbuf + (size_t)mc_hier_rank(g->h, node_at(g, i), k) * m, src, m);
}

/* Node step: this node's blocks, in local order, into dst at the representative (local `to`). */
static int within(const gh_t *g, int to, void *dst)
{
    if (g->h->P == 1) {
        mc_copy(dst, g->a->sbuf, g->a->count);
        return MPI_SUCCESS;
    }
    mc_args_t ng = *g->a;
    ng.rbuf = dst;
    ng.root = to;
    return mc_hier_on_node(g->h->node, &ng, "shm_direct", "binomial");
}

/* The root: children's subtrees straight into rbuf where their ranks are consecutive, else
 * into a staging buffer laid out in vrank order; its own node likewise. */
static int at_root(const gh_t *g, const mc_tree_t *t)
{
    const mc_args_t *a = g->a;
    int N = g->h->N, nreq = 0, rc = MPI_SUCCESS, rc2;
    char *rbuf = a->rbuf, *stage = NULL, *dst[MC_TREE_MAX + 1];
    MPI_Request req[MC_TREE_MAX];
    int first[MC_TREE_MAX + 1], vr[MC_TREE_MAX + 1], span[MC_TREE_MAX + 1], parts = t->nchild + 1;
    vr[0] = 0, span[0] = 1;
    for (int i = 0; i < t->nchild; i++) {
        vr[i + 1] = (t->child[i] - g->rn + N) % N;
        span[i + 1] = mc_binomial_span(vr[i + 1], N);
    }
    for (int i = 0; i < parts; i++)
        if ((first[i] = consecutive(g, vr[i], span[i])) < 0 && !stage && !(stage = mc_malloc(g->off[N])))
            return MPI_ERR_NO_MEM;
    for (int i = 0; i < parts; i++)
        dst[i] = first[i] >= 0 ? rbuf + (size_t)first[i] * a->count : stage + g->off[vr[i]];
    for (int i = 1; i < parts && rc == MPI_SUCCESS; i++) {
        rc = mc_irecv(dst[i], g->off[vr[i] + span[i]] - g->off[vr[i]], rep_of(g, t->child[i - 1]), MC_GATHER,
                      g->ctx, &req[nreq]);
        if (rc == MPI_SUCCESS) nreq++;
    }
    if (rc == MPI_SUCCESS) rc = within(g, g->h->l, dst[0]);
    rc2 = mc_waitall(nreq, req);
    if (rc == MPI_SUCCESS) rc = rc2;
    for (int i = 0; rc == MPI_SUCCESS && i < parts; i++)
        if (first[i] < 0) place(g, vr[i], span[i], dst[i]);
    mc_free(stage);
    return rc;
}

/* Any other representative: own node block first, then each child's subtree, up in one message. */
static int inner(const gh_t *g, const mc_tree_t *t, int to)
{
    int N = g->h->N, v = (g->h->n - g->rn + N) % N, nreq = 0, rc = MPI_SUCCESS, rc2;
    size_t base = g->off[v], len = g->off[v + mc_binomial_span(v, N)] - base;
    char *tmp = mc_malloc(len);
    MPI_Request req[MC_TREE_MAX];
    if (!tmp) return MPI_ERR_NO_MEM;
    for (int i = 0; i < t->nchild && rc == MPI_SUCCESS; i++) {
        int cv = (t->child[i] - g->rn + N) % N;
        rc = mc_irecv(tmp + (g->off[cv] - base), g->off[cv + mc_binomial_span(cv, N)] - g->off[cv],
                      rep_of(g, t->child[i]), MC_GATHER, g->ctx, &req[nreq]);
        if (rc == MPI_SUCCESS) nreq++;
    }
    if (rc == MPI_SUCCESS) rc = within(g, to, tmp);
    rc2 = mc_waitall(nreq, req);
    if (rc == MPI_SUCCESS) rc = rc2;
    if (rc == MPI_SUCCESS) rc = mc_send(tmp, len, rep_of(g, t->parent), MC_GATHER, g->ctx);
    mc_free(tmp);
    return rc;
}

static int gather_hier(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc != MPI_SUCCESS || !a->count) return rc;
    gh_t g = {ctx, h, a, ctx->local_of[a->root], ctx->node_of[a->root], NULL};
    int rep = rep_of(&g, h->n), to = ctx->local_of[rep];
    if (ctx->rank != rep) return within(&g, to, NULL);   /* only the representative's rbuf counts */
    if (!(g.off = mc_malloc(sizeof(size_t) * ((size_t)h->N + 1)))) return MPI_ERR_NO_MEM;
    g.off[0] = 0;
    for (int v = 0; v < h->N; v++) g.off[v + 1] = g.off[v] + (size_t)mc_hier_size(h, node_at(&g, v)) * a->count;
    mc_tree_t t;
    mc_tree_binomial(&t, h->n, h->N, g.rn);   /* over node indices */
    mc_stats_rounds(MC_GATHER, (uint64_t)mc_ceil_log2(h->N));
    rc = t.parent < 0 ? at_root(&g, &t) : inner(&g, &t, to);
    mc_free(g.off);
    return rc;
}

/* T = T_node_gather(P, m) + ceil(log2 N) * alpha + (p - P) * m * beta: every block from
 * another node reaches the root's port once; the tree adds one latency per level. */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    return mc_hier_node_cost(mc_hier_intra(h, in), MC_GATHER, "shm_direct", P, in->m) + mc_ceil_log2(N) * h->alpha +
           (double)(N - 1) * P * in->m * h->beta;
}

const mc_alg_t mc_alg_gather_hier = {
    .coll = MC_GATHER,
    .name = "hier",
    .doc = "shm gather of every node's blocks to the rank with the root's local rank (leader where a "
           "node lacks it), binomial across nodes to the root; >= 2 nodes, any P and root",
    .fn = gather_hier,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = 0,
};
