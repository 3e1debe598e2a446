/* Reduce-scatter phases shared by reduce_scatter, reduce_scatter_block and allreduce. */
#include "common.h"
#include <math.h>

int mc_rs_combine(void *buf[2], int *cur, size_t off, size_t n, int mine_lower, const mc_args_t *a)
{
    char *mine = mc_elem(buf[*cur], off, a), *theirs = mc_elem(buf[!*cur], off, a);
    if (!mine_lower) return mc_reduce_local(theirs, mine, n, a);
    *cur = !*cur;
    return mc_reduce_local(mine, theirs, n, a);
}

void mc_fold_init(mc_fold_t *f, int p, int rank)
{
    f->k = mc_floor_log2(p);
    f->q = 1 << f->k;
    f->rem = p - f->q;
    if (rank >= 2 * f->rem) f->v = rank - f->rem;
    else f->v = rank % 2 ? rank / 2 : -1;
}

int mc_fold_in(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf[2], int *cur, size_t n)
{
    int r = ctx->rank;
    if (r >= 2 * f->rem) return MPI_SUCCESS;
    if (f->v < 0) return mc_send_t(buf[*cur], n, a, r + 1, ctx);
    int rc = mc_recv_t(buf[!*cur], n, a, r - 1, ctx);
    return rc != MPI_SUCCESS ? rc : mc_rs_combine(buf, cur, 0, n, 0, a);
}

int mc_fold_out(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf, size_t n)
{
    int r = ctx->rank;
    if (r >= 2 * f->rem) return MPI_SUCCESS;
    return f->v < 0 ? mc_recv_t(buf, n, a, r + 1, ctx) : mc_send_t(buf, n, a, r - 1, ctx);
}

void mc_rs_slot_range(int v, int levels, int q, int *lo, int *len)
{
    *lo = 0;
    *len = q;
    for (int i = 0; i < levels; i++) {
        *len /= 2;
        if (v >> i & 1) *lo += *len;
    }
}

int mc_rs_bitrev(int v, int k)
{
    int r = 0;
    for (int i = 0; i < k; i++) r |= (v >> i & 1) << (k - 1 - i);
    return r;
}

