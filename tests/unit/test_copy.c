/* Copy kernels (src/shm/copy.c): every non-temporal variant this CPU supports at every
 * source/destination alignment and many lengths, with guard bytes around the destination;
 * the adaptive choice; the DAV counter; the cache capacity; MCOLL_SHM_NT / MCOLL_SHM_CACHE /
 * an MCOLL_PROFILE with cache.adaptive set (in a re-executed child, since the configuration is
 * read once); the bookkeeping of the CMA rate probe (mc_cma_fast: ranges, re-measurement,
 * modes) around a stand-in measurement, and the probe itself run (its answers printed); CMA
 * at every relative alignment with and without the bounce buffer (mc_cma_bounce_set).
 *
 *   unit_copy [-v]    -v (or MCOLL_UNIT_BENCH=1): also time 64 MiB copies in 256 KiB slices, and
 *                     64 KiB copies at a destination 16 bytes past the source */
#define _GNU_SOURCE
#include "core/config.h"
#include "core/topo.h"
#include "model/model.h"
#include "shm/shm.h"
#include "unit.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GUARD 64
#define GUARD_BYTE 0xA5

static const char *kinds[] = {"avx512", "avx2", "sse2", "scalar"};
#define NKINDS 4

static unsigned char *src_buf, *dst_buf;
static size_t buf_len;

typedef void (*copy_fn)(void *, const void *, size_t);

/* Copies len bytes from src_buf+sa to dst_buf+GUARD+da and checks the copy and the GUARD
 * bytes on either side of it. Returns 0 on success (to stop early on a broken kernel). */
static int one_copy(copy_fn fn, const char *what, size_t sa, size_t da, size_t len)
{
    unsigned char *d = dst_buf + GUARD + da;
    memset(d - GUARD, GUARD_BYTE, len + 2 * GUARD);
    fn(d, src_buf + sa, len);
    int ok = memcmp(d, src_buf + sa, len) == 0;
    for (size_t i = 0; i < GUARD && ok; i++) ok = d[-1 - (long)i] == GUARD_BYTE && d[len + i] == GUARD_BYTE;
    CHECK(ok, "%s: src align %zu dst align %zu len %zu: copy or guard bytes wrong", what, sa, da, len);
    return ok ? 0 : -1;
}

