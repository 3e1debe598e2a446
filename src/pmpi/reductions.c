/* MPI_Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan. */
#include "entry.h"
#include <stdlib.h>
#include <string.h>

/* Common checks and normalization of a reduction. Returns 0 to fall back. a->bytes is set
 * whenever the datatype is valid (for the fallback counter). */
static int prep(mc_args_t *a, mc_coll_t c, const void *sbuf, void *rbuf, int count,
                MPI_Datatype dt, MPI_Op op, MPI_Comm comm, size_t vector_count)
{
    mc_dt_t d;
    memset(a, 0, sizeof *a);
    a->coll = c;
    a->op = MPI_OP_NULL;
    if (!mc_dt_get(dt, &d)) return 0;
    a->bytes = vector_count * (size_t)(d.extent > 0 ? d.extent : 0);
    if (!mc_comm_ok(comm) || count < 0 || !mc_reduction_ok(op, dt, &d, &a->commute)) return 0;
    if (sbuf == rbuf && sbuf != MPI_IN_PLACE && vector_count) return 0; /* aliasing: native decides */
    a->sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    a->rbuf = rbuf;
    a->count = (size_t)count;
    a->dtype = dt;
    a->extent = (size_t)d.extent;
    a->op = op;
    return 1;
}

int MPI_Allreduce(MC_CONST void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    mc_args_t a;
    mc_key_t k = {sbuf, rbuf, count, 0, dt, op};
    int rc;
    if (mc_run_again(comm, MC_ALLREDUCE, &k, &rc)) return rc;
    if (mc_precheck(comm, count, &rc)) return rc;
    if (prep(&a, MC_ALLREDUCE, sbuf, rbuf, count, dt, op, comm, (size_t)count) &&
        mc_run_key(comm, &a, mc_key_stable(dt, op) ? &k : NULL, &rc))
        return rc;
    mc_fallback(MC_ALLREDUCE, a.bytes);
    return PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
}

int mc_inner_allreduce(void *buf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    mc_args_t a;
    int rc;
    if (prep(&a, MC_ALLREDUCE, MPI_IN_PLACE, buf, count, dt, op, comm, (size_t)count) &&
        mc_run_inner(comm, &a, &rc))
        return rc;
    return PMPI_Allreduce(MPI_IN_PLACE, buf, count, dt, op, comm);
}

int MPI_Reduce(MC_CONST void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm)
{
    mc_args_t a;
    mc_key_t k = {sbuf, rbuf, count, root, dt, op};
    int rc, size, rank;
    if (mc_run_again(comm, MC_REDUCE, &k, &rc)) return rc;
    if (mc_precheck(comm, count, &rc)) return rc;
    /* A non-root's rbuf is not significant: it may be anything, its sbuf too, as in the common
     * MPI_Reduce(rank == root ? MPI_IN_PLACE : buf, buf, ...). Taken for aliased buffers, such a
     * non-root left for the native MPI while the root waited in mcoll: a hang. */
    int dims = mc_comm_dims(comm, &size, &rank);
    if (prep(&a, MC_REDUCE, sbuf, dims && rank == root ? rbuf : NULL, count, dt, op, comm, (size_t)count) &&
        dims) {
        int in_place_ok = sbuf != MPI_IN_PLACE || rank == root;
        a.root = root;
        if (root >= 0 && root < size && in_place_ok &&
            mc_run_key(comm, &a, mc_key_stable(dt, op) ? &k : NULL, &rc))
            return rc;
    }
    mc_fallback(MC_REDUCE, a.bytes);
    return PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm);
}

static int scan_like(mc_coll_t c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                     MPI_Op op, MPI_Comm comm)
{
    mc_args_t a;
    mc_key_t k = {sbuf, rbuf, count, 0, dt, op};
    int rc, size, rank;
    if (mc_run_again(comm, c, &k, &rc)) return rc;
    if (mc_precheck(comm, count, &rc)) return rc;
    /* exscan's rbuf is not significant on rank 0 (unless in place: its input is there), which
     * may pass its send buffer there, as a reduce's non-root may (MPI_Reduce) */
    void *rb = rbuf;
    if (c == MC_EXSCAN && sbuf != MPI_IN_PLACE && mc_comm_dims(comm, &size, &rank) && rank == 0) rb = NULL;
    if (prep(&a, c, sbuf, rb, count, dt, op, comm, (size_t)count) &&
        mc_run_key(comm, &a, mc_key_stable(dt, op) ? &k : NULL, &rc))
        return rc;
    mc_fallback(c, a.bytes);
    return c == MC_SCAN ? PMPI_Scan(sbuf, rbuf, count, dt, op, comm)
                        : PMPI_Exscan(sbuf, rbuf, count, dt, op, comm);
}

int MPI_Scan(MC_CONST void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return scan_like(MC_SCAN, sbuf, rbuf, count, dt, op, comm);
}

int MPI_Exscan(MC_CONST void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    return scan_like(MC_EXSCAN, sbuf, rbuf, count, dt, op, comm);
}

int MPI_Reduce_scatter_block(MC_CONST void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                             MPI_Comm comm)
{
    mc_args_t a = {.coll = MC_REDUCE_SCATTER_BLOCK}; /* bytes stay 0 if prep is skipped */
    int rc, size = 0, rank;
    if (mc_precheck(comm, count, &rc)) return rc;
    if (!mc_comm_dims(comm, &size, &rank)) size = 0;
    size_t total = (size_t)count * (size_t)size;
    if (size && total <= INT_MAX && prep(&a, MC_REDUCE_SCATTER_BLOCK, sbuf, rbuf, count, dt, op, comm, total) &&
        mc_run(comm, &a, &rc))
        return rc;
    mc_fallback(MC_REDUCE_SCATTER_BLOCK, a.bytes);
    return PMPI_Reduce_scatter_block(sbuf, rbuf, count, dt, op, comm);
}

/* counts[] must be non-negative with a sum that fits an int; fills size_t copies. */
static int rs_counts(const int *rcounts, int p, size_t **cnt, size_t **dsp, size_t *total)
{
    *total = 0;
    *cnt = malloc(sizeof(size_t) * (size_t)p);
    *dsp = malloc(sizeof(size_t) * (size_t)p);
    if (!*cnt || !*dsp) return 0;
    for (int i = 0; i < p; i++) {
        if (rcounts[i] < 0) return 0;
        (*dsp)[i] = *total;
        (*cnt)[i] = (size_t)rcounts[i];
        *total += (size_t)rcounts[i];
    }
    return *total <= INT_MAX;
}

int MPI_Reduce_scatter(MC_CONST void *sbuf, void *rbuf, MC_CONST int rcounts[], MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm)
{
    mc_args_t a = {.coll = MC_REDUCE_SCATTER};
    size_t *cnt = NULL, *dsp = NULL, total = 0;
    int rc, size = 0, rank, handled = 0;
    if (mc_precheck(comm, 0, &rc)) return rc;
    if (rcounts && mc_comm_dims(comm, &size, &rank)) {
        if (rs_counts(rcounts, size, &cnt, &dsp, &total) &&
            prep(&a, MC_REDUCE_SCATTER, sbuf, rbuf, rcounts[rank], dt, op, comm, total)) {
            a.counts = cnt;
            a.displs = dsp;
            handled = mc_run(comm, &a, &rc);
        }
    }
    free(cnt);
    free(dsp);
    if (handled) return rc;
    mc_fallback(MC_REDUCE_SCATTER, a.bytes);
    return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm);
}
