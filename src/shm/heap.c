/* The node-shared heap behind mcoll_malloc and MPI_Alloc_mem.
 *
 * Each process owns up to MAXSEG segments: an anonymous memfd, sized to MCOLL_HEAP_SIZE and
 * mapped once. A memfd is sparse (pages exist only once touched) and leaves nothing in
 * /dev/shm. A peer maps a segment once through /proc/<owner>/fd/<fd> and keeps the mapping
 * for the life of the process, so a buffer posted from the heap is reached by a plain load.
 *
 * The allocator's metadata lives in private memory only (free extents per segment, a hash
 * of live blocks): a stray write by a peer into the shared pages can corrupt data, never the
 * allocator. First fit over address-ordered free extents, coalesced on free. Freed pages stay
 * backed up to MCOLL_HEAP_RETAIN bytes (a program that frees and allocates a large buffer
 * every iteration must not take a page fault per page each time: 10 us per 4 KiB page on one
 * VM measured here); beyond that, whole free runs go back to the system (hole punching).
 *
 * libmcoll-malloc.so (src/heap-malloc) serves large malloc()s from here too, so a forked child
 * may hold heap blocks: it keeps its parent's segments, remapped private (see fork_child).
 *
 * Nothing here calls MPI: the heap works before MPI_Init and in tests without a launcher. */
#define _GNU_SOURCE
#include "heap.h"
#include "shm.h"
#include "../core/config.h"
#include "../core/log.h"
#include "mcoll.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXSEG 64
#define PAGE ((size_t)4096)
#define BIG ((size_t)64 << 10)        /* blocks from this size are whole, aligned pages */
#define PUNCH_MIN ((size_t)64 << 10)  /* smaller free runs keep their pages (reuse is likely) */
#define MIN_SEG ((size_t)64 << 10)
#define SHRINK_FLOOR ((size_t)64 << 20) /* when the mapping fails, halve down to this */

typedef struct { size_t off, len; } ext_t;

typedef struct seg {
    char *base;          /* immutable once published (lock-free lookups read it) */
    size_t size;
    uint64_t id;
    int fd;
    int retired;         /* a parent's, after fork: private, never shared, punched or grown */
    ext_t *ext;          /* free extents by offset, never adjacent; under `lock` */
    size_t next, cap;
} seg_t;

typedef struct { uintptr_t addr; size_t len; int seg; } blk_t; /* addr 0 = empty slot */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static seg_t segs[MAXSEG];
static _Atomic int nseg;
static blk_t *blk;       /* live blocks: open addressing, linear probing, 3/4 max load */
static size_t blk_cap, blk_n;
static size_t kept;      /* freed bytes still backed (an estimate: allocations reuse them) */
static int blk_bits;
static _Atomic int no_share;

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* ---------------------------------------------------------------- live blocks */
static size_t blk_home(uintptr_t a)
{
    return (size_t)(((uint64_t)(a >> 6) * 0x9e3779b97f4a7c15ull) >> (64 - blk_bits));
}

static blk_t *blk_find(uintptr_t a)
{
    if (!blk_cap) return NULL;
    for (size_t i = blk_home(a);; i = (i + 1) & (blk_cap - 1)) {
        if (blk[i].addr == a) return &blk[i];
        if (!blk[i].addr) return NULL;
    }
}

static void blk_put(blk_t b)
{
    size_t i = blk_home(b.addr);
    while (blk[i].addr) i = (i + 1) & (blk_cap - 1);
    blk[i] = b;
    blk_n++;
}

/* Room for one more block, so that an allocation never fails after carving its extent. */
static int blk_reserve(void)
{
    if ((blk_n + 1) * 4 <= blk_cap * 3) return 0;
    size_t ncap = blk_cap ? 2 * blk_cap : 256;
    blk_t *old = blk, *nb = calloc(ncap, sizeof *nb);
    if (!nb) return -1;
    size_t ocap = blk_cap;
    blk = nb;
    blk_cap = ncap;
    blk_bits = 0;
    while (((size_t)1 << blk_bits) < ncap) blk_bits++;
    blk_n = 0;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].addr) blk_put(old[i]);
    free(old);
    return 0;
}

