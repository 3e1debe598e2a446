/* Multi-object reduce-scatter + allgather allreduce (pip-mcoll §III-B2), for medium and large
 * vectors. L = Pmin lanes; lane l is local rank l on every node.
 * (1) Node reduce-scatter (movement-avoiding, shm engine; ring without a region): local rank
 *     l < L gets part l of the node's partial vector, a balanced split of the vector into L
 *     parts of C_b = count/L elements (local ranks >= L get nothing).
 * (2) Lane reduce-scatter, direct: part l is split into N balanced chunks, chunk i belongs to
 *     node i. Every lane rank sends its N - 1 foreign chunks to their owners at once and folds
 *     the N - 1 chunks it receives into its own: one round, C_b(N-1)/N elements out and in per
 *     rank, every node's link busy on all L lanes at once.
 * (3) Lane allgather, direct, overlapped with the node broadcast: every lane rank sends its
 *     reduced chunk to the N - 1 other nodes and, as the chunks arrive (in a fixed order),
 *     forwards each one to the other ranks of its node, which receive straight into rbuf.
 * The paper lets lane l own a node range [N*l/P, N*(l+1)/P) of chunks of the whole vector and
 * reduces a node's chunk at one rank; cutting the vector into lane parts first instead gives
 * every rank the same share of sends, receives and reductions (for any N, P, count; no
 * divisibility). Each chunk is reduced at exactly one rank and copied from there, so the result
 * is bitwise identical everywhere. Commutative ops (the MA node step and the lane fold reorder
 * operands). Any P per node: the extra local ranks take part in (1) and (3) only. */
#include "../../core/stats.h"
#include "../../p2p/p2p.h"
#include "../hier/hier.h"

typedef struct job {
    mc_ctx_t *ctx;
    const mc_hier_t *h;
    const mc_args_t *a;
    int L;
    size_t *cnt, *dsp; /* [P] part of each local rank (elements; 0 for local ranks >= L) */
    char *part;        /* this rank's part in rbuf */
    MPI_Request *req;
    int nreq;
} job_t;

/* Chunk of node i in part j (elements, relative to the part). */
static size_t cstart(const job_t *J, int j, int i)
{
    return mc_part_start(J->cnt[j], J->h->N, i);
}
static size_t clen(const job_t *J, int j, int i)
{
    return mc_part_len(J->cnt[j], J->h->N, i);
}
static char *at(const job_t *J, const char *base, size_t elems)
{
    return (char *)base + elems * J->a->extent;
}

/* (1) node reduce-scatter of a->sbuf into blk (cnt[l] elements). */
static int node_rs(const job_t *J, void *blk)
{
    const mc_hier_t *h = J->h;
    if (h->P == 1) {
        mc_copy(blk, J->a->sbuf, J->cnt[0] * J->a->extent);
        return MPI_SUCCESS;
    }
    mc_args_t rs = *J->a;
    rs.coll = MC_REDUCE_SCATTER;
    rs.rbuf = blk;
    rs.count = J->cnt[h->l];
    rs.counts = J->cnt;
    rs.displs = J->dsp;
    return mc_hier_on_node(h->node, &rs, "shm_ma", "ring");
}

