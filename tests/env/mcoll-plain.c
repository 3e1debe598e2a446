/* An unmodified MPI program: built WITHOUT mcoll, run with LD_PRELOAD=libmcoll.so. It checks
 * its own results and, when mcoll is present in the process (found with dlsym), that mcoll
 * handled every collective it called. `--expect-mcoll` makes a missing mcoll a failure. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mcoll_stats_t's leading fields; the padding leaves room for the ones after them (the
 * program does not include mcoll.h: it must also run without mcoll) */
typedef struct { uint64_t calls, handled, fallback, bytes; uint64_t more[60]; } stats_t;
typedef int (*stats_get_fn)(const char *coll, stats_t *out);

static int rank, size, failures;

#define EXPECT(cond, ...)                                                                      \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            failures++;                                                                        \
            printf("FAIL rank=%d: ", rank);                                                    \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
        }                                                                                      \
    } while (0)

static void collectives(void)
{
    enum { N = 1000 };
    int *a = malloc(sizeof(int) * N * (size_t)size), *b = malloc(sizeof(int) * N * (size_t)size);
    for (int i = 0; i < N; i++) a[i] = rank * 7 + i;
    MPI_Allreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) EXPECT(b[i] == 7 * size * (size - 1) / 2 + size * i, "allreduce[%d] = %d", i, b[i]);
    for (int i = 0; i < N; i++) a[i] = rank == size - 1 ? i * 3 : -1;
    MPI_Bcast(a, N, MPI_INT, size - 1, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) EXPECT(a[i] == i * 3, "bcast[%d] = %d", i, a[i]);
    int me = rank * 100;
    MPI_Allgather(&me, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) EXPECT(b[i] == i * 100, "allgather[%d] = %d", i, b[i]);
    for (int i = 0; i < size; i++) a[i] = rank * 1000 + i;
    MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) EXPECT(b[i] == i * 1000 + rank, "alltoall[%d] = %d", i, b[i]);
    MPI_Reduce(&me, b, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) EXPECT(b[0] == (size - 1) * 100, "reduce = %d", b[0]);
    MPI_Scan(&me, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT(b[0] == 100 * rank * (rank + 1) / 2, "scan = %d", b[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    free(a);
    free(b);
}

static void check_mcoll(int expect)
{
    stats_get_fn get = (stats_get_fn)dlsym(RTLD_DEFAULT, "mcoll_stats_get");
    EXPECT(get || !expect, "mcoll is not in the process (LD_PRELOAD not applied?)");
    if (!get) return;
    static const char *const used[] = {"allreduce", "bcast", "allgather", "alltoall", "reduce", "scan", "barrier"};
    for (size_t i = 0; i < sizeof used / sizeof used[0]; i++) {
        stats_t s = {0};
        EXPECT(get(used[i], &s) == 0, "mcoll_stats_get(%s) failed", used[i]);
        EXPECT(s.calls == 1 && s.handled + s.fallback == 1, "%s: mcoll counted calls=%llu handled=%llu fallback=%llu",
               used[i], (unsigned long long)s.calls, (unsigned long long)s.handled, (unsigned long long)s.fallback);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int expect = argc > 1 && !strcmp(argv[1], "--expect-mcoll");
    collectives();
    check_mcoll(expect);
    int total = 0;
    PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mcoll-plain: %s (%s)\n", total ? "FAILED" : "ALL PASSED",
               dlsym(RTLD_DEFAULT, "mcoll_stats_get") ? "mcoll interposed" : "native MPI only");
    fflush(stdout);
    MPI_Finalize();
    return total ? 1 : 0;
}