/* Backward-shift deletion: no tombstones, probe chains stay short. */
static void blk_del(blk_t *b)
{
    size_t mask = blk_cap - 1, i = (size_t)(b - blk);
    for (size_t j = (i + 1) & mask; blk[j].addr; j = (j + 1) & mask) {
        size_t k = blk_home(blk[j].addr);
        /* entry j may move to the hole i unless its home lies cyclically in (i, j] */
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            blk[i] = blk[j];
            i = j;
        }
    }
    blk[i].addr = 0;
    blk_n--;
}

/* ---------------------------------------------------------------- free extents */
static int ext_insert(seg_t *s, size_t i, ext_t e)
{
    if (s->next == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 16;
        ext_t *n = realloc(s->ext, ncap * sizeof *n);
        if (!n) return -1;
        s->ext = n;
        s->cap = ncap;
    }
    memmove(&s->ext[i + 1], &s->ext[i], (s->next - i) * sizeof *s->ext);
    s->ext[i] = e;
    s->next++;
    return 0;
}

static void ext_remove(seg_t *s, size_t i)
{
    memmove(&s->ext[i], &s->ext[i + 1], (s->next - i - 1) * sizeof *s->ext);
    s->next--;
}

/* First fit: n bytes whose address is a multiple of align. */
static int seg_alloc(seg_t *s, size_t n, size_t align, size_t *off)
{
    for (size_t i = 0; i < s->next; i++) {
        ext_t e = s->ext[i];
        size_t start = round_up((uintptr_t)s->base + e.off, align) - (uintptr_t)s->base;
        size_t pre = start - e.off;
        if (pre > e.len || e.len - pre < n) continue;
        size_t post = e.len - pre - n;
        if (pre && post) {
            if (ext_insert(s, i + 1, (ext_t){start + n, post}) != 0) return -1;
            s->ext[i].len = pre;
        } else if (pre) {
            s->ext[i].len = pre;
        } else if (post) {
            s->ext[i] = (ext_t){start + n, post};
        } else {
            ext_remove(s, i);
        }
        *off = start;
        return 0;
    }
    return -1;
}

/* Returns the pages of a freed block to the system when they are entirely free: those of
 * [off, off + n) that lie inside the coalesced extent e. */
static void seg_punch(seg_t *s, size_t off, size_t n, ext_t e)
{
    size_t lo = off / PAGE * PAGE, hi = round_up(off + n, PAGE);
    size_t elo = round_up(e.off, PAGE), ehi = (e.off + e.len) / PAGE * PAGE;
    if (lo < elo) lo = elo;
    if (hi > ehi) hi = ehi;
    if (hi <= lo || hi - lo < PUNCH_MIN) return;
    kept -= hi - lo < kept ? hi - lo : kept;
    if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo, (off_t)(hi - lo)) != 0)
        madvise(s->base + lo, hi - lo, MADV_REMOVE);
}

static void seg_free(seg_t *s, size_t off, size_t n)
{
    size_t lo = 0, hi = s->next;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->ext[mid].off < off) lo = mid + 1;
        else hi = mid;
    }
    size_t i = lo, at;
    int left = i > 0 && s->ext[i - 1].off + s->ext[i - 1].len == off;
    int right = i < s->next && off + n == s->ext[i].off;
    if (left && right) {
        s->ext[i - 1].len += n + s->ext[i].len;
        ext_remove(s, i);
        at = i - 1;
    } else if (left) {
        s->ext[i - 1].len += n;
        at = i - 1;
    } else if (right) {
        s->ext[i].off = off;
        s->ext[i].len += n;
        at = i;
    } else {
        /* out of private memory: the block stays unusable rather than corrupting the list */
        if (ext_insert(s, i, (ext_t){off, n}) != 0) return;
        at = i;
    }
    if (s->retired) return;
    kept += n;
    if (kept > (size_t)mc_cfg()->heap_retain) seg_punch(s, off, n, s->ext[at]);
}

/* ---------------------------------------------------------------- segments */
static uint64_t make_id(int fd, ino_t ino)
{
    return MC_HEAP_ID_BIT | (((uint64_t)ino & 0x3fffffffull) << 32) | (uint32_t)fd;
}

