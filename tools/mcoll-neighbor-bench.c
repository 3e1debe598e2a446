/* mcoll-neighbor-bench: persistent neighbor alltoallv per workload and strategy (issue 5).
 *
 *   mcoll-neighbor-bench [--workload NAME|KIND:ARGS]... [--iters N] [--vec K] [--csv]
 *
 * For every workload (default: stencils, a random matrix and the rotated anisotropic
 * hierarchy, file levels and 128x128 levels built in memory) and every strategy (standard,
 * aggregated, dedup, auto; plus the native PMPI_Neighbor_alltoallv, and the native MPI 4
 * persistent one where the MPI has it):
 *   - per-iteration inter-region messages and bytes, max and sum over ranks, and the max
 *     intra-region messages (deterministic, from mcoll_neighbor_stats);
 *   - median over iterations of the slowest rank's MPI_Start + MPI_Wait time;
 *   - init time (slowest rank) and the iteration count after which the extra init cost is
 *     paid back against standard (paper, Fig. 7): ceil((init_a - init_std) / (t_std - t_a)).
 * Every strategy's result is compared with the native one (column ok). Elements are K doubles
 * (--vec, default 1: one SpMV vector). */
#include "../tests/neighbor/workloads.h"

#include <math.h>
#include <mcoll.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wstringop-overread" /* MPI_UNWEIGHTED is a fake pointer */

enum { A_NATIVE, A_NATIVE_INIT, A_STD, A_AGG, A_DEDUP, A_AUTO, NA };
static const char *aname[NA] = {"native", "native_init", "standard", "aggregated", "dedup", "auto"};

static const char *default_wl[] = {
    "stencil:5:128x128",    "stencil:9:128x128",    "stencil:27:24x24x24",  "random:16384:8:0.05:400:1",
    "rotaniso9-l0",         "rotaniso9-l1",         "rotaniso9-l2",         "rotaniso9-l3",
    "rotaniso:128x128:9:0", "rotaniso:128x128:9:1", "rotaniso:128x128:9:2", "rotaniso:128x128:9:3",
};

#define INIT_REPS 3

static int rank, size, csv, iters = 200, vec = 1;

/* Deterministic reductions per workload, printed after the tables. */
typedef struct summary {
    const char *name;
    uint64_t msgs_sum[3], msgs_max[3], bytes_sum[3], bytes_max[3]; /* standard, aggregated, dedup */
} summary_t;
static summary_t sums[128];
static int nsums;

typedef struct result {
    int ran;      /* available */
    char alg[16]; /* what ran */
    double t_iter, t_init;
    uint64_t inter_msgs_max, inter_msgs_sum, inter_bytes_max, inter_bytes_sum, intra_msgs_max;
    double predicted;
    int ok;
} result_t;

typedef struct bench {
    const char *name;
    nb_pattern_t p;
    MPI_Comm g;
    MPI_Datatype t;
    double *sbuf, *rnat, *rbuf;
    double *times, *tmax;
    double graph_time;
} bench_t;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median over iterations of the slowest rank's time. */
static double median_max(bench_t *b)
{
    MPI_Allreduce(b->times, b->tmax, iters, MPI_DOUBLE, MPI_MAX, b->g);
    qsort(b->tmax, (size_t)iters, sizeof(double), cmp_d);
    return b->tmax[iters / 2];
}

static double max_over(double v, MPI_Comm c)
{
    double m;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, c);
    return m;
}

static void fill_send(bench_t *b)
{
    int64_t k = 0;
    for (int i = 0; i < b->p.outdeg; i++)
        for (int j = 0; j < b->p.scounts[i]; j++, k++)
            for (int v = 0; v < vec; v++)
                b->sbuf[(size_t)(b->p.sdispls[i] + j) * vec + v] =
                    (double)(wl_value(rank, b->p.sidx[k], v) >> 11);
}

static int same(bench_t *b)
{
    int ok = memcmp(b->rbuf, b->rnat, (size_t)b->p.rlen * vec * sizeof(double)) == 0, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, b->g);
    return all;
}

static void time_native(bench_t *b, result_t *r)
{
    nb_pattern_t *p = &b->p;
    for (int i = -5; i < iters; i++) {
        double t0 = MPI_Wtime();
        PMPI_Neighbor_alltoallv(b->sbuf, p->scounts, p->sdispls, b->t, b->rnat, p->rcounts, p->rdispls, b->t,
                                b->g);
        if (i >= 0) b->times[i] = MPI_Wtime() - t0;
    }
    r->ran = 1;
    r->ok = 1;
    strcpy(r->alg, "native");
    r->t_iter = median_max(b);
}