static void sweep(copy_fn fn, const char *what)
{
    /* dst_buf is 64-byte aligned and GUARD is a multiple of 64: da is the alignment */
    for (size_t len = 0; len <= 300; len++)
        for (size_t sa = 0; sa < 64; sa++)
            for (size_t da = 0; da < 64; da++)
                if (one_copy(fn, what, sa, da, len)) return;
    static const size_t al[] = {0, 1, 8, 31, 63};
    for (size_t len = 301; len <= 1200; len++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                if (one_copy(fn, what, al[i], al[j], len)) return;
    static const size_t big[] = {4095, 4096, 4097, 65536 + 3, (1 << 20) + 7, (3 << 20) + 63};
    for (int b = 0; b < 6; b++)
        for (int i = 0; i < 5; i++)
            if (one_copy(fn, what, al[i], al[4 - i], big[b])) return;
}

static void test_variants(void)
{
    int supported = 0;
    for (int k = 0; k < NKINDS; k++) {
        if (mc_copy_nt_force(kinds[k]) != 0) {
            printf("nt variant %s: not supported here\n", kinds[k]);
            continue;
        }
        supported++;
        CHECK(!strcmp(mc_copy_nt_kind(), kinds[k]), "forced %s, kind is %s", kinds[k], mc_copy_nt_kind());
        char what[32];
        snprintf(what, sizeof what, "nt/%s", kinds[k]);
        sweep(mc_copy_nt, what);
    }
    CHECK(supported >= 1, "no nt variant supported (scalar always should be)");
    CHECK(mc_copy_nt_force("scalar") == 0, "scalar must always be available");
#if defined(__x86_64__)
    CHECK(mc_copy_nt_force("sse2") == 0, "sse2 is part of x86-64");
    CHECK((mc_copy_nt_force("avx512") == 0) == !!__builtin_cpu_supports("avx512f"), "avx512 availability");
    CHECK((mc_copy_nt_force("avx2") == 0) == !!__builtin_cpu_supports("avx2"), "avx2 availability");
#endif
    CHECK(mc_copy_nt_force("bogus") == -1, "unknown kind accepted");
    CHECK(mc_copy_nt_force("") == -1, "empty kind accepted");
    CHECK(mc_copy_nt_force(NULL) == -1, "NULL kind accepted");
    CHECK(mc_copy_nt_force("auto") == 0, "auto rejected");
    sweep(mc_copy_t, "t");
}

/* mc_memmove: its own loop takes the destinations 1-31 bytes past the source (modulo 64) from
 * 2 KiB on; every relative alignment around that size and above, then overlaps in both
 * directions (memmove's semantics), against a copy made byte by byte. */
static void memmove_fn(void *d, const void *s, size_t n) { mc_memmove(d, s, n); }

static void test_memmove(void)
{
    static const size_t lens[] = {2047, 2048, 2049, 2048 + 33, 4096 + 17, 65536 + 5, (1 << 20) + 9};
    static const size_t sas[] = {0, 5, 32, 63};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 4; j++)
            for (size_t da = 0; da < 64; da++)
                if (one_copy(memmove_fn, "memmove", sas[j], da, lens[i])) return;
    const size_t n = 8192 + 7, span = 5 * n;
    unsigned char *buf = malloc(span), *want = malloc(span);
    static const long gaps[] = {1, 8, 16, 31, 32, 33, 63, 64, 100, 4096, 8192 + 6, 8192 + 7, 8192 + 23};
    for (int g = 0; g < 13 && buf && want; g++)
        for (int dir = -1; dir <= 1; dir += 2) {
            size_t so = 2 * n + 3, dof = (size_t)((long)so + dir * gaps[g]);
            memcpy(buf, src_buf, span);
            memcpy(want, src_buf, span);
            for (size_t k = 0; k < n; k++) want[dof + k] = src_buf[so + k];
            mc_memmove(buf + dof, buf + so, n);
            CHECK(!memcmp(buf, want, span), "memmove of %zu bytes, destination %+ld from the source: wrong", n,
                  dir * gaps[g]);
        }
    free(buf);
    free(want);
}

/* CMA at every relative alignment, through the bounce buffer (forced) and without, reading
 * and writing this process's own memory: the bytes and the guards; then the probe's answer
 * (printed: how slow the skewed copy is is the machine's). */
static void cma_read_fn(void *d, const void *s, size_t n)
{
    CHECK(mc_cma_read(getpid(), d, s, n) == MPI_SUCCESS, "cma read");
}

static void cma_write_fn(void *d, const void *s, size_t n)
{
    CHECK(mc_cma_write(getpid(), d, s, n) == MPI_SUCCESS, "cma write");
}

static void test_cma_bounce(void)
{
    static const size_t lens[] = {100, 2047, 2048, 5000, (128 << 10) + 100, 300007};
    static const size_t sas[] = {0, 16, 40};
    for (int mode = 1; mode >= 0; mode--) {
        char rd[32], wr[32];
        snprintf(rd, sizeof rd, "cma read, bounce %d", mode);
        snprintf(wr, sizeof wr, "cma write, bounce %d", mode);
        mc_cma_bounce_set(mode);
        CHECK(mc_cma_bounces() == mode, "bounce forced to %d", mode);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 3; j++)
                for (size_t da = 0; da < 64; da += (i == 3 ? 1 : 5)) {
                    if (one_copy(cma_read_fn, rd, sas[j], da, lens[i])) return;
                    if (one_copy(cma_write_fn, wr, sas[j], da, lens[i])) return;
                }
    }
    mc_cma_bounce_set(-1);
    printf("CMA to a destination 16 bytes past the source bounces here: %d\n", mc_cma_bounces());
}

/* The adaptive copy is correct on both branches; which branch ran is not observable from
 * the outside, so the boundaries are exercised (W == C must take the t-copy). */
static size_t adapt_nt, adapt_w, adapt_c;
static void adaptive_fn(void *d, const void *s, size_t n) { mc_copy_adaptive(d, s, n, (int)adapt_nt, adapt_w, adapt_c); }

