/* Reductions: reduce, allreduce, reduce_scatter, reduce_scatter_block, scan, exscan.
 * Element i of rank r's contribution is vt_gen(type, op, r, i); the expected result of a
 * reduction over ranks lo..hi is folded in rank order from the same generator. */
#include "checks.h"
#include "core/mc.h"
#include "datagen.h"
#include "vtypes.h"
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_ELEMS 5

typedef struct {
    vt_kind_t k;
    vt_op_t op;
    vt_gen_t g;
    size_t n;           /* elements (per rank block for the reduce_scatters) */
    int root, inplace;
    int nonroot_rbuf;   /* what non-roots of reduce pass as recvbuf (not significant there) */
    int vpat;           /* reduce_scatter counts */
} rcase_t;

typedef void (*rcase_fn)(const tcomm_t *c, const rcase_t *r);

enum { RP_ROOTED = 1, RP_V = 2, RP_SCATTER = 4 };
/* A buffer of their own, NULL, or their send buffer (as MPI_Reduce(rank == root ?
 * MPI_IN_PLACE : buf, buf, ...) does: legal, rbuf being ignored off the root). */
enum { NR_OWN, NR_NULL, NR_SEND, NR_MODES };

static const char *rdesc(const rcase_t *r, unsigned flags)
{
    static char s[200];
    static const char *const gname[] = {"exact", "wide", "ones"};
    int n = snprintf(s, sizeof s, "type=%s op=%s data=%s n=%zu", vt_kind_name(r->k), vt_op_name(r->op),
                     gname[r->g], r->n);
    static const char *const nr[] = {"", " nonroot_recvbuf=NULL", " nonroot_recvbuf=sendbuf"};
    if (flags & RP_ROOTED) n += snprintf(s + n, sizeof s - (size_t)n, " root=%d%s", r->root, nr[r->nonroot_rbuf]);
    if (flags & RP_V) n += snprintf(s + n, sizeof s - (size_t)n, " counts=%s", vpat_name(r->vpat));
    if (r->inplace) snprintf(s + n, sizeof s - (size_t)n, " in_place");
    return s;
}

/* ---------------------------------------------------------------- buffers */
/* n elements of rank `rank`'s contribution starting at global element idx0. */
static void *rgen(const rcase_t *r, int rank, size_t n, size_t idx0)
{
    size_t sz = vt_size(r->k);
    uint64_t s = vt_stream(r->op, T.seed, rank);
    unsigned char *b = xmalloc((n + GUARD_ELEMS) * sz);
    memset(b, SENTINEL_BYTE, (n + GUARD_ELEMS) * sz);
    for (size_t i = 0; i < n; i++) vt_gen(r->k, r->op, r->g, s, idx0 + i, b + i * sz);
    return b;
}

static void *ralloc(const rcase_t *r, size_t n)
{
    size_t sz = vt_size(r->k);
    void *b = xmalloc((n + GUARD_ELEMS) * sz);
    memset(b, SENTINEL_BYTE, (n + GUARD_ELEMS) * sz);
    return b;
}

static uint64_t rhash(const rcase_t *r, const void *b, size_t n)
{
    return hash_bytes(b, (n + GUARD_ELEMS) * vt_size(r->k), 0);
}

static void guard_intact(const rcase_t *r, const void *b, size_t n, const char *what)
{
    const unsigned char *g = (const unsigned char *)b + n * vt_size(r->k);
    for (size_t i = 0; i < GUARD_ELEMS * vt_size(r->k); i++)
        if (g[i] != SENTINEL_BYTE) {
            tfail("%s: written past its %zu elements (byte %zu after the end)", what, n, i);
            return;
        }
}

static double tolerance(vt_kind_t k, int p) { return (p + 1) * (k == VT_FLOAT ? FLT_EPSILON : DBL_EPSILON); }

static double wide_scale(const rcase_t *r, const uint64_t *streams, int lo, int hi, size_t idx)
{
    double s = 0;
    unsigned char v[32];
    for (int q = lo; q <= hi; q++) {
        vt_gen(r->k, r->op, r->g, streams[q], idx, v);
        s += vt_magnitude(r->k, v);
    }
    return s;
}