static void time_request(bench_t *b, MPI_Request *req, result_t *r)
{
    for (int i = -5; i < iters; i++) {
        double t0 = MPI_Wtime();
        MPI_Start(req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
        if (i >= 0) b->times[i] = MPI_Wtime() - t0;
    }
    r->t_iter = median_max(b);
    r->ok = same(b);
}

#if MPI_VERSION >= 4
static void run_native_init(bench_t *b, result_t *r)
{
    nb_pattern_t *p = &b->p;
    MPI_Request req;
    MPI_Barrier(b->g);
    double t0 = MPI_Wtime();
    if (PMPI_Neighbor_alltoallv_init(b->sbuf, p->scounts, p->sdispls, b->t, b->rbuf, p->rcounts, p->rdispls,
                                     b->t, b->g, MPI_INFO_NULL, &req) != MPI_SUCCESS)
        return;
    r->t_init = max_over(MPI_Wtime() - t0, b->g);
    for (int i = -5; i < iters; i++) {
        double t1 = MPI_Wtime();
        PMPI_Start(&req);
        PMPI_Wait(&req, MPI_STATUS_IGNORE);
        if (i >= 0) b->times[i] = MPI_Wtime() - t1;
    }
    r->t_iter = median_max(b);
    r->ok = same(b);
    r->ran = 1;
    strcpy(r->alg, "native_init");
    PMPI_Request_free(&req);
}
#endif

static void reduce_stats(bench_t *b, const mcoll_neighbor_stats_t *st, result_t *r)
{
    uint64_t loc[5] = {st->inter_msgs, st->inter_bytes, st->intra_msgs, st->inter_msgs, st->inter_bytes};
    uint64_t mx[5], sm[5];
    MPI_Allreduce(loc, mx, 5, MPI_UINT64_T, MPI_MAX, b->g);
    MPI_Allreduce(loc, sm, 5, MPI_UINT64_T, MPI_SUM, b->g);
    r->inter_msgs_max = mx[0];
    r->inter_bytes_max = mx[1];
    r->intra_msgs_max = mx[2];
    r->inter_msgs_sum = sm[0];
    r->inter_bytes_sum = sm[1];
    snprintf(r->alg, sizeof(r->alg), "%s", st->alg_name);
    r->predicted = st->alg >= 0 && st->alg < MCOLL_NEIGHBOR_NALG ? st->cost[st->alg] : -1;
}

static void run_mcoll(bench_t *b, const char *alg, result_t *r)
{
    nb_pattern_t *p = &b->p;
    MPI_Request req;
    MPI_Info info;
    mcoll_neighbor_stats_t st;
    int rc = MPI_SUCCESS, bad, any;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mcoll_neighbor_alg", alg);
    /* init is timed INIT_REPS times, the fastest kept (the paper's min of 3 runs) */
    r->t_init = 1e30;
    for (int k = 0; k < INIT_REPS; k++) {
        MPI_Barrier(b->g);
        double t0 = MPI_Wtime();
        rc = mcoll_neighbor_alltoallv_init_ext(b->sbuf, p->scounts, p->sdispls, b->t, b->rbuf, p->rcounts,
                                               p->rdispls, b->t, p->sidx, p->ridx, b->g, info, &req);
        double dt = max_over(MPI_Wtime() - t0, b->g);
        r->t_init = dt < r->t_init ? dt : r->t_init;
        bad = rc != MPI_SUCCESS;
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, b->g);
        if (any) break;
        if (k + 1 < INIT_REPS) MPI_Request_free(&req);
    }
    MPI_Info_free(&info);
    bad = rc != MPI_SUCCESS || mcoll_neighbor_stats(req, &st) != MPI_SUCCESS;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, b->g);
    if (any) {
        if (rc == MPI_SUCCESS) MPI_Request_free(&req);
        return;
    }
    reduce_stats(b, &st, r);
    memset(b->rbuf, 0, (size_t)b->p.rlen * vec * sizeof(double));
    time_request(b, &req, r);
    r->ran = 1;
    MPI_Request_free(&req);
}

/* Iterations after which init_a + n t_a <= init_s + n t_s; -1 = never. */
static long crossover(const result_t *a, const result_t *s)
{
    double dinit = a->t_init - s->t_init, dt = s->t_iter - a->t_iter;
    if (dinit <= 0) return dt >= 0 ? 0 : -1;
    if (dt <= 0) return -1;
    return (long)ceil(dinit / dt);
}

