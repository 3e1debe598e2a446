/* mcoll-neighbor-workloads: every workload (tests/neighbor/workloads.c) through every neighbor
 * strategy, bitwise against data computed from the generator (wl_value of source rank, global
 * id, iteration) and against the native PMPI_Neighbor_alltoallv, over several iterations with
 * changing send data. Also checks the per-iteration counters for consistency:
 *   standard: inter/intra bytes = the pattern's bytes to other/own regions;
 *   sums over ranks: aggregated inter messages <= standard's, dedup inter bytes <= aggregated's.
 *
 *   mcoll-neighbor-workloads [--workload NAME|KIND:ARGS]... [--iters N]
 * Prints "mcoll-neighbor-workloads: ALL PASSED" on success; every failure line starts with FAIL. */
#include "workloads.h"

#include <mcoll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SENTINEL 0x5a5a5a5a5a5a5a5aULL
#define MAX_WL 64

enum { V_STD, V_AGG, V_DEDUP, V_AUTO, V_STD_PLAIN, V_AGG_PLAIN, V_DEDUP_PLAIN, V_AUTO_PLAIN, V_MPI4, NV };
static const char *vname[NV] = {"standard",    "aggregated",     "dedup",
                                "auto",        "standard/plain", "aggregated/plain",
                                "dedup/plain", "auto/plain",     "MPI_Neighbor_alltoallv_init"};
static const char *valg[NV] = {"standard",   "aggregated", "dedup", "auto", "standard",
                               "aggregated", "dedup",      "auto",  NULL};

static int rank, size, fails;
static volatile const char *current = "setup";

static void on_alarm(int sig)
{
    (void)sig;
    const char *msg = "FAIL watchdog fired in workload ";
    if (write(2, msg, strlen(msg)) < 0 || write(2, (const char *)current, strlen((const char *)current)) < 0)
        _exit(1);
    if (write(2, "\n", 1) < 0) _exit(1);
    _exit(1);
}

static void fail(const char *wl, const char *what, const char *fmt, long long a, long long b)
{
    fails++;
    printf("FAIL rank %d workload %s %s: ", rank, wl, what);
    printf(fmt, a, b);
    printf("\n");
    fflush(stdout);
}

typedef struct run {
    const char *name;
    nb_pattern_t p;
    MPI_Comm g;
    uint64_t *sbuf, *rexp, *rnat, *rbuf[NV];
    MPI_Request req[NV];
    int *region; /* region (node) of every rank, for the counter checks */
} run_t;

static void fill(run_t *r, int t)
{
    nb_pattern_t *p = &r->p;
    int64_t k = 0;
    for (int i = 0; i < p->slen; i++) r->sbuf[i] = SENTINEL;
    for (int i = 0; i < p->rlen; i++) r->rexp[i] = SENTINEL;
    for (int i = 0; i < p->outdeg; i++)
        for (int j = 0; j < p->scounts[i]; j++, k++)
            r->sbuf[p->sdispls[i] + j] = wl_value(rank, p->sidx[k], t);
    k = 0;
    for (int i = 0; i < p->indeg; i++)
        for (int j = 0; j < p->rcounts[i]; j++, k++)
            r->rexp[p->rdispls[i] + j] = wl_value(p->sources[i], p->ridx[k], t);
}

static void clear(uint64_t *b, int n)
{
    for (int i = 0; i < n; i++) b[i] = SENTINEL;
}

static void compare(run_t *r, const char *what, const uint64_t *got, int t)
{
    for (int i = 0; i < r->p.rlen; i++)
        if (got[i] != r->rexp[i]) {
            fail(r->name, what, "iteration %lld: first wrong element at %lld", t, i);
            return;
        }
}

static int alloc_bufs(run_t *r)
{
    size_t s = (size_t)(r->p.slen ? r->p.slen : 1) * 8, rl = (size_t)(r->p.rlen ? r->p.rlen : 1) * 8;
    r->sbuf = malloc(s);
    r->rexp = malloc(rl);
    r->rnat = malloc(rl);
    int ok = r->sbuf && r->rexp && r->rnat;
    for (int v = 0; v < NV; v++) ok &= (r->rbuf[v] = malloc(rl)) != NULL;
    r->region = malloc((size_t)size * sizeof(int));
    return ok && r->region ? 0 : -1;
}