/* Elements [0, n) of buf must be the reduction over ranks lo..hi of global elements idx0... */
static long rexpect(const rcase_t *r, const void *buf, size_t n, size_t idx0, int lo, int hi,
                    const char *what)
{
    size_t sz = vt_size(r->k);
    long bad = 0;
    unsigned char want[32];
    uint64_t *streams = xmalloc(sizeof(uint64_t) * (size_t)(hi + 1));
    for (int q = lo; q <= hi; q++) streams[q] = vt_stream(r->op, T.seed, q);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *got = (const unsigned char *)buf + i * sz;
        vt_expect(r->k, r->op, r->g, streams, lo, hi, idx0 + i, want);
        int ok = r->g == GEN_WIDE ? vt_close(r->k, got, want, wide_scale(r, streams, lo, hi, idx0 + i),
                                             tolerance(r->k, hi - lo + 1))
                                  : vt_equal(r->k, got, want);
        if (ok || bad++ >= 3) continue;
        char gs[64], ws[64];
        vt_format(r->k, got, gs, sizeof gs);
        vt_format(r->k, want, ws, sizeof ws);
        tfail("%s[%zu]: got %s expected %s (reduction over ranks %d..%d)", what, i, gs, ws, lo, hi);
    }
    if (bad > 3) tfail("%s: %ld of %zu elements wrong", what, bad, n);
    xfree(streams);
    return bad;
}

static uint64_t result_hash(const rcase_t *r, const void *buf, size_t n)
{
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++) h = vt_hash(r->k, (const char *)buf + i * vt_size(r->k), h);
    return h;
}

static void after_call(const rcase_t *r, const void *sb, size_t sn, uint64_t sh)
{
    talg(!vt_op_commutes(r->op));
    if (sb && rhash(r, sb, sn) != sh) tfail("send buffer changed");
}

/* ---------------------------------------------------------------- runners */
static void run_reduce(const tcomm_t *c, const rcase_t *r)
{
    int me = c->rank, isroot = me == r->root, inplace = isroot && r->inplace;
    void *sb = rgen(r, me, r->n, 0), *rb = NULL;
    if (isroot || r->nonroot_rbuf == NR_OWN) rb = ralloc(r, r->n);
    if (inplace) memcpy(rb, sb, r->n * vt_size(r->k));
    uint64_t sh = rhash(r, sb, r->n);
    tcase(c, "%s", rdesc(r, RP_ROOTED));
    int rc = MPI_Reduce(inplace ? MPI_IN_PLACE : sb, !isroot && r->nonroot_rbuf == NR_SEND ? sb : rb, (int)r->n,
                        vt_mpi_type(r->k), vt_mpi_op(r->op), r->root, c->comm);
    if (tcheck_rc(rc, "MPI_Reduce")) {
        after_call(r, sb, r->n, sh);
        if (isroot) rexpect(r, rb, r->n, 0, 0, c->size - 1, "recvbuf");
        if (isroot) guard_intact(r, rb, r->n, "recvbuf");
    }
    xfree(sb);
    xfree(rb);
}

