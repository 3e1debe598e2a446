/* Data paths to a peer's posted buffer: a plain pointer when the buffer lives in the peer's
 * shared heap (zero copy), process_vm_readv/writev when CMA works (single copy), otherwise
 * none: the algorithm stages through the region (two copies).
 *
 * Agreement. The decision for a post depends only on the post itself (does it carry a heap
 * reference), on sh->cma (agreed by the probe) and on MCOLL_SHM_PATH (same environment on
 * every rank), so every rank computes the same answer for the same posts. A poster whose
 * heap peers cannot open publishes no heap reference (mc_heap_shareable). */
#include "heap.h"
#include "shm.h"
#include "../core/config.h"
#include "../core/log.h"
#include <assert.h>
#include <pthread.h>
#include <string.h>

static mc_path_t path_mode;

static void parse_path(void)
{
    static const struct { const char *name; mc_path_t v; } names[] = {
        {"auto", MC_PATH_AUTO}, {"copy", MC_PATH_COPY}, {"cma", MC_PATH_CMA}, {"zero", MC_PATH_ZERO}};
    const char *s = mc_cfg()->shm_path;
    path_mode = MC_PATH_AUTO;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) {
            path_mode = names[i].v;
            return;
        }
    mc_warn("ignoring MCOLL_SHM_PATH=%s: expected auto, copy, cma or zero", s);
}

mc_path_t mc_shm_path(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, parse_path);
    return path_mode;
}

void mc_shm_post(mc_shm_t *sh, int slot, const void *buf, size_t len)
{
    mc_post_t *p = mc_post(sh, sh->r, slot);
    uint64_t id;
    int64_t off;
    assert(!sh->step0);   /* not in a continued op (mc_shm_continue) */
    mc_shm_quiesce(sh);
    p->addr = (uintptr_t)buf;
    p->len = len;
    mc_adopt_tick();
    if (len && mc_heap_shareable() &&
        (mc_heap_lookup_range(buf, len, &id, &off) || mc_adopt_lookup(buf, len, &id, &off))) {
        p->heap_off = off;
        p->heap_id = id;
    } else {
        p->heap_off = -1;
        p->heap_id = 0;
    }
    p->votes = 0;
    sh->posted |= 1u << slot;
}

void mc_shm_vote(mc_shm_t *sh, int slot, unsigned vote) { mc_post(sh, sh->r, slot)->votes |= vote; }

int mc_shm_voted(mc_shm_t *sh, int slot, unsigned vote)
{
    for (int k = 0; k < sh->p; k++)
        if (mc_post(sh, k, slot)->votes & vote) return 1;
    return 0;
}

int mc_shm_all_voted(mc_shm_t *sh, int slot, unsigned vote)
{
    for (int k = 0; k < sh->p; k++)
        if (!(mc_post(sh, k, slot)->votes & vote)) return 0;
    return 1;
}

/* An empty post has nothing to reach: any rank "reaches" it, through a pointer that is
 * valid but never dereferenced (n is 0 within bounds). */
static char empty_post[MC_CL];

static int zero_allowed(mc_path_t m) { return m == MC_PATH_AUTO || m == MC_PATH_ZERO; }
static int cma_allowed(const mc_shm_t *sh, mc_path_t m)
{
    return sh->cma && (m == MC_PATH_AUTO || m == MC_PATH_CMA);
}

int mc_shm_cma_ok(const mc_shm_t *sh) { return cma_allowed(sh, mc_shm_path()); }

/* The local pointer to rank's post, or NULL when it has none. */
static void *resolve(mc_shm_t *sh, int rank, const mc_post_t *p)
{
    if (!p->len) return empty_post;
    if (rank == sh->r) return (void *)(uintptr_t)p->addr;
    if (p->heap_off < 0 || !zero_allowed(mc_shm_path())) return NULL;
    return mc_heap_translate(sh->pids[rank], p->heap_id, p->heap_off, p->len);
}

