/* mcoll-verify: every collective x every registered algorithm against independently computed
 * results. Usage:
 *   mcoll-verify [--coll NAME[,NAME..]|all] [--alg NAME|all|auto|env] [--quick|--large]
 *                [--seed N] [--vnode K] [--timeout SECONDS] [--heap] [--no-cma]
 *                [--verbose [--verbose]]
 * --heap: every buffer comes from the node-shared heap (mcoll_malloc): the zero-copy path.
 * --no-cma: the ranks forbid themselves CMA first (nocma.h), as containers do: every path
 *           without single copies (the native MPI must not use CMA itself: Open MPI
 *           btl_vader_single_copy_mechanism=none, MPICH over UCX UCX_TLS=self,posix,sysv).
 * Default: the whole plan. --quick: without the MB-sized cases and with fewer cases on the
 * extra communicators. --large: only the MB-sized cases.
 * --alg all: each registered algorithm forced in turn (mcoll_set_alg), then "auto".
 * --alg LIST: the algorithms named (comma-separated; "shm_*" = every name with that prefix),
 *             and "auto" after them when the list names it.
 * --alg env: nothing forced; MCOLL_<COLL>_ALG from the environment must be what runs.
 * --vnode K: also check mcoll_comm_info for virtual nodes of K ranks (run with
 *            MCOLL_VNODE_SIZE=K). Exit status 0 only when every check passed on every rank. */
#include "checks.h"
#include "core/mc.h"
#include "layouts.h"
#include "mcoll.h"
#include "nocma.h"
#include "vtypes.h"
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct { const char *name; check_fn fn; } colls[] = {
    {"barrier", check_barrier}, {"bcast", check_bcast}, {"reduce", check_reduce},
    {"allreduce", check_allreduce}, {"reduce_scatter", check_reduce_scatter},
    {"reduce_scatter_block", check_reduce_scatter_block}, {"allgather", check_allgather},
    {"allgatherv", check_allgatherv}, {"gather", check_gather}, {"gatherv", check_gatherv},
    {"scatter", check_scatter}, {"scatterv", check_scatterv}, {"alltoall", check_alltoall},
    {"alltoallv", check_alltoallv}, {"scan", check_scan}, {"exscan", check_exscan},
};
#define NCOLLS ((int)NELEM(colls))

typedef struct {
    const char *coll, *alg;
    int vnode, timeout, nocma;
} opts_t;

static void usage(void)
{
    fprintf(stderr,
            "usage: mcoll-verify [--coll NAME[,NAME..]|all] [--alg NAME|all|auto|env] [--quick|--large]\n"
            "                    [--seed N] [--vnode K] [--timeout S] [--heap] [--no-cma]\n"
            "                    [--verbose [--verbose]]\n");
    exit(2);
}

static void parse(int argc, char **argv, opts_t *o)
{
    const char *wd = getenv("MCOLL_TEST_WATCHDOG");   /* set by ctest: below its own timeout */
    *o = (opts_t){.coll = "all", .alg = "all", .vnode = -1, .timeout = wd ? atoi(wd) : 600};
    T.seed = 12345;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) T.quick = 1;
        else if (!strcmp(a, "--large")) T.large_only = 1;
        else if (!strcmp(a, "--verbose")) T.verbose++;
        else if (!strcmp(a, "--heap")) T.heap = 1;
        else if (!strcmp(a, "--no-cma"))
            o->nocma = 1;
        else if (!v) usage();
        else if (!strcmp(a, "--coll")) o->coll = argv[++i];
        else if (!strcmp(a, "--alg")) o->alg = argv[++i];
        else if (!strcmp(a, "--seed")) T.seed = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(a, "--vnode")) o->vnode = atoi(argv[++i]);
        else if (!strcmp(a, "--timeout")) o->timeout = atoi(argv[++i]);
        else usage();
    }
}

/* ---------------------------------------------------------------- watchdog */
static void put(const char *s) { ssize_t r = write(1, s, strlen(s)); (void)r; }

static void on_alarm(int sig)
{
    (void)sig;
    put("FAIL TIMEOUT: still running coll=");
    put(T.coll ? T.coll : "?");
    put(" alg=");
    put(T.alg ? T.alg : "?");
    put(" case=[");
    put(T.label);
    put("]\n");
    _exit(124);
}

/* ---------------------------------------------------------------- communicators */
static int make_comms(tcomm_t *c)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int r, n = 0;
    PMPI_Comm_rank(w, &r);
    c[n++] = (tcomm_t){.comm = w, .name = "world"};
    if (PMPI_Comm_dup(w, &c[n].comm) == MPI_SUCCESS) c[n++].name = "dup";
    if (PMPI_Comm_split(w, 0, -r, &c[n].comm) == MPI_SUCCESS) c[n++].name = "reversed(key=-rank)";
    if (PMPI_Comm_split(w, r % 2, r, &c[n].comm) == MPI_SUCCESS) c[n++].name = "split(rank%2)";
    if (PMPI_Comm_split(w, r % 3 == 1, -r, &c[n].comm) == MPI_SUCCESS) c[n++].name = "split(rank%3==1,key=-rank)";
    for (int i = 0; i < n; i++) {
        PMPI_Comm_rank(c[i].comm, &c[i].rank);
        PMPI_Comm_size(c[i].comm, &c[i].size);
    }
    return n;
}