/* A new segment able to hold `need` bytes; its index, or -1. Called under `lock`. */
static int seg_new(size_t need)
{
    int n = atomic_load_explicit(&nseg, memory_order_relaxed);
    long cfg = mc_cfg()->heap_size;
    if (n == MAXSEG || cfg <= 0) return -1;
    size_t size = round_up((size_t)cfg > need ? (size_t)cfg : need, PAGE);
    if (size < MIN_SEG) size = MIN_SEG;
    int fd = memfd_create("mcoll-heap", MFD_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (mc_cfg()->verbose) mc_info("shared heap unavailable: memfd_create: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    void *m = MAP_FAILED;
    for (;;) {
        /* sparse: reserves address space only (an ulimit -v may still refuse it: shrink) */
        if (ftruncate(fd, (off_t)size) == 0)
            m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) break;
        size_t half = round_up(size / 2, PAGE);
        if (size <= SHRINK_FLOOR || half < need) {
            close(fd);
            return -1;
        }
        size = half;
    }
    seg_t *s = &segs[n];
    *s = (seg_t){.base = m, .size = size, .id = make_id(fd, st.st_ino), .fd = fd};
    if (ext_insert(s, 0, (ext_t){0, size}) != 0) {
        munmap(m, size);
        close(fd);
        return -1;
    }
    atomic_store_explicit(&nseg, n + 1, memory_order_release);
    return n;
}

/* ---------------------------------------------------------------- fork */
/* After fork() the parent's segments are still shared with the parent: the child remaps them
 * private (copy on write from the file: the child's writes never reach the parent) and
 * retires them: it may still read, realloc and free the blocks it inherited (malloc memory,
 * with libmcoll-malloc.so), but never allocates from, posts, punches or resizes them; new
 * blocks come from segments of its own. */
static pthread_mutex_t tr_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic pid_t self_pid;

static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
    pthread_mutex_lock(&tr_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&tr_lock);
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    atomic_store(&self_pid, 0);
    int n = atomic_load(&nseg);
    for (int i = 0; i < n; i++) {
        seg_t *s = &segs[i];
        if (s->retired) continue;
        s->retired = 1;
        /* NORESERVE: a private writable mapping of the whole reservation is not charged */
        if (mmap(s->base, s->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, s->fd, 0) ==
            MAP_FAILED)
            mc_warn("fork: heap segment %d stays shared with the parent: %s", i, strerror(errno));
    }
    fork_parent();
}

