/* Bad arguments: every collective with a negative count, an invalid root, MPI_DATATYPE_NULL,
 * MPI_OP_NULL, an op the datatype does not take (MPI_BAND on Fortran's MPI_REAL) and
 * MPI_COMM_NULL must return the same error class through mcoll (MPI_*) as the
 * native library (PMPI_*), invoke the error handler the same number of times, and neither
 * crash nor hang. The bad argument is the same on every rank, so no rank proceeds to
 * communicate while another returns. Run once with MPI_ERRORS_RETURN and once with a
 * counting error handler on MPI_COMM_WORLD (which also handles MPI_COMM_NULL errors). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BAD_COUNT, BAD_ROOT, BAD_TYPE, BAD_OP, BAD_OPTYPE, BAD_COMM, NBAD };
static const char *const bad_names[NBAD] = {"negative count", "invalid root", "MPI_DATATYPE_NULL",
                                            "MPI_OP_NULL", "MPI_BAND on MPI_REAL", "MPI_COMM_NULL"};

enum { F_ROOT = 1, F_OP = 2, F_TYPE = 4, F_COUNT = 8 };
static const struct { const char *name; unsigned flags; } colls[] = {
    {"barrier", 0}, {"bcast", F_ROOT | F_TYPE | F_COUNT}, {"reduce", F_ROOT | F_OP | F_TYPE | F_COUNT},
    {"allreduce", F_OP | F_TYPE | F_COUNT}, {"reduce_scatter", F_OP | F_TYPE | F_COUNT},
    {"reduce_scatter_block", F_OP | F_TYPE | F_COUNT}, {"allgather", F_TYPE | F_COUNT},
    {"allgatherv", F_TYPE | F_COUNT}, {"gather", F_ROOT | F_TYPE | F_COUNT},
    {"gatherv", F_ROOT | F_TYPE | F_COUNT}, {"scatter", F_ROOT | F_TYPE | F_COUNT},
    {"scatterv", F_ROOT | F_TYPE | F_COUNT}, {"alltoall", F_TYPE | F_COUNT},
    {"alltoallv", F_TYPE | F_COUNT}, {"scan", F_OP | F_TYPE | F_COUNT}, {"exscan", F_OP | F_TYPE | F_COUNT},
};
#define NCOLLS ((int)(sizeof colls / sizeof colls[0]))

/* Arguments of one call: valid except for the one `bad` names. */
typedef struct {
    int count, root;
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Comm comm;
    int *cnts, *displs;          /* per rank, for the v-collectives */
    int *sbuf, *rbuf;
} args_t;

static int size, rank, failures;
static int handler_calls, handler_last;

static void counting_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_last = *code;
}

static void make_args(args_t *a, int bad, int p)
{
    a->count = bad == BAD_COUNT ? -1 : 2;
    a->root = bad == BAD_ROOT ? p : p - 1;
    a->dt = bad == BAD_TYPE ? MPI_DATATYPE_NULL : bad == BAD_OPTYPE ? MPI_REAL : MPI_INT;
    a->op = bad == BAD_OP ? MPI_OP_NULL : bad == BAD_OPTYPE ? MPI_BAND : MPI_SUM;
    a->comm = bad == BAD_COMM ? MPI_COMM_NULL : MPI_COMM_WORLD;
    for (int i = 0; i < p; i++) {
        a->cnts[i] = a->count;
        a->displs[i] = 2 * i;
    }
}

/* One collective through MPI_* (mcoll) or PMPI_* (native). */
#define CALL(native, fn, ...) ((native) ? PMPI_##fn(__VA_ARGS__) : MPI_##fn(__VA_ARGS__))

static int call(int c, const args_t *a, int nat)
{
    int n = a->count;
    void *s = a->sbuf, *r = a->rbuf;
    switch (c) {
    case 0: return CALL(nat, Barrier, a->comm);
    case 1: return CALL(nat, Bcast, r, n, a->dt, a->root, a->comm);
    case 2: return CALL(nat, Reduce, s, r, n, a->dt, a->op, a->root, a->comm);
    case 3: return CALL(nat, Allreduce, s, r, n, a->dt, a->op, a->comm);
    case 4: return CALL(nat, Reduce_scatter, s, r, a->cnts, a->dt, a->op, a->comm);
    case 5: return CALL(nat, Reduce_scatter_block, s, r, n, a->dt, a->op, a->comm);
    case 6: return CALL(nat, Allgather, s, n, a->dt, r, n, a->dt, a->comm);
    case 7: return CALL(nat, Allgatherv, s, n, a->dt, r, a->cnts, a->displs, a->dt, a->comm);
    case 8: return CALL(nat, Gather, s, n, a->dt, r, n, a->dt, a->root, a->comm);
    case 9: return CALL(nat, Gatherv, s, n, a->dt, r, a->cnts, a->displs, a->dt, a->root, a->comm);
    case 10: return CALL(nat, Scatter, s, n, a->dt, r, n, a->dt, a->root, a->comm);
    case 11: return CALL(nat, Scatterv, s, a->cnts, a->displs, a->dt, r, n, a->dt, a->root, a->comm);
    case 12: return CALL(nat, Alltoall, s, n, a->dt, r, n, a->dt, a->comm);
    case 13: return CALL(nat, Alltoallv, s, a->cnts, a->displs, a->dt, r, a->cnts, a->displs, a->dt, a->comm);
    case 14: return CALL(nat, Scan, s, r, n, a->dt, a->op, a->comm);
    default: return CALL(nat, Exscan, s, r, n, a->dt, a->op, a->comm);
    }
}

