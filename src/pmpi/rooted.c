/* MPI_Bcast, Gather, Gatherv, Scatter, Scatterv: byte collectives with a root. Datatypes that
 * are not contiguous are packed into (and unpacked from) a temporary, so every rank takes
 * the same path whatever layout it uses. */
#include "entry.h"
#include <stdlib.h>
#include <string.h>

/* Valid (count, type) pair; fills d. */
static int typed_ok(int count, MPI_Datatype t, mc_dt_t *d) { return count >= 0 && mc_dt_get(t, d); }

static int comm_root_ok(MPI_Comm comm, int root, int *size, int *rank)
{
    return mc_comm_dims(comm, size, rank) && root >= 0 && root < *size;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    int pre_rc;
    mc_key_t k = {NULL, buf, count, root, dt, MPI_OP_NULL};
    if (mc_run_again(comm, MC_BCAST, &k, &pre_rc)) return pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    mc_dt_t d;
    void *view, *tmp = NULL;
    int rc = MPI_SUCCESS, size, rank, handled = 0;
    mc_byte_args(&a, MC_BCAST);
    if (comm_root_ok(comm, root, &size, &rank) && typed_ok(count, dt, &d) &&
        (a.bytes = (size_t)count * (size_t)d.size) <= INT_MAX) {
        rc = mc_view(buf, (size_t)count, dt, &d, rank == root, comm, &view, &tmp);
        if (rc != MPI_SUCCESS) return mc_raise(comm, rc);
        a.rbuf = view;
        a.count = a.bytes;
        a.root = root;
        /* remembered only when the buffer is its own view (no packed temporary) */
        handled = mc_run_key(comm, &a, !tmp && mc_key_stable(dt, MPI_OP_NULL) ? &k : NULL, &rc);
        if (handled && rc == MPI_SUCCESS && rank != root)
            rc = mc_raise(comm, mc_unview(tmp, (size_t)count, dt, comm, buf));
        free(tmp);
    }
    if (handled) return rc;
    mc_fallback(MC_BCAST, a.bytes);
    return PMPI_Bcast(buf, count, dt, root, comm);
}

/* Gather and scatter share their shape: one side is `p` blocks at the root, the other one
 * block per rank. `many` is the root's p-block buffer, `one` the per-rank block. */
typedef struct {
    const void *one_buf; int one_count; MPI_Datatype one_t;    /* send (gather) / recv (scatter) */
    void *many_buf; int many_count; MPI_Datatype many_t;       /* root's buffer */
    int in_place;
} gs_t;

static int gs_run(mc_coll_t c, gs_t *g, int root, MPI_Comm comm, mc_args_t *a, int *handled)
{
    mc_dt_t od, md;
    void *oview = NULL, *otmp = NULL, *mview = NULL, *mtmp = NULL;
    int size, rank, rc = MPI_SUCCESS, gather = c == MC_GATHER;
    *handled = 0;
    if (!comm_root_ok(comm, root, &size, &rank)) return rc;
    int is_root = rank == root;
    if (is_root && !typed_ok(g->many_count, g->many_t, &md)) return rc;
    if (!(is_root && g->in_place) && !typed_ok(g->one_count, g->one_t, &od)) return rc;
    if (!is_root && g->in_place) return rc;
    size_t block = is_root ? (size_t)g->many_count * (size_t)md.size : (size_t)g->one_count * (size_t)od.size;
    a->bytes = block;
    if (block * (size_t)size > INT_MAX) return rc;
    if (is_root) {
        rc = mc_view(g->many_buf, (size_t)g->many_count * (size_t)size, g->many_t, &md,
                     !gather || g->in_place, comm, &mview, &mtmp);
    }
    if (rc == MPI_SUCCESS && !(is_root && g->in_place))
        rc = mc_view(g->one_buf, (size_t)g->one_count, g->one_t, &od, gather, comm, &oview, &otmp);
    if (rc != MPI_SUCCESS) goto out;
    if (is_root && g->in_place) oview = (char *)mview + (size_t)root * block;
    a->count = block;
    a->root = root;
    a->sbuf = gather ? oview : mview;
    a->rbuf = gather ? mview : oview;
    *handled = mc_run(comm, a, &rc);
    if (*handled && rc == MPI_SUCCESS) {
        if (gather && is_root)
            rc = mc_unview(mtmp, (size_t)g->many_count * (size_t)size, g->many_t, comm, g->many_buf);
        else if (!gather && !(is_root && g->in_place))
            rc = mc_unview(otmp, (size_t)g->one_count, g->one_t, comm, (void *)g->one_buf);
        mc_raise(comm, rc);
    }
out:
    free(otmp);
    free(mtmp);
    if (!*handled && rc != MPI_SUCCESS) {
        *handled = 1;
        mc_raise(comm, rc);
    }
    return rc;
}

