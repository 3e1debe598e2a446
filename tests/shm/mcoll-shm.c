/* mcoll-shm: checks of the shared-memory engine that the verification suite cannot see.
 *
 *  dav     every shm_* algorithm with a data-access-volume model: the DAV counters of one call,
 *          summed over the node's ranks, equal the model (yhccl Tables 1-3: MA reduce-scatter
 *          s(3p-1), MA allreduce s(5p-1), socket-aware s(5p+2m-3), ...) at several sizes,
 *          including sizes that divide neither by p nor by the slice.
 *  hygiene the region leaves nothing behind: no /dev/shm entry, no open descriptor.
 *  kill    rank 1 kills itself with SIGKILL after the region exists (the launcher then
 *          aborts the job; the ctest script checks /dev/shm afterwards).
 *  race    thousands of back-to-back small collectives of mixed kinds (allreduce and
 *          reduce_scatter_block on the symmetric exchange, reduce on the fan-in exchange,
 *          bcast on the fan-out exchange, barrier, allgather and gather on the STEP ring),
 *          ranks skewed by varying delays; then long runs of reduce alone (root slowed), bcast
 *          alone (readers slowed) and gather alone (root slowed), where a writer runs ahead as
 *          far as its buffers allow. Every result is checked against its closed form: a writer
 *          that reuses a buffer before its readers are done shows as a wrong sum (each of the
 *          four guards was removed once by hand and the test failed).
 *  far     writes into the region follow the node's distance (latency.c); run with
 *          MCOLL_SHM_FAR_NS=1 (every line-fetch sample exceeds it: far once a rank has one)
 *          and with 0 (never far). Far, the movement-avoiding slices of allreduce, reduce and
 *          reduce_scatter_block of 1 MiB and the symmetric exchange's 2 KiB copy-ins stream
 *          (counted bytes against the algorithm's writes into the region), and shm_direct's
 *          allreduce of 1 MiB on ordinary buffers copies by CMA (3 publications per rank);
 *          near, nothing streams at these sizes and shm_direct stages. Results checked.
 *  race_pipe shm_pipe's bcasts alone (race_pipe_bcast): the run that ends `race`.
 * Usage: mcoll-shm dav|hygiene|kill|race|race_pipe|far [--heap]. Prints "FAIL ..." on a failed check,
 * "PASSED". */
#include "core/config.h"
#include "core/mc.h"
#include "core/topo.h"
#include "mcoll.h"
#include "shm/heap.h"
#include "shm/shm.h"
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, fails, heap;

/* Buffers in the shared heap (zc: zero copy) or from malloc. A freed buffer is kept for the
 * next request of the same kind and exact size (ASan still bounds it): the tests repeat calls
 * of one size hundreds of times, and a VM whose page faults cost 14 us each spent most of
 * shm_dav's and shm_trial's time faulting fresh buffers in (ASan's allocator maps and unmaps
 * large blocks itself, so the ctest setting that keeps glibc's pages does not reach it). */
#define KEEP 8
static struct { void *p; size_t n; int zc, used; } kept[KEEP];
static void give_back(int zc, void *p)
{
    if (zc) mcoll_free(p);
    else free(p);
}
static void drop(int i)
{
    give_back(kept[i].zc, kept[i].p);
    kept[i].p = NULL;
}
static void drop_kept(void)
{
    for (int i = 0; i < KEEP; i++)
        if (kept[i].p) drop(i);
}
static void *alloc_on(int zc, size_t n)
{
    int hit = -1, empty = -1, spare = -1;
    for (int i = 0; i < KEEP && hit < 0; i++)
        if (!kept[i].p) empty = empty < 0 ? i : empty;
        else if (!kept[i].used && kept[i].zc == zc && kept[i].n == n) hit = i;
        else if (!kept[i].used) spare = spare < 0 ? i : spare;
    if (hit < 0) {
        void *p = zc ? mcoll_malloc(n ? n : 1) : malloc(n ? n : 1);
        if (!p) abort();
        hit = empty >= 0 ? empty : spare;   /* a free slot, else one of another size */
        if (hit < 0) {                      /* every slot in use: not kept */
            memset(p, 1, n);
            return p;
        }
        if (kept[hit].p) drop(hit);
        kept[hit].p = p, kept[hit].n = n, kept[hit].zc = zc;
    }
    kept[hit].used = 1;
    memset(kept[hit].p, 1, n);
    return kept[hit].p;
}
static void release_on(int zc, void *p)
{
    for (int i = 0; i < KEEP; i++)
        if (kept[i].p == p) {
            kept[i].used = 0;
            return;
        }
    give_back(zc, p);
}
static void *alloc(size_t n) { return alloc_on(heap, n); }
static void release(void *p) { release_on(heap, p); }