/* ---------------------------------------------------------------- recursive halving/doubling */
int mc_rs_halving(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf[2], int *cur,
                  const size_t *sd)
{
    for (int i = 0; i < f->k; i++) {
        int lo, len, upper = f->v >> i & 1, peer = mc_fold_real(f, f->v ^ (1 << i));
        mc_rs_slot_range(f->v, i, f->q, &lo, &len);
        int half = len / 2, keep = upper ? lo + half : lo, give = upper ? lo : lo + half;
        size_t ko = sd[keep], kn = sd[keep + half] - ko, go = sd[give], gn = sd[give + half] - go;
        int rc = mc_sendrecv_t(mc_elem(buf[*cur], go, a), gn, peer, mc_elem(buf[!*cur], ko, a), kn,
                               peer, a, ctx);
        if (rc == MPI_SUCCESS) rc = mc_rs_combine(buf, cur, ko, kn, !upper, a);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

int mc_ag_doubling(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf, const size_t *sd)
{
    for (int i = f->k - 1; i >= 0; i--) {
        int lo, len, plo, plen, pv = f->v ^ (1 << i);
        mc_rs_slot_range(f->v, i + 1, f->q, &lo, &len);
        mc_rs_slot_range(pv, i + 1, f->q, &plo, &plen);
        int rc = mc_sendrecv_t(mc_elem(buf, sd[lo], a), sd[lo + len] - sd[lo], mc_fold_real(f, pv),
                               mc_elem(buf, sd[plo], a), sd[plo + plen] - sd[plo], mc_fold_real(f, pv),
                               a, ctx);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- ring */
typedef struct ring_step {
    const char *sbuf;       /* block sent on */
    size_t scount;
    char *rbuf;             /* partial received, then reduced with own */
    size_t rcount;
    const char *own;        /* this rank's input for the received block */
    size_t per;             /* elements per segment */
    int to, from;
} ring_step_t;

static size_t nsegs(size_t n, size_t per) { return per ? (n + per - 1) / per : 0; }

/* Posts segment i of both transfers into req[0] (receive) and req[1] (send). */
static int ring_post(mc_ctx_t *ctx, const mc_args_t *a, const ring_step_t *st, size_t i,
                     MPI_Request req[2])
{
    size_t off = i * st->per;
    int rc = MPI_SUCCESS;
    if (off < st->rcount)
        rc = mc_irecv_t(mc_elem(st->rbuf, off, a), st->rcount - off < st->per ? st->rcount - off : st->per,
                        a, st->from, ctx, &req[0]);
    if (rc == MPI_SUCCESS && off < st->scount)
        rc = mc_isend_t(mc_elem(st->sbuf, off, a), st->scount - off < st->per ? st->scount - off : st->per,
                        a, st->to, ctx, &req[1]);
    return rc;
}

/* Segment i + 1 is in flight while segment i is reduced; two request pairs alternate. */
static int ring_step(mc_ctx_t *ctx, const mc_args_t *a, const ring_step_t *st)
{
    MPI_Request req[2][2] = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, {MPI_REQUEST_NULL, MPI_REQUEST_NULL}};
    size_t ns = nsegs(st->scount > st->rcount ? st->scount : st->rcount, st->per);
    int rc = ns ? ring_post(ctx, a, st, 0, req[0]) : MPI_SUCCESS;
    for (size_t i = 0; rc == MPI_SUCCESS && i < ns; i++) {
        MPI_Request *now = req[i % 2], *next = req[(i + 1) % 2];
        if (i + 1 < ns) rc = mc_waitall(2, next);
        if (rc == MPI_SUCCESS && i + 1 < ns) rc = ring_post(ctx, a, st, i + 1, next);
        if (rc == MPI_SUCCESS) rc = mc_waitall(1, &now[0]);
        size_t off = i * st->per;
        if (rc == MPI_SUCCESS && off < st->rcount)
            rc = mc_reduce_local(mc_elem(st->own, off, a), mc_elem(st->rbuf, off, a),
                                 st->rcount - off < st->per ? st->rcount - off : st->per, a);
    }
    int rc2 = mc_waitall(4, &req[0][0]); /* also drains what an error left in flight */
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* Elements per segment, one value for the whole call so both ends of a transfer agree. */
static size_t ring_seg(const mc_args_t *a, const size_t *counts, int p)
{
    size_t total = 0, per;
    for (int i = 0; i < p; i++) total += counts[i];
    mc_segments(total, a->extent, a->segsize, &per);
    return per;
}

int mc_rs_ring(mc_ctx_t *ctx, const mc_args_t *a, const void *src, const size_t *counts,
               const size_t *displs, void *dst)
{
    int p = ctx->size, r = ctx->rank, rc = MPI_SUCCESS;
    size_t maxc = 0;
    for (int i = 0; i < p; i++) maxc = counts[i] > maxc ? counts[i] : maxc;
    if (p == 1 || !maxc) {
        mc_rs_copy(dst, mc_elem(src, displs[r], a), counts[r], a);
        return MPI_SUCCESS;
    }
    /* the partial of step k is sent on at step k + 1: two block buffers alternate */
    char *acc = mc_tmp_elems(2 * maxc, a), *part[2];
    if (!acc) return MPI_ERR_NO_MEM;
    part[0] = acc;
    part[1] = mc_elem(acc, maxc, a);
    ring_step_t st = {.per = ring_seg(a, counts, p), .to = (r + 1) % p, .from = (r - 1 + p) % p};
    for (int k = 0; rc == MPI_SUCCESS && k < p - 1; k++) {
        int sb = (r - k - 1 + p) % p, rb = (r - k - 2 + 2 * p) % p;
        st.sbuf = k ? part[(k - 1) % 2] : mc_elem(src, displs[sb], a);
        st.scount = counts[sb];
        st.rbuf = part[k % 2];
        st.rcount = counts[rb];
        st.own = mc_elem(src, displs[rb], a);
        rc = ring_step(ctx, a, &st);
    }
    if (rc == MPI_SUCCESS) mc_rs_copy(dst, part[(p - 2) % 2], counts[r], a);
    mc_free(acc);
    return rc;
}

/* ---------------------------------------------------------------- layouts and costs */
int mc_rs_block_layout(int p, size_t count, size_t **counts)
{
    *counts = mc_malloc(sizeof(size_t) * 2 * (size_t)p);
    if (!*counts) return MPI_ERR_NO_MEM;
    for (int i = 0; i < p; i++) {
        (*counts)[i] = count;
        (*counts)[p + i] = count * (size_t)i;
    }
    return MPI_SUCCESS;
}

/* m = whole input vector, b = m/p per block, ns = ceil(b/ms) segments per step:
 * (p-1) * (ns*alpha + b*beta + b*gamma). No credit for overlapping the reduction with the
 * next segment's transfer: Hockney has no notion of it. */
double mc_rs_ring_cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    double b = in->m / in->p, ns = in->ms > 0 && in->ms < b ? ceil(b / in->ms) : 1;
    return (in->p - 1) * (ns * h->alpha + b * (h->beta + h->gamma));
}

/* q = 2^floor(log2 p), k = log2 q: halving sends and reduces m/2 + m/4 + ... = (q-1)/q * m
 * in k messages. A non-power-of-two p adds the fold (alpha + m*beta + m*gamma) and the
 * return of one block (alpha + m/p*beta):
 * k*alpha + (q-1)/q*m*(beta+gamma) + [p != q]*(2*alpha + m*beta + m*gamma + m/p*beta). */
double mc_rs_halving_cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int k = mc_floor_log2(in->p), q = 1 << k;
    double t = k * h->alpha + (double)(q - 1) / q * in->m * (h->beta + h->gamma);
    if (q != in->p) t += 2 * h->alpha + in->m * (h->beta + h->gamma) + in->m / in->p * h->beta;
    return t;
}

int mc_fold_allreduce(mc_ctx_t *ctx, const mc_args_t *a, mc_fold_core_fn core)
{
    mc_fold_t f;
    int cur = 0, rc;
    if (!a->count) return MPI_SUCCESS;
    mc_rs_copy(a->rbuf, a->sbuf, a->count, a);
    if (ctx->size == 1) return MPI_SUCCESS;
    mc_fold_init(&f, ctx->size, ctx->rank);
    void *tmp = f.v >= 0 ? mc_tmp_elems(a->count, a) : NULL;
    if (f.v >= 0 && !tmp) return MPI_ERR_NO_MEM;
    void *buf[2] = {a->rbuf, tmp};
    rc = mc_fold_in(ctx, a, &f, buf, &cur, a->count);
    if (rc == MPI_SUCCESS && f.v >= 0) rc = core(ctx, a, &f, buf, &cur);
    if (rc == MPI_SUCCESS) rc = mc_fold_out(ctx, a, &f, a->rbuf, a->count);
    mc_free(tmp);
    return rc;
}