int MPI_Gather(MC_CONST void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    int pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    int handled;
    mc_byte_args(&a, MC_GATHER);
    gs_t g = {sbuf, scount, stype, rbuf, rcount, rtype, sbuf == MPI_IN_PLACE};
    int rc = gs_run(MC_GATHER, &g, root, comm, &a, &handled);
    if (handled) return rc;
    mc_fallback(MC_GATHER, a.bytes);
    return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Scatter(MC_CONST void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    int pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    int handled;
    mc_byte_args(&a, MC_SCATTER);
    gs_t g = {rbuf, rcount, rtype, (void *)sbuf, scount, stype, rbuf == MPI_IN_PLACE};
    int rc = gs_run(MC_SCATTER, &g, root, comm, &a, &handled);
    if (handled) return rc;
    mc_fallback(MC_SCATTER, a.bytes);
    return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

/* The v-variants: the root's side is described by counts/displs (root only). */
typedef struct {
    const void *one_buf; int one_count; MPI_Datatype one_t;
    void *many_buf; const int *counts, *displs; MPI_Datatype many_t;
    int in_place;
} gsv_t;

static int gsv_run(mc_coll_t c, gsv_t *g, int root, MPI_Comm comm, mc_args_t *a, int *handled)
{
    mc_dt_t od, md;
    mc_blocks_t b = {0};
    void *oview = NULL, *otmp = NULL;
    int size, rank, rc = MPI_SUCCESS, gather = c == MC_GATHERV;
    *handled = 0;
    if (!comm_root_ok(comm, root, &size, &rank)) return rc;
    int is_root = rank == root;
    if (is_root && !(mc_dt_get(g->many_t, &md) && mc_counts_ok(g->counts, g->displs, size))) return rc;
    if (!(is_root && g->in_place) && !typed_ok(g->one_count, g->one_t, &od)) return rc;
    if (!is_root && g->in_place) return rc;
    if (is_root) {
        rc = mc_blocks_make(&b, size, g->counts, g->displs, g->many_buf, &md);
        if (rc == MPI_SUCCESS && (!gather || g->in_place))
            rc = mc_blocks_pack(&b, size, g->counts, g->displs, g->many_buf, g->many_t, comm);
        a->counts = b.cnt;
        a->displs = b.dsp;
    }
    if (rc == MPI_SUCCESS && !(is_root && g->in_place))
        rc = mc_view(g->one_buf, (size_t)g->one_count, g->one_t, &od, gather, comm, &oview, &otmp);
    if (rc != MPI_SUCCESS) goto out;
    if (is_root && g->in_place) {
        oview = b.base + b.dsp[root];
        a->count = b.cnt[root];
    } else {
        a->count = (size_t)g->one_count * (size_t)od.size;
    }
    a->bytes = a->count;
    a->root = root;
    a->sbuf = gather ? oview : b.base;
    a->rbuf = gather ? (void *)b.base : oview;
    *handled = mc_run(comm, a, &rc);
    if (*handled && rc == MPI_SUCCESS) {
        if (gather && is_root)
            rc = mc_blocks_unpack(&b, size, g->counts, g->displs, g->many_buf, g->many_t, comm);
        else if (!gather && !(is_root && g->in_place))
            rc = mc_unview(otmp, (size_t)g->one_count, g->one_t, comm, (void *)g->one_buf);
        mc_raise(comm, rc);
    }
out:
    mc_blocks_free(&b);
    free(otmp);
    if (!*handled && rc != MPI_SUCCESS) {
        *handled = 1;
        mc_raise(comm, rc);
    }
    return rc;
}

int MPI_Gatherv(MC_CONST void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                MC_CONST int rcounts[], MC_CONST int displs[], MPI_Datatype rtype, int root,
                MPI_Comm comm)
{
    int pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    int handled;
    mc_byte_args(&a, MC_GATHERV);
    gsv_t g = {sbuf, scount, stype, rbuf, rcounts, displs, rtype, sbuf == MPI_IN_PLACE};
    int rc = gsv_run(MC_GATHERV, &g, root, comm, &a, &handled);
    if (handled) return rc;
    mc_fallback(MC_GATHERV, a.bytes);
    return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
}

int MPI_Scatterv(MC_CONST void *sbuf, MC_CONST int scounts[], MC_CONST int displs[],
                 MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm)
{
    int pre_rc;
    if (mc_precheck(comm, 0, &pre_rc)) return pre_rc;
    mc_args_t a;
    int handled;
    mc_byte_args(&a, MC_SCATTERV);
    gsv_t g = {rbuf, rcount, rtype, (void *)sbuf, scounts, displs, stype, rbuf == MPI_IN_PLACE};
    int rc = gsv_run(MC_SCATTERV, &g, root, comm, &a, &handled);
    if (handled) return rc;
    mc_fallback(MC_SCATTERV, a.bytes);
    return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
}
