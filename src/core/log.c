#include "log.h"
#include "mc.h"
#include <stdarg.h>
#include <stdio.h>

static void vlog(const char *kind, const char *fmt, va_list ap)
{
    int rank = -1, init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "mcoll[%d] %s%s\n", rank, kind, line);
}

void mc_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("warning: ", fmt, ap);
    va_end(ap);
}

void mc_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}
