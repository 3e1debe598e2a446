/* Cross-memory attach: single-copy transfers between a local buffer and a peer's own memory
 * (process_vm_readv/writev), and the probe that tells, at region creation, whether peers
 * may reach each other's memory at all: by CMA (ptrace access: Yama, containers and seccomp
 * may refuse it) and through /proc/<pid>/fd (what the shared heap needs). */
#define _GNU_SOURCE
#include "heap.h"
#include "shm.h"
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
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

int mc_cma_read(pid_t pid, void *dst, const void *remote_src, size_t n)
{
    return cma_xfer(pid, dst, (uintptr_t)remote_src, n, 0);
}

int mc_cma_write(pid_t pid, void *remote_dst, const void *src, size_t n)
{
    return cma_xfer(pid, (char *)src, (uintptr_t)remote_dst, n, 1);
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
