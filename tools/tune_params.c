/* mcoll-tune params: point-to-point model parameters between ranks 0 and 1 (the logp_mpi
 * method of Kielmann et al., collective-models-decision §3 and §6.1), reduction speed, copy
 * bandwidths and cache sizes, written into a machine profile (JSON).
 *
 *   mpiexec -n 2 mcoll-tune params --out P.json [--level intra|inter] [--quick]
 *
 * One run measures one level: the path the two ranks talk over (shared memory when they
 * share a node; run it again over TCP with --level inter for the network path, README).
 * An existing profile at --out keeps its other level; else that level is the built-in one.
 *
 * Per message size m (medians over repetitions, each repetition timed on rank 0):
 * Statistic: the 20th percentile of the repetitions (see median(); the machine is shared).
 *   RTT(m)   ping-pong of m bytes each way              PLogP: RTT(m) = 2 (L + g(m))
 *   o_s(m)   time of MPI_Send(m) at the sender, receiver waiting, then a 0-byte reply
 *   o_r(m)   time of MPI_Recv(m) at the receiver after waiting until the message is there
 *   g(m)     saturation: n and 2n back-to-back sends; g = (T(2n) - T(n)) / n (the constant
 *            round-trip of the final reply cancels)
 * then L = RTT(0)/2 - g(0); g(m) is raised to max(o_s, o_r) where noise put it below
 * (PLogP requires g >= o). LogGP from PLogP as in Kielmann's paper: o = (o_s(0) + o_r(0))/2,
 * g = g(0), G = slope of g(m) over the largest sizes, L = L_PLogP + g - 2o. Hockney: alpha,
 * beta fit RTT(m)/2 by least squares in relative error (every size weighs the same). */
#define _GNU_SOURCE
#include <sys/uio.h>
#include "mcoll.h"
#include "tune.h"
#include "core/topo.h"
#include "shm/shm.h"
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W MPI_COMM_WORLD
#define TAG 77
#define NSZ 12

typedef struct pp {
    int rank, quick;
    char *buf;
    size_t cap;
} pp_t;

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The 20th percentile: on a shared machine preemptions only ever add time, so the low end of
 * the distribution is the undisturbed cost; a low quantile rather than the minimum so one
 * lucky timer tick does not decide. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return v[n / 5];
}

/* Repetitions: many for small messages, fewer where one takes long. */
static int reps(const pp_t *s, size_t m)
{
    int r = m <= 4096 ? 100 : m <= 65536 ? 40 : m <= (1 << 20) ? 12 : 6;
    return s->quick ? (r + 9) / 10 : r;
}

static void busy_wait(double sec)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < sec) {}
}

/* Only ranks 0 and 1 talk; the result is rank 0's. */
static double rtt(pp_t *s, size_t m)
{
    int n = reps(s, m);
    double *t = calloc((size_t)n, sizeof *t), r;
    for (int i = -2; i < n; i++) {
        double t0 = MPI_Wtime();
        if (s->rank == 0) {
            MPI_Send(s->buf, (int)m, MPI_BYTE, 1, TAG, W);
            MPI_Recv(s->buf, (int)m, MPI_BYTE, 1, TAG, W, MPI_STATUS_IGNORE);
        } else if (s->rank == 1) {
            MPI_Recv(s->buf, (int)m, MPI_BYTE, 0, TAG, W, MPI_STATUS_IGNORE);
            MPI_Send(s->buf, (int)m, MPI_BYTE, 0, TAG, W);
        }
        if (i >= 0) t[i] = MPI_Wtime() - t0;
    }
    r = median(t, n);
    free(t);
    return r;
}

/* Sender overhead: rank 0 times its MPI_Send; rank 1 replies with 0 bytes. */
static double send_overhead(pp_t *s, size_t m)
{
    int n = reps(s, m);
    double *t = calloc((size_t)n, sizeof *t), r;
    for (int i = -2; i < n; i++) {
        if (s->rank == 0) {
            double t0 = MPI_Wtime();
            MPI_Send(s->buf, (int)m, MPI_BYTE, 1, TAG, W);
            if (i >= 0) t[i] = MPI_Wtime() - t0;
            MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG, W, MPI_STATUS_IGNORE);
        } else if (s->rank == 1) {
            MPI_Recv(s->buf, (int)m, MPI_BYTE, 0, TAG, W, MPI_STATUS_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, TAG, W);
        }
    }
    r = s->rank == 0 ? median(t, n) : 0;
    free(t);
    return r;
}

