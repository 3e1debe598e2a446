/* libmcoll-malloc.so (preloaded by the test, as a user would): malloc and friends serve blocks
 * of MCOLL_MALLOC_MIN (default 64 KiB) and more from the node-shared heap, smaller ones from
 * glibc; every entry point keeps the C semantics (contents across realloc, zeroed calloc,
 * alignment, errors), threads, freed pages kept up to MCOLL_HEAP_RETAIN, and a forked child
 * that owns private copies of its parent's blocks. */
#define _GNU_SOURCE
#include "mcoll.h"
#include "shm/heap.h"
#include "shm/shm.h"
#include "unit.h"
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The checks below read fresh blocks' addresses (not contents), use a block after a realloc
 * that failed (it stays valid) and ask for impossible sizes on purpose. */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuse-after-free"
static volatile size_t huge = SIZE_MAX / 2;

#define KB ((size_t)1 << 10)
#define MB ((size_t)1 << 20)

static unsigned char pat(unsigned tag, size_t i) { return (unsigned char)(tag * 37u + i * 13u + (i >> 9)); }
static void fill(void *p, size_t n, unsigned tag)
{
    for (size_t i = 0; i < n; i++) ((unsigned char *)p)[i] = pat(tag, i);
}
static size_t bad(const void *p, size_t n, unsigned tag)
{
    size_t b = 0;
    for (size_t i = 0; i < n; i++) b += ((const unsigned char *)p)[i] != pat(tag, i);
    return b;
}
static int in_heap(const void *p) { return mcoll_heap_size(p) > 0; }

static void test_routing(void)
{
    char *big = malloc(MB), *edge = malloc(64 * KB), *below = malloc(64 * KB - 1), *small = malloc(100);
    CHECK(big && edge && below && small, "allocations");
    CHECK(in_heap(big) && in_heap(edge), "blocks of 64 KiB and more come from the heap");
    CHECK(!in_heap(below) && !in_heap(small), "smaller blocks come from glibc");
    CHECK(malloc_usable_size(big) == mcoll_heap_size(big) && malloc_usable_size(big) >= MB, "usable size %zu",
          malloc_usable_size(big));
    CHECK(malloc_usable_size(small) >= 100, "glibc usable size");
    fill(big, MB, 1);
    fill(small, 100, 2);
    CHECK(!bad(big, MB, 1) && !bad(small, 100, 2), "contents");
    char *s = strdup("libc's own allocations");   /* glibc calls malloc through the PLT */
    CHECK(s && !strcmp(s, "libc's own allocations"), "strdup");
    free(s);
    free(big), free(edge), free(below), free(small);
    free(NULL);
}

static void test_calloc(void)
{
    size_t n = 256 * KB;
    char *p = malloc(n);
    memset(p, 0xab, n);
    free(p);
    unsigned char *q = calloc(4, n / 4);   /* first fit: very likely the same, dirty block */
    size_t nz = 0;
    for (size_t i = 0; q && i < n; i++) nz += q[i] != 0;
    CHECK(q && in_heap(q) && nz == 0, "calloc from the heap is zeroed (%zu non-zero bytes)", nz);
    free(q);
    errno = 0;
    CHECK(calloc(huge, 4) == NULL && errno == ENOMEM, "calloc overflow: NULL, ENOMEM");
}

static void test_realloc(void)
{
    char *p = malloc(100 * KB);
    fill(p, 100 * KB, 3);
    char *q = realloc(p, 300 * KB);   /* heap to a larger heap block */
    CHECK(q && in_heap(q) && !bad(q, 100 * KB, 3), "realloc grows a heap block, contents kept");
    char *r = realloc(q, 50 * KB);
    CHECK(r == q && !bad(r, 50 * KB, 3), "realloc shrinks in place");
    char *g = malloc(1000);
    fill(g, 1000, 4);
    char *h = realloc(g, 200 * KB);   /* glibc to heap */
    CHECK(h && in_heap(h) && !bad(h, 1000, 4), "realloc moves a glibc block past the threshold, contents kept");
    char *z = realloc(NULL, 100 * KB);
    CHECK(z && in_heap(z), "realloc(NULL, n) is malloc");
    CHECK(realloc(z, 0) == NULL && !in_heap(z), "realloc(p, 0) frees");
    errno = 0;
    CHECK(reallocarray(h, huge, 4) == NULL && errno == ENOMEM && !bad(h, 1000, 4),
          "reallocarray overflow: NULL, ENOMEM, block kept");
    char *k = reallocarray(h, 3, 100 * KB);
    CHECK(k && in_heap(k) && !bad(k, 1000, 4), "reallocarray grows");
    free(r), free(k);
}

