/* MCOLL_SELECT=model: with a profile where one family of algorithms is absurdly cheap, every
 * call of a single node must run that family (--expect shm: the shared-memory algorithms;
 * --expect p2p: the point-to-point ones), at every size; results are checked too. The
 * profiles (tests/env/profile_*_cheap.json) make the answer obvious without evaluating a
 * model here. On a node counted oversubscribed (MCOLL_OVERSUBSCRIBED=1) the shared-memory
 * algorithms go first whatever the profile says. */
#include <mcoll.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures, rank, size, want_shm;

static void expect(const char *coll, size_t n)
{
    const char *got = mcoll_last_alg(coll);
    int shm = got && !strncmp(got, "shm", 3);
    if (!got || shm != want_shm) {
        failures++;
        printf("FAIL rank %d: %s of %zu bytes ran %s, expected a %s algorithm\n", rank, coll, n, got ? got : "(none)",
               want_shm ? "shared-memory" : "point-to-point");
    }
}

static void check(const char *what, size_t n, int ok)
{
    if (!ok) {
        failures++;
        printf("FAIL rank %d: %s of %zu bytes: wrong result\n", rank, what, n);
    }
}

static void run(size_t n)
{
    size_t cnt = n / sizeof(int) ? n / sizeof(int) : 1;
    int *a = malloc(cnt * size * sizeof *a), *b = malloc(cnt * size * sizeof *b), ok = 1;
    for (size_t i = 0; i < cnt * size; i++) a[i] = (int)(i % 1000) + rank;
    MPI_Allreduce(a, b, (int)cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < cnt; i++) ok &= b[i] == size * (int)(i % 1000) + size * (size - 1) / 2;
    check("allreduce", n, ok);
    expect("allreduce", n);
    for (size_t i = 0; i < cnt; i++) b[i] = rank == 0 ? (int)i : -1;
    MPI_Bcast(b, (int)cnt, MPI_INT, 0, MPI_COMM_WORLD);
    ok = 1;
    for (size_t i = 0; i < cnt; i++) ok &= b[i] == (int)i;
    check("bcast", n, ok);
    expect("bcast", n);
    for (size_t i = 0; i < cnt; i++) a[i] = rank * 7 + (int)i;
    MPI_Allgather(a, (int)cnt, MPI_INT, b, (int)cnt, MPI_INT, MPI_COMM_WORLD);
    ok = 1;
    for (int r = 0; r < size; r++)
        for (size_t i = 0; i < cnt; i++) ok &= b[r * cnt + i] == r * 7 + (int)i;
    check("allgather", n, ok);
    expect("allgather", n);
    for (size_t i = 0; i < cnt * size; i++) a[i] = rank * 1000003 + (int)i;
    MPI_Alltoall(a, (int)cnt, MPI_INT, b, (int)cnt, MPI_INT, MPI_COMM_WORLD);
    ok = 1;
    for (int r = 0; r < size; r++)
        for (size_t i = 0; i < cnt; i++) ok &= b[r * cnt + i] == r * 1000003 + (int)(rank * cnt + i);
    check("alltoall", n, ok);
    expect("alltoall", n);
    for (size_t i = 0; i < cnt; i++) a[i] = (int)(i % 1000) + rank;
    MPI_Scan(a, b, (int)cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok = 1;
    for (size_t i = 0; i < cnt; i++) ok &= b[i] == (rank + 1) * (int)(i % 1000) + rank * (rank + 1) / 2;
    check("scan", n, ok);
    expect("scan", n);
    for (size_t i = 0; i < cnt; i++) b[i] = -7;
    MPI_Exscan(a, b, (int)cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok = 1;
    for (size_t i = 0; i < cnt && rank; i++) ok &= b[i] == rank * (int)(i % 1000) + rank * (rank - 1) / 2;
    check("exscan", n, ok);
    expect("exscan", n);
    MPI_Barrier(MPI_COMM_WORLD);
    expect("barrier", 0);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* auto: the cheap point-to-point profile, on a node counted oversubscribed when the ranks
     * (all on one node) outnumber its online CPUs */
    int expect_auto = argc > 2 && !strcmp(argv[2], "auto");
    want_shm = argc > 2 && !strcmp(argv[1], "--expect") &&
               (!strcmp(argv[2], "shm") || (expect_auto && size > sysconf(_SC_NPROCESSORS_ONLN)));
    if (!rank && expect_auto)
        printf("%d ranks on %ld CPUs: expecting %s algorithms\n", size, sysconf(_SC_NPROCESSORS_ONLN),
               want_shm ? "shared-memory" : "point-to-point");
    static const size_t sizes[] = {4, 100, 4096, 65536, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) run(sizes[i]);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) printf(all ? "SELECT MODEL FAILED (%d)\n" : "SELECT MODEL PASSED\n", all);
    MPI_Finalize();
    return all != 0;
}
