/* Counter rows of the multi-object scatter and allgathers (src/coll/scatter/mo.c,
 * src/coll/allgather/mo_bruck.c, src/coll/allgather/mo_ring.c). */
#include "hier_test.h"

static const hc_expect_t none = {0, 0, 0};

/* ---------------------------------------------------------------- scatter mo */
/* Virtual node v = node - root's node (mod N). A range [lo, hi) held by node lo splits into
 * k = min(P_lo + 1, hi - lo) balanced parts; part i >= 1 (its nodes' ranks' blocks) leaves the
 * node once, from local rank i - 1; part 0 stays and splits again next round. */
typedef struct {
    const hc_case_t *c;
    int rn;
} sc_t;

static int sc_size(const sc_t *s, int v)
{
    return s->c->node_size[(v + s->rn) % s->c->N];
}
static int sc_k(const sc_t *s, int lo, int hi)
{
    int k = sc_size(s, lo) + 1;
    return k < hi - lo ? k : hi - lo;
}
static int sc_at(int lo, int hi, int k, int i)
{
    int L = hi - lo, q = L / k, r = L % k;
    return lo + q * i + (i < r ? i : r);
}

/* Rounds until every node of [lo, hi) (held by lo) has its data. */
static int sc_depth(const sc_t *s, int lo, int hi)
{
    int d = 0, r = 0;
    for (; hi - lo > 1; r++) {
        int k = sc_k(s, lo, hi);
        for (int i = 1; i < k; i++) {
            int sub = r + 1 + sc_depth(s, sc_at(lo, hi, k, i), sc_at(lo, hi, k, i + 1));
            d = sub > d ? sub : d;
        }
        hi = sc_at(lo, hi, k, 1);
    }
    return d > r ? d : r;
}

/* The range node v receives: walk the splits from [0, N) down to the part starting at v. */
static int sc_range_end(const sc_t *s, int v)
{
    int lo = 0, hi = s->c->N;
    while (lo != v) {
        int k = sc_k(s, lo, hi), i = 0;
        while (sc_at(lo, hi, k, i + 1) <= v) i++;
        int a = sc_at(lo, hi, k, i), b = sc_at(lo, hi, k, i + 1);
        lo = a, hi = b; /* part 0 starts at lo: the holder keeps it */
    }
    return hi;
}

/* Rounds: ceil(log_{P+1} N) for uniform P (the schedule's depth otherwise), on every rank.
 * Local rank l sends part l+1 of every round of its node's range: one message of that part's
 * ranks' blocks (the holder's hand-offs to node-mates stay on the node). */
static void expect_scatter_mo(const hc_case_t *c, hc_expect_t *e)
{
    sc_t s = {c, c->node_of[c->root]};
    int N = c->N, v = (c->n - s.rn + N) % N;
    *e = none;
    e->rounds = (uint64_t)(c->Pmin == c->Pmax ? hc_ceil_log(c->P + 1, N) : sc_depth(&s, 0, N));
    for (int hi = sc_range_end(&s, v); hi - v > 1;) {
        int k = sc_k(&s, v, hi);
        if (c->l + 1 < k) {
            int b0 = sc_at(v, hi, k, c->l + 1), b1 = sc_at(v, hi, k, c->l + 2);
            size_t ranks = 0;
            for (int w = b0; w < b1; w++) ranks += (size_t)sc_size(&s, w);
            e->msgs++;
            e->bytes += ranks * c->count * c->extent;
        }
        hi = sc_at(v, hi, k, 1);
    }
}

/* ---------------------------------------------------------------- allgather mo_bruck */
/* Uniform P, k = P + 1, strides S = 1, k, k^2, ... < N: local rank l sends
 * cnt = max(0, min(S, N - (l+1)S)) node blocks of P*count elements (one message when cnt > 0);
 * ceil(log_k N) rounds on every rank. */
static void expect_allgather_mo_bruck(const hc_case_t *c, hc_expect_t *e)
{
    *e = none;
    e->rounds = (uint64_t)hc_ceil_log(c->P + 1, c->N);
    for (long S = 1; S < c->N; S *= c->P + 1) {
        long cnt = (long)c->N - (long)(c->l + 1) * S;
        cnt = cnt < 0 ? 0 : cnt < S ? cnt : S;
        e->msgs += cnt > 0;
        e->bytes += (uint64_t)cnt * (uint64_t)c->P * c->count * c->extent;
    }
}

/* ---------------------------------------------------------------- allgather mo_ring */
/* Lane l < Pmin: N - 1 steps, step s sends part l (balanced byte split into Pmin parts) of
 * node n - s's block (node_size * count elements). For uniform P that is (N-1) * count
 * elements; the node sends (N-1) * P * count. Local ranks >= Pmin: nothing. */
static void expect_allgather_mo_ring(const hc_case_t *c, hc_expect_t *e)
{
    *e = none;
    if (c->l >= c->Pmin) return;
    e->msgs = e->rounds = (uint64_t)(c->N - 1);
    for (int s = 0; s < c->N - 1; s++) {
        int m = ((c->n - s) % c->N + c->N) % c->N;
        e->bytes += hc_part_len((size_t)c->node_size[m] * c->count * c->extent, c->Pmin, c->l);
    }
}

static const hc_row_t mo_gather_rows[] = {
    {"scatter", "mo", hc_run_scatter, expect_scatter_mo, HC_ANY_ROOT},
    {"allgather", "mo_bruck", hc_run_allgather, expect_allgather_mo_bruck, 0},
    {"allgather", "mo_ring", hc_run_allgather, expect_allgather_mo_ring, 0},
};
HC_REGISTER(mo_gather_rows)