/* Receiver overhead: rank 1 sends; rank 0 waits `delay` (longer than the message takes to
 * arrive), then times its MPI_Recv, and releases rank 1 with a 0-byte message. */
static double recv_overhead(pp_t *s, size_t m, double delay)
{
    int n = reps(s, m);
    double *t = calloc((size_t)n, sizeof *t), r;
    for (int i = -2; i < n; i++) {
        if (s->rank == 0) {
            busy_wait(delay);
            double t0 = MPI_Wtime();
            MPI_Recv(s->buf, (int)m, MPI_BYTE, 1, TAG, W, MPI_STATUS_IGNORE);
            if (i >= 0) t[i] = MPI_Wtime() - t0;
            MPI_Send(NULL, 0, MPI_BYTE, 1, TAG, W);
        } else if (s->rank == 1) {
            MPI_Send(s->buf, (int)m, MPI_BYTE, 0, TAG, W);
            MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG, W, MPI_STATUS_IGNORE);
        }
    }
    r = s->rank == 0 ? median(t, n) : 0;
    free(t);
    return r;
}

/* k back-to-back sends of m bytes, then a 0-byte reply; rank 0's time. */
static double burst(pp_t *s, size_t m, int k)
{
    double t0 = MPI_Wtime();
    if (s->rank == 0) {
        for (int j = 0; j < k; j++) MPI_Send(s->buf, (int)m, MPI_BYTE, 1, TAG, W);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG, W, MPI_STATUS_IGNORE);
    } else if (s->rank == 1) {
        for (int j = 0; j < k; j++) MPI_Recv(s->buf, (int)m, MPI_BYTE, 0, TAG, W, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG, W);
    }
    return MPI_Wtime() - t0;
}

/* Gap at saturation: the difference of bursts of 2k and k messages, over k. */
static double gap(pp_t *s, size_t m)
{
    int k = m <= 4096 ? 64 : m <= 65536 ? 16 : 4, n = (reps(s, m) + 3) / 4;
    double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b), r;
    burst(s, m, k);
    for (int i = 0; i < n; i++) {
        a[i] = burst(s, m, k);
        b[i] = burst(s, m, 2 * k);
    }
    r = (median(b, n) - median(a, n)) / k;
    free(a);
    free(b);
    return r > 0 ? r : 0;
}

/* ---------------------------------------------------------------- local speeds */
static double copy_rate(void (*fn)(void *, const void *, size_t), size_t bytes, int quick)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    double best = 0;
    if (!a || !b) goto out;
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    for (int r = 0; r < (quick ? 2 : 5); r++) {
        double t0 = MPI_Wtime();
        fn(b, a, bytes);
        double t = MPI_Wtime() - t0;
        if (t > 0 && bytes / t > best) best = bytes / t;
    }
out:
    free(a);
    free(b);
    return best;
}

/* Seconds per byte of MPI_SUM over doubles, in cache (the reduction kernels work on
 * cache-sized slices). */
static double reduce_speed(int quick)
{
    enum { N = 131072 }; /* 1 MiB per operand: the size of an L2 */
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), t[15];
    int n = quick ? 3 : 15;
    for (int i = 0; i < N; i++) x[i] = y[i] = 1.0;
    MPI_Reduce_local(x, y, N, MPI_DOUBLE, MPI_SUM);
    for (int r = 0; r < n; r++) {
        double t0 = MPI_Wtime();
        for (int k = 0; k < 8; k++) MPI_Reduce_local(x, y, N, MPI_DOUBLE, MPI_SUM);
        t[r] = (MPI_Wtime() - t0) / (8.0 * N * sizeof(double));
    }
    free(x);
    free(y);
    return median(t, n);
}

