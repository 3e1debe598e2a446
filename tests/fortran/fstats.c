/* C side of the Fortran test programs: mcoll's counters and heap, found with dlsym so the
 * programs are built without mcoll and run unchanged with libmcoll.so preloaded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

/* mcoll_stats_t's leading fields (include/mcoll.h); the padding leaves room for the rest */
typedef struct { uint64_t calls, handled, fallback, bytes; uint64_t more[60]; } stats_t;

/* 1 and the counters of collective `coll` when mcoll is in the process, else 0. */
int fstats(const char *coll, long long *calls, long long *handled, long long *fallback)
{
    int (*get)(const char *, stats_t *) = (int (*)(const char *, stats_t *))dlsym(RTLD_DEFAULT, "mcoll_stats_get");
    stats_t s = {0};
    if (!get || get(coll, &s) != 0) return 0;
    *calls = (long long)s.calls;
    *handled = (long long)s.handled;
    *fallback = (long long)s.fallback;
    return 1;
}

/* Usable bytes of the node-shared heap block at p (0: not one; -1: no mcoll). */
long long fheap_size(const void *p)
{
    size_t (*size)(const void *) = (size_t (*)(const void *))dlsym(RTLD_DEFAULT, "mcoll_heap_size");
    return size ? (long long)size(p) : -1;
}
