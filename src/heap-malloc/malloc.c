/* libmcoll-malloc.so: malloc() for every program, serving blocks of MCOLL_MALLOC_MIN bytes and
 * more (64 KiB) from the node-shared heap, so the buffers an unmodified MPI program passes to
 * its collectives take the zero-copy paths (the effect Process-in-Process gets from one
 * shared address space). Smaller blocks, and whatever the heap cannot serve, come from glibc.
 *
 * Preloaded after libmcoll.so (LD_PRELOAD="libmcoll.so libmcoll-malloc.so"); built apart so
 * that libmcoll itself never replaces the allocator. glibc calls malloc, free, calloc and
 * realloc through its PLT, so its own functions use these too. free() tells the two kinds of
 * block apart by address: a lock-free range check over the heap's segments.
 *
 * Reentrancy: the heap's bookkeeping (extents, block table, configuration, log lines) itself
 * allocates. A thread-local flag sends those nested calls to glibc. */
#define _GNU_SOURCE
#include "mcoll.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);
size_t mc_heap_malloc_min(void); /* libmcoll: MCOLL_MALLOC_MIN, 0 when the heap is off */

static __thread int busy __attribute__((tls_model("initial-exec")));

/* MCOLL_MALLOC_MIN + 1, 0 until known: the configuration is read once, so every small malloc
 * after the first is decided here without a call into libmcoll. */
static _Atomic size_t min_plus1;

/* A heap block of n bytes aligned to align (0: the heap's 64 bytes), or NULL: glibc's turn. */
static void *heap_get(size_t n, size_t align)
{
    if (busy) return NULL;
    size_t m = atomic_load_explicit(&min_plus1, memory_order_relaxed);
    if (!m) {
        busy = 1;
        m = mc_heap_malloc_min() + 1;
        busy = 0;
        atomic_store_explicit(&min_plus1, m, memory_order_relaxed);
    }
    if (m == 1 || n < m - 1) return NULL;
    busy = 1;
    void *p = mcoll_malloc_aligned(n, align);
    busy = 0;
    return p;
}

static size_t heap_size(const void *p)
{
    if (busy || !p) return 0;   /* nested calls never see heap blocks: bookkeeping is glibc's */
    busy = 1;
    size_t n = mcoll_heap_size(p);
    busy = 0;
    return n;
}

static void heap_put(void *p)
{
    busy = 1;
    mcoll_free(p);
    busy = 0;
}

void *malloc(size_t n)
{
    void *p = heap_get(n, 0);
    return p ? p : __libc_malloc(n);
}

void free(void *p)
{
    if (heap_size(p)) heap_put(p);
    else __libc_free(p);
}

void *calloc(size_t n, size_t m)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, m, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = heap_get(bytes, 0);
    if (!p) return __libc_calloc(n, m);
    return memset(p, 0, bytes);   /* a reused block holds old data */
}

/* glibc's usable size of one of its blocks (the symbol itself is replaced below). */
static size_t libc_usable(void *p)
{
    static size_t (*fn)(void *);
    if (!fn) fn = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    return fn ? fn(p) : 0;
}

void *realloc(void *p, size_t n)
{
    if (!p) return malloc(n);
    size_t old = heap_size(p);
    if (!old) {
        /* a glibc block grown past the threshold moves to the heap */
        void *q = heap_get(n, 0);
        if (!q) return __libc_realloc(p, n);
        size_t have = libc_usable(p);
        memcpy(q, p, have < n ? have : n);
        __libc_free(p);
        return q;
    }
    if (n == 0) {   /* glibc frees and returns NULL */
        heap_put(p);
        return NULL;
    }
    if (n <= old) return p;
    void *q = malloc(n);
    if (!q) return NULL;   /* p stays valid, as realloc promises */
    memcpy(q, p, old);
    heap_put(p);
    return q;
}

void *reallocarray(void *p, size_t n, size_t m)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, m, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, bytes);
}

size_t malloc_usable_size(void *p)
{
    size_t n = heap_size(p);
    return n ? n : p ? libc_usable(p) : 0;
}

/* Aligned blocks: the heap serves alignments up to 2 MiB (it declines larger ones). */
static void *aligned(size_t align, size_t n)
{
    void *p = heap_get(n, align);
    return p ? p : __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    void *p = aligned(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (!align || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(align, n);
}

void *memalign(size_t align, size_t n)
{
    if (align & (align - 1)) {   /* glibc rounds up; so do we */
        size_t a = 1;
        while (a < align) a <<= 1;
        align = a;
    }
    return aligned(align, n);
}
