#include "mc.h"
#include "config.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const coll_names[MC_NCOLL] = {
    "barrier", "bcast", "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block",
    "allgather", "allgatherv", "gather", "gatherv", "scatter", "scatterv",
    "alltoall", "alltoallv", "scan", "exscan",
};

const char *mc_coll_name(mc_coll_t c) { return (unsigned)c < MC_NCOLL ? coll_names[c] : "?"; }

int mc_coll_bytes_vary(mc_coll_t c) { return c == MC_GATHERV || c == MC_SCATTERV || c == MC_ALLTOALLV; }

int mc_coll_from_name(const char *name)
{
    for (int c = 0; name && c < MC_NCOLL; c++)
        if (!strcmp(name, coll_names[c])) return c;
    return -1;
}

/* Large temporaries are kept for the next call. glibc maps a block of 32 MiB or more (its
 * largest mmap threshold) afresh on every malloc and unmaps it on free, and smaller ones too
 * while its threshold has not grown past them, so an algorithm's per-call temporary of a
 * large message is faulted in page by page on every call: 14 us a page on a firecracker VM,
 * 224-233 ms for 64 MiB, where the natives' allreduce of 64 MiB took 200-400 ms. The last
 * MC_KEEP freed blocks of MC_KEEP_MIN bytes or more stay allocated; a request takes one that is
 * at least as large and at most twice as large. Not under ASan, whose quarantine is what finds
 * a use after free. A block from mc_malloc goes back through mc_free, never free(): a large one
 * freed behind the table's back would leave its address there for a later block to match. */
#define MC_KEEP_MIN ((size_t)1 << 20)
#define MC_KEEP 2
#define MC_LIVE 16
typedef struct { void *p; size_t n; } mc_blk_rec_t;
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;
static mc_blk_rec_t kept[MC_KEEP], live[MC_LIVE];   /* live: the large blocks handed out */
static _Atomic int nlive;                             /* mc_free of a small block skips the lock */

#if defined(__SANITIZE_ADDRESS__)
#define MC_KEEP_ON 0
#else
#define MC_KEEP_ON 1
#endif

static void *keep_take(size_t n)
{
    void *p = NULL;
    pthread_mutex_lock(&keep_lock);
    for (int i = 0; i < MC_KEEP && !p; i++)
        if (kept[i].p && kept[i].n >= n && kept[i].n / 2 <= n) p = kept[i].p, n = kept[i].n, kept[i].p = NULL;
    pthread_mutex_unlock(&keep_lock);
    if (!p) p = malloc(n);
    if (!p) return NULL;
    pthread_mutex_lock(&keep_lock);
    for (int i = 0; i < MC_LIVE; i++)
        if (!live[i].p) {
            live[i] = (mc_blk_rec_t){p, n};
            nlive++;
            break;
        }
    pthread_mutex_unlock(&keep_lock);
    return p;   /* no free live slot: freed as usual */
}

/* 1 when p was a large block handed out (now kept, or another one freed in its place). */
static int keep_give(void *p)
{
    void *drop = NULL;
    int found = 0;
    if (!nlive) return 0;
    pthread_mutex_lock(&keep_lock);
    for (int i = 0; i < MC_LIVE && !found; i++)
        if (live[i].p == p) {
            int at = 0;   /* an empty slot, else the smallest kept block goes */
            for (int k = 1; k < MC_KEEP; k++)
                if (kept[at].p && (!kept[k].p || kept[k].n < kept[at].n)) at = k;
            drop = kept[at].p;
            kept[at] = live[i];
            live[i].p = NULL;
            nlive--;
            found = 1;
        }
    pthread_mutex_unlock(&keep_lock);
    free(drop);
    return found;
}

void *mc_malloc(size_t n)
{
    if (!n) return NULL;
    return MC_KEEP_ON && n >= MC_KEEP_MIN ? keep_take(n) : malloc(n);
}

void mc_free(void *p)
{
    if (p && !(MC_KEEP_ON && keep_give(p))) free(p);
}

void mc_keep_release(void)
{
    pthread_mutex_lock(&keep_lock);
    for (int i = 0; i < MC_KEEP; i++) {
        free(kept[i].p);
        kept[i].p = NULL;
    }
    pthread_mutex_unlock(&keep_lock);
}

int mc_threads_multiple(void)
{
    static atomic_int multiple = -1; /* -1: not asked yet */
    int m = atomic_load_explicit(&multiple, memory_order_relaxed);
    if (m < 0) {
        int level = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&level);
        m = level == MPI_THREAD_MULTIPLE;
        atomic_store_explicit(&multiple, m, memory_order_relaxed);
    }
    return m;
}

int mc_is_pof2(int x) { return x > 0 && (x & (x - 1)) == 0; }

int mc_floor_log2(int x) { return x > 0 ? 31 - __builtin_clz((unsigned)x) : -1; }

int mc_ceil_log2(int x) { return x > 1 ? 32 - __builtin_clz((unsigned)x - 1) : 0; }

int mc_reduce_pieces(const void *in, void *inout, size_t count, MPI_Datatype t, MPI_Aint ext, MPI_Op op)
{
    size_t lim = mc_int_max();
    for (size_t i = 0; i < count; i += lim) {
        size_t k = count - i < lim ? count - i : lim;
        size_t off = i * (size_t)ext;
        int rc = PMPI_Reduce_local((const char *)in + off, (char *)inout + off, (int)k, t, op);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

int mc_errmsg(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && n) vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}
