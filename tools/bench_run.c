/* Measurement of one collective at one size: native (PMPI) and mcoll variants alternate
 * within every repetition, so load noise hits all of them alike (or, --order block, each
 * column's repetitions run back to back). */
#include "bench.h"
#include "mcoll.h"
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define W MPI_COMM_WORLD

typedef struct run {
    const bench_opts_t *o;
    const bench_coll_t *bc;
    bench_call_t c;
    bench_mem_t *mm;
    size_t sbytes, rbytes;
    char (*var)[BENCH_NAME];
    int nv;                      /* columns: 0 = native, 1..nv-1 = variants */
    char used[BENCH_MAX_VARIANTS + 1][BENCH_NAME];   /* mcoll_last_alg after each column */
} run_t;

/* ---------------------------------------------------------------- variants */
static int registered(const char *coll, const char *name)
{
    if (!strcmp(name, "default") || !strcmp(name, "pmpi")) return 1;
    for (int i = 0; i < mcoll_alg_count(coll); i++)
        if (!strcmp(mcoll_alg_name(coll, i), name)) return 1;
    return 0;
}

static int add_variant(char (*out)[BENCH_NAME], int n, int max, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(out[i], name)) return n;
    if (n >= max) return n;
    snprintf(out[n], BENCH_NAME, "%s", name);
    return n + 1;
}

int bench_variants(const char *algs, const char *coll, char (*out)[BENCH_NAME], int max)
{
    char buf[512];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", algs);
    for (char *s = NULL, *t = strtok_r(buf, ",", &s); t; t = strtok_r(NULL, ",", &s)) {
        if (!strcmp(t, "all")) {
            for (int i = 0; i < mcoll_alg_count(coll); i++)
                n = add_variant(out, n, max, mcoll_alg_name(coll, i));
        } else if (registered(coll, t)) {
            n = add_variant(out, n, max, t);
        }
    }
    return n;
}

static void select_variant(const run_t *r, int v)
{
    const char *name = r->var[v - 1];
    mcoll_set_alg(r->bc->name, strcmp(name, "default") ? name : NULL);
}

/* ---------------------------------------------------------------- one call */
/* --dirty: the send buffer rewritten (1.0f in every 4-byte word: a normal float for the
 * reductions), so its lines are modified in this rank's cache when the call starts. */
