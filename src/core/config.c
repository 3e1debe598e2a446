#include "config.h"
#include "log.h"
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLL_VARS(UP, lo)                                                                    \
    {"MCOLL_" UP "_ALG", MC_CFG_STR, "", "force the " lo " algorithm (name, 'auto' or 'pmpi')"},
#define SEG_VARS(UP, lo)                                                                     \
    {"MCOLL_" UP "_SEGSIZE", MC_CFG_SIZE, "", "segment size in bytes for " lo " (0 = unsegmented; k/M suffix)"},
#define RADIX_VARS(UP, lo)                                                                   \
    {"MCOLL_" UP "_RADIX", MC_CFG_INT, "", "number of chains of the k-chain " lo " tree (>= 2)"},

static const mc_cfg_var_t vars[] = {
    {"MCOLL_VERBOSE", MC_CFG_INT, "0", "1: explain each algorithm decision once per (comm, collective, size class, and the model's order: heap or ordinary buffers)"},
    {"MCOLL_STATS", MC_CFG_BOOL, "0", "1: print per-collective counters from rank 0 at MPI_Finalize (sessions alone: rank 0's own at the last MPI_Session_finalize)"},
    {"MCOLL_RULES", MC_CFG_STR, "", "rules file whose rows take precedence over the default selection (README, Tuning and models)"},
    {"MCOLL_SELECT", MC_CFG_STR, "model", "default selection: model (cheapest applicable algorithm under MCOLL_MODEL and MCOLL_PROFILE) or table (the built-in measured rule table)"},
    {"MCOLL_MODEL", MC_CFG_STR, "plogp", "performance model of the default selection: hockney, loggp or plogp"},
    {"MCOLL_PROFILE", MC_CFG_STR, "", "machine profile JSON of the default selection (mcoll-tune params writes one; empty = built-in)"},
    {"MCOLL_VNODE_SIZE", MC_CFG_INT, "0", "split each real node into virtual nodes of k consecutive world ranks (0 = off)"},
    COLL_VARS("BARRIER", "barrier") COLL_VARS("BCAST", "bcast") COLL_VARS("REDUCE", "reduce")
    COLL_VARS("ALLREDUCE", "allreduce") COLL_VARS("REDUCE_SCATTER", "reduce_scatter")
    COLL_VARS("REDUCE_SCATTER_BLOCK", "reduce_scatter_block") COLL_VARS("ALLGATHER", "allgather")
    COLL_VARS("ALLGATHERV", "allgatherv") COLL_VARS("GATHER", "gather") COLL_VARS("GATHERV", "gatherv")
    COLL_VARS("SCATTER", "scatter") COLL_VARS("SCATTERV", "scatterv") COLL_VARS("ALLTOALL", "alltoall")
    COLL_VARS("ALLTOALLV", "alltoallv") COLL_VARS("SCAN", "scan") COLL_VARS("EXSCAN", "exscan")
    SEG_VARS("BCAST", "bcast") SEG_VARS("REDUCE", "reduce") SEG_VARS("ALLREDUCE", "allreduce")
    SEG_VARS("REDUCE_SCATTER", "reduce_scatter") SEG_VARS("REDUCE_SCATTER_BLOCK", "reduce_scatter_block")
    SEG_VARS("SCAN", "scan") SEG_VARS("EXSCAN", "exscan")
    RADIX_VARS("REDUCE", "reduce")
    {"MCOLL_INT_MAX", MC_CFG_SIZE, "0", "largest count mcoll passes in one MPI call's int argument (0 = 2 GiB - 1): packing goes in pieces of that many bytes, local reductions of that many elements, a longer point-to-point message as one element of a derived datatype; smaller values exercise those paths"},
    {"MCOLL_SHM", MC_CFG_BOOL, "1", "0: no node shared-memory regions (the shm_* algorithms decline)"},
    {"MCOLL_SHM_SIZE", MC_CFG_SIZE, "16M", "data area of each node region (pages are touched only when used)"},
    {"MCOLL_SHM_POOL", MC_CFG_INT, "4", "node regions of freed communicators kept per process for the next communicator with the same local ranks (at most 16; 0 = each communicator maps its own)"},
    {"MCOLL_SHM_PATH", MC_CFG_STR, "auto", "data path to peers' buffers: auto, copy (through the region), cma, zero (shared heap only)"},
    {"MCOLL_SHM_PTRACER", MC_CFG_BOOL, "1", "1: where Yama's `ptrace_scope` is 1 (Ubuntu's default: a process may use CMA only on its descendants and on processes that name it), each rank lets any process of its user attach to it (`PR_SET_PTRACER_ANY`, as Open MPI's CMA transport does) before the node region's CMA probe; 0: leave the process as it is (CMA then refused on such nodes)"},
    {"MCOLL_SHM_CMA_FAST", MC_CFG_STR, "auto", "whether a posted ordinary buffer moves by CMA at a copy's rate (transparent huge pages), so the data movers read it by CMA instead of staging: auto (its owner measures it once), 1 (every buffer), 0 (none)"},
    {"MCOLL_SHM_CMA_BOUNCE", MC_CFG_STR, "auto", "whether a CMA transfer of 2 KiB or more whose destination lies 1-31 bytes past its source (modulo 64) goes through a bounce buffer at the remote side's alignment (the kernel's rep movsb runs 4-5x slower at that distance on AMD Zen 3): auto (measured once, at the first such transfer), 1 (always), 0 (never)"},
    {"MCOLL_SHM_CACHE", MC_CFG_SIZE, "0", "cache capacity C of the adaptive copy (0 = MCOLL_PROFILE cache.adaptive, else LLC + p*L2 from hwloc, LLC if inclusive; 32M if hwloc finds none or over 64M per PU)"},
    {"MCOLL_SHM_NT", MC_CFG_STR, "auto", "non-temporal copy kernel: auto, avx512, avx2, sse2, scalar"},
    {"MCOLL_SHM_SLICE", MC_CFG_SIZE, "128K", "maximum slice I_max of the movement-avoiding reductions"},
    {"MCOLL_SHM_SMALL", MC_CFG_SIZE, "256K", "largest message of the DPML-like small-message reductions"},
    {"MCOLL_SHM_FAR_NS", MC_CFG_INT, "100", "cross-core line-fetch latency (ns, second largest of a rank's last 8 samples) above which the node counts as far: writes of 1 KiB or more into the node region then stream (movement-avoiding slices, small allreduce/reduce_scatter copy-ins; not on an oversubscribed node), allreduce from 1 MiB, gather, and the data movers' pipes from 16 KiB on ordinary buffers outside the hand-over band copy by CMA (in it they stream; shm_direct's allgather, gather, scatter, alltoall stage there), a zero-copy allgather pushes, scan and exscan from 8 KiB per rank stream their windows (not on an oversubscribed node) (0 = never)"},
    {"MCOLL_SHM_TRIAL", MC_CFG_INT, "1", "1: on ordinary buffers of 32 KiB or more the direct algorithms time their calls and keep to the fastest way: the reductions' (the default from 64 KiB at 2 ranks) staging with temporal stores, staging with streaming stores or CMA, the uniform data movers' staging through their pipes or CMA (in the hand-over band staging with streamed or with temporal copy-ins), the zero-copy allgather's pull, streamed push or temporal push (up to the cache) and the zero-copy allreduce's push or pull, `shm_ma`'s allreduce (the default at 32-128 KiB at 2 ranks) its windows or the symmetric exchange (up to 256 KiB of input at 2 ranks, 32 KiB from 3), scan's and exscan's windows or direct reads (from 8 KiB per rank and 16 KiB over the ranks; in the hand-over band their windows streamed or with temporal stores) (their pipes' calls of 16 KiB per rank or more, scatter's and gather's from 8 KiB, take the same trial, through the direct algorithm's posting round, which the calls it sends down the pipe skip but while sharing samples, as the reductions' staged calls do on buffers a round found ordinary); the others are tried in bursts of 3 calls every 64 (a way 1.5x behind every 16th time); 0: the fixed rules (by sizes and the node's distance)"},
    {"MCOLL_VSOCKET_SIZE", MC_CFG_INT, "0", "group each node's local ranks into virtual sockets of k (0 = hwloc packages)"},
    {"MCOLL_SHM_ADOPT", MC_CFG_INT, "0", "k > 0: the k-th time a malloc block of 128 KiB or more (a glibc mmap'd chunk) is posted whole to a shared-memory collective, its pages move into shared memory at the same address, so peers reach it without a copy from then on (each later post checks it is still that mapping); 0: never (README, Data paths)"},
    {"MCOLL_SHM_SPIN", MC_CFG_INT, "0", "spins (pause instructions) before a shared-memory wait yields the core; 0: 256, or 4 once a communicator has more ranks on this node than it has online CPUs (oversubscribed)"},
    {"MCOLL_P2P_POLL", MC_CFG_STR, "auto", "whether the point-to-point steps' blocking transfers and waits post, then poll and yield the core after the shared-memory waits' spins (src/p2p/p2p.c): auto (with MPICH on an oversubscribed node, where its blocking calls poll without yielding; never with Open MPI, whose waits yield on an oversubscribed node), 1 (always), 0 (never: the MPI's blocking calls)"},
    {"MCOLL_OVERSUBSCRIBED", MC_CFG_STR, "auto", "whether this node counts as oversubscribed (more ranks than cores): short spins in shared-memory waits, the default selection takes the node region's algorithms before the point-to-point ones, and the reductions' and scans' hand-overs do not stream on a far node; auto (a communicator put more ranks on the node than it has online CPUs), 1, 0"},
    {"MCOLL_HEAP_SIZE", MC_CFG_SIZE, "64G", "address space of each shared-heap segment (memory is used only when touched)"},
    {"MCOLL_HEAP_RETAIN", MC_CFG_SIZE, "128M", "freed shared-heap pages kept for reuse before further frees return theirs to the system"},
    {"MCOLL_MALLOC_MIN", MC_CFG_SIZE, "64K", "with libmcoll-malloc.so preloaded: smallest malloc served from the shared heap (0 = none)"},
    {"MCOLL_NEIGHBOR_ALG", MC_CFG_STR, "auto", "persistent neighbor alltoallv strategy: auto, standard, aggregated, dedup (MPI_Info key mcoll_neighbor_alg wins)"},
    {"MCOLL_NEIGHBOR_REGION", MC_CFG_STR, "node", "region of the locality-aware neighbor strategies: node or socket (MPI_Info key mcoll_neighbor_region wins)"},
    {"MCOLL_NEIGHBOR_SLOTS", MC_CFG_INT, "0", "slots of tags on the duplicate of a communicator that carries its persistent neighbor requests (README \"Neighborhood collectives\"): a communicator's k-th init takes slot k mod the slots, or makes a duplicate of its own while a request still holds that slot; 0: (MPI_TAG_UB + 1) / 8, at most 2^20"},
};
#define NVARS ((int)(sizeof vars / sizeof vars[0]))

