/* MPI_THREAD_MULTIPLE: several threads of every rank run collectives at once, each thread on
 * its own communicator (MPI's rule: collectives on one communicator are ordered, on different
 * ones they may run concurrently).
 *
 *   mcoll-threads [--threads T] [--iters N] [--split-every K] [--neighbor K]
 *
 * Thread t works on a duplicate of MPI_COMM_WORLD (t % 3 == 0), a reordered copy (key -rank,
 * t % 3 == 1) or one half of the ranks (t % 3 == 2: color rank % 2, so threads of the two
 * halves run apart). Every iteration runs all sixteen interposed collectives with data from a
 * generator (a pure function of rank, tag and index) and checks every result against values
 * computed from the same generator; sizes cycle from 8 bytes to 1.5 MiB so the small
 * exchanges, the pipes and the direct paths all run; buffers alternate between malloc and
 * MPI_Alloc_mem (the shared heap: zero copy). Every fifth iteration runs on a fresh split of
 * the thread's communicator (reordered; --split-every K), freed right after: mcoll's contexts
 * are created and freed while other threads use theirs. Each thread also drives a persistent
 * neighbor alltoallv of mcoll on a ring (strategy standard, aggregated or dedup by thread)
 * through MPI_Start/MPI_Wait, K times per iteration (--neighbor K, default 50; 0: none), so the
 * neighbor engine's progress runs in several threads at once. At the end every rank checks
 * mcoll's counters: each collective counted exactly the calls its threads made, all handled
 * by mcoll.
 * Run it with virtual nodes (MCOLL_VNODE_SIZE) too: the algorithms that span nodes then build
 * their node and lane contexts inside the threads' calls. */
#include "mcoll.h"
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXT 16
enum { BARRIER, BCAST, REDUCE, ALLREDUCE, ALLGATHER, ALLGATHERV, GATHER, GATHERV, SCATTER, SCATTERV,
       ALLTOALL, ALLTOALLV, REDUCE_SCATTER_BLOCK, REDUCE_SCATTER, SCAN, EXSCAN, NCOLL };
static const char *names[NCOLL] = {"barrier", "bcast", "reduce", "allreduce", "allgather", "allgatherv",
                                   "gather", "gatherv", "scatter", "scatterv", "alltoall", "alltoallv",
                                   "reduce_scatter_block", "reduce_scatter", "scan", "exscan"};
static atomic_ulong calls[NCOLL]; /* this process's calls, all threads */
static atomic_int failures;
static int nthreads = 4, iters = 30, neighbor = 50, split_every = 5, wrank;
static MPI_Comm comms[MAXT], rings[MAXT];
static const char *volatile where[MAXT]; /* the watchdog names what each thread was doing */

static double val(int rank, int tag, long i)
{
    return (double)(((unsigned long)rank * 7919u + (unsigned long)tag * 104729u + (unsigned long)i * 31u) % 8191u);
}

static void fail(int t, const char *what, int tag, long i, double got, double want)
{
    if (atomic_fetch_add(&failures, 1) < 20)
        printf("FAIL rank %d thread %d: %s tag %d index %ld: got %g, expected %g\n", wrank, t, what, tag, i, got,
               want);
}

typedef struct {
    int t, r, p, tag;
    MPI_Comm c;
    int heap;
} job_t;

