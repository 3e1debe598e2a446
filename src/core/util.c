#include "mc.h"
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

void *mc_malloc(size_t n) { return n ? malloc(n) : NULL; }
void mc_free(void *p) { free(p); }

int mc_is_pof2(int x) { return x > 0 && (x & (x - 1)) == 0; }

int mc_floor_log2(int x) { return x > 0 ? 31 - __builtin_clz((unsigned)x) : -1; }

int mc_ceil_log2(int x) { return x > 1 ? 32 - __builtin_clz((unsigned)x - 1) : 0; }

int mc_errmsg(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && n) vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}
