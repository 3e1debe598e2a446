/* Hierarchical allreduce (yhccl §5.5): the vector is cut into B = Pmin blocks (the fewest
 * ranks any node has); (1) on every node a movement-avoiding reduce-scatter leaves block l at
 * local rank l (local ranks >= Pmin get nothing), (2) each lane l < Pmin runs a ring
 * allreduce of its block across the N nodes, (3) an allgatherv on every node gathers the B
 * reduced blocks into every rank's rbuf. All P ranks of a node take part in the inter-node
 * phase at once (P = Pmin lanes), each with 1/P of the vector. Non-uniform P is handled by
 * the Pmin cut: the extra local ranks only join the node steps. Without a node region the node
 * steps run point-to-point (ring reduce-scatter, ring allgatherv). Commutative ops only: the
 * MA reduce-scatter and the ring both reorder operands. */
#include "../hier/hier.h"
#include "../../p2p/p2p.h"
#include "../../core/stats.h"

/* Block layout on this node: counts/displs of P local ranks in elements (B = Pmin blocks). */
static void layout(const mc_hier_t *h, size_t count, size_t *cnt, size_t *dsp)
{
    for (int i = 0; i < h->P; i++) {
        cnt[i] = i < h->Pmin ? mc_part_len(count, h->Pmin, i) : 0;
        dsp[i] = i < h->Pmin ? mc_part_start(count, h->Pmin, i) : count;
    }
}

/* (1) node reduce-scatter of a->sbuf into blk (cnt[l] elements). */
static int node_rs(const mc_hier_t *h, const mc_args_t *a, const size_t *cnt, const size_t *dsp, void *blk)
{
    if (h->P == 1) {
        mc_copy(blk, a->sbuf, cnt[0] * a->extent);
        return MPI_SUCCESS;
    }
    mc_args_t rs = *a;
    rs.coll = MC_REDUCE_SCATTER;
    rs.rbuf = blk;
    rs.count = cnt[h->l];
    rs.counts = cnt;
    rs.displs = dsp;
    rs.bytes = a->count * a->extent;
    return mc_hier_on_node(h->node, &rs, "shm_ma", "ring");
}

/* (2) ring allreduce of the block across the lane (in place). */
static int lane_ring(const mc_hier_t *h, const mc_args_t *a, size_t n, void *blk)
{
    if (!n || h->lane->size < 2) return MPI_SUCCESS;
    mc_args_t ar = *a;
    ar.sbuf = ar.rbuf = blk;
    ar.count = n;
    ar.bytes = n * a->extent;
    const mc_alg_t *ring = mc_alg_find(MC_ALLREDUCE, "ring");
    if (!ring) return MPI_ERR_INTERN;
    mc_stats_rounds(MC_ALLREDUCE, 2 * (uint64_t)(h->lane->size - 1));
    return ring->fn(h->lane, &ar);
}

/* (3) node allgatherv of the blocks into a->rbuf (bytes; cnt/dsp rescaled in place). */
static int node_ag(const mc_hier_t *h, const mc_args_t *a, size_t *cnt, size_t *dsp, const void *blk)
{
    if (h->P == 1) {
        mc_copy(a->rbuf, blk, cnt[0] * a->extent);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < h->P; i++) cnt[i] *= a->extent, dsp[i] *= a->extent;
    mc_args_t ag = {.coll = MC_ALLGATHERV, .sbuf = blk, .rbuf = a->rbuf, .count = cnt[h->l],
                    .dtype = MPI_BYTE, .extent = 1, .op = MPI_OP_NULL, .commute = 1,
                    .counts = cnt, .displs = dsp, .bytes = a->count * a->extent / (size_t)h->P};
    return mc_hier_on_node(h->node, &ag, "shm_pipe", "ring");
}

static int allreduce_hier_ma_ring(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc != MPI_SUCCESS || !a->count) return rc;
    size_t *cnt = mc_malloc(sizeof(size_t) * 2 * (size_t)h->P);
    if (!cnt) return MPI_ERR_NO_MEM;
    size_t *dsp = cnt + h->P;
    layout(h, a->count, cnt, dsp);
    size_t n = cnt[h->l];
    /* The block can live in its final place unless the input is there too (in place). */
    void *tmp = NULL, *blk = mc_elem(a->rbuf, dsp[h->l], a);
    if (a->sbuf == a->rbuf && n) {
        blk = tmp = mc_tmp_elems(n, a);
        if (!tmp) rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS) rc = node_rs(h, a, cnt, dsp, blk);
    if (rc == MPI_SUCCESS) rc = lane_ring(h, a, n, blk);
    if (rc == MPI_SUCCESS) rc = node_ag(h, a, cnt, dsp, blk);
    mc_free(tmp);
    mc_free(cnt);
    return rc;
}

/* T = T_rs,MA(P, m) + ring(N, m/P) + T_agv(P, m/P), with the ring
 * 2(N-1)*alpha + 2(N-1)/N*(m/P)*beta + (N-1)/N*(m/P)*gamma (the node steps use the
 * registered shm_ma reduce-scatter and shm_pipe allgatherv models). */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    double b = in->m / P, t = 2.0 * (N - 1) * h->alpha + (N - 1.0) / N * b * (2 * h->beta + h->gamma);
    if (P > 1) {
        const mc_alg_t *rs = mc_alg_find(MC_REDUCE_SCATTER, "shm_ma"), *ag = mc_alg_find(MC_ALLGATHERV, "shm_pipe");
        mc_cost_in_t node = {.p = P, .m = in->m, .ms = in->m, .radix = in->radix, .sockets = 1};
        t += mc_hier_step(h, in, rs, &node);
        node.m = node.ms = b;
        t += mc_hier_step(h, in, ag, &node);
    }
    return t;
}

const mc_alg_t mc_alg_allreduce_hier_ma_ring = {
    .coll = MC_ALLREDUCE,
    .name = "hier_ma_ring",
    .doc = "nodes: MA reduce-scatter into Pmin blocks, ring allreduce per lane across nodes, node "
           "allgatherv (yhccl 5.5); >= 2 nodes, any P (extra local ranks skip the ring), commutative ops",
    .fn = allreduce_hier_ma_ring,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