static void print_header(void)
{
    if (csv)
        printf(
            "workload,np,recv_len_rank0,strategy,ran,inter_msgs_max,inter_msgs_sum,inter_bytes_max,"
            "inter_bytes_sum,intra_msgs_max,t_iter_us,t_init_us,crossover_iters,predicted_us,graph_create_us,"
            "ok\n");
    else
        printf("%-22s %-11s %-10s %8s %8s %10s %10s %8s %10s %10s %9s %9s %3s\n", "workload", "strategy",
               "ran", "intMsgMx", "intMsgSm", "intBytMx", "intBytSm", "intraMx", "t_iter_us", "init_us",
               "crossover", "model_us", "ok");
}

static void print_row(bench_t *b, int a, const result_t *r, const result_t *std)
{
    char cross[24] = "-";
    if (a >= A_STD && a != A_STD && std->ran) {
        long n = crossover(r, std);
        if (n < 0)
            snprintf(cross, sizeof(cross), "never");
        else
            snprintf(cross, sizeof(cross), "%ld", n);
    }
    int has_stats = a >= A_STD;
    if (csv) {
        printf("%s,%d,%d,%s,%s,", b->name, size, b->p.rlen, aname[a], r->alg);
        if (has_stats)
            printf("%llu,%llu,%llu,%llu,%llu,", (unsigned long long)r->inter_msgs_max,
                   (unsigned long long)r->inter_msgs_sum, (unsigned long long)r->inter_bytes_max,
                   (unsigned long long)r->inter_bytes_sum, (unsigned long long)r->intra_msgs_max);
        else
            printf(",,,,,");
        printf("%.3f,%.3f,%s,%.3f,%.3f,%d\n", r->t_iter * 1e6, r->t_init * 1e6, cross,
               has_stats ? r->predicted * 1e6 : -1.0, b->graph_time * 1e6, r->ok);
        return;
    }
    if (has_stats)
        printf("%-22s %-11s %-10s %8llu %8llu %10llu %10llu %8llu %10.2f %10.1f %9s %9.2f %3s\n", b->name,
               aname[a], r->alg, (unsigned long long)r->inter_msgs_max, (unsigned long long)r->inter_msgs_sum,
               (unsigned long long)r->inter_bytes_max, (unsigned long long)r->inter_bytes_sum,
               (unsigned long long)r->intra_msgs_max, r->t_iter * 1e6, r->t_init * 1e6, cross,
               r->predicted * 1e6, r->ok ? "ok" : "BAD");
    else
        printf("%-22s %-11s %-10s %8s %8s %10s %10s %8s %10.2f %10.1f %9s %9s %3s\n", b->name, aname[a],
               r->alg, "", "", "", "", "", r->t_iter * 1e6, r->t_init * 1e6, cross, "", r->ok ? "ok" : "BAD");
}

/* "a/b" as a factor, "-" when there is nothing between regions */
static const char *ratio(uint64_t a, uint64_t b, char *buf)
{
    if (b == 0)
        snprintf(buf, 16, "-");
    else
        snprintf(buf, 16, "%.2f", (double)a / (double)b);
    return buf;
}

/* Inter-region reduction factors: standard/aggregated messages, aggregated/dedup bytes. */
static void print_summary(void)
{
    printf("\n# inter-region reductions (sum over ranks; max = busiest rank)\n");
    printf("%-26s %9s %9s %7s %7s %10s %10s %7s %7s\n", "workload", "msgs std", "msgs agg", "sum x", "max x",
           "bytes agg", "bytes ddp", "sum x", "max x");
    for (int i = 0; i < nsums; i++) {
        summary_t *m = &sums[i];
        char r0[16], r1[16], r2[16], r3[16];
        printf("%-26s %9llu %9llu %7s %7s %10llu %10llu %7s %7s\n", m->name,
               (unsigned long long)m->msgs_sum[0], (unsigned long long)m->msgs_sum[1],
               ratio(m->msgs_sum[0], m->msgs_sum[1], r0), ratio(m->msgs_max[0], m->msgs_max[1], r1),
               (unsigned long long)m->bytes_sum[1], (unsigned long long)m->bytes_sum[2],
               ratio(m->bytes_sum[1], m->bytes_sum[2], r2), ratio(m->bytes_max[1], m->bytes_max[2], r3));
    }
}