static void init_once(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

static pid_t me(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pid_t p = atomic_load_explicit(&self_pid, memory_order_relaxed);
    if (p) return p;
    pthread_once(&once, init_once);
    p = getpid();
    atomic_store_explicit(&self_pid, p, memory_order_relaxed);
    return p;
}

/* ---------------------------------------------------------------- allocation */
void *mc_heap_alloc(size_t size, size_t align)
{
    if (align < MC_HEAP_ALIGN) align = MC_HEAP_ALIGN;
    if ((align & (align - 1)) || align > MC_HEAP_MAX_ALIGN || size > (SIZE_MAX >> 2)) return NULL;
    size_t n = round_up(size ? size : 1, MC_HEAP_ALIGN), off = 0;
    if (n >= BIG) {
        n = round_up(n, PAGE);
        if (align < PAGE) align = PAGE;
    }
    me(); /* registers the fork handlers before the first segment exists */
    void *p = NULL;
    pthread_mutex_lock(&lock);
    if (blk_reserve() != 0) goto out;
    int i, ns = atomic_load_explicit(&nseg, memory_order_relaxed);
    for (i = 0; i < ns; i++)
        if (!segs[i].retired && seg_alloc(&segs[i], n, align, &off) == 0) break;
    if (i == ns && ((i = seg_new(n + align)) < 0 || seg_alloc(&segs[i], n, align, &off) != 0)) goto out;
    p = segs[i].base + off;
    blk_put((blk_t){(uintptr_t)p, n, i});
    kept -= n < kept ? n : kept;
out:
    pthread_mutex_unlock(&lock);
    return p;
}

int mc_heap_free(void *p)
{
    pthread_mutex_lock(&lock);
    blk_t *b = p ? blk_find((uintptr_t)p) : NULL;
    if (b) {
        seg_t *s = &segs[b->seg];
        size_t off = (size_t)((char *)p - s->base), n = b->len;
        blk_del(b);
        seg_free(s, off, n);
    }
    pthread_mutex_unlock(&lock);
    return b ? 0 : -1;
}

void *mcoll_malloc(size_t size) { return mc_heap_alloc(size, 0); }
void *mcoll_malloc_aligned(size_t size, size_t align) { return mc_heap_alloc(size, align); }

/* Index of the segment (retired ones too) holding p, or -1; lock free. */
static int seg_of(const void *p)
{
    int n = atomic_load_explicit(&nseg, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if ((uintptr_t)p - (uintptr_t)segs[i].base < segs[i].size) return i;
    return -1;
}

size_t mcoll_heap_size(const void *ptr)
{
    if (!ptr || seg_of(ptr) < 0) return 0;   /* every pointer free() sees: no lock */
    pthread_mutex_lock(&lock);
    blk_t *b = blk_find((uintptr_t)ptr);
    size_t n = b ? b->len : 0;
    pthread_mutex_unlock(&lock);
    return n;
}

size_t mc_heap_malloc_min(void)
{
    const mc_config_t *c = mc_cfg();
    return c->shm && c->heap_size > 0 && c->malloc_min > 0 ? (size_t)c->malloc_min : 0;
}

void mcoll_free(void *ptr)
{
    if (ptr && mc_heap_free(ptr) != 0)
        mc_warn("mcoll_free(%p): not a block from mcoll_malloc, ignored", ptr);
}

/* ---------------------------------------------------------------- lookup */
int mc_heap_lookup_range(const void *p, size_t len, uint64_t *heap_id, int64_t *off)
{
    int i = seg_of(p);   /* segments are disjoint: the only one that can hold the range */
    if (i < 0 || segs[i].retired) return 0;
    size_t d = (size_t)((uintptr_t)p - (uintptr_t)segs[i].base);
    if (len > segs[i].size - d) return 0;
    *heap_id = segs[i].id;
    *off = (int64_t)d;
    return 1;
}

int mc_heap_lookup(const void *p, uint64_t *heap_id, int64_t *off)
{
    return mc_heap_lookup_range(p, 0, heap_id, off);
}

int mc_heap_shareable(void) { return !atomic_load_explicit(&no_share, memory_order_relaxed); }
void mc_heap_forbid_sharing(void) { atomic_store(&no_share, 1); }

/* ---------------------------------------------------------------- peers' segments */
/* Process-wide cache of mapped peer segments, keyed by (pid, heap_id). Entries are never
 * removed, so readers probe without the lock: a slot is published by its `state` store
 * (release) after its fields. A failed mapping is cached too (base NULL): no retry storms. */
#define TR_SLOTS 4096
typedef struct {
    _Atomic int state;
    pid_t pid;
    uint64_t id;
    char *base;
    size_t size;
} tr_t;
static tr_t tr[TR_SLOTS];
static size_t tr_n;

static size_t tr_home(pid_t pid, uint64_t id)
{
    uint64_t x = id ^ ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (size_t)x & (TR_SLOTS - 1);
}

static tr_t *tr_find(pid_t pid, uint64_t id, tr_t **empty)
{
    for (size_t i = tr_home(pid, id), k = 0; k < TR_SLOTS; k++, i = (i + 1) & (TR_SLOTS - 1)) {
        tr_t *t = &tr[i];
        if (!atomic_load_explicit(&t->state, memory_order_acquire)) {
            if (empty) *empty = t;
            return NULL;
        }
        if (t->pid == pid && t->id == id) return t;
    }
    return NULL;
}

/* Maps len bytes (0: the whole file, its size in *size) of the memfd that (pid, id) names, a
 * heap segment or an adopted range (adopt.c: MAP_POPULATE, its pages are in use); NULL when
 * /proc refuses or the descriptor is not that memfd any more. */
char *mc_heap_map_id(pid_t pid, uint64_t id, size_t len, size_t *size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%u", (int)pid, (unsigned)(uint32_t)id);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    char *m = NULL;
    int adopted = (id & MC_ADOPT_ID_BIT) != 0, fdn = (int)(uint32_t)id;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        id == (adopted ? mc_adopt_id(fdn, (uint64_t)st.st_ino) : make_id(fdn, st.st_ino))) {
        size_t n = len ? len : (size_t)st.st_size;
        void *r = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | (adopted ? MAP_POPULATE : 0), fd, 0);
        if (r != MAP_FAILED) {
            m = r;
            if (size) *size = n;
        }
    }
    close(fd);
    return m;
}