static void test_aligned(void)
{
    void *p = NULL;
    CHECK(posix_memalign(&p, 4096, MB) == 0 && in_heap(p) && (uintptr_t)p % 4096 == 0, "posix_memalign 4 KiB");
    free(p);
    CHECK(posix_memalign(&p, 2 * MB, MB) == 0 && in_heap(p) && (uintptr_t)p % (2 * MB) == 0,
          "posix_memalign 2 MiB");
    free(p);
    CHECK(posix_memalign(&p, 4 * MB, MB) == 0 && !in_heap(p) && (uintptr_t)p % (4 * MB) == 0,
          "alignments above 2 MiB come from glibc");
    free(p);
    CHECK(posix_memalign(&p, 24, MB) == EINVAL && posix_memalign(&p, 2, MB) == EINVAL, "posix_memalign EINVAL");
    void *a = aligned_alloc(256, 128 * KB);
    CHECK(a && in_heap(a) && (uintptr_t)a % 256 == 0, "aligned_alloc");
    free(a);
    errno = 0;
    CHECK(aligned_alloc(3, 128 * KB) == NULL && errno == EINVAL, "aligned_alloc EINVAL");
    void *m = memalign(512, 100);
    CHECK(m && !in_heap(m) && (uintptr_t)m % 512 == 0, "small memalign from glibc");
    free(m);
    m = memalign(100, 100 * KB);   /* not a power of two: rounded up to 128 */
    CHECK(m && in_heap(m) && (uintptr_t)m % 128 == 0, "memalign rounds the alignment up");
    free(m);
}

static void *worker(void *arg)
{
    uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 7;
    struct { char *p; size_t n; unsigned tag; } live[24] = {{0}};
    long errors = 0;
    for (int op = 0; op < 3000; op++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        int i = (int)(s % 24);
        if (live[i].p) {
            errors += bad(live[i].p, live[i].n < 4096 ? live[i].n : 4096, live[i].tag) != 0;
            if (s & 64) {
                size_t n2 = (size_t)(s >> 40) % (300 * KB) + 1;
                char *q = realloc(live[i].p, n2);
                size_t keep = n2 < live[i].n ? n2 : live[i].n;
                errors += !q || bad(q, keep < 4096 ? keep : 4096, live[i].tag) != 0;
                if (q) live[i].p = q, live[i].n = keep;
            } else {
                free(live[i].p);
                live[i].p = NULL;
            }
        } else {
            size_t n = (size_t)(s >> 32) % (300 * KB) + 1;
            live[i].p = (s & 128) ? calloc(1, n) : malloc(n);
            live[i].n = n;
            live[i].tag = (unsigned)op;
            if (live[i].p) fill(live[i].p, n < 4096 ? n : 4096, live[i].tag);
            else errors++;
        }
    }
    for (int i = 0; i < 24; i++) free(live[i].p);
    return (void *)(intptr_t)errors;
}

static void test_threads(void)
{
    pthread_t t[4];
    long errors = 0;
    for (intptr_t i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        errors += (intptr_t)r;
    }
    CHECK(errors == 0, "4 threads: %ld bad blocks", errors);
}

/* Freed pages stay backed (MCOLL_HEAP_RETAIN, 128 MiB): a buffer freed and allocated again
 * takes no page faults. */
static void test_retain(void)
{
    size_t n = 4 * MB;
    char *p = malloc(n);
    uint64_t id;
    int64_t off;
    if (!p || !mc_heap_lookup(p, &id, &off)) {
        CHECK(0, "retain: setup");
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%u", (unsigned)(uint32_t)id);
    int fd = open(path, O_RDONLY);
    struct stat a, b;
    memset(p, 1, n);
    fstat(fd, &a);
    free(p);
    fstat(fd, &b);
    close(fd);
    CHECK(b.st_blocks == a.st_blocks, "a freed 4 MiB block keeps its pages (%ld -> %ld blocks)", (long)a.st_blocks,
          (long)b.st_blocks);
}

static void test_fork(void)
{
    size_t n = 2 * MB;
    char *p = malloc(n);
    fill(p, n, 5);
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        int fails = 0;
        uint64_t id;
        int64_t off;
        fails |= (bad(p, n, 5) != 0) << 0;             /* the child sees the parent's data */
        fails |= (!in_heap(p)) << 1;                   /* and still owns the block */
        fails |= (mc_heap_lookup(p, &id, &off) != 0) << 2;   /* but never posts it */
        fill(p, n, 6);                                 /* private: the parent keeps 5 */
        char *q = realloc(p, 2 * n);
        fails |= (!q || bad(q, n, 6) != 0) << 3;
        free(q);
        char *mine = malloc(MB);                       /* a segment of the child's own */
        fails |= (!mine || !mc_heap_lookup(mine, &id, &off)) << 4;
        free(mine);
        fails |= (mc_heap_check(NULL) != 0) << 5;
        _exit(fails);
    }
    int st = 0;
    waitpid(c, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "child: status %d (bits: 1 data, 2 owned, 4 posted, 8 realloc, 16 own segment, 32 invariants)",
          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    CHECK(bad(p, n, 5) == 0, "the parent's block is untouched by the child's writes");
    free(p);
}

int main(void)
{
    void *probe = malloc(MB);
    if (!in_heap(probe)) {
        printf("FAIL: malloc(1 MiB) is not from the heap: run with LD_PRELOAD=libmcoll-malloc.so\n");
        return 1;
    }
    free(probe);
    test_routing();
    test_calloc();
    test_realloc();
    test_aligned();
    test_threads();
    test_retain();
    test_fork();
    mc_heap_stats_t st;
    CHECK(mc_heap_check(&st) == 0, "heap invariants");
    CHECK(st.blocks == 0, "%zu heap blocks left after every free", st.blocks);
    return unit_summary("unit_malloc");
}