/* allreduce, scan, exscan: same buffers, different expected range. */
static void run_allish(const tcomm_t *c, const rcase_t *r, mc_coll_t which)
{
    int me = c->rank;
    /* exscan's rank 0 (not in place): its rbuf is not significant, so one of its own, NULL or
     * its send buffer, by the count */
    int mode = which == MC_EXSCAN && me == 0 && !r->inplace ? (int)(r->n % NR_MODES) : NR_OWN;
    void *sb = rgen(r, me, r->n, 0), *rb = mode == NR_OWN ? ralloc(r, r->n) : NULL;
    if (r->inplace) memcpy(rb, sb, r->n * vt_size(r->k));
    uint64_t sh = rhash(r, sb, r->n);
    tcase(c, "%s%s", rdesc(r, 0), mode == NR_NULL ? " rank0_recvbuf=NULL" : mode == NR_SEND ? " rank0_recvbuf=sendbuf" : "");
    const void *s = r->inplace ? MPI_IN_PLACE : sb;
    if (mode == NR_SEND) rb = sb;
    MPI_Datatype dt = vt_mpi_type(r->k);
    MPI_Op op = vt_mpi_op(r->op);
    int rc = which == MC_ALLREDUCE ? MPI_Allreduce(s, rb, (int)r->n, dt, op, c->comm)
           : which == MC_SCAN      ? MPI_Scan(s, rb, (int)r->n, dt, op, c->comm)
                                   : MPI_Exscan(s, rb, (int)r->n, dt, op, c->comm);
    if (tcheck_rc(rc, which == MC_ALLREDUCE ? "MPI_Allreduce" : which == MC_SCAN ? "MPI_Scan" : "MPI_Exscan")) {
        after_call(r, sb, r->n, sh);
        int hi = which == MC_ALLREDUCE ? c->size - 1 : which == MC_SCAN ? me : me - 1;
        if (hi >= 0) rexpect(r, rb, r->n, 0, 0, hi, "recvbuf");
        if (mode == NR_OWN) guard_intact(r, rb, r->n, "recvbuf");
        if (which == MC_ALLREDUCE) tagree(c, result_hash(r, rb, r->n), "allreduce result (bitwise)");
    }
    xfree(sb);
    if (mode == NR_OWN) xfree(rb);
}

static void run_allreduce(const tcomm_t *c, const rcase_t *r) { run_allish(c, r, MC_ALLREDUCE); }
static void run_scan(const tcomm_t *c, const rcase_t *r) { run_allish(c, r, MC_SCAN); }
static void run_exscan(const tcomm_t *c, const rcase_t *r) { run_allish(c, r, MC_EXSCAN); }

/* reduce_scatter(_block): rank i's result is the reduction of elements [displ_i, +cnt_i). */
static void run_rs_any(const tcomm_t *c, const rcase_t *r, int isv)
{
    int me = c->rank, p = c->size;
    size_t *cnt = xmalloc(sizeof(size_t) * (size_t)p), *dsp = xmalloc(sizeof(size_t) * (size_t)p);
    for (int i = 0; i < p; i++) cnt[i] = isv ? vunits(r->vpat, r->n, i, p, 1) : r->n;
    size_t total = vdispls(D_PACKED, cnt, p, 0, dsp);
    void *sb = rgen(r, me, total, 0), *rb = ralloc(r, r->inplace ? total : cnt[me]);
    if (r->inplace) memcpy(rb, sb, total * vt_size(r->k));
    uint64_t sh = rhash(r, sb, total);
    tcase(c, "%s", rdesc(r, isv ? RP_V : 0));
    const void *s = r->inplace ? MPI_IN_PLACE : sb;
    int rc;
    if (isv) {
        int *ic = to_int(cnt, p);
        rc = MPI_Reduce_scatter(s, rb, ic, vt_mpi_type(r->k), vt_mpi_op(r->op), c->comm);
        xfree(ic);
    } else {
        rc = MPI_Reduce_scatter_block(s, rb, (int)r->n, vt_mpi_type(r->k), vt_mpi_op(r->op), c->comm);
    }
    if (tcheck_rc(rc, isv ? "MPI_Reduce_scatter" : "MPI_Reduce_scatter_block")) {
        after_call(r, sb, total, sh);
        rexpect(r, rb, cnt[me], dsp[me], 0, p - 1, "recvbuf");
        guard_intact(r, rb, r->inplace ? total : cnt[me], "recvbuf");
    }
    xfree(sb);
    xfree(rb);
    xfree(cnt);
    xfree(dsp);
}

static void run_rs(const tcomm_t *c, const rcase_t *r) { run_rs_any(c, r, 1); }
static void run_rsb(const tcomm_t *c, const rcase_t *r) { run_rs_any(c, r, 0); }