static void test_adaptive(void)
{
    static const size_t cases[][3] = {{1, 2, 1}, {1, 1, 1}, {1, 0, 1}, {0, 2, 1}, {0, 0, 0}, {1, SIZE_MAX, 0}};
    for (int c = 0; c < 6; c++) {
        adapt_nt = cases[c][0], adapt_w = cases[c][1], adapt_c = cases[c][2];
        char what[64];
        snprintf(what, sizeof what, "adaptive(nt=%zu,W=%zu,C=%zu)", adapt_nt, adapt_w, adapt_c);
        static const size_t lens[] = {0, 1, 255, 256, 257, 1000, 65536 + 5, (1 << 20) + 7};
        for (int i = 0; i < 8; i++)
            for (size_t a = 0; a < 64; a += 7) one_copy(adaptive_fn, what, a, 63 - a, lens[i]);
    }
}

static void test_dav(void)
{
    static const size_t lens[] = {0, 1, 100, 255, 256, 4099, (1 << 20) + 7};
    for (int i = 0; i < 7; i++) {
        size_t n = lens[i];
        uint64_t before = mc_dav_bytes;
        mc_copy_t(dst_buf, src_buf + 3, n);
        CHECK(mc_dav_bytes - before == 2 * n, "t-copy of %zu bytes counted %llu", n, (unsigned long long)(mc_dav_bytes - before));
        before = mc_dav_bytes;
        mc_copy_nt(dst_buf + 5, src_buf, n);
        CHECK(mc_dav_bytes - before == 2 * n, "nt-copy of %zu bytes counted %llu", n, (unsigned long long)(mc_dav_bytes - before));
        before = mc_dav_bytes;
        mc_copy_adaptive(dst_buf, src_buf, n, 1, 2, 1);
        mc_copy_adaptive(dst_buf, src_buf, n, 0, 2, 1);
        CHECK(mc_dav_bytes - before == 4 * n, "2 adaptive copies of %zu bytes counted %llu", n, (unsigned long long)(mc_dav_bytes - before));
        /* in place: nothing moves, nothing counts */
        before = mc_dav_bytes;
        mc_copy_t(dst_buf, dst_buf, n);
        mc_copy_nt(dst_buf, dst_buf, n);
        CHECK(mc_dav_bytes == before, "copies onto themselves of %zu bytes counted %llu", n, (unsigned long long)(mc_dav_bytes - before));
    }
}

/* The formula of shm.h, from the topology this process sees. */
static size_t expected_capacity(int p)
{
    mc_topo_t t;
    mc_topo_get(&t);
    if (!mc_llc_credible(t.llc, t.llc_pus)) return (size_t)32 << 20;
    if (t.llc_inclusive == 0 && t.llc_level > 2 && t.l2) return t.llc + (size_t)p * t.l2;
    return t.llc;
}

static void test_capacity(void)
{
    if (mc_cfg()->shm_cache > 0) {
        for (int p = 1; p <= 64; p *= 2)
            CHECK(mc_cache_capacity(p) == (size_t)mc_cfg()->shm_cache, "MCOLL_SHM_CACHE=%ld, p=%d: %zu", mc_cfg()->shm_cache, p, mc_cache_capacity(p));
        return;
    }
    mc_topo_t t;
    mc_topo_get(&t);
    printf("topology: llc L%d %zu bytes (inclusive %d), l2 %zu: C(1)=%zu C(8)=%zu\n", t.llc_level, t.llc, t.llc_inclusive, t.l2,
           mc_cache_capacity(1), mc_cache_capacity(8));
    for (int p = 1; p <= 64; p *= 2) {
        size_t c = mc_cache_capacity(p);
        CHECK(c == expected_capacity(p), "p=%d: capacity %zu, expected %zu", p, c, expected_capacity(p));
        CHECK(c > 0 && (c >= t.llc || !mc_llc_credible(t.llc, t.llc_pus)), "p=%d: capacity %zu below the LLC %zu", p, c, t.llc);
        CHECK(p == 1 || c >= mc_cache_capacity(p / 2), "capacity shrinks with p=%d", p);
    }
}

