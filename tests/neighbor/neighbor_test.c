/* neighbor-test: persistent neighbor alltoallv requests of mcoll (issue 5).
 *
 * For each built-in pattern (patterns.c) x element type x strategy: init (plain and _ext),
 * then iterations with new send data each time, driven alternately by MPI_Start/MPI_Wait,
 * MPI_Start/MPI_Test, MPI_Startall/MPI_Waitall with a native persistent request mixed in,
 * and MPI_Startall/MPI_Testall. Every result is compared bitwise (gaps included) with data
 * computed from the pattern, and on the first and last iteration with
 * PMPI_Neighbor_alltoallv. Counters: the sum over ranks of inter-region messages and bytes
 * against the pattern (standard: edges; aggregated: region pairs; dedup: distinct ids).
 * Request free before completion, MPI_Waitany, MPI_Waitsome, MPI_Testsome,
 * MPI_Request_get_status, the blocking MPI_Neighbor_alltoallv and (MPI 4)
 * MPI_Neighbor_alltoallv_init are checked too, and five requests alive at once (slots of the
 * communicator's shared duplicate, run_slots) and a request outliving its communicator.
 *
 *   neighbor-test [--iters N] [--long-iters N] [--pattern NAME]
 * Prints "neighbor-test: ALL PASSED"; failures print lines starting with FAIL. */
#include "nb_pattern.h"
#include <mcoll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, fails;
static int iters = 10, long_iters = 1000;
static char current[160] = "setup";

static void on_alarm(int sig)
{
    (void)sig;
    const char *m = "FAIL watchdog: ";
    if (write(2, m, strlen(m)) < 0 || write(2, current, strlen(current)) < 0) _exit(1);
    _exit(1);
}

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fails++;                                                                                         \
            printf("FAIL rank %d [%s] ", rank, current);                                                     \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
            fflush(stdout);                                                                                  \
        }                                                                                                    \
    } while (0)

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint64_t value(int r, int64_t id, int t)
{
    return mix(mix(((uint64_t)r << 32) ^ (uint64_t)t) ^ (uint64_t)id);
}

/* Element types: 8 data bytes each; "strided" has a 16-byte extent (not contiguous). */
typedef struct etype {
    const char *name;
    MPI_Datatype t;
    size_t ext;
} etype_t;
static etype_t types[3];

static void make_types(void)
{
    MPI_Datatype c2, s;
    MPI_Type_contiguous(2, MPI_UINT32_T, &c2);
    MPI_Type_commit(&c2);
    MPI_Type_create_resized(MPI_UINT64_T, 0, 16, &s);
    MPI_Type_commit(&s);
    types[0] = (etype_t){"u64", MPI_UINT64_T, 8};
    types[1] = (etype_t){"2xu32", c2, 8};
    types[2] = (etype_t){"strided", s, 16};
}

typedef struct tc {
    const nb_pattern_t *p;
    MPI_Comm g;
    const etype_t *et;
    char *sbuf, *rbuf, *exp, *ref;
    size_t slen, rlen;
    int *region; /* node of every rank */
} tc_t;

static void fill(tc_t *c, int t)
{
    const nb_pattern_t *p = c->p;
    int64_t k = 0;
    for (int i = 0; i < p->outdeg; i++)
        for (int j = 0; j < p->scounts[i]; j++, k++) {
            uint64_t v = value(rank, p->sidx[k], t);
            memcpy(c->sbuf + (size_t)(p->sdispls[i] + j) * c->et->ext, &v, 8);
        }
    memset(c->rbuf, 0xEE, c->rlen);
    memset(c->exp, 0xEE, c->rlen);
    k = 0;
    for (int i = 0; i < p->indeg; i++)
        for (int j = 0; j < p->rcounts[i]; j++, k++) {
            uint64_t v = value(p->sources[i], p->ridx[k], t);
            memcpy(c->exp + (size_t)(p->rdispls[i] + j) * c->et->ext, &v, 8);
        }
}

static void compare_native(tc_t *c)
{
    const nb_pattern_t *p = c->p;
    memset(c->ref, 0xEE, c->rlen);
    PMPI_Neighbor_alltoallv(c->sbuf, p->scounts, p->sdispls, c->et->t, c->ref, p->rcounts, p->rdispls,
                            c->et->t, c->g);
    CHECK(!memcmp(c->ref, c->rbuf, c->rlen), "differs from PMPI_Neighbor_alltoallv");
}

