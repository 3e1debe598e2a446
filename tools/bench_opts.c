/* mcoll-bench command line. */
#include "bench.h"
#include "core/config.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int quiet;   /* ranks other than 0: every rank parses, one complains */

static void err(const char *fmt, ...)
{
    va_list ap;
    if (quiet) return;
    va_start(ap, fmt);
    fputs("mcoll-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *default_colls =
    "allreduce,bcast,allgather,reduce,reduce_scatter_block,alltoall,barrier";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mpiexec -n N mcoll-bench [options]\n"
        "  --coll a,b,...|all   collectives (default %s)\n"
        "  --min BYTES          smallest size per rank (default 4; k/M/G suffixes)\n"
        "  --max BYTES          largest size per rank (default 64M); powers of two in between\n"
        "  --iters N            timed repetitions per size (default: scaled to the size)\n"
        "  --warmup N           untimed repetitions first (default: scaled)\n"
        "  --time-limit SEC     cap on timed work per size with automatic iterations (default 0.5)\n"
        "  --alg LIST           mcoll variants: default | all | algorithm names, comma separated\n"
        "  --cold               buffers evicted from the caches before each call (default hot)\n"
        "  --dirty              each rank rewrites its send buffer before every call (untimed),\n"
        "                       as an application computing its input: peers then read lines\n"
        "                       that are dirty in the writer's cache, not a copy left in theirs\n"
        "  --validate           compare mcoll's result bytes with native MPI's once per size\n"
        "  --root R             root of the rooted collectives (default 0)\n"
        "  --batch K            time K back-to-back calls per sample and report the mean per\n"
        "                       call (default 1: one call after a barrier); rooted collectives\n"
        "                       then rotate the root from R on, so no root runs ahead of its\n"
        "                       readers and the mean is a latency\n"
        "  --start barrier|clock  how a sample starts: on leaving a barrier (default), or after\n"
        "                       the barrier at the next 50 us mark of the clock every rank of\n"
        "                       one node shares, so a single call's time leaves out the\n"
        "                       barrier's exit skew (every rank on one node only)\n"
        "  --order rotate|block how the columns' repetitions are ordered: interleaved, the\n"
        "                       first column rotating (default), or each column's back to back\n"
        "                       after one untimed call of its own, so no call follows another\n"
        "                       column's (a native call that faults a large temporary in slows\n"
        "                       the next call on some VMs); drift then hits the columns unevenly\n"
        "  --heap               buffers from the node-shared heap (mcoll_malloc): zero-copy paths\n"
        "  --thp                buffers advised to transparent huge pages (madvise\n"
        "                       MADV_HUGEPAGE before first touch): CMA pins them faster\n"
        "  --skew B             rank r's buffers start (r * B) mod 64 bytes past their usual\n"
        "                       place (default 0): copies between ranks' buffers at every\n"
        "                       relative alignment (B = 16 at 2 ranks: rank 1's destinations lie\n"
        "                       16 bytes past rank 0's sources)\n"
        "  --apart              hot send and receive buffers as malloc blocks of their own, of\n"
        "                       exactly each call's sizes (as a program's buffers; with\n"
        "                       MCOLL_SHM_ADOPT mcoll may adopt them); not with --cold or --heap\n"
        "  --roofline           measure the node's copy bandwidth first and print each time as a\n"
        "                       multiple of the collective's DRAM floor (minimum volume / bandwidth)\n"
        "  --local-copy         also time, at every size, each rank copying its share of the\n"
        "                       collective's output from a hot buffer of its own, all ranks at once\n"
        "                       (no communication, no synchronization): local_us, and the native's\n"
        "                       and mcoll's times over it\n"
        "  --max-mem BYTES      benchmark buffers per rank (default 1G); larger sizes are skipped\n"
        "  --csv FILE, --json FILE, --plot FILE.png   also write the results there\n"
        "Sizes are bytes per rank of the collective's natural message (allreduce: the vector,\n"
        "allgather: one rank's block, alltoall: one destination's block). Reductions sum floats.\n"
        "Times: median over repetitions of the slowest rank's time, native (PMPI) vs mcoll.\n",
        default_colls);
}

static int parse_colls(const char *list, bench_opts_t *o)
{
    char buf[512];
    o->ncolls = 0;
    if (!strcmp(list, "all")) {
        for (int i = 0; i < bench_coll_count(); i++) o->colls[o->ncolls++] = i;
        return 0;
    }
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int i = bench_coll_index(t);
        if (i < 0) {
            err("unknown collective '%s' (see --help)", t);
            return -1;
        }
        if (o->ncolls < BENCH_MAX_COLLS) o->colls[o->ncolls++] = i;
    }
    if (o->ncolls) return 0;
    err("--coll: empty list");
    return -1;
}