static mc_config_t cfg;
static pthread_once_t once = PTHREAD_ONCE_INIT;
const mc_config_t *_Atomic mc_cfg_ready;
static _Atomic long seg_override[MC_NCOLL];
static _Atomic int radix_override[MC_NCOLL];

long mc_parse_size(const char *s)
{
    char *end;
    if (!s || !*s) return -1;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0) return -1;
    switch (tolower((unsigned char)*end)) {
    case 'k': v <<= 10; end++; break;
    case 'm': v <<= 20; end++; break;
    case 'g': v <<= 30; end++; break;
    default: break;
    }
    if (tolower((unsigned char)*end) == 'b') end++;
    return *end ? -1 : v;
}

const char *mc_cfg_value(const mc_cfg_var_t *v)
{
    const char *e = getenv(v->name);
    return e ? e : v->defval;
}

/* "MCOLL_ALLREDUCE_ALG" -> collective index for the per-collective variables. */
static int coll_of_var(const char *name, const char *suffix)
{
    size_t n = strlen(name), sn = strlen(suffix);
    if (n <= 6 + sn || strcmp(name + n - sn, suffix) != 0) return -1;
    char lo[64];
    size_t k = n - sn - 6;
    if (k >= sizeof lo) return -1;
    for (size_t i = 0; i < k; i++) lo[i] = (char)tolower((unsigned char)name[6 + i]);
    lo[k] = 0;
    return mc_coll_from_name(lo);
}

