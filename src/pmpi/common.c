#include "entry.h"
#include "../core/stats.h"
#include "../select/select.h"
#include "../shm/shm.h"
#include "../core/config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int mc_comm_ok(MPI_Comm comm)
{
    int inter = 1;
    if (comm == MPI_COMM_NULL) return 0;
    if (mc_ctx_peek(comm)) return 1;   /* contexts exist only for valid intracommunicators */
    return PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

int mc_comm_dims(MPI_Comm comm, int *size, int *rank)
{
    mc_ctx_t *c = comm == MPI_COMM_NULL ? NULL : mc_ctx_peek(comm);
    if (c) {
        *size = c->size;
        *rank = c->rank;
        return 1;
    }
    if (!mc_comm_ok(comm)) return 0;
    PMPI_Comm_size(comm, size);
    PMPI_Comm_rank(comm, rank);
    return 1;
}

/* Type classes of MPI-4 §6.9.2 ("C integer", "Fortran integer", "Floating point", ...).
 * Fortran's REAL16, INTEGER16 and COMPLEX32 are left out (no C type of that layout here, and
 * not every native MPI reduces them), so their reductions go to the native MPI. */
enum { CL_NONE = 0, CL_INT = 1, CL_FLOAT = 2, CL_LOGICAL = 4, CL_COMPLEX = 8, CL_BYTE = 16,
       CL_PAIR = 32, CL_FINT = 64 };

static int in_list(MPI_Datatype t, const MPI_Datatype *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t == list[i] && t != MPI_DATATYPE_NULL) return 1;
    return 0;
}

static int type_class(MPI_Datatype t)
{
    const MPI_Datatype ints[] = {MPI_INT, MPI_LONG, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_UNSIGNED,
                                 MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG,
                                 MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_INT8_T, MPI_INT16_T,
                                 MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T,
                                 MPI_UINT64_T, MPI_AINT, MPI_OFFSET};
    const MPI_Datatype fints[] = {MPI_INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
                                  MPI_INTEGER8};
    const MPI_Datatype floats[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_REAL,
                                   MPI_DOUBLE_PRECISION, MPI_REAL4, MPI_REAL8};
    const MPI_Datatype cplx[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX,
                                 MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_COMPLEX8, MPI_COMPLEX16};
    const MPI_Datatype pairs[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT,
                                  MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_2INTEGER, MPI_2REAL,
                                  MPI_2DOUBLE_PRECISION};
    const MPI_Datatype logicals[] = {MPI_C_BOOL, MPI_LOGICAL};
#define IN(list) in_list(t, list, sizeof list / sizeof list[0])
    if (IN(ints)) return CL_INT;
    if (IN(fints)) return CL_FINT;
    if (IN(floats)) return CL_FLOAT;
    if (IN(cplx)) return CL_COMPLEX;
    if (IN(pairs)) return CL_PAIR;
    if (IN(logicals)) return CL_LOGICAL;
#undef IN
    if (t == MPI_BYTE) return CL_BYTE;
    return CL_NONE;
}

static int predefined(MPI_Datatype t)
{
    return type_class(t) != CL_NONE || t == MPI_CHAR || t == MPI_PACKED || t == MPI_WCHAR;
}

/* A thread's last predefined datatype: predefined handles are never freed, so the cached
 * description cannot go stale (derived ones may be freed and their handles reused). */
static __thread struct { int valid; MPI_Datatype t; mc_dt_t d; } last_dt;

static int dt_query(MPI_Datatype t, mc_dt_t *d)
{
    if (t == MPI_DATATYPE_NULL) return 0;
    if (PMPI_Type_size_x(t, &d->size) != MPI_SUCCESS || d->size < 0) return 0;
    if (PMPI_Type_get_extent(t, &d->lb, &d->extent) != MPI_SUCCESS) return 0;
    if (PMPI_Type_get_true_extent(t, &d->true_lb, &d->true_extent) != MPI_SUCCESS) return 0;
    d->contig = d->lb == 0 && d->true_lb == 0 && d->size == d->extent && d->true_extent == d->extent;
    d->elem_ok = d->lb == 0 && d->true_lb == 0 && d->true_extent <= d->extent && d->extent > 0;
    return 1;
}

