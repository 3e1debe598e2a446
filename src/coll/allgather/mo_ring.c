/* Multi-object ring allgather (pip-mcoll §III-B1). A node's block (its ranks' blocks in local
 * order, P_n*c bytes) is split into L = Pmin nearly equal byte parts; lane l (local rank l on
 * every node, l < L) ring-passes part l of every node's block: step s sends part l of node
 * n - s to node n + 1 and receives part l of node n - s - 1 from node n - 1. After each step the
 * node's ranks share the parts their lanes received by an intra-node allgatherv (the
 * "broadcast" of that node's block), which runs while the next ring step is in flight. The
 * node's own block is first gathered on every rank by an intra-node allgather (overlapped with
 * step 0 when P is uniform: part l of the own block is then rank l's own block). N - 1 steps,
 * each rank of a lane sends (N-1) parts. Any P per node (ranks l >= Pmin only join the node
 * steps) and any rank order (a working buffer when the ranks are not numbered node by node). */
#include "../../core/stats.h"
#include "../../p2p/p2p.h"
#include "../hier/hier.h"

typedef struct ring {
    mc_ctx_t *ctx;
    const mc_hier_t *h;
    const mc_args_t *a;
    char *W;           /* blocks node by node: node m at off[m] * c */
    size_t *off;       /* [N + 1] */
    size_t *cnt, *dsp; /* [P] node share layout */
    MPI_Request req[2];
    int nreq;
} ring_t;

static int mod(int x, int N)
{
    return (x % N + N) % N;
}
static size_t node_bytes(const ring_t *r, int m)
{
    return (r->off[m + 1] - r->off[m]) * r->a->count;
}
static char *part(const ring_t *r, int m, int l)
{
    return r->W + r->off[m] * r->a->count + mc_part_start(node_bytes(r, m), r->h->Pmin, l);
}
static size_t part_len(const ring_t *r, int m, int l)
{
    return mc_part_len(node_bytes(r, m), r->h->Pmin, l);
}

/* Step s of lane l: part of node n - s to the right, part of node n - s - 1 from the left. */
static int step_start(ring_t *r, int s)
{
    const mc_hier_t *h = r->h;
    int l = h->l, ms = mod(h->n - s, h->N), mr = mod(h->n - s - 1, h->N);
    int right = mc_hier_rank(h, mod(h->n + 1, h->N), l), left = mc_hier_rank(h, mod(h->n - 1, h->N), l);
    int rc = mc_irecv(part(r, mr, l), part_len(r, mr, l), left, MC_ALLGATHER, r->ctx, &r->req[0]);
    if (rc != MPI_SUCCESS) return rc;
    r->nreq = 1;
    rc = mc_isend(part(r, ms, l), part_len(r, ms, l), right, MC_ALLGATHER, r->ctx, &r->req[1]);
    if (rc == MPI_SUCCESS) r->nreq = 2;
    return rc;
}

static int step_wait(ring_t *r)
{
    int rc = mc_waitall(r->nreq, r->req);
    r->nreq = 0;
    return rc;
}

/* Every rank of the node gets node m's block from the lanes' parts. */
static int share(ring_t *r, int m)
{
    const mc_hier_t *h = r->h;
    if (h->P == 1) return MPI_SUCCESS;
    for (int j = 0; j < h->P; j++) {
        r->cnt[j] = j < h->Pmin ? part_len(r, m, j) : 0;
        r->dsp[j] = j < h->Pmin ? (size_t)(part(r, m, j) - part(r, m, 0)) : 0;
    }
    mc_args_t ag = *r->a;
    ag.coll = MC_ALLGATHERV;
    ag.rbuf = part(r, m, 0);
    ag.sbuf = part(r, m, 0) + r->dsp[h->l];
    ag.count = r->cnt[h->l];
    ag.counts = r->cnt;
    ag.displs = r->dsp;
    return mc_hier_on_node(h->node, &ag, "shm_direct", "ring");
}

/* The own node's block on every local rank (allgather in place). */
static int own_block(ring_t *r)
{
    if (r->h->P == 1) return MPI_SUCCESS;
    mc_args_t ag = *r->a;
    ag.rbuf = part(r, r->h->n, 0);
    ag.sbuf = (char *)ag.rbuf + (size_t)r->h->l * r->a->count;
    return mc_hier_on_node(r->h->node, &ag, "shm_direct", "ring");
}

