/* Counter rows of the multi-object allreduces (src/coll/allreduce/mo_rsag.c, mo_bruck.c).
 * Lanes: L = Pmin; local ranks >= L send nothing across nodes. hc_run_allreduce is an MPI_INT
 * SUM (an order-independent op, so mo_bruck applies). */
#include "hier_test.h"

static const hc_expect_t none = {0, 0, 0};

/* mo_rsag, lane rank (n, l): part l has C_b = nl = part(count, L, l) elements, chunk i of it
 * len(i) = part(nl, N, i). Reduce-scatter: one message per non-empty foreign chunk,
 * sum_{i != n} len(i) elements (= C_b(N-1)/N when N divides C_b). Allgather: the own reduced
 * chunk to the N-1 other nodes, (N-1)*len(n) elements. Rounds: 2 (when nl > 0). */
static void expect_mo_rsag(const hc_case_t *c, hc_expect_t *e)
{
    *e = none;
    if (c->l >= c->Pmin) return;
    size_t nl = hc_part_len(c->count, c->Pmin, c->l), rs = 0, own = hc_part_len(nl, c->N, c->n);
    if (!nl) return;
    for (int i = 0; i < c->N; i++) {
        size_t len = hc_part_len(nl, c->N, i);
        if (i != c->n && len) rs += len, e->msgs++;
    }
    if (nl % (size_t)c->N == 0) rs = nl * (size_t)(c->N - 1) / (size_t)c->N; /* the C_b(N-1)/N */
    if (own) e->msgs += (uint64_t)(c->N - 1);
    e->bytes = (rs + (size_t)(c->N - 1) * own) * c->extent;
    e->rounds = 2;
}

/* mo_bruck: k = L + 1; F full rounds while k^(F+1) <= N (one whole vector per lane each);
 * then, when S = k^F < N, Q = (N-S)/S whole windows plus one piece per non-zero base-k digit
 * of (N-S) mod S, piece i on lane i mod L. Rounds: F + [Q > 0] = ceil(log_k N). */
static void expect_mo_bruck(const hc_case_t *c, hc_expect_t *e)
{
    *e = none;
    int L = c->Pmin, k = L + 1, F = 0, Q;
    if (c->l >= L) return;
    long S = 1;
    while (S * k <= c->N) S *= k, F++;
    long r = c->N - S, t = r % S;
    Q = (int)(r / S);
    for (; t; t /= k) Q += t % k != 0;
    e->msgs = (uint64_t)F;
    for (int i = c->l; i < Q; i += L) e->msgs++;
    e->bytes = e->msgs * c->count * c->extent;
    e->rounds = (uint64_t)hc_ceil_log(k, c->N); /* = F + [Q > 0], the ceil(log_{P+1} N) */
}

static const hc_row_t mo_allreduce_rows[] = {
    {"allreduce", "mo_rsag", hc_run_allreduce, expect_mo_rsag, 0},
    {"allreduce", "mo_bruck", hc_run_allreduce, expect_mo_bruck, 0},
};
HC_REGISTER(mo_allreduce_rows)