/* One call of collective c with n units (doubles for reductions, bytes otherwise). */
static int call(mc_coll_t c, size_t n)
{
    size_t big = n * (size_t)size;
    double *s = alloc(big * sizeof(double)), *r = alloc(big * sizeof(double));
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size), rc;
    for (int i = 0; i < size; i++) cnt[i] = (int)n, dsp[i] = (int)(n * (size_t)i);
    int k = (int)n;
    switch (c) {
    case MC_BARRIER: rc = MPI_Barrier(MPI_COMM_WORLD); break;
    case MC_BCAST: rc = MPI_Bcast(s, k, MPI_BYTE, size - 1, MPI_COMM_WORLD); break;
    case MC_REDUCE: rc = MPI_Reduce(s, r, k, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD); break;
    case MC_ALLREDUCE: rc = MPI_Allreduce(s, r, k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case MC_REDUCE_SCATTER: rc = MPI_Reduce_scatter(s, r, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case MC_REDUCE_SCATTER_BLOCK: rc = MPI_Reduce_scatter_block(s, r, k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case MC_ALLGATHER: rc = MPI_Allgather(s, k, MPI_BYTE, r, k, MPI_BYTE, MPI_COMM_WORLD); break;
    case MC_ALLGATHERV: rc = MPI_Allgatherv(s, k, MPI_BYTE, r, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD); break;
    case MC_GATHER: rc = MPI_Gather(s, k, MPI_BYTE, r, k, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case MC_GATHERV: rc = MPI_Gatherv(s, k, MPI_BYTE, r, cnt, dsp, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case MC_SCATTER: rc = MPI_Scatter(s, k, MPI_BYTE, r, k, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case MC_SCATTERV: rc = MPI_Scatterv(s, cnt, dsp, MPI_BYTE, r, k, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case MC_ALLTOALL: rc = MPI_Alltoall(s, k, MPI_BYTE, r, k, MPI_BYTE, MPI_COMM_WORLD); break;
    case MC_ALLTOALLV: rc = MPI_Alltoallv(s, cnt, dsp, MPI_BYTE, r, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD); break;
    case MC_SCAN: rc = MPI_Scan(s, r, k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case MC_EXSCAN: rc = MPI_Exscan(s, r, k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    default: rc = MPI_ERR_OTHER;
    }
    release(s);
    release(r);
    free(cnt);
    free(dsp);
    return rc;
}

static int sockets(void)
{
    mc_ctx_t *ctx;
    if (mc_ctx_get(MPI_COMM_WORLD, &ctx) != MPI_SUCCESS || !ctx->shm) return 1;
    return ctx->shm->nsock;
}

/* DAV of one call, summed over all ranks; *bytes = a->bytes of this rank; *syncs (if given)
 * its flag publications, summed over all ranks. */
static uint64_t measure_syncs(mc_coll_t c, size_t n, const char *alg, uint64_t *bytes, int *ran, uint64_t *syncs)
{
    mcoll_stats_t before, after;
    const char *name = mc_coll_name(c);
    call(c, n);                       /* warm: creates the region, maps heap segments */
    mcoll_stats_get(name, &before);
    call(c, n);
    mcoll_stats_get(name, &after);
    const char *last = mcoll_last_alg(name);
    /* one native call (MPICH's cost an oversubscribed run a time slice each): the ranks where
     * another algorithm ran are counted, the DAV and syncs summed */
    uint64_t got[3] = {after.dav - before.dav, after.syncs - before.syncs, !last || strcmp(last, alg)},
             sum[3];
    PMPI_Allreduce(got, sum, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    *ran = sum[2] == 0;
    *bytes = after.bytes - before.bytes;
    if (syncs) *syncs = sum[1];
    return sum[0];
}

static uint64_t measure(mc_coll_t c, size_t n, const char *alg, uint64_t *bytes, int *ran)
{
    return measure_syncs(c, n, alg, bytes, ran, NULL);
}

static int is_hybrid(const mc_alg_t *alg) { return !strcmp(alg->name, "shm_hybrid"); }

static int is_direct(const mc_alg_t *alg)
{
    size_t nl = strlen(alg->name);
    return nl > 7 && !strcmp(alg->name + nl - 7, "_direct");
}

/* Collectives of data movement (no reduction). */
static int moves_data(mc_coll_t c)
{
    return c == MC_BCAST || c == MC_GATHER || c == MC_GATHERV || c == MC_SCATTER || c == MC_SCATTERV ||
           c == MC_ALLGATHER || c == MC_ALLGATHERV || c == MC_ALLTOALL || c == MC_ALLTOALLV;
}

/* The model a call of alg must count. Without the shared heap, the direct algorithms of data
 * movement copy by CMA (counted like plain copies: their own model) or stage through the
 * region, where one poster voted so, and then count their pipe's model: without CMA always;
 * near, from the block sizes where the pipe's ring beats CMA (below); bcast, allgather(v),
 * alltoall(v) and gather(v) when the copies stream (every buffer of the call above the cache
 * capacity); scatter(v) never; with buffers fast by CMA (huge pages) only without CMA. */
static const mc_alg_t *model_of(mc_coll_t c, const mc_alg_t *alg, size_t n)
{
    if ((heap && !is_hybrid(alg)) || (!is_direct(alg) && !is_hybrid(alg))) return alg;
    mc_ctx_t *ctx;
    int cma = mc_ctx_get(MPI_COMM_WORLD, &ctx) == MPI_SUCCESS && ctx->shm && ctx->shm->cma;
    double p = size, user = 0;
    /* shm_hybrid: its own model (pipe or direct by the block's size) while CMA works and the
     * call stays within the cache (gatherv, alltoallv), whatever the buffers; else the pipe's */
    if (is_hybrid(alg)) {
        if (c == MC_ALLTOALLV) user = 2.0 * (double)n * p * p;
        if (c == MC_GATHERV) user = 2.0 * (double)n * p;
        return cma && user <= (double)mc_cache_capacity(size) ? alg : mc_alg_find(c, "shm_pipe");
    }
    /* near, the staged pipe (its ring) from these block sizes (allgatherv/shm_common.c,
     * MV_RING_STAGE*): gather, allgather(v), alltoall 512 KiB, scatter 1 MiB, bcast 2 MiB;
     * gatherv 1 MiB (MV_GATHER_STAGE) */
    int stage = !cma || (c == MC_GATHERV && n >= ((size_t)1 << 20)) ||
                ((c == MC_GATHER || c == MC_ALLGATHER || c == MC_ALLGATHERV || c == MC_ALLTOALL) &&
                 n >= ((size_t)512 << 10)) ||
                (c == MC_SCATTER && n >= ((size_t)1 << 20)) || (c == MC_BCAST && n >= ((size_t)2 << 20));
    if (c == MC_BCAST) user = (double)n * p;
    if (c == MC_ALLGATHER || c == MC_ALLGATHERV) user = (double)n * p * (p + 1);
    if (c == MC_ALLTOALL || c == MC_ALLTOALLV) user = 2.0 * (double)n * p * p;
    if (c == MC_GATHER || c == MC_GATHERV) user = 2.0 * (double)n * p;
    stage = stage || user > (double)mc_cache_capacity(size);
    /* every reason above but the missing CMA is its rate from pages of 4 KiB: waived when
     * every post is fast by CMA (MCOLL_SHM_CMA_FAST=1; the tests pin it to 1 or 0) */
    if (!strcmp(mc_cfg()->shm_cma_fast, "1")) stage = !cma;
    return stage ? mc_alg_find(c, "shm_pipe") : alg;
}

static void dav_one(mc_coll_t c, const mc_alg_t *alg, size_t n)
{
    uint64_t bytes;
    int ran;
    mcoll_set_alg(mc_coll_name(c), alg->name);
    uint64_t got = measure(c, n, alg->name, &bytes, &ran);
    mcoll_set_alg(mc_coll_name(c), "auto");
    if (!ran) return;   /* the algorithm declined this size (e.g. small-message paths) */
    mc_cost_in_t in = {.p = size, .m = (double)bytes, .ms = (double)bytes, .radix = 0, .sockets = sockets()};
    const mc_alg_t *model = model_of(c, alg, n);
    double want = model ? model->dav(&in) : -1;
    /* reduce through the region (MA, DPML's parts): the root copies out every piece but its
     * own, whose size is the model's s/p up to one element (pieces share a remainder) */
    int region = model && (!strncmp(model->name, "shm_ma", 6) || !strcmp(model->name, "shm_dpml"));
    double slack = c == MC_REDUCE && region ? 2.0 * sizeof(double) : 0;
    if (fabs((double)got - want) > slack) {
        fails++;
        if (rank == 0)
            printf("FAIL dav %s/%s p=%d m=%llu sockets=%d: counted %llu, model (%s) %.0f\n", mc_coll_name(c),
                   alg->name, size, (unsigned long long)bytes, in.sockets, (unsigned long long)got,
                   model ? model->name : "none", want);
    } else if (rank == 0 && getenv("MCOLL_SHM_TEST_VERBOSE")) {
        printf("ok dav %s/%s p=%d m=%llu: %llu\n", mc_coll_name(c), alg->name, size,
               (unsigned long long)bytes, (unsigned long long)got);
    }
}

static void test_dav(void)
{
    /* 3000: an allreduce's symmetric exchange above 16 KiB; 600000: staged near (ring) */
    const size_t sizes[] = {1, 7, 1000, 3000, 4099, 65536 + 3, 300000, 600000};
    int checked = 0;
    for (int c = 0; c < MC_NCOLL; c++)
        for (int i = 0; i < mc_alg_count(c); i++) {
            const mc_alg_t *alg = mc_alg_at(c, i);
            /* the reductions' direct algorithms run shm_ma on ordinary buffers (checked by
             * env_select_heap) */
            if (!alg->dav || (!heap && is_direct(alg) && !moves_data(c))) continue;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) dav_one(c, alg, sizes[s]);
            checked++;
        }
    if (checked == 0) {
        fails++;
        if (rank == 0) printf("FAIL dav: no algorithm has a DAV model\n");
    }
}

/* Publications and DAV of one call of alg (forced), summed over the ranks. */
static uint64_t syncs_of(mc_coll_t c, size_t n, const char *alg, uint64_t *dav)
{
    uint64_t bytes, syncs;
    int ran;
    mcoll_set_alg(mc_coll_name(c), alg);
    *dav = measure_syncs(c, n, alg, &bytes, &ran, &syncs);
    mcoll_set_alg(mc_coll_name(c), NULL);
    return syncs;
}

/* A reduction's shm_direct on ordinary buffers stages (the same DAV as shm_ma): its posting
 * round hands the op on to the MA engine (mc_shm_continue), so the call publishes the MA
 * engine's flags plus the round's STEP, one per rank; ending the op there and beginning
 * another would add every rank's DONE. */
static void test_continue(void)
{
    const mc_coll_t colls[] = {MC_ALLREDUCE, MC_REDUCE, MC_REDUCE_SCATTER_BLOCK};
    if (heap || size < 2) return;
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        size_t n = colls[i] == MC_REDUCE_SCATTER_BLOCK ? 4099 : 32771;
        uint64_t dav_ma, dav_direct, ma = syncs_of(colls[i], n, "shm_ma", &dav_ma);
        uint64_t direct = syncs_of(colls[i], n, "shm_direct", &dav_direct);
        if (dav_direct != dav_ma) { /* it went direct (CMA): nothing to compare */
            if (rank == 0) printf("continue %s: shm_direct did not stage, skipped\n", mc_coll_name(colls[i]));
            continue;
        }
        if (direct != ma + (uint64_t)size) {
            fails++;
            if (rank == 0)
                printf("FAIL continue %s: shm_direct staged %llu publications, shm_ma %llu (+%d expected)\n",
                       mc_coll_name(colls[i]), (unsigned long long)direct, (unsigned long long)ma, size);
        }
    }
}

/* No mcoll entry in /dev/shm and no descriptor of the region left open. */
static void test_hygiene(void)
{
    call(MC_ALLREDUCE, 1000);
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, "mcoll", 5)) {
            fails++;
            printf("FAIL hygiene: /dev/shm/%s exists\n", e->d_name);
        }
    if (d) closedir(d);
    d = opendir("/proc/self/fd");
    while (d && (e = readdir(d))) {
        char path[300], target[300];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n > 0 && (target[n] = 0, strstr(target, "mcoll-node"))) {
            fails++;
            printf("FAIL hygiene: descriptor %s -> %s still open\n", e->d_name, target);
        }
    }
    if (d) closedir(d);
}

/* The waits' spin before a yield (sync.c): MCOLL_SHM_SPIN when set, else 256 pause
 * instructions, 4 once a communicator has more ranks on this node than the node has online
 * CPUs (every rank of a test runs on one node), 1 on a single CPU. Pairs of ranks first: the
 * limit then follows the world's collective, the largest communicator, and keeps to it. */
static int spin_after(MPI_Comm comm)
{
    double x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
    return mc_shm_spin_limit();
}

static void test_spin(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("MCOLL_SHM_SPIN");
    int forced = env ? atoi(env) : 0;
    MPI_Comm pairs, pairs2;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, 0, &pairs);
    int alone = spin_after(pairs), all = spin_after(MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, 0, &pairs2);
    int later = spin_after(pairs2);
    MPI_Comm_free(&pairs), MPI_Comm_free(&pairs2);
    int want = forced > 0 ? forced : cpus <= 1 ? 1 : size > cpus ? 4 : 256;
    int want_pairs = forced > 0 ? forced : cpus <= 1 ? 1 : 2 > cpus ? 4 : 256;
    if (alone != want_pairs || all != want || later != want) {
        fails++;
        printf("FAIL spin: %d ranks on %ld CPUs, MCOLL_SHM_SPIN=%s: %d / %d / %d spins after the pairs', the "
               "world's, new pairs' collective, expected %d / %d / %d\n", size, cpus, env ? env : "(unset)",
               alone, all, later, want_pairs, want, want);
    }
    if (rank == 0) printf("spin: %d ranks on %ld CPUs: %d spins\n", size, cpus, all);
}

/* Input of rank r, element i, iteration it (small integers: sums are exact in double). */
static double val(int it, int r, int i) { return (double)((it * 7 + r * 13 + i * 3) % 1000); }

static void check(const char *what, int it, int i, double got, double want)
{
    if (got != want && fails++ < 10) printf("FAIL race %s: iteration %d element %d: %g, expected %g\n", what, it, i, got, want);
}

/* Delay that differs per rank and iteration, so ranks run ahead of each other by a few ops. */
static void skew(int it)
{
    unsigned h = (unsigned)(it * 2654435761u) ^ (unsigned)(rank * 40503u);
    if (h % 7 == 0) usleep(h % 50);
    else for (volatile int k = 0; k < (int)(h % 2000); k++) {}
}

/* On a crowded node (here from 3 ranks) shm_pipe's bcast of at most 256 KiB writes half
 * op % 2 of the data area, its root waiting for the readers of op - 2 only when op - 1 kept
 * to the other half: a run of them (4, 32 and
 * 96 KiB), roots rotating, readers skewed, every 8th call one of 384 KiB that uses the whole
 * area (its root waits for op - 1's readers again, and the next half one's for its readers:
 * one of them, not the next root, starts it 1 ms late) and a barrier before every 8th + 3
 * (an op that leaves the area alone). A root that overwrote a half still being read shows as
 * a wrong value: `race_pipe` with a region of 256 KiB, where the whole-area call covers both
 * halves (with the default region its ring stays in half 0), failed at 3 ranks when the
 * quiesce went back to op - 2 after any op (checked by hand). */
static void race_pipe_bcast(int iters)
{
    enum { WHOLE = 48 << 10 }; /* doubles */
    double *b = malloc(sizeof(double) * WHOLE);
    mcoll_set_alg("bcast", "shm_pipe");
    for (int it = 0; it < iters; it++) {
        int n = it % 8 == 7 ? WHOLE : it % 3 == 0 ? 512 : it % 3 == 1 ? 4096 : 12288, root = it % size;
        for (int i = 0; i < n; i++) b[i] = val(it, rank, i);
        if (n == WHOLE && size > 2 && rank == (root + 2) % size)
            usleep(1000);
        else if (rank != root)
            skew(it);
        if (it % 8 == 3) MPI_Barrier(MPI_COMM_WORLD);
        MPI_Bcast(b, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) check("pipe bcast run", it, i, b[i], val(it, root, i));
    }
    mcoll_set_alg("bcast", "auto");
    free(b);
}

static void test_race(int iters)
{
    enum { NMAX = 256 };
    double s[NMAX * 8], r[NMAX * 8];
    for (int it = 0; it < iters; it++) { /* no early exit: ranks must make the same calls */
        /* 96 bytes (inline in the flag line), 2 KiB (symmetric buffers), 512 B */
        int N = (it / 5) % 3 == 0 ? 12 : (it / 5) % 3 == 1 ? 256 : 64;
        int nb = N / size ? N / size : 1;
        skew(it);
        for (int i = 0; i < N * size; i++) s[i] = val(it, rank, i);
        int kind = it % 5;
        if (kind == 0 || kind == 3) {
            MPI_Allreduce(s, r, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            for (int i = 0; i < N; i++) {
                double w = 0;
                for (int k = 0; k < size; k++) w += val(it, k, i);
                check("allreduce", it, i, r[i], w);
            }
        } else if (kind == 1) {
            MPI_Reduce_scatter_block(s, r, nb, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            for (int i = 0; i < nb; i++) {
                double w = 0;
                for (int k = 0; k < size; k++) w += val(it, k, rank * nb + i);
                check("reduce_scatter_block", it, i, r[i], w);
            }
        } else if (kind == 2) {
            int root = it % size;
            MPI_Bcast(s, N, MPI_DOUBLE, root, MPI_COMM_WORLD);
            for (int i = 0; i < N; i++) check("bcast", it, i, s[i], val(it, root, i));
            int root2 = (it / 5) % size;
            for (int i = 0; i < N; i++) s[i] = val(it, rank, i);
            MPI_Reduce(s, r, N, MPI_DOUBLE, MPI_SUM, root2, MPI_COMM_WORLD);
            for (int i = 0; rank == root2 && i < N; i++) {
                double w = 0;
                for (int k = 0; k < size; k++) w += val(it, k, i);
                check("reduce", it, i, r[i], w);
            }
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            /* blocks of 12/size .. 256 doubles: the writers' STEP payloads or the data area */
            MPI_Allgather(s, nb, MPI_DOUBLE, r, nb, MPI_DOUBLE, MPI_COMM_WORLD);
            for (int i = 0; i < nb * size; i++) check("allgather", it, i, r[i], val(it, i / nb, i % nb));
            int root = (it / 5) % size;
            MPI_Gather(s, nb, MPI_DOUBLE, r, nb, MPI_DOUBLE, root, MPI_COMM_WORLD);
            for (int i = 0; rank == root && i < nb * size; i++) check("gather", it, i, r[i], val(it, i / nb, i % nb));
        }
    }
    /* Runs of one rooted kind with nothing in between, the receiving side slowed down: a
     * writer may run ahead only as far as its buffers allow (reduce: the fan-in exchange,
     * bcast: the fan-out exchange, gather: the STEP ring). */
    for (int it = 0; it < iters / 2; it++) { /* 96 B inline, 512 B: both the fan-in exchange
                                                * (a larger one would take the general path,
                                                * whose op syncs, and hide a missing guard) */
        int N = it % 2 ? 12 : 64, root = (it / 64) % size;
        for (int i = 0; i < N; i++) s[i] = val(it, rank, i);
        if (rank == root) skew(it);
        MPI_Reduce(s, r, N, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        for (int i = 0; rank == root && i < N; i++) {
            double w = 0;
            for (int k = 0; k < size; k++) w += val(it, k, i);
            check("reduce run", it, i, r[i], w);
        }
    }
    for (int it = 0; it < iters / 2; it++) {
        /* fan-out payloads: 96 B inline, 1 KiB after the line, 2 KiB (its payload alone
         * claimed), each in a run of its own */
        int N = it < iters / 6 ? 12 : it < iters / 3 ? 128 : 256, root = (it / 64) % size;
        for (int i = 0; i < N; i++) s[i] = val(it, rank, i);
        if (rank != root) skew(it);
        MPI_Bcast(s, N, MPI_DOUBLE, root, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++) check("bcast run", it, i, s[i], val(it, root, i));
    }
    for (int it = 0; it < iters / 2; it++) { /* the root slowed: the others write ahead */
        int N = it < iters / 4 ? 12 : 256, root = (it / 64) % size;
        for (int i = 0; i < N; i++) s[i] = val(it, rank, i);
        if (rank == root) skew(it);
        MPI_Gather(s, N, MPI_DOUBLE, r, N, MPI_DOUBLE, root, MPI_COMM_WORLD);
        for (int i = 0; rank == root && i < N * size; i++) check("gather run", it, i, r[i], val(it, i / N, i % N));
    }
    race_pipe_bcast(iters / 20);
    if (rank == 0) printf("race: %d iterations, last algorithm allreduce %s\n", iters, mcoll_last_alg("allreduce"));
}

/* Sum over the ranks of the bytes one call of c (n doubles per rank and block; malloc
 * buffers, or the shared heap's with zero_copy) wrote with streaming stores; its result
 * checked. */
/* One call on this rank: its streamed bytes (far_call_on: over all ranks). */
static int far_inplace; /* allreduce: odd iterations in place */
static uint64_t far_call_mine(mc_coll_t c, size_t n, int it, int zero_copy)
{
    size_t in = c == MC_REDUCE_SCATTER_BLOCK ? n * (size_t)size : n;
    double *s = alloc_on(zero_copy, in * sizeof(double)), *r = alloc_on(zero_copy, n * sizeof(double));
    for (size_t i = 0; i < in; i++) s[i] = val(it, rank, (int)(i % 4096));
    int inplace = far_inplace && c == MC_ALLREDUCE && it % 2;
    const void *sb = inplace ? MPI_IN_PLACE : s;
    if (inplace) memcpy(r, s, n * sizeof(double));
    uint64_t before = mc_nt_bytes;
    if (c == MC_ALLREDUCE) MPI_Allreduce(sb, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else if (c == MC_REDUCE) MPI_Reduce(s, r, (int)n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    else MPI_Reduce_scatter_block(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    uint64_t mine = mc_nt_bytes - before;
    for (size_t i = 0; (c != MC_REDUCE || rank == 0) && i < n; i++) {
        size_t at = c == MC_REDUCE_SCATTER_BLOCK ? (size_t)rank * n + i : i;
        double w = 0;
        for (int k = 0; k < size; k++) w += val(it, k, (int)(at % 4096));
        if (r[i] != w) {
            check(mc_coll_name(c), it, (int)i, r[i], w);
            break;
        }
    }
    release_on(zero_copy, s);
    release_on(zero_copy, r);
    return mine;
}

static uint64_t far_call_on(mc_coll_t c, size_t n, int it, int zero_copy)
{
    uint64_t mine = far_call_mine(c, n, it, zero_copy), sum = 0;
    PMPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

static uint64_t far_call(mc_coll_t c, size_t n, int it) { return far_call_on(c, n, it, 0); }

/* got within slack bytes of want_far (far) or 0 (near) */
static void far_expect_about(const char *what, int far, uint64_t got, double want_far, double slack)
{
    double want = far ? want_far : 0;
    if (fabs((double)got - want) <= slack) return;
    fails++;
    if (rank == 0)
        printf("FAIL far: %s (%s): %llu bytes streamed, expected %.0f\n", what, far ? "streams" : "no streaming",
               (unsigned long long)got, want);
}

static void far_expect(const char *what, int far, uint64_t got, uint64_t want_far)
{
    far_expect_about(what, far, got, (double)want_far, 0);
}

/* A zero-copy allgather (shm_direct): blocks far below the cache are pulled (plain copies)
 * when near and pushed when a rank votes far (every rank streams its block into the p
 * receive buffers); blocks whose call takes 3/4 of the cache capacity C (beyond C/2) are
 * pushed near too. Without a shareable heap it copies by CMA or through the region, both
 * temporal below C: nothing streams. */
static void far_allgather(int far, int it, int half_cache)
{
    uint64_t p = (uint64_t)size;
    int n = half_cache ? (int)((double)mc_cache_capacity(size) * 0.75 / (double)(p * (p + 1)) / sizeof(double))
                       : 8192; /* 64 KiB blocks */
    double *s = mcoll_malloc((size_t)n * sizeof(double)), *r = mcoll_malloc((size_t)n * (size_t)size * sizeof(double));
    if (!s || !r) abort();
    for (int i = 0; i < n; i++) s[i] = val(it, rank, i);
    uint64_t id, before = mc_nt_bytes, mine, sum = 0;
    int64_t off;
    int zero = mc_heap_shareable() && mc_heap_lookup_range(s, (size_t)n * sizeof(double), &id, &off) &&
               mc_heap_lookup_range(r, (size_t)n * (size_t)size * sizeof(double), &id, &off), all_zero = 0;
    mcoll_set_alg("allgather", "shm_direct");
    MPI_Allgather(s, n, MPI_DOUBLE, r, n, MPI_DOUBLE, MPI_COMM_WORLD);
    mine = mc_nt_bytes - before;
    for (int k = 0; k < size; k++)
        for (int i = 0; i < n; i++)
            if (r[(size_t)k * (size_t)n + (size_t)i] != val(it, k, i)) {
                check("allgather", it, i, r[(size_t)k * (size_t)n + (size_t)i], val(it, k, i));
                k = size;
                break;
            }
    PMPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(&zero, &all_zero, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    char what[96];
    snprintf(what, sizeof what, "%sallgather of %d KiB blocks%s", all_zero ? "zero-copy " : "", (int)(n * sizeof(double) >> 10),
             all_zero ? "" : " by CMA");
    far_expect(what, (far || half_cache) && all_zero, sum, p * p * (uint64_t)n * sizeof(double));
    mcoll_set_alg("allgather", "auto");
    mcoll_free(s);
    mcoll_free(r);
}

/* A pipe call's user-buffer bytes (every rank's buffers together) for n bytes per rank, and
 * whether they lie in the hand-over band (p L1 <= user < p L2, hwloc's sizes): there a far
 * node keeps the pipe, whose copy-ins stream. */
static size_t pipe_user(mc_coll_t c, size_t n)
{
    size_t p = (size_t)size;
    return c == MC_BCAST ? n * p : c == MC_ALLGATHER ? n * p * (p + 1) : c == MC_ALLTOALL ? 2 * n * p * p : 2 * n * p;
}

static int in_band(size_t user)
{
    mc_topo_t t;
    mc_topo_get(&t);
    size_t p = (size_t)size, l1 = t.l1d ? t.l1d : 32768;
    return user >= p * l1 && user < p * t.l2;
}

/* The smallest n (16 KiB and 4 KiB steps) whose call lies at or above p L2: above the band. */
static size_t above_band(mc_coll_t c)
{
    mc_topo_t t;
    mc_topo_get(&t);
    size_t n = 16384;
    while (pipe_user(c, n) < (size_t)size * t.l2) n += 4096;
    return n;
}

/* The data movers forced to shm_pipe, ordinary buffers: when every rank finds the node far
 * (and CMA works) they run the direct protocol instead (its DAV), unless the call lies in the
 * hand-over band, where the pipe streams its copy-ins (64 KiB per rank: in the band at 2
 * ranks here); else the pipe. Forced to shm_direct with 64 KiB per rank (below every size
 * that stages near) they copy by CMA near, and stage through the pipe far when the call lies
 * in the band, bcast excepted. gather's shm_direct with 1 MiB blocks (near, it stages from
 * there) copies by CMA too when far, unless its copies would stream. */
static const char *far_mover_expect(mc_coll_t c, const char *alg, size_t n, int far, int cma)
{
    int streams = 2.0 * (double)n * size > (double)mc_cache_capacity(size);
    int band = in_band(pipe_user(c, n));
    if (!strcmp(alg, "shm_pipe")) return far && cma && !streams && !band ? "shm_direct" : "shm_pipe";
    if (!cma) return "shm_pipe";
    if (n >= (1 << 20)) return far && !streams ? "shm_direct" : "shm_pipe";   /* gather of 1 MiB */
    return far && band && c != MC_BCAST ? "shm_pipe" : "shm_direct";
}

static void far_pipes(int far, int cma)
{
    const mc_coll_t movers[] = {MC_BCAST, MC_ALLGATHER, MC_GATHER, MC_SCATTER, MC_ALLTOALL};
    struct mover_case { mc_coll_t c; const char *alg; size_t n; } cs[16];
    int ncs = 0;
    for (int i = 0; i < 5; i++) {
        cs[ncs++] = (struct mover_case){movers[i], "shm_pipe", 65536};
        cs[ncs++] = (struct mover_case){movers[i], "shm_pipe", above_band(movers[i])};
        cs[ncs++] = (struct mover_case){movers[i], "shm_direct", 65536};
    }
    cs[ncs++] = (struct mover_case){MC_GATHER, "shm_direct", 1 << 20};
    for (int i = 0; i < ncs; i++) {
        const char *name = mc_coll_name(cs[i].c), *alg = cs[i].alg;
        uint64_t bytes;
        int ran;
        mcoll_set_alg(name, alg);
        uint64_t got = measure(cs[i].c, cs[i].n, alg, &bytes, &ran);
        mcoll_set_alg(name, "auto");
        const mc_alg_t *model = mc_alg_find(cs[i].c, far_mover_expect(cs[i].c, alg, cs[i].n, far, cma));
        mc_cost_in_t in = {.p = size, .m = (double)bytes, .ms = (double)bytes, .sockets = 1};
        if (!ran || !model || (double)got != model->dav(&in)) {
            fails++;
            if (rank == 0)
                printf("FAIL far: %s %s of %zu KiB, %s node%s: ran %d, DAV %llu, expected %s's %.0f\n", name,
                       alg, cs[i].n >> 10, far ? "far" : "near", cma ? "" : " without CMA", ran, (unsigned long long)got,
                       model ? model->name : "?", model ? model->dav(&in) : -1.0);
        }
    }
}

/* Whether the node's DAV of one call (mine summed over c) is the model d's. */
static int dav_matches(MPI_Comm c, uint64_t mine, const mc_alg_t *d, const mc_cost_in_t *in)
{
    uint64_t sum = 0;
    PMPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, c);
    return (double)sum == d->dav(in);
}

/* A recheck test's verdict: the calls went direct exactly when the node is far and CMA works. */
static void recheck_verdict(const char *what, int direct, int far, int cma, int calls)
{
    if (direct != (far && cma)) {
        fails++;
        if (rank == 0)
            printf("FAIL far: %s on a fresh communicator, %s node%s: %s after %d calls\n", what, far ? "far" : "near",
                   cma ? "" : " without CMA", direct ? "went direct" : "stayed pipes", calls);
    } else if (rank == 0) {
        printf("far: %s on a fresh communicator: %s after %d calls\n", what, direct ? "direct" : "pipes", calls);
    }
}

/* A program that only runs pipes notices a far node too: every 64th bcast that could go
 * direct starts with the posting round (a distance sample, the votes), and once every rank
 * votes far the calls run direct (their DAV). On a fresh communicator: its own region, no
 * samples yet; the root reaches each round first and may never sample (its readers are still
 * copying out), so it goes by the others' votes: direct from the third round on (the first
 * samples, their votes, the root's), within 16 rounds here. Near, the calls stay pipes. */
static void far_recheck(int far, int cma, int it)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    mcoll_set_alg("bcast", "shm_pipe");
    int n = (int)(above_band(MC_BCAST) / sizeof(double)), calls = 0, direct = 0, limit = far && cma ? 64 * 16 : 300;
    double *buf = malloc((size_t)n * sizeof(double));
    if (!buf) abort();
    const mc_alg_t *d = mc_alg_find(MC_BCAST, "shm_direct");
    mc_cost_in_t in = {.p = size, .m = (double)n * sizeof(double), .ms = (double)n * sizeof(double), .sockets = 1};
    for (; calls < limit && !direct; calls++, it++) {
        for (int i = 0; i < n; i++) buf[i] = rank == 0 ? val(it, 0, i) : -1;
        mcoll_stats_t s0, s1;
        mcoll_stats_get("bcast", &s0);
        MPI_Bcast(buf, n, MPI_DOUBLE, 0, c);
        mcoll_stats_get("bcast", &s1);
        for (int i = 0; i < n; i++)
            if (buf[i] != val(it, 0, i)) {
                check("bcast", it, i, buf[i], val(it, 0, i));
                break;
            }
        direct = dav_matches(c, s1.dav - s0.dav, d, &in);
    }
    mcoll_set_alg("bcast", "auto");
    recheck_verdict("pipe-only bcasts above the hand-over band", direct, far, cma, calls);
    free(buf);
    MPI_Comm_free(&c);
}

/* The same for shm_hybrid's scatterv, whose sizes differ between ranks: every 64th call
 * starts with the direct algorithm's posting round, and once every rank votes far its
 * blocks of 32 KiB (MV_FAR_DIRECT and up) go direct (2pm of DAV, the pipe's 2(2p-1)m). */
static void far_recheck_v(int far, int cma, int it)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    mcoll_set_alg("scatterv", "shm_hybrid");
    int n = 4096, calls = 0, direct = 0, limit = far && cma ? 64 * 400 : 300;
    double *sb = malloc((size_t)n * (size_t)size * sizeof(double)), *rb = malloc((size_t)n * sizeof(double));
    int *cnt = malloc((size_t)size * sizeof(int)), *dsp = malloc((size_t)size * sizeof(int));
    if (!sb || !rb || !cnt || !dsp) abort();
    for (int k = 0; k < size; k++) cnt[k] = n, dsp[k] = k * n;
    const mc_alg_t *d = mc_alg_find(MC_SCATTERV, "shm_direct");
    mc_cost_in_t in = {.p = size, .m = (double)n * sizeof(double), .ms = (double)n * sizeof(double), .sockets = 1};
    for (; calls < limit && !direct; calls++, it++) {
        for (int k = 0; k < size; k++)
            for (int i = 0; i < n; i++) sb[(size_t)k * (size_t)n + (size_t)i] = val(it, k, i);
        mcoll_stats_t s0, s1;
        mcoll_stats_get("scatterv", &s0);
        MPI_Scatterv(sb, cnt, dsp, MPI_DOUBLE, rb, n, MPI_DOUBLE, 0, c);
        mcoll_stats_get("scatterv", &s1);
        for (int i = 0; i < n; i++)
            if (rb[i] != val(it, rank, i)) {
                check("scatterv", it, i, rb[i], val(it, rank, i));
                break;
            }
        direct = dav_matches(c, s1.dav - s0.dav, d, &in);
    }
    mcoll_set_alg("scatterv", "auto");
    recheck_verdict("hybrid scatterv of 32 KiB blocks", direct, far, cma, calls);
    free(sb), free(rb), free(cnt), free(dsp);
    MPI_Comm_free(&c);
}

/* A scan of 16 KiB per rank and more begins with the far votes (its distance sample too):
 * once a rank finds the node far every writer streams its windows (the p - 1 writers of an
 * exscan, m bytes each), near it streams none at a size outside the hand-over band (1 MiB per
 * rank: 2(p-1) MiB of user buffers, at or above p L2s here, below the cache capacity), nor
 * far on an oversubscribed node (stream: the writers must stream). On a fresh communicator:
 * no samples yet, so far takes a few calls. */
static void far_scan(int stream, int it)
{
    mc_topo_t t;
    mc_topo_get(&t);
    size_t p = (size_t)size, m = (size_t)1 << 20, user = 2 * m * (p - 1), l1 = t.l1d ? t.l1d : 32768;
    if (size < 2 || (!stream && ((user >= p * l1 && user < p * t.l2) || user > mc_cache_capacity(size)))) {
        if (rank == 0) printf("far: exscan of 1 MiB: %s, skipped\n", size < 2 ? "one rank" : "its hand-overs stream near too here (the band, or beyond the cache)");
        return;
    }
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int n = (int)(m / sizeof(double)), calls = 0, limit = stream ? 300 : 100;
    uint64_t streamed = 0, want = (p - 1) * m;
    double *s = malloc(m), *r = malloc(m);
    if (!s || !r) abort();
    mcoll_set_alg("exscan", "shm");
    for (; calls < limit && streamed != want; calls++, it++) {
        for (int i = 0; i < n; i++) s[i] = val(it, rank, i % 4096);
        uint64_t before = mc_nt_bytes, mine;
        MPI_Exscan(s, r, n, MPI_DOUBLE, MPI_SUM, c);
        mine = mc_nt_bytes - before;
        for (int i = 0; rank > 0 && i < n; i++) {
            double w = 0;
            for (int k = 0; k < rank; k++) w += val(it, k, i % 4096);
            if (r[i] != w) {
                check("exscan", it, i, r[i], w);
                break;
            }
        }
        PMPI_Allreduce(&mine, &streamed, 1, MPI_UINT64_T, MPI_SUM, c);
        if (streamed && streamed != want) break;
    }
    mcoll_set_alg("exscan", "auto");
    if (streamed != (stream ? want : 0)) {
        fails++;
        if (rank == 0)
            printf("FAIL far: exscan of 1 MiB on a fresh communicator, hand-overs %s: %llu bytes streamed after %d "
                   "calls, expected %llu\n", stream ? "streamed" : "temporal", (unsigned long long)streamed, calls,
                   (unsigned long long)(stream ? want : 0));
    } else if (rank == 0) {
        printf("far: exscan of 1 MiB on a fresh communicator: %s after %d calls\n", streamed ? "windows streamed" : "temporal", calls);
    }
    free(s), free(r);
    MPI_Comm_free(&c);
}

/* The streamed bytes of one call of c forced to alg (n units), summed over the ranks, after
 * a warm-up call. */
static uint64_t streamed_by(mc_coll_t c, const char *alg, size_t n)
{
    const char *name = mc_coll_name(c);
    mcoll_set_alg(name, alg);
    call(c, n); /* warm */
    uint64_t before = mc_nt_bytes, mine, sum = 0;
    call(c, n);
    mine = mc_nt_bytes - before;
    mcoll_set_alg(name, "auto");
    PMPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

/* Near, what a writer hands another core through the region streams while the call's
 * buffers lie between the cores' L1s and L2s (hwloc's topology): a bcast pipe of 64 KiB (the
 * root's m bytes), an exscan of 64 KiB (p - 1 writers), an allgather pipe of 16 KiB blocks
 * (every rank's block); a bcast pipe of a quarter of an L1 (within the L1s) or of 4 MiB
 * (beyond the L2s, below the cache capacity) streams nothing (pipes of smaller blocks:
 * small_handover). */
static void near_handover(void)
{
    mc_topo_t t;
    mc_topo_get(&t);
    size_t p = (size_t)size, m = 65536, big = (size_t)4 << 20;
    size_t l1 = t.l1d ? t.l1d : 32768;
    int band = t.l2 > 2 * m && l1 <= m; /* 64 KiB: the calls' buffers (2pm) within p L1 .. p L2 */
    const struct { mc_coll_t c; const char *alg; size_t n, unit, want; } cs[] = {
        {MC_BCAST, "shm_pipe", m, 1, band ? m : 0},
        {MC_EXSCAN, "shm", m / 8, 8, band ? (p - 1) * m : 0},
        {MC_BCAST, "shm_pipe", l1 / 4, 1, 0},
        {MC_BCAST, "shm_pipe", big, 1, 0},
        {MC_ALLGATHER, "shm_pipe", 16384, 1, in_band(pipe_user(MC_ALLGATHER, 16384)) ? p * 16384 : 0}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const char *name = mc_coll_name(cs[i].c);
        if (cs[i].n * cs[i].unit * 2 * p > mc_cache_capacity(size)) continue;
        uint64_t sum = streamed_by(cs[i].c, cs[i].alg, cs[i].n);
        if (sum != cs[i].want) {
            fails++;
            if (rank == 0)
                printf("FAIL near: %s %s of %zu KiB streamed %llu bytes, expected %zu (L2 %zu)\n", name,
                       cs[i].alg, cs[i].n * cs[i].unit >> 10, (unsigned long long)sum, cs[i].want, t.l2);
        }
    }
    /* zero-copy allreduce results are pushed, whatever the topology: every rank streams its
     * chunk's result into the p rbufs (p s bytes in all) */
    if (!mc_heap_shareable()) return;
    size_t n = m / sizeof(double);
    mcoll_set_alg("allreduce", "shm_direct");
    far_call_on(MC_ALLREDUCE, n, 0, 1); /* the first call maps the peers' heap segments */
    uint64_t sum = far_call_on(MC_ALLREDUCE, n, 1, 1);
    mcoll_set_alg("allreduce", "auto");
    if (sum != p * m) {
        fails++;
        if (rank == 0)
            printf("FAIL near: zero-copy allreduce of 64 KiB streamed %llu bytes, expected %zu (pushed)\n",
                   (unsigned long long)sum, p * m);
    }
}

/* Pipes of blocks under 16 KiB in the band hand over with temporal stores near
 * (near_handover) and stream far, as every hand-over in the band: allgather of 12 KiB blocks
 * (every rank's block), alltoall of 8 KiB blocks (p - 1 per rank). */
static void small_handover(int far)
{
    size_t p = (size_t)size;
    const struct { mc_coll_t c; size_t n, streamed; } cs[] = {
        {MC_ALLGATHER, 12288, p * 12288}, {MC_ALLTOALL, 8192, p * (p - 1) * 8192}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        size_t want = far && in_band(pipe_user(cs[i].c, cs[i].n)) ? cs[i].streamed : 0;
        uint64_t sum = streamed_by(cs[i].c, "shm_pipe", cs[i].n);
        if (sum != want) {
            fails++;
            if (rank == 0)
                printf("FAIL %s: %s pipe of %zu KiB blocks streamed %llu bytes, expected %zu\n",
                       far ? "far" : "near", mc_coll_name(cs[i].c), cs[i].n >> 10, (unsigned long long)sum,
                       want);
        }
    }
}

static void test_far(void)
{
    long limit = mc_cfg()->shm_far_ns;
    mc_ctx_t *ctx = NULL;
    uint64_t p = (uint64_t)size, n = 1 << 17, s = n * sizeof(double);
    if (size < 2) return;
    /* samples come from the posting rounds of the direct algorithms, here allgather's (a wait
     * that had to yield takes none) */
    mcoll_set_alg("allgather", "shm_direct");
    int far = 0, it = 0;
    for (; it < 2000 && !(far && limit > 0) && (limit > 0 || it < 8); it++) {
        double x[128], y[128 * size];
        for (int i = 0; i < 128; i++) x[i] = val(it, rank, i);
        MPI_Allgather(x, 128, MPI_DOUBLE, y, 128, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int i = 0; i < 128 * size; i++) check("small allgather", it, i, y[i], val(it, i / 128, i % 128));
        int mine = mc_ctx_get(MPI_COMM_WORLD, &ctx) == MPI_SUCCESS && ctx->shm && mc_shm_far(ctx->shm);
        PMPI_Allreduce(&mine, &far, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    int warm = it;
    if (limit == 1 && !far) {
        if (rank == 0)
            printf("far: no line-fetch samples in %d calls (no timestamp counter, or every wait yielded): skipped\n", it);
        return;
    }
    if (limit == 0 && far) {
        fails++;
        if (rank == 0) printf("FAIL far: MCOLL_SHM_FAR_NS=0 and the node counts as far\n");
    }
    /* the reductions' and scans' hand-overs stream only on a node with a CPU per rank
     * (mc_shm_far_stream); the paths below follow the distance alone */
    int stream = far && !mc_host_oversubscribed();
    /* 1 MiB per rank stays below the cache capacity: near, nothing streams; far, every slice
     * written into the region does: allreduce p writes of each (the copy and p - 1
     * reductions), reduce the same but for the root's own piece (its last reduction goes to
     * rbuf; s/p up to one element; at 2 ranks the root's piece is the whole window, so only
     * the other rank's copy-in streams), reduce_scatter_block p - 1 (its last reduction goes
     * to rbuf) */
    mcoll_set_alg("allreduce", "shm_ma");
    mcoll_set_alg("reduce", "shm_ma");
    mcoll_set_alg("reduce_scatter_block", "shm_ma");
    far_expect("allreduce of 1 MiB", stream, far_call(MC_ALLREDUCE, n, it++), p * s);
    double red_far = p == 2 ? (double)s : (double)(p * s) - (double)s / (double)p;
    double elem = p == 2 ? 0 : sizeof(double); /* whole windows at 2 ranks: exact */
    far_expect_about("reduce of 1 MiB", stream, far_call(MC_REDUCE, n, it++), red_far, elem);
    uint64_t rb = n / p * sizeof(double); /* reduce_scatter_block: 1 MiB of input, p blocks */
    far_expect("reduce_scatter_block of 1 MiB", stream, far_call(MC_REDUCE_SCATTER_BLOCK, n / p, it++),
               (p - 1) * p * rb);
    /* ordinary buffers in shm_direct: reduce_scatter_block and reduce run the engine as
     * above; allreduce of 1 MiB, when far and with CMA, copies by CMA (the direct protocol:
     * posting round, results, done: 3 publications per rank, nothing streamed at this size) */
    mcoll_set_alg("allreduce", "shm_direct");
    mcoll_set_alg("reduce", "shm_direct");
    mcoll_set_alg("reduce_scatter_block", "shm_direct");
    far_expect_about("shm_direct reduce of 1 MiB", stream, far_call(MC_REDUCE, n, it++), red_far, elem);
    far_expect("shm_direct reduce_scatter_block of 1 MiB", stream,
               far_call(MC_REDUCE_SCATTER_BLOCK, n / p, it++), (p - 1) * p * rb);
    int cma = ctx && ctx->shm && ctx->shm->cma;
    mcoll_stats_t st0, st1;
    mcoll_stats_get("allreduce", &st0);
    uint64_t streamed = far_call(MC_ALLREDUCE, n, it++), syncs = 0, mine;
    mcoll_stats_get("allreduce", &st1);
    mine = st1.syncs - st0.syncs;
    PMPI_Allreduce(&mine, &syncs, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (far && cma) {
        far_expect("shm_direct allreduce of 1 MiB by CMA", 0, streamed, 0);
        if (syncs != 3 * p) {
            fails++;
            if (rank == 0)
                printf("FAIL far: shm_direct allreduce of 1 MiB on a far node: %llu publications, expected the "
                       "direct protocol's %llu\n", (unsigned long long)syncs, (unsigned long long)(3 * p));
        }
    } else {
        far_expect("shm_direct allreduce of 1 MiB staged", stream, streamed, p * s);
    }
    /* the symmetric exchange: every rank's 2 KiB copy-in streams when far */
    mcoll_set_alg("allreduce", "shm_dpml");
    double x[256], y[256];
    for (int k = 0; k < 2000; k++, it++) {
        for (int i = 0; i < 256; i++) x[i] = val(it, rank, i);
        uint64_t before = mc_nt_bytes, mine, sum = 0;
        MPI_Allreduce(x, y, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        mine = mc_nt_bytes - before;
        for (int i = 0; i < 256; i++) {
            double w = 0;
            for (int q = 0; q < size; q++) w += val(it, q, i);
            check("small allreduce", it, i, y[i], w);
        }
        if (k == 0 || k == 1999) {
            PMPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
            far_expect("allreduce of 2 KiB", stream, sum, p * sizeof x);
        }
    }
    mcoll_set_alg("allreduce", "auto");
    mcoll_set_alg("reduce", "auto");
    mcoll_set_alg("reduce_scatter_block", "auto");
    far_allgather(far, it++, 0);
    far_allgather(far, it++, 1);
    far_pipes(far, cma);
    far_recheck(far, cma, it);
    far_recheck_v(far, cma, it + 100000);
    far_scan(stream, it + 200000);
    if (!far) near_handover();
    small_handover(far);
    if (rank == 0) printf("far: MCOLL_SHM_FAR_NS=%ld, node %s after %d allgather calls\n", limit, far ? "far" : "near", warm);
}

/* ---------------------------------------------------------------- trials (shm/trial.c)
 * The reductions' direct path on ordinary buffers times its ways (staged temporal, staged
 * streamed, CMA) from MC_TRIAL_MIN bytes of input, the zero-copy allreduce its push and pull;
 * the movers, scan and exscan theirs (test_trial). A stand-in clock makes one way the fastest;
 * every call must run the schedule's way, on every rank, by the path that way names, with a
 * correct result. */
static int trial_fast; /* the way the stand-in makes fastest; -1: a different one per rank */
static double trial_time(int way, double ns)
{
    (void)ns;
    if (trial_fast >= 0) return way == trial_fast ? 1e3 : 1e5;
    /* alone, even ranks would take way 0 and odd ones way 2; the largest of the ranks'
     * times (the op's) is lowest for way 2 */
    static const double t[2][3] = {{1e3, 5e4, 2e4}, {3e4, 5e4, 1e3}};
    return t[rank % 2][way];
}

/* The way of call c of a fresh trial (trial.c's schedule), given the fastest way and the
 * ways far behind it (a bit mask) under the stand-in. */
static int trial_expect(uint64_t c, int nways, int best, unsigned behind)
{
    uint64_t n = (uint64_t)nways;
    if (c < MC_TRIAL_BURST * n) return (int)(c / MC_TRIAL_BURST);
    /* turn k (from 0) at call (k + 1) * MC_TRIAL_EVERY tries way k mod n; a way far behind
     * only in round 0 and every MC_TRIAL_FAR_OFF-th round after (round = k / n) */
    uint64_t turn = c / MC_TRIAL_EVERY - 1;
    int behind_w = behind >> (turn % n) & 1;
    if (c % MC_TRIAL_EVERY < MC_TRIAL_BURST && (!behind_w || turn / n % MC_TRIAL_FAR_OFF == 0))
        return (int)(turn % n);
    return best;
}

/* Under the stand-in: the ways more than MC_TRIAL_BEHIND times slower than the fastest (the
 * op's time: the largest over the ranks). */
static unsigned trial_behind(int fast, int nways)
{
    double t[3] = {0, 0, 0}, lo = HUGE_VAL;
    unsigned m = 0;
    for (int w = 0; w < nways; w++) {
        trial_fast = fast;
        for (int k = 0; k < size; k++) {
            int keep = rank;
            rank = k;   /* trial_time reads the rank */
            double x = trial_time(w, 0);
            rank = keep;
            if (x > t[w]) t[w] = x;
        }
        if (t[w] < lo) lo = t[w];
    }
    for (int w = 0; w < nways; w++)
        if (t[w] > MC_TRIAL_BEHIND * lo) m |= 1u << w;
    return m;
}

/* One call of a data mover (n bytes per rank and block, malloc buffers), its result checked;
 * *nt_mine: this rank's streamed bytes; returns its publications. */
static int trial_zc;    /* the movers' buffers in the shared heap (zero copy) */
static uint64_t trial_mover(mc_coll_t c, size_t n, int it, uint64_t *nt_mine)
{
    size_t tot = n * (size_t)size;
    unsigned char *s = alloc_on(trial_zc, tot), *r = alloc_on(trial_zc, tot);
    for (size_t i = 0; i < tot; i++) s[i] = (unsigned char)(i * 7 + (size_t)rank * 13 + (size_t)it);
    mcoll_stats_t st0, st1;
    mcoll_stats_get(mc_coll_name(c), &st0);
    uint64_t nt0 = mc_nt_bytes, nt;
    int scan = c == MC_SCAN || c == MC_EXSCAN, ni = (int)(n / sizeof(int));
    int *si = (int *)(void *)s, *ri = (int *)(void *)r;
    if (scan) for (int i = 0; i < ni; i++) si[i] = i * 7 + rank * 13 + it, ri[i] = -1;
    if (c == MC_ALLGATHER) MPI_Allgather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    else if (c == MC_SCAN) MPI_Scan(s, r, ni, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else if (c == MC_EXSCAN) MPI_Exscan(s, r, ni, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else MPI_Scatter(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    nt = mc_nt_bytes - nt0;
    *nt_mine = nt;
    mcoll_stats_get(mc_coll_name(c), &st1);
    /* scan: the sum over ranks 0..rank (exscan: below rank; rank 0's rbuf untouched) */
    int upto = c == MC_SCAN ? rank + 1 : rank;
    for (int i = 0; scan && upto > 0 && i < ni; i++) {
        int want = i * 7 * upto + 13 * upto * (upto - 1) / 2 + it * upto;
        if (ri[i] != want) {
            check(mc_coll_name(c), it, i, ri[i], want);
            break;
        }
    }
    for (size_t i = 0; !scan && i < (c == MC_ALLGATHER ? tot : n); i++) {
        size_t from = c == MC_ALLGATHER ? i / n : 0, at = c == MC_ALLGATHER ? i % n : (size_t)rank * n + i;
        if (r[i] != (unsigned char)(at * 7 + from * 13 + (size_t)it)) {
            check(mc_coll_name(c), it, (int)i, r[i], (unsigned char)(at * 7 + from * 13 + (size_t)it));
            break;
        }
    }
    release_on(trial_zc, s);
    release_on(trial_zc, r);
    return st1.syncs - st0.syncs;
}

/* Set while a pipe's calls are routed through the trial: staged calls take the posting round
 * only when they share samples (mc_trial_shares), so they publish less outside those. */
static int trial_pipe;
/* Set while allreduce is forced to shm_ma: its windows (way 0) or the symmetric exchange (way
 * 1), up to mc_sym_max(p) bytes of input from MC_TRIAL_MIN */
static int trial_ma;

/* c's trial at n doubles (reductions) or bytes (movers) per rank: 3 ways for the reductions
 * (staged temporal, staged streamed, CMA), 2 for the movers (staged, CMA) and in the hand-over
 * band a third (staged with temporal copy-ins; the first streams them there). */
static void trial_run(mc_coll_t c, size_t n, int fast, int best, int *it)
{
    uint64_t round_lo = UINT64_MAX, plain_hi = 0, nplain = 0;   /* staged calls' publications */
    mc_ctx_t *ctx;
    if (mc_ctx_get(MPI_COMM_WORLD, &ctx) != MPI_SUCCESS || !ctx->shm) {
        fails++;
        if (rank == 0) printf("FAIL trial: no node region\n");
        return;
    }
    mc_shm_t *sh = ctx->shm;
    /* the zero-copy allgather: pull (way 0), push streamed (1) or with temporal stores (2);
     * the zero-copy allreduce: its own trial, push (way 0) or pull (way 1) */
    int mover = c != MC_ALLREDUCE && c != MC_REDUCE;
    int nways = mover && trial_zc ? 3 : mover || trial_zc || trial_ma ? 2 : 3;
    int cma = mover ? 1 : trial_ma ? -1 : 2;
    /* staged calls that skip the posting round: a pipe's (trial_pipe), and the reductions'
     * direct path's once a round found ordinary buffers */
    int skips = mover ? trial_pipe : !trial_zc && !trial_ma;
    /* the user bytes by which the movers (allgatherv/shm_common.c) and scan and exscan
     * (mc_sr_scan) know the band */
    int scan = c == MC_SCAN || c == MC_EXSCAN;
    size_t user = c == MC_ALLGATHER ? n * (size_t)size * (size_t)(size + 1)
                  : c == MC_EXSCAN  ? 2 * n * (size_t)(size - 1)
                                    : 2 * n * (size_t)size;
    int band = mover && !trial_zc && (c != MC_SCAN || user <= mc_cache_capacity(size)) &&
               mc_handover_nt(user, SIZE_MAX, size);
    nways += band;
    if (!sh->cma && !trial_zc && !trial_ma) {
        if (rank == 0) printf("trial: no CMA between the ranks: %s skipped\n", mc_coll_name(c));
        return;
    }
    if (fast >= nways) {
        if (rank == 0)
            printf("trial: %s of %zu per rank not in the hand-over band: skipped\n", mc_coll_name(c), n);
        return;
    }
    unsigned behind = trial_behind(fast, nways);
    /* per call and rank: streamed bytes, publications, way run; gathered once after the
     * calls (one harness collective per call cost MPICH, 3 ranks on 2 cores, ~5 ms each) */
    const uint64_t K = 2 * (uint64_t)nways * MC_TRIAL_EVERY + 8;
    uint64_t *mine = calloc(4 * K, sizeof(uint64_t)), *all = malloc(4 * K * sizeof(uint64_t) * (size_t)size);
    if (!mine || !all) abort();
    trial_fast = fast;
    const char *name = mc_coll_name(c);
    /* turns 0 .. 2 nways - 1: every way's first turn, and the turns where ways far behind
     * are skipped */
    for (uint64_t k = 0; k < K; k++, (*it)++) {
        uint64_t *m = mine + 4 * k, nt_mover = 0;
        m[3] = (uint64_t)mc_shm_ordinary(sh, c); /* the verdict the call starts with */
        if (mover) {
            m[1] = trial_mover(c, n, *it, &nt_mover);
            m[0] = nt_mover;
        } else {
            mcoll_stats_t st0, st1;
            mcoll_stats_get(name, &st0);
            m[0] = far_call_mine(c, n, *it, trial_zc);
            mcoll_stats_get(name, &st1);
            m[1] = st1.syncs - st0.syncs;
        }
        m[2] = (uint64_t)sh->trial_last;
    }
    PMPI_Allgather(mine, (int)(4 * K), MPI_UINT64_T, all, (int)(4 * K), MPI_UINT64_T, MPI_COMM_WORLD);
    for (uint64_t k = 0; k < K; k++) {
        uint64_t nt = 0, syncs = 0, ord = all[4 * k + 3]; /* the verdict: the same on every rank */
        int want = trial_expect(k, nways, best, behind), lo = INT_MAX, hi = INT_MIN;
        for (int q = 0; q < size; q++) {
            const uint64_t *m = all + 4 * (K * (uint64_t)q + k);
            int ran = (int)(int64_t)m[2];
            nt += m[0];
            syncs += m[1];
            lo = ran < lo ? ran : lo;
            hi = ran > hi ? ran : hi;
        }
        /* the path: streaming stores only on the reductions' way 1 and in the band on the
         * movers' way 0 (scan's way 0 outside the band streams when a rank finds the node
         * far: not checked); CMA's direct protocol publishes 3 times per rank (posting
         * round, results or parts, done) in the reductions, twice in the movers (posting
         * round, done), staging more */
        uint64_t direct = (mover ? 2 : 3) * (uint64_t)size;
        int shares = k < MC_TRIAL_BURST * (uint64_t)nways || k % MC_TRIAL_EVERY < MC_TRIAL_BURST + MC_TRIAL_KEEP;
        int staged = want != cma && (mover || skips), streamed = mover ? band && want == 0 : want == 1;
        /* the pipe, or the MA engine once a round found ordinary buffers, alone: checked below */
        int plain = skips && staged && !shares && (mover || ord);
        /* zero copy: the allgather's pull, or push (one more publication per rank: pushed;
         * way 1 streamed, way 2 not); the allreduce's push (streamed) or pull, the direct
         * protocol's publications.
         * shm_ma: the exchange publishes once per rank, twice when it shares a sample; the
         * windows more, their steps and done (whether either streams depends on the node's
         * distance) */
        int path = trial_ma ? (want == 1) == (syncs <= 2 * (uint64_t)size)
                   : trial_zc && mover
                       ? (nt > 0) == (want == 1) && syncs == direct + (want != 0 ? (uint64_t)size : 0)
                   : trial_zc ? (nt > 0) == (want == 0) && syncs == direct
                              : ((scan && want == 0 && !band) || (nt > 0) == streamed) &&
                                    (plain || (syncs == direct) == (want == cma));
        if (staged && skips) {
            if (shares && syncs < round_lo) round_lo = syncs;
            if (plain && syncs > plain_hi) plain_hi = syncs;
            nplain += plain;
        }
        if (lo != want || hi != want || !path) {
            fails++;
            if (rank == 0)
                printf("FAIL trial %s of %zu per rank, call %llu: ran way %d-%d (streamed %llu bytes, %llu "
                       "publications), expected way %d\n", name, n, (unsigned long long)k, lo, hi,
                       (unsigned long long)nt, (unsigned long long)syncs, want);
            break;
        }
    }
    free(mine);
    free(all);
    if (skips && best != cma && (nplain == 0 || round_lo == UINT64_MAX || plain_hi >= round_lo)) {
        fails++;
        if (rank == 0)
            printf("FAIL trial %s of %zu per rank: %llu staged calls without the posting round published up "
                   "to %llu times, those with it at least %llu\n", name, n, (unsigned long long)nplain,
                   (unsigned long long)plain_hi, (unsigned long long)round_lo);
    }
}

static void test_trial(void)
{
    if (size < 2) return;
    int it = 0;
    mc_trial_measure_set(trial_time);
    mcoll_set_alg("allreduce", "shm_direct");
    mcoll_set_alg("reduce", "shm_direct");
    far_call(MC_ALLREDUCE, 1000, it++); /* creates the region (below the trials' sizes) */
    /* a size class each (256 KiB, 512 KiB, 1 MiB, 2 MiB of input): a fresh trial */
    for (int w = 0; w < 3; w++) trial_run(MC_ALLREDUCE, ((size_t)32 << 10) << w, w, w, &it);
    trial_run(MC_ALLREDUCE, (size_t)256 << 10, -1, 2, &it);
    trial_run(MC_REDUCE, (size_t)128 << 10, 2, 2, &it);
    trial_run(MC_REDUCE, (size_t)256 << 10, 0, 0, &it);
    /* shm_ma's allreduce: its windows or the symmetric exchange, at 2 ranks up to 256 KiB of
     * input, from 3 ranks at 32 KiB only (mc_sym_max); every other call in place */
    mcoll_set_alg("allreduce", "shm_ma");
    trial_ma = far_inplace = 1;
    trial_run(MC_ALLREDUCE, (size_t)4 << 10, 1, 1, &it);
    if (size == 2) {
        trial_run(MC_ALLREDUCE, (size_t)8 << 10, 0, 0, &it);
        trial_run(MC_ALLREDUCE, (size_t)32 << 10, 1, 1, &it);
    }
    trial_ma = far_inplace = 0;
    mcoll_set_alg("allreduce", "shm_direct");
    /* the movers' direct algorithm: staged (way 0) or CMA (way 1), from 32 KiB of user buffers;
     * in the hand-over band (allgather 16-64 KiB, scatter 40-64 KiB per rank at 2, 3 and 5 ranks
     * with 32 KiB L1s and 512 KiB L2s) also staged with temporal copy-ins (way 2); each case a
     * size class of its own at every rank count */
    mcoll_set_alg("allgather", "shm_direct");
    mcoll_set_alg("scatter", "shm_direct");
    trial_run(MC_ALLGATHER, (size_t)64 << 10, 0, 0, &it);
    trial_run(MC_ALLGATHER, (size_t)256 << 10, 1, 1, &it);
    trial_run(MC_SCATTER, (size_t)64 << 10, 1, 1, &it);
    trial_run(MC_SCATTER, (size_t)256 << 10, 0, 0, &it);
    trial_run(MC_SCATTER, (size_t)40 << 10, 2, 2, &it);
    /* a pipe's call of 16 KiB per rank or more takes the direct algorithm's posting round and
     * the same trial: staged is the pipe */
    mcoll_set_alg("allgather", "shm_pipe");
    trial_pipe = 1;
    trial_run(MC_ALLGATHER, (size_t)32 << 10, 1, 1, &it);
    trial_run(MC_ALLGATHER, (size_t)16 << 10, 2, 2, &it);
    /* scatter's (and gather's) from 8 KiB per rank */
    mcoll_set_alg("scatter", "shm_pipe");
    trial_run(MC_SCATTER, (size_t)8 << 10, 0, 0, &it);
    trial_run(MC_SCATTER, (size_t)16 << 10, 1, 1, &it);
    mcoll_set_alg("scatter", "shm_direct");
    trial_pipe = 0;
    /* the zero-copy allgather: pull (way 0), push streamed (way 1) or temporal (way 2), up to
     * the cache (beyond it the rule pushes streamed); the last between half the cache and the
     * cache (W = n p (p + 1)), where the rule alone had pushed streamed */
    mcoll_set_alg("allgather", "shm_direct");
    trial_zc = 1;
    trial_run(MC_ALLGATHER, (size_t)16 << 10, 0, 0, &it);
    trial_run(MC_ALLGATHER, (size_t)32 << 10, 1, 1, &it);
    trial_run(MC_ALLGATHER, (size_t)64 << 10, 2, 2, &it);
    size_t upper = mc_cache_capacity(size) / 4 * 3 / ((size_t)size * (size_t)(size + 1)) / 4096 * 4096;
    if (upper >= ((size_t)256 << 10) && upper <= ((size_t)8 << 20)) trial_run(MC_ALLGATHER, upper, 2, 2, &it);
    /* the zero-copy allreduce: push (way 0, streamed) or pull (way 1), from 32 KiB of input */
    trial_run(MC_ALLREDUCE, (size_t)4 << 10, 1, 1, &it);
    trial_run(MC_ALLREDUCE, (size_t)8 << 10, 0, 0, &it);
    trial_zc = 0;
    /* scan and exscan: the staged windows (way 0) or the direct reads (way 1); in the band the
     * windows with temporal stores too (way 2) */
    mcoll_set_alg("scan", "shm");
    mcoll_set_alg("exscan", "shm");
    trial_run(MC_SCAN, (size_t)32 << 10, 1, 1, &it);
    trial_run(MC_SCAN, (size_t)64 << 10, 0, 0, &it);
    trial_run(MC_EXSCAN, (size_t)32 << 10, 1, 1, &it);
    trial_run(MC_EXSCAN, (size_t)64 << 10, 0, 0, &it);
    /* in the band (scan of 16 KiB, exscan of 128 KiB per rank at 2, 3 and 5 ranks with
     * 32 KiB L1s and 512 KiB L2s) the windows with temporal stores (way 2) */
    trial_run(MC_SCAN, (size_t)16 << 10, 2, 2, &it);
    trial_run(MC_EXSCAN, (size_t)128 << 10, 2, 2, &it);
    /* from 8 KiB per rank (16 KiB over the ranks at 2 ranks) */
    trial_run(MC_SCAN, (size_t)8 << 10, 1, 1, &it);
    trial_run(MC_EXSCAN, (size_t)8 << 10, 0, 0, &it);
    mcoll_set_alg("scan", "auto");
    mcoll_set_alg("exscan", "auto");
    mcoll_set_alg("allgather", "auto");
    mcoll_set_alg("scatter", "auto");
    mcoll_set_alg("allreduce", "auto");
    mcoll_set_alg("reduce", "auto");
    mc_trial_measure_set(NULL);
    if (rank == 0) printf("trial: %d calls\n", it);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "dav";
    heap = argc > 2 && !strcmp(argv[2], "--heap");
    if (!strcmp(what, "dav")) {
        test_dav();
        test_continue();
    }
    else if (!strcmp(what, "hygiene")) test_hygiene();
    else if (!strcmp(what, "race")) test_race(size > 4 ? 3000 : 20000);
    else if (!strcmp(what, "race_pipe")) race_pipe_bcast(size > 4 ? 400 : 1600);
    else if (!strcmp(what, "far")) test_far();
    else if (!strcmp(what, "trial")) test_trial();
    else if (!strcmp(what, "spin")) test_spin();
    else if (!strcmp(what, "kill")) {
        call(MC_ALLREDUCE, 1000);
        if (rank == 1 % size) raise(SIGKILL);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int all = 0;
    PMPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all ? "FAIL: %d checks failed\n" : "PASSED\n", all);
    drop_kept();
    MPI_Finalize();
    return all != 0;
}