static int ring_run(ring_t *r)
{
    const mc_hier_t *h = r->h;
    int lane = h->l < h->Pmin, early = lane && h->Pmin == h->Pmax, rc = MPI_SUCCESS;
    mc_copy(part(r, h->n, 0) + (size_t)h->l * r->a->count, r->a->sbuf, r->a->count);
    if (early) rc = step_start(r, 0); /* part l of the own block is this rank's block */
    if (rc == MPI_SUCCESS) rc = own_block(r);
    for (int s = 0; rc == MPI_SUCCESS && s < h->N - 1; s++) {
        if (lane && !(early && s == 0)) rc = step_start(r, s);
        if (rc == MPI_SUCCESS && s > 0) rc = share(r, mod(h->n - s, h->N));
        int rw = step_wait(r);
        if (rc == MPI_SUCCESS) rc = rw;
    }
    if (r->nreq) step_wait(r);
    if (rc == MPI_SUCCESS) rc = share(r, mod(h->n + 1, h->N));
    if (lane) mc_stats_rounds(MC_ALLGATHER, (uint64_t)(h->N - 1));
    return rc;
}

/* 1 when comm ranks go node by node (node m's local rank j is rank off[m] + j). */
static int node_major(const mc_hier_t *h, const size_t *off)
{
    for (int m = 0; m < h->N; m++)
        for (size_t j = 0; j < off[m + 1] - off[m]; j++)
            if ((size_t)mc_hier_rank(h, m, (int)j) != off[m] + j) return 0;
    return 1;
}

static int allgather_mo_ring(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc != MPI_SUCCESS || !a->count) return rc;
    size_t c = a->count;
    ring_t r = {.ctx = ctx, .h = h, .a = a};
    char *owned = NULL;
    r.off = mc_malloc(sizeof(size_t) * ((size_t)h->N + 1 + 2 * (size_t)h->P));
    if (!r.off) return MPI_ERR_NO_MEM;
    r.cnt = r.off + h->N + 1, r.dsp = r.cnt + h->P;
    r.off[0] = 0;
    for (int m = 0; m < h->N; m++) r.off[m + 1] = r.off[m] + (size_t)ctx->node_size[m];
    r.W = a->rbuf;
    if (!node_major(h, r.off) && !(r.W = owned = mc_malloc((size_t)ctx->size * c))) {
        rc = MPI_ERR_NO_MEM;
        goto cleanup;
    }
    rc = ring_run(&r);
    for (int m = 0; owned && rc == MPI_SUCCESS && m < h->N; m++)
        for (size_t j = 0; j < r.off[m + 1] - r.off[m]; j++)
            mc_copy((char *)a->rbuf + (size_t)mc_hier_rank(h, m, (int)j) * c, owned + (r.off[m] + j) * c, c);
cleanup:
    mc_free(owned);
    mc_free(r.off);
    return rc;
}

/* Hockney, m = bytes per rank, uniform P:
 *   step  = alpha + P*m*beta       (P lanes send m bytes each; the node's link carries P*m)
 *   share = T_shm_direct allgather(P, m)   (the node block of the step before)
 *   T = (N-1) * max(step, share) + share
 * (ring_run: with uniform P step 0 starts before the own block's node allgather, which it
 * overlaps; step s overlaps the share of step s-1; the last share is exposed).
 * P = 1: T = (N-1) * (alpha + m*beta), the classic ring. */
static double cost(const mc_hockney_t *hk, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    double step = hk->alpha + P * in->m * hk->beta, sh = 0;
    const mc_alg_t *ag = mc_alg_find(MC_ALLGATHER, "shm_direct");
    mc_cost_in_t node = {.p = P, .m = in->m, .ms = in->m, .radix = in->radix, .sockets = 1};
    sh = mc_hier_step(hk, in, ag, &node);
    return (N - 1) * (step > sh ? step : sh) + sh;
}

const mc_alg_t mc_alg_allgather_mo_ring = {
    .coll = MC_ALLGATHER,
    .name = "mo_ring",
    .doc = "multi-object ring (pip-mcoll): lane l ring-passes part l of every node block, node "
           "allgatherv of each step overlapped with the next step; >= 2 nodes, any P",
    .fn = allgather_mo_ring,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = 0,
};
