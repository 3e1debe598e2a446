/* Acceptance of an exported native tuning file (mcoll-tune export): an ordinary MPI program,
 * NOT linked with mcoll. A MPI_SUM of doubles at 4 ranks whose order of additions identifies
 * the algorithm the native MPI ran: ranks hold 1e16, 1, -1e16, 1 and 1e16 + 1 rounds back to
 * 1e16, so pairing ranks 0+1 and 2+3 first gives (1e16 + 1) + (-1e16 + 1) = 0, pairing 0+2
 * and 1+3 first gives (1e16 - 1e16) + (1 + 1) = 2, other orders other values (rank 0's first
 * result element is compared; it is the same on every run of one algorithm).
 * Usage: tune_accept allreduce|reduce_scatter_block EXPECTED */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, bad;
    double in[8], out[8];
    static const double v[4] = {1e16, 1, -1e16, 1};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4 || argc != 3) {
        if (rank == 0)
            printf("FAIL: usage: mpiexec -n 4 tune_accept allreduce|reduce_scatter_block EXPECTED\n");
        MPI_Finalize();
        return 1;
    }
    double want = atof(argv[2]);
    for (int i = 0; i < 8; i++) in[i] = v[rank];
    if (!strcmp(argv[1], "allreduce"))
        MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Reduce_scatter_block(in, out, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    bad = out[0] != want;
    if (rank == 0)
        printf("native %s result %g, expected %g: %s\n", argv[1], out[0], want,
               bad ? "FAIL" : "TUNE ACCEPTED");
    MPI_Finalize();
    return rank == 0 && bad;
}