static void free_comms(tcomm_t *c, int n)
{
    for (int i = 1; i < n; i++) PMPI_Comm_free(&c[i].comm);
}

/* ---------------------------------------------------------------- API sanity */
static void check_api(void)
{
    T.coll = "api";
    T.alg = "-";
    snprintf(T.label, sizeof T.label, "registry/control API");
    if (mcoll_coll_count() != NCOLLS) tfail("mcoll_coll_count() = %d, expected %d", mcoll_coll_count(), NCOLLS);
    for (int i = 0; i < NCOLLS; i++) {
        const char *n = mcoll_coll_name(i);
        if (!n || strcmp(n, colls[i].name)) tfail("mcoll_coll_name(%d) = %s, expected %s", i, n ? n : "NULL", colls[i].name);
        int k = mcoll_alg_count(colls[i].name);
        if (k < 1) tfail("collective %s has %d algorithms", colls[i].name, k);
        if (k >= 0 && mcoll_alg_name(colls[i].name, k)) tfail("mcoll_alg_name(%s, %d) past the end is not NULL", colls[i].name, k);
    }
    if (mcoll_alg_count("no_such_coll") != -1) tfail("mcoll_alg_count(unknown) != -1");
    if (mcoll_set_alg("bcast", "no_such_alg") == MPI_SUCCESS) tfail("mcoll_set_alg accepted an unknown algorithm");
    if (mcoll_set_alg("no_such_coll", "linear") == MPI_SUCCESS) tfail("mcoll_set_alg accepted an unknown collective");
    /* (no reset to "auto" here: it would override MCOLL_BCAST_ALG in the --alg env runs) */
}

/* ---------------------------------------------------------------- one algorithm */
static void env_alg_name(const char *coll, char *buf, size_t n)
{
    char var[64];
    int k = snprintf(var, sizeof var, "MCOLL_");
    for (const char *s = coll; *s && k < 50; s++) var[k++] = (char)toupper((unsigned char)*s);
    snprintf(var + k, sizeof var - (size_t)k, "_ALG");
    const char *v = getenv(var);
    snprintf(buf, n, "%s", v ? v : "");
}

/* Statistics must agree with what the checks observed (when counters are on). */
static void check_stats(const mcoll_stats_t *before, uint64_t alg_before, long talgs)
{
    mcoll_stats_t now;
    snprintf(T.label, sizeof T.label, "mcoll_stats counters");
    if (!tcheck_rc(mcoll_stats_get(T.coll, &now), "mcoll_stats_get")) return;
    uint64_t calls = now.calls - before->calls;
    if (!calls) return;   /* counters off */
    if (calls != (uint64_t)talgs) tfail("stats: %llu calls counted, %ld made", (unsigned long long)calls, talgs);
    if (now.handled - before->handled + now.fallback - before->fallback != calls)
        tfail("stats: handled + fallback != calls");
    if (T.mode != ALG_AUTO && !strcmp(T.alg, "pmpi")) {
        if (now.fallback - before->fallback != (uint64_t)T.ran)
            tfail("stats: %llu fallbacks counted, %ld calls observed running pmpi",
                  (unsigned long long)(now.fallback - before->fallback), T.ran);
    } else if (T.mode != ALG_AUTO && mcoll_stats_alg_calls(T.coll, T.alg) - alg_before != (uint64_t)T.ran)
        tfail("stats: %s counted %llu calls, %ld observed via mcoll_last_alg", T.alg,
              (unsigned long long)(mcoll_stats_alg_calls(T.coll, T.alg) - alg_before), T.ran);
}