static int setup(bench_t *b, const char *spec)
{
    int dummy = 0;
    memset(b, 0, sizeof(*b));
    b->name = spec;
    if (nb_workload_spec(MPI_COMM_WORLD, spec, &b->p)) return -1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, b->p.indeg, b->p.indeg ? b->p.sources : &dummy,
                                            MPI_UNWEIGHTED, b->p.outdeg, b->p.outdeg ? b->p.dests : &dummy,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &b->g);
    b->graph_time = max_over(MPI_Wtime() - t0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return -1;
    MPI_Type_contiguous(vec, MPI_DOUBLE, &b->t);
    MPI_Type_commit(&b->t);
    b->sbuf = calloc((size_t)b->p.slen * vec + 1, sizeof(double));
    b->rnat = calloc((size_t)b->p.rlen * vec + 1, sizeof(double));
    b->rbuf = calloc((size_t)b->p.rlen * vec + 1, sizeof(double));
    b->times = malloc((size_t)iters * sizeof(double));
    b->tmax = malloc((size_t)iters * sizeof(double));
    int bad = !b->sbuf || !b->rnat || !b->rbuf || !b->times || !b->tmax, any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return any ? -1 : 0;
}

static void teardown(bench_t *b)
{
    free(b->sbuf);
    free(b->rnat);
    free(b->rbuf);
    free(b->times);
    free(b->tmax);
    if (b->t != MPI_DATATYPE_NULL && b->t) MPI_Type_free(&b->t);
    if (b->g != MPI_COMM_NULL && b->g) MPI_Comm_free(&b->g);
    nb_pattern_free(&b->p);
}

static void run_workload(const char *spec)
{
    bench_t b;
    result_t r[NA];
    memset(r, 0, sizeof(r));
    if (setup(&b, spec)) {
        if (rank == 0) fprintf(stderr, "mcoll-neighbor-bench: workload %s failed to build\n", spec);
        teardown(&b);
        return;
    }
    fill_send(&b);
    time_native(&b, &r[A_NATIVE]);
#if MPI_VERSION >= 4
    run_native_init(&b, &r[A_NATIVE_INIT]);
#endif
    static const char *algs[] = {"standard", "aggregated", "dedup", "auto"};
    for (int a = A_STD; a < NA; a++) run_mcoll(&b, algs[a - A_STD], &r[a]);
    if (rank == 0)
        for (int a = 0; a < NA; a++)
            if (r[a].ran) print_row(&b, a, &r[a], &r[A_STD]);
    if (rank == 0 && nsums < 128) {
        summary_t *m = &sums[nsums++];
        m->name = spec;
        for (int a = 0; a < 3; a++) {
            m->msgs_sum[a] = r[A_STD + a].inter_msgs_sum;
            m->msgs_max[a] = r[A_STD + a].inter_msgs_max;
            m->bytes_sum[a] = r[A_STD + a].inter_bytes_sum;
            m->bytes_max[a] = r[A_STD + a].inter_bytes_max;
        }
    }
    if (rank == 0) fflush(stdout);
    teardown(&b);
}

int main(int argc, char **argv)
{
    const char *wl[128];
    int nwl = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--workload") && i + 1 < argc && nwl < 128)
            wl[nwl++] = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--vec") && i + 1 < argc)
            vec = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (!strcmp(argv[i], "--list")) {
            if (rank == 0)
                for (int k = 0; k < nb_nworkloads; k++)
                    printf("%s %s\n", nb_workloads[k].name, nb_workloads[k].arg);
            MPI_Finalize();
            return 0;
        } else {
            if (rank == 0)
                fprintf(stderr,
                        "usage: %s [--workload NAME|KIND:ARGS]... [--iters N] [--vec K] [--csv] [--list]\n"
                        "kinds: stencil:NPTS:NXxNY[xNZ]  halo:NPTS:NXxNY  random:N:NNZROW:FAR:BAND:SEED\n"
                        "       mtx:FILE  rotaniso:NXxNY:NPTS:LEVEL[:EPS:THETA]  (append :pad for gaps)\n",
                        argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (iters < 1 || vec < 1) iters = vec = 1;
    if (nwl == 0)
        for (size_t k = 0; k < sizeof(default_wl) / sizeof(default_wl[0]); k++) wl[nwl++] = default_wl[k];
    mcoll_comm_info_t ci; /* collective: every rank asks */
    mcoll_comm_info(MPI_COMM_WORLD, &ci);
    if (rank == 0) {
        if (!csv) {
            printf("# mcoll-neighbor-bench: %d ranks, %d regions, %d iterations, %d double(s) per element\n",
                   size, ci.nnodes, iters, vec);
        }
        print_header();
    }
    for (int i = 0; i < nwl; i++) run_workload(wl[i]);
    if (rank == 0 && !csv) print_summary();
    MPI_Finalize();
    return 0;
}