int mc_dt_get(MPI_Datatype t, mc_dt_t *d)
{
    if (last_dt.valid && last_dt.t == t) {
        *d = last_dt.d;
        return 1;
    }
    if (!dt_query(t, d)) return 0;
    if (predefined(t)) {
        last_dt.t = t;
        last_dt.d = *d;
        last_dt.valid = 1;
    }
    return 1;
}

/* Classes a predefined op accepts; -1 for an op that is not predefined. */
static int op_classes(MPI_Op op)
{
    if (op == MPI_MAX || op == MPI_MIN) return CL_INT | CL_FINT | CL_FLOAT;
    if (op == MPI_SUM || op == MPI_PROD) return CL_INT | CL_FINT | CL_FLOAT | CL_COMPLEX;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return CL_INT | CL_LOGICAL;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) return CL_INT | CL_FINT | CL_BYTE;
    if (op == MPI_MAXLOC || op == MPI_MINLOC) return CL_PAIR;
    if (op == MPI_REPLACE || op == MPI_NO_OP) return 0; /* not valid in collectives */
    return -1;
}

/* The last predefined (op, type) pair checked by this thread: both are never freed, so the
 * answer cannot go stale (user-defined handles may be reused and are not cached). */
static _Thread_local struct { MPI_Op op; MPI_Datatype t; int ok; } last_predef;

int mc_reduction_ok(MPI_Op op, MPI_Datatype t, const mc_dt_t *d, int *commute)
{
    if (op == MPI_OP_NULL || !d->elem_ok) return 0;
    if (last_predef.op == op && last_predef.t == t && op != MPI_OP_NULL) {
        *commute = 1; /* every predefined op is commutative */
        return last_predef.ok;
    }
    int cls = op_classes(op);
    if (cls < 0) return PMPI_Op_commutative(op, commute) == MPI_SUCCESS;
    *commute = 1;
    int ok = cls != 0 && (cls & type_class(t)) != 0;
    last_predef.op = op;
    last_predef.t = t;
    last_predef.ok = ok;
    return ok;
}

int mc_raise(MPI_Comm comm, int rc)
{
    if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
    return rc;
}

int mc_precheck(MPI_Comm comm, int count, int *rc)
{
    if (comm == MPI_COMM_NULL) {
        if (!mc_world_up()) return 0; /* MPI sessions alone: no world; the native MPI raises it */
        *rc = MPI_ERR_COMM;
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, *rc);
        return 1;
    }
    if (count < 0) {
        *rc = mc_raise(comm, MPI_ERR_COUNT);
        return 1;
    }
    return 0;
}

/* Runs alg, counts the call, raises its error on comm. */
static inline __attribute__((always_inline)) int run_alg(mc_ctx_t *ctx, MPI_Comm comm, const mc_alg_t *alg, int idx,
                                                       const mc_args_t *a, int *rc)
{
    uint64_t dav = mc_dav_bytes, syncs = mc_sync_events;
    int outer = mc_stats_enter(a->coll); /* inter-node traffic of inner steps counts here */
    *rc = alg->fn(ctx, a);
    mc_stats_leave(outer);
    mc_stats_handled(a->coll, idx, a->bytes, alg->name, mc_dav_bytes - dav, mc_sync_events - syncs);
    if (*rc != MPI_SUCCESS) mc_raise(comm, *rc);
    return 1;
}

/* The algorithm for a on comm (*ctx, *idx set); NULL: the native MPI takes the call (and
 * raises its own error, if any). */
static const mc_alg_t *choose(MPI_Comm comm, mc_args_t *a, const mc_key_t *k, mc_ctx_t **ctx, int *idx)
{
    if (mc_ctx_get(comm, ctx) != MPI_SUCCESS || (*ctx)->native) return NULL;
    const mc_alg_t *alg = mc_select(*ctx, a, idx, k);
    /* every rank chose alg: its private communicator can be made here (out of them: native) */
    if (alg && !alg->dav && (*ctx)->pcomm == MPI_COMM_NULL && mc_ctx_p2p(*ctx) != MPI_SUCCESS) return NULL;
    return alg;
}