static void run_alg(int ci, const char *alg, alg_mode_t mode, const tcomm_t *comms, int ncomms)
{
    char envalg[32];
    if (mode == ALG_ENV) env_alg_name(colls[ci].name, envalg, sizeof envalg);
    T.coll = colls[ci].name;
    T.alg = mode == ALG_ENV ? envalg : alg;
    T.mode = mode == ALG_ENV && (!envalg[0] || !strcmp(envalg, "auto")) ? ALG_AUTO : mode;
    T.seg = T.radix = -1;
    const mc_alg_t *a = mc_alg_find((mc_coll_t)mc_coll_from_name(T.coll), T.alg);
    T.alg_flags = a ? a->flags : 0;
    T.alg_has_ok = a && a->ok;
    T.ran = T.declined = T.talgs = 0;
    if (mode == ALG_FORCED && mcoll_set_alg(T.coll, alg) != MPI_SUCCESS)
        tfail("mcoll_set_alg(%s, %s) failed", T.coll, alg);
    if (mode == ALG_AUTO) mcoll_set_alg(T.coll, "auto");
    mcoll_stats_t st;
    mcoll_stats_get(T.coll, &st);
    uint64_t alg_calls = mcoll_stats_alg_calls(T.coll, T.alg);
    long fails = T.fails;
    double t0 = PMPI_Wtime();
    colls[ci].fn(comms, ncomms);
    tagree_flush();
    double dt = PMPI_Wtime() - t0;
    check_stats(&st, alg_calls, T.talgs);
    if (mode == ALG_FORCED) mcoll_set_alg(T.coll, "auto");
    long f[4] = {T.fails - fails, T.ran, T.declined, T.talgs}, g[4];
    PMPI_Allreduce(f, g, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int never = T.mode != ALG_AUTO && !g[1] && g[3];   /* calls made, none by this algorithm */
    if (T.wrank == 0 && (T.verbose || g[0] || never))
        printf("  %-22s %-20s failures=%ld ran=%ld declined=%ld %.1fs%s\n", T.coll, T.alg, g[0], g[1],
               g[2], dt, never ? "  NOTE: never ran" : "");
}

static int selected(const char *list, const char *name)
{
    if (!strcmp(list, "all")) return 1;
    size_t n = strlen(name);
    for (const char *s = list; (s = strstr(s, name)); s += n)
        if ((s == list || s[-1] == ',') && (s[n] == 0 || s[n] == ',')) return 1;
    return 0;
}

/* --alg: "all", or a comma list of names and prefixes ("shm_*"); run_coll adds "auto". */
static int alg_matches(const char *list, const char *name)
{
    if (!strcmp(list, "all")) return 1;
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, ",");
        if (n && s[n - 1] == '*' ? !strncmp(s, name, n - 1) : strlen(name) == n && !strncmp(s, name, n))
            return 1;
        s += n + (s[n] == ',');
    }
    return 0;
}

/* Returns how many algorithm runs the options select for this collective. */
static int run_coll(int ci, const opts_t *o, const tcomm_t *comms, int ncomms)
{
    const char *coll = colls[ci].name;
    int runs = 0;
    if (!strcmp(o->alg, "env") || !strcmp(o->alg, "auto")) {
        run_alg(ci, o->alg, !strcmp(o->alg, "env") ? ALG_ENV : ALG_AUTO, comms, ncomms);
        return 1;
    }
    for (int i = 0; i < mcoll_alg_count(coll); i++) {
        const char *a = mcoll_alg_name(coll, i);
        if (a && alg_matches(o->alg, a)) {
            run_alg(ci, a, ALG_FORCED, comms, ncomms);
            runs++;
        }
    }
    /* "all", or a list naming "auto" (e.g. "shm*,auto"): then the default selection */
    int with_auto = !strcmp(o->alg, "all") || selected(o->alg, "auto");
    if (with_auto) run_alg(ci, "auto", ALG_AUTO, comms, ncomms);
    return runs + with_auto;
}

static void setup(void)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &T.wrank);
    PMPI_Comm_size(MPI_COMM_WORLD, &T.wsize);
    if (vt_init() != MPI_SUCCESS || layouts_init() != MPI_SUCCESS) {
        fprintf(stderr, "mcoll-verify: cannot create test datatypes\n");
        PMPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (vt_unsigned_minmax_broken() && T.wrank == 0)
        printf("NOTE: the native MPI_MIN/MPI_MAX compare MPI_UNSIGNED as signed (a known MPICH 4.0 bug, "
               "pmodels/mpich#6083); unsigned MIN/MAX data is kept below 2^31\n");
}

/* Prints the summary on rank 0; returns the failures of all ranks. */
static long summary(const opts_t *o)
{
    long mine[2] = {T.fails, T.calls}, sum[2];
    PMPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (T.wrank == 0)
        printf("mcoll-verify: %s coll=%s alg=%s%s ranks=%d cases=%ld failures=%ld\n",
               sum[0] ? "FAILED" : "ALL PASSED", o->coll, o->alg,
               T.quick ? " (quick)" : T.large_only ? " (large)" : "", T.wsize, sum[1] / T.wsize, sum[0]);
    fflush(stdout);
    return sum[0];
}

int main(int argc, char **argv)
{
    opts_t o;
    MPI_Init(&argc, &argv);
    parse(argc, argv, &o);
    if (o.nocma && test_forbid_cma()) {
        printf("FAIL: --no-cma: could not install the seccomp filter (errno %d)\n", errno);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)o.timeout);
    setup();
    tcomm_t comms[8];
    int ncomms = make_comms(comms), runs = 0;
    check_api();
    if (o.vnode >= 0) {
        T.coll = "topology";
        check_topology(comms, ncomms, o.vnode);
    }
    for (int ci = 0; ci < NCOLLS; ci++)
        if (selected(o.coll, colls[ci].name)) runs += run_coll(ci, &o, comms, ncomms);
    if (!runs && o.vnode < 0) {
        T.coll = T.alg = "-";
        tfail("nothing to run for --coll %s --alg %s", o.coll, o.alg);
    }
    long fails = summary(&o);
    free_comms(comms, ncomms);
    layouts_fini();
    vt_fini();
    alarm(0);
    MPI_Finalize();
    return fails ? 1 : 0;
}