static long size_or(const char *name, const char *val, long dflt)
{
    long v = mc_parse_size(val);
    if (v >= 0) return v;
    mc_warn("ignoring %s=%s: not a size", name, val);
    return dflt;
}

static long count_or(const char *name, const char *val, long dflt)
{
    char *end;
    long v = strtol(val, &end, 10);
    if (end != val && !*end && v >= 0) return v;
    mc_warn("ignoring %s=%s: not a non-negative integer", name, val);
    return dflt;
}

int mc_cfg_auto_or_bool(const char *name, const char *v)
{
    int mode = !strcmp(v, "1") ? 1 : !strcmp(v, "0") ? 0 : -1;
    if (mode < 0 && strcmp(v, "auto")) mc_warn("ignoring %s=%s: expected auto, 1 or 0", name, v);
    return mode;
}

static void load_shm(const char *name, const char *val)
{
    if (!strcmp(name, "MCOLL_SHM")) cfg.shm = atoi(val) != 0;
    else if (!strcmp(name, "MCOLL_SHM_SIZE")) cfg.shm_size = size_or(name, val, 16L << 20);
    else if (!strcmp(name, "MCOLL_SHM_POOL")) cfg.shm_pool = (int)count_or(name, val, 4);
    else if (!strcmp(name, "MCOLL_SHM_PATH")) snprintf(cfg.shm_path, sizeof cfg.shm_path, "%s", val);
    else if (!strcmp(name, "MCOLL_SHM_PTRACER")) cfg.shm_ptracer = atoi(val) != 0;
    else if (!strcmp(name, "MCOLL_SHM_CMA_FAST")) snprintf(cfg.shm_cma_fast, sizeof cfg.shm_cma_fast, "%s", val);
    else if (!strcmp(name, "MCOLL_SHM_CMA_BOUNCE")) snprintf(cfg.shm_cma_bounce, sizeof cfg.shm_cma_bounce, "%s", val);
    else if (!strcmp(name, "MCOLL_SHM_CACHE")) cfg.shm_cache = size_or(name, val, 0);
    else if (!strcmp(name, "MCOLL_SHM_NT")) snprintf(cfg.shm_nt, sizeof cfg.shm_nt, "%s", val);
    else if (!strcmp(name, "MCOLL_SHM_SLICE")) cfg.shm_slice = size_or(name, val, 128L << 10);
    else if (!strcmp(name, "MCOLL_SHM_SMALL")) cfg.shm_small = size_or(name, val, 256L << 10);
    else if (!strcmp(name, "MCOLL_SHM_FAR_NS")) cfg.shm_far_ns = count_or(name, val, 100);
    else if (!strcmp(name, "MCOLL_SHM_TRIAL")) cfg.shm_trial = atoi(val) != 0;
    else if (!strcmp(name, "MCOLL_SHM_ADOPT")) cfg.shm_adopt = count_or(name, val, 0);
    else if (!strcmp(name, "MCOLL_SHM_SPIN")) cfg.shm_spin = count_or(name, val, 0);
    else if (!strcmp(name, "MCOLL_VSOCKET_SIZE")) cfg.vsocket_size = atoi(val);
    else if (!strcmp(name, "MCOLL_HEAP_SIZE")) cfg.heap_size = size_or(name, val, 64L << 30);
    else if (!strcmp(name, "MCOLL_HEAP_RETAIN")) cfg.heap_retain = size_or(name, val, 128L << 20);
    else if (!strcmp(name, "MCOLL_MALLOC_MIN")) cfg.malloc_min = size_or(name, val, 64L << 10);
}