static void dirty_sbuf(run_t *r)
{
    static const float one = 1.0f;
    uint32_t w;
    memcpy(&w, &one, sizeof w);
    uint32_t *q = (uint32_t *)(void *)r->c.sbuf;
    for (size_t i = 0; i < r->sbytes / sizeof w; i++) q[i] = w;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --start clock: the ranks leave the barrier a few tenths of a us apart (more when
 * oversubscribed), and a sample that starts there charges that skew to the call. They share
 * the node's clock, so each waits for the next START_GRID mark after the barrier and counts
 * from the mark: the same instant on every rank, unless a mark falls between two ranks'
 * exits (about skew / START_GRID of the samples: outliers the median drops). Yields while
 * far from it, for oversubscribed ranks. */
#define START_GRID 50e-6
static double start_at_mark(void)
{
    double t = now(), mark = (double)((long long)(t / START_GRID) + 1) * START_GRID;
    while ((t = now()) < mark)
        if (mark - t > 2e-6) sched_yield();
    return mark;
}

static int timed_call(run_t *r, int v, double *t)
{
    int rc;
    if (v) select_variant(r, v);
    bench_mem_next(r->mm, r->sbytes, r->rbytes, &r->c);
    if (r->o->dirty) dirty_sbuf(r);
    rc = PMPI_Barrier(W);
    if (rc) return rc;
    /* a batch amortizes the barrier's exit skew (a few tenths of a us between two ranks),
     * which a single small call would include (or --start clock) */
    int root = r->c.root;
    long batch = r->o->batch > 1 ? r->o->batch : 1;   /* 0: options built without defaults */
    double t0 = r->o->start_clock ? start_at_mark() : now();
    for (long k = 0; k < batch && !rc; k++) {
        if (r->bc->rooted) r->c.root = (int)((root + k) % r->c.p);
        rc = r->bc->call(v == 0, &r->c);
    }
    *t = (now() - t0) / (double)batch;
    r->c.root = root;
    if (v) {
        const char *u = mcoll_last_alg(r->bc->name);
        snprintf(r->used[v], BENCH_NAME, "%s", u ? u : "-");
    }
    return rc;
}

/* One repetition calls every column once; the first column rotates with the repetition. */
static int repetition(run_t *r, long rep, double *times, long iters)
{
    for (int k = 0; k < r->nv; k++) {
        int v = (int)((k + rep) % r->nv);
        double t;
        int rc = timed_call(r, v, &t);
        if (rc) return rc;
        if (times) times[(size_t)v * (size_t)iters + (size_t)rep] = t;
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- iterations */
/* Many repetitions for small messages, at least 5 for the largest: about 256 MiB per column. */
static long auto_iters(size_t m)
{
    long n = (long)((256ul << 20) / (m ? m : 1));
    return n < 5 ? 5 : n > 1000 ? 1000 : n;
}

/* A tenth of the repetitions, at least BENCH_WARM_MIN: mcoll's trials (shm/trial.c) try each
 * way of a size class for 3 calls before they keep to the fastest, so a warm-up of one call
 * timed those tries: allgather of 64 MiB blocks (5 repetitions, 2 ranks, malloc buffers,
 * staged 6.9 ms, CMA 12.4 ms) measured 11.3 ms with one warm-up call, 6.1 ms with 8 (OSU's
 * benchmarks skip 10 calls of a large message). */
#define BENCH_WARM_MIN 8
static long warmup_count(const bench_opts_t *o, long iters)
{
    if (o->warmup >= 0) return o->warmup;
    long w = iters / 10;
    return w < BENCH_WARM_MIN ? BENCH_WARM_MIN : w > 50 ? 50 : w;
}

/* ---------------------------------------------------------------- statistics */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bench_stat_t bench_stats(double *t, long n)
{
    bench_stat_t s;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    s.min = t[0] * 1e6;
    s.max = t[n - 1] * 1e6;
    s.med = (n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2])) * 1e6;
    return s;
}

/* Runs n repetitions from `from`; with wt, records each one's wall time (barriers
 * included) and keeps the slowest rank's time per repetition. */
static int warm_reps(run_t *r, long from, long n, double *wt)
{
    int rc = MPI_SUCCESS;
    for (long i = 0; i < n && !rc; i++) {
        double t0 = MPI_Wtime();
        rc = repetition(r, from + i, NULL, 0);
        if (wt) wt[i] = MPI_Wtime() - t0;
    }
    return rc || !wt || !n ? rc : PMPI_Allreduce(MPI_IN_PLACE, wt, (int)n, MPI_DOUBLE, MPI_MAX, W);
}

/* The automatic warm-up stops at a tenth of the time limit, but runs at least BENCH_WARM_MIN
 * repetitions. */
static long warm_cap(const run_t *r, long more, double per)
{
    if (r->o->warmup >= 0 || per <= 0) return more;
    long cap = (long)(0.1 * r->o->time_limit / per);
    cap = cap < BENCH_WARM_MIN ? BENCH_WARM_MIN : cap;
    return more < cap ? more : cap;
}

/* Warm-up. Repetition 0 pays context creation and first touch and is not measured;
 * repetition 1 sizes the rest. With automatic iterations, the median warm-up repetition
 * trims them to the time limit: a median, so one preempted repetition on a busy machine does
 * not cut the statistics to nothing. Every rank computes the same counts. */
static int warm_up(run_t *r, long *iters)
{
    enum { MAXW = 64 };
    double wt[MAXW];
    long w = warmup_count(r->o, *iters), more, extra;
    int rc = warm_reps(r, 0, w ? 1 : 0, NULL);
    if (rc || w < 2) return rc;
    rc = warm_reps(r, 1, 1, wt);
    more = warm_cap(r, w - 2, wt[0]);
    extra = more > MAXW - 1 ? more - (MAXW - 1) : 0;   /* more than an estimate needs */
    if (!rc) rc = warm_reps(r, 2, extra, NULL);
    if (!rc) rc = warm_reps(r, 2 + extra, more - extra, wt + 1);
    if (rc || r->o->iters) return rc;
    double per = bench_stats(wt, 1 + more - extra).med * 1e-6;
    long fit = per > 0 ? (long)(r->o->time_limit / per) : *iters;
    if (fit < *iters) *iters = fit < 5 ? 5 : fit;
    return rc;
}

/* ---------------------------------------------------------------- validation */
/* The hot slot, whatever the mode: the reference run and the checked run share buffers. */
static void hot_slot(run_t *r)
{
    int cold = r->mm->cold;
    r->mm->cold = 0;
    bench_mem_next(r->mm, r->sbytes, r->rbytes, &r->c);
    r->mm->cold = cold;
}

/* bad (mcoll variants only): the defined output bytes differ from native's `ref`. */
static int checked_call(run_t *r, int v, const char *ref, size_t k, int *bad)
{
    hot_slot(r);
    bench_fill_inputs(r->bc, &r->c);
    bench_poison_output(r->bc, &r->c);
    if (v) select_variant(r, v);
    int rc = r->bc->call(v == 0, &r->c);
    if (bad) *bad = rc != MPI_SUCCESS || (k && memcmp(ref, r->c.rbuf, k) != 0);
    return rc;
}

static int validate(run_t *r, bench_row_t *row)
{
    size_t k = r->bc->check(&r->c);
    char *ref = k ? malloc(k) : NULL;
    int bad[BENCH_MAX_VARIANTS] = {0}, rc;
    if (k && !ref) return MPI_ERR_NO_MEM;
    rc = checked_call(r, 0, NULL, 0, NULL);
    if (!rc && k) memcpy(ref, r->c.rbuf, k);
    for (int v = 1; v < r->nv && !rc; v++) rc = checked_call(r, v, ref, k, &bad[v - 1]);
    free(ref);
    if (!rc) rc = PMPI_Allreduce(MPI_IN_PLACE, bad, r->nv - 1, MPI_INT, MPI_MAX, W);
    for (int v = 1; v < r->nv; v++) row->var[v - 1].valid = !bad[v - 1];
    return rc;
}

/* ---------------------------------------------------------------- one size */
static int setup(run_t *r, const bench_opts_t *o, const bench_coll_t *bc, size_t m)
{
    bench_call_t *c = &r->c;
    memset(c, 0, sizeof *c);
    PMPI_Comm_size(W, &c->p);
    PMPI_Comm_rank(W, &c->rank);
    c->root = bc->rooted ? o->root : 0;
    c->dt = bc->reduction ? MPI_FLOAT : MPI_BYTE;
    c->elem = bc->reduction ? sizeof(float) : 1;
    if (m / c->elem > (size_t)INT_MAX / (size_t)c->p) return MPI_ERR_COUNT;
    c->count = (int)(m / c->elem);
    c->counts = malloc(sizeof(int) * (size_t)c->p);
    c->displs = malloc(sizeof(int) * (size_t)c->p);
    if (!c->counts || !c->displs) return MPI_ERR_NO_MEM;
    for (int i = 0; i < c->p; i++) {
        c->counts[i] = c->count;
        c->displs[i] = i * c->count;
    }
    r->sbytes = bench_sbytes(bc, (size_t)c->count * c->elem, c->p);
    r->rbytes = bench_rbytes(bc, (size_t)c->count * c->elem, c->p);
    return MPI_SUCCESS;
}

static void row_init(run_t *r, bench_row_t *row)
{
    memset(row, 0, sizeof *row);
    row->coll = r->bc->name;
    row->bytes = r->bc->sblocks || r->bc->rblocks ? (size_t)r->c.count * r->c.elem : 0;
    row->p = r->c.p;
    row->nvar = r->nv - 1;
    for (int v = 1; v < r->nv; v++) {
        snprintf(row->var[v - 1].req, BENCH_NAME, "%s", r->var[v - 1]);
        row->var[v - 1].valid = -1;
    }
}

/* With automatic iterations, every 16 repetitions the ranks agree whether the size has
 * used twice its time limit (a loaded machine stretches calls well past the warm-up's
 * estimate); then it stops early, after at least 5 repetitions. */
static int over_time(const run_t *r, long done, double t0, int *stop)
{
    *stop = 0;
    if (r->o->iters || done < 5 || done % 16) return MPI_SUCCESS;
    *stop = MPI_Wtime() - t0 > 2 * r->o->time_limit;
    return PMPI_Allreduce(MPI_IN_PLACE, stop, 1, MPI_INT, MPI_MAX, W);
}

/* Timed repetitions, interleaved; every column ran *done of them. t has room for `iters`
 * per column. */
static int timed_reps(run_t *r, long iters, double *t, long *done)
{
    double t0 = MPI_Wtime();
    int rc = MPI_SUCCESS, stop = 0;
    for (*done = 0; *done < iters && !rc && !stop;) {
        rc = repetition(r, *done, t, iters);
        if (!rc) rc = over_time(r, ++*done, t0, &stop);
    }
    return rc;
}

/* --order block: column v's repetitions back to back, after one untimed call of its own that
 * takes whatever the previous column left behind; the column stops early on its own clock. */
static int timed_block(run_t *r, int v, long iters, double *t, long *done)
{
    double first, t0;
    int rc = timed_call(r, v, &first), stop = 0;
    t0 = MPI_Wtime();
    for (*done = 0; *done < iters && !rc && !stop;) {
        rc = timed_call(r, v, &t[(size_t)v * (size_t)iters + (size_t)*done]);
        if (!rc) rc = over_time(r, ++*done, t0, &stop);
    }
    return rc;
}

/* done[v]: the samples column v has (the same for all columns unless in blocks). */
static int timed_columns(run_t *r, long iters, double *t, long *done)
{
    int rc = MPI_SUCCESS;
    if (r->o->blocks) {
        for (int v = 0; v < r->nv && !rc; v++) rc = timed_block(r, v, iters, t, &done[v]);
        return rc;
    }
    rc = timed_reps(r, iters, t, &done[0]);
    for (int v = 1; v < r->nv; v++) done[v] = done[0];
    return rc;
}

static int measure(run_t *r, bench_row_t *row)
{
    long iters = r->o->iters ? r->o->iters : auto_iters(row->bytes);
    long done[BENCH_MAX_VARIANTS + 1] = {0};
    int rc = warm_up(r, &iters);
    if (iters > INT_MAX / r->nv) iters = INT_MAX / r->nv;
    double *t = rc ? NULL : calloc((size_t)iters * (size_t)r->nv, sizeof(double));
    if (!rc && !t) rc = MPI_ERR_NO_MEM;
    if (!rc) rc = timed_columns(r, iters, t, done);
    if (!rc) rc = PMPI_Allreduce(MPI_IN_PLACE, t, (int)(iters * r->nv), MPI_DOUBLE, MPI_MAX, W);
    if (!rc) {
        row->iters = done[0];
        for (int v = 0; v < r->nv; v++) {
            bench_stat_t st = bench_stats(t + (size_t)v * (size_t)iters, done[v]);
            if (done[v] < row->iters) row->iters = done[v];
            if (v) row->var[v - 1].t = st;
            else row->native = st;
        }
    }
    free(t);
    return rc;
}

static void record_used(const run_t *r, bench_row_t *row)
{
    for (int v = 1; v < r->nv; v++) snprintf(row->var[v - 1].used, BENCH_NAME, "%s", r->used[v]);
}

int bench_run_size(const bench_opts_t *o, const bench_coll_t *bc, size_t m, bench_mem_t *mm,
                   char (*variants)[BENCH_NAME], int nvar, bench_row_t *row)
{
    run_t r = {.o = o, .bc = bc, .mm = mm, .var = variants, .nv = nvar + 1};
    int rc = setup(&r, o, bc, m);
    if (!rc) row_init(&r, row);
    if (!rc && o->validate) rc = validate(&r, row);
    if (!rc) rc = measure(&r, row);
    if (!rc) record_used(&r, row);
    mcoll_set_alg(bc->name, NULL);
    free(r.c.counts);
    free(r.c.displs);
    return rc;
}