/* One iteration, driven in one of four ways. */
static void drive(tc_t *c, MPI_Request *req, int t)
{
    static uint64_t nat_s, nat_r;
    MPI_Request nat[2], all[3];
    int flag = 0, mode = t % 4;
    if (mode == 0) {
        MPI_Start(req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
    } else if (mode == 1 && t % 8 == 5) {
        /* MPI_Request_get_status: true while inactive, then polls without completing */
        MPI_Request_get_status(*req, &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "request_get_status: an inactive request reads as not complete");
        MPI_Start(req);
        flag = 0;
        while (!flag) MPI_Request_get_status(*req, &flag, MPI_STATUS_IGNORE);
        CHECK(!memcmp(c->rbuf, c->exp, c->rlen), "request_get_status said complete before the data");
        MPI_Wait(req, MPI_STATUS_IGNORE);
    } else if (mode == 1) {
        MPI_Start(req);
        while (!flag) MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    } else {
        nat_s = (uint64_t)t * 31 + 7, nat_r = 0;
        MPI_Send_init(&nat_s, 1, MPI_UINT64_T, 0, 5, MPI_COMM_SELF, &nat[0]);
        MPI_Recv_init(&nat_r, 1, MPI_UINT64_T, 0, 5, MPI_COMM_SELF, &nat[1]);
        all[0] = nat[1], all[1] = *req, all[2] = nat[0];
        MPI_Startall(3, all);
        MPI_Status st[3];
        if (mode == 2) {
            MPI_Waitall(3, all, st);
        } else {
            while (!flag) MPI_Testall(3, all, &flag, st);
        }
        CHECK(all[1] == *req, "mcoll handle changed by Waitall/Testall");
        CHECK(nat_r == nat_s, "native request in a mixed Startall/Waitall: %llu != %llu",
              (unsigned long long)nat_r, (unsigned long long)nat_s);
        MPI_Request_free(&all[0]);
        MPI_Request_free(&all[2]);
    }
}

static int init_req(tc_t *c, const char *alg, int ext, MPI_Request *req)
{
    const nb_pattern_t *p = c->p;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mcoll_neighbor_alg", alg);
    int rc = ext ? mcoll_neighbor_alltoallv_init_ext(c->sbuf, p->scounts, p->sdispls, c->et->t, c->rbuf,
                                                     p->rcounts, p->rdispls, c->et->t, p->sidx, p->ridx, c->g,
                                                     info, req)
                 : mcoll_neighbor_alltoallv_init(c->sbuf, p->scounts, p->sdispls, c->et->t, c->rbuf,
                                                 p->rcounts, p->rdispls, c->et->t, c->g, info, req);
    MPI_Info_free(&info);
    return rc;
}

static const char *expected_alg(const tc_t *c, const char *alg, int ext)
{
    if (!strcmp(alg, "auto")) return NULL;
    if (c->et->ext != 8) return "standard"; /* non-contiguous: declined to standard */
    if (!strcmp(alg, "dedup") && !ext) return "aggregated";
    return alg;
}

/* Sums over ranks of the inter-region traffic the counters must show. */
static void expected_inter(const tc_t *c, int alg, uint64_t *msgs, uint64_t *bytes)
{
    const nb_pattern_t *p = c->p;
    int me = c->region[rank];
    uint64_t v[2] = {0, 0};
    int *pair = calloc((size_t)size, sizeof(int));
    int64_t k = 0, tot = 0;
    for (int i = 0; i < p->outdeg; i++) tot += p->scounts[i];
    int *preg = malloc(sizeof(int) * (size_t)(tot + 1)); /* region of each send position */
    for (int i = 0; i < p->outdeg; i++)
        for (int j = 0; j < p->scounts[i]; j++) preg[k++] = c->region[p->dests[i]];
    k = 0;
    for (int i = 0; i < p->outdeg; i++) {
        int rb = c->region[p->dests[i]];
        if (rb != me && p->scounts[i]) {
            if (alg == MCOLL_NEIGHBOR_STANDARD) v[0]++, v[1] += 8 * (uint64_t)p->scounts[i];
            if (alg == MCOLL_NEIGHBOR_AGGREGATED) v[1] += 8 * (uint64_t)p->scounts[i];
            pair[rb] = 1;
        }
        if (alg == MCOLL_NEIGHBOR_DEDUP && rb != me)
            for (int j = 0; j < p->scounts[i]; j++) {
                int seen = 0; /* an earlier position with the same id towards region rb */
                for (int64_t q = 0; q < k + j && !seen; q++)
                    seen = preg[q] == rb && p->sidx[q] == p->sidx[k + j];
                if (!seen) v[1] += 8;
            }
        k += p->scounts[i];
    }
    /* region pairs: one G message per (source region, destination region) */
    int *all = malloc(sizeof(int) * (size_t)size * (size_t)size);
    MPI_Allgather(pair, size, MPI_INT, all, size, MPI_INT, MPI_COMM_WORLD);
    if (alg != MCOLL_NEIGHBOR_STANDARD && rank == 0) {
        int *seen = calloc((size_t)size * (size_t)size, sizeof(int));
        for (int a = 0; a < size; a++)
            for (int rb = 0; rb < size; rb++)
                if (all[a * size + rb] && !seen[c->region[a] * size + rb]) {
                    seen[c->region[a] * size + rb] = 1;
                    v[0]++;
                }
        free(seen);
    }
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    *msgs = v[0], *bytes = v[1];
    free(pair), free(all), free(preg);
}

static void check_stats(tc_t *c, MPI_Request req, const char *alg, int ext)
{
    mcoll_neighbor_stats_t st;
    int rc = mcoll_neighbor_stats(req, &st);
    CHECK(rc == MPI_SUCCESS, "mcoll_neighbor_stats rc %d", rc);
    const char *want = expected_alg(c, alg, ext);
    CHECK(!want || !strcmp(want, st.alg_name), "strategy %s, expected %s", st.alg_name, want ? want : "");
    CHECK(st.cost[0] >= 0 && st.init_time >= 0, "cost/init_time");
    uint64_t v[2] = {st.inter_msgs, st.inter_bytes}, m, b;
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    int a = st.alg; /* collective: every rank runs the same strategy */
    if (c->et->ext == 8) {
        expected_inter(c, a, &m, &b);
        CHECK(v[0] == m && v[1] == b, "%s inter msgs/bytes %llu/%llu, expected %llu/%llu", st.alg_name,
              (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)m,
              (unsigned long long)b);
    }
}

static void run_alg(tc_t *c, const char *alg, int ext, int n)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = init_req(c, alg, ext, &req);
    CHECK(rc == MPI_SUCCESS && req != MPI_REQUEST_NULL, "init rc %d", rc);
    if (rc != MPI_SUCCESS) return;
    check_stats(c, req, alg, ext);
    for (int t = 0; t < n; t++) {
        fill(c, t);
        drive(c, &req, t);
        int ok = !memcmp(c->rbuf, c->exp, c->rlen);
        CHECK(ok, "iteration %d: result differs from the expected data", t);
        if (!ok) break;
        if (t == 0 || t == n - 1) compare_native(c);
    }
    mcoll_neighbor_stats_t st;
    mcoll_neighbor_stats(req, &st);
    CHECK(st.starts == (uint64_t)n, "starts %llu != %d", (unsigned long long)st.starts, n);
    MPI_Request_free(&req); /* after completion */
    CHECK(req == MPI_REQUEST_NULL, "request not null after free");
    /* free while active: the operation still completes */
    rc = init_req(c, alg, ext, &req);
    fill(c, 777);
    MPI_Start(&req);
    MPI_Request_free(&req);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!memcmp(c->rbuf, c->exp, c->rlen), "free while active: result differs");
}

