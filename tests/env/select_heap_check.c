/* The default selection (model, built-in profile) with buffers in the shared heap and with
 * ordinary ones, one node: a reduction of 1 MiB per rank must run shm_direct with heap buffers
 * and take the zero-copy path exactly when every buffer is in the heap; ordinary buffers run
 * shm_direct too (its posting round, then the movement-avoiding path), or shm_ma itself on an
 * oversubscribed node, where the round costs a share of the staged call (mc_stage_round). The
 * data-access volume summed over the ranks tells the two paths apart (s = input bytes per
 * rank, p ranks):
 *   allreduce  zero copy 5s(p-1)   movement-avoiding s(5p-1)
 *   reduce     zero copy 3s(p-1)   movement-avoiding s(3p-1) + 2s(p-1)/p (the root copies out
 *                                   the others' pieces: s/p up to one element, so within 2 floats;
 *                                   at 2 ranks s(3p-1): the root's piece is the whole window)
 * A small allreduce (4 KiB) keeps an algorithm of the region (the posting round of shm_direct
 * would cost ordinary buffers more than the tolerance). Results are checked against closed
 * forms; the sums over ranks use PMPI, not the library under test.
 * --malloc-shared: libmcoll-malloc.so is preloaded, so malloc's 1 MiB buffers are heap buffers
 * too and must take the zero-copy path (its 4 KiB ones stay glibc's).
 *
 * The kind of buffers, learned per collective from a direct algorithm's posting round: heap
 * buffers keep shm_direct within MC_MSEL_ZTOL of the cheapest on ordinary buffers, ordinary
 * ones within MC_MSEL_TOL (model.h). For allreduce and reduce of 4 KiB-1 MiB: heap buffers
 * (after a call that shows them) run shm_direct wherever malloc ones do (after a call that
 * shows those), and at some size only they do; every rank makes the same choices; results are
 * exact. At such a size the verdict of malloc buffers then holds for MC_ORDINARY_LAPSE ops of
 * the node region: heap calls run another algorithm, until the lapse lets one post its
 * buffers again and take shm_direct from then on. */
#include "../verify/nocma.h"
#include "shm/shm.h"
#include <math.h>
#include <mcoll.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures, rank, size, malloc_shared;

static void fail(const char *what, const char *msg)
{
    failures++;
    printf("FAIL rank %d: %s: %s\n", rank, what, msg);
}

