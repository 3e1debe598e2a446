/* Recursive-halving reduce-scatter for any counts, rank order kept.
 *
 * A non-power-of-two p is folded onto q virtual ranks (pairs 2i, 2i+1 first combine their
 * whole vectors); virtual rank v is responsible for "virtual block" v, the blocks of the
 * real ranks it covers (adjacent in the input). The halving pairs partners at distance
 * 1, 2, 4, ... so partials always cover contiguous rank ranges; that schedule leaves virtual
 * rank v with slot bitrev(v), so the work buffer stores virtual block bitrev(s) in slot s and
 * halves stay contiguous. The permutation costs nothing: the input has to be copied into a
 * work buffer anyway. At the end each odd rank of a pair hands the even rank its block. */
#include "common.h"

typedef struct rs_layout {
    size_t *vc, *vd;    /* [q] virtual block v = input elements [vd[v], vd[v] + vc[v]) */
    size_t *sd;         /* [q+1] work-buffer slot displacements, slot s = virtual block bitrev(s) */
} rs_layout_t;

static int layout_make(rs_layout_t *l, const mc_fold_t *f, const size_t *counts, const size_t *displs)
{
    l->vc = mc_malloc(sizeof(size_t) * (3 * (size_t)f->q + 1));
    if (!l->vc) return MPI_ERR_NO_MEM;
    l->vd = l->vc + f->q;
    l->sd = l->vd + f->q;
    for (int v = 0; v < f->q; v++) {
        int r0 = mc_fold_first(f, v);
        l->vd[v] = displs[r0];
        l->vc[v] = counts[r0] + (v < f->rem ? counts[r0 + 1] : 0);
    }
    l->sd[0] = 0;
    for (int s = 0; s < f->q; s++) l->sd[s + 1] = l->sd[s] + l->vc[mc_rs_bitrev(s, f->k)];
    return MPI_SUCCESS;
}

/* Input into slot order in w; the odd rank of a pair first receives its partner's raw input
 * into scratch and reduces it in (partner's data is the left operand). */
static int load_input(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, const rs_layout_t *l,
                      void *w, void *scratch, size_t total)
{
    for (int v = 0; v < f->q; v++)
        mc_rs_copy(mc_elem(w, l->sd[mc_rs_bitrev(v, f->k)], a), mc_elem(a->sbuf, l->vd[v], a), l->vc[v], a);
    if (ctx->rank >= 2 * f->rem) return MPI_SUCCESS;
    int rc = mc_recv_t(scratch, total, a, ctx->rank - 1, ctx);
    for (int v = 0; rc == MPI_SUCCESS && v < f->q; v++)
        rc = mc_reduce_local(mc_elem(scratch, l->vd[v], a), mc_elem(w, l->sd[mc_rs_bitrev(v, f->k)], a),
                             l->vc[v], a);
    return rc;
}

/* The virtual block of this rank sits in res: pass the even partner its part, keep ours. */
static int store_result(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, const size_t *counts,
                        const char *res)
{
    int r = ctx->rank;
    if (r < 2 * f->rem) {
        int rc = mc_send_t(res, counts[r - 1], a, r - 1, ctx);
        if (rc != MPI_SUCCESS) return rc;
        res = mc_elem(res, counts[r - 1], a);
    }
    mc_rs_copy(a->rbuf, res, counts[r], a);
    return MPI_SUCCESS;
}

static int halving_active(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, const size_t *counts,
                          const size_t *displs, size_t total)
{
    rs_layout_t l;
    int cur = 0, rc = layout_make(&l, f, counts, displs);
    if (rc != MPI_SUCCESS) return rc;
    char *w = mc_tmp_elems(2 * total, a);
    void *buf[2] = {w, w};
    if (w) buf[1] = mc_elem(w, total, a);
    else rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) rc = load_input(ctx, a, f, &l, buf[0], buf[1], total);
    if (rc == MPI_SUCCESS) rc = mc_rs_halving(ctx, a, f, buf, &cur, l.sd);
    if (rc == MPI_SUCCESS)
        rc = store_result(ctx, a, f, counts, mc_elem(buf[cur], l.sd[mc_rs_bitrev(f->v, f->k)], a));
    mc_free(w);
    mc_free(l.vc);
    return rc;
}

int mc_reduce_scatter_halving(mc_ctx_t *ctx, const mc_args_t *a, const size_t *counts,
                              const size_t *displs)
{
    int p = ctx->size, r = ctx->rank;
    size_t total = displs[p - 1] + counts[p - 1];
    mc_fold_t f;
    if (!total) return MPI_SUCCESS;
    mc_fold_init(&f, p, r);
    if (f.v >= 0) return halving_active(ctx, a, &f, counts, displs, total);
    /* folded away: the send completes before the result lands in rbuf (which may be sbuf) */
    int rc = mc_send_t(a->sbuf, total, a, r + 1, ctx);
    return rc != MPI_SUCCESS ? rc : mc_recv_t(a->rbuf, counts[r], a, r + 1, ctx);
}

static int reduce_scatter_halving(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_reduce_scatter_halving(ctx, a, a->counts, a->displs);
}

const mc_alg_t mc_alg_reduce_scatter_recursive_halving = {
    .coll = MC_REDUCE_SCATTER, .name = "recursive_halving",
    .doc = "recursive halving in log2(p) steps, non-power-of-two by folding; keeps rank order",
    .fn = reduce_scatter_halving, .ok = NULL, .cost = mc_rs_halving_cost, .flags = 0,
};