/* ---------------------------------------------------------------- plan */
static rcase_t rcase(vt_kind_t k, vt_op_t op, vt_gen_t g, size_t n, int root, int inplace)
{
    return (rcase_t){.k = k, .op = op, .g = g, .n = n, .root = root, .inplace = inplace};
}

static void go(const tcomm_t *c, rcase_fn run, rcase_t r) { run(c, &r); }

/* Every predefined (type, op) pair and the user op, at a prime count. */
static void ops_part(const tcomm_t *c, rcase_fn run)
{
    const vt_combo_t *cb;
    int n = vt_combos(&cb);
    for (int i = 0; i < n; i++) {
        go(c, run, rcase(cb[i].kind, cb[i].op, GEN_EXACT, 13, i % c->size, i % 2));
        if (!T.quick) go(c, run, rcase(cb[i].kind, cb[i].op, GEN_EXACT, 1, (i + 1) % c->size, 0));
    }
}

/* The reduce_scatters reduce size * n elements: their big counts are divided by the size. */
static size_t per_rank(size_t n, size_t per) { return n > 1009 ? n / per + 1 : n; }

static void counts_part(const tcomm_t *c, rcase_fn run, size_t per)
{
    static const size_t counts_[] = {0, 1, 2, 3, 7, 13, 64, 1009, 4099, 65537};
    size_t counts[NELEM(counts_)];
    for (size_t i = 0; i < NELEM(counts); i++) counts[i] = per_rank(counts_[i], per);
    for (size_t i = 0; i < NELEM(counts); i++) {
        int root = (int)(i * 3) % c->size, inp = (int)i % 2;
        go(c, run, rcase(VT_INT, OP_SUM, GEN_EXACT, counts[i], root, inp));
        go(c, run, rcase(VT_AFFINE, OP_AFFINE, GEN_EXACT, counts[i], (root + 1) % c->size, !inp));
        go(c, run, rcase(VT_DOUBLE, OP_SUM, GEN_ONES, counts[i], (root + 2) % c->size, inp));
    }
}

static void roots_part(const tcomm_t *c, rcase_fn run)
{
    static const size_t counts[] = {13, 1009};
    for (int root = 0; root < c->size; root++)
        for (size_t i = 0; i < NELEM(counts); i++)
            for (int inp = 0; inp < 2; inp++) {
                rcase_t r = rcase(inp ? VT_AFFINE : VT_INT, inp ? OP_AFFINE : OP_SUM, GEN_EXACT, counts[i], root, inp);
                r.nonroot_rbuf = (root + (int)i + inp) % NR_MODES;
                go(c, run, r);
            }
}

static void vpat_part(const tcomm_t *c, rcase_fn run)
{
    static const size_t counts[] = {13, 1009};
    for (int v = 0; v < V_NPAT; v++)
        for (size_t i = 0; i < NELEM(counts); i++) {
            rcase_t r = rcase(VT_INT, OP_SUM, GEN_EXACT, counts[i], 0, v % 2);
            r.vpat = v;
            go(c, run, r);
            r = rcase(VT_AFFINE, OP_AFFINE, GEN_EXACT, counts[i], 0, (v + 1) % 2);
            r.vpat = v;
            go(c, run, r);
        }
}

static void segsize_part(const tcomm_t *c, rcase_fn run, size_t per)
{
    static const long segs[] = {0, 3, 1001, 8192};
    for (size_t s = 0; s < NELEM(segs); s++) {
        tset_segsize(segs[s]);
        size_t big = segs[s] == 3 ? 101 : per_rank(65537, per);
        go(c, run, rcase(VT_DOUBLE, OP_SUM, GEN_EXACT, segs[s] == 3 ? 13 : 1009, (int)s % c->size, 0));
        go(c, run, rcase(VT_AFFINE, OP_AFFINE, GEN_EXACT, big, (int)(s + 1) % c->size, (int)s % 2));
        go(c, run, rcase(VT_INT, OP_SUM, GEN_ONES, big, (int)(s + 2) % c->size, 0));
    }
    tset_segsize(-1);
}