mc_path_t mc_peer_path(mc_shm_t *sh, int rank, int slot)
{
    const mc_post_t *p = mc_post(sh, rank, slot);
    if (resolve(sh, rank, p)) return MC_PATH_ZERO;
    return cma_allowed(sh, mc_shm_path()) ? MC_PATH_CMA : MC_PATH_COPY;
}

void *mc_peer_ptr(mc_shm_t *sh, int rank, int slot) { return resolve(sh, rank, mc_post(sh, rank, slot)); }

static int transfer(mc_shm_t *sh, int rank, int slot, size_t off, void *local, size_t n, int write, int nt)
{
    void (*copy)(void *, const void *, size_t) = nt ? mc_copy_nt : mc_copy_t;
    const mc_post_t *p = mc_post(sh, rank, slot);
    if (off > p->len || n > p->len - off) return MPI_ERR_INTERN;
    if (!n) return MPI_SUCCESS;
    char *ptr = resolve(sh, rank, p);
    if (ptr) {
        if (write) copy(ptr + off, local, n);
        else copy(local, ptr + off, n);
        return MPI_SUCCESS;
    }
    if (!cma_allowed(sh, mc_shm_path())) return MPI_ERR_INTERN; /* the caller had to stage */
    void *remote = (void *)(uintptr_t)(p->addr + off);
    return write ? mc_cma_write(sh->pids[rank], remote, local, n)
                 : mc_cma_read(sh->pids[rank], local, remote, n);
}

int mc_peer_read(mc_shm_t *sh, int rank, int slot, size_t off, void *dst, size_t n)
{
    return transfer(sh, rank, slot, off, dst, n, 0, 0);
}

int mc_peer_write(mc_shm_t *sh, int rank, int slot, size_t off, const void *src, size_t n)
{
    return transfer(sh, rank, slot, off, (void *)src, n, 1, 0);
}

int mc_peer_read_nt(mc_shm_t *sh, int rank, int slot, size_t off, void *dst, size_t n, int nt)
{
    return transfer(sh, rank, slot, off, dst, n, 0, nt);
}

int mc_peer_write_nt(mc_shm_t *sh, int rank, int slot, size_t off, const void *src, size_t n, int nt)
{
    return transfer(sh, rank, slot, off, (void *)src, n, 1, nt);
}

int mc_shm_all_reachable(mc_shm_t *sh, int slot)
{
    mc_path_t m = mc_shm_path();
    if (sh->p < 2) return 1;
    for (int j = 0; j < sh->p; j++) {
        const mc_post_t *p = mc_post(sh, j, slot);
        if (p->len && !(p->heap_off >= 0 && zero_allowed(m)) && !cma_allowed(sh, m)) return 0;
    }
    return 1;
}

int mc_shm_all_zero_copy(mc_shm_t *sh, int slot)
{
    if (!zero_allowed(mc_shm_path())) return 0;
    for (int k = 0; k < sh->p; k++) {
        const mc_post_t *q = mc_post(sh, k, slot);
        if (q->len && q->heap_off < 0) return 0;
    }
    return 1;
}

int mc_shm_posts_zero_copy(mc_shm_t *sh)
{
    int any = 0, zero = zero_allowed(mc_shm_path());
    for (int slot = 0; slot < MC_NPOST; slot++) {
        if (!(sh->posted & (1u << slot))) continue;
        for (int k = 0; k < sh->p; k++) {
            const mc_post_t *q = mc_post(sh, k, slot);
            if (!q->len) continue;
            if (q->heap_off < 0 || !zero) return 0;
            any = 1;
        }
    }
    return any ? 1 : -1;
}

int mc_shm_direct_agreed(mc_shm_t *sh, int slot)
{
    if (!mc_shm_all_reachable(sh, slot) || mc_shm_voted(sh, slot, MC_VOTE_PIPE)) return 0;
    if (mc_shm_path() == MC_PATH_CMA || mc_shm_all_zero_copy(sh, slot)) return 1;
    if (mc_shm_voted(sh, slot, MC_VOTE_STAGE)) return 0;
    return !mc_shm_voted(sh, slot, MC_VOTE_RING) || mc_shm_all_voted(sh, slot, MC_VOTE_CMA_FAST);
}
