/* The node region: one shared mapping per node communicator, created on first use.
 *
 * The leader (local rank 0) creates an anonymous memfd; the other ranks open it through
 * /proc/<leader>/fd/<n>, so the region never has a name: nothing is left in /dev/shm, even
 * when a rank is killed. Where memfd or /proc access is refused, a named POSIX segment is
 * used and unlinked as soon as every local rank has attached (a rank killed in between is
 * the only way to leave it behind). */
#define _GNU_SOURCE
#include "shm.h"
#include "../core/config.h"
#include "../core/log.h"
#include "../core/topo.h"
#include "../select/select.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

__thread uint64_t mc_dav_bytes __attribute__((tls_model("initial-exec")));
__thread uint64_t mc_nt_bytes __attribute__((tls_model("initial-exec")));
__thread uint64_t mc_sync_events __attribute__((tls_model("initial-exec")));

#define MAGIC 0x6d636f6c6c73686dULL /* "mcollshm" */

typedef struct { uint64_t magic; uint64_t len; int p; } hdr_t;

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* Layout: header line | flags [MC_NFLAGS][p] | STEP ring [p][MC_RING] (MC_STEP_SLOT bytes) |
 * posts [p][MC_NPOST] | symmetric-exchange slots [2][p] (MC_SYM_SLOT bytes) | fan-in slots
 * [MC_FAN_RING][p] (MC_FAN_SLOT bytes) | data area. */
static void layout(mc_shm_t *sh, size_t data_len)
{
    size_t off = MC_LINE;
    sh->flags = (mc_flag_t *)(sh->base + off);
    off += (size_t)MC_NFLAGS * (size_t)sh->p * sizeof(mc_flag_t);
    sh->step = sh->base + off;
    off += (size_t)MC_RING * (size_t)sh->p * MC_STEP_SLOT;
    sh->posts = (mc_post_t *)(sh->base + off);
    off = round_up(off + (size_t)sh->p * MC_NPOST * sizeof(mc_post_t), MC_LINE);
    sh->sym = (mc_xchg_t){.slots = sh->base + off, .slot = MC_SYM_SLOT, .nbuf = 2};
    off += 2 * (size_t)sh->p * MC_SYM_SLOT;
    sh->fan = (mc_xchg_t){.slots = sh->base + off, .slot = MC_FAN_SLOT, .nbuf = MC_FAN_RING};
    off = round_up(off + MC_FAN_RING * (size_t)sh->p * MC_FAN_SLOT, 4096);
    sh->data = sh->base + off;
    sh->data_len = data_len;
    sh->len = off + data_len;
}

static size_t region_len(int p, size_t data_len)
{
    mc_shm_t t = {.p = p, .base = NULL};
    layout(&t, data_len);
    return t.len;
}

/* Leader side: an anonymous memfd (named = 0), or a named POSIX segment. */
static int create_fd(size_t len, int named, char *name, size_t namelen)
{
    static int seq;
    int fd = -1;
    name[0] = 0;
    if (!named) fd = memfd_create("mcoll-node", MFD_CLOEXEC);
    else {
        snprintf(name, namelen, "/mcoll-%d-%d", (int)getpid(), ++seq);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd >= 0 && ftruncate(fd, (off_t)len) != 0) {
        close(fd);
        if (name[0]) shm_unlink(name);
        fd = -1;
    }
    return fd;
}

typedef struct { int pid, fd, ok; char name[40]; } announce_t;

/* Every rank maps the leader's segment; returns the mapping or NULL. */
static char *attach(const announce_t *an, int leader, size_t len, int own_fd)
{
    int fd = own_fd;
    if (!leader) {
        char path[64];
        if (an->name[0]) fd = shm_open(an->name, O_RDWR, 0600);
        else {
            snprintf(path, sizeof path, "/proc/%d/fd/%d", an->pid, an->fd);
            fd = open(path, O_RDWR | O_CLOEXEC);
        }
        if (fd < 0) return NULL;
    }
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (!leader) close(fd);
    return m == MAP_FAILED ? NULL : m;
}

/* Socket of every local rank, numbered in order of first appearance. */
static int build_sockets(mc_shm_t *sh, MPI_Comm node)
{
    int k = mc_cfg()->vsocket_size, mine;
    sh->sock_of = malloc(sizeof(int) * (size_t)sh->p);
    sh->sock_first = calloc((size_t)sh->p + 1, sizeof(int));
    sh->sock_rank = malloc(sizeof(int) * (size_t)sh->p);
    if (!sh->sock_of || !sh->sock_first || !sh->sock_rank) return MPI_ERR_NO_MEM;
    mine = k > 0 ? sh->r / k : mc_topo_package_of_cpu(sched_getcpu());
    int rc = PMPI_Allgather(&mine, 1, MPI_INT, sh->sock_of, 1, MPI_INT, node);
    if (rc != MPI_SUCCESS) return rc;
    int ids[sh->p], n = 0;
    for (int i = 0; i < sh->p; i++) {
        int s = 0;
        while (s < n && ids[s] != sh->sock_of[i]) s++;
        if (s == n) ids[n++] = sh->sock_of[i];
        sh->sock_of[i] = s;
    }
    sh->nsock = n;
    sh->sock = sh->sock_of[sh->r];
    int at = 0;
    for (int s = 0; s < n; s++) {
        sh->sock_first[s] = at;
        for (int i = 0; i < sh->p; i++)
            if (sh->sock_of[i] == s) sh->sock_rank[at++] = i;
    }
    sh->sock_first[n] = at;
    return MPI_SUCCESS;
}