static int parse_size(const char *flag, const char *s, size_t *out)
{
    long v = mc_parse_size(s);
    if (v < 0) {
        err("%s: '%s' is not a size", flag, s);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

static int parse_long(const char *flag, const char *s, long lo, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo) {
        err("%s: '%s' is not an integer >= %ld", flag, s, lo);
        return -1;
    }
    *out = v;
    return 0;
}

static void defaults(bench_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->min = 4;
    o->max = 64u << 20;
    o->warmup = -1;
    o->time_limit = 0.5;
    o->batch = 1;
    o->max_mem = 1ul << 30;
    snprintf(o->algs, sizeof o->algs, "default");
    parse_colls(default_colls, o);
}

/* An option with two words: *out = 0 for the first, 1 for the second. */
static int parse_either(const char *f, const char *v, const char *no, const char *yes, int *out)
{
    if (strcmp(v, no) && strcmp(v, yes)) {
        err("%s: '%s' is neither %s nor %s", f, v, no, yes);
        return -1;
    }
    *out = !strcmp(v, yes);
    return 0;
}

/* Options with a value; returns 0, or -1 on a bad value. */
static int parse_valued(const char *f, const char *v, bench_opts_t *o)
{
    long l;
    if (!strcmp(f, "--coll")) return parse_colls(v, o);
    if (!strcmp(f, "--min")) return parse_size(f, v, &o->min);
    if (!strcmp(f, "--max")) return parse_size(f, v, &o->max);
    if (!strcmp(f, "--max-mem")) return parse_size(f, v, &o->max_mem);
    if (!strcmp(f, "--iters")) return parse_long(f, v, 1, &o->iters);
    if (!strcmp(f, "--warmup")) return parse_long(f, v, 0, &o->warmup);
    if (!strcmp(f, "--batch")) return parse_long(f, v, 1, &o->batch);
    if (!strcmp(f, "--start")) return parse_either(f, v, "barrier", "clock", &o->start_clock);
    if (!strcmp(f, "--order")) return parse_either(f, v, "rotate", "block", &o->blocks);
    if (!strcmp(f, "--root")) {
        if (parse_long(f, v, 0, &l)) return -1;
        o->root = (int)l;
        return 0;
    }
    if (!strcmp(f, "--skew")) {
        if (parse_long(f, v, 0, &l)) return -1;
        if (l < 64) {
            o->skew = (int)l;
            return 0;
        }
        err("--skew %ld: must be below 64 (a cache line)", l);
        return -1;
    }
    if (!strcmp(f, "--time-limit")) {
        o->time_limit = atof(v);
        if (o->time_limit > 0) return 0;
        err("--time-limit: '%s' is not a positive number of seconds", v);
        return -1;
    }
    if (!strcmp(f, "--alg")) {
        if (snprintf(o->algs, sizeof o->algs, "%s", v) < (int)sizeof o->algs) return 0;
        err("--alg: list too long");
        return -1;
    }
    if (!strcmp(f, "--csv")) o->csv = v;
    else if (!strcmp(f, "--json")) o->json = v;
    else if (!strcmp(f, "--plot")) o->plot = v;
    else return 1;   /* not a valued option */
    return 0;
}

const char *bench_cache_mode(const bench_opts_t *o)
{
    return o->cold ? "cold" : o->dirty ? "dirty" : "hot";
}

static int parse_flag(const char *f, bench_opts_t *o)
{
    if (!strcmp(f, "--cold")) o->cold = 1;
    else if (!strcmp(f, "--hot")) o->cold = 0;
    else if (!strcmp(f, "--dirty")) o->dirty = 1;
    else if (!strcmp(f, "--validate")) o->validate = 1;
    else if (!strcmp(f, "--roofline")) o->roofline = 1;
    else if (!strcmp(f, "--local-copy")) o->local_copy = 1;
    else if (!strcmp(f, "--heap")) o->heap = 1;
    else if (!strcmp(f, "--thp")) o->thp = 1;
    else if (!strcmp(f, "--apart")) o->apart = 1;
    else return -1;
    return 0;
}

static int check(bench_opts_t *o, int p)
{
    if (o->min > o->max) {
        err("--min is larger than --max");
        return -1;
    }
    if (o->batch > 1 && o->validate) {
        err("--validate checks one call: use it without --batch");
        return -1;
    }
    if (o->start_clock) { /* a clock the ranks share: one node */
        MPI_Comm node;
        int n = 0;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
        if (n != p) {
            err("--start clock needs every rank on one node (%d of %d here)", n, p);
            return -1;
        }
    }
    if (o->root >= p) {
        err("--root %d, but only %d ranks", o->root, p);
        return -1;
    }
    return 0;
}

int bench_parse_args(int argc, char **argv, int rank, bench_opts_t *o)
{
    int p, rc = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    quiet = rank != 0;
    defaults(o);
    for (int i = 1; i < argc && !rc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            if (!rank) usage(stdout);
            rc = 1;
        } else if (!strncmp(argv[i], "--", 2) && parse_flag(argv[i], o) == 0) {
            continue;
        } else if (i + 1 < argc && (rc = parse_valued(argv[i], argv[i + 1], o)) <= 0) {
            i++;   /* rc -1: parse_valued said what was wrong */
        } else {
            err("unknown option or missing value: '%s'", argv[i]);
            rc = -1;
        }
    }
    if (!rc) rc = check(o, p);
    if (rc < 0 && !rank) usage(stderr);
    return rc;
}