static double *get(const job_t *j, long n)
{
    void *b = NULL;
    size_t len = (size_t)(n > 0 ? n : 1) * sizeof(double);
    if (j->heap) MPI_Alloc_mem((MPI_Aint)len, MPI_INFO_NULL, &b);
    else b = malloc(len);
    if (!b) {
        printf("FAIL rank %d: out of memory\n", wrank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return b;
}

static void put(const job_t *j, double *b)
{
    if (j->heap) MPI_Free_mem(b);
    else free(b);
}

static void count(int coll)
{
    atomic_fetch_add(&calls[coll], 1);
}

/* Each check: got[i] against want(i) for i < n, first mismatch reported. */
#define CHECK(j, what, got, n, want_expr)                                                          \
    do {                                                                                           \
        for (long i_ = 0; i_ < (long)(n); i_++) {                                                  \
            long i = i_;                                                                           \
            double w_ = (want_expr);                                                               \
            if ((got)[i] != w_) {                                                                  \
                fail((j)->t, what, (j)->tag, i, (got)[i], w_);                                     \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static double sum_upto(int hi, int tag, long i) /* sum of val(q, tag, i), q < hi */
{
    double s = 0;
    for (int q = 0; q < hi; q++) s += val(q, tag, i);
    return s;
}

static double max_of(int p, int tag, long i) /* max of val(q, tag, i), q < p */
{
    double m = 0;
    for (int q = 0; q < p; q++) m = val(q, tag, i) > m ? val(q, tag, i) : m;
    return m;
}

/* v-counts: b + 1 for every other rank (some blocks larger, none empty unless b is 0) */
static int vc(int q, int b)
{
    return b + (q % 2);
}

static void rooted(const job_t *j, long n, long b)
{
    int r = j->r, p = j->p, root = (j->tag / 16) % p, tag = j->tag;
    double *x = get(j, n > b + 1 ? n : b + 1), *y = get(j, (long)p * (b + 1));
    int *cnt = malloc(sizeof(int) * (size_t)p), *dsp = malloc(sizeof(int) * (size_t)p);
    for (int q = 0, d = 0; q < p; d += vc(q, (int)b), q++) cnt[q] = vc(q, (int)b), dsp[q] = d;

    where[j->t] = "bcast";
    for (long i = 0; i < n; i++) x[i] = r == root ? val(root, tag, i) : -1;
    MPI_Bcast(x, (int)n, MPI_DOUBLE, root, j->c), count(BCAST);
    CHECK(j, "bcast", x, n, val(root, tag, i));

    where[j->t] = "reduce";
    for (long i = 0; i < n; i++) x[i] = val(r, tag + 1, i);
    double *z = get(j, n);
    MPI_Reduce(x, z, (int)n, MPI_DOUBLE, MPI_SUM, root, j->c), count(REDUCE);
    if (r == root) CHECK(j, "reduce", z, n, sum_upto(p, tag + 1, i));
    put(j, z);

    where[j->t] = "gather";
    for (long i = 0; i < b; i++) x[i] = val(r, tag + 2, i);
    MPI_Gather(x, (int)b, MPI_DOUBLE, y, (int)b, MPI_DOUBLE, root, j->c), count(GATHER);
    if (r == root) CHECK(j, "gather", y, p * b, val((int)(i / b), tag + 2, i % b));

    where[j->t] = "gatherv";
    for (long i = 0; i < vc(r, (int)b); i++) x[i] = val(r, tag + 3, i);
    MPI_Gatherv(x, vc(r, (int)b), MPI_DOUBLE, y, cnt, dsp, MPI_DOUBLE, root, j->c), count(GATHERV);
    for (int q = 0; r == root && q < p; q++) CHECK(j, "gatherv", y + dsp[q], cnt[q], val(q, tag + 3, i));

    where[j->t] = "scatter";
    if (r == root)
        for (long i = 0; i < p * b; i++) y[i] = val((int)(i / b), tag + 4, i % b);
    MPI_Scatter(y, (int)b, MPI_DOUBLE, x, (int)b, MPI_DOUBLE, root, j->c), count(SCATTER);
    CHECK(j, "scatter", x, b, val(r, tag + 4, i));

    where[j->t] = "scatterv";
    for (int q = 0; r == root && q < p; q++)
        for (long i = 0; i < cnt[q]; i++) y[dsp[q] + i] = val(q, tag + 5, i);
    MPI_Scatterv(y, cnt, dsp, MPI_DOUBLE, x, vc(r, (int)b), MPI_DOUBLE, root, j->c), count(SCATTERV);
    CHECK(j, "scatterv", x, vc(r, (int)b), val(r, tag + 5, i));
    free(cnt), free(dsp);
    put(j, x), put(j, y);
}

static void symmetric(const job_t *j, long n, long b)
{
    int r = j->r, p = j->p, tag = j->tag;
    long len = (long)p * (b + 1) > n ? (long)p * (b + 1) : n;
    double *x = get(j, len), *y = get(j, len);
    int *cnt = malloc(sizeof(int) * (size_t)p), *dsp = malloc(sizeof(int) * (size_t)p);
    int *rc = malloc(sizeof(int) * (size_t)p), *rd = malloc(sizeof(int) * (size_t)p);

    where[j->t] = "allreduce";
    for (long i = 0; i < n; i++) y[i] = val(r, tag + 6, i);
    if (tag & 16) MPI_Allreduce(MPI_IN_PLACE, y, (int)n, MPI_DOUBLE, MPI_MAX, j->c);
    else {
        memcpy(x, y, sizeof(double) * (size_t)n);
        MPI_Allreduce(x, y, (int)n, MPI_DOUBLE, MPI_MAX, j->c);
    }
    count(ALLREDUCE);
    CHECK(j, "allreduce", y, n, max_of(p, tag + 6, i));

    where[j->t] = "allgather";
    for (long i = 0; i < b; i++) x[i] = val(r, tag + 7, i);
    MPI_Allgather(x, (int)b, MPI_DOUBLE, y, (int)b, MPI_DOUBLE, j->c), count(ALLGATHER);
    CHECK(j, "allgather", y, p * b, val((int)(i / b), tag + 7, i % b));

    where[j->t] = "allgatherv";
    for (int q = 0, d = 0; q < p; d += vc(q, (int)b), q++) cnt[q] = vc(q, (int)b), dsp[q] = d;
    for (long i = 0; i < cnt[r]; i++) x[i] = val(r, tag + 8, i);
    MPI_Allgatherv(x, cnt[r], MPI_DOUBLE, y, cnt, dsp, MPI_DOUBLE, j->c), count(ALLGATHERV);
    for (int q = 0; q < p; q++) CHECK(j, "allgatherv", y + dsp[q], cnt[q], val(q, tag + 8, i));

    where[j->t] = "alltoall";
    for (long i = 0; i < p * b; i++) x[i] = val(r * p + (int)(i / b), tag + 9, i % b);
    MPI_Alltoall(x, (int)b, MPI_DOUBLE, y, (int)b, MPI_DOUBLE, j->c), count(ALLTOALL);
    CHECK(j, "alltoall", y, p * b, val((int)(i / b) * p + r, tag + 9, i % b));

    where[j->t] = "alltoallv";
    for (int q = 0, d = 0, e = 0; q < p; q++) {
        cnt[q] = vc(r + q, (int)b), dsp[q] = d, d += cnt[q];
        rc[q] = vc(q + r, (int)b), rd[q] = e, e += rc[q];
        for (long i = 0; i < cnt[q]; i++) x[dsp[q] + i] = val(r * p + q, tag + 10, i);
    }
    MPI_Alltoallv(x, cnt, dsp, MPI_DOUBLE, y, rc, rd, MPI_DOUBLE, j->c), count(ALLTOALLV);
    for (int q = 0; q < p; q++) CHECK(j, "alltoallv", y + rd[q], rc[q], val(q * p + r, tag + 10, i));

    where[j->t] = "reduce_scatter_block";
    for (long i = 0; i < p * b; i++) x[i] = val(r, tag + 11, i);
    MPI_Reduce_scatter_block(x, y, (int)b, MPI_DOUBLE, MPI_SUM, j->c), count(REDUCE_SCATTER_BLOCK);
    CHECK(j, "reduce_scatter_block", y, b, sum_upto(p, tag + 11, r * b + i));

    where[j->t] = "reduce_scatter";
    for (int q = 0, d = 0; q < p; d += vc(q, (int)b), q++) cnt[q] = vc(q, (int)b), dsp[q] = d;
    for (long i = 0; i < dsp[p - 1] + cnt[p - 1]; i++) x[i] = val(r, tag + 12, i);
    MPI_Reduce_scatter(x, y, cnt, MPI_DOUBLE, MPI_SUM, j->c), count(REDUCE_SCATTER);
    CHECK(j, "reduce_scatter", y, cnt[r], sum_upto(p, tag + 12, dsp[r] + i));

    where[j->t] = "scan";
    for (long i = 0; i < n; i++) x[i] = val(r, tag + 13, i);
    MPI_Scan(x, y, (int)n, MPI_DOUBLE, MPI_SUM, j->c), count(SCAN);
    CHECK(j, "scan", y, n, sum_upto(r + 1, tag + 13, i));
    MPI_Exscan(x, y, (int)n, MPI_DOUBLE, MPI_SUM, j->c), count(EXSCAN);
    if (r > 0) CHECK(j, "exscan", y, n, sum_upto(r, tag + 13, i));

    free(cnt), free(dsp), free(rc), free(rd);
    put(j, x), put(j, y);
}

/* A ring (left and right neighbor) with m doubles to each; the request from init. */
typedef struct {
    MPI_Request req;
    double *s, *r;
    int m, cnt[2], dsp[2];
} ring_t;

static void ring_init(int t, ring_t *g)
{
    static const char *alg[3] = {"standard", "aggregated", "dedup"};
    MPI_Info info;
    g->m = 700 + 300 * t;
    g->s = malloc(2 * sizeof(double) * (size_t)g->m);
    g->r = malloc(2 * sizeof(double) * (size_t)g->m);
    g->cnt[0] = g->cnt[1] = g->m, g->dsp[0] = 0, g->dsp[1] = g->m;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mcoll_neighbor_alg", alg[t % 3]);
    int rc = mcoll_neighbor_alltoallv_init(g->s, g->cnt, g->dsp, MPI_DOUBLE, g->r, g->cnt, g->dsp, MPI_DOUBLE,
                                           rings[t], info, &g->req);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) fail(t, "neighbor init", 0, 0, rc, MPI_SUCCESS);
}

static void ring_run(int t, ring_t *g, int tag)
{
    int r, p;
    MPI_Comm_rank(rings[t], &r);
    MPI_Comm_size(rings[t], &p);
    int nb[2] = {(r - 1 + p) % p, (r + 1) % p};
    /* block k of the sender goes to its k-th destination: from the left neighbor comes its
     * block 1, from the right its block 0. With 1 or 2 ranks both edges join the same pair,
     * and edges between one pair match in order: block k arrives from the k-th source. */
    for (int k = 0; k < 2; k++)
        for (long i = 0; i < g->m; i++) g->s[k * g->m + i] = val(r * 2 + k, tag, i);
    where[t] = "neighbor";
    MPI_Start(&g->req);
    MPI_Wait(&g->req, MPI_STATUS_IGNORE);
    job_t j = {.t = t, .tag = tag};
    CHECK(&j, "neighbor from left", g->r, g->m, val(nb[0] * 2 + (p > 2), tag, i));
    CHECK(&j, "neighbor from right", g->r + g->m, g->m, val(nb[1] * 2 + (p <= 2), tag, i));
}

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    static const long sizes[] = {1, 130, 3000, 26000, 190000};
    ring_t g;
    if (neighbor) ring_init(t, &g);
    for (int it = 0; it < iters; it++) {
        job_t j = {.t = t, .c = comms[t], .heap = (it + t) % 2, .tag = (it * MAXT + t) * 16};
        MPI_Comm sub = MPI_COMM_NULL;
        if (it % split_every == split_every - 1) {
            where[t] = "split";
            MPI_Comm_rank(comms[t], &j.r);
            MPI_Comm_size(comms[t], &j.p);
            MPI_Comm_split(comms[t], 0, j.p - j.r, &sub);
            j.c = sub;
        }
        MPI_Comm_rank(j.c, &j.r);
        MPI_Comm_size(j.c, &j.p);
        long n = sizes[(it + t) % 5], b = n / j.p + (it % 3 == 0 ? 0 : 1);
        where[t] = "barrier";
        MPI_Barrier(j.c), count(BARRIER);
        rooted(&j, n, b);
        symmetric(&j, n, b);
        for (int k = 0; k < neighbor; k++) ring_run(t, &g, j.tag + k);
        if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
    }
    if (neighbor) {
        MPI_Request_free(&g.req);
        free(g.s), free(g.r);
    }
    where[t] = "done";
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    char line[200];
    for (int t = 0; t < nthreads; t++) {
        int k = snprintf(line, sizeof line, "FAIL watchdog: rank %d thread %d in %s\n", wrank, t,
                         where[t] ? where[t] : "start");
        ssize_t w = write(1, line, (size_t)k);
        (void)w;
    }
    _exit(1);
}

int main(int argc, char **argv)
{
    int provided, size;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--split-every") && i + 1 < argc) split_every = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--neighbor") && i + 1 < argc) neighbor = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: mcoll-threads [--threads T] [--iters N] [--split-every K] [--neighbor K]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > MAXT) nthreads = 4;
    if (split_every < 1) split_every = 5;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("FAIL: the MPI provides thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
        MPI_Finalize();
        return 1;
    }
    const char *wd = getenv("MCOLL_TEST_WATCHDOG");
    signal(SIGALRM, on_alarm);
    alarm(wd ? (unsigned)atoi(wd) : 600);
    /* communicators are created here, in one order on every rank */
    for (int t = 0; t < nthreads; t++) {
        if (t % 3 == 0) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
        else MPI_Comm_split(MPI_COMM_WORLD, t % 3 == 1 ? 0 : wrank % 2, t % 3 == 1 ? -wrank : wrank, &comms[t]);
        if (neighbor) {
            int r, p;
            MPI_Comm_rank(comms[t], &r);
            MPI_Comm_size(comms[t], &p);
            int nb[2] = {(r - 1 + p) % p, (r + 1) % p};
            MPI_Dist_graph_create_adjacent(comms[t], 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                           0, &rings[t]);
        }
    }
    mcoll_stats_reset();
    pthread_t th[MAXT];
    for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    /* mcoll's counters: every call counted once (no update lost between threads) and handled */
    for (int c = 0; c < NCOLL; c++) {
        mcoll_stats_t s;
        if (mcoll_stats_get(names[c], &s) != MPI_SUCCESS) {
            printf("FAIL rank %d: no statistics for %s\n", wrank, names[c]);
            atomic_fetch_add(&failures, 1);
            continue;
        }
        unsigned long want = atomic_load(&calls[c]);
        if (s.calls != want || s.handled != want || s.fallback) {
            printf("FAIL rank %d: %s counted %llu calls, %llu handled, %llu fallbacks; the threads made %lu\n",
                   wrank, names[c], (unsigned long long)s.calls, (unsigned long long)s.handled,
                   (unsigned long long)s.fallback, want);
            atomic_fetch_add(&failures, 1);
        }
    }
    for (int t = 0; t < nthreads; t++) {
        if (neighbor) MPI_Comm_free(&rings[t]);
        MPI_Comm_free(&comms[t]);
    }
    int mine = atomic_load(&failures), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!wrank) printf("%s: %d ranks x %d threads x %d iterations, %d failures\n", all ? "FAILED" : "PASSED", size,
                       nthreads, iters, all);
    MPI_Finalize();
    return all != 0;
}