/* ---------------------------------------------------------------- CMA rate of a buffer */
static long anon_huge_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

/* 4 MiB at a 2 MiB boundary, advised before the first touch. */
static char *thp_buffer(int huge)
{
    size_t n = (size_t)4 << 20;
    char *b = aligned_alloc((size_t)2 << 20, n);
    if (!b) return NULL;
    madvise(b, n, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(b, 1, n);
    return b;
}

/* The bookkeeping around the rate measurement, with the measurement replaced: it counts its
 * calls and answers from the buffer's first byte ('F' fast). */
static int fake_calls;
static int fake_measure(const char *buf, size_t len)
{
    (void)len;
    fake_calls++;
    return buf[0] == 'F';
}

static void test_cma_ranges(void)
{
    enum { PIECE = 64, NEW = MC_CMA_RANGES - 1 };
    static char arena[4 + 3 * MC_CMA_RANGES][PIECE];
    char *a = arena[0], *b = arena[1];
    int k = 4, ok = 1;
    mc_cma_measure_set(fake_measure);
    a[0] = 'F', b[0] = 's';
    fake_calls = 0;
    CHECK(mc_cma_fast(a, 0) == 1 && fake_calls == 0, "an empty buffer is fast, unmeasured (%d calls)", fake_calls);
    CHECK(mc_cma_fast(a, PIECE) == 1 && fake_calls == 1, "first use of a range measures it (%d calls)", fake_calls);
    a[0] = 's';   /* a measurement from now on says slow: the kept answer shows until the recheck */
    for (int i = 1; i < MC_CMA_RECHECK; i++) ok &= mc_cma_fast(i % 2 ? a : a + 8, i % 2 ? PIECE : 8) == 1;
    CHECK(ok && fake_calls == 1, "the range and a buffer inside it keep the answer for %d uses (%d calls)", MC_CMA_RECHECK, fake_calls);
    CHECK(mc_cma_fast(a, PIECE) == 0 && fake_calls == 2, "use %d measures again (%d calls)", MC_CMA_RECHECK + 1, fake_calls);
    CHECK(mc_cma_fast(b, PIECE) == 0 && fake_calls == 3, "a new range is measured (%d calls)", fake_calls);
    b[0] = 'F';
    CHECK(mc_cma_fast(a + PIECE / 2, PIECE) == 0 && fake_calls == 4, "a buffer across two kept ranges is measured on its own (%d calls)", fake_calls);
    /* least recently used goes: a touched between fills survives them, untouched it goes */
    mc_cma_fast(a, PIECE);
    for (int i = 0; i < NEW; i++) mc_cma_fast(arena[k++], 1);
    int calls = fake_calls;
    mc_cma_fast(a, PIECE);
    for (int i = 0; i < NEW; i++) mc_cma_fast(arena[k++], 1);
    CHECK(fake_calls == calls + NEW, "%d new ranges measured once each (%d calls)", NEW, fake_calls - calls);
    mc_cma_fast(a, PIECE);
    CHECK(fake_calls == calls + NEW, "a range used among the %d most recent is kept (%d calls)", MC_CMA_RANGES, fake_calls - calls);
    for (int i = 0; i < MC_CMA_RANGES; i++) mc_cma_fast(arena[k++], 1);
    calls = fake_calls;
    mc_cma_fast(a, PIECE);
    CHECK(fake_calls == calls + 1, "a range not among the %d most recent is measured again", MC_CMA_RANGES);
    mc_cma_measure_set(NULL);
}

/* The timed probe itself: run on a buffer of 4 KiB pages and on one of huge pages, and its
 * answers printed. How fast CMA moves either is the machine's (a busy or virtual machine may
 * find both slow, which only keeps the movers staging): `mcoll-bench --thp` measures it. */
static void test_cma_probe(void)
{
    char word[64], *bufs[2];
    struct iovec l = {word, sizeof word}, r = {src_buf, sizeof word};
    if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof word) {
        printf("cma probe: process_vm_readv refused here, skipped\n");
        return;
    }
    long before = anon_huge_kb();
    for (int huge = 0; huge < 2; huge++) bufs[huge] = thp_buffer(huge);
    long after = anon_huge_kb();
    int fast[2];
    for (int huge = 0; huge < 2; huge++) fast[huge] = bufs[huge] ? mc_cma_fast(bufs[huge], (size_t)4 << 20) : -1;
    CHECK(bufs[0] && bufs[1], "cma probe: two 4 MiB buffers");
    printf("cma probe (timed, not checked): 4 KiB pages %s, huge pages %s (AnonHugePages %ld -> %ld kB)\n",
           fast[0] ? "fast" : "slow", fast[1] ? "fast" : "slow", before, after);
    free(bufs[0]), free(bufs[1]);
}

