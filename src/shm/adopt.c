/* Adoption (MCOLL_SHM_ADOPT): zero copy for ordinary malloc buffers that keep coming back.
 *
 * Without the shared heap every byte of another rank's buffer crosses address spaces by a
 * copy (CMA, or through the region). A buffer posted again and again can instead move, once,
 * into shared memory at the same address: its pages are copied into a fresh memfd mapped
 * MAP_FIXED | MAP_SHARED over them, after which peers reach it as they reach the heap
 * (/proc/<pid>/fd, a plain load) and the process sees the same bytes at the same address.
 * Registration caches of RDMA MPIs keep pinned buffers on the same bet. Costs: the copy and
 * a page fault per 4 KiB page (3.5-3.9 ms per MiB on this VM, about 100-200 calls of
 * saved CMA), paid at the MCOLL_SHM_ADOPT-th post of the buffer.
 *
 * Soundness rests on three rules:
 * - Only whole blocks of glibc's mmap'd chunks are adopted (malloc of 128 KiB or more: a
 *   mapping of their own; the header says so), and only when the post covers the block: no
 *   other object shares the pages, so nothing else (another thread, a pending receive) can
 *   write them during the copy.
 * - Every post of an adopted range first checks that it is still this memfd's mapping: a post
 *   that starts in the block's first page (a block's own) flips a word of glibc's header
 *   through a second mapping of the memfd's first page and must see it at the block (no
 *   system call, probe_ours); any other asks /proc/self/map_files/<lo>-<hi> whether it names
 *   the memfd (about 3 us). A block freed (glibc unmaps it) or moved by realloc fails either,
 *   a mapping split by mprotect or madvise the second; the adoption is dropped, the buffer
 *   goes by CMA, and may be adopted again later.
 * - After fork() the child remaps every adopted range private (src/shm/heap.c does the same
 *   for the heap): the child's writes never reach the parent. The child finds them by name
 *   in /proc/self/maps, remnants of dropped adoptions included.
 * The memfd is sparse and 1 TiB long, so a realloc that grows the mapping in place (mremap)
 * stays inside the file instead of faulting past its end.
 *
 * Peers map an adopted range on first use (MAP_POPULATE) and keep up to NPEER mappings,
 * evicting the least recently used one that no op in flight can hold (two posts old). That
 * assumes a process's collectives never overlap: under MPI_THREAD_MULTIPLE a process adopts
 * nothing, and maps its peers' adopted ranges without ever unmapping them. */
#define _GNU_SOURCE
#include "heap.h"
#include "shm.h"
#include "../core/config.h"
#include "../core/log.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE ((uintptr_t)4096)
#define NADOPT 16
#define NCAND 16
#define NPEER 64          /* peers' ranges kept mapped, unless more are in use at once */
#define FILE_LEN ((off_t)1 << 40)
#define MAPS_LINE 4608     /* a line of /proc/self/maps: addresses, flags and a path */
#define RETRY_USES 1024   /* a buffer found not adoptable is looked at again after this */

typedef struct {
    uintptr_t lo, hi;     /* the mapping, page aligned; hi 0 = free entry */
    volatile size_t *alias; /* the memfd's first page mapped a second time (probe_ours) */
    int fd;
    uint64_t id;
    char link[96];        /* what /proc/self/map_files shows for it */
} adopted_t;

typedef struct {
    uintptr_t buf;
    size_t len;
    unsigned long uses, next;  /* adopted (tried) at the `next`-th use */
    uint64_t tick;
} cand_t;

typedef struct {
    pid_t pid;
    uint64_t id;
    char *base;           /* NULL = free entry */
    size_t len;
    uint64_t stamp;       /* epoch of its last translation */
} peer_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static adopted_t own[NADOPT];
static cand_t cand[NCAND];
static peer_t *peer;            /* npeer entries, at least NPEER once any was mapped */
static int npeer;
static uint64_t tick, seq, nonce_word;
static unsigned misses;
static unsigned long made;       /* adoptions since the start (mc_adopt_counts) */
static int broken;               /* the map_files check failed on a fresh adoption: off for good */
static _Atomic uint64_t epoch;   /* posts by this process (mc_adopt_tick) */
static pid_t owner_pid;          /* the process whose adoptions `own` holds */

