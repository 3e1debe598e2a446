/* Cross-memory attach: single-copy transfers between a local buffer and a peer's own memory
 * (process_vm_readv/writev), and the probe that tells, at region creation, whether peers
 * may reach each other's memory at all: by CMA (ptrace access: Yama, containers and seccomp
 * may refuse it) and through /proc/<pid>/fd (what the shared heap needs). */
#define _GNU_SOURCE
#include "heap.h"
#include "shm.h"
#include "../core/config.h"
#include "../core/log.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The kernel caps one call at about 2 GiB; larger transfers take several calls. */
#define CMA_CHUNK ((size_t)1 << 30)

static int cma_xfer(pid_t pid, char *local, uintptr_t remote, size_t n, int write)
{
    size_t total = n;
    while (n) {
        size_t k = n < CMA_CHUNK ? n : CMA_CHUNK;
        struct iovec l = {local, k}, r = {(void *)remote, k};
        ssize_t done = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                             : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return MPI_ERR_OTHER; /* EPERM, ESRCH, EFAULT: the caller reports it */
        local += done;
        remote += (size_t)done;
        n -= (size_t)done;
    }
    mc_dav_bytes += 2 * (uint64_t)total;
    return MPI_SUCCESS;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds one CMA read of this process's own memory takes (HUGE_VAL when it fails): the
 * probes' measurement - straight to the kernel (never bounced), and not counted as the
 * collective's data movement. */
static double self_read_s(char *dst, const char *src, size_t n)
{
    uint64_t dav = mc_dav_bytes;
    double t0 = now_s();
    int rc = cma_xfer(getpid(), dst, (uintptr_t)src, n, 0);
    double t = now_s() - t0;
    mc_dav_bytes = dav;
    return rc == MPI_SUCCESS ? t : HUGE_VAL;
}

/* ---------------------------------------------------------------- relative alignment
 * The kernel copies with `rep movsb`, which on AMD Zen 3 (EPYC family 25, kernel 6.18) runs
 * 4-5x slower when the destination lies 1-31 bytes past the source modulo 64, as glibc's
 * memcpy does there (shm/copy.c, mc_memmove): process_vm_readv of 64 KiB 27 us against 6.4,
 * of 1 MiB 435-481 us against 92-99. Such a transfer goes through a bounce buffer placed at
 * the remote side's alignment, so the kernel copies at distance 0 and mc_memmove takes the
 * skew locally, in BOUNCE-byte pieces that stay in the L2. Only where a probe (the first such
 * transfer: this process reads its own 64 KiB at both distances, the fastest of 5) found the
 * skewed read more than twice as slow; elsewhere the bounce would only add a copy. The DAV
 * counters count such a transfer as the one copy it stands for. */
#define BOUNCE ((size_t)128 << 10)
#define BOUNCE_MIN 2048
#define BOUNCE_PROBE ((size_t)64 << 10)

/* -1 the probe's answer, 0 never, 1 always; -2 MCOLL_SHM_CMA_BOUNCE not read yet */
static _Atomic int bounce_mode = -2;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;
static int bounce_slow;        /* the probe's answer */
static __thread char *bounce_buf;
static pthread_key_t bounce_key; /* unmaps a thread's buffer when it exits */
static pthread_once_t bounce_key_once = PTHREAD_ONCE_INIT;

static void bounce_free(void *b) { munmap(b, BOUNCE + 64); }
static void bounce_key_make(void) { pthread_key_create(&bounce_key, bounce_free); }

static double probe_read(char *dst, const char *src)
{
    double best = HUGE_VAL;
    for (int k = 0; k < 5; k++) best = fmin(best, self_read_s(dst, src, BOUNCE_PROBE));
    return best;
}

static void bounce_probe(void)
{
    /* the source, a page, the destination, a page (the skewed copy ends 16 bytes into it) */
    const size_t len = 2 * BOUNCE_PROBE + 2 * 4096;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    memset(m, 1, len);
    char *dst = m + BOUNCE_PROBE + 4096;
    double aligned = probe_read(dst, m), skewed = probe_read(dst + 16, m);
    bounce_slow = skewed < HUGE_VAL && skewed > 2 * aligned;   /* a failed read says direct */
    munmap(m, len);
    if (mc_cfg()->verbose)
        mc_info("CMA of 64 KiB to a destination 16 bytes past the source: %.1f us, aligned %.1f: %s",
                skewed * 1e6, aligned * 1e6, bounce_slow ? "such transfers bounce" : "direct");
}

void mc_cma_bounce_set(int mode) { bounce_mode = mode; }

static void bounce_mode_parse(void)
{
    int mode = mc_cfg_auto_or_bool("MCOLL_SHM_CMA_BOUNCE", mc_cfg()->shm_cma_bounce), unread = -2;
    atomic_compare_exchange_strong(&bounce_mode, &unread, mode);   /* mc_cma_bounce_set wins */
}

int mc_cma_bounces(void)
{
    static pthread_once_t parsed = PTHREAD_ONCE_INIT;
    if (bounce_mode == -2) pthread_once(&parsed, bounce_mode_parse);
    if (bounce_mode >= 0) return bounce_mode;
    pthread_once(&bounce_once, bounce_probe);
    return bounce_slow;
}

static int is_skewed(const char *local, uintptr_t remote, size_t n, int write)
{
    uintptr_t l = (uintptr_t)local;
    return n >= BOUNCE_MIN && (write ? mc_movsb_skewed(remote, l) : mc_movsb_skewed(l, remote));
}

static int cma_bounced(pid_t pid, char *local, uintptr_t remote, size_t n, int write)
{
    if (!bounce_buf) {
        void *m = mmap(NULL, BOUNCE + 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return cma_xfer(pid, local, remote, n, write);
        bounce_buf = m;   /* kept for the thread's life: 128 KiB */
        pthread_once(&bounce_key_once, bounce_key_make);
        pthread_setspecific(bounce_key, m);
    }
    char *b = bounce_buf + (remote & 63);   /* the kernel's copy at distance 0 */
    for (size_t off = 0; off < n; off += BOUNCE) {
        size_t k = n - off < BOUNCE ? n - off : BOUNCE;
        if (write) mc_memmove(b, local + off, k);
        int rc = cma_xfer(pid, b, remote + off, k, write);
        if (rc != MPI_SUCCESS) return rc;
        if (!write) mc_memmove(local + off, b, k);   /* mc_memmove counts no DAV */
    }
    return MPI_SUCCESS;
}

static int cma_move(pid_t pid, char *local, uintptr_t remote, size_t n, int write)
{
    if (is_skewed(local, remote, n, write) && mc_cma_bounces())
        return cma_bounced(pid, local, remote, n, write);
    return cma_xfer(pid, local, remote, n, write);
}

int mc_cma_read(pid_t pid, void *dst, const void *remote_src, size_t n)
{
    return cma_move(pid, dst, (uintptr_t)remote_src, n, 0);
}

int mc_cma_write(pid_t pid, void *remote_dst, const void *src, size_t n)
{
    return cma_move(pid, (char *)src, (uintptr_t)remote_dst, n, 1);
}

/* ---------------------------------------------------------------- Yama
 * Under Yama's ptrace_scope 1 (Ubuntu's default) a process may attach to another, and so use
 * CMA on it, only when it is that process's ancestor or the process named it (PR_SET_PTRACER):
 * ranks started side by side by the launcher could not reach each other. So before the probe
 * every rank lets any process of its user attach (PR_SET_PTRACER_ANY), as Open MPI's own CMA
 * transport does for its ranks; unless MCOLL_SHM_PTRACER=0 or MCOLL_SHM_PATH rules CMA out.
 * Scope 0 needs nothing; under 2 and 3 nothing helps (the probe then finds CMA refused). */
#define YAMA_SCOPE "/proc/sys/kernel/yama/ptrace_scope"

int mc_cma_allow_peers(const char *scope_file)
{
    FILE *f = fopen(scope_file, "r");
    int scope = -1;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1) scope = -1;
        fclose(f);
    }
    if (scope != 1) return 0;
    return prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0 ? 1 : -errno;
}