/* MPI_Waitsome (or, `test`, MPI_Testsome in a loop) until both requests completed, each index
 * reported once. */
static void some_loop(MPI_Request *r, int test)
{
    int idx[2], n, seen[2] = {0, 0}, done = 0, rounds = 0;
    while (done < 2) {
        if (test) MPI_Testsome(2, r, &n, idx, MPI_STATUSES_IGNORE);
        else MPI_Waitsome(2, r, &n, idx, MPI_STATUSES_IGNORE);
        CHECK(n != MPI_UNDEFINED, "%s: MPI_UNDEFINED with %d of 2 requests done",
              test ? "testsome" : "waitsome", done);
        if (n == MPI_UNDEFINED) return;
        CHECK(test || n > 0, "waitsome returned no request");
        for (int k = 0; k < n; k++) {
            CHECK(idx[k] == 0 || idx[k] == 1, "some: index %d", idx[k]);
            if (idx[k] != 0 && idx[k] != 1) return;
            CHECK(!seen[idx[k]], "some: index %d reported twice", idx[k]);
            seen[idx[k]] = 1;
            done++;
        }
        if (++rounds > 100000000) {
            CHECK(0, "some: no completion");
            return;
        }
    }
    MPI_Testsome(2, r, &n, idx, MPI_STATUSES_IGNORE);
    CHECK(n == MPI_UNDEFINED, "testsome after both completed: outcount %d", n);
}

