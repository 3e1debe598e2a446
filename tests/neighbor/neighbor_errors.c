/* Bad arguments to the persistent neighbor alltoallv: each gives the MPI error class the
 * standard names, through the communicator's error handler (MPI_ERRORS_RETURN here), on every
 * rank and without a hang, also when only one rank's arguments are wrong; a valid exchange
 * still works afterwards. Prints "neighbor-errors: ALL PASSED" on rank 0. */
#include "mcoll.h"
#include <stdio.h>

static int rank, size, fails;

static void expect_class(int rc, int want, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (cls != want) {
        printf("FAIL rank %d: %s: class %d, expected %d\n", rank, what, cls, want);
        fails++;
    }
}

/* ring: receive from the left neighbour, send to the right one, one int each */
static MPI_Comm ring(void)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g);
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    return g;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm g = ring();
    int one = 1, zero = 0, neg = -1, sbuf = rank, rbuf = -1;
    int64_t ids[1] = {rank};
    MPI_Request req = MPI_REQUEST_NULL;

    /* not a distributed-graph communicator */
    int rc = mcoll_neighbor_alltoallv_init(&sbuf, &one, &zero, MPI_INT, &rbuf, &one, &zero, MPI_INT,
                                           MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    expect_class(rc, MPI_ERR_TOPOLOGY, "init on MPI_COMM_WORLD");
    rc = mcoll_neighbor_alltoallv_init(&sbuf, &one, &zero, MPI_INT, &rbuf, &one, &zero, MPI_INT, MPI_COMM_NULL,
                                       MPI_INFO_NULL, &req);
    expect_class(rc, MPI_ERR_COMM, "init on MPI_COMM_NULL");
    rc = mcoll_neighbor_alltoallv_init(&sbuf, &one, &zero, MPI_INT, &rbuf, &one, &zero, MPI_INT, g,
                                       MPI_INFO_NULL, NULL);
    expect_class(rc, MPI_ERR_REQUEST, "null request");
    rc = mcoll_neighbor_alltoallv_init_ext(&sbuf, &one, &zero, MPI_INT, &rbuf, &one, &zero, MPI_INT, ids, NULL,
                                           g, MPI_INFO_NULL, &req);
    expect_class(rc, MPI_ERR_ARG, "send ids without receive ids");
    rc = mcoll_neighbor_alltoallv_init(&sbuf, &one, &zero, MPI_DATATYPE_NULL, &rbuf, &one, &zero, MPI_INT, g,
                                       MPI_INFO_NULL, &req);
    expect_class(rc, MPI_ERR_TYPE, "null send type");
    /* one rank's count is negative: it gets MPI_ERR_COUNT, the others an error too (no hang) */
    rc = mcoll_neighbor_alltoallv_init(&sbuf, rank == 0 ? &neg : &one, &zero, MPI_INT, &rbuf, &one, &zero,
                                       MPI_INT, g, MPI_INFO_NULL, &req);
    if (rank == 0)
        expect_class(rc, MPI_ERR_COUNT, "negative count on this rank");
    else if (rc == MPI_SUCCESS) {
        printf("FAIL rank %d: another rank's negative count gave MPI_SUCCESS\n", rank);
        fails++;
    }
    if (req != MPI_REQUEST_NULL) {
        printf("FAIL rank %d: a failed init returned a request\n", rank);
        fails++;
    }

    /* the library still works */
    rc = mcoll_neighbor_alltoallv_init(&sbuf, &one, &zero, MPI_INT, &rbuf, &one, &zero, MPI_INT, g, MPI_INFO_NULL,
                                       &req);
    expect_class(rc, MPI_SUCCESS, "valid init");
    if (rc == MPI_SUCCESS) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (rbuf != (rank + size - 1) % size) {
            printf("FAIL rank %d: received %d\n", rank, rbuf);
            fails++;
        }
        MPI_Request_free(&req);
    }
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(total ? "neighbor-errors: %d FAILURES\n" : "neighbor-errors: ALL PASSED\n", total);
    MPI_Comm_free(&g);
    MPI_Finalize();
    return total != 0;
}
