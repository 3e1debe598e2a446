/* Counter row of the hierarchical gather (src/coll/gather/hier.c). */
#include "hier_test.h"

/* Representative of this rank's node: the root's local rank, or the leader. */
static int rep_here(const hc_case_t *c)
{
    int r = hc_rank_of(c, c->n, c->local_of[c->root]);
    return r >= 0 ? r : hc_rank_of(c, c->n, 0);
}

/* Binomial tree over node vranks v = node - root's node (mod N): every representative but
 * the root's sends its subtree's blocks, the nodes [v, v + span), span = lowest set bit of v
 * capped at N - v, in one message: sum of their sizes x count elements. ceil(log2 N) rounds
 * at every representative; the other ranks only gather inside their node. */
static void expect_gather_hier(const hc_case_t *c, hc_expect_t *e)
{
    *e = (hc_expect_t){0, 0, 0};
    if (c->rank != rep_here(c)) return;
    int N = c->N, rn = c->node_of[c->root], v = (c->n - rn + N) % N;
    e->rounds = (uint64_t)hc_ceil_log2(N);
    if (!v) return;
    int low = v & -v, span = low < N - v ? low : N - v;
    uint64_t ranks = 0;
    for (int i = v; i < v + span; i++) ranks += (uint64_t)c->node_size[(i + rn) % N];
    e->msgs = 1;
    e->bytes = ranks * c->count * c->extent;
}

static const hc_row_t gather_rows[] = {
    {"gather", "hier", hc_run_gather, expect_gather_hier, HC_ANY_ROOT},
};
HC_REGISTER(gather_rows)
