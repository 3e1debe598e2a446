/* MPI_Barrier, Allgather, Allgatherv, Alltoall, Alltoallv. */
#include "entry.h"
#include <stdlib.h>
#include <string.h>

int MPI_Barrier(MPI_Comm comm)
{
    int pre_rc;
    mc_key_t k = {0};
    if (mc_run_again(comm, MC_BARRIER, &k, &pre_rc)) return pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    int rc;
    mc_byte_args(&a, MC_BARRIER);
    if (mc_comm_ok(comm) && mc_run_key(comm, &a, &k, &rc)) return rc;
    mc_fallback(MC_BARRIER, 0);
    return PMPI_Barrier(comm);
}

/* Send side of an all-to-all style call: a view of `n` elements, or for MPI_IN_PLACE a
 * packed copy of the receive buffer (the algorithms need distinct buffers). */
static int send_view(const void *sbuf, size_t n, MPI_Datatype t, const mc_dt_t *d, int copy,
                     MPI_Comm comm, void **view, void **tmp)
{
    mc_dt_t forced = *d;
    if (copy) forced.contig = 0;
    return mc_view(sbuf, n, t, &forced, 1, comm, view, tmp);
}

static size_t blocks_mean(const size_t *cnt, int p)
{
    size_t total = 0;
    for (int i = 0; i < p; i++) total += cnt[i];
    return total / (size_t)p;
}

static int comm_size(MPI_Comm comm, int *size, int *rank)
{
    return mc_comm_dims(comm, size, rank);
}

/* Shared by Allgather and Alltoall: uniform blocks. */
static int uniform_run(mc_coll_t c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, MPI_Comm comm, mc_args_t *a, int *handled)
{
    mc_dt_t sd, rd;
    void *sview = NULL, *stmp = NULL, *rview = NULL, *rtmp = NULL;
    int size, rank, rc = MPI_SUCCESS, in_place = sbuf == MPI_IN_PLACE, a2a = c == MC_ALLTOALL;
    *handled = 0;
    if (!comm_size(comm, &size, &rank) || rcount < 0 || !mc_dt_get(rtype, &rd)) return rc;
    if (!in_place && (scount < 0 || !mc_dt_get(stype, &sd))) return rc;
    size_t block = (size_t)rcount * (size_t)rd.size, n = (size_t)rcount * (size_t)size;
    a->bytes = block;
    if (block * (size_t)size > INT_MAX) return rc;
    rc = mc_view(rbuf, n, rtype, &rd, in_place && !a2a, comm, &rview, &rtmp);
    if (rc == MPI_SUCCESS && in_place && a2a)
        rc = send_view(rbuf, n, rtype, &rd, 1, comm, &sview, &stmp);
    else if (rc == MPI_SUCCESS && !in_place)
        rc = send_view(sbuf, (size_t)scount * (a2a ? (size_t)size : 1), stype, &sd, 0, comm, &sview, &stmp);
    else if (rc == MPI_SUCCESS)
        sview = (char *)rview + (size_t)rank * block;
    if (rc == MPI_SUCCESS) {
        a->sbuf = sview;
        a->rbuf = rview;
        a->count = block;
        *handled = mc_run(comm, a, &rc);
        if (*handled && rc == MPI_SUCCESS) rc = mc_raise(comm, mc_unview(rtmp, n, rtype, comm, rbuf));
    } else {
        *handled = 1;
        mc_raise(comm, rc);
    }
    free(stmp);
    free(rtmp);
    return rc;
}

