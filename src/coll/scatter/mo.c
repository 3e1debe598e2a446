/* Multi-object scatter (pip-mcoll §III-A1, general form of READING-NOTES). Nodes are numbered
 * virtually from the root's node (v = node - root's node mod N). The node range still needing
 * data, [lo, hi), is held by one rank of node lo (its "holder": the root on the root's node,
 * local rank 0 elsewhere), packed in virtual node order (each node's blocks in local-rank
 * order). Every round splits the range into k = min(P_lo + 1, hi - lo) contiguous, nearly
 * equal parts: part 0 stays, local rank l sends part l+1 (all its nodes' blocks, one message)
 * to the holder of that part's first node, which recurses on it. With uniform P this takes
 * ceil(log_{P+1} N) rounds and every byte crosses the network once.
 *
 * Holding the data: PiP lets all ranks of a node send from the holder's buffer; here the
 * holder hands each sending node-mate its part by an intra-node message first (a node-local
 * copy of each byte at most once per node), completed before the node step. The intra-node scatter of the
 * node's own blocks (shm engine, or binomial without a region) runs while the first round's sends are in
 * flight. Any P per node (k follows the holder node's size) and any root. */
#include "../../core/stats.h"
#include "../../p2p/p2p.h"
#include "../hier/hier.h"

typedef struct sched {
    const mc_ctx_t *ctx;
    const mc_hier_t *h;
    int rn; /* the root's node: virtual node 0 */
    int root;
    size_t *off; /* [N + 1] ranks on virtual nodes before v */
} sched_t;

static int real_of(const sched_t *s, int v)
{
    return (v + s->rn) % s->h->N;
}
static int size_of(const sched_t *s, int v)
{
    return s->ctx->node_size[real_of(s, v)];
}
static int holder(const sched_t *s, int v)
{
    return v ? mc_hier_rank(s->h, real_of(s, v), 0) : s->root;
}
static int parts(const sched_t *s, int lo, int hi)
{
    int k = size_of(s, lo) + 1;
    return k < hi - lo ? k : hi - lo;
}
/* First virtual node of part i of [lo, hi) split into k parts (i = k gives hi). */
static int part_at(int lo, int hi, int k, int i)
{
    return lo + (int)mc_part_start((size_t)(hi - lo), k, i);
}

/* Where virtual node v gets its range [v, *hi) from: the sending rank, -1 on the root's node. */
static void locate(const sched_t *s, int v, int *hi, int *from)
{
    int lo = 0, end = s->h->N;
    *from = -1;
    while (lo != v) {
        int k = parts(s, lo, end), i = 0;
        while (part_at(lo, end, k, i + 1) <= v) i++;
        int a = part_at(lo, end, k, i), b = part_at(lo, end, k, i + 1);
        if (i > 0) *from = mc_hier_rank(s->h, real_of(s, lo), i - 1), lo = a;
        end = b;
    }
    *hi = end;
}

/* Inter-node rounds of the whole schedule (the same on every rank). */
static int depth(const sched_t *s, int lo, int hi)
{
    int d = 0, r = 0;
    while (hi - lo > 1) {
        int k = parts(s, lo, hi);
        for (int i = 1; i < k; i++) {
            int sub = r + 1 + depth(s, part_at(lo, hi, k, i), part_at(lo, hi, k, i + 1));
            if (sub > d) d = sub;
        }
        hi = part_at(lo, hi, k, 1);
        r++;
    }
    return d > r ? d : r;
}

/* Byte offset of virtual node w in a range buffer that starts with virtual node v0. */
static size_t at(const sched_t *s, int v0, int w, size_t c)
{
    return (s->off[w] - s->off[v0]) * c;
}

/* The root's range buffer: sbuf itself when the communicator lists the ranks node by node
 * from the root's node on (virtual order is rank order), else a packed copy. */
static int root_blob(const sched_t *s, const mc_args_t *a, char **blob, char **owned)
{
    const mc_hier_t *h = s->h;
    size_t c = a->count;
    int same = 1;
    for (int v = 0; v < h->N && same; v++)
        for (int l = 0; l < size_of(s, v) && same; l++)
            same = (size_t)mc_hier_rank(h, real_of(s, v), l) == s->off[v] + (size_t)l;
    *blob = (char *)a->sbuf;
    if (same) return MPI_SUCCESS;
    if (!(*blob = *owned = mc_malloc(s->off[h->N] * c))) return MPI_ERR_NO_MEM;
    for (int v = 0; v < h->N; v++)
        for (int l = 0; l < size_of(s, v); l++)
            mc_copy(*owned + (s->off[v] + (size_t)l) * c,
                    (const char *)a->sbuf + (size_t)mc_hier_rank(h, real_of(s, v), l) * c, c);
    return MPI_SUCCESS;
}

