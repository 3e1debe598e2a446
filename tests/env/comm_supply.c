/* The MPI's supply of communicators under mcoll. MPICH 4.0 has about 2048 context ids;
 * every communicator mcoll creates for its own use takes one, so an application that holds
 * many communicators could run out earlier than without mcoll, and when mcoll cannot make its
 * communicators the call must still succeed (the native MPI takes it).
 *
 *   comm_supply [--max N] [--p2p-every K]
 *
 * Pass 1, native (PMPI_*): duplicate MPI_COMM_WORLD until the MPI refuses or N exist, an
 * allreduce on each; all freed. Pass 2, through mcoll (MPI_*): the same, with an allreduce and
 * a bcast on each, and on every K-th a bcast by a point-to-point algorithm (binomial, forced),
 * which needs mcoll's private duplicate. Every result is checked; no collective may fail (only
 * the duplication at the end of the supply). On one node without point-to-point algorithms
 * (K = 0) mcoll creates no communicator, so pass 2 must hold as many as pass 1; with K > 0
 * it makes one for each communicator where such an algorithm ran, across nodes (virtual:
 * MCOLL_VNODE_SIZE) three for each (duplicate, node, lane), and the program's and mcoll's
 * together must use the whole supply. After the supply ran out, the calls on communicators mcoll could
 * not serve count as fallbacks and still give the right answer, and so do point-to-point
 * calls, repeated, on a communicator mcoll served before the supply ran out. */
#include "mcoll.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

static void fail(const char *what, int i, double got, double want)
{
    if (failures++ < 10) printf("FAIL rank %d: %s on communicator %d: got %g, expected %g\n", rank, what, i, got, want);
}

/* Duplicates until refused or max; returns how many exist. native: PMPI only. */
static int fill(MPI_Comm *c, int max, int native, int p2p_every)
{
    int n = 0;
    for (; n < max; n++) {
        int rc = native ? PMPI_Comm_dup(MPI_COMM_WORLD, &c[n]) : MPI_Comm_dup(MPI_COMM_WORLD, &c[n]);
        if (rc != MPI_SUCCESS) break;
        double x = rank + n, y = -1;
        rc = native ? PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c[n])
                    : MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c[n]);
        double want = (double)size * (size - 1) / 2 + (double)size * n;
        if (rc != MPI_SUCCESS) fail("allreduce returned an error", n, rc, MPI_SUCCESS);
        else if (y != want) fail("allreduce", n, y, want);
        if (native) continue;
        int forced = p2p_every > 0 && n % p2p_every == 0;
        if (forced) mcoll_set_alg("bcast", "binomial");
        double b = rank == n % size ? 1000.0 + n : -1;
        rc = MPI_Bcast(&b, 1, MPI_DOUBLE, n % size, c[n]);
        if (forced) mcoll_set_alg("bcast", "auto");
        if (rc != MPI_SUCCESS) fail("bcast returned an error", n, rc, MPI_SUCCESS);
        else if (b != 1000.0 + n) fail("bcast", n, b, 1000.0 + n);
    }
    return n;
}

int main(int argc, char **argv)
{
    int max = 3000, p2p_every = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--max")) max = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--p2p-every")) p2p_every = atoi(argv[i + 1]);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* the refused dup returns */
    MPI_Comm *c = malloc(sizeof(MPI_Comm) * (size_t)max);
    mcoll_comm_info_t info; /* (the world's context holds its communicators from here on) */
    int nodes = mcoll_comm_info(MPI_COMM_WORLD, &info) == MPI_SUCCESS ? info.nnodes : 1;
    int n1 = fill(c, max, 1, 0);
    for (int i = 0; i < n1; i++) PMPI_Comm_free(&c[i]);

    /* a communicator whose context exists before the supply runs out, with no duplicate yet
     * on one node: point-to-point calls on it afterwards (repeated: the remembered choice)
     * must go native, not run without their communicator */
    MPI_Comm early;
    MPI_Comm_dup(MPI_COMM_WORLD, &early);
    double one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, early);
    mcoll_stats_t before, after;
    mcoll_stats_get("allreduce", &before);
    int n2 = fill(c, max, 0, p2p_every);
    mcoll_set_alg("bcast", "binomial");
    for (int i = 0; i < 3; i++) {
        double b = rank == 0 ? 7.0 + i : -1;
        int rc = MPI_Bcast(&b, 1, MPI_DOUBLE, 0, early);
        if (rc != MPI_SUCCESS) fail("point-to-point bcast after the supply returned an error", -2, rc, MPI_SUCCESS);
        else if (b != 7.0 + i) fail("point-to-point bcast after the supply", -2, b, 7.0 + i);
    }
    mcoll_set_alg("bcast", "auto");
    mcoll_stats_get("allreduce", &after);
    /* mcoll's own: three per communicator across nodes; on one node one for each where a
     * point-to-point algorithm ran (every K-th), none otherwise. Together with the program's
     * they must use the whole supply, less a few ids for the transient split that finds the
     * nodes (or reach max). */
    int mine = nodes > 1 ? 3 * n2 : p2p_every > 0 ? (n2 + p2p_every - 1) / p2p_every : 0;
    if (n2 < max && n2 + mine < n1 - 4) {
        printf("FAIL rank %d: %d communicators through mcoll (and %d of its own), %d natively\n", rank, n2, mine,
               n1);
        failures++;
    }
    unsigned long long fb = (unsigned long long)(after.fallback - before.fallback);
    for (int i = 0; i < n2; i++) MPI_Comm_free(&c[i]);
    MPI_Comm_free(&early);
    /* everything still works */
    double x = 1, y = 0;
    if (MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS || y != size)
        fail("allreduce on the world afterwards", -1, y, size);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank)
        printf("%s: %d ranks, %d nodes; communicators natively %d, through mcoll %d (and %d of its own); "
               "%llu allreduce fallbacks on rank 0\n",
               all ? "FAILED" : "PASSED", size, nodes, n1, n2, mine, fb);
    free(c);
    MPI_Finalize();
    return all != 0;
}