uint64_t mc_adopt_id(int fd, uint64_t ino)
{
    return MC_HEAP_ID_BIT | MC_ADOPT_ID_BIT | ((ino & 0x3fffffffull) << 32) | (uint32_t)fd;
}

/* Whether this process's collectives may overlap: MPI_THREAD_MULTIPLE, or no MPI_Init (MPI
 * sessions alone, whose thread levels this does not follow). */
static int overlapping(void)
{
    static _Atomic int inited;
    if (!atomic_load_explicit(&inited, memory_order_relaxed)) {
        int init = 0;
        PMPI_Initialized(&init);
        if (!init) return 1;
        atomic_store_explicit(&inited, 1, memory_order_relaxed);
    }
    return mc_threads_multiple();
}

/* 1 when this process may adopt: enabled, and its collectives never overlap. */
static int usable(void)
{
    return mc_cfg()->shm_adopt > 0 && !broken && !overlapping();
}

void mc_adopt_tick(void) { atomic_fetch_add_explicit(&epoch, 1, memory_order_relaxed); }

/* ---------------------------------------------------------------- owner: checks */
/* Whether [lo, hi) is still exactly this memfd's mapping (a system call, about 3 us). */
static int still_ours(const adopted_t *a)
{
    char path[64], link[sizeof a->link];
    snprintf(path, sizeof path, "/proc/self/map_files/%lx-%lx", (unsigned long)a->lo, (unsigned long)a->hi);
    ssize_t k = readlink(path, link, sizeof link);
    return k > 0 && (size_t)k == strlen(a->link) && !memcmp(link, a->link, (size_t)k);
}

/* Whether lo's page is still the memfd's first page, without a system call: a word flipped
 * through the alias must show at lo. Only where lo's page is known to be mapped (it holds
 * the post's first byte). The word is glibc's prev_size of the block (0 for a plain block),
 * which only free and realloc of this very block read, never during a call that uses it. A
 * block freed, or moved by realloc, leaves another page there: the flip does not show. Grown
 * or shrunk in place (mremap) it is still this file at the same offsets, and peers map the
 * file as they find it; a program that maps over part of its own malloc block is not. */
static int probe_ours(const adopted_t *a)
{
    const volatile size_t *at = (const volatile size_t *)a->lo;
    size_t v = a->alias[0];
    a->alias[0] = ~v;
    atomic_thread_fence(memory_order_seq_cst);
    int same = at[0] == ~v;
    a->alias[0] = v;
    atomic_thread_fence(memory_order_seq_cst);
    return same;
}

/* The check for a post that starts at b inside a. */
static int ours_for(const adopted_t *a, uintptr_t b)
{
    return b - a->lo < PAGE ? probe_ours(a) : still_ours(a);
}

/* The mapping of /proc/self/maps that holds [lo, hi): 1 when one private anonymous
 * read-write mapping (no name) holds it all; *vlo gets that mapping's start. */
static int anon_private(uintptr_t lo, uintptr_t hi, uintptr_t *vlo)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return 0;
    char line[MAPS_LINE];
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long s, e, off, ino;
        char perm[8], dev[16];
        int n = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &s, &e, perm, &off, dev, &ino, &n) < 6) continue;
        if (lo < s || lo >= e) continue;
        const char *name = line + n;
        ok = hi <= e && !strcmp(perm, "rw-p") && ino == 0 && (*name == '\n' || *name == 0);
        *vlo = s;
        break;
    }
    fclose(f);
    return ok;
}

/* The 16 bytes before b: glibc's chunk header, or another allocator's (a sanitizer's
 * allocator poisons them: not an error here, a reading of what is there). */
__attribute__((no_sanitize_address)) static void read_header(uintptr_t b, size_t hdr[2])
{
    const volatile size_t *h = (const volatile size_t *)(b - 16);
    hdr[0] = h[0];
    hdr[1] = h[1];
}

