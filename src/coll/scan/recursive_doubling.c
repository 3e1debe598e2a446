/* Recursive-doubling prefix reduction. After step k every rank holds `total`, the reduction
 * of its aligned block of 2^(k+1) ranks (clipped to p), and `partial`, the reduction of the
 * ranks of that block up to itself (inclusive scan) or below itself (exclusive). At step k
 * rank r swaps totals with r xor 2^k; a lower partner's total is folded into both as the
 * left operand, a higher partner's into total as the right operand, so rank order holds
 * for any op. Non-power-of-two p needs no extra steps: when r xor 2^k >= p the rank skips
 * the step; its total then misses ranks >= its partner, but a total is only ever read by
 * higher partners, and a rank whose block is cut off has no higher partner in later steps. */
#include "prefix.h"

/* Hockney: ceil(log2 p) exchanges of m bytes. The worst rank (all low bits set) reduces
 * twice per step (partial and total), except the last step where total is no longer
 * needed; the exclusive scan's first fold into partial is a copy:
 * scan   T = L * (alpha + m * beta) + (2L - 1) * m * gamma,  L = ceil(log2 p)
 * exscan T = L * (alpha + m * beta) + max(2L - 2, 0) * m * gamma. */
double mc_prefix_rd_cost(const mc_hockney_t *h, const mc_cost_in_t *in, int exclusive)
{
    int L = mc_ceil_log2(in->p), red = 2 * L - 1 - exclusive;
    if (L == 0 || in->m <= 0) return 0;
    return L * (h->alpha + in->m * h->beta) + (red > 0 ? red : 0) * in->m * h->gamma;
}

typedef struct {
    char *total, *in;   /* own block's reduction; partner's total as it arrives */
    int have_partial;   /* exclusive: rbuf holds nothing until the first lower partner */
} rd_t;

/* Folds the partner's total (now in st->in) into partial (rbuf) and, if needed, total. */
static int rd_fold(rd_t *st, const mc_args_t *a, int lower, int need_total)
{
    int rc = MPI_SUCCESS;
    char *swap;
    if (!lower) {
        if (!need_total) return MPI_SUCCESS;
        /* total = total op in, computed into `in`, whose buffer then becomes total */
        rc = mc_reduce_local(st->total, st->in, a->count, a);
        swap = st->total, st->total = st->in, st->in = swap;
        return rc;
    }
    if (st->have_partial) rc = mc_reduce_local(st->in, a->rbuf, a->count, a);
    else mc_copy(a->rbuf, st->in, a->count * a->extent);
    st->have_partial = 1;
    if (rc == MPI_SUCCESS && need_total) rc = mc_reduce_local(st->in, st->total, a->count, a);
    return rc;
}

int mc_prefix_rd(mc_ctx_t *ctx, const mc_args_t *a, int exclusive)
{
    int r = ctx->rank, p = ctx->size, rc = MPI_SUCCESS;
    size_t bytes = a->count * a->extent;
    rd_t st = {NULL, NULL, !exclusive};
    char *t0, *t1;
    if (p == 1 || !a->count) {
        if (!exclusive) mc_copy(a->rbuf, a->sbuf, bytes);
        return MPI_SUCCESS;
    }
    t0 = st.total = mc_tmp_elems(a->count, a);
    t1 = st.in = mc_tmp_elems(a->count, a);
    if (!t0 || !t1) { rc = MPI_ERR_NO_MEM; goto cleanup; }
    /* total first: in place, rbuf is sbuf and an exclusive partial overwrites it */
    mc_copy(st.total, a->sbuf, bytes);
    if (!exclusive) mc_copy(a->rbuf, a->sbuf, bytes);
    for (int mask = 1; mask < p && rc == MPI_SUCCESS; mask <<= 1) {
        int partner = r ^ mask;
        if (partner >= p) continue;
        rc = mc_sendrecv_t(st.total, a->count, partner, st.in, a->count, partner, a, ctx);
        if (rc == MPI_SUCCESS) rc = rd_fold(&st, a, partner < r, (mask << 1) < p);
    }
cleanup:
    mc_free(t0);
    mc_free(t1);
    return rc;
}

static int scan_rd(mc_ctx_t *ctx, const mc_args_t *a) { return mc_prefix_rd(ctx, a, 0); }

static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_prefix_rd_cost(h, in, 0);
}

const mc_alg_t mc_alg_scan_recursive_doubling = {
    .coll = MC_SCAN, .name = "recursive_doubling",
    .doc = "log2(p) exchanges of block totals with r xor 2^k; prefix folded in rank order",
    .fn = scan_rd, .ok = NULL, .cost = cost, .flags = 0,
};