/* ---------------------------------------------------------------- configuration (child) */
#define PROFILE_C ((size_t)3 << 20)

static int child_main(const char *what)
{
    if (!strcmp(what, "nt-sse2")) {
        CHECK(!strcmp(mc_copy_nt_kind(), "sse2"), "MCOLL_SHM_NT=sse2: kind %s", mc_copy_nt_kind());
    } else if (!strcmp(what, "nt-bogus")) {
        const char *k = mc_copy_nt_kind();   /* warns, then takes the best supported */
        CHECK(mc_copy_nt_force("auto") == 0 && !strcmp(k, mc_copy_nt_kind()), "MCOLL_SHM_NT=bogus: kind %s, auto is %s", k, mc_copy_nt_kind());
    } else if (!strncmp(what, "cma-", 4)) {
        /* =1 / =0: every buffer counts fast / slow, unmeasured; =bogus: a warning, then auto
         * (measured) */
        static char b[64] = "F";
        int measured = !strcmp(what, "cma-bogus"), want = strcmp(what, "cma-0") != 0;
        mc_cma_measure_set(fake_measure);
        int got = mc_cma_fast(b, sizeof b);
        CHECK(got == want && fake_calls == measured, "MCOLL_SHM_CMA_FAST for %s: fast %d (want %d), %d measurements", what, got, want, fake_calls);
    } else if (!strncmp(what, "bounce-", 7)) {
        /* =1 / =0: forced, no probe; =bogus: a warning, then the probe's answer (0 or 1) */
        int got = mc_cma_bounces();
        if (!strcmp(what, "bounce-bogus")) CHECK(got == 0 || got == 1, "MCOLL_SHM_CMA_BOUNCE=bogus: %d", got);
        else CHECK(got == (what[7] == '1'), "MCOLL_SHM_CMA_BOUNCE for %s: %d", what, got);
    } else if (!strcmp(what, "profile")) {
        /* the profile's capacity (cache.adaptive, set by hand) replaces the topology's, for every p */
        for (int p = 1; p <= 64; p *= 2)
            CHECK(mc_cache_capacity(p) == PROFILE_C, "MCOLL_PROFILE with cache.adaptive, p=%d: %zu", p, mc_cache_capacity(p));
    } else if (!strcmp(what, "vm-llc")) {
        /* HWLOC_SYNTHETIC: a 512 MiB L3 per core, as a virtual machine may report: not credible */
        for (int p = 1; p <= 64; p *= 2)
            CHECK(mc_cache_capacity(p) == (size_t)32 << 20, "512 MiB L3 per core, p=%d: capacity %zu, want 32 MiB", p, mc_cache_capacity(p));
        /* 1 MiB L2 per core, no L1 given (32 KiB): hand-overs stream from p L1 below p L2, and
         * beyond C */
        size_t M = (size_t)1 << 20, K = 1024, C = mc_cache_capacity(2);
        CHECK(!mc_handover_nt(64 * K - 1, C, 2) && mc_handover_nt(64 * K, C, 2) && mc_handover_nt(2 * M - 1, C, 2) &&
              !mc_handover_nt(2 * M, C, 2) && !mc_handover_nt(C, C, 2) && mc_handover_nt(C + 1, C, 2) &&
              !mc_handover_nt(256 * K - 1, C, 8) && mc_handover_nt(8 * M - 1, C, 8) && !mc_handover_nt(8 * M, C, 8),
              "hand-over streaming with private 1 MiB L2s");
    } else if (!strcmp(what, "big-llc")) {
        /* HWLOC_SYNTHETIC: a 96 MiB L3 shared by 8 cores (12 MiB each): credible, taken as it is */
        mc_topo_t t;
        mc_topo_get(&t);
        CHECK(t.llc == (size_t)96 << 20 && t.llc_pus == 8, "synthetic topology read as llc %zu shared by %d", t.llc, t.llc_pus);
        CHECK(mc_cache_capacity(2) >= (size_t)96 << 20, "96 MiB L3 shared by 8: capacity %zu", mc_cache_capacity(2));
        /* the L1s and L2s decide the band, shared LLC or not */
        size_t C = mc_cache_capacity(2), M = (size_t)1 << 20;
        CHECK(!mc_handover_nt(4096, C, 2) && mc_handover_nt(M, C, 2) && !mc_handover_nt(2 * M, C, 2) &&
              !mc_handover_nt(C, C, 2) && mc_handover_nt(C + 1, C, 2), "hand-over streaming in a shared LLC");
    } else if (!strcmp(what, "cache")) {
        CHECK(mc_cfg()->shm_cache == 12345, "MCOLL_SHM_CACHE parsed as %ld", mc_cfg()->shm_cache);
        test_capacity();
    }
    return unit_summary(what);
}