/* (2) lane reduce-scatter: fold the N-1 received copies of chunk n into part's chunk n. */
static int lane_rs(job_t *J)
{
    const mc_hier_t *h = J->h;
    const mc_args_t *a = J->a;
    int N = h->N, n = h->n, l = h->l, rc = MPI_SUCCESS, nrecv = 0;
    size_t mine = clen(J, l, n);
    char *tmp = mine ? mc_tmp_elems((size_t)(N - 1) * mine, a) : NULL, *own = at(J, J->part, cstart(J, l, n));
    if (mine && !tmp) return MPI_ERR_NO_MEM;
    J->nreq = 0;
    for (int s = 1; s < N && mine && rc == MPI_SUCCESS; s++, nrecv++)
        rc = mc_irecv_t(at(J, tmp, (size_t)(s - 1) * mine), mine, a, mc_hier_rank(h, (n + s) % N, l), J->ctx,
                        &J->req[J->nreq++]);
    for (int s = 1; s < N && rc == MPI_SUCCESS; s++) {
        int i = (n - s + N) % N;
        if (clen(J, l, i))
            rc = mc_isend_t(at(J, J->part, cstart(J, l, i)), clen(J, l, i), a, mc_hier_rank(h, i, l), J->ctx,
                            &J->req[J->nreq++]);
    }
    /* Fold in arrival order: the op is commutative and the result leaves from here only. */
    for (int k = 0; k < nrecv && rc == MPI_SUCCESS; k++) {
        int idx;
        rc = mc_waitany(nrecv, J->req, &idx);
        if (rc == MPI_SUCCESS && idx != MPI_UNDEFINED)
            rc = mc_reduce_local(at(J, tmp, (size_t)idx * mine), own, mine, a);
    }
    if (rc == MPI_SUCCESS) rc = mc_waitall(J->nreq, J->req);
    mc_free(tmp);
    return rc;
}

/* (3a) receives of this rank: the lane's chunks from the other nodes, the other lanes' chunks
 * from their ranks on this node (in the order those forward them: node n, n+1, ...). */
static int ag_post_recvs(job_t *J, int *lane_req)
{
    const mc_hier_t *h = J->h;
    const mc_args_t *a = J->a;
    int N = h->N, n = h->n, rc = MPI_SUCCESS;
    char *rbuf = a->rbuf;
    J->nreq = 0;
    for (int s = 1; s < N && h->l < J->L && rc == MPI_SUCCESS; s++) {
        int i = (n + s) % N;
        lane_req[s] = -1;
        if (!clen(J, h->l, i)) continue;
        lane_req[s] = J->nreq;
        rc = mc_irecv_t(at(J, J->part, cstart(J, h->l, i)), clen(J, h->l, i), a, mc_hier_rank(h, i, h->l),
                        J->ctx, &J->req[J->nreq++]);
    }
    for (int j = 0; j < J->L && rc == MPI_SUCCESS; j++) {
        if (j == h->l) continue;
        for (int s = 0; s < N && rc == MPI_SUCCESS; s++) {
            int i = (n + s) % N;
            if (clen(J, j, i))
                rc = mc_irecv_t(at(J, rbuf, J->dsp[j] + cstart(J, j, i)), clen(J, j, i), a,
                                mc_hier_rank(h, n, j), J->ctx, &J->req[J->nreq++]);
        }
    }
    return rc;
}

/* (3b) lane rank: send the reduced chunk to the other nodes, then forward every chunk of the
 * part to the node's other ranks as it is complete (own first, then nodes n+1, n+2, ...). */
static int ag_send_forward(job_t *J, const int *lane_req)
{
    const mc_hier_t *h = J->h;
    const mc_args_t *a = J->a;
    int N = h->N, n = h->n, l = h->l, rc = MPI_SUCCESS;
    size_t mine = clen(J, l, n);
    for (int s = 1; s < N && mine && rc == MPI_SUCCESS; s++)
        rc = mc_isend_t(at(J, J->part, cstart(J, l, n)), mine, a, mc_hier_rank(h, (n + s) % N, l), J->ctx,
                        &J->req[J->nreq++]);
    for (int s = 0; s < N && rc == MPI_SUCCESS; s++) {
        int i = (n + s) % N;
        size_t len = clen(J, l, i);
        if (!len) continue;
        if (s > 0 && lane_req[s] >= 0) rc = mc_waitall(1, &J->req[lane_req[s]]);
        for (int j = 0; j < h->P && rc == MPI_SUCCESS; j++)
            if (j != l)
                rc = mc_isend_t(at(J, J->part, cstart(J, l, i)), len, a, mc_hier_rank(h, n, j), J->ctx,
                                &J->req[J->nreq++]);
    }
    return rc;
}