static void allow_peers_once(void)
{
    int rc = mc_cma_allow_peers(YAMA_SCOPE);
    if (rc && mc_cfg()->verbose)
        mc_info("Yama ptrace_scope 1: %s", rc > 0 ? "this rank lets its peers attach (CMA)" : strerror(-rc));
}

/* ---------------------------------------------------------------- probe */
/* A word only this process holds: a peer that reads it through pids[j] knows it reached
 * the right process (not a namesake pid in another pid namespace). */
static _Atomic uint64_t probe_word;

static uint64_t nonce(void)
{
    uint64_t v = atomic_load(&probe_word), x = 0;
    if (v) return v;
    if (getrandom(&x, sizeof x, GRND_NONBLOCK) != (ssize_t)sizeof x) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        x = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
    }
    x |= 1;
    atomic_compare_exchange_strong(&probe_word, &v, x);
    return atomic_load(&probe_word);
}

typedef struct {
    uint64_t addr, word;   /* CMA: where the word is, and its value */
    uint64_t ino;          /* heap: a fresh memfd's inode, opened by peers via /proc */
    int64_t fd;
} probe_t;

static int cma_peer_ok(pid_t pid, const probe_t *pr)
{
    uint64_t v = 0;
    struct iovec l = {&v, sizeof v}, r = {(void *)(uintptr_t)pr->addr, sizeof v};
    return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof v && v == pr->word;
}

