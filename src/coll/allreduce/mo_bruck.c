/* Multi-object Bruck allreduce (pip-mcoll §III-A3; remainder rule re-derived, READING-NOTES).
 *
 * k = L + 1 where L = Pmin lanes (local rank l < Pmin on every node pairs with local rank l on
 * the other nodes). (1) An intra-node allreduce leaves the node partial R_n at every local
 * rank. (2) Every rank keeps its node's window W_j(n) = R_n op ... op R_{n+k^j-1} (node
 * indices mod N). Full round j (S = k^j, kS <= N): lane l sends W_j(n) to node n - (l+1)S and
 * receives W_j(n + (l+1)S); an intra-node allgatherv shares the L received windows and every
 * rank folds them into W_{j+1}(n) = [n, n + kS): the windows are disjoint, nothing wraps.
 * (3) After F full rounds S = k^F <= N < kS. If S < N the node still needs the r = N - S
 * nodes [n+S, n+N), r < L*S: q = r / S whole windows W_F at offsets (i+1)S, then the rest
 * t = r mod S = sum_j d_j k^j (base-k digits, d_j <= L) tiled from the highest digit down by
 * prefix windows PX_j = W_j(x) op ... op W_j(x + (d_j-1)k^j), which node x computed in round j
 * (W_j plus its first d_j - 1 received windows). Piece i of that list (same on every node) goes
 * over lane i mod L, all pieces in one round; a final allgatherv + fold combines them. So every
 * node's result has exactly one contribution of every node, in F + [S < N] = ceil(log_k N)
 * inter-node rounds, and every local rank computes it (no final broadcast).
 *
 * Operands of different nodes are associated differently, so only operations whose result does
 * not depend on association and order are accepted (integer SUM/PROD, MIN/MAX, logical and
 * bit ops, MINLOC/MAXLOC): a float SUM would differ in the last bits between nodes. Any P per
 * node (extra local ranks >= Pmin only take part in the node steps). */
#include "../../core/stats.h"
#include "../../p2p/p2p.h"
#include "../hier/hier.h"

/* ---------------------------------------------------------------- schedule */
#define MAX_LEVELS 64

/* The schedule, identical on every node: F full rounds, then `npiece` pieces. */
typedef struct plan {
    int L, k, F;
    long S;                /* k^F */
    int digit[MAX_LEVELS]; /* base-k digits of t = (N - S) mod S, levels 0..F-1 */
    int whole;             /* whole windows W_F among them: (N - S) / S */
    int npiece;            /* pieces of the last round (0: N is a power of k) */
} plan_t;

static void make_plan(plan_t *p, int N, int L)
{
    p->L = L, p->k = L + 1, p->F = 0, p->S = 1, p->npiece = 0;
    while (p->S * p->k <= N) p->S *= p->k, p->F++;
    long r = N - p->S, t = r % p->S;
    for (int j = 0; j < p->F; j++, t /= p->k) {
        p->digit[j] = (int)(t % p->k);
        p->npiece += p->digit[j] > 0;
    }
    p->whole = (int)(r / p->S);
    p->npiece += p->whole;
}

static int rounds_of(const plan_t *p)
{
    return p->F + (p->npiece > 0);
}

/* Piece i of the last round: its node offset and level (level F: a whole window W_F). */
static void piece(const plan_t *p, int i, long *off, int *level)
{
    long o = (long)(p->whole + 1) * p->S, kj = p->S;
    *off = (long)(i + 1) * p->S, *level = p->F;
    if (i < p->whole) return;
    for (int j = p->F - 1, n = p->whole; j >= 0; j--) {
        kj /= p->k;
        if (!p->digit[j]) continue;
        if (n++ == i) {
            *off = o, *level = j;
            return;
        }
        o += (long)p->digit[j] * kj;
    }
}

/* ---------------------------------------------------------------- state */
typedef struct state {
    const mc_hier_t *h;
    const mc_args_t *a;
    mc_ctx_t *ctx;
    plan_t p;
    size_t nb;            /* bytes of one vector */
    char *W;              /* current window */
    char *G;              /* [L] windows received by the lanes, after the node share */
    char *PX[MAX_LEVELS]; /* prefix window of each level with a digit (level F: W) */
    size_t *cnt, *dsp;    /* allgatherv layout on the node (bytes) */
} state_t;

/* Shares the lanes' received vectors (lane l's at G + l*nb) with every local rank; `have`
 * says whether lane l received one. Ranks >= L contribute nothing. */