int mc_run_key(MPI_Comm comm, mc_args_t *a, const mc_key_t *k, int *rc)
{
    mc_ctx_t *ctx;
    int idx;
    const mc_alg_t *alg = choose(comm, a, k, &ctx, &idx);
    return alg ? run_alg(ctx, comm, alg, idx, a, rc) : 0;
}

int mc_run_inner(MPI_Comm comm, mc_args_t *a, int *rc)
{
    mc_ctx_t *ctx;
    int idx;
    const mc_alg_t *alg = choose(comm, a, NULL, &ctx, &idx);
    if (alg) *rc = alg->fn(ctx, a);
    return alg != NULL;
}

int mc_run(MPI_Comm comm, mc_args_t *a, int *rc) { return mc_run_key(comm, a, NULL, rc); }

int mc_run_again(MPI_Comm comm, mc_coll_t c, const mc_key_t *k, int *rc)
{
    mc_ctx_t *ctx = mc_ctx_peek(comm);
    const mc_args_t *a;
    int idx;
    const mc_alg_t *alg = ctx ? mc_select_again(ctx, c, k, &a, &idx) : NULL;
    /* a point-to-point choice whose duplicate could not be made: the full way tries again
     * (mc_run_key), once on every rank whichever way it came, so not here */
    if (!alg || (!alg->dav && ctx->pcomm == MPI_COMM_NULL)) return 0;
    mc_args_t copy = *a; /* the memo may change under a nested call */
    mc_stats_repeat(c);
    return run_alg(ctx, comm, alg, idx, &copy, rc);
}

int mc_key_stable(MPI_Datatype t, MPI_Op op)
{
    /* the thread's last datatype and (op, type) pair are cached only when predefined (the
     * normal path has just looked them up): no scan of the predefined handles */
    int dt_ok = t == MPI_DATATYPE_NULL || (last_dt.valid && last_dt.t == t) || predefined(t);
    int op_ok = op == MPI_OP_NULL || (last_predef.op == op && last_predef.ok) || op_classes(op) > 0;
    return dt_ok && op_ok;
}

void mc_fallback(mc_coll_t c, size_t bytes) { mc_stats_fallback(c, bytes); }

/* One MPI_Pack / MPI_Unpack of n elements of t at buf + off bytes to or from `packed`. buf
 * may be MPI_BOTTOM (t then holds absolute addresses), which MPICH 4.0's MPI_Pack rejects as a
 * null buffer: that layout is then described from a non-null anchor instead (a struct of n t
 * at minus the anchor's address). */
static int pack_piece(int unpack, void *buf, MPI_Aint off, int n, MPI_Datatype t, void *packed,
                      int bytes, MPI_Comm comm)
{
    static char anchor;
    MPI_Datatype use = t;
    int count = n, pos = 0, rc;
    if (buf == MPI_BOTTOM) {
        MPI_Aint disp = off - (MPI_Aint)(uintptr_t)&anchor;
        rc = PMPI_Type_create_struct(1, &count, &disp, &t, &use);
        if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&use);
        if (rc != MPI_SUCCESS) return rc;
        buf = &anchor;
        count = 1;
        off = 0;
    }
    char *at = (char *)buf + off;
    rc = unpack ? PMPI_Unpack(packed, bytes, &pos, at, count, use, comm)
                : PMPI_Pack(at, count, use, packed, bytes, &pos, comm);
    if (use != t) PMPI_Type_free(&use);
    return rc;
}

/* Packs (unpack = 0) or unpacks n elements of t at buf + off bytes to or from `packed`, in
 * pieces of at most mc_int_max() bytes (MPI_Pack counts the packed bytes in an int). A layout
 * over 2 GiB must not fail where only some ranks see it - a v-collective's root its whole
 * buffer, a sender its block - while the others go on into the collective and wait for them. */
