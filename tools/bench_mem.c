/* Benchmark buffers: one arena, touched once up front so page faults are never timed. */
#include "bench.h"
#include "mcoll.h"
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

int bench_mem_init(bench_mem_t *mm, size_t need, int cold, int heap, int thp, int apart, size_t skew)
{
    void *p = NULL;
    memset(mm, 0, sizeof *mm);
    mm->skew = skew;
    mm->bytes = round_up(need ? need : 1, PAGE);   /* apart: the bound on one call's buffers */
    if (apart && !cold && !heap) {
        mm->apart = 1;
        return 0;
    }
    mm->cold = cold;
    mm->heap = heap;
    if (heap) {
        /* page-align by hand: the heap guarantees 64 bytes */
        char *h = mcoll_malloc(mm->bytes + 2 * PAGE);
        if (!h) return -1;
        mm->base = h;
        p = (void *)(((uintptr_t)h + PAGE - 1) / PAGE * PAGE);
    } else if (posix_memalign(&p, PAGE, mm->bytes + PAGE)) {   /* a page for the skew */
        return -1;
    }
    mm->arena = p;
    /* before the first touch: the pages are then faulted in as huge pages where aligned
     * (ignored where THP is off) */
    if (thp) madvise(p, mm->bytes, MADV_HUGEPAGE);
    memset(mm->arena, 0, mm->bytes + PAGE);
    return 0;
}

/* A block of n bytes from the pool, not `other`: blocks are never freed before the end, so
 * glibc keeps giving large ones mappings of their own (a free would raise its threshold). */
static char *pool_get(bench_mem_t *mm, size_t n, const char *other)
{
    for (int i = 0; i < mm->npool; i++)
        if (mm->pool_n[i] == n && mm->pool[i] != other) return mm->pool[i];
    if (mm->npool == BENCH_POOL) return NULL;
    char *b = malloc(n ? n : 1);
    if (!b) return NULL;
    memset(b, 0, n);
    mm->pool[mm->npool] = b;
    mm->pool_n[mm->npool++] = n;
    return b;
}

static int apart_next(bench_mem_t *mm, size_t sbytes, size_t rbytes, bench_call_t *c)
{
    if (!mm->sblk || sbytes != mm->sn || rbytes != mm->rn) {
        mm->sblk = pool_get(mm, sbytes + mm->skew, NULL);
        mm->rblk = pool_get(mm, rbytes + mm->skew, mm->sblk);
        if (!mm->sblk || !mm->rblk) return -1;
        mm->sn = sbytes;
        mm->rn = rbytes;
    }
    c->sbuf = mm->sblk + mm->skew;
    c->rbuf = mm->rblk + mm->skew;
    return 0;
}

/* Cold: successive calls use successive page-aligned slots, wrapping at the end of the
 * arena, which the caller sized past twice the last-level cache: by the time a slot comes
 * back, the other slots' traffic has evicted it. */
void bench_mem_next(bench_mem_t *mm, size_t sbytes, size_t rbytes, bench_call_t *c)
{
    if (mm->apart) {
        if (apart_next(mm, sbytes, rbytes, c)) MPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
        return;
    }
    size_t sb = round_up(sbytes, PAGE), step = sb + round_up(rbytes, PAGE);
    if (!mm->cold || mm->off + step > mm->bytes) mm->off = 0;
    c->sbuf = mm->arena + mm->off + mm->skew;
    c->rbuf = mm->arena + mm->off + sb + mm->skew;
    if (mm->cold) mm->off += step;
}

void bench_mem_free(bench_mem_t *mm)
{
    if (mm->apart) {
        for (int i = 0; i < mm->npool; i++) free(mm->pool[i]);
        memset(mm, 0, sizeof *mm);
        return;
    }
    if (mm->heap) mcoll_free(mm->base);
    else free(mm->arena);
    memset(mm, 0, sizeof *mm);
}

size_t bench_mem_slot(size_t sbytes, size_t rbytes)
{
    return round_up(sbytes, PAGE) + round_up(rbytes, PAGE);
}
