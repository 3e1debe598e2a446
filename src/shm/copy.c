/* Copy kernels: temporal (memcpy) and non-temporal (streaming stores), and the adaptive
 * choice between them (yhccl Algorithm 1, as its prose states it).
 *
 * Streaming stores write whole lines to memory without first reading them into the cache
 * (no read-for-ownership), which saves a third of the memory traffic when the destination
 * will not be read again soon. They are weakly ordered: every nt-copy ends with sfence, so
 * a flag published (release store) after the copy is never seen before the data.
 *
 * The SIMD variants are compiled with per-function target attributes and chosen at run
 * time, so the library builds with default flags and runs on CPUs without AVX-512. */
#include "shm.h"
#include "../core/config.h"
#include "../core/log.h"
#include "../core/topo.h"
#include "../model/model.h"
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define MC_X86 1
#else
#define MC_X86 0
#endif

/* Below this size the head/tail handling and the fence cost more than the saved
 * read-for-ownership: plain memcpy. */
#define NT_MIN 256
/* Software prefetch distance of the source, bytes ahead of the loads. */
#define NT_PF 512   /* measured: 0..2048 all within noise here; 256-512 slightly ahead */

/* Copies n bytes (a multiple of 64) to d (64-byte aligned) with streaming stores; the
 * caller fences. */
typedef void (*nt_body_fn)(char *d, const char *s, size_t n);

#if MC_X86
__attribute__((target("avx512f"))) static void body_avx512(char *d, const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 256 <= n; i += 256) {
        _mm_prefetch(s + i + NT_PF, _MM_HINT_T0);
        _mm_prefetch(s + i + NT_PF + 128, _MM_HINT_T0);
        __m512i x0 = _mm512_loadu_si512(s + i);
        __m512i x1 = _mm512_loadu_si512(s + i + 64);
        __m512i x2 = _mm512_loadu_si512(s + i + 128);
        __m512i x3 = _mm512_loadu_si512(s + i + 192);
        _mm512_stream_si512((__m512i *)(d + i), x0);
        _mm512_stream_si512((__m512i *)(d + i + 64), x1);
        _mm512_stream_si512((__m512i *)(d + i + 128), x2);
        _mm512_stream_si512((__m512i *)(d + i + 192), x3);
    }
    for (; i < n; i += 64) _mm512_stream_si512((__m512i *)(d + i), _mm512_loadu_si512(s + i));
}

__attribute__((target("avx2"))) static void body_avx2(char *d, const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        _mm_prefetch(s + i + NT_PF, _MM_HINT_T0);
        _mm_prefetch(s + i + NT_PF + 64, _MM_HINT_T0);
        __m256i x0 = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i x1 = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i x2 = _mm256_loadu_si256((const __m256i *)(s + i + 64));
        __m256i x3 = _mm256_loadu_si256((const __m256i *)(s + i + 96));
        _mm256_stream_si256((__m256i *)(d + i), x0);
        _mm256_stream_si256((__m256i *)(d + i + 32), x1);
        _mm256_stream_si256((__m256i *)(d + i + 64), x2);
        _mm256_stream_si256((__m256i *)(d + i + 96), x3);
    }
    for (; i < n; i += 32)
        _mm256_stream_si256((__m256i *)(d + i), _mm256_loadu_si256((const __m256i *)(s + i)));
}

/* SSE2 is part of x86-64: no target attribute needed. */
static void body_sse2(char *d, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        _mm_prefetch(s + i + NT_PF, _MM_HINT_T0);
        __m128i x0 = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i x1 = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i x2 = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i x3 = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), x0);
        _mm_stream_si128((__m128i *)(d + i + 16), x1);
        _mm_stream_si128((__m128i *)(d + i + 32), x2);
        _mm_stream_si128((__m128i *)(d + i + 48), x3);
    }
}

/* Scalar streaming stores (movnti), 8 bytes at a time. */
static void body_scalar(char *d, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        long long v;
        memcpy(&v, s + i, sizeof v);
        _mm_stream_si64((long long *)(d + i), v);
    }
}

static int has_avx512(void) { return __builtin_cpu_supports("avx512f"); }
static int has_avx2(void) { return __builtin_cpu_supports("avx2"); }
static int has_always(void) { return 1; }
#define FENCE() _mm_sfence()
#else
/* No streaming stores known here: the "scalar" variant is a plain copy. */
static void body_scalar(char *d, const char *s, size_t n) { memcpy(d, s, n); }
static int has_always(void) { return 1; }
#define FENCE() atomic_thread_fence(memory_order_release)
#endif