static int fd_peer_ok(pid_t pid, const probe_t *pr)
{
    char path[64];
    struct stat st;
    if (pr->fd < 0) return 0;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, (int)pr->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return 0;
    int ok = fstat(fd, &st) == 0 && (uint64_t)st.st_ino == pr->ino;
    close(fd);
    return ok;
}

int mc_cma_probe(mc_shm_t *sh, MPI_Comm node_comm)
{
    static pthread_once_t yama = PTHREAD_ONCE_INIT;
    mc_path_t path = mc_shm_path();
    if (mc_cfg()->shm_ptracer && (path == MC_PATH_AUTO || path == MC_PATH_CMA))
        pthread_once(&yama, allow_peers_once);
    probe_t mine = {.addr = (uintptr_t)&probe_word, .word = nonce(), .fd = -1};
    probe_t all[sh->p];
    int ok[2] = {1, 1}, all_ok[2] = {0, 0};
    struct stat st;
    int fd = memfd_create("mcoll-probe", MFD_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0) {
        mine.fd = fd;
        mine.ino = (uint64_t)st.st_ino;
    }
    int rc = PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, node_comm);
    for (int j = 0; rc == MPI_SUCCESS && j < sh->p; j++) {
        if (j == sh->r) continue;
        if (ok[0] && !cma_peer_ok(sh->pids[j], &all[j])) ok[0] = 0;
        if (ok[1] && !fd_peer_ok(sh->pids[j], &all[j])) ok[1] = 0;
    }
    if (rc != MPI_SUCCESS) ok[0] = ok[1] = 0;
    /* once this returns on any rank, every peer has finished opening our memfd */
    if (PMPI_Allreduce(ok, all_ok, 2, MPI_INT, MPI_MIN, node_comm) != MPI_SUCCESS) all_ok[0] = all_ok[1] = 0;
    if (fd >= 0) close(fd);
    if (!all_ok[1]) mc_heap_forbid_sharing();
    return all_ok[0];
}