/* ---------------------------------------------------------------- fits */
/* min sum ((a + b m - y) / y)^2 */
static void fit_hockney(const double *m, const double *y, int n, double *alpha, double *beta)
{
    double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
    for (int i = 0; i < n; i++) {
        double w = 1.0 / (y[i] * y[i]);
        s00 += w, s01 += w * m[i], s11 += w * m[i] * m[i];
        r0 += w * y[i], r1 += w * m[i] * y[i];
    }
    double det = s00 * s11 - s01 * s01;
    *alpha = (r0 * s11 - r1 * s01) / det;
    *beta = (s00 * r1 - s01 * r0) / det;
    if (*beta < 0) *beta = 0;
    if (*alpha < 0) { /* refit the slope through the origin */
        *alpha = 0;
        *beta = r1 / s11;
    }
}

typedef struct meas {
    int n;
    double m[NSZ], rtt[NSZ], os[NSZ], orr[NSZ], g[NSZ];
} meas_t;

static void derive(const meas_t *x, mc_net_t *net)
{
    mc_plogp_t *t = &net->plogp;
    double half[NSZ];
    t->n = x->n;
    for (int i = 0; i < x->n; i++) {
        t->m[i] = x->m[i];
        t->os[i] = x->os[i];
        t->orr[i] = x->orr[i];
        t->g[i] = fmax(x->g[i], fmax(x->os[i], x->orr[i]));
        half[i] = x->rtt[i] / 2;
    }
    t->L = fmax(0, x->rtt[0] / 2 - t->g[0]);
    fit_hockney(x->m, half, x->n, &net->hockney.alpha, &net->hockney.beta);
    mc_loggp_t *l = &net->loggp;
    int a = x->n - 3 < 0 ? 0 : x->n - 3, b = x->n - 1;
    l->o = 0.5 * (t->os[0] + t->orr[0]);
    l->g = t->g[0];
    l->G = b > a ? fmax(0, (t->g[b] - t->g[a]) / (t->m[b] - t->m[a])) : 0;
    l->L = fmax(0, t->L + l->g - 2 * l->o);
}

static void measure_net(pp_t *s, meas_t *x)
{
    static const size_t full[] = {0, 64, 512, 2048, 8192, 32768, 131072, 524288, 1 << 21, 1 << 22};
    static const size_t quick[] = {0, 1024, 65536, 1 << 20};
    const size_t *sz = s->quick ? quick : full;
    int n = s->quick ? 4 : 10;
    x->n = n;
    for (int i = 0; i < n; i++) {
        size_t m = sz[i];
        x->m[i] = (double)m;
        x->rtt[i] = rtt(s, m);
        MPI_Bcast(&x->rtt[i], 1, MPI_DOUBLE, 0, W);
        x->os[i] = send_overhead(s, m);
        x->orr[i] = recv_overhead(s, m, 2 * x->rtt[i] + 2e-6);
        x->g[i] = gap(s, m);
        if (s->rank == 0)
            printf("  m %8zu  RTT/2 %9.3f us  o_s %9.3f  o_r %9.3f  g %9.3f us\n", m, x->rtt[i] / 2 * 1e6,
                   x->os[i] * 1e6, x->orr[i] * 1e6, x->g[i] * 1e6);
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: mpiexec -n 2 mcoll-tune params --out FILE [--level intra|inter] [--quick]\n");
    return 2;
}

/* Copy rate of cache-resident data last written by another core (what the shared-memory
 * algorithms move): rank 0 rewrites a shared buffer of 1 MiB, rank 1 copies it out; the
 * fastest of the repetitions, seen by rank 1 and returned on every rank. 0 when the ranks share
 * no memory. Collective. */
static double cross_copy(int quick)
{
    enum { S = 1 << 20 };
    MPI_Comm node;
    MPI_Win win;
    char *base = NULL, *dst = malloc(S);
    int nr, r, disp;
    MPI_Aint sz;
    double best = 0, out = 0;
    MPI_Comm_split_type(W, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nr);
    MPI_Comm_rank(node, &r);
    int ok = nr >= 2 && dst != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, W);
    if (all && MPI_Win_allocate_shared(r == 0 ? S : 0, 1, MPI_INFO_NULL, node, &base, &win) == MPI_SUCCESS) {
        MPI_Win_shared_query(win, 0, &sz, &disp, &base);
        for (int k = 0; k < (quick ? 4 : 20); k++) {
            if (r == 0) memset(base, k + 1, S); /* dirty in rank 0's caches */
            MPI_Barrier(node);
            double t0 = MPI_Wtime();
            if (r == 1) memcpy(dst, base, S);
            double t = MPI_Wtime() - t0;
            if (r == 1 && t > 0 && S / t > best) best = S / t;
            MPI_Barrier(node);
        }
        MPI_Win_free(&win);
    }
    MPI_Allreduce(&best, &out, 1, MPI_DOUBLE, MPI_MAX, W);
    MPI_Comm_free(&node);
    free(dst);
    return out;
}