static void load_one(const mc_cfg_var_t *v)
{
    const char *val = mc_cfg_value(v);
    int c;
    if (!strcmp(v->name, "MCOLL_VERBOSE")) cfg.verbose = atoi(val);
    else if (!strcmp(v->name, "MCOLL_STATS")) cfg.stats = atoi(val) != 0;
    else if (!strcmp(v->name, "MCOLL_VNODE_SIZE")) cfg.vnode_size = atoi(val);
    else if (!strcmp(v->name, "MCOLL_RULES")) snprintf(cfg.rules, sizeof cfg.rules, "%s", val);
    else if (!strcmp(v->name, "MCOLL_SELECT")) snprintf(cfg.select, sizeof cfg.select, "%s", val);
    else if (!strcmp(v->name, "MCOLL_MODEL")) snprintf(cfg.model, sizeof cfg.model, "%s", val);
    else if (!strcmp(v->name, "MCOLL_PROFILE")) snprintf(cfg.profile, sizeof cfg.profile, "%s", val);
    else if (!strcmp(v->name, "MCOLL_INT_MAX")) cfg.int_max = size_or(v->name, val, 0);
    else if (!strcmp(v->name, "MCOLL_P2P_POLL")) cfg.p2p_poll = mc_cfg_auto_or_bool(v->name, val);
    else if (!strcmp(v->name, "MCOLL_OVERSUBSCRIBED")) cfg.oversubscribed = mc_cfg_auto_or_bool(v->name, val);
    else if (!strncmp(v->name, "MCOLL_SHM", 9) || !strcmp(v->name, "MCOLL_VSOCKET_SIZE") ||
             !strncmp(v->name, "MCOLL_HEAP", 10) || !strcmp(v->name, "MCOLL_MALLOC_MIN"))
        load_shm(v->name, val);
    else if ((c = coll_of_var(v->name, "_ALG")) >= 0) {
        snprintf(cfg.alg[c], sizeof cfg.alg[c], "%s", strcmp(val, "auto") ? val : "");
    } else if ((c = coll_of_var(v->name, "_SEGSIZE")) >= 0 && *val) {
        cfg.segsize[c] = mc_parse_size(val);
        if (cfg.segsize[c] < 0) mc_warn("ignoring %s=%s: not a size", v->name, val);
    } else if ((c = coll_of_var(v->name, "_RADIX")) >= 0 && *val) {
        cfg.radix[c] = atoi(val) >= 2 ? atoi(val) : -1;
    }
}

