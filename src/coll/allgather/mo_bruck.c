/* Multi-object Bruck allgather (pip-mcoll §III-A2, schedule as corrected in READING-NOTES).
 * Node blocks are B = P*c bytes (a node's ranks in local order). Every rank keeps the node's
 * working buffer W in rotated node order (slot i = node n + i mod N). Round j (S = k^j,
 * k = P + 1): local rank l sends the first cnt_l slots to local rank l of node n - (l+1)S and
 * receives cnt_l slots from node n + (l+1)S into slot (l+1)S, cnt_l = max(0, min(S,
 * N - (l+1)S)) (= S in every full round, the corrected remainder rule in the last one); then
 * an intra-node allgatherv shares what the P lanes received, so every local rank can send the
 * kS slots next round (PiP ranks read the local root's buffer instead). ceil(log_k N) rounds;
 * a final un-rotation writes rbuf in comm rank order (any rank order). The first node step is
 * an intra-node allgather of the ranks' blocks; the per-round shares add up to the broadcast
 * of the paper's last step. Uniform P only (the lanes pair local rank l with local rank l). */
#include "../../core/stats.h"
#include "../../p2p/p2p.h"
#include "../hier/hier.h"

/* Slots local rank l exchanges in the round of stride S. */
static long slots(int N, long S, int l)
{
    long r = (long)N - (long)(l + 1) * S;
    return r <= 0 ? 0 : (r < S ? r : S);
}

/* One round: the lane exchange, then the node share of the received slots. */
static int bruck_round(mc_ctx_t *ctx, const mc_hier_t *h, const mc_args_t *a, char *W, long S, size_t *cnt,
                       size_t *dsp)
{
    size_t B = (size_t)h->P * a->count;
    int rc = MPI_SUCCESS, N = h->N;
    for (int j = 0; j < h->P; j++) {
        cnt[j] = (size_t)slots(N, S, j) * B;
        dsp[j] = cnt[j] ? (size_t)(j + 1) * (size_t)S * B : 0;
    }
    if (cnt[h->l]) {
        long d = (long)(h->l + 1) * S % N;
        int dst = mc_hier_rank(h, (int)((h->n - d + N) % N), h->l);
        int src = mc_hier_rank(h, (int)((h->n + d) % N), h->l);
        rc = mc_sendrecv(W, cnt[h->l], dst, W + dsp[h->l], cnt[h->l], src, MC_ALLGATHER, ctx);
    }
    if (rc != MPI_SUCCESS || h->P == 1) return rc;
    mc_args_t ag = *a;
    ag.coll = MC_ALLGATHERV;
    ag.sbuf = W + dsp[h->l];
    ag.rbuf = W;
    ag.count = cnt[h->l];
    ag.counts = cnt;
    ag.displs = dsp;
    return mc_hier_on_node(h->node, &ag, "shm_direct", "ring");
}

/* W slot i holds node n + i: copy every block to its rank's place in rbuf. */
static void unrotate(const mc_hier_t *h, const char *W, char *rbuf, size_t c)
{
    for (int i = 0; i < h->N; i++)
        for (int j = 0; j < h->P; j++)
            mc_copy(rbuf + (size_t)mc_hier_rank(h, (h->n + i) % h->N, j) * c,
                    W + ((size_t)i * (size_t)h->P + (size_t)j) * c, c);
}

static int allgather_mo_bruck(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h), rounds = 0;
    if (rc != MPI_SUCCESS || !a->count) return rc;
    size_t c = a->count, B = (size_t)h->P * c;
    char *W = mc_malloc((size_t)h->N * B);
    size_t *cnt = mc_malloc(2 * sizeof(size_t) * (size_t)h->P);
    if (!W || !cnt) {
        rc = MPI_ERR_NO_MEM;
        goto cleanup;
    }
    mc_args_t ag = *a;
    ag.rbuf = W; /* slot 0: this node's blocks */
    if (h->P == 1)
        mc_copy(W, a->sbuf, c);
    else
        rc = mc_hier_on_node(h->node, &ag, "shm_direct", "ring");
    for (long S = 1; rc == MPI_SUCCESS && S < h->N; S *= h->P + 1, rounds++)
        rc = bruck_round(ctx, h, a, W, S, cnt, cnt + h->P);
    mc_stats_rounds(MC_ALLGATHER, (uint64_t)rounds);
    if (rc == MPI_SUCCESS) unrotate(h, W, a->rbuf, c);
cleanup:
    mc_free(W);
    mc_free(cnt);
    return rc;
}

static int ok(const mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_hier_ok(ctx, a) && ctx->uniform_ppn;
}

/* Hockney, m = bytes per rank, k = P + 1, rounds S = 1, k, k^2, ... while S < N:
 *   inter = sum over rounds (alpha + min(N - S, P*S) * P*m * beta): lane l sends cnt_l node
 *           blocks of P*m bytes, and the node's link carries all lanes' blocks, which add up
 *           to min(N - S, P*S) per round and N - 1 over all rounds: R*alpha + (N-1)*P*m*beta
 *   intra = T_shm_direct allgather(P, m) + per round the share of P*S node blocks
 *           (modelled as a shm_direct allgather of S*P*m bytes per rank)
 *   T = inter + intra (no overlap: every round sends what the previous share completed). */
static double cost(const mc_hockney_t *hk, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    const mc_alg_t *ag = mc_alg_find(MC_ALLGATHER, "shm_direct");
    mc_cost_in_t node = {.p = P, .m = in->m, .ms = in->m, .radix = in->radix, .sockets = 1};
    double t = mc_hier_step(hk, in, ag, &node);
    for (long S = 1; S < N; S *= P + 1) {
        double rem = (double)(N - S) < (double)P * S ? (double)(N - S) : (double)P * S;
        t += hk->alpha + rem * P * in->m * hk->beta; /* the node's link carries rem blocks */
        node.m = node.ms = rem * in->m; /* a lane's mean share: S*P*m in full rounds */
        t += mc_hier_step(hk, in, ag, &node);
    }
    return t;
}

const mc_alg_t mc_alg_allgather_mo_bruck = {
    .coll = MC_ALLGATHER,
    .name = "mo_bruck",
    .doc = "multi-object Bruck (pip-mcoll): base P+1 across nodes, all local ranks exchange node "
           "blocks at once, ceil(log_{P+1} N) rounds; >= 2 nodes, uniform P",
    .fn = allgather_mo_bruck,
    .ok = ok,
    .cost = cost,
    .flags = 0,
};