static void free_run(run_t *r)
{
    free(r->sbuf);
    free(r->rexp);
    free(r->rnat);
    for (int v = 0; v < NV; v++) free(r->rbuf[v]);
    free(r->region);
    if (r->g != MPI_COMM_NULL) MPI_Comm_free(&r->g);
    nb_pattern_free(&r->p);
}

static int init_variant(run_t *r, int v)
{
    nb_pattern_t *p = &r->p;
    MPI_Info info;
    int rc;
    r->req[v] = MPI_REQUEST_NULL;
    if (v == V_MPI4) {
#if MPI_VERSION >= 4
        return MPI_Neighbor_alltoallv_init(r->sbuf, p->scounts, p->sdispls, MPI_UINT64_T, r->rbuf[v],
                                           p->rcounts, p->rdispls, MPI_UINT64_T, r->g, MPI_INFO_NULL,
                                           &r->req[v]);
#else
        return MPI_SUCCESS;
#endif
    }
    MPI_Info_create(&info);
    MPI_Info_set(info, "mcoll_neighbor_alg", valg[v]);
    if (v < V_STD_PLAIN)
        rc = mcoll_neighbor_alltoallv_init_ext(r->sbuf, p->scounts, p->sdispls, MPI_UINT64_T, r->rbuf[v],
                                               p->rcounts, p->rdispls, MPI_UINT64_T, p->sidx, p->ridx, r->g,
                                               info, &r->req[v]);
    else
        rc = mcoll_neighbor_alltoallv_init(r->sbuf, p->scounts, p->sdispls, MPI_UINT64_T, r->rbuf[v],
                                           p->rcounts, p->rdispls, MPI_UINT64_T, r->g, info, &r->req[v]);
    MPI_Info_free(&info);
    return rc;
}

/* The strategy that must run for a forced variant (dedup without ids runs aggregated). */
static const char *expected_alg(int v)
{
    if (v == V_DEDUP_PLAIN) return "aggregated";
    if (v == V_AUTO || v == V_AUTO_PLAIN || v == V_MPI4) return NULL;
    return valg[v];
}

