/* The node region: one shared mapping per node communicator, created on first use.
 *
 * The leader (local rank 0) creates an anonymous memfd; the other ranks open it through
 * /proc/<leader>/fd/<n>, so the region never has a name: nothing is left in /dev/shm, even
 * when a rank is killed. Where memfd or /proc access is refused, a named POSIX segment is
 * used and unlinked as soon as every local rank has attached (a rank killed in between is
 * the only way to leave it behind).
 *
 * A freed communicator's region waits in a per-process pool for the next communicator with
 * the same local ranks (pool_offer below). */
#define _GNU_SOURCE
#include "shm.h"
#include "../core/config.h"
#include "../core/log.h"
#include "../core/topo.h"
#include "../select/select.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
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
 * posts [p][MC_NPOST] | symmetric-exchange slots [2][p] (a line + mc_sym_max(p)) | fan slots
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
    sh->sym = (mc_xchg_t){.slots = sh->base + off, .slot = MC_LINE + mc_sym_max(sh->p), .nbuf = 2};
    off += 2 * (size_t)sh->p * sh->sym.slot;
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

typedef struct { int pid, fd, ok; uint64_t id; char name[40]; } announce_t;

/* What a rank brings to a new region's set-up: its pid, whether it could allocate its side,
 * and the ids of up to MC_POOL_OFFER idle regions of its pool it could take over (0: none). */