static int node_share(state_t *s, const int *have)
{
    const mc_hier_t *h = s->h;
    if (h->P == 1) return MPI_SUCCESS;
    for (int i = 0; i < h->P; i++) {
        int on = i < s->p.L && have[i];
        s->cnt[i] = on ? s->nb : 0;
        s->dsp[i] = on ? (size_t)i * s->nb : 0;
    }
    mc_args_t ag = {.coll = MC_ALLGATHERV,
                    .sbuf = s->G + s->dsp[h->l],
                    .rbuf = s->G,
                    .count = s->cnt[h->l],
                    .dtype = MPI_BYTE,
                    .extent = 1,
                    .op = MPI_OP_NULL,
                    .commute = 1,
                    .counts = s->cnt,
                    .displs = s->dsp,
                    .bytes = s->nb};
    return mc_hier_on_node(h->node, &ag, "shm_direct", "ring");
}

static int keep_prefix(state_t *s, int j)
{
    s->PX[j] = mc_malloc(s->nb);
    if (!s->PX[j]) return MPI_ERR_NO_MEM;
    mc_copy(s->PX[j], s->W, s->nb);
    return MPI_SUCCESS;
}

/* Full round j: exchange W over every lane, share, fold in lane order (commutative ops). */
static int full_round(state_t *s, int j, long S)
{
    const mc_hier_t *h = s->h;
    int N = h->N, rc = MPI_SUCCESS, have[MC_TREE_MAX];
    if (h->l < s->p.L) {
        long d = (long)(h->l + 1) * S % N;
        int dst = mc_hier_rank(h, (int)((h->n - d + N) % N), h->l);
        int src = mc_hier_rank(h, (int)((h->n + d) % N), h->l);
        rc = mc_sendrecv_t(s->W, s->a->count, dst, s->G + (size_t)h->l * s->nb, s->a->count, src, s->a,
                           s->ctx);
    }
    for (int i = 0; i < s->p.L; i++) have[i] = 1;
    if (rc == MPI_SUCCESS) rc = node_share(s, have);
    int d = j < s->p.F ? s->p.digit[j] : 0;
    if (rc == MPI_SUCCESS && d == 1) rc = keep_prefix(s, j);
    for (int i = 0; rc == MPI_SUCCESS && i < s->p.L; i++) {
        rc = mc_reduce_local(s->G + (size_t)i * s->nb, s->W, s->a->count, s->a);
        if (rc == MPI_SUCCESS && i + 2 == d) rc = keep_prefix(s, j);
    }
    return rc;
}

/* Last round: lane l sends and receives pieces l, l + L, ...; each lane folds what it got. */
static int last_round(state_t *s)
{
    const mc_hier_t *h = s->h;
    const mc_args_t *a = s->a;
    int N = h->N, L = s->p.L, rc = MPI_SUCCESS, have[MC_TREE_MAX];
    char *mine = h->l < L ? s->G + (size_t)h->l * s->nb : NULL, *tmp = NULL;
    for (int i = 0; i < L; i++) have[i] = i < s->p.npiece;
    if (h->l < L && s->p.npiece > L && !(tmp = mc_malloc(s->nb))) return MPI_ERR_NO_MEM;
    for (int i = h->l; h->l < L && i < s->p.npiece && rc == MPI_SUCCESS; i += L) {
        long off;
        int lev;
        piece(&s->p, i, &off, &lev);
        int dst = mc_hier_rank(h, (int)((h->n - off % N + N) % N), h->l);
        int src = mc_hier_rank(h, (int)((h->n + off) % N), h->l);
        const char *out = lev == s->p.F ? s->W : s->PX[lev];
        char *in = i == h->l ? mine : tmp;
        rc = mc_sendrecv_t(out, a->count, dst, in, a->count, src, a, s->ctx);
        if (rc == MPI_SUCCESS && in == tmp) rc = mc_reduce_local(tmp, mine, a->count, a);
    }
    mc_free(tmp);
    if (rc == MPI_SUCCESS) rc = node_share(s, have);
    for (int i = 0; rc == MPI_SUCCESS && i < L && have[i]; i++)
        rc = mc_reduce_local(s->G + (size_t)i * s->nb, s->W, a->count, a);
    return rc;
}

static int run_bruck(state_t *s)
{
    int rc = MPI_SUCCESS;
    long S = 1;
    for (int j = 0; j < s->p.F && rc == MPI_SUCCESS; j++, S *= s->p.k) rc = full_round(s, j, S);
    if (rc == MPI_SUCCESS && s->p.npiece) rc = last_round(s);
    if (s->h->l < s->p.L) mc_stats_rounds(MC_ALLREDUCE, (uint64_t)rounds_of(&s->p));
    return rc;
}