/* Part i of the round of node v over [v, hi): its first node, bytes, and local rank i-1. */
typedef struct part {
    int b0, sender, dst;
    size_t off, len;
} part_t;

static part_t part_of(const sched_t *s, int v, int hi, int k, int i, size_t c)
{
    part_t p;
    p.b0 = part_at(v, hi, k, i);
    p.sender = mc_hier_rank(s->h, real_of(s, v), i - 1);
    p.dst = holder(s, p.b0);
    p.off = at(s, v, p.b0, c);
    p.len = at(s, p.b0, part_at(v, hi, k, i + 1), c);
    return p;
}

/* The holder's side of a round: its own part goes out, the others to their senders. The
 * hand-offs complete before returning: a node-mate blocked in its receive must not depend on
 * this rank's MPI progress while it spins in the shared-memory engine (MPICH's rendezvous
 * needs the sender to progress; Open MPI's single copy does not). */
static int holder_start(const sched_t *s, int v, int hi, size_t c, char *blob, MPI_Request *req, int *nreq)
{
    int k = parts(s, v, hi), me = s->ctx->rank, rc = MPI_SUCCESS;
    for (int i = 1; i < k && rc == MPI_SUCCESS; i++) {
        part_t p = part_of(s, v, hi, k, i, c);
        if (p.sender == me) rc = mc_isend(blob + p.off, p.len, p.dst, MC_SCATTER, s->ctx, &req[(*nreq)++]);
    }
    int first = *nreq;
    for (int i = 1; i < k && rc == MPI_SUCCESS; i++) {
        part_t p = part_of(s, v, hi, k, i, c);
        if (p.sender != me) rc = mc_isend(blob + p.off, p.len, p.sender, MC_SCATTER, s->ctx, &req[(*nreq)++]);
    }
    int rw = mc_waitall(*nreq - first, req + first);
    *nreq = first;
    return rc != MPI_SUCCESS ? rc : rw;
}

/* Starts one round of node v over [v, hi): the holder hands part i+1 to local rank i (or
 * sends it itself when that is the holder); that rank sends it to the part's first node. */
static int round_start(const sched_t *s, int v, int hi, size_t c, char *blob, char *tmp, MPI_Request *req,
                       int *nreq)
{
    int k = parts(s, v, hi), me = s->ctx->rank, rc = MPI_SUCCESS;
    if (me == holder(s, v)) return holder_start(s, v, hi, c, blob, req, nreq);
    if (s->h->l + 1 >= k) return MPI_SUCCESS;
    part_t p = part_of(s, v, hi, k, s->h->l + 1, c);
    rc = mc_recv(tmp, p.len, holder(s, v), MC_SCATTER, s->ctx);
    if (rc == MPI_SUCCESS) rc = mc_isend(tmp, p.len, p.dst, MC_SCATTER, s->ctx, &req[(*nreq)++]);
    return rc;
}

/* The node's own blocks (the first P*c bytes of the holder's buffer) to its ranks. */
static int node_scatter(const sched_t *s, const mc_args_t *a, int v, const char *blob)
{
    if (s->h->P == 1) {
        mc_copy(a->rbuf, blob, a->count);
        return MPI_SUCCESS;
    }
    mc_args_t ns = *a;
    ns.sbuf = blob; /* significant at the holder only */
    ns.root = s->ctx->local_of[holder(s, v)];
    return mc_hier_on_node(s->h->node, &ns, "shm_direct", "binomial");
}

/* Largest part this rank (not the holder) forwards over all rounds of node v, in bytes. */
static size_t forwarded(const sched_t *s, int v, int hi, size_t c)
{
    size_t most = 0;
    int l = s->h->l;
    for (int end = hi, k; end - v > 1; end = part_at(v, end, k, 1)) {
        k = parts(s, v, end);
        if (l + 1 < k) {
            size_t len = at(s, part_at(v, end, k, l + 1), part_at(v, end, k, l + 2), c);
            most = len > most ? len : most;
        }
    }
    return most;
}

/* This node's part: receive the range (holder), then split it round by round; the node
 * scatter overlaps the first round's sends. */