static uint64_t dav_sum(const char *coll)
{
    mcoll_stats_t st;
    uint64_t mine, all = 0;
    mcoll_stats_get(coll, &st);
    mine = st.dav;
    PMPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static void expect_alg(const char *what, const char *coll, const char *want)
{
    const char *got = mcoll_last_alg(coll);
    if (!got || strcmp(got, want)) {
        failures++;
        printf("FAIL rank %d: %s ran %s, expected %s\n", rank, what, got ? got : "(none)", want);
    }
}

/* Allreduce, or reduce to root 0, of n floats x_r[i] = r + i % 7 (the sum is exact) from x to
 * y, the result checked; reset: the counters start at the call (after a barrier). */
static void reduce_checked(const char *coll, float *x, float *y, size_t n, const char *what, int reset)
{
    char msg[128];
    int is_reduce = !strcmp(coll, "reduce");
    for (size_t i = 0; i < n; i++) x[i] = (float)(rank + (int)(i % 7)), y[i] = -1;
    if (reset) {
        MPI_Barrier(MPI_COMM_WORLD);
        mcoll_stats_reset();
    }
    if (is_reduce)
        MPI_Reduce(x, y, (int)n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    else
        MPI_Allreduce(x, y, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; (!is_reduce || rank == 0) && i < n; i++) {
        float want = (float)(size * (size - 1) / 2 + size * (int)(i % 7));
        if (y[i] != want) {
            snprintf(msg, sizeof msg, "wrong result %g at %zu, expected %g", y[i], i, want);
            fail(what, msg);
            break;
        }
    }
}

/* More ranks than online CPUs (every rank on this node; MCOLL_OVERSUBSCRIBED not set), as
 * the library's load (mc_host_load) counts them. */
static int oversubscribed(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 && size > cpus;
}

/* One reduction of n floats per rank: x_r[i] = r + i % 7, so the sum is exact. */
static void one(const char *coll, size_t n, int heap)
{
    size_t s = n * sizeof(float);
    float *a = heap ? mcoll_malloc(s) : malloc(s), *b = heap ? mcoll_malloc(s) : malloc(s);
    char what[96], msg[128];
    snprintf(what, sizeof what, "%s of %zu bytes, %s buffers", coll, s, heap ? "heap" : "malloc");
    if (!a || !b) {
        fail(what, "no memory");
        return;
    }
    int is_reduce = !strcmp(coll, "reduce");
    reduce_checked(coll, a, b, n, what, 0); /* shows the buffers (when it posts them) */
    reduce_checked(coll, a, b, n, what, 1);
    double got = (double)dav_sum(coll), p = size;
    if (n >= 16384 && size > 1) {
        int zc = heap || malloc_shared;
        if (mcoll_heap_size(a) == 0 || mcoll_heap_size(b) == 0) zc = 0;
        if (zc != (heap || malloc_shared)) fail(what, "buffers not from the shared heap");
        expect_alg(what, coll, zc || !oversubscribed() ? "shm_direct" : "shm_ma");
        double want = zc ? (is_reduce ? 3 : 5) * s * (p - 1)
                         : is_reduce ? s * (3 * p - 1) + (size == 2 ? 0 : 2 * s * (p - 1) / p) : s * (5 * p - 1);
        double slack = !zc && is_reduce && size > 2 ? 2.0 * sizeof(float) : 0;
        snprintf(msg, sizeof msg, "data-access volume %.0f, expected %.0f", got, want);
        if (fabs(got - want) > slack) fail(what, msg);
    } else if (!strcmp(mcoll_last_alg(coll) ? mcoll_last_alg(coll) : "", "shm_direct")) {
        fail(what, "ran shm_direct: its posting round costs ordinary buffers too much at this size");
    }
    if (heap) mcoll_free(a), mcoll_free(b);
    else free(a), free(b);
}

/* One call (allreduce, or reduce to root 0) of n floats from x to y, checked; returns the
 * algorithm it ran, the same on every rank (else a failure). */
static const char *call(const char *coll, float *x, float *y, size_t n, const char *what)
{
    reduce_checked(coll, x, y, n, what, 0);
    const char *alg = mcoll_last_alg(coll);
    unsigned h = 5381, m[2];
    for (const char *c = alg ? alg : ""; *c; c++) h = h * 33 + (unsigned char)*c;
    /* the least h and the least ~h (the greatest h) in one native call: MPICH's cost an
     * oversubscribed run a time slice each */
    unsigned v[2] = {h, ~h};
    PMPI_Allreduce(v, m, 2, MPI_UNSIGNED, MPI_MIN, MPI_COMM_WORLD);
    if (m[0] != ~m[1]) fail(what, "the ranks ran different algorithms");
    return alg ? alg : "(none)";
}

static int is_direct(const char *alg)
{
    return !strcmp(alg, "shm_direct");
}

static void band(const char *coll)
{
    size_t big = (size_t)1 << 18;
    float *ha = mcoll_malloc(big * sizeof(float)), *hb = mcoll_malloc(big * sizeof(float));
    float *ma = malloc(big * sizeof(float)), *mb = malloc(big * sizeof(float));
    char what[96], msg[160];
    size_t only = 0;
    if (!ha || !hb || !ma || !mb) {
        fail(coll, "no memory");
        goto out;
    }
    for (size_t n = 1024; n <= big; n *= 2) {
        snprintf(what, sizeof what, "%s of %zu bytes", coll, n * sizeof(float));
        call(coll, ha, hb, n, what); /* shows heap buffers (when it posts) */
        int heap = is_direct(call(coll, ha, hb, n, what));
        call(coll, ma, mb, n, what); /* shows malloc buffers (when it posts) */
        int mal = is_direct(call(coll, ma, mb, n, what));
        if (mal && !heap) fail(what, "shm_direct for malloc buffers but not for heap ones");
        if (heap && !mal && !only) only = n;
    }
    if (!only) {
        fail(coll, "no size where only heap buffers run shm_direct");
        goto out;
    }
    if (!rank) printf("%s: only heap buffers run shm_direct at %zu bytes\n", coll, only * sizeof(float));
    /* at that size: heap (direct), malloc (a direct call that finds them), then heap calls */
    snprintf(what, sizeof what, "%s of %zu bytes, the lapse", coll, only * sizeof(float));
    call(coll, ha, hb, only, what);
    call(coll, ma, mb, only, what);
    int first = -1;
    for (int k = 1; k <= 2 * MC_ORDINARY_LAPSE && first < 0; k++)
        if (is_direct(call(coll, ha, hb, only, what))) first = k;
    snprintf(msg, sizeof msg, "heap calls after malloc ones took shm_direct from call %d, expected 2..%d",
             first, MC_ORDINARY_LAPSE + 1);
    if (first < 2 || first > MC_ORDINARY_LAPSE + 1) fail(what, msg);
    if (!is_direct(call(coll, ha, hb, only, what))) fail(what, "the heap verdict did not hold");
out:
    mcoll_free(ha), mcoll_free(hb), free(ma), free(mb);
}

/* The uniform data movers, with their trials (run with MCOLL_SHM_TRIAL on): from 32 KiB of
 * user buffers a pipe's calls time the direct algorithm's ways too (its own, or single copies
 * after the posting round), so on ordinary buffers the pipe, which takes the round on the
 * calls that share samples only, runs instead of the direct algorithm; buffers in the heap
 * keep the direct algorithm's zero copy. Per collective at 256 KiB per rank: heap buffers
 * first (no verdict yet: shm_direct), then malloc ones (the first call's posting round finds
 * them ordinary: shm_direct once, then shm_pipe). Every call's result is checked against its
 * generator: byte (source rank, block, i) = (7 src + 3 blk + i) mod 251. */
static unsigned char gen(int src, int blk, size_t i)
{
    return (unsigned char)((7 * src + 3 * blk + i) % 251);
}

static void mover_call(const char *coll, unsigned char *x, unsigned char *y, size_t n, const char *what)
{
    char msg[128];
    int p = size, bc = !strcmp(coll, "bcast"), sc = !strcmp(coll, "scatter"), a2a = !strcmp(coll, "alltoall");
    size_t nx = sc || a2a ? n * (size_t)p : n, ny = bc ? 0 : sc ? n : n * (size_t)p;
    for (size_t i = 0; i < nx; i++)
        x[i] = bc || sc ? (rank == 0 ? gen(0, (int)(i / n), i % n) : 0)
                        : gen(rank, a2a ? (int)(i / n) : 0, i % n);
    memset(y, 0xff, ny);
    if (bc)
        MPI_Bcast(x, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (sc)
        MPI_Scatter(x, (int)n, MPI_BYTE, y, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (a2a)
        MPI_Alltoall(x, (int)n, MPI_BYTE, y, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    else
        MPI_Allgather(x, (int)n, MPI_BYTE, y, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    const unsigned char *r = bc ? x : y;
    for (size_t i = 0; i < (bc || sc ? n : n * (size_t)p); i++) {
        size_t blk = i / n, k = i % n;
        unsigned char want = bc ? gen(0, 0, k) : sc ? gen(0, rank, k) : gen((int)blk, a2a ? rank : 0, k);
        if (r[i] != want) {
            snprintf(msg, sizeof msg, "wrong byte %u at %zu, expected %u", r[i], i, want);
            fail(what, msg);
            break;
        }
    }
}

static const char *mover_colls[] = {"bcast", "allgather", "alltoall", "scatter"};

/* `calls` calls of coll, n bytes per rank, on a fresh pair of heap or malloc buffers, each
 * result checked; want (may be NULL) names the algorithm call k must run. */
static void mover_calls(const char *coll, size_t n, int heap, int calls, const char *note,
                        const char *(*want)(int heap, int k))
{
    size_t len = n * (size_t)size;
    unsigned char *x = heap ? mcoll_malloc(len) : malloc(len), *y = heap ? mcoll_malloc(len) : malloc(len);
    char what[96];
    snprintf(what, sizeof what, "%s of %zu bytes per rank, %s buffers%s", coll, n, heap ? "heap" : "malloc",
             note);
    if (!x || !y) fail(what, "no memory");
    for (int k = 0; x && y && k < calls; k++) {
        mover_call(coll, x, y, n, what);
        if (want) expect_alg(what, coll, want(heap, k));
    }
    if (heap)
        mcoll_free(x), mcoll_free(y);
    else
        free(x), free(y);
}

/* heap buffers first: shm_direct; malloc ones: shm_direct once, then shm_pipe */
static const char *movers_want(int heap, int k)
{
    return heap || k == 0 ? "shm_direct" : "shm_pipe";
}

static void movers(void)
{
    for (size_t c = 0; c < sizeof mover_colls / sizeof *mover_colls; c++)
        for (int heap = 1; heap >= 0; heap--)
            mover_calls(mover_colls[c], (size_t)256 << 10, heap, heap ? 1 : 3, "", movers_want);
}

/* --nocma, on a node that refuses CMA (nocma.h, installed before any collective): the first
 * collective on a communicator picks its algorithm before the node region exists, so under
 * the assumption that CMA works; mapping the region, its probe finds CMA refused, and the
 * decisions made under that assumption are dropped (mc_msel_region): right after that call
 * the context holds none; the next call decides again and keeps its decisions. Then the
 * uniform movers from 16 KiB to 1 MiB per rank, heap and malloc buffers, results checked
 * (without CMA: zero copy or staging, whatever the selection). */
static void nocma(void)
{
    MPI_Comm c;
    mc_ctx_t *ctx = NULL;
    size_t n = (size_t)64 << 10;
    unsigned char *x = malloc(n * (size_t)size), *y = malloc(n * (size_t)size);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    if (!x || !y || mc_ctx_get(c, &ctx) != MPI_SUCCESS || !ctx) {
        fail("--nocma", "no memory or no context");
        goto out;
    }
    memset(x, 1, n);
    MPI_Bcast(x, (int)n, MPI_BYTE, 0, c); /* maps the region */
    if (!ctx->shm || ctx->shm->cma) fail("--nocma", "the node region's probe found CMA through the filter");
    if (ctx->msel) fail("--nocma", "decisions made before the probe refused CMA were kept");
    MPI_Bcast(x, (int)n, MPI_BYTE, 0, c);
    if (!ctx->msel) fail("--nocma", "the next call kept no decisions");
    for (size_t k = (size_t)16 << 10; k <= ((size_t)1 << 20); k *= 4)
        for (size_t i = 0; i < sizeof mover_colls / sizeof *mover_colls; i++)
            for (int heap = 1; heap >= 0; heap--) mover_calls(mover_colls[i], k, heap, 3, ", no CMA", NULL);
out:
    MPI_Comm_free(&c);
    free(x), free(y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    malloc_shared = argc > 1 && !strcmp(argv[1], "--malloc-shared");
    int only_movers = argc > 1 && !strcmp(argv[1], "--movers"),
        no_cma = argc > 1 && !strcmp(argv[1], "--nocma");
    if (no_cma && test_forbid_cma()) fail("--nocma", "could not install the seccomp filter");
    if (only_movers && size > 1) movers();
    if (no_cma && size > 1) nocma();
    only_movers |= no_cma;
    /* band leaves heap verdicts, which one's heap buffers need first: after a verdict of
     * ordinary ones they would run another algorithm (shm_ma on an oversubscribed node) */
    if (!only_movers && !malloc_shared && size > 1) {
        band("allreduce");
        band("reduce");
    }
    for (int heap = 1; !only_movers && heap >= 0; heap--) {
        one("allreduce", 1 << 18, heap);
        one("reduce", 1 << 18, heap);
        one("allreduce", 1024, heap);
        /* 64 KiB of heap buffers keep zero copy on an oversubscribed node of up to 5 ranks:
         * the heap order tolerates the share of a staged call that the direct algorithm's
         * ordinary cost counts there (select/model.c; at 5 ranks zero copy ran 10-15 % ahead
         * of shm_dpml) */
        if (heap && oversubscribed() && size <= 5) one("allreduce", 1 << 14, 1), one("reduce", 1 << 14, 1);
    }
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) printf(all ? "SELECT HEAP FAILED (%d)\n" : "SELECT HEAP PASSED\n", all);
    MPI_Finalize();
    return all != 0;
}