static void radix_part(const tcomm_t *c, rcase_fn run)
{
    static const int radix[] = {2, 3, 4, 5, 8};
    for (size_t i = 0; i < NELEM(radix); i++) {
        tset_radix(radix[i]);
        go(c, run, rcase(VT_AFFINE, OP_AFFINE, GEN_EXACT, 1009, (int)i % c->size, 0));
        go(c, run, rcase(VT_INT, OP_SUM, GEN_EXACT, 13, (int)(i + 1) % c->size, 1));
    }
    tset_radix(-1);
}

/* Order-dependent float data: results must be close, and allreduce bitwise equal on all ranks. */
static void wide_part(const tcomm_t *c, rcase_fn run, size_t per)
{
    static const size_t counts[] = {1009, 65537};
    for (size_t i = 0; i < NELEM(counts); i++) {
        go(c, run, rcase(VT_FLOAT, OP_SUM, GEN_WIDE, per_rank(counts[i], per), 0, (int)i));
        go(c, run, rcase(VT_DOUBLE, OP_SUM, GEN_WIDE, per_rank(counts[i], per), c->size - 1, 0));
    }
}

static void other_comms_part(const tcomm_t *c, rcase_fn run)
{
    static const size_t counts[] = {13, 1, 1009};
    for (size_t i = 0; i < (T.quick ? 1 : NELEM(counts)); i++)
        for (int r = 0; r < 2; r++) {
            int root = r ? c->size - 1 : 0;
            go(c, run, rcase(VT_INT, OP_SUM, GEN_EXACT, counts[i], root, (int)(i + (size_t)r) % 2));
            rcase_t a = rcase(VT_AFFINE, OP_AFFINE, GEN_EXACT, counts[i], root, r);
            a.vpat = (int)(i % V_NPAT);
            go(c, run, a);
        }
}

/* One MB-sized case: 4 MB of ints per rank (in total for the reduce_scatters); rooted, also
 * in place at root 0 (a reduce's root writes its result where its input was). */
static void large_part(const tcomm_t *c, rcase_fn run, size_t per, unsigned flags)
{
    go(c, run, rcase(VT_INT, OP_SUM, GEN_EXACT, ((size_t)1 << 20) / per + 3, c->size - 1, 0));
    if (flags & RP_ROOTED) {
        rcase_t r = rcase(VT_INT, OP_SUM, GEN_EXACT, ((size_t)1 << 20) + 5, 0, 1);
        r.nonroot_rbuf = NR_SEND;
        go(c, run, r);
    }
}

static void reduce_plan(const tcomm_t *comms, int ncomms, rcase_fn run, unsigned flags)
{
    const tcomm_t *w = &comms[0];
    size_t per = flags & RP_SCATTER ? (size_t)w->size : 1;
    if (T.large_only) {
        large_part(w, run, per, flags);
        return;
    }
    ops_part(w, run);
    counts_part(w, run, per);
    if (flags & RP_ROOTED) roots_part(w, run);
    if (flags & RP_V) vpat_part(w, run);
    if (plan_segmented()) segsize_part(w, run, per);
    if (plan_radix()) radix_part(w, run);
    wide_part(w, run, per);
    for (int i = 1; i < ncomms; i++) other_comms_part(&comms[i], run);
    if (!T.quick) large_part(w, run, per, flags);
}

void check_reduce(const tcomm_t *c, int n) { reduce_plan(c, n, run_reduce, RP_ROOTED); }
void check_allreduce(const tcomm_t *c, int n) { reduce_plan(c, n, run_allreduce, 0); }
void check_scan(const tcomm_t *c, int n) { reduce_plan(c, n, run_scan, 0); }
void check_exscan(const tcomm_t *c, int n) { reduce_plan(c, n, run_exscan, 0); }
void check_reduce_scatter(const tcomm_t *c, int n) { reduce_plan(c, n, run_rs, RP_V | RP_SCATTER); }
void check_reduce_scatter_block(const tcomm_t *c, int n) { reduce_plan(c, n, run_rsb, RP_SCATTER); }