/* Collective over the node: every rank maps the leader's segment (memfd through /proc, or
 * named). Returns the mapping, NULL on every rank when any rank failed. */
static int map_region(mc_ctx_t *ctx, size_t len, int named, char **base)
{
    MPI_Comm node = ctx->node_comm;
    int leader = ctx->local_rank == 0, fd = -1, ok, all_ok, rc;
    announce_t an = {0};
    if (leader) {
        fd = create_fd(len, named, an.name, sizeof an.name);
        an.pid = (int)getpid();
        an.fd = fd;
        an.ok = fd >= 0;
    }
    rc = PMPI_Bcast(&an, (int)sizeof an, MPI_BYTE, 0, node);
    if (rc != MPI_SUCCESS) return rc;
    *base = an.ok ? attach(&an, leader, len, fd) : NULL;
    ok = *base != NULL;
    rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
    /* everyone attached (or gave up): the segment needs no name or descriptor any more */
    if (leader && an.name[0]) shm_unlink(an.name);
    if (leader && fd >= 0) close(fd);
    if ((rc != MPI_SUCCESS || !all_ok) && *base) {
        munmap(*base, len);
        *base = NULL;
    }
    return rc;
}

/* Collective over the node: map the region, learn pids, sockets and CMA. */
static int create(mc_ctx_t *ctx, mc_shm_t *sh)
{
    MPI_Comm node = ctx->node_comm;
    size_t data_len = round_up((size_t)(mc_cfg()->shm_size > 0 ? mc_cfg()->shm_size : 1 << 20), 4096);
    size_t len = region_len(ctx->local_size, data_len);
    sh->p = ctx->local_size;
    sh->r = ctx->local_rank;
    /* a peer may be refused /proc/<leader>/fd (e.g. an undumpable leader): then a name */
    int rc = map_region(ctx, len, 0, &sh->base);
    if (rc == MPI_SUCCESS && !sh->base) rc = map_region(ctx, len, 1, &sh->base);
    if (rc != MPI_SUCCESS || !sh->base) {
        if (rc == MPI_SUCCESS) mc_warn("node shared memory unavailable: shm algorithms disabled");
        return rc;
    }
    layout(sh, data_len);
    sh->pids = malloc(sizeof(pid_t) * (size_t)sh->p);
    sh->seen_done = calloc((size_t)sh->p, sizeof(uint64_t));
    sh->fan.seen = calloc((size_t)sh->p, sizeof(uint64_t));
    for (int i = 0; i < MC_FAN_RING; i++) sh->fan_root[i] = -1;
    if (!sh->pids || !sh->seen_done || !sh->fan.seen) rc = MPI_ERR_NO_MEM;
    pid_t me = getpid();
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(&me, (int)sizeof me, MPI_BYTE, sh->pids, (int)sizeof me, MPI_BYTE, node);
    if (rc == MPI_SUCCESS) rc = build_sockets(sh, node);
    if (rc == MPI_SUCCESS) sh->cma = mc_cma_probe(sh, node);
    if (rc != MPI_SUCCESS) {
        munmap(sh->base, len);
        sh->base = NULL;
    }
    return rc;
}

int mc_shm_create(mc_ctx_t *ctx, mc_shm_t **out)
{
    *out = ctx->shm;
    if (ctx->shm || ctx->shm_failed) return MPI_SUCCESS;
    mc_sel_changed(); /* applicability tests read the region's state */
    if (!mc_cfg()->shm) {
        ctx->shm_failed = 1;
        return MPI_SUCCESS;
    }
    mc_shm_t *sh = calloc(1, sizeof *sh);
    if (!sh) return MPI_ERR_NO_MEM;
    sh->trial_last = -1;
    int rc = create(ctx, sh);
    if (rc != MPI_SUCCESS || !sh->base) {
        mc_shm_free(sh);
        ctx->shm_failed = 1;
        return rc;
    }
    *out = ctx->shm = sh;
    return MPI_SUCCESS;
}

void mc_shm_free(mc_shm_t *sh)
{
    if (!sh) return;
    if (sh->base) munmap(sh->base, sh->len);
    free(sh->pids);
    free(sh->seen_done);
    free(sh->fan.seen);
    free(sh->sock_of);
    free(sh->sock_first);
    free(sh->sock_rank);
    free(sh);
}