static int allreduce_mo_bruck(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h);
    if (rc != MPI_SUCCESS || !a->count) return rc;
    state_t s = {.h = h, .a = a, .ctx = ctx, .nb = a->count * a->extent};
    make_plan(&s.p, h->N, h->Pmin);
    s.W = a->rbuf;
    s.G = mc_malloc((size_t)s.p.L * s.nb);
    s.cnt = mc_malloc(2 * sizeof(size_t) * (size_t)h->P);
    if (!s.G || !s.cnt) {
        rc = MPI_ERR_NO_MEM;
        goto cleanup;
    }
    s.dsp = s.cnt + h->P;
    if (h->P == 1) {
        mc_copy(s.W, a->sbuf, s.nb);
    } else {
        mc_args_t ar = *a;
        ar.rbuf = s.W;
        rc = mc_hier_on_node(h->node, &ar, "shm_dpml", "recursive_doubling");
    }
    if (rc == MPI_SUCCESS) rc = run_bruck(&s);
cleanup:
    for (int j = 0; j < MAX_LEVELS; j++) mc_free(s.PX[j]);
    mc_free(s.G);
    mc_free(s.cnt);
    return rc;
}

/* Operations whose result is bitwise independent of association and order. */
static int exact_op(MPI_Op op, MPI_Datatype t)
{
    static const MPI_Datatype ints[] = {
        MPI_INT,         MPI_LONG,          MPI_SHORT,         MPI_UNSIGNED_SHORT,
        MPI_UNSIGNED,    MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG,
        MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_INT8_T,        MPI_INT16_T,
        MPI_INT32_T,     MPI_INT64_T,       MPI_UINT8_T,       MPI_UINT16_T,
        MPI_UINT32_T,    MPI_UINT64_T,      MPI_AINT,          MPI_OFFSET};
    if (op == MPI_MAX || op == MPI_MIN || op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR ||
        op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR || op == MPI_MAXLOC || op == MPI_MINLOC)
        return 1;
    if (op != MPI_SUM && op != MPI_PROD) return 0;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (t == ints[i]) return 1;
    return 0;
}

/* >= 2 nodes, an order-independent operation, and lanes that fit the fixed arrays. */
static int ok(const mc_ctx_t *ctx, const mc_args_t *a)
{
    if (!mc_hier_ok(ctx, a) || !exact_op(a->op, a->dtype)) return 0;
    int pmin = ctx->size;
    for (int n = 0; n < ctx->nnodes; n++)
        if (ctx->node_size[n] < pmin) pmin = ctx->node_size[n];
    return pmin <= MC_TREE_MAX;
}

/* Hockney, m = bytes of the vector, R = ceil(log_{P+1} N) rounds, Q pieces in the last round:
 *   T = T_ar,node(P, m)                                  intra-node allreduce (shm_dpml)
 *     + F * (alpha + m*beta)                              full rounds: one message per lane
 *     + [Q > 0] * ceil(Q/P) * (alpha + m*beta + m*gamma)  last round: a lane's pieces in turn
 *     + R * (T_agv,node(P, m) + P*m*gamma)                node share + fold of the P windows
 * (the paper's T_inter = alpha*R + C_b*P*R*beta + C_b*R*gamma counts a node's P messages on
 * one link; here beta is per rank, the lanes sending at once). */
static double cost(const mc_hockney_t *hk, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    plan_t p;
    make_plan(&p, N, P);
    double m = in->m, t = p.F * (hk->alpha + m * hk->beta);
    if (p.npiece) t += (double)((p.npiece + P - 1) / P) * (hk->alpha + m * (hk->beta + hk->gamma));
    const mc_alg_t *ar = mc_alg_find(MC_ALLREDUCE, "shm_dpml"),
                   *ag = mc_alg_find(MC_ALLGATHERV, "shm_direct");
    mc_cost_in_t node = {.p = P, .m = m, .ms = m, .radix = in->radix, .sockets = 1};
    t += mc_hier_step(hk, in, ar, &node);
    double share = mc_hier_step(hk, in, ag, &node);
    return t + rounds_of(&p) * (share + P * m * hk->gamma);
}

const mc_alg_t mc_alg_allreduce_mo_bruck = {
    .coll = MC_ALLREDUCE,
    .name = "mo_bruck",
    .doc = "multi-object Bruck (pip-mcoll): node allreduce, base Pmin+1 window exchange across nodes "
           "on all lanes at once, ceil(log_{Pmin+1} N) rounds, each node counted once; >= 2 nodes, any P, "
           "order-independent ops only (integer SUM/PROD, MIN/MAX, logical/bit, MINLOC/MAXLOC)",
    .fn = allreduce_mo_bruck,
    .ok = ok,
    .cost = cost,
    .flags = MC_ALG_COMMUTATIVE_ONLY,
};