/* Two requests waited in opposite orders on alternate ranks, with MPI_Waitany, MPI_Waitsome and
 * MPI_Testsome. */
static void run_two(tc_t *c)
{
    MPI_Request r[2];
    char *rb2 = malloc(c->rlen), *keep = c->rbuf;
    init_req(c, "aggregated", 1, &r[0]);
    c->rbuf = rb2;
    init_req(c, "dedup", 1, &r[1]);
    c->rbuf = keep;
    for (int t = 0; t < 8; t++) {
        fill(c, t);
        memset(rb2, 0xEE, c->rlen);
        MPI_Startall(2, r);
        if (t % 4 == 2) {
            int idx, done = 0;
            while (done < 2) {
                MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
                CHECK(idx == 0 || idx == 1, "waitany index %d", idx);
                done++;
            }
        } else if (t % 4 == 3) {
            some_loop(r, t == 7);
        } else if (rank % 2 == t % 2) {
            MPI_Wait(&r[0], MPI_STATUS_IGNORE), MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        } else {
            MPI_Wait(&r[1], MPI_STATUS_IGNORE), MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        }
        CHECK(!memcmp(c->rbuf, c->exp, c->rlen) && !memcmp(rb2, c->exp, c->rlen),
              "two requests, iteration %d", t);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    free(rb2);
}

/* Requests alive at once share their communicator's duplicate, a slot of tags each; with
 * MCOLL_NEIGHBOR_SLOTS=k the (k+1)-th finds its slot taken and makes a duplicate of its own
 * (mcoll_neighbor_stats' shared_comm). Every request then runs three iterations at once
 * (MPI_Startall), each into its own receive buffer; they are freed in opposite orders on
 * alternate ranks, after which the next inits find free slots again. Last, a request outlives
 * its communicator (MPI_Comm_free right after the init), which MPI allows. */
enum { NSLOT_REQ = 5 };
static void run_slots(tc_t *c)
{
    const char *e = getenv("MCOLL_NEIGHBOR_SLOTS");
    int cap = e ? atoi(e) : 0, used = 0;
    const char *algs[] = {"standard", "aggregated", "dedup"};
    MPI_Request r[NSLOT_REQ];
    char *rb[NSLOT_REQ], *keep = c->rbuf;
    for (int round = 0; round < 2; round++) {
        int n = round ? 2 : NSLOT_REQ;
        for (int i = 0; i < n; i++) {
            c->rbuf = rb[i] = malloc(c->rlen ? c->rlen : 1);
            init_req(c, algs[i % 3], 1, &r[i]);
            mcoll_neighbor_stats_t st;
            mcoll_neighbor_stats(r[i], &st);
            int want = cap <= 0 || i < cap; /* round 1: round 0's slots were all freed */
            CHECK(st.shared_comm == want, "round %d request %d: shared_comm %d, expected %d", round, i,
                  st.shared_comm, want);
            used += st.shared_comm;
        }
        for (int t = 0; t < 3; t++) {
            fill(c, t);
            for (int i = 0; i < n; i++) memset(rb[i], 0xEE, c->rlen);
            MPI_Startall(n, r);
            MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
            for (int i = 0; i < n; i++)
                CHECK(!memcmp(rb[i], c->exp, c->rlen), "round %d request %d iteration %d differs", round, i,
                      t);
        }
        for (int k = 0; k < n; k++) {
            int i = rank % 2 ? n - 1 - k : k;
            MPI_Request_free(&r[i]);
            free(rb[i]);
        }
    }
    CHECK(used > 0, "no request took the shared communicator");
    MPI_Comm g2;
    MPI_Comm_dup(c->g, &g2); /* keeps the topology */
    MPI_Comm g = c->g;
    c->g = g2;
    c->rbuf = rb[0] = malloc(c->rlen ? c->rlen : 1);
    init_req(c, "aggregated", 1, &r[0]);
    c->g = g;
    MPI_Comm_free(&g2);
    for (int t = 0; t < 3; t++) {
        fill(c, 10 + t);
        memset(rb[0], 0xEE, c->rlen);
        MPI_Start(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        CHECK(!memcmp(rb[0], c->exp, c->rlen), "after MPI_Comm_free, iteration %d differs", t);
    }
    MPI_Request_free(&r[0]);
    free(rb[0]);
    c->rbuf = keep;
}

static void run_blocking(tc_t *c)
{
    const nb_pattern_t *p = c->p;
    fill(c, 3);
    MPI_Neighbor_alltoallv(c->sbuf, p->scounts, p->sdispls, c->et->t, c->rbuf, p->rcounts, p->rdispls,
                           c->et->t, c->g);
    CHECK(!memcmp(c->rbuf, c->exp, c->rlen), "blocking MPI_Neighbor_alltoallv differs");
#if MPI_VERSION >= 4
    MPI_Request req;
    int rc = MPI_Neighbor_alltoallv_init(c->sbuf, p->scounts, p->sdispls, c->et->t, c->rbuf, p->rcounts,
                                         p->rdispls, c->et->t, c->g, MPI_INFO_NULL, &req);
    mcoll_neighbor_stats_t st;
    CHECK(rc == MPI_SUCCESS && mcoll_neighbor_stats(req, &st) == MPI_SUCCESS,
          "MPI_Neighbor_alltoallv_init is not an mcoll request");
    for (int t = 0; t < 4; t++) {
        fill(c, t);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(!memcmp(c->rbuf, c->exp, c->rlen), "MPI_Neighbor_alltoallv_init iteration %d", t);
    }
    MPI_Request_free(&req);
#endif
}

static void run_pattern(const nb_workload_t *w, int *region)
{
    nb_pattern_t p;
    snprintf(current, sizeof current, "%s: generate", w->name);
    if (w->fn(MPI_COMM_WORLD, w->arg, &p) != 0) {
        CHECK(0, "pattern generation failed");
        return;
    }
    tc_t c = {.p = &p, .region = region};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, p.indeg, p.sources, MPI_UNWEIGHTED, p.outdeg, p.dests,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c.g);
    const char *algs[] = {"standard", "aggregated", "dedup", "auto"};
    for (int ti = 0; ti < 3; ti++) {
        c.et = &types[ti];
        c.slen = (size_t)p.slen * c.et->ext, c.rlen = (size_t)p.rlen * c.et->ext;
        c.sbuf = calloc(c.slen, 1), c.rbuf = malloc(c.rlen), c.exp = malloc(c.rlen), c.ref = malloc(c.rlen);
        for (int a = 0; a < 4; a++)
            for (int ext = 0; ext < 2; ext++) {
                int n = (!strcmp(w->name, "ring") && ti == 0 && ext) ? long_iters : iters;
                snprintf(current, sizeof current, "%s type %s alg %s %s", w->name, c.et->name, algs[a],
                         ext ? "ext" : "plain");
                run_alg(&c, algs[a], ext, n);
            }
        if (ti == 0) {
            snprintf(current, sizeof current, "%s two requests", w->name);
            run_two(&c);
            snprintf(current, sizeof current, "%s requests at once", w->name);
            run_slots(&c);
        }
        snprintf(current, sizeof current, "%s type %s blocking", w->name, c.et->name);
        run_blocking(&c);
        free(c.sbuf), free(c.rbuf), free(c.exp), free(c.ref);
    }
    MPI_Comm_free(&c.g);
    nb_pattern_free(&p);
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--long-iters") && i + 1 < argc)
            long_iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pattern") && i + 1 < argc)
            only = argv[++i];
    }
    if (getenv("MCOLL_TEST_WATCHDOG")) {
        signal(SIGALRM, on_alarm);
        alarm((unsigned)atoi(getenv("MCOLL_TEST_WATCHDOG")));
    }
    make_types();
    mcoll_comm_info_t ci;
    mcoll_comm_info(MPI_COMM_WORLD, &ci);
    /* regions as the library should see them: nodes, or (node, virtual socket) */
    const char *rg = getenv("MCOLL_NEIGHBOR_REGION"), *vs = getenv("MCOLL_VSOCKET_SIZE");
    int key = ci.node;
    if (rg && !strcmp(rg, "socket") && vs && atoi(vs) > 0) key = ci.node * 100000 + ci.local_rank / atoi(vs);
    int *region = malloc(sizeof(int) * (size_t)size), *keys = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&key, 1, MPI_INT, keys, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        region[r] = r;
        for (int q = 0; q < r; q++)
            if (keys[q] == keys[r]) {
                region[r] = region[q];
                break;
            }
    }
    free(keys);
    for (int i = 0; i < nb_nbuiltin; i++)
        if (!only || !strcmp(only, nb_builtin[i].name)) run_pattern(&nb_builtin[i], region);
    int total = fails;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(total ? "neighbor-test: %d FAILURES\n" : "neighbor-test: ALL PASSED\n", total);
    free(region);
    MPI_Type_free(&types[1].t);
    MPI_Type_free(&types[2].t);
    MPI_Finalize();
    return total != 0;
}
