/* Benchmark buffers: one arena, touched once up front so page faults are never timed. */
#include "bench.h"
#include "mcoll.h"
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

int bench_mem_init(bench_mem_t *mm, size_t need, int cold, int heap, int thp)
{
    void *p = NULL;
    memset(mm, 0, sizeof *mm);
    mm->bytes = round_up(need ? need : 1, PAGE);
    mm->cold = cold;
    mm->heap = heap;
    if (heap) {
        /* page-align by hand: the heap guarantees 64 bytes */
        char *h = mcoll_malloc(mm->bytes + PAGE);
        if (!h) return -1;
        mm->base = h;
        p = (void *)(((uintptr_t)h + PAGE - 1) / PAGE * PAGE);
    } else if (posix_memalign(&p, PAGE, mm->bytes)) {
        return -1;
    }
    mm->arena = p;
    /* before the first touch: the pages are then faulted in as huge pages where aligned
     * (ignored where THP is off) */
    if (thp) madvise(p, mm->bytes, MADV_HUGEPAGE);
    memset(mm->arena, 0, mm->bytes);
    return 0;
}

/* Cold: successive calls use successive page-aligned slots, wrapping at the end of the
 * arena, which the caller sized past twice the last-level cache: by the time a slot comes
 * back, the other slots' traffic has evicted it. */
void bench_mem_next(bench_mem_t *mm, size_t sbytes, size_t rbytes, bench_call_t *c)
{
    size_t sb = round_up(sbytes, PAGE), step = sb + round_up(rbytes, PAGE);
    if (!mm->cold || mm->off + step > mm->bytes) mm->off = 0;
    c->sbuf = mm->arena + mm->off;
    c->rbuf = mm->arena + mm->off + sb;
    if (mm->cold) mm->off += step;
}

void bench_mem_free(bench_mem_t *mm)
{
    if (mm->heap) mcoll_free(mm->base);
    else free(mm->arena);
    memset(mm, 0, sizeof *mm);
}

size_t bench_mem_slot(size_t sbytes, size_t rbytes)
{
    return round_up(sbytes, PAGE) + round_up(rbytes, PAGE);
}