typedef struct nt_variant {
    const char *name;
    nt_body_fn body;
    int (*supported)(void);
} nt_variant_t;

/* Best first: "auto" takes the first supported one. */
static const nt_variant_t variants[] = {
#if MC_X86
    {"avx512", body_avx512, has_avx512},
    {"avx2", body_avx2, has_avx2},
    {"sse2", body_sse2, has_always},
#endif
    {"scalar", body_scalar, has_always},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

static _Atomic int current = -1;   /* index into variants, -1 before first use */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int find_variant(const char *kind)
{
    if (!strcmp(kind, "auto")) {
        for (int i = 0; i < NVARIANTS; i++)
            if (variants[i].supported()) return i;
        return NVARIANTS - 1;
    }
    for (int i = 0; i < NVARIANTS; i++)
        if (!strcmp(kind, variants[i].name)) return variants[i].supported() ? i : -1;
    return -1;
}

static void choose_initial(void)
{
    __builtin_cpu_init();   /* may run before libgcc's constructor (early interposition) */
    const char *want = mc_cfg()->shm_nt;
    int i = find_variant(want[0] ? want : "auto");
    if (i < 0) {
        mc_warn("MCOLL_SHM_NT=%s is unknown or not supported by this CPU; using auto", want);
        i = find_variant("auto");
    }
    int unset = -1;
    /* a mc_copy_nt_force that ran before first use wins */
    atomic_compare_exchange_strong(&current, &unset, i);
}

static int current_variant(void)
{
    int i = atomic_load_explicit(&current, memory_order_relaxed);
    if (i >= 0) return i;
    pthread_once(&once, choose_initial);
    return atomic_load_explicit(&current, memory_order_relaxed);
}

const char *mc_copy_nt_kind(void) { return variants[current_variant()].name; }

int mc_copy_nt_force(const char *kind)
{
    if (!kind) return -1;
    __builtin_cpu_init();
    int i = find_variant(kind);
    if (i < 0) return -1;
    atomic_store(&current, i);
    return 0;
}

/* ---------------------------------------------------------------- mc_memmove
 * glibc 2.36 (Debian 12) copies blocks from 2-4 KiB up to about the L2 size with `rep movsb`.
 * On AMD Zen 3 (EPYC family 25, the 2-core VM) that instruction runs 15-20x slower when the
 * destination lies 1-31 bytes past the source modulo 64: 16 KiB 5.3-8 us instead of 0.3,
 * 64 KiB 21-33 us instead of 1.6, 256 KiB 88-132 us instead of 6-7 (and 1 MiB by a bare
 * `rep movsb` 529 us instead of 38; glibc's memcpy leaves it from the L2 size on). A region's
 * slot is line-aligned and a malloc block starts 16 bytes into its page, so every copy out of
 * the region into such a block hit it: staged allgather of 1 MiB blocks 427 us against 88 us
 * into page-aligned ones. A loop of 32-byte loads and stores is as fast as memcpy at every size
 * from 2 KiB to 64 MiB there (64 KiB 2.1 us against 1.7 aligned, 16 MiB 718-751 us against
 * 773-964); it takes those alignments, memmove the rest. */
#define MOVSB_MIN 2048

#if MC_X86
/* n bytes, d 32-byte aligned; forward. */
__attribute__((target("avx2"))) static void t_body_avx2(char *d, const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        __m256i x0 = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i x1 = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i x2 = _mm256_loadu_si256((const __m256i *)(s + i + 64));
        __m256i x3 = _mm256_loadu_si256((const __m256i *)(s + i + 96));
        _mm256_store_si256((__m256i *)(d + i), x0);
        _mm256_store_si256((__m256i *)(d + i + 32), x1);
        _mm256_store_si256((__m256i *)(d + i + 64), x2);
        _mm256_store_si256((__m256i *)(d + i + 96), x3);
    }
    for (; i + 32 <= n; i += 32)
        _mm256_store_si256((__m256i *)(d + i), _mm256_loadu_si256((const __m256i *)(s + i)));
    memcpy(d + i, s + i, n - i);
}

static void t_body_sse2(char *d, const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i x1 = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i x2 = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i x3 = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_store_si128((__m128i *)(d + i), x0);
        _mm_store_si128((__m128i *)(d + i + 16), x1);
        _mm_store_si128((__m128i *)(d + i + 32), x2);
        _mm_store_si128((__m128i *)(d + i + 48), x3);
    }
    memcpy(d + i, s + i, n - i);
}