static tr_t *tr_get(pid_t pid, uint64_t id)
{
    tr_t *t = tr_find(pid, id, NULL), *slot = NULL;
    if (t) return t;
    pthread_mutex_lock(&tr_lock);
    t = tr_find(pid, id, &slot);
    /* a full table maps nothing more (each entry holds a mapping for good) */
    if (!t && slot && (tr_n + 1) * 4 <= TR_SLOTS * 3) {
        t = slot;
        t->pid = pid;
        t->id = id;
        t->size = 0;
        t->base = mc_heap_map_id(pid, id, 0, &t->size);
        tr_n++;
        atomic_store_explicit(&t->state, 1, memory_order_release);
    }
    pthread_mutex_unlock(&tr_lock);
    return t;
}

void *mc_heap_translate(pid_t pid, uint64_t heap_id, int64_t off, size_t len)
{
    if (!heap_id || off < 0) return NULL;
    if (heap_id & MC_ADOPT_ID_BIT) return mc_adopt_translate(pid, heap_id, off, len);
    char *base = NULL;
    size_t size = 0;
    if (pid == me()) {
        int n = atomic_load_explicit(&nseg, memory_order_acquire);
        for (int i = 0; i < n && !base; i++)
            if (segs[i].id == heap_id && !segs[i].retired) base = segs[i].base, size = segs[i].size;
    } else {
        tr_t *t = tr_get(pid, heap_id);
        if (t) base = t->base, size = t->size;
    }
    if (!base || (uint64_t)off > size || len > size - (uint64_t)off) return NULL;
    return base + off;
}

/* ---------------------------------------------------------------- checks (tests) */
static int cmp_ext(const void *a, const void *b)
{
    const ext_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static int check_seg(int si, mc_heap_stats_t *st)
{
    seg_t *s = &segs[si];
    size_t nb = 0, k = 0;
    for (size_t i = 0; i < blk_cap; i++) nb += blk[i].addr && blk[i].seg == si;
    ext_t *all = malloc((nb + s->next + 1) * sizeof *all);
    if (!all) return -1;
    for (size_t i = 0; i < blk_cap; i++)
        if (blk[i].addr && blk[i].seg == si) {
            all[k++] = (ext_t){blk[i].addr - (uintptr_t)s->base, blk[i].len};
            st->used += blk[i].len;
        }
    int bad = 0;
    for (size_t i = 0; i < s->next; i++) {
        if (i > 0 && s->ext[i - 1].off + s->ext[i - 1].len >= s->ext[i].off) bad = 1;
        if (!s->ext[i].len) bad = 1;
        all[k++] = s->ext[i];
        st->free += s->ext[i].len;
    }
    st->blocks += nb;
    st->extents += s->next;
    qsort(all, k, sizeof *all, cmp_ext);
    size_t at = 0;
    for (size_t i = 0; i < k && !bad; i++) {
        if (all[i].off != at) bad = 1;
        at = all[i].off + all[i].len;
    }
    if (at != s->size) bad = 1;
    free(all);
    return bad ? -1 : 0;
}

int mc_heap_check(mc_heap_stats_t *st)
{
    mc_heap_stats_t z = {0};
    int rc = 0;
    pthread_mutex_lock(&lock);
    z.nseg = atomic_load(&nseg);
    for (int i = 0; i < z.nseg; i++)
        if (check_seg(i, &z) != 0) rc = -1;
    if (z.blocks != blk_n) rc = -1;
    pthread_mutex_unlock(&lock);
    if (st) *st = z;
    return rc;
}
