/* Counter rows of the hierarchical compositions (src/coll/{allreduce/hier_ma_ring,
 * bcast/hier, reduce/hier, barrier/hier}.c). */
#include "hier_test.h"
#include <stdlib.h>

static const hc_expect_t none = {0, 0, 0};

/* Representative of this rank's node for a rooted call: the root's local rank, or the leader. */
static int rep_here(const hc_case_t *c)
{
    int r = hc_rank_of(c, c->n, c->local_of[c->root]);
    return r >= 0 ? r : hc_rank_of(c, c->n, 0);
}

/* Lane l < Pmin rings its block nl = part(count, Pmin, l) over the N nodes (lane rank = node):
 * 2(N-1) rounds; the reduce-scatter sends every sub-block but its own (r), one message per
 * non-empty one, the allgather every sub-block but r+1's, one message per step. For
 * count divisible by Pmin*N that is 2(N-1)/N * nl elements. Local ranks >= Pmin: nothing. */
static void expect_allreduce_hier_ma_ring(const hc_case_t *c, hc_expect_t *e)
{
    size_t nl = c->l < c->Pmin ? hc_part_len(c->count, c->Pmin, c->l) : 0, sent = 0;
    int N = c->N, r = c->n;
    *e = none;
    if (!nl) return;
    e->msgs = (uint64_t)(N - 1);
    for (int i = 0; i < N; i++) {
        size_t b = hc_part_len(nl, N, i);
        if (i != r) sent += b, e->msgs += b > 0;
        if (i != (r + 1) % N) sent += b;
    }
    e->bytes = sent * c->extent;
    e->rounds = 2 * (uint64_t)(N - 1);
}

/* Segments of the pipelined paths of bcast and reduce hier: the segment size from `var`
 * (MCOLL_<COLL>_SEGSIZE: digits with an optional k/m suffix; unset or 0: 256 KiB) in whole
 * elements (at least one); one segment when the count * extent bytes fit one segment. */
static uint64_t segments(const char *var, const hc_case_t *c)
{
    const char *e = getenv(var);
    char *end = NULL;
    uint64_t seg = e ? strtoull(e, &end, 10) : 0, m = c->count * c->extent;
    if (seg && end && (*end == 'k' || *end == 'K')) seg <<= 10;
    if (seg && end && (*end == 'm' || *end == 'M')) seg <<= 20;
    if (!seg) seg = 256 * 1024;
    if (m <= seg) return 1;
    uint64_t per = seg / c->extent ? seg / c->extent : 1;
    return (c->count + per - 1) / per;
}

/* Binomial tree over the nodes among the representatives: every segment of the message to
 * each child (one message per segment and child, m bytes per child in all);
 * ceil(log2 N) + segments - 1 pipeline rounds. */
static void expect_bcast_hier(const hc_case_t *c, hc_expect_t *e)
{
    *e = none;
    if (c->rank != rep_here(c)) return;
    int k = hc_binomial_children(c->n, c->N, c->node_of[c->root]);
    uint64_t m = c->count * c->extent, nseg = segments("MCOLL_BCAST_SEGSIZE", c);
    e->msgs = (uint64_t)k * nseg;
    e->bytes = (uint64_t)k * m;
    e->rounds = (uint64_t)hc_ceil_log2(c->N) + nseg - 1;
}

/* Every representative but the root's sends its node's partial up the binomial tree, one
 * message per segment (the whole vector in all); ceil(log2 N) + segments - 1 pipeline rounds. */
static void expect_reduce_hier(const hc_case_t *c, hc_expect_t *e)
{
    *e = none;
    if (c->rank != rep_here(c)) return;
    int up = hc_binomial_has_parent(c->n, c->node_of[c->root]);
    uint64_t nseg = segments("MCOLL_REDUCE_SEGSIZE", c);
    e->msgs = (uint64_t)up * nseg;
    e->bytes = (uint64_t)up * c->count * c->extent;
    e->rounds = (uint64_t)hc_ceil_log2(c->N) + nseg - 1;
}

/* Node leaders: one zero-byte message per dissemination round, ceil(log2 N) rounds. */
static void expect_barrier_hier(const hc_case_t *c, hc_expect_t *e)
{
    *e = none;
    if (c->l != 0) return;
    e->msgs = e->rounds = (uint64_t)hc_ceil_log2(c->N);
}

static const hc_row_t compose_rows[] = {
    {"allreduce", "hier_ma_ring", hc_run_allreduce, expect_allreduce_hier_ma_ring, 0},
    {"bcast", "hier", hc_run_bcast, expect_bcast_hier, HC_ANY_ROOT},
    {"reduce", "hier", hc_run_reduce, expect_reduce_hier, HC_ANY_ROOT},
    {"barrier", "hier", hc_run_barrier, expect_barrier_hier, 0},
};
HC_REGISTER(compose_rows)