static void load(void)
{
    for (int c = 0; c < MC_NCOLL; c++) {
        cfg.segsize[c] = -1;
        cfg.radix[c] = -1;
        seg_override[c] = -2;
        radix_override[c] = -2;
    }
    for (int i = 0; i < NVARS; i++) load_one(&vars[i]);
    atomic_store_explicit(&mc_cfg_ready, &cfg, memory_order_release);
}

const mc_config_t *mc_cfg_load(void)
{
    pthread_once(&once, load);
    return &cfg;
}

int mc_cfg_var_count(void) { return NVARS; }
const mc_cfg_var_t *mc_cfg_var_at(int i) { return i >= 0 && i < NVARS ? &vars[i] : NULL; }

void mc_cfg_set_segsize(mc_coll_t c, long v) { mc_cfg(); seg_override[c] = v < 0 ? -2 : v; }
void mc_cfg_set_radix(mc_coll_t c, int v) { mc_cfg(); radix_override[c] = v < 2 ? -2 : v; }

long mc_cfg_segsize(mc_coll_t c, long dflt)
{
    const mc_config_t *g = mc_cfg();
    long o = seg_override[c];
    if (o >= 0) return o;
    return g->segsize[c] >= 0 ? g->segsize[c] : dflt;
}

int mc_cfg_radix(mc_coll_t c, int dflt)
{
    const mc_config_t *g = mc_cfg();
    int o = radix_override[c];
    if (o >= 2) return o;
    return g->radix[c] >= 2 ? g->radix[c] : dflt;
}