int MPI_Allgather(MC_CONST void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    int pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    int handled;
    mc_byte_args(&a, MC_ALLGATHER);
    int rc = uniform_run(MC_ALLGATHER, sbuf, scount, stype, rbuf, rcount, rtype, comm, &a, &handled);
    if (handled) return rc;
    mc_fallback(MC_ALLGATHER, a.bytes);
    return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int mc_inner_allgather(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Comm comm)
{
    mc_args_t a;
    mc_dt_t d;
    int size, rank, rc;
    mc_byte_args(&a, MC_ALLGATHER);
    if (count >= 0 && mc_dt_get(dt, &d) && d.contig && mc_comm_dims(comm, &size, &rank)) {
        a.sbuf = sbuf;
        a.rbuf = rbuf;
        a.count = a.bytes = (size_t)count * (size_t)d.size;
        if (mc_run_inner(comm, &a, &rc)) return rc;
    }
    return PMPI_Allgather(sbuf, count, dt, rbuf, count, dt, comm);
}

int MPI_Alltoall(MC_CONST void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    int pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    int handled;
    mc_byte_args(&a, MC_ALLTOALL);
    int rc = uniform_run(MC_ALLTOALL, sbuf, scount, stype, rbuf, rcount, rtype, comm, &a, &handled);
    if (handled) return rc;
    mc_fallback(MC_ALLTOALL, a.bytes);
    return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int MPI_Allgatherv(MC_CONST void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   MC_CONST int rcounts[], MC_CONST int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    int pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    mc_dt_t sd, rd;
    mc_blocks_t b = {0};
    void *sview = NULL, *stmp = NULL;
    int size, rank, rc = MPI_SUCCESS, handled = 0, in_place = sbuf == MPI_IN_PLACE;
    mc_byte_args(&a, MC_ALLGATHERV);
    if (comm_size(comm, &size, &rank) && mc_dt_get(rtype, &rd) && mc_counts_ok(rcounts, displs, size) &&
        (in_place || (scount >= 0 && mc_dt_get(stype, &sd)))) {
        rc = mc_blocks_make(&b, size, rcounts, displs, rbuf, &rd);
        if (rc == MPI_SUCCESS && in_place)
            rc = mc_blocks_pack(&b, size, rcounts, displs, rbuf, rtype, comm);
        if (rc == MPI_SUCCESS && !in_place)
            rc = send_view(sbuf, (size_t)scount, stype, &sd, 0, comm, &sview, &stmp);
        if (rc == MPI_SUCCESS) {
            a.sbuf = in_place ? b.base + b.dsp[rank] : sview;
            a.rbuf = b.base;
            a.counts = b.cnt;
            a.displs = b.dsp;
            a.count = b.cnt[rank];
            a.bytes = blocks_mean(b.cnt, size);   /* the same on every rank: selection uses it */
            handled = mc_run(comm, &a, &rc);
            if (handled && rc == MPI_SUCCESS)
                rc = mc_raise(comm, mc_blocks_unpack(&b, size, rcounts, displs, rbuf, rtype, comm));
        } else {
            handled = 1;
            mc_raise(comm, rc);
        }
        mc_blocks_free(&b);
        free(stmp);
    }
    if (handled) return rc;
    mc_fallback(MC_ALLGATHERV, a.bytes);
    return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}

int MPI_Alltoallv(MC_CONST void *sbuf, MC_CONST int scounts[], MC_CONST int sdispls[],
                  MPI_Datatype stype, void *rbuf, MC_CONST int rcounts[], MC_CONST int rdispls[],
                  MPI_Datatype rtype, MPI_Comm comm)
{
    int pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    mc_dt_t sd, rd;
    mc_blocks_t sb = {0}, rb = {0};
    int size, rank, rc = MPI_SUCCESS, handled = 0, in_place = sbuf == MPI_IN_PLACE;
    mc_byte_args(&a, MC_ALLTOALLV);
    if (in_place) {
        sbuf = rbuf;
        scounts = rcounts;
        sdispls = rdispls;
        stype = rtype;
    }
    if (comm_size(comm, &size, &rank) && mc_dt_get(rtype, &rd) && mc_dt_get(stype, &sd) &&
        mc_counts_ok(rcounts, rdispls, size) && mc_counts_ok(scounts, sdispls, size)) {
        if (in_place) sd.contig = 0; /* forces a packed copy of the send side */
        rc = mc_blocks_make(&sb, size, scounts, sdispls, sbuf, &sd);
        if (rc == MPI_SUCCESS) rc = mc_blocks_pack(&sb, size, scounts, sdispls, sbuf, stype, comm);
        if (rc == MPI_SUCCESS) rc = mc_blocks_make(&rb, size, rcounts, rdispls, rbuf, &rd);
        if (rc == MPI_SUCCESS) {
            a.sbuf = sb.base;
            a.rbuf = rb.base;
            a.scounts = sb.cnt;
            a.sdispls = sb.dsp;
            a.counts = rb.cnt;
            a.displs = rb.dsp;
            for (int i = 0; i < size; i++) a.bytes += sb.cnt[i];
            handled = mc_run(comm, &a, &rc);
            if (handled && rc == MPI_SUCCESS)
                rc = mc_raise(comm, mc_blocks_unpack(&rb, size, rcounts, rdispls, rbuf, rtype, comm));
        } else {
            handled = 1;
            mc_raise(comm, rc);
        }
        mc_blocks_free(&sb);
        mc_blocks_free(&rb);
    }
    if (handled) return rc;
    mc_fallback(MC_ALLTOALLV, a.bytes);
    return PMPI_Alltoallv(in_place ? MPI_IN_PLACE : sbuf, scounts, sdispls, stype, rbuf, rcounts,
                          rdispls, rtype, comm);
}