static int pack_io(int unpack, void *buf, MPI_Aint off, size_t n, MPI_Datatype t, void *packed, MPI_Comm comm)
{
    int size, rc = MPI_SUCCESS;
    MPI_Aint lb, ext;
    if (n == 0 || PMPI_Type_size(t, &size) != MPI_SUCCESS || size == 0) return MPI_SUCCESS;
    if (size < 0) return MPI_ERR_TYPE; /* MPI_UNDEFINED: a type whose size overflows an int */
    PMPI_Type_get_extent(t, &lb, &ext);
    size_t per = mc_int_max() / (size_t)size;
    if (per == 0) per = 1; /* an element larger than a piece: one per piece (its size is an int) */
    for (size_t i = 0; i < n && rc == MPI_SUCCESS; i += per) {
        size_t k = n - i < per ? n - i : per;
        rc = pack_piece(unpack, buf, off + (MPI_Aint)i * ext, (int)k, t, (char *)packed + i * (size_t)size,
                        (int)(k * (size_t)size), comm);
    }
    return rc;
}

int mc_view(const void *buf, size_t n, MPI_Datatype t, const mc_dt_t *d, int fill, MPI_Comm comm,
            void **view, void **tmp)
{
    *tmp = NULL;
    if (d->contig || n == 0) {
        *view = (void *)buf;
        return MPI_SUCCESS;
    }
    size_t bytes = n * (size_t)d->size;
    *tmp = *view = malloc(bytes ? bytes : 1);
    if (!*tmp) return MPI_ERR_NO_MEM;
    return fill ? pack_io(0, (void *)buf, 0, n, t, *tmp, comm) : MPI_SUCCESS;
}

int mc_unview(const void *tmp, size_t n, MPI_Datatype t, MPI_Comm comm, void *buf)
{
    if (!tmp || n == 0) return MPI_SUCCESS;
    return pack_io(1, buf, 0, n, t, (void *)tmp, comm);
}

int mc_blocks_make(mc_blocks_t *b, int p, const int *counts, const int *displs, const void *buf,
                   const mc_dt_t *d)
{
    size_t off = 0;
    b->cnt = malloc(sizeof(size_t) * (size_t)p);
    b->dsp = malloc(sizeof(size_t) * (size_t)p);
    b->tmp = NULL;
    b->base = (char *)buf;
    if (!b->cnt || !b->dsp) return MPI_ERR_NO_MEM;
    for (int i = 0; i < p; i++) {
        b->cnt[i] = (size_t)counts[i] * (size_t)d->size;
        b->dsp[i] = d->contig ? (size_t)displs[i] * (size_t)d->extent : off;
        off += b->cnt[i];
    }
    if (d->contig) return MPI_SUCCESS;
    b->base = b->tmp = malloc(off ? off : 1);
    return b->tmp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Byte offset of block i from the buffer (which may be MPI_BOTTOM: no pointer arithmetic). */
static MPI_Aint block_off(int i, const int *displs, MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return (MPI_Aint)displs[i] * ext;
}

int mc_blocks_pack(const mc_blocks_t *b, int p, const int *counts, const int *displs,
                   const void *buf, MPI_Datatype t, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; b->tmp && i < p && rc == MPI_SUCCESS; i++)
        rc = pack_io(0, (void *)buf, block_off(i, displs, t), (size_t)counts[i], t, b->tmp + b->dsp[i], comm);
    return rc;
}

int mc_blocks_unpack(const mc_blocks_t *b, int p, const int *counts, const int *displs,
                     void *buf, MPI_Datatype t, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; b->tmp && i < p && rc == MPI_SUCCESS; i++)
        rc = pack_io(1, buf, block_off(i, displs, t), (size_t)counts[i], t, b->tmp + b->dsp[i], comm);
    return rc;
}

void mc_blocks_free(mc_blocks_t *b)
{
    free(b->cnt);
    free(b->dsp);
    free(b->tmp);
    b->cnt = b->dsp = NULL;
    b->tmp = NULL;
}

void mc_byte_args(mc_args_t *a, mc_coll_t c)
{
    memset(a, 0, sizeof *a);
    a->coll = c;
    a->dtype = MPI_BYTE;
    a->extent = 1;
    a->op = MPI_OP_NULL;
    a->commute = 1;
}

int mc_counts_ok(const int *counts, const int *displs, int p)
{
    if (!counts || !displs) return 0;
    for (int i = 0; i < p; i++)
        if (counts[i] < 0) return 0;
    return 1;
}