static void run_child(const char *self, const char *what, const char *var, const char *val)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv(var, val, 1);
        execl("/proc/self/exe", self, "--child", what, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %s=%s failed (status %d)", var, val, st);
}

/* ---------------------------------------------------------------- benchmark */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Copy bandwidth (bytes copied per second) of a 64 MiB copy made of 256 KiB slices, as a
 * pipelined collective does; best of 5. */
static double bench_one(copy_fn fn, char *d, const char *s, size_t total, size_t slice)
{
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        for (size_t off = 0; off < total; off += slice) fn(d + off, s + off, slice);
        double t = now() - t0;
        best = t < best ? t : best;
    }
    return total / best / 1e9;
}

static void memcpy_fn(void *d, const void *s, size_t n) { memcpy(d, s, n); }

static void bench(void)
{
    const size_t total = (size_t)64 << 20, slice = (size_t)256 << 10;
    char *s = aligned_alloc(4096, total), *d = aligned_alloc(4096, total);
    if (!s || !d) {
        printf("bench: no memory\n");
        free(s), free(d);
        return;
    }
    memset(s, 1, total);
    memset(d, 2, total);
    printf("bench: 64 MiB in 256 KiB slices, copy bandwidth GB/s (best of 5)\n");
    printf("  %-8s %6.2f\n", "memcpy", bench_one(mc_copy_t, d, s, total, slice));
    for (int k = 0; k < NKINDS; k++) {
        if (mc_copy_nt_force(kinds[k]) != 0) continue;
        printf("  nt/%-5s %6.2f   (dst+1, src+3: %6.2f)\n", kinds[k], bench_one(mc_copy_nt, d, s, total, slice),
               bench_one(mc_copy_nt, d + 1, s + 3, total - 64, slice));
    }
    mc_copy_nt_force("auto");
    /* glibc's rep movsb at the destination 16 bytes past the source (a region's line into a
     * malloc block), against mc_memmove there, one 64 KiB copy at a time (in the L2) */
    const size_t k64 = (size_t)64 << 10;
    printf("bench: 64 KiB copies, dst+16: memcpy %6.2f GB/s, mc_memmove %6.2f GB/s (aligned memcpy %6.2f)\n",
           bench_one(memcpy_fn, d + 16, s, k64 * 64, k64), bench_one(memmove_fn, d + 16, s, k64 * 64, k64),
           bench_one(memcpy_fn, d, s, k64 * 64, k64));
    free(s);
    free(d);
}

/* Yama (mc_cma_allow_peers): the process names any ptracer exactly where the scope file says
 * 1 - the call then succeeds, or fails with EINVAL on a kernel without Yama (this one) - and
 * leaves the process alone for every other scope, a missing file or garbage. */