static int run(job_t *J, int in_place)
{
    const mc_hier_t *h = J->h;
    const mc_args_t *a = J->a;
    int rc = MPI_SUCCESS, lane = h->l < J->L;
    size_t nl = J->cnt[h->l];
    /* In place the part cannot take the node step's output while the input is still read. */
    void *blk = in_place && nl ? mc_tmp_elems(nl, a) : J->part;
    int *lane_req = mc_malloc(sizeof(int) * (size_t)h->N);
    if (!blk || !lane_req) rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) rc = node_rs(J, blk);
    if (blk != J->part) {
        if (rc == MPI_SUCCESS) mc_copy(J->part, blk, nl * a->extent);
        mc_free(blk);
    }
    if (rc == MPI_SUCCESS && lane && nl) rc = lane_rs(J);
    if (lane && nl) mc_stats_rounds(MC_ALLREDUCE, 2);
    if (rc == MPI_SUCCESS) rc = ag_post_recvs(J, lane_req);
    if (rc == MPI_SUCCESS && lane) rc = ag_send_forward(J, lane_req);
    if (rc == MPI_SUCCESS) rc = mc_waitall(J->nreq, J->req);
    mc_free(lane_req);
    return rc;
}

static int allreduce_mo_rsag(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc != MPI_SUCCESS || !a->count) return rc;
    job_t J = {.ctx = ctx, .h = h, .a = a, .L = h->Pmin};
    size_t nreq = 2 * (size_t)h->N + (size_t)h->N * ((size_t)J.L + (size_t)h->P);
    J.cnt = mc_malloc(sizeof(size_t) * 2 * (size_t)h->P);
    J.req = mc_malloc(sizeof(MPI_Request) * nreq);
    if (!J.cnt || !J.req) {
        rc = MPI_ERR_NO_MEM;
        goto cleanup;
    }
    J.dsp = J.cnt + h->P;
    for (int i = 0; i < h->P; i++) {
        J.cnt[i] = i < J.L ? mc_part_len(a->count, J.L, i) : 0;
        J.dsp[i] = i < J.L ? mc_part_start(a->count, J.L, i) : a->count;
    }
    J.part = mc_elem(a->rbuf, J.dsp[h->l], a);
    rc = run(&J, a->sbuf == a->rbuf);
cleanup:
    mc_free(J.cnt);
    mc_free(J.req);
    return rc;
}

/* Hockney, m = bytes of the vector, b = m/P bytes per lane (C_b), c = b/N per chunk:
 *   T = T_rs,MA(P, m)                                   node reduce-scatter (shm_ma model)
 *     + (N-1)*alpha + (N-1)*c*beta + (N-1)*c*gamma      lane reduce-scatter, direct
 *     + max((N-1)*(alpha + c*beta),                     lane allgather, direct
 *           N*(P-1)*(alpha + c*beta))                   overlapped node forwarding
 * (the paper: T_intra-reduce + T_inter-rscatter + max(T_intra-bcast, T_inter-allgather)). */
static double cost(const mc_hockney_t *hk, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    double c = in->m / P / N, t = (N - 1) * (hk->alpha + c * (hk->beta + hk->gamma));
    double ag = (N - 1) * (hk->alpha + c * hk->beta), fw = (double)N * (P - 1) * (mc_hier_intra(hk, in)->alpha + c * mc_hier_intra(hk, in)->beta);
    t += ag > fw ? ag : fw;
    const mc_alg_t *rs = mc_alg_find(MC_REDUCE_SCATTER, "shm_ma");
    mc_cost_in_t node = {.p = P, .m = in->m, .ms = in->m, .radix = in->radix, .sockets = 1};
    t += mc_hier_step(hk, in, rs, &node);
    return t;
}

const mc_alg_t mc_alg_allreduce_mo_rsag = {
    .coll = MC_ALLREDUCE,
    .name = "mo_rsag",
    .doc = "multi-object reduce-scatter + allgather (pip-mcoll): node MA reduce-scatter into Pmin parts, "
           "direct reduce-scatter and allgather of each part across nodes on all lanes at once, overlapped "
           "node forwarding; 2 inter-node rounds; >= 2 nodes, any P, commutative ops",
    .fn = allreduce_mo_rsag,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