static void copy_forward(char *d, const char *s, size_t n)
{
    size_t head = (size_t)(-(uintptr_t)d) & 31;
    memcpy(d, s, head);
    if (__builtin_cpu_supports("avx2")) t_body_avx2(d + head, s + head, n - head);
    else t_body_sse2(d + head, s + head, n - head);
}

/* Skewed, and no overlap. */
static inline int movsb_slow(uintptr_t d, uintptr_t s, size_t n)
{
    return mc_movsb_skewed(d, s) && (d >= s + n || s >= d + n);
}

void mc_memmove(void *dst, const void *src, size_t n)
{
    if (n >= MOVSB_MIN && movsb_slow((uintptr_t)dst, (uintptr_t)src, n)) copy_forward(dst, src, n);
    else memmove(dst, src, n);
}
#else
void mc_memmove(void *dst, const void *src, size_t n) { memmove(dst, src, n); }
#endif

/* dst == src (an in-place caller) moves nothing, so it counts nothing either (and memcpy
 * on identical pointers is undefined). */
void mc_copy_t(void *dst, const void *src, size_t n)
{
    if (dst == src) return;
    mc_dav_bytes += 2 * (uint64_t)n;
    mc_memmove(dst, src, n);
}

void mc_copy_nt(void *dst, const void *src, size_t n)
{
    if (dst == src) return;
    mc_dav_bytes += 2 * (uint64_t)n;
    mc_nt_bytes += n;
    if (n < NT_MIN) {
        memcpy(dst, src, n);
        return;
    }
    char *d = dst;
    const char *s = src;
    /* head: bring the destination to a line boundary, so every streaming store writes a
     * whole line (partial lines of write-combining buffers are slow) */
    size_t head = (size_t)(-(uintptr_t)d) & (MC_CL - 1);
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    size_t body = n & ~(size_t)(MC_CL - 1);
    variants[current_variant()].body(d, s, body);
    memcpy(d + body, s + body, n - body);
    FENCE();
}

void mc_stream_lines(void *dst, const void *src, size_t n)
{
    variants[current_variant()].body(dst, src, n);
}

void mc_stream_fence(void) { FENCE(); }

void mc_copy_adaptive(void *dst, const void *src, size_t n, int nontemporal, size_t W, size_t C)
{
    if (nontemporal && W > C) mc_copy_nt(dst, src, n);
    else mc_copy_t(dst, src, n);
}

#define DEFAULT_CACHE ((size_t)32 << 20)

/* The cache sizes, read from the topology once (every shared-memory call asks), and the
 * capacity MCOLL_PROFILE gives (0 = none). */
static struct { size_t llc, l1, l2, profiled; int add_l2; } caps;
static pthread_once_t caps_once = PTHREAD_ONCE_INIT;

int mc_llc_credible(size_t llc, int pus)
{
    return llc > 0 && llc / (size_t)(pus > 0 ? pus : 1) <= MC_LLC_PER_PU_MAX;
}

static void caps_read(void)
{
    mc_topo_t t;
    mc_topo_get(&t);   /* on failure the sizes are 0: the default applies */
    int known = mc_llc_credible(t.llc, t.llc_pus);
    caps.llc = known ? t.llc : DEFAULT_CACHE;
    caps.l1 = t.l1d;
    caps.l2 = t.l2;
    /* A non-inclusive LLC holds lines the private L2s do not: both add up. Unknown
     * inclusiveness counts only the LLC (the conservative choice: nt-copies start earlier). */
    caps.add_l2 = known && t.llc_inclusive == 0 && t.llc_level > 2 && t.l2;
    caps.profiled = (size_t)mc_profile_active()->adapt_c;
}

int mc_handover_nt(size_t W, size_t C, int p)
{
    if (W > C) return 1;
    pthread_once(&caps_once, caps_read);
    size_t l1 = caps.l1 ? caps.l1 : (size_t)32 << 10;
    return W >= (size_t)p * l1 && W < (size_t)p * caps.l2;
}

size_t mc_cache_capacity(int p)
{
    long forced = mc_cfg()->shm_cache;
    if (forced > 0) return (size_t)forced;
    pthread_once(&caps_once, caps_read);
    if (caps.profiled) return caps.profiled;
    return caps.add_l2 && p > 0 ? caps.llc + (size_t)p * caps.l2 : caps.llc;
}
