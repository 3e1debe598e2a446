/* Roofline of the node's memory: the copy bandwidth of all ranks copying at once, and the
 * minimum data volume of each collective, so a time can be put next to its DRAM floor. */
#include "bench.h"
#include "shm/shm.h"
#include <sched.h>
#include <stdint.h>
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

/* The latency floor of the small collectives: a symmetric exchange among the ranks of one
 * node on bare shared-memory lines, no MPI and no mcoll (each rank publishes a sequence
 * number and an 8-byte payload in its own line, double-buffered 4 KiB apart, and waits for
 * every other rank's), which is the least a small allreduce or barrier can cost. Mean per
 * round of the slowest rank, best of 3 runs of `rounds`; 0 when the world is not one node
 * of at least 2 ranks or the shared window fails. Waits spin, then yield (oversubscription).
 * This VM switches between states that differ by about 5x in this number (0.03-0.08,
 * 0.13-0.27 and 0.36-0.41 us at 2 ranks), for seconds to minutes: printed next to the times,
 * it says which state a run started in. Collective. */
double bench_flag_exchange(int rounds)
{
    MPI_Comm node;
    int p, wp, r, ok;
    MPI_Comm_size(MPI_COMM_WORLD, &wp);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &p);
    MPI_Comm_rank(node, &r);
    MPI_Allreduce((int[]){p == wp && p > 1}, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    double best = 0;
    MPI_Win win = MPI_WIN_NULL;
    char *base = NULL;
    if (ok) {
        MPI_Aint sz = r == 0 ? 4096 + (MPI_Aint)p * 128 : 0, qsz;
        int du, got = MPI_Win_allocate_shared(sz, 1, MPI_INFO_NULL, node, &base, &win) == MPI_SUCCESS;
        if (got) got = MPI_Win_shared_query(win, 0, &qsz, &du, &base) == MPI_SUCCESS;
        MPI_Allreduce(&got, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (ok) {
        if (r == 0) memset(base, 0, 4096 + (size_t)p * 128);
        MPI_Barrier(node);
        uint64_t seq = 0, sink = 0;
        for (int run = 0; run < 3; run++) {
            MPI_Barrier(node);
            double t0 = MPI_Wtime();
            for (int i = 0; i < rounds; i++) {
                ++seq;
                uint64_t *mine = (uint64_t *)(base + (seq & 1) * 4096 + (size_t)r * 128);
                mine[1] = seq;
                __atomic_store_n(&mine[0], seq, __ATOMIC_RELEASE);
                for (int k = 0; k < p; k++) {
                    uint64_t *f = (uint64_t *)(base + (seq & 1) * 4096 + (size_t)k * 128);
                    for (int spin = 0; __atomic_load_n(&f[0], __ATOMIC_ACQUIRE) < seq;)
                        if (++spin == 256) spin = 0, sched_yield();
                    sink += f[1];
                }
            }
            double t = (MPI_Wtime() - t0) / rounds, tmax;
            MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, node);
            if (best == 0 || tmax < best) best = tmax;
        }
        if (sink == 1) best = -best; /* keeps the payload reads */
        MPI_Barrier(node);
    }
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
    MPI_Comm_free(&node);
    return best;
}

/* Output bytes per rank that any algorithm must write, the collective's total output shared
 * evenly among the ranks (a bcast root may write part of the readers' copies, a push
 * allgather part of its peers'); m = the benchmark's bytes per rank; 0: none (barrier). */
double bench_out_share(const char *coll, int p, size_t bytes)
{
    double m = (double)bytes, P = p;
    if (!strcmp(coll, "bcast")) return (P - 1) * m / P;
    if (!strcmp(coll, "reduce")) return m / P;
    if (!strncmp(coll, "allgather", 9) || !strncmp(coll, "alltoall", 8)) return P * m;
    if (!strcmp(coll, "barrier")) return 0;
    return m; /* allreduce, reduce_scatter(_block), gather(v), scatter(v), scan, exscan */
}

/* out bytes into dst from the hot source of in bytes, each 64 KiB of the source written to
 * every place it goes while it is in the L1/L2 cache (out / in copies of it, the last one
 * partial; a push allgather's pattern): memcpy, or mcoll's streaming kernel when nt. */
static void local_write(int nt, char *dst, const char *src, size_t in, size_t out)
{
    const size_t piece = (size_t)64 << 10;
    for (size_t c = 0; c < in; c += piece)
        for (size_t o = c; o < out; o += in) {
            size_t n = out - o < piece ? out - o : piece;
            if (n > in - c) n = in - c;
            if (nt)
                mc_copy_nt(dst + o, src + c, n);
            else
                mc_copy_t(dst + o, src + c, n);
        }
}

/* --local-copy: every rank at once copies its share of a collective's output (out bytes)
 * from a hot buffer of its own holding its input (in bytes, reread as needed) into another of
 * its own, temporal or streaming stores, the faster: the collective's copies with the
 * communication and the synchronization taken away, so a collective near it has little left
 * to gain but from the copies themselves. Not a bound: beyond the cache mcoll's own streamed
 * collectives ran below it on the AMD EPYC VM (allgather of 8-64 MiB blocks, 2 ranks). Median
 * of the slowest rank over reps; the buffers are kept for the next sizes (grown, touched once).
 * Collective; 0 when memory runs out (on every rank alike). */
double bench_local_copy(size_t out, size_t in, int reps)
{
    static char *src, *dst;
    static size_t src_n, dst_n;
    size_t o = (out + 63) / 64 * 64, i = (in + 63) / 64 * 64;
    if (i == 0 || i > o) i = o;
    if (o > dst_n) {
        free(dst);
        dst = aligned_alloc(64, o), dst_n = dst ? o : 0;
        if (dst) memset(dst, 0, o);
    }
    if (i > src_n) {
        free(src);
        src = aligned_alloc(64, i), src_n = src ? i : 0;
        if (src) memset(src, 3, i);
    }
    int ok = dst && src, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) return 0;
    double best = 0, t[16];
    if (reps > 16) reps = 16;
    for (int nt = 0; nt < 2; nt++) {
        local_write(nt, dst, src, i, o); /* the pages and the cache state */
        for (int k = 0; k < reps; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            local_write(nt, dst, src, i, o);
            double x = MPI_Wtime() - t0;
            MPI_Allreduce(&x, &t[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        double med = bench_stats(t, reps).med;
        if (best == 0 || med < best) best = med;
    }
    return best;
}