#define MC_POOL_MAX 16
#define MC_POOL_OFFER 4
typedef struct { int64_t pid; int64_t ok; uint64_t id[MC_POOL_OFFER]; } offer_t;

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
static int map_region(mc_ctx_t *ctx, size_t len, int named, char **base, uint64_t *id)
{
    MPI_Comm node = ctx->node_comm;
    int leader = ctx->local_rank == 0, fd = -1, ok, all_ok, rc;
    announce_t an = {0};
    if (leader) {
        static _Atomic uint32_t serial;
        fd = create_fd(len, named, an.name, sizeof an.name);
        an.pid = (int)getpid();
        an.fd = fd;
        an.ok = fd >= 0;
        an.id = (uint64_t)(uint32_t)an.pid << 32 | ++serial; /* the leader's pid is in the region's pids */
    }
    rc = PMPI_Bcast(&an, (int)sizeof an, MPI_BYTE, 0, node);
    if (rc != MPI_SUCCESS) return rc;
    *id = an.id;
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

/* Collective over the node: map the region, learn sockets and CMA (pids: from the offers). */
static int create(mc_ctx_t *ctx, mc_shm_t *sh, const offer_t *offers)
{
    MPI_Comm node = ctx->node_comm;
    size_t data_len = round_up((size_t)(mc_cfg()->shm_size > 0 ? mc_cfg()->shm_size : 1 << 20), 4096);
    size_t len = region_len(ctx->local_size, data_len);
    sh->p = ctx->local_size;
    sh->r = ctx->local_rank;
    /* a peer may be refused /proc/<leader>/fd (e.g. an undumpable leader): then a name */
    int rc = map_region(ctx, len, 0, &sh->base, &sh->id);
    if (rc == MPI_SUCCESS && !sh->base) rc = map_region(ctx, len, 1, &sh->base, &sh->id);
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
    for (int i = 0; sh->pids && i < sh->p; i++) sh->pids[i] = (pid_t)offers[i].pid;
    if (rc == MPI_SUCCESS) rc = build_sockets(sh, node);
    if (rc == MPI_SUCCESS) sh->cma = mc_cma_probe(sh, node);
    if (rc == MPI_SUCCESS && !sh->cma && sh->p > 1 && mc_cfg()->verbose)
        mc_info("node region: CMA refused (ptrace rules or seccomp): no single copies between ranks");
    if (rc != MPI_SUCCESS) {
        munmap(sh->base, len);
        sh->base = NULL;
    }
    return rc;
}

/* ---------------------------------------------------------------- pool of idle regions */
/* Mapping a region costs about 30 us at 2 ranks here (memfd, mmap and first touches, the CMA
 * probe, six collectives) and unmapping it 9 us, against 7 us for a whole MPI_Comm_dup, 8-byte
 * MPI_Allreduce and MPI_Comm_free natively. So a freed communicator's region is kept, and the
 * next communicator whose local ranks are the same processes in the same order takes it over
 * when every one of them offers it. That is safe: a rank offers a region only once it freed
 * the communicator that used it, it is reserved meanwhile (no other thread offers it), and the
 * region is in the state the next call on the old communicator would have found, so its
 * sequence numbers simply go on. What the ranks learned there (trials, distance) is reset. */
static struct {
    pthread_mutex_t lock;
    mc_shm_t *idle[MC_POOL_MAX]; /* oldest first */
    int n, closed;
    _Atomic uint64_t created, reused; /* mcoll_setup_stats */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void destroy(mc_shm_t *sh)
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

static void pool_put(mc_shm_t *sh)
{
    mc_shm_t *evict = sh;
    int limit = mc_cfg()->shm_pool < MC_POOL_MAX ? mc_cfg()->shm_pool : MC_POOL_MAX;
    pthread_mutex_lock(&pool.lock);
    if (!pool.closed && limit > 0) {
        evict = NULL;
        if (pool.n >= limit) {
            evict = pool.idle[0];
            memmove(pool.idle, pool.idle + 1, sizeof *pool.idle * (size_t)--pool.n);
        }
        pool.idle[pool.n++] = sh;
    }
    pthread_mutex_unlock(&pool.lock);
    destroy(evict);
}

/* Takes out of the pool, newest first, the regions this process could hold as local rank r
 * of p: they are offered to the other ranks, and reserved until the choice is made. */
static int pool_reserve(int p, int r, mc_shm_t **mine, offer_t *o)
{
    int n = 0;
    pid_t me = getpid(); /* a forked child never offers its parent's */
    pthread_mutex_lock(&pool.lock);
    for (int i = pool.n - 1; i >= 0 && n < MC_POOL_OFFER; i--) {
        mc_shm_t *sh = pool.idle[i];
        if (sh->p != p || sh->r != r || sh->pids[r] != me) continue;
        o->id[n] = sh->id;
        mine[n++] = sh;
        memmove(pool.idle + i, pool.idle + i + 1, sizeof *pool.idle * (size_t)(pool.n - i - 1));
        pool.n--;
    }
    pthread_mutex_unlock(&pool.lock);
    return n;
}

/* The first of rank 0's offers that every rank made (the same answer on every rank: a region
 * offered by local rank i holds the pid of rank i at i, so its pids are the offers'). */
static mc_shm_t *pool_choose(int p, const offer_t *all, mc_shm_t **mine, int n)
{
    for (int k = 0; k < MC_POOL_OFFER && all[0].id[k]; k++) {
        uint64_t id = all[0].id[k];
        int everyone = 1;
        for (int i = 1; i < p && everyone; i++) {
            everyone = 0;
            for (int j = 0; j < MC_POOL_OFFER; j++) everyone |= all[i].id[j] == id;
        }
        for (int j = 0; everyone && j < n; j++)
            if (mine[j]->id == id) return mine[j];
    }
    return NULL;
}

/* Collective over the node: every rank offers its reserved regions and its pid; returns the
 * region every rank offered (the others go back to the pool), or NULL. *fresh, this rank's
 * side of a new region, is kept only when none is taken over and every rank allocated its. */
static int pool_offer(mc_ctx_t *ctx, offer_t *all, mc_shm_t **fresh, mc_shm_t **out)
{
    mc_shm_t *mine[MC_POOL_OFFER];
    offer_t o = {.pid = getpid(), .ok = *fresh != NULL};
    int n = pool_reserve(ctx->local_size, ctx->local_rank, mine, &o);
    int rc = PMPI_Allgather(&o, (int)sizeof o, MPI_BYTE, all, (int)sizeof o, MPI_BYTE, ctx->node_comm);
    *out = rc == MPI_SUCCESS ? pool_choose(ctx->local_size, all, mine, n) : NULL;
    int all_ok = rc == MPI_SUCCESS;
    for (int i = 0; i < ctx->local_size && all_ok; i++) all_ok = all[i].ok != 0;
    for (int j = n - 1; j >= 0; j--)
        if (mine[j] != *out) pool_put(mine[j]);
    if (*out || !all_ok) {
        free(*fresh);
        *fresh = NULL;
    }
    return rc;
}

/* The state a region starts with, on its own communicator or another's. */
static void start_afresh(mc_shm_t *sh)
{
    memset(&sh->xlat, 0, sizeof *sh - offsetof(mc_shm_t, xlat));
    sh->trial_last = -1;
}

void mc_shm_pool_close(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.closed = 1;
    int n = pool.n;
    mc_shm_t *idle[MC_POOL_MAX];
    memcpy(idle, pool.idle, sizeof *idle * (size_t)n);
    pool.n = 0;
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < n; i++) destroy(idle[i]);
}

void mc_shm_region_counts(uint64_t *created, uint64_t *reused)
{
    *created = pool.created;
    *reused = pool.reused;
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
    offer_t all[ctx->local_size];
    mc_shm_t *sh, *fresh = malloc(sizeof *fresh); /* zeroed only when used (about 24 KiB) */
    int rc = pool_offer(ctx, all, &fresh, &sh);
    if (rc == MPI_SUCCESS && sh) {
        start_afresh(sh);
        pool.reused++;
        *out = ctx->shm = sh;
        mc_msel_region(ctx);
        return MPI_SUCCESS;
    }
    if (!fresh) { /* every rank knows: a rank could not allocate (callers then decline) */
        ctx->shm_failed = 1;
        return rc;
    }
    sh = memset(fresh, 0, sizeof *fresh);
    start_afresh(sh);
    rc = create(ctx, sh, all);
    if (rc != MPI_SUCCESS || !sh->base) {
        destroy(sh);
        ctx->shm_failed = 1;
        return rc;
    }
    pool.created++;
    *out = ctx->shm = sh;
    mc_msel_region(ctx);
    return MPI_SUCCESS;
}

void mc_shm_free(mc_shm_t *sh)
{
    if (sh) pool_put(sh);
}
