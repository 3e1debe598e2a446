/* C side of the Fortran test programs: mcoll's counters, heap and neighbor requests, found
 * with dlsym so the programs are built without mcoll (only its header's types) and run
 * unchanged with libmcoll.so preloaded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mcoll.h>
#include <mpi.h>
#include <stddef.h>

/* 1 and the counters of collective `coll` when mcoll is in the process, else 0. */
int fstats(const char *coll, long long *calls, long long *handled, long long *fallback)
{
    int (*get)(const char *, mcoll_stats_t *) =
        (int (*)(const char *, mcoll_stats_t *))dlsym(RTLD_DEFAULT, "mcoll_stats_get");
    mcoll_stats_t s = {0};
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

/* Iterations started on the Fortran request handle when it is an mcoll neighbor request,
 * else -1. */
long long fnb_starts(const MPI_Fint *req)
{
    int (*get)(MPI_Request, mcoll_neighbor_stats_t *) =
        (int (*)(MPI_Request, mcoll_neighbor_stats_t *))dlsym(RTLD_DEFAULT, "mcoll_neighbor_stats");
    mcoll_neighbor_stats_t st;
    if (!get || get(PMPI_Request_f2c(*req), &st) != MPI_SUCCESS) return -1;
    return (long long)st.starts;
}