/* [*lo, *hi): the whole mapping of the glibc mmap'd chunk whose user block starts at b, when
 * [b, b + len) covers that block but for the slack of its last page. Then the pages hold
 * the post and glibc's header alone: no other buffer (another thread's, or one a pending
 * receive may still fill) changes under the copy. */
static int glibc_block(uintptr_t b, size_t len, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t vlo = 0;
    if (b < PAGE || b % 16 || !anon_private(b - 16, b + len, &vlo)) return 0;
    size_t hdr[2];   /* prev_size (a memalign'd block's lead), size | IS_MMAPPED (2) */
    read_header(b, hdr);
    size_t sz = hdr[1] & ~(size_t)7;
    if ((hdr[1] & 7) != 2 || hdr[0] >= PAGE || (b - 16 - hdr[0]) % PAGE || (hdr[0] + sz) % PAGE) return 0;
    *lo = b - 16 - hdr[0];
    *hi = *lo + hdr[0] + sz;
    if (*lo < vlo || b + len > *hi || *hi - (b + len) >= PAGE) return 0;
    return anon_private(*lo, *hi, &vlo);
}

/* ---------------------------------------------------------------- owner: adopt, drop */
static pid_t self(void)
{
    if (!owner_pid) owner_pid = getpid();
    return owner_pid;
}

static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void);
static void at_fork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }
/* Before this process first holds an adopted mapping (its own or a peer's). */
static void watch_fork(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, at_fork);
}

static void fail(const char *what, uintptr_t lo, int e)
{
    mc_warn("%s [%#lx, ...): %s", what, (unsigned long)lo, strerror(e));
    abort();
}

static int adopt(uintptr_t lo, uintptr_t hi, adopted_t *a)
{
    watch_fork();
    if (!nonce_word && getrandom(&nonce_word, sizeof nonce_word, GRND_NONBLOCK) != sizeof nonce_word)
        nonce_word = (uint64_t)(uintptr_t)&nonce_word ^ (uint64_t)tick;
    char name[64];
    snprintf(name, sizeof name, "mcoll-adopt-%d-%llu-%08x", (int)self(), (unsigned long long)++seq,
             (unsigned)nonce_word);
    int fd = memfd_create(name, MFD_CLOEXEC);
    struct stat st;
    if (fd < 0) return -1;
    size_t n = hi - lo;
    char *t = MAP_FAILED;
    if (fstat(fd, &st) == 0 && ftruncate(fd, FILE_LEN) == 0)
        t = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (t == MAP_FAILED) {
        close(fd);
        return -1;
    }
    memcpy(t, (const void *)lo, n);
    int rw = PROT_READ | PROT_WRITE;
    if (mmap((void *)lo, n, rw, MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) == MAP_FAILED) {
        /* the old pages may be gone already: a private copy goes back in their place */
        int e = errno;
        if (mmap((void *)lo, n, rw, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
            fail("adoption failed and its pages could not be restored: range", lo, e);
        memcpy((void *)lo, t, n);
        munmap(t, n);
        close(fd);
        return -1;
    }
    if (n > PAGE) munmap(t + PAGE, n - PAGE);   /* the first page stays: the probe's alias */
    *a = (adopted_t){.lo = lo, .hi = hi, .alias = (volatile size_t *)t, .fd = fd,
                     .id = mc_adopt_id(fd, (uint64_t)st.st_ino)};
    snprintf(a->link, sizeof a->link, "/memfd:%s (deleted)", name);
    if (!still_ours(a)) {
        /* the check cannot see it (a kernel without map_files?): never adopt again. The range
         * stays shared memory, which the process cannot tell from its own (fork: see below). */
        if (mc_cfg()->verbose) mc_info("adoption off: /proc/self/map_files does not show adopted ranges");
        broken = 1;
        munmap(t, PAGE);
        close(fd);
        a->hi = 0;
        return -1;
    }
    return 0;
}

/* Whether some mapping of this process still shows a's memfd (a remnant after mprotect). */
static int mapped_anywhere(const adopted_t *a)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return 1;
    char line[MAPS_LINE];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, a->link) != NULL;
    fclose(f);
    return found;
}

