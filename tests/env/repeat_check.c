/* The repeated-call path (mc_run_again): a call whose raw arguments equal the previous handled
 * call of its collective on the communicator reuses that call's checked arguments and
 * algorithm. Checks, on MPI_COMM_WORLD and on communicators made and freed in between:
 *   - results stay right while the data changes between identical calls (allreduce, in place
 *     too, reduce at a fixed and at a rotating root, bcast, scan) and when two buffer sets
 *     alternate (both remembered); the repeats counter shows which calls took the path;
 *   - a forced algorithm (mcoll_set_alg) between two identical calls is obeyed, and the same
 *     algorithm set again keeps the call remembered;
 *   - a derived datatype is never remembered: freed and re-created (its handle possibly
 *     reused) with another size, the next bcast moves the new size;
 *   - a freed communicator's remembered call never runs on a new one (same handle or not);
 *   - every call is counted once (calls, handled);
 *   - invalid arguments after a valid call still raise the error class.
 * Expected values are closed forms of the data generator. */
#include <mcoll.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, rank, size;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL rank %d line %d: ", rank, __LINE__);                                      \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static mcoll_stats_t stats(const char *coll)
{
    mcoll_stats_t s;
    memset(&s, 0, sizeof s);
    mcoll_stats_get(coll, &s);
    return s;
}

/* sum over ranks r < n of (r + it + i) */
static double sum_of(int n, int it, int i) { return (double)n * (n - 1) / 2 + (double)n * (it + i); }

static void allreduce_loop(MPI_Comm comm, int in_place)
{
    enum { N = 5, IT = 40 };
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    double a[N], b[N];
    mcoll_stats_t s0 = stats("allreduce");
    for (int it = 0; it < IT; it++) {
        for (int i = 0; i < N; i++) (in_place ? b : a)[i] = r + it + i;
        MPI_Allreduce(in_place ? MPI_IN_PLACE : a, b, N, MPI_DOUBLE, MPI_SUM, comm);
        for (int i = 0; i < N; i++)
            EXPECT(b[i] == sum_of(n, it, i), "allreduce%s it %d [%d] = %g, want %g", in_place ? " in place" : "",
                   it, i, b[i], sum_of(n, it, i));
    }
    mcoll_stats_t s1 = stats("allreduce");
    EXPECT(s1.calls - s0.calls == IT && s1.handled - s0.handled == IT, "allreduce: %llu calls, %llu handled, want %d",
           (unsigned long long)(s1.calls - s0.calls), (unsigned long long)(s1.handled - s0.handled), IT);
    /* the first call chooses; on a new communicator the second may choose again (creating the
     * node region voids the choices made before it) */
    uint64_t rep = s1.repeats - s0.repeats;
    EXPECT(rep == IT - 1 || rep == IT - 2, "allreduce: %llu repeats, want %d", (unsigned long long)rep, IT - 1);
}

/* Two buffer sets in turn: each call repeats the one before the previous (both remembered). */
static void alternating(void)
{
    double a[2][3], b[2][3];
    mcoll_stats_t s0 = stats("allreduce");
    for (int it = 0; it < 20; it++) {
        int k = it & 1;
        for (int i = 0; i < 3; i++) a[k][i] = rank + it + i;
        MPI_Allreduce(a[k], b[k], 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < 3; i++) EXPECT(b[k][i] == sum_of(size, it, i), "alternating it %d [%d] = %g", it, i, b[k][i]);
    }
    uint64_t rep = stats("allreduce").repeats - s0.repeats;
    EXPECT(rep >= 18, "alternating buffers: %llu repeats, want 18", (unsigned long long)rep);
}

static void reduce_loop(int rotate)
{
    int v[4], out[4];
    mcoll_stats_t s0 = stats("reduce");
    for (int it = 0; it < 30; it++) {
        int root = rotate ? it % size : size - 1;
        for (int i = 0; i < 4; i++) v[i] = rank * (it + 1) + i, out[i] = -1;
        MPI_Reduce(v, out, 4, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int i = 0; i < 4; i++)
                EXPECT(out[i] == (size - 1) * (it + 1) + i, "reduce root %d it %d [%d] = %d", root, it, i, out[i]);
    }
    uint64_t rep = stats("reduce").repeats - s0.repeats;
    /* up to 64 roots in turn: each root's call is remembered (one miss per root) */
    if (rotate && size <= 64)
        EXPECT(rep + size + 1 >= 30, "reduce with roots rotating over %d: %llu repeats, want %d", size,
               (unsigned long long)rep, 30 - size);
    if (!rotate) EXPECT(rep >= 28, "reduce at a fixed root: %llu repeats, want 29", (unsigned long long)rep);
}

static void bcast_loop(void)
{
    long x[6];
    mcoll_stats_t s0 = stats("bcast");
    for (int it = 0; it < 25; it++) {
        for (int i = 0; i < 6; i++) x[i] = rank == 0 ? 1000L * it + i : -1;
        MPI_Bcast(x, 6, MPI_LONG, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 6; i++) EXPECT(x[i] == 1000L * it + i, "bcast it %d [%d] = %ld", it, i, x[i]);
    }
    EXPECT(stats("bcast").repeats - s0.repeats >= 23, "bcast: %llu repeats, want 24",
           (unsigned long long)(stats("bcast").repeats - s0.repeats));
}

