/* Fortran entry points of the interposed calls.
 *
 * A Fortran program reaches the MPI library through its Fortran bindings, which do not always
 * go through the C MPI_* symbols mcoll defines:
 * - Open MPI 4.1: mpif.h, `use mpi` and `use mpi_f08` all convert their arguments and call
 *   PMPI_* directly, so every Fortran call is defined here (mpi_allreduce_ and its other
 *   name manglings for mpif.h / `use mpi`, mpi_allreduce_f08_ for `use mpi_f08`);
 * - MPICH 4.0: mpif.h, `use mpi` and the `use mpi_f08` calls that take a buffer call MPI_*
 *   already; the `use mpi_f08` calls without one (barrier, finalize, alloc_mem, and the request
 *   calls mcoll's neighbor requests need) call PMPI_*, so only those are defined here.
 * Each converts the handles (MPI_*_f2c), Fortran's MPI_IN_PLACE and MPI_BOTTOM (addresses of
 * the library's Fortran sentinels) and calls the C entry point, which selects an algorithm or
 * falls back to the native MPI. A handle the native MPI cannot convert goes to PMPI_*
 * unchanged, so the native raises its own error. `ierror` is optional in `use mpi_f08`: NULL
 * when the caller left it out. */
#include "entry.h"
#include <stdint.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER counts passed as C int arrays");

/* F_ENTRY(name, NAME, params): the Fortran symbols of MPI_<NAME>, which run f_<name>
 * (F_ENTRY_AS: f_<impl>). */