/* One flag round of the node region: a forced shared-memory barrier of 2 ranks is one round
 * (collective: both ranks). 0 when the region is unavailable. */
static double shm_sync(int quick)
{
    int n = 200, batches = quick ? 3 : 15;
    double best = 0, mx;
    if (mcoll_set_alg("barrier", "shm")) return 0;
    for (int i = 0; i < n; i++) MPI_Barrier(W);
    const char *ran = mcoll_last_alg("barrier");
    int shm = ran && !strcmp(ran, "shm"), all;
    MPI_Allreduce(&shm, &all, 1, MPI_INT, MPI_MIN, W);
    if (!all) { /* no node region (MCOLL_SHM=0, ranks on two nodes): keep the profile's value */
        mcoll_set_alg("barrier", "auto");
        return 0;
    }
    /* the fastest batch: on a shared machine preemption only adds time */
    for (int b = 0; b < batches; b++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) MPI_Barrier(W);
        double t = (MPI_Wtime() - t0) / n;
        if (!b || t < best) best = t;
    }
    mcoll_set_alg("barrier", "auto");
    MPI_Allreduce(&best, &mx, 1, MPI_DOUBLE, MPI_MAX, W);
    return mx;
}

/* A single copy from another address space: process_vm_readv (of this process: the same
 * system call, page walks and pinning) of one cache line (start-up) and of 1 MiB (rate beyond
 * the start-up); the fastest repetitions. 0 when CMA is not permitted. Source and destination
 * share their alignment (pages): mcoll's CMA transfers whose destination lies 1-31 bytes past
 * the source go through a bounce buffer (shm/cma.c), as the kernel's copy runs 4-5x slower
 * there on AMD Zen 3; measured between malloc blocks 16 bytes apart (the second block of the
 * brk heap) it gave 2.4 GB/s, aligned 11.2 (`params --quick`, the Zen 3 VM; a forked
 * child's pages read at 10.5). */
static double cma_time(size_t n, int reps)
{
    void *s = NULL, *d = NULL;
    if (posix_memalign(&s, 4096, n)) s = NULL;
    if (posix_memalign(&d, 4096, n)) d = NULL;
    char *src = s, *dst = d;
    double best = 0;
    if (src && dst) {
        memset(src, 1, n), memset(dst, 2, n);
        struct iovec l = {dst, n}, r = {src, n};
        for (int k = 0; k < reps; k++) {
            double t0 = MPI_Wtime();
            if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)n) break;
            double t = MPI_Wtime() - t0;
            if (!best || t < best) best = t;
        }
    }
    free(src), free(dst);
    return best;
}

static void cma_params(mc_profile_t *p, int quick)
{
    double t0 = cma_time(64, quick ? 100 : 1000), t1 = cma_time(1 << 20, quick ? 5 : 20);
    if (t0 > 0) p->xmap = t0;
    if (t1 > t0 && t0 > 0) p->cma_bw = (1 << 20) / (t1 - t0);
}