/* A contiguous derived type of k ints, freed after use: the next one may get the same handle
 * with another size; the identical-looking bcast must move the new size. */
static void derived_reused(void)
{
    int buf[64];
    mcoll_stats_t s0 = stats("bcast");
    MPI_Datatype first = MPI_DATATYPE_NULL;
    for (int k = 4; k <= 32; k *= 2) {
        MPI_Datatype t;
        MPI_Type_contiguous(k, MPI_INT, &t);
        MPI_Type_commit(&t);
        if (k == 4) first = t;
        for (int rep = 0; rep < 2; rep++) {
            for (int i = 0; i < 64; i++) buf[i] = rank == 0 ? k * 100 + i : -7;
            MPI_Bcast(buf, 1, t, 0, MPI_COMM_WORLD);
            for (int i = 0; i < 64; i++) {
                int want = i < k ? k * 100 + i : (rank == 0 ? k * 100 + i : -7);
                EXPECT(buf[i] == want, "derived type of %d ints (handle %s): [%d] = %d, want %d", k,
                       t == first ? "reused" : "new", i, buf[i], want);
            }
        }
        MPI_Type_free(&t);
    }
    EXPECT(stats("bcast").repeats == s0.repeats, "a derived datatype was remembered");
}

static void forced_between(void)
{
    double a = rank + 1, b = 0;
    if (mcoll_set_alg("allreduce", "recursive_doubling")) {
        EXPECT(0, "recursive_doubling not registered");
        return;
    }
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const char *got = mcoll_last_alg("allreduce");
    EXPECT(got && !strcmp(got, "recursive_doubling"), "forced recursive_doubling, ran %s", got ? got : "-");
    mcoll_set_alg("allreduce", "ring");
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    got = mcoll_last_alg("allreduce");
    EXPECT(got && !strcmp(got, "ring"), "forced ring after an identical call, ran %s", got ? got : "-");
    EXPECT(b == (double)size * (size + 1) / 2, "forced ring: %g", b);
    /* the same algorithm set again changes nothing: the identical call stays remembered */
    mcoll_stats_t s0 = stats("allreduce");
    mcoll_set_alg("allreduce", "ring");
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    EXPECT(stats("allreduce").repeats == s0.repeats + 1, "ring set again: the identical call was not remembered");
    got = mcoll_last_alg("allreduce");
    EXPECT(got && !strcmp(got, "ring"), "ring set again, ran %s", got ? got : "-");
    mcoll_set_alg("allreduce", "auto");
}

/* A communicator used, freed, and a new one (of another size when possible) with the same
 * buffers: the new one's results, not the old one's algorithm or ranks. */
static void comm_reused(void)
{
    for (int round = 0; round < 3; round++) {
        MPI_Comm c;
        if (round == 1) MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
        else MPI_Comm_dup(MPI_COMM_WORLD, &c);
        allreduce_loop(c, 0);
        MPI_Comm_free(&c);
    }
}

static void scan_loop(void)
{
    long v, out;
    for (int it = 0; it < 10; it++) {
        v = rank + it;
        MPI_Scan(&v, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        EXPECT(out == (long)rank * (rank + 1) / 2 + (long)(rank + 1) * it, "scan it %d = %ld", it, out);
    }
}

/* After a valid call, the same call with one invalid argument must still raise its class. */
static void errors_after(void)
{
    double a = 1, b = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int rc = MPI_Allreduce(&a, &b, -1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_COUNT, "count -1 after valid calls: class %d, want MPI_ERR_COUNT", cls);
    rc = MPI_Bcast(&a, 1, MPI_DOUBLE, size, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    EXPECT(rc != MPI_SUCCESS && cls == MPI_ERR_ROOT, "bcast root %d: class %d, want MPI_ERR_ROOT", size, cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    allreduce_loop(MPI_COMM_WORLD, 0);
    allreduce_loop(MPI_COMM_WORLD, 1);
    alternating();
    reduce_loop(0);
    reduce_loop(1);
    bcast_loop();
    derived_reused();
    forced_between();
    comm_reused();
    scan_loop();
    errors_after();
    mcoll_stats_t b0 = stats("barrier");
    for (int i = 0; i < 10; i++) MPI_Barrier(MPI_COMM_WORLD);
    mcoll_stats_t b1 = stats("barrier");
    EXPECT(b1.handled - b0.handled == 10 && b1.repeats - b0.repeats >= 9, "barrier: %llu handled, %llu repeats",
           (unsigned long long)(b1.handled - b0.handled), (unsigned long long)(b1.repeats - b0.repeats));
    int all = 0;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all ? "REPEAT CHECK FAILED (%d)\n" : "REPEAT CHECK PASSED\n", all);
    MPI_Finalize();
    return all != 0;
}