/* The range is not (wholly) this memfd's mapping any more: its pages go back to the system
 * unless some part is still mapped here. */
static void drop(adopted_t *a)
{
    munmap((void *)a->alias, PAGE);
    if (!mapped_anywhere(a)) fallocate(a->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, FILE_LEN);
    close(a->fd);
    a->hi = 0;
}

/* An unused entry of `own`; when all are taken, the ones whose range is gone are dropped
 * first (a check each: a few us against the adoption's milliseconds). */
static adopted_t *free_slot(void)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < NADOPT; i++) {
            if (!own[i].hi) return &own[i];
            if (pass && !still_ours(&own[i])) {
                drop(&own[i]);
                return &own[i];
            }
        }
    return NULL;
}

static cand_t *cand_of(uintptr_t b, size_t len)
{
    cand_t *old = &cand[0];
    for (int i = 0; i < NCAND; i++) {
        if (cand[i].buf == b && cand[i].len == len) return &cand[i];
        if (cand[i].tick < old->tick) old = &cand[i];
    }
    *old = (cand_t){.buf = b, .len = len, .next = (unsigned long)mc_cfg()->shm_adopt};
    return old;
}

int mc_adopt_lookup(const void *buf, size_t len, uint64_t *id, int64_t *off)
{
    if (len < MC_ADOPT_MIN || !usable()) return 0;
    uintptr_t b = (uintptr_t)buf;
    int hit = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < NADOPT && !hit; i++) {
        adopted_t *a = &own[i];
        if (!a->hi || b < a->lo || b + len > a->hi) continue;
        if (!ours_for(a, b)) {
            drop(a);
            continue;
        }
        *id = a->id;
        *off = (int64_t)(b - a->lo);
        hit = 1;
    }
    if (!hit) {
        /* one other adoption checked every 16th miss: a freed block's pages are not held for
         * long once the program posts other buffers, which pay a check (3 us) rarely */
        adopted_t *o = misses++ % 16 ? NULL : &own[misses / 16 % NADOPT];
        if (o && o->hi && !still_ours(o)) drop(o);
        cand_t *c = cand_of(b, len);
        c->tick = ++tick;
        uintptr_t lo, hi;
        adopted_t *slot = NULL;
        if (++c->uses >= c->next) {
            c->next = c->uses + RETRY_USES;   /* not adoptable, or no room: not every post */
            double t0 = mc_cfg()->verbose ? PMPI_Wtime() : 0;
            if ((slot = free_slot()) && glibc_block(b, len, &lo, &hi) && adopt(lo, hi, slot) == 0) {
                if (mc_cfg()->verbose)
                    mc_info("adopted the malloc block at %p (%zu bytes) in %.0f us", (void *)b,
                            (size_t)(hi - lo), 1e6 * (PMPI_Wtime() - t0));
                *id = slot->id;
                *off = (int64_t)(b - lo);
                hit = 1;
                made++;
                c->buf = 0;
                c->tick = 0;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return hit;
}

/* ---------------------------------------------------------------- peers */
/* A free entry for a new mapping: beyond NPEER the least recently used one that no op in
 * flight can hold (not translated since the last two posts) is unmapped; when none is (more
 * adopted posts in one op than NPEER, or MPI_THREAD_MULTIPLE, where ops overlap) the table
 * grows: a translation never fails for want of room, since every rank has counted on it. */
static peer_t *peer_slot(void)
{
    uint64_t now = atomic_load_explicit(&epoch, memory_order_relaxed);
    peer_t *v = NULL;
    for (int i = 0; i < npeer; i++) {
        if (!peer[i].base) return &peer[i];
        if (peer[i].stamp + 2 < now && (!v || peer[i].stamp < v->stamp)) v = &peer[i];
    }
    if (v && npeer >= NPEER && !overlapping()) {
        munmap(v->base, v->len);
        v->base = NULL;
        return v;
    }
    int n = npeer ? 2 * npeer : NPEER;
    peer_t *t = realloc(peer, sizeof *t * (size_t)n);
    if (!t) return NULL;
    memset(t + npeer, 0, sizeof *t * (size_t)(n - npeer));
    peer = t;
    v = &peer[npeer];
    npeer = n;
    return v;
}

void *mc_adopt_translate(pid_t pid, uint64_t id, int64_t off, size_t len)
{
    if (off < 0) return NULL;   /* whatever this process's own settings: its peers posted it */
    size_t need = ((size_t)off + len + PAGE - 1) / PAGE * PAGE;
    char *r = NULL;
    pthread_mutex_lock(&lock);
    uint64_t now = atomic_load_explicit(&epoch, memory_order_relaxed);
    if (pid == self()) {
        for (int i = 0; i < NADOPT && !r; i++)
            if (own[i].hi && own[i].id == id && need <= own[i].hi - own[i].lo) r = (char *)own[i].lo + off;
    } else {
        for (int i = 0; i < npeer && !r; i++)
            if (peer[i].base && peer[i].pid == pid && peer[i].id == id && peer[i].len >= need) {
                peer[i].stamp = now;
                r = peer[i].base + off;
            }
        peer_t *s = r ? NULL : peer_slot();
        if (s) watch_fork();
        if (s && (s->base = mc_heap_map_id(pid, id, need, NULL))) {
            *s = (peer_t){.pid = pid, .id = id, .base = s->base, .len = need, .stamp = now};
            r = s->base + off;
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}

/* ---------------------------------------------------------------- fork */
/* In the child every mapping of an adopted memfd (this process's, remnants included, and the
 * peers' it mapped) is still shared with its owner: ours become private copies, the peers'
 * go. Registered at the first adoption. */
static void fork_child(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return;
    struct { uintptr_t s, e; int prot, mine; } r[256];
    int n = 0;
    char line[MAPS_LINE], mine[40];
    snprintf(mine, sizeof mine, "/memfd:mcoll-adopt-%d-", (int)owner_pid);
    while (n < 256 && fgets(line, sizeof line, f)) {
        unsigned long s, e;
        char perm[8];
        if (sscanf(line, "%lx-%lx %7s", &s, &e, perm) != 3 || !strstr(line, "/memfd:mcoll-adopt-")) continue;
        r[n].s = s;
        r[n].e = e;
        r[n].prot = (perm[0] == 'r' ? PROT_READ : 0) | (perm[1] == 'w' ? PROT_WRITE : 0) |
                    (perm[2] == 'x' ? PROT_EXEC : 0);
        r[n].mine = owner_pid && strstr(line, mine) != NULL;
        n++;
    }
    fclose(f);
    for (int i = 0; i < n; i++) {
        size_t len = r[i].e - r[i].s;
        void *p = (void *)r[i].s;
        if (!r[i].mine) {
            munmap(p, len);
            continue;
        }
        void *t = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (t == MAP_FAILED || mprotect(p, len, r[i].prot | PROT_READ) != 0) {
            mc_warn("fork: an adopted range stays shared with the parent");
            continue;
        }
        memcpy(t, p, len);
        int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
        if (mmap(p, len, PROT_READ | PROT_WRITE, flags, -1, 0) == MAP_FAILED)
            fail("fork: an adopted range could not be made private", r[i].s, errno);
        memcpy(p, t, len);
        mprotect(p, len, r[i].prot);
        munmap(t, len);
    }
    for (int i = 0; i < NADOPT; i++)
        if (own[i].hi) close(own[i].fd);
    memset(own, 0, sizeof own);
    memset(cand, 0, sizeof cand);
    free(peer);
    peer = NULL;
    npeer = 0;
    owner_pid = 0;
    made = 0;
    pthread_mutex_init(&lock, NULL);
}

void mc_adopt_counts(int *owned, int *peers, unsigned long *made_out)
{
    pthread_mutex_lock(&lock);
    *owned = *peers = 0;
    *made_out = made;
    for (int i = 0; i < NADOPT; i++) *owned += own[i].hi != 0;
    for (int i = 0; i < npeer; i++) *peers += peer[i].base != NULL;
    pthread_mutex_unlock(&lock);
}
