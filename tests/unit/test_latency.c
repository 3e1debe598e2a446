/* The node-distance estimate (src/shm/latency.c): the second largest of the last MC_XLAT_N
 * line-fetch samples against MCOLL_SHM_FAR_NS (default 100 ns), and the timed load. */
#include "core/config.h"
#include "shm/shm.h"
#include "unit.h"
#include <string.h>

static void estimate(void)
{
    uint32_t v[MC_XLAT_N] = {0};
    CHECK(mc_xlat_estimate(v, 0) == 0, "no samples: 0");
    v[0] = 50;
    CHECK(mc_xlat_estimate(v, 1) == 50, "one sample: itself");
    v[1] = 150;
    CHECK(mc_xlat_estimate(v, 2) == 50, "two samples: the smaller");
    for (int i = 0; i < MC_XLAT_N; i++) v[i] = 60;
    v[3] = 40000; /* one preempted sample */
    CHECK(mc_xlat_estimate(v, MC_XLAT_N) == 60, "one spike does not count: %u", mc_xlat_estimate(v, MC_XLAT_N));
    v[6] = 150;
    CHECK(mc_xlat_estimate(v, MC_XLAT_N) == 150, "two slow samples do: %u", mc_xlat_estimate(v, MC_XLAT_N));
    for (int i = 0; i < MC_XLAT_N; i++) v[i] = i % 3 ? 150 : 20; /* slow state, a third fast */
    CHECK(mc_xlat_estimate(v, MC_XLAT_N) == 150, "slow state with fast fetches: %u", mc_xlat_estimate(v, MC_XLAT_N));
}

static void far(void)
{
    mc_shm_t sh;
    memset(&sh, 0, sizeof sh);
    CHECK(mc_cfg()->shm_far_ns == 100, "default MCOLL_SHM_FAR_NS: %ld", mc_cfg()->shm_far_ns);
    CHECK(!mc_shm_far(&sh), "no samples: near");
    for (int i = 0; i < 20; i++) mc_shm_xlat_add(&sh, i % 2 ? 60 : 55);
    CHECK(sh.nxlat == 20 && mc_shm_xlat(&sh) == 60 && !mc_shm_far(&sh), "fast fetches: near (%u)", mc_shm_xlat(&sh));
    mc_shm_xlat_add(&sh, 0); /* no timestamp counter: no sample */
    CHECK(sh.nxlat == 20, "a 0 is no sample");
    mc_shm_xlat_add(&sh, 150);
    CHECK(!mc_shm_far(&sh), "one slow fetch: near");
    mc_shm_xlat_add(&sh, 140);
    CHECK(mc_shm_far(&sh) && mc_shm_xlat(&sh) == 140, "two slow fetches: far (%u)", mc_shm_xlat(&sh));
    CHECK(sh.far == 1, "the answer is remembered");
    for (int i = 0; i < MC_XLAT_N - 1; i++) mc_shm_xlat_add(&sh, 30);
    CHECK(!mc_shm_far(&sh), "the slow fetches aged out: near (%u)", mc_shm_xlat(&sh));
}

static void timed_load(void)
{
    _Atomic uint64_t f = 42;
    uint64_t v = 0;
    uint32_t ns = mc_timed_load(&f, &v);
    CHECK(v == 42, "the load returns the value: %llu", (unsigned long long)v);
    /* 0 without an invariant timestamp counter (then the node is never far) */
    CHECK(ns < 1000000, "a cached load takes well under a millisecond: %u ns", ns);
#if !defined(__x86_64__)
    CHECK(ns == 0, "no timestamp counter: no sample");
#endif
}

int main(void)
{
    estimate();
    far();
    timed_load();
    return unit_summary("unit_latency");
}