static void local_params(mc_profile_t *p, int quick)
{
    mc_topo_t topo;
    size_t big = quick ? (8u << 20) : (64u << 20);
    mc_topo_get(&topo);
    if (topo.l1d) p->l1 = (double)topo.l1d;
    if (topo.l2) p->l2 = (double)topo.l2;
    if (topo.l3 || topo.llc) p->l3 = (double)(topo.l3 ? topo.l3 : topo.llc);
    if (p->l3 > 0 && big < 4 * (size_t)p->l3) big = 4 * (size_t)p->l3;
    if (big > (quick ? (16u << 20) : (128u << 20))) big = quick ? (16u << 20) : (128u << 20);
    p->t_copy = copy_rate(mc_copy_t, big, quick);
    p->nt_copy = copy_rate(mc_copy_nt, big, quick);
    p->gamma = reduce_speed(quick);
    cma_params(p, quick);
}

int tune_params_main(int argc, char **argv)
{
    const char *out = NULL, *lvname = "intra";
    int quick = 0, size, rc = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--level") && i + 1 < argc) lvname = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else return usage();
    }
    mc_level_t lv = !strcmp(lvname, "inter") ? MC_LEVEL_INTER : MC_LEVEL_INTRA;
    if (!out || (strcmp(lvname, "inter") && strcmp(lvname, "intra"))) return usage();
    MPI_Init(NULL, NULL);
    pp_t s = {.quick = quick, .cap = 1 << 22};
    MPI_Comm_rank(W, &s.rank);
    MPI_Comm_size(W, &size);
    if (size < 2) {
        if (!s.rank) fprintf(stderr, "mcoll-tune params: needs 2 ranks (mpiexec -n 2)\n");
        MPI_Finalize();
        return 1;
    }
    s.buf = calloc(s.cap, 1);
    double t0 = MPI_Wtime();
    if (!s.rank) printf("# mcoll-tune params: %s level, ranks 0 and 1%s\n", lvname, quick ? ", quick" : "");
    meas_t x;
    measure_net(&s, &x);
    double sync = lv == MC_LEVEL_INTRA ? shm_sync(quick) : 0;
    double xcopy = lv == MC_LEVEL_INTRA ? cross_copy(quick) : 0;
    MPI_Barrier(W);
    if (!s.rank) {
        mc_profile_t p;
        char err[256], host[64] = "host";
        if (mc_profile_load(out, &p, err, sizeof err)) mc_profile_default(&p);
        gethostname(host, sizeof host - 1);
        host[sizeof host - 1] = 0;
        snprintf(p.name, sizeof p.name, "measured-%.40s", host);
        derive(&x, &p.net[lv]);
        if (lv == MC_LEVEL_INTRA) local_params(&p, quick);
        if (sync > 0) p.shm_sync = sync;
        if (xcopy > 0) p.c_copy = xcopy;
        const mc_net_t *nt = &p.net[lv];
        printf("# %s: hockney alpha %.3g s beta %.3g s/B (%.2f GB/s); loggp L %.3g o %.3g g %.3g G %.3g; "
               "plogp L %.3g\n",
               lvname, nt->hockney.alpha, nt->hockney.beta, nt->hockney.beta > 0 ? 1e-9 / nt->hockney.beta : 0,
               nt->loggp.L, nt->loggp.o, nt->loggp.g, nt->loggp.G, nt->plogp.L);
        if (lv == MC_LEVEL_INTRA)
            printf("# gamma %.3g s/B (%.2f GB/s); t_copy %.2f GB/s; nt_copy %.2f GB/s; c_copy %.2f GB/s; "
                   "l1 %.0f l2 %.0f l3 %.0f; shm sync %.3g s; xmap %.3g s, cma %.2f GB/s\n",
                   p.gamma, p.gamma > 0 ? 1e-9 / p.gamma : 0, p.t_copy / 1e9, p.nt_copy / 1e9, p.c_copy / 1e9, p.l1,
                   p.l2, p.l3, p.shm_sync, p.xmap, p.cma_bw / 1e9);
        if (mc_profile_validate(&p, err, sizeof err) || mc_profile_save(out, &p, err, sizeof err)) {
            fprintf(stderr, "mcoll-tune params: %s\n", err);
            rc = 1;
        } else {
            printf("wrote %s (%.1f s)\n", out, MPI_Wtime() - t0);
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, W);
    free(s.buf);
    MPI_Finalize();
    return rc;
}