static void check_standard_counts(run_t *r, const mcoll_neighbor_stats_t *st)
{
    uint64_t inter = 0, intra = 0, self = 0;
    int me = r->region[rank];
    for (int i = 0; i < r->p.outdeg; i++) {
        uint64_t b = (uint64_t)r->p.scounts[i] * 8;
        int d = r->p.dests[i];
        if (d == rank)
            self += b;
        else if (r->region[d] == me)
            intra += b;
        else
            inter += b;
    }
    if (st->inter_bytes != inter)
        fail(r->name, "standard", "inter_bytes %lld, pattern has %lld", st->inter_bytes, inter);
    if (st->intra_bytes != intra)
        fail(r->name, "standard", "intra_bytes %lld, pattern has %lld", st->intra_bytes, intra);
    if (st->self_bytes != self)
        fail(r->name, "standard", "self_bytes %lld, pattern has %lld", st->self_bytes, self);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* What the strategies must move between regions, from the pattern alone (sums over ranks):
 * exp[0] = values (aggregated moves them all), exp[1] = distinct (source, id, destination
 * region) (dedup), exp[2] = ordered region pairs with data, exp[3] = with any edge. */
static void expected_inter(run_t *r, uint64_t *exp)
{
    nb_pattern_t *p = &r->p;
    int me = r->region[rank], nreg = 0;
    for (int i = 0; i < size; i++) nreg = r->region[i] + 1 > nreg ? r->region[i] + 1 : nreg;
    int64_t nsend = 0;
    for (int i = 0; i < p->outdeg; i++) nsend += p->scounts[i];
    uint64_t *keys = malloc((size_t)(nsend + 1) * sizeof(uint64_t)), loc[2] = {0, 0};
    int *pairs = calloc((size_t)nreg * nreg * 2, sizeof(int)),
        *all = calloc((size_t)nreg * nreg * 2, sizeof(int));
    int64_t nk = 0, k = 0;
    for (int i = 0; i < p->outdeg; i++) {
        int dr = r->region[p->dests[i]];
        if (dr != me) {
            pairs[2 * (me * nreg + dr) + 1] = 1;
            pairs[2 * (me * nreg + dr)] |= p->scounts[i] > 0;
        }
        for (int j = 0; j < p->scounts[i]; j++, k++)
            if (dr != me) keys[nk++] = ((uint64_t)p->sidx[k] << 12) | (uint64_t)dr;
    }
    qsort(keys, (size_t)nk, sizeof(uint64_t), cmp_u64);
    loc[0] = (uint64_t)nk;
    for (int64_t q = 0; q < nk; q++) loc[1] += q == 0 || keys[q] != keys[q - 1];
    MPI_Allreduce(loc, exp, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(pairs, all, nreg * nreg * 2, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    exp[2] = exp[3] = 0;
    for (int q = 0; q < nreg * nreg; q++) exp[2] += all[2 * q], exp[3] += all[2 * q + 1];
    free(keys);
    free(pairs);
    free(all);
}

/* Sums over ranks of inter messages and bytes per variant, against expected_inter. */
static void check_stats(run_t *r, int iters)
{
    uint64_t loc[2 * NV] = {0}, sum[2 * NV];
    for (int v = 0; v < V_MPI4; v++) {
        mcoll_neighbor_stats_t st;
        if (mcoll_neighbor_stats(r->req[v], &st) != MPI_SUCCESS) {
            fail(r->name, vname[v], "mcoll_neighbor_stats failed", 0, 0);
            continue;
        }
        const char *want = expected_alg(v);
        if (want && strcmp(st.alg_name, want) != 0) {
            fails++;
            printf("FAIL rank %d workload %s %s: ran %s\n", rank, r->name, vname[v], st.alg_name);
        }
        if (st.starts != (uint64_t)iters)
            fail(r->name, vname[v], "starts %lld, expected %lld", st.starts, iters);
        if (v == V_STD) check_standard_counts(r, &st);
        loc[2 * v] = st.inter_msgs;
        loc[2 * v + 1] = st.inter_bytes;
    }
    uint64_t exp[4];
    MPI_Allreduce(loc, sum, 2 * NV, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    expected_inter(r, exp);
    if (rank != 0) return;
    if (sum[2 * V_AGG] > sum[2 * V_STD])
        fail(r->name, "aggregated", "sum inter msgs %lld > standard %lld", sum[2 * V_AGG], sum[2 * V_STD]);
    if (sum[2 * V_AGG] != exp[2] && sum[2 * V_AGG] != exp[3])
        fail(r->name, "aggregated", "sum inter msgs %lld, region pairs %lld", sum[2 * V_AGG], exp[2]);
    if (sum[2 * V_AGG + 1] != 8 * exp[0])
        fail(r->name, "aggregated", "sum inter bytes %lld, pattern moves %lld", sum[2 * V_AGG + 1],
             8 * exp[0]);
    if (sum[2 * V_DEDUP + 1] != 8 * exp[1])
        fail(r->name, "dedup", "sum inter bytes %lld, distinct values %lld", sum[2 * V_DEDUP + 1],
             8 * exp[1]);
    printf("  %-16s inter msgs std %llu agg %llu dedup %llu, bytes std %llu agg %llu dedup %llu\n", r->name,
           (unsigned long long)sum[0], (unsigned long long)sum[2], (unsigned long long)sum[4],
           (unsigned long long)sum[1], (unsigned long long)sum[3], (unsigned long long)sum[5]);
}

static void iterate(run_t *r, int iters)
{
    nb_pattern_t *p = &r->p;
    for (int t = 0; t < iters; t++) {
        fill(r, t);
        clear(r->rnat, p->rlen);
        if (PMPI_Neighbor_alltoallv(r->sbuf, p->scounts, p->sdispls, MPI_UINT64_T, r->rnat, p->rcounts,
                                    p->rdispls, MPI_UINT64_T, r->g) != MPI_SUCCESS)
            fail(r->name, "native", "PMPI_Neighbor_alltoallv failed", 0, 0);
        compare(r, "native (pattern check)", r->rnat, t);
        for (int v = 0; v < NV; v++) {
            if (r->req[v] == MPI_REQUEST_NULL) continue;
            current = vname[v];
            clear(r->rbuf[v], p->rlen);
            if (MPI_Start(&r->req[v]) != MPI_SUCCESS ||
                MPI_Wait(&r->req[v], MPI_STATUS_IGNORE) != MPI_SUCCESS)
                fail(r->name, vname[v], "start/wait failed", 0, 0);
            compare(r, vname[v], r->rbuf[v], t);
        }
        /* the interposed blocking call */
        clear(r->rbuf[0], p->rlen);
        if (MPI_Neighbor_alltoallv(r->sbuf, p->scounts, p->sdispls, MPI_UINT64_T, r->rbuf[0], p->rcounts,
                                   p->rdispls, MPI_UINT64_T, r->g) != MPI_SUCCESS)
            fail(r->name, "blocking", "MPI_Neighbor_alltoallv failed", 0, 0);
        compare(r, "blocking MPI_Neighbor_alltoallv", r->rbuf[0], t);
    }
}

static void run_workload(const char *spec, int iters)
{
    run_t r;
    memset(&r, 0, sizeof(r));
    r.name = spec;
    r.g = MPI_COMM_NULL;
    current = spec;
    if (nb_workload_spec(MPI_COMM_WORLD, spec, &r.p) != 0) {
        if (rank == 0) printf("FAIL workload %s: generator failed\n", spec);
        fails++;
        return;
    }
    int dummy = 0;
    if (MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, r.p.indeg, r.p.indeg ? r.p.sources : &dummy,
                                       MPI_UNWEIGHTED, r.p.outdeg, r.p.outdeg ? r.p.dests : &dummy,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &r.g) != MPI_SUCCESS ||
        alloc_bufs(&r)) {
        fail(spec, "setup", "graph or buffers failed", 0, 0);
        free_run(&r);
        return;
    }
    mcoll_comm_info_t ci;
    mcoll_comm_info(r.g, &ci);
    MPI_Allgather(&ci.node, 1, MPI_INT, r.region, 1, MPI_INT, MPI_COMM_WORLD);
    fill(&r, 0);
    for (int v = 0; v < NV; v++) {
        current = vname[v];
        if (init_variant(&r, v) != MPI_SUCCESS) fail(spec, vname[v], "init failed", 0, 0);
    }
    iterate(&r, iters);
    check_stats(&r, iters);
    for (int v = 0; v < NV; v++)
        if (r.req[v] != MPI_REQUEST_NULL && MPI_Request_free(&r.req[v]) != MPI_SUCCESS)
            fail(spec, vname[v], "MPI_Request_free failed", 0, 0);
    free_run(&r);
}

int main(int argc, char **argv)
{
    const char *wl[MAX_WL];
    int nwl = 0, iters = 3;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--workload") && i + 1 < argc && nwl < MAX_WL)
            wl[nwl++] = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else {
            if (rank == 0) fprintf(stderr, "usage: %s [--workload NAME|KIND:ARGS]... [--iters N]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if (getenv("MCOLL_TEST_WATCHDOG")) {
        signal(SIGALRM, on_alarm);
        alarm((unsigned)atoi(getenv("MCOLL_TEST_WATCHDOG")));
    }
    if (nwl == 0)
        for (int i = 0; i < nb_nworkloads && nwl < MAX_WL; i++) wl[nwl++] = nb_workloads[i].name;
    if (rank == 0) printf("mcoll-neighbor-workloads: %d ranks, %d iterations\n", size, iters);
    for (int i = 0; i < nwl; i++) run_workload(wl[i], iters);
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("mcoll-neighbor-workloads: %s\n", all ? "FAILED" : "ALL PASSED");
    MPI_Finalize();
    return all != 0;
}