#define F_ALIAS(sym, impl, params) void sym params __attribute__((alias("f_" #impl)));
#if defined(OPEN_MPI)
#define MC_F_BUFFERS 1
#define F_ENTRY_AS(name, NAME, impl, params)                                                   \
    F_ALIAS(mpi_##name##_, impl, params) F_ALIAS(mpi_##name, impl, params)                     \
    F_ALIAS(mpi_##name##__, impl, params) F_ALIAS(MPI_##NAME, impl, params)                    \
    F_ALIAS(mpi_##name##_f08_, impl, params)
#define F_ENTRY(name, NAME, params) F_ENTRY_AS(name, NAME, name, params)
#define F_ENTRY_NOBUF F_ENTRY
#else
#define MC_F_BUFFERS 0
#define F_ENTRY_NOBUF(name, NAME, params) F_ALIAS(mpi_##name##_f08_, name, params)
#endif

static void f_ret(MPI_Fint *ierr, int rc)
{
    if (ierr) *ierr = (MPI_Fint)rc;
}

/* Open MPI's f2c returns a null pointer for an index that names no object. */
static int f_ok(const void *handle)
{
#if defined(OPEN_MPI)
    return handle != NULL;
#else
    (void)handle;
    return 1;
#endif
}
#define F_OK(h) f_ok((const void *)(uintptr_t)(h))
/* The entry point to call: mcoll's, or the native one for a handle it could not convert. */
#define F_PICK(ok, fn) ((ok) ? MPI_##fn : PMPI_##fn)

/* ------------------------------------------------------------------ without buffers */
static void f_barrier(MPI_Fint *comm, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    f_ret(ierr, F_PICK(F_OK(c), Barrier)(c));
}
F_ENTRY_NOBUF(barrier, BARRIER, (MPI_Fint *, MPI_Fint *))

static void f_finalize(MPI_Fint *ierr) { f_ret(ierr, MPI_Finalize()); }
F_ENTRY_NOBUF(finalize, FINALIZE, (MPI_Fint *))

/* baseptr: the caller's INTEGER(KIND=MPI_ADDRESS_KIND) or TYPE(C_PTR), which receives the
 * address */
static void f_alloc_mem(MPI_Aint *size, MPI_Fint *info, void *baseptr, MPI_Fint *ierr)
{
    MPI_Info i = PMPI_Info_f2c(*info);
    f_ret(ierr, F_PICK(F_OK(i), Alloc_mem)(*size, i, baseptr));
}
F_ENTRY_NOBUF(alloc_mem, ALLOC_MEM, (MPI_Aint *, MPI_Fint *, void *, MPI_Fint *))
#if MC_F_BUFFERS
/* Open MPI's `use mpi` overload for a TYPE(C_PTR) baseptr */
F_ENTRY_AS(alloc_mem_cptr, ALLOC_MEM_CPTR, alloc_mem, (MPI_Aint *, MPI_Fint *, void *, MPI_Fint *))
#endif

#if MC_F_BUFFERS
/* ------------------------------------------------------------------ with buffers */
/* Open MPI's Fortran sentinels (common blocks; the name depends on the compiler's mangling) */
extern int mpi_fortran_in_place __attribute__((weak)), mpi_fortran_in_place_ __attribute__((weak)),
    mpi_fortran_in_place__ __attribute__((weak)), MPI_FORTRAN_IN_PLACE __attribute__((weak));
extern int mpi_fortran_bottom __attribute__((weak)), mpi_fortran_bottom_ __attribute__((weak)),
    mpi_fortran_bottom__ __attribute__((weak)), MPI_FORTRAN_BOTTOM __attribute__((weak));

static void *fbuf(void *b)
{
    if (!b) return b;
    if (b == &mpi_fortran_in_place_ || b == &mpi_fortran_in_place || b == &mpi_fortran_in_place__ ||
        b == &MPI_FORTRAN_IN_PLACE)
        return MPI_IN_PLACE;
    if (b == &mpi_fortran_bottom_ || b == &mpi_fortran_bottom || b == &mpi_fortran_bottom__ ||
        b == &MPI_FORTRAN_BOTTOM)
        return MPI_BOTTOM;
    return b;
}

/* The handles of one call, converted; ok when all of them converted. */
typedef struct {
    MPI_Comm comm;
    MPI_Datatype st, rt;
    MPI_Op op;
    int ok;
} fh_t;

static fh_t fh(const MPI_Fint *comm, const MPI_Fint *st, const MPI_Fint *rt, const MPI_Fint *op)
{
    fh_t h = {PMPI_Comm_f2c(*comm), st ? PMPI_Type_f2c(*st) : MPI_DATATYPE_NULL,
              rt ? PMPI_Type_f2c(*rt) : MPI_DATATYPE_NULL, op ? PMPI_Op_f2c(*op) : MPI_OP_NULL, 1};
    h.ok = F_OK(h.comm) && (!st || F_OK(h.st)) && (!rt || F_OK(h.rt)) && (!op || F_OK(h.op));
    return h;
}

static void f_bcast(void *buf, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, t, NULL, NULL);
    f_ret(ierr, F_PICK(h.ok, Bcast)(fbuf(buf), *n, h.st, *root, h.comm));
}
F_ENTRY(bcast, BCAST, (void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_reduce(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *root,
                     MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, t, NULL, op);
    f_ret(ierr, F_PICK(h.ok, Reduce)(fbuf(s), fbuf(r), *n, h.st, h.op, *root, h.comm));
}
F_ENTRY(reduce, REDUCE, (void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_allreduce(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                        MPI_Fint *ierr)
{
    fh_t h = fh(comm, t, NULL, op);
    f_ret(ierr, F_PICK(h.ok, Allreduce)(fbuf(s), fbuf(r), *n, h.st, h.op, h.comm));
}
F_ENTRY(allreduce, ALLREDUCE, (void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_scan(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, t, NULL, op);
    f_ret(ierr, F_PICK(h.ok, Scan)(fbuf(s), fbuf(r), *n, h.st, h.op, h.comm));
}
F_ENTRY(scan, SCAN, (void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_exscan(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, t, NULL, op);
    f_ret(ierr, F_PICK(h.ok, Exscan)(fbuf(s), fbuf(r), *n, h.st, h.op, h.comm));
}
F_ENTRY(exscan, EXSCAN, (void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_reduce_scatter_block(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op,
                                   MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, t, NULL, op);
    f_ret(ierr, F_PICK(h.ok, Reduce_scatter_block)(fbuf(s), fbuf(r), *n, h.st, h.op, h.comm));
}
F_ENTRY(reduce_scatter_block, REDUCE_SCATTER_BLOCK,
        (void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_reduce_scatter(void *s, void *r, MPI_Fint *counts, MPI_Fint *t, MPI_Fint *op,
                             MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, t, NULL, op);
    f_ret(ierr, F_PICK(h.ok, Reduce_scatter)(fbuf(s), fbuf(r), counts, h.st, h.op, h.comm));
}
F_ENTRY(reduce_scatter, REDUCE_SCATTER,
        (void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_allgather(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                        MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, st, rt, NULL);
    f_ret(ierr, F_PICK(h.ok, Allgather)(fbuf(s), *sn, h.st, fbuf(r), *rn, h.rt, h.comm));
}
F_ENTRY(allgather, ALLGATHER,
        (void *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_alltoall(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                       MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, st, rt, NULL);
    f_ret(ierr, F_PICK(h.ok, Alltoall)(fbuf(s), *sn, h.st, fbuf(r), *rn, h.rt, h.comm));
}
F_ENTRY(alltoall, ALLTOALL,
        (void *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_gather(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                     MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, st, rt, NULL);
    f_ret(ierr, F_PICK(h.ok, Gather)(fbuf(s), *sn, h.st, fbuf(r), *rn, h.rt, *root, h.comm));
}
F_ENTRY(gather, GATHER, (void *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                         MPI_Fint *, MPI_Fint *))

static void f_scatter(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                      MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, st, rt, NULL);
    f_ret(ierr, F_PICK(h.ok, Scatter)(fbuf(s), *sn, h.st, fbuf(r), *rn, h.rt, *root, h.comm));
}
F_ENTRY(scatter, SCATTER, (void *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                           MPI_Fint *, MPI_Fint *))

static void f_allgatherv(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rcounts,
                         MPI_Fint *displs, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, st, rt, NULL);
    f_ret(ierr, F_PICK(h.ok, Allgatherv)(fbuf(s), *sn, h.st, fbuf(r), rcounts, displs, h.rt, h.comm));
}
F_ENTRY(allgatherv, ALLGATHERV, (void *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *,
                                 MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_gatherv(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rcounts,
                      MPI_Fint *displs, MPI_Fint *rt, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, st, rt, NULL);
    f_ret(ierr, F_PICK(h.ok, Gatherv)(fbuf(s), *sn, h.st, fbuf(r), rcounts, displs, h.rt, *root, h.comm));
}
F_ENTRY(gatherv, GATHERV, (void *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                           MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_scatterv(void *s, MPI_Fint *scounts, MPI_Fint *displs, MPI_Fint *st, void *r,
                       MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, st, rt, NULL);
    f_ret(ierr, F_PICK(h.ok, Scatterv)(fbuf(s), scounts, displs, h.st, fbuf(r), *rn, h.rt, *root, h.comm));
}
F_ENTRY(scatterv, SCATTERV, (void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *,
                             MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_alltoallv(void *s, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *st, void *r,
                        MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *ierr)
{
    fh_t h = fh(comm, st, rt, NULL);
    f_ret(ierr, F_PICK(h.ok, Alltoallv)(fbuf(s), scounts, sdispls, h.st, fbuf(r), rcounts, rdispls,
                                        h.rt, h.comm));
}
F_ENTRY(alltoallv, ALLTOALLV, (void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *,
                               MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_free_mem(void *base, MPI_Fint *ierr) { f_ret(ierr, MPI_Free_mem(base)); }
F_ENTRY(free_mem, FREE_MEM, (void *, MPI_Fint *))
#endif

#if defined(MPICH) && MPI_VERSION >= 4
/* ------------------------------------------------------------------ requests (MPICH mpi_f08)
 * A persistent neighbor request of mcoll (MPI_Neighbor_alltoallv_init, which mpi_f08 reaches
 * through MPI_*) must be started, waited for, tested and freed by mcoll (src/pmpi/neighbor.c):
 * MPICH's mpi_f08 request calls go to PMPI_*, which would start the inactive receive standing
 * for it and wait forever. In MPICH a request handle is the Fortran integer itself (f2c is a
 * cast) and TYPE(MPI_Status) is the C MPI_Status; Fortran indices count from 1. */
_Static_assert(sizeof(MPI_Request) == sizeof(MPI_Fint), "MPICH request handles are Fortran integers");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPICH's TYPE(MPI_Status) is MPI_Status");

static MPI_Status *f08_status(MPI_F08_status *s)
{
    return s == MPI_F08_STATUS_IGNORE ? MPI_STATUS_IGNORE : (MPI_Status *)(void *)s;
}

static MPI_Status *f08_statuses(MPI_F08_status *s)
{
    return s == MPI_F08_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : (MPI_Status *)(void *)s;
}

#define F_REQS(r) ((MPI_Request *)(void *)(r))

/* C's 0-based index (or MPI_UNDEFINED) as Fortran's */
static void f_index(int rc, MPI_Fint *idx, int n)
{
    for (int k = 0; rc == MPI_SUCCESS && k < n; k++)
        if (idx[k] != MPI_UNDEFINED) idx[k]++;
}

static void f_start(MPI_Fint *req, MPI_Fint *ierr) { f_ret(ierr, MPI_Start(F_REQS(req))); }
F_ENTRY_NOBUF(start, START, (MPI_Fint *, MPI_Fint *))

static void f_startall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *ierr)
{
    f_ret(ierr, MPI_Startall(*n, F_REQS(reqs)));
}
F_ENTRY_NOBUF(startall, STARTALL, (MPI_Fint *, MPI_Fint *, MPI_Fint *))

static void f_request_free(MPI_Fint *req, MPI_Fint *ierr) { f_ret(ierr, MPI_Request_free(F_REQS(req))); }
F_ENTRY_NOBUF(request_free, REQUEST_FREE, (MPI_Fint *, MPI_Fint *))

static void f_wait(MPI_Fint *req, MPI_F08_status *st, MPI_Fint *ierr)
{
    f_ret(ierr, MPI_Wait(F_REQS(req), f08_status(st)));
}
F_ENTRY_NOBUF(wait, WAIT, (MPI_Fint *, MPI_F08_status *, MPI_Fint *))

static void f_waitall(MPI_Fint *n, MPI_Fint *reqs, MPI_F08_status *st, MPI_Fint *ierr)
{
    f_ret(ierr, MPI_Waitall(*n, F_REQS(reqs), f08_statuses(st)));
}
F_ENTRY_NOBUF(waitall, WAITALL, (MPI_Fint *, MPI_Fint *, MPI_F08_status *, MPI_Fint *))

static void f_waitany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *idx, MPI_F08_status *st, MPI_Fint *ierr)
{
    int rc = MPI_Waitany(*n, F_REQS(reqs), idx, f08_status(st));
    f_index(rc, idx, 1);
    f_ret(ierr, rc);
}
F_ENTRY_NOBUF(waitany, WAITANY, (MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_F08_status *, MPI_Fint *))

static void f_waitsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *out, MPI_Fint *idx, MPI_F08_status *st,
                       MPI_Fint *ierr)
{
    int rc = MPI_Waitsome(*n, F_REQS(reqs), out, idx, f08_statuses(st));
    f_index(rc, idx, rc == MPI_SUCCESS && *out != MPI_UNDEFINED ? *out : 0);
    f_ret(ierr, rc);
}
F_ENTRY_NOBUF(waitsome, WAITSOME, (MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_F08_status *, MPI_Fint *))

/* flag: a Fortran LOGICAL (1 is .TRUE. for gfortran, whose MPICH this is) */
static void f_test(MPI_Fint *req, MPI_Fint *flag, MPI_F08_status *st, MPI_Fint *ierr)
{
    int f = 0, rc = MPI_Test(F_REQS(req), &f, f08_status(st));
    *flag = f != 0;
    f_ret(ierr, rc);
}
F_ENTRY_NOBUF(test, TEST, (MPI_Fint *, MPI_Fint *, MPI_F08_status *, MPI_Fint *))

static void f_testall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *flag, MPI_F08_status *st, MPI_Fint *ierr)
{
    int f = 0, rc = MPI_Testall(*n, F_REQS(reqs), &f, f08_statuses(st));
    *flag = f != 0;
    f_ret(ierr, rc);
}
F_ENTRY_NOBUF(testall, TESTALL, (MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_F08_status *, MPI_Fint *))

static void f_testany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *idx, MPI_Fint *flag, MPI_F08_status *st,
                      MPI_Fint *ierr)
{
    int f = 0, rc = MPI_Testany(*n, F_REQS(reqs), idx, &f, f08_status(st));
    *flag = f != 0;
    f_index(rc, idx, 1);
    f_ret(ierr, rc);
}
F_ENTRY_NOBUF(testany, TESTANY, (MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_F08_status *, MPI_Fint *))

static void f_request_get_status(MPI_Fint *req, MPI_Fint *flag, MPI_F08_status *st, MPI_Fint *ierr)
{
    int f = 0, rc = MPI_Request_get_status(*F_REQS(req), &f, f08_status(st));
    *flag = f != 0;
    f_ret(ierr, rc);
}
F_ENTRY_NOBUF(request_get_status, REQUEST_GET_STATUS, (MPI_Fint *, MPI_Fint *, MPI_F08_status *, MPI_Fint *))

static void f_testsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *out, MPI_Fint *idx, MPI_F08_status *st,
                       MPI_Fint *ierr)
{
    int rc = MPI_Testsome(*n, F_REQS(reqs), out, idx, f08_statuses(st));
    f_index(rc, idx, rc == MPI_SUCCESS && *out != MPI_UNDEFINED ? *out : 0);
    f_ret(ierr, rc);
}
F_ENTRY_NOBUF(testsome, TESTSOME, (MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_F08_status *, MPI_Fint *))
#endif