static const char *class_name(int rc)
{
    static char buf[MPI_MAX_ERROR_STRING];
    int cls = rc, len;
    PMPI_Error_class(rc, &cls);
    PMPI_Error_string(cls, buf, &len);
    return buf;
}

static const char *native_crashes(int c, int bad);

/* A call the native MPI crashes on: mcoll raises the standard's class itself (MPI_ERR_COMM
 * for a null communicator, MPI_ERR_COUNT for a negative count), once. */
static void mcoll_only(int c, int bad, int handler_mode, args_t *a)
{
    make_args(a, bad, size);
    handler_calls = 0;
    int rc = call(c, a, 0), cls = rc, want = bad == BAD_COMM ? MPI_ERR_COMM : MPI_ERR_COUNT;
    PMPI_Error_class(rc, &cls);
    if (cls != want || (handler_mode && handler_calls != 1)) {
        failures++;
        printf("FAIL rank=%d %s with %s: mcoll returned %s (handler called %d times), want %s once\n",
               rank, colls[c].name, bad_names[bad], class_name(rc), handler_calls, class_name(want));
    } else if (rank == 0 && handler_mode == 0) {
        printf("ok %-22s %-18s -> %s  (native crashes: %s)\n", colls[c].name, bad_names[bad],
               class_name(rc), native_crashes(c, bad));
    }
}

static void one(int c, int bad, int handler_mode, args_t *a)
{
    if (native_crashes(c, bad)) {
        mcoll_only(c, bad, handler_mode, a);
        return;
    }
    make_args(a, bad, size);
    handler_calls = 0;
    int rc_m = call(c, a, 0), calls_m = handler_calls;
    handler_calls = 0;
    int rc_p = call(c, a, 1), calls_p = handler_calls;
    int cls_m = rc_m, cls_p = rc_p;
    PMPI_Error_class(rc_m, &cls_m);
    PMPI_Error_class(rc_p, &cls_p);
    const char *mode = handler_mode ? "counting handler" : "MPI_ERRORS_RETURN";
    if (cls_m != cls_p) {
        failures++;
        printf("FAIL rank=%d %s with %s (%s): mcoll returned class %d (%s)", rank, colls[c].name,
               bad_names[bad], mode, cls_m, class_name(rc_m));
        printf(", native class %d (%s)\n", cls_p, class_name(rc_p));
    } else if (handler_mode && calls_m != calls_p) {
        failures++;
        printf("FAIL rank=%d %s with %s: error handler called %d times through mcoll, %d natively\n",
               rank, colls[c].name, bad_names[bad], calls_m, calls_p);
    } else if (rank == 0 && handler_mode == 0) {
        printf("ok %-22s %-18s -> %s%s\n", colls[c].name, bad_names[bad], class_name(rc_p),
               cls_p == MPI_SUCCESS ? "  (note: the native MPI accepts it)" : "");
    }
}

/* Calls the native library itself crashes on (found by probing each case in its own
 * process): they cannot be compared with the native result, so mcoll_only() checks them. */
static const char *native_crashes(int c, int bad)
{
#if defined(OMPI_MAJOR_VERSION)
    if (c == 6 && bad == BAD_COMM) return "Open MPI 4.1 MPI_Allgather segfaults on MPI_COMM_NULL";
#endif
#if defined(MPICH_VERSION)
    if (bad == BAD_COUNT && (c == 2 || c == 3 || c == 5 || c == 14 || c == 15))
        return "MPICH 4.0 does not check negative counts of reductions and crashes";
#endif
    (void)c;
    (void)bad;
    return NULL;
}

static int applicable(unsigned flags, int bad)
{
    switch (bad) {
    case BAD_COUNT: return (flags & F_COUNT) != 0;
    case BAD_ROOT: return (flags & F_ROOT) != 0;
    case BAD_TYPE: return (flags & F_TYPE) != 0;
    case BAD_OP: case BAD_OPTYPE: return (flags & F_OP) != 0;
    default: return 1;
    }
}

/* After all the errors mcoll must still work. */
static void still_works(void)
{
    int v = rank + 1, sum = 0;
    int rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || sum != size * (size + 1) / 2) {
        failures++;
        printf("FAIL rank=%d: MPI_Allreduce after the error tests: rc=%d sum=%d\n", rank, rc, sum);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    args_t a;
    a.cnts = calloc((size_t)size, sizeof(int));
    a.displs = calloc((size_t)size, sizeof(int));
    a.sbuf = calloc((size_t)size * 4 + 8, sizeof(int));
    a.rbuf = calloc((size_t)size * 4 + 8, sizeof(int));
    MPI_Errhandler counting;
    PMPI_Comm_create_errhandler(counting_handler, &counting);
    for (int mode = 0; mode < 2; mode++) {
        PMPI_Comm_set_errhandler(MPI_COMM_WORLD, mode ? counting : MPI_ERRORS_RETURN);
        for (int c = 0; c < NCOLLS; c++)
            for (int bad = 0; bad < NBAD; bad++)
                if (applicable(colls[c].flags, bad)) one(c, bad, mode, &a);
    }
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Errhandler_free(&counting);
    still_works();
    int total = 0;
    PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("mcoll-errors: %s (%d failures, %d ranks)\n", total ? "FAILED" : "ALL PASSED", total, size);
    free(a.cnts);
    free(a.displs);
    free(a.sbuf);
    free(a.rbuf);
    MPI_Finalize();
    return total ? 1 : 0;
}
