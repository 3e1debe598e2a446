/* How long one load takes to bring over a line another core just wrote, measured where an
 * algorithm's own synchronization already moves such a line (no extra traffic, two timestamp
 * reads per sample), and whether that makes the node "far" (mc_shm_far).
 *
 * Why: this node's VM alternates, for seconds to minutes, between states in which such a
 * load takes 40-70 ns or 140-200 ns (timestamps included; the counter ticks in 10 ns steps
 * here). In the second state a line handed to another core through its writer's cache
 * costs so much that the reductions' staged slices lose to CMA by 1.9-3.5x (allreduce)
 * and 1.7-2.2x (reduce_scatter_block) at 2 ranks, while streamed to memory they beat it
 * (README "Measured"); in the first, streaming them costs 1.2-3x. So a far node streams
 * what it hands over (mc_shm_far's callers). Each choice is local (how a rank writes), or
 * rides on the posts' votes (mc_shm_direct_agreed): each rank decides from its own samples.
 *
 * The estimate is the second largest of the rank's last MC_XLAT_N samples: a high quantile,
 * since the slow state also shows a few fast fetches while the fast state shows slow ones
 * only when a core was interrupted or preempted between the timestamps (one such sample does
 * not flip it). With no timestamp counter no rank has samples and the node never counts
 * as far. */
#include "shm.h"
#include "../core/config.h"
#include "../core/log.h"
#include <pthread.h>
#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>

static double tsc_per_ns; /* 0: no invariant timestamp counter */

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The counter's rate against the monotonic clock over 1 ms, once per process. Only an
 * invariant counter (constant rate in every power state, CPUID 0x80000007 EDX bit 8) counts. */
static void tsc_calibrate(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8))) return;
    unsigned aux;
    double t0 = now_ns(), t1;
    unsigned long long c0 = __rdtscp(&aux);
    while ((t1 = now_ns()) - t0 < 1e6) {}
    unsigned long long c1 = __rdtscp(&aux);
    if (c1 > c0) tsc_per_ns = (double)(c1 - c0) / (t1 - t0);
}

uint32_t mc_timed_load(_Atomic uint64_t *f, uint64_t *v)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, tsc_calibrate);
    if (tsc_per_ns <= 0) {
        *v = atomic_load_explicit(f, memory_order_acquire);
        return 0;
    }
    unsigned aux;
    unsigned long long t0 = __rdtscp(&aux);
    _mm_lfence(); /* the load starts after the first timestamp */
    *v = atomic_load_explicit(f, memory_order_acquire);
    unsigned long long t1 = __rdtscp(&aux); /* waits for the load to complete */
    double ns = (double)(t1 - t0) / tsc_per_ns;
    return ns < 1 ? 1 : ns > 4e9 ? UINT32_MAX : (uint32_t)ns;
}
#else
uint32_t mc_timed_load(_Atomic uint64_t *f, uint64_t *v)
{
    *v = atomic_load_explicit(f, memory_order_acquire);
    return 0;
}
#endif

uint32_t mc_xlat_estimate(const uint32_t *v, int n)
{
    uint32_t top = 0, second = 0;
    if (n > MC_XLAT_N) n = MC_XLAT_N;
    for (int i = 0; i < n; i++) {
        if (v[i] > top) second = top, top = v[i];
        else if (v[i] > second) second = v[i];
    }
    return n == 1 ? top : second;
}

void mc_shm_xlat_add(mc_shm_t *sh, uint32_t ns)
{
    if (!ns) return;
    sh->xlat[sh->nxlat++ % MC_XLAT_N] = ns;
}

uint32_t mc_shm_xlat(const mc_shm_t *sh)
{
    int n = sh->nxlat < MC_XLAT_N ? (int)sh->nxlat : MC_XLAT_N;
    return mc_xlat_estimate(sh->xlat, n);
}

/* A rank with no sample of its own goes by the others' votes at the last posting round: the
 * distance is the node's, and a rank that reaches every round first and waits past its spin
 * takes no sample (a pipe's root, whose readers are still copying out the last call: on a
 * far node, MCOLL_SHM_FAR_NS=1, a program of pipe bcasts took 128 to over 25600 calls, 2 to
 * 400 rechecks, before its root first sampled and the calls went direct). */
int mc_shm_far(mc_shm_t *sh)
{
    long limit = mc_cfg()->shm_far_ns;
    uint32_t x = mc_shm_xlat(sh);
    int far = limit > 0 && (sh->nxlat ? (long)x > limit : sh->far_others);
    if (far != sh->far && mc_cfg()->verbose)
        mc_info("node region: line fetch %u ns (second largest of the last %d), the node is %s (MCOLL_SHM_FAR_NS=%ld)", x,
                MC_XLAT_N, far ? "far" : "near", limit);
    sh->far = far;
    return far;
}

/* On an oversubscribed node a slice handed over is read by a rank that runs after its writer
 * on the same core or soon on the other, while the line-fetch samples measure the scheduler
 * as much as the caches: preempted between their timestamps, a rank's estimate flips to far
 * for a while (at 4 and 8 ranks on the 2-core VM, rank 0 found the node far in about half of
 * the calls of 256 KiB). Streamed, those slices lost: the direct reductions' trials (temporal,
 * streamed, CMA; 3, 4 and 8 ranks, 64 KiB-8 MiB) kept to temporal stores in every call but
 * their tries, and shm_ma forced near ran as fast as shm_direct where by the rule it had run
 * 1.2-1.9x slower (allreduce and reduce_scatter_block, 256 KiB-2 MiB, same launch). */
int mc_shm_far_stream(mc_shm_t *sh)
{
    int far = mc_shm_far(sh);
    return far && !mc_host_oversubscribed();
}