static int run(const sched_t *s, const mc_args_t *a, int v, int hi, int from, MPI_Request *req)
{
    const mc_ctx_t *ctx = s->ctx;
    size_t c = a->count;
    char *blob = NULL, *owned = NULL, *tmp = NULL;
    int rc = MPI_SUCCESS, first = 1, hr = holder(s, v);
    if (ctx->rank == hr && v == 0)
        rc = root_blob(s, a, &blob, &owned);
    else if (ctx->rank == hr) {
        if (!(blob = owned = mc_malloc(at(s, v, hi, c)))) return MPI_ERR_NO_MEM;
        rc = mc_recv(blob, at(s, v, hi, c), from, MC_SCATTER, ctx);
    } else if (forwarded(s, v, hi, c) && !(tmp = mc_malloc(forwarded(s, v, hi, c))))
        return MPI_ERR_NO_MEM;
    for (int end = hi; rc == MPI_SUCCESS && end - v > 1; end = part_at(v, end, parts(s, v, end), 1)) {
        int n = 0;
        rc = round_start(s, v, end, c, blob, tmp, req, &n);
        if (rc == MPI_SUCCESS && first) rc = node_scatter(s, a, v, blob);
        first = 0;
        int rw = mc_waitall(n, req);
        if (rc == MPI_SUCCESS) rc = rw;
    }
    if (rc == MPI_SUCCESS && first) rc = node_scatter(s, a, v, blob);
    mc_free(owned);
    mc_free(tmp);
    return rc;
}

static int scatter_mo(mc_ctx_t *ctx, const mc_args_t *a)
{
    const mc_hier_t *h;
    int rc = mc_hier_get(ctx, &h), hi, from;
    if (rc != MPI_SUCCESS || !a->count) return rc;
    sched_t s = {ctx, h, ctx->node_of[a->root], a->root, mc_malloc(sizeof(size_t) * (size_t)(h->N + 1))};
    MPI_Request *req = mc_malloc(sizeof(MPI_Request) * (size_t)(h->P + 1));
    if (!s.off || !req) {
        rc = MPI_ERR_NO_MEM;
        goto cleanup;
    }
    s.off[0] = 0;
    for (int v = 0; v < h->N; v++) s.off[v + 1] = s.off[v] + (size_t)size_of(&s, v);
    int v = (h->n - s.rn + h->N) % h->N;
    locate(&s, v, &hi, &from);
    mc_stats_rounds(MC_SCATTER, (uint64_t)depth(&s, 0, h->N));
    rc = run(&s, a, v, hi, from, req);
cleanup:
    mc_free(s.off);
    mc_free(req);
    return rc;
}

/* Rounds of the schedule for uniform P: ceil(log_k N), k = P + 1. */
static int rounds_k(int N, int k)
{
    int r = 0;
    for (long span = 1; span < N; span *= k) r++;
    return r;
}

/* Hockney, m = bytes per rank, uniform P, k = P + 1, R = ceil(log_k N) rounds. Critical path:
 * the chain of holders from the root's node to the last node served.
 *   inter   = R * alpha + (N - 1) * P * m * beta: in a round a node's lanes send their parts
 *             at once (beta = the node link's time per byte); the root's node link carries
 *             every other node's P*m bytes once over all rounds
 *   handoff = per round of the root's node over a range of n nodes (k' = min(k, n) parts of
 *             at most ceil(n/k') nodes): the holder's k' - 2 isends to node-mates
 *             (holder_start) are received concurrently, so one intra-node message of one part,
 *             alpha_r + ceil(n/k') * P * m * beta_r; the next round splits part 0. Over the
 *             rounds ~ R * alpha_r + (N - 1) * m * beta_r. (The holder's per-isend injection
 *             overhead is neglected; charging all (N-1)*P*m*(P-1)/P hand-off bytes in sequence,
 *             as before, is P times what the concurrent receivers copy.)
 *   intra   = T_shm_direct scatter(P, m) at the last node served: it scatters only after its
 *             data arrived (just the root's node overlaps its scatter with its first round)
 *   T = inter + handoff + intra. */
static double cost(const mc_hockney_t *hk, const mc_cost_in_t *in)
{
    int N, P;
    mc_hier_shape(in, &N, &P);
    int R = rounds_k(N, P + 1);
    double inter = R * hk->alpha + (double)(N - 1) * P * in->m * hk->beta, intra = 0, handoff = 0;
    if (P > 1) {
        const mc_alg_t *ns = mc_alg_find(MC_SCATTER, "shm_direct");
        mc_cost_in_t node = {.p = P, .m = in->m, .ms = in->m, .radix = in->radix, .sockets = 1};
        const mc_hockney_t *hr = mc_hier_intra(hk, in);
        intra = mc_hier_step(hk, in, ns, &node);
        for (long n = N; n > 1;) {
            long k = P + 1 < n ? P + 1 : n, part = (n + k - 1) / k;
            if (k > 2) handoff += hr->alpha + (double)part * P * in->m * hr->beta;
            n = part;
        }
    }
    return inter + handoff + intra;
}

const mc_alg_t mc_alg_scatter_mo = {
    .coll = MC_SCATTER,
    .name = "mo",
    .doc = "multi-object (pip-mcoll): the node range still needing data splits into P+1 parts per "
           "round, local rank l sends part l+1; node scatter overlapped; >= 2 nodes, any P and root",
    .fn = scatter_mo,
    .ok = mc_hier_ok,
    .cost = cost,
    .flags = 0,
};
