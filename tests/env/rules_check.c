/* MCOLL_RULES: runs a few collectives and checks (mcoll_last_alg) that the selection follows
 * tests/env/rules_test.rules, or with --builtin that a rejected file left the built-in table
 * in charge. Results are checked too, so a row cannot pick a broken path silently. */
#include <mcoll.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, rank, size;

static void expect(const char *coll, const char *want, int equal, const char *what)
{
    const char *got = mcoll_last_alg(coll);
    int ok = got && (equal ? !strcmp(got, want) : strcmp(got, want) != 0);
    if (!ok) {
        failures++;
        printf("FAIL rank %d: %s: %s ran %s, expected %s%s\n", rank, what, coll, got ? got : "(none)",
               equal ? "" : "anything but ", want);
    }
}

static void bcast(size_t n, const char *want, int equal)
{
    char *buf = malloc(n), what[64];
    for (size_t i = 0; i < n; i++) buf[i] = rank == 0 ? (char)(i * 7 + 1) : 0;
    MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (char)(i * 7 + 1)) {
            printf("FAIL rank %d: bcast of %zu bytes: wrong byte %zu\n", rank, n, i);
            failures++;
            break;
        }
    snprintf(what, sizeof what, "bcast of %zu bytes", n);
    expect("bcast", want, equal, what);
    free(buf);
}

static void others(int builtin)
{
    double x = rank + 1, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size + 1) / 2.0) printf("FAIL rank %d: allreduce %g\n", rank, sum), failures++;
    expect("allreduce", "reduce_bcast", !builtin, "allreduce of 8 bytes");
    MPI_Barrier(MPI_COMM_WORLD);
    expect("barrier", "double_ring", !builtin, "barrier");
    int *s = malloc(sizeof(int) * 16 * (size_t)size), *r = malloc(sizeof(int) * 16 * (size_t)size);
    for (int i = 0; i < 16 * size; i++) s[i] = rank * 1000 + i / 16;
    MPI_Alltoall(s, 16, MPI_INT, r, 16, MPI_INT, MPI_COMM_WORLD); /* 64 bytes per block */
    for (int i = 0; i < 16 * size; i++)
        if (r[i] != (i / 16) * 1000 + rank) {
            printf("FAIL rank %d: alltoall\n", rank), failures++;
            break;
        }
    expect("alltoall", "pmpi", !builtin, "alltoall of 64 bytes");
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    int builtin = argc > 1 && !strcmp(argv[1], "--builtin");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) {
        bcast(100, "linear", !builtin);
        bcast(8192, "split_binary", !builtin);
        bcast(128 * 1024, "pipeline", !builtin && size <= 3); /* row 3 covers 1-3 ranks only */
        others(builtin);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all ? "RULES FAILED (%d)\n" : "RULES PASSED\n", all);
    MPI_Finalize();
    return all != 0;
}
