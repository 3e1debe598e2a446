/* Roofline of the node's memory: the copy bandwidth of all ranks copying at once, and the
 * minimum data volume of each collective, so a time can be put next to its DRAM floor. */
#include "bench.h"
#include <stdlib.h>
#include <string.h>

/* Each rank copies a buffer well past the last-level cache (memcpy, as an application
 * would); the volume counts loads + stores (2 bytes per byte copied), like the DAV counters.
 * Best of a few runs of the slowest rank. Collective. */
double bench_copy_bandwidth(size_t bytes_per_rank)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    char *src = malloc(bytes_per_rank), *dst = malloc(bytes_per_rank);
    double best = 0;
    int ok = src && dst, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all) {
        memset(src, 1, bytes_per_rank);
        memset(dst, 2, bytes_per_rank);
        for (int rep = 0; rep < 4; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            memcpy(dst, src, bytes_per_rank);
            double t = MPI_Wtime() - t0, tmax;
            MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            double bw = 2.0 * (double)bytes_per_rank * p / tmax;
            if (bw > best) best = bw;
        }
    }
    free(src);
    free(dst);
    return best;
}

/* Bytes that must be loaded or stored at least once: every input byte read, every output
 * byte written (m = the benchmark's bytes per rank). */
double bench_min_volume(const char *coll, int p, size_t bytes)
{
    double m = (double)bytes, P = p;
    if (!strcmp(coll, "allreduce")) return 2 * P * m;
    if (!strcmp(coll, "bcast")) return P * m;                       /* read once, p-1 writes */
    if (!strcmp(coll, "reduce")) return (P + 1) * m;
    if (!strncmp(coll, "reduce_scatter", 14)) return P * P * m + P * m;
    if (!strncmp(coll, "allgather", 9)) return P * m + P * P * m;
    if (!strncmp(coll, "gather", 6) || !strncmp(coll, "scatter", 7)) return 2 * P * m;
    if (!strncmp(coll, "alltoall", 8)) return 2 * P * P * m;
    if (!strcmp(coll, "scan") || !strcmp(coll, "exscan")) return 2 * P * m;
    return 0;
}