static void test_yama(void)
{
    static const struct {
        const char *text;
        int calls;
    } cases[] = {
        {"0\n", 0}, {"1\n", 1}, {"2\n", 0}, {"3\n", 0}, {"x\n", 0}, {"", 0},
    };
    char path[] = "/tmp/mcoll-unit-yama-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "temporary file");
    if (fd < 0) return;
    close(fd);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        if (!f) break;
        fputs(cases[i].text, f);
        fclose(f);
        int rc = mc_cma_allow_peers(path);
        if (cases[i].calls)
            CHECK(rc == 1 || rc == -EINVAL, "scope 1: PR_SET_PTRACER_ANY asked for (rc %d)", rc);
        else
            CHECK(rc == 0, "scope file \"%s\": nothing asked for (rc %d)", cases[i].text, rc);
    }
    unlink(path);
    CHECK(mc_cma_allow_peers("/nonexistent/ptrace_scope") == 0, "no Yama file: nothing asked for");
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--child")) return child_main(argv[2]);
    int verbose = (argc > 1 && !strcmp(argv[1], "-v")) || getenv("MCOLL_UNIT_BENCH");

    buf_len = ((size_t)4 << 20);
    src_buf = aligned_alloc(64, buf_len);
    dst_buf = aligned_alloc(64, buf_len);
    if (!src_buf || !dst_buf) return 2;
    srand(7);
    for (size_t i = 0; i < buf_len; i++) src_buf[i] = (unsigned char)(rand() >> 7);
    printf("nt kind at first use: %s\n", mc_copy_nt_kind());

    test_variants();
    test_adaptive();
    test_memmove();
    test_cma_bounce();
    test_dav();
    test_capacity();
    test_cma_ranges();
    test_cma_probe();
    test_yama();
    run_child(argv[0], "nt-sse2", "MCOLL_SHM_NT", "sse2");
    run_child(argv[0], "nt-bogus", "MCOLL_SHM_NT", "bogus");
    run_child(argv[0], "cma-1", "MCOLL_SHM_CMA_FAST", "1");
    run_child(argv[0], "cma-0", "MCOLL_SHM_CMA_FAST", "0");
    run_child(argv[0], "cma-bogus", "MCOLL_SHM_CMA_FAST", "bogus");
    run_child(argv[0], "bounce-1", "MCOLL_SHM_CMA_BOUNCE", "1");
    run_child(argv[0], "bounce-0", "MCOLL_SHM_CMA_BOUNCE", "0");
    run_child(argv[0], "bounce-bogus", "MCOLL_SHM_CMA_BOUNCE", "bogus");
    /* the profile's capacity, then MCOLL_SHM_CACHE over it (the child inherits both) */
    char prof[] = "/tmp/mcoll-unit-copy-profile-XXXXXX", err[256];
    int fd = mkstemp(prof);
    mc_profile_t pr;
    mc_profile_default(&pr);
    pr.adapt_c = PROFILE_C;
    CHECK(fd >= 0 && mc_profile_save(prof, &pr, err, sizeof err) == 0, "profile for the child: %s", fd < 0 ? "mkstemp" : err);
    if (fd >= 0) close(fd);
    CHECK(!mc_llc_credible((size_t)508 << 20, 1) && mc_llc_credible((size_t)96 << 20, 8) &&
          mc_llc_credible((size_t)64 << 20, 1) && !mc_llc_credible(0, 4), "mc_llc_credible");
    run_child(argv[0], "vm-llc", "HWLOC_SYNTHETIC", "pack:1 l3:2(size=536870912) l2:1(size=1048576) core:1 pu:1");
    run_child(argv[0], "big-llc", "HWLOC_SYNTHETIC", "pack:1 l3:1(size=100663296) l2:8(size=1048576) core:1 pu:1");
    run_child(argv[0], "profile", "MCOLL_PROFILE", prof);
    setenv("MCOLL_PROFILE", prof, 1);
    run_child(argv[0], "cache", "MCOLL_SHM_CACHE", "12345");
    unlink(prof);
    if (verbose) bench();
    free(src_buf);
    free(dst_buf);
    return unit_summary("unit_copy");
}