/* ---------------------------------------------------------------- rate of a posted buffer */
/* CMA pins the remote buffer's pages one by one: process_vm_readv of 4 MiB moved 10-13 GB/s
 * from 4 KiB pages on this VM and 27-29 GB/s from transparent huge pages (the local side's
 * pages made no difference), against memcpy's 41-46 GB/s. From 4 KiB pages the pipes' two
 * copies through the region beat it (the data movers stage), from huge pages CMA wins.
 * Whether the kernel backs a buffer with huge pages shows nowhere cheap (smaps walks every
 * mapping), so the owner of a posted buffer measures it: CMA reads of CMA_PROBE bytes from
 * its middle against the same from a reference of 4 KiB pages, interleaved, the fastest of
 * three each; fast when it takes less than CMA_FAST_RATIO of the reference's time (256 KiB
 * here, 8 runs, two of them sharing one core: huge pages 0.45-0.64, 9.3-17 us; 4 KiB pages
 * 0.86-1.19, 23-41 us; a plain copy as the reference varied 5-19 us between runs, which
 * blurred the two). Preemption only adds time, to either side: a noisy probe may say slow,
 * which is the old behaviour. Results are kept per address range (an application
 * reuses its buffers) and measured again every MC_CMA_RECHECK-th use (a range freed and mapped
 * anew may be backed differently). */
#define CMA_PROBE ((size_t)256 << 10)
#define CMA_FAST_RATIO 0.75
static struct { uintptr_t lo, hi; unsigned uses; int fast; uint64_t tick; } cma_ranges[MC_CMA_RANGES];
static uint64_t cma_tick;
static char *cma_ref, *cma_dst;   /* CMA_PROBE each: the reference (4 KiB pages), the target */
static pthread_mutex_t cma_lock = PTHREAD_MUTEX_INITIALIZER;

static int cma_measure(const char *buf, size_t len)
{
    if (!cma_ref) {
        void *m = mmap(NULL, 2 * CMA_PROBE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return 0;
        madvise(m, 2 * CMA_PROBE, MADV_NOHUGEPAGE);
        memset(m, 1, 2 * CMA_PROBE);
        cma_ref = m;
        cma_dst = cma_ref + CMA_PROBE;
    }
    size_t n = len < CMA_PROBE ? len : CMA_PROBE;
    const char *src = buf + (len - n) / 2;
    double t = HUGE_VAL, ref = HUGE_VAL;
    for (int k = 0; k < 3; k++) {
        ref = fmin(ref, self_read_s(cma_dst, cma_ref, n));
        t = fmin(t, self_read_s(cma_dst, src, n));
    }
    return t < CMA_FAST_RATIO * ref;
}

static int (*cma_measure_fn)(const char *, size_t) = cma_measure;

void mc_cma_measure_set(int (*fn)(const char *buf, size_t len))
{
    pthread_mutex_lock(&cma_lock);
    cma_measure_fn = fn ? fn : cma_measure;
    pthread_mutex_unlock(&cma_lock);
}

/* MCOLL_SHM_CMA_FAST: -1 measure (auto), 0 never fast, 1 always fast. */
static int cma_mode;
static void cma_mode_parse(void) { cma_mode = mc_cfg_auto_or_bool("MCOLL_SHM_CMA_FAST", mc_cfg()->shm_cma_fast); }

int mc_cma_fast(const void *buf, size_t len)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, cma_mode_parse);
    if (cma_mode >= 0) return cma_mode;
    if (!len) return 1;
    uintptr_t lo = (uintptr_t)buf, hi = lo + len;
    pthread_mutex_lock(&cma_lock);
    int slot = 0, fast;
    for (int i = 0; i < MC_CMA_RANGES; i++) {
        if (cma_ranges[i].lo <= lo && hi <= cma_ranges[i].hi && cma_ranges[i].hi) {
            slot = i;
            goto found;
        }
        if (cma_ranges[i].tick < cma_ranges[slot].tick) slot = i;   /* least recently used */
    }
    cma_ranges[slot].lo = lo, cma_ranges[slot].hi = hi, cma_ranges[slot].uses = 0;
found:
    if (cma_ranges[slot].uses++ % MC_CMA_RECHECK == 0) cma_ranges[slot].fast = cma_measure_fn(buf, len);
    cma_ranges[slot].tick = ++cma_tick;
    fast = cma_ranges[slot].fast;
    pthread_mutex_unlock(&cma_lock);
    return fast;
}
