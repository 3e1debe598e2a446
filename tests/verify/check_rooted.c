/* Rooted byte collectives: bcast, gather, gatherv, scatter, scatterv. */
#include "checks.h"
#include <mpi.h>
#include <stdlib.h>

#define FL (BP_ROOTED | BP_INPLACE)

/* ---------------------------------------------------------------- bcast */
static void run_bcast(const tcomm_t *c, const bcase_t *b)
{
    int isroot = c->rank == b->root;
    const layout_t *l = layout(isroot ? b->lroot : b->lr);
    size_t n = b->units / (size_t)l->k;
    tbuf_t buf;
    tbuf_alloc(&buf, l->unit, layout_span(l, 0, n));
    if (isroot) tbuf_fill(&buf, l, 0, n, b->root, 0, 0);
    uint64_t h = tbuf_hash(&buf);
    tcase(c, "%s", bdesc(b, BP_ROOTED));
    if (tcheck_rc(MPI_Bcast(buf.mem, (int)n, l->dt, b->root, c->comm), "MPI_Bcast")) {
        talg(0);
        if (isroot && tbuf_hash(&buf) != h) tfail("root buffer changed");
        if (!isroot) {
            tbuf_expect(&buf, l, 0, n, b->root, 0, 0, "buffer");
            tbuf_untouched(&buf, "buffer");
        }
    }
    tbuf_free(&buf);
}

void check_bcast(const tcomm_t *comms, int ncomms)
{
    byte_plan(comms, ncomms, run_bcast, BP_ROOTED, (size_t)1 << 20);
}

/* ---------------------------------------------------------------- gather(v) */
/* Receive counts (elements of lr) and displacements at the root of a gather(v). */
typedef struct {
    size_t *units, *elems, *displs;
    size_t span;            /* elements of lr the receive buffer needs */
} vspec_t;

/* lv: the layout the counts are expressed in (gather: lr; scatter: the root's send type). */
static void vspec(vspec_t *v, const tcomm_t *c, const bcase_t *b, int isv, layout_id_t lv)
{
    const layout_t *lr = layout(lv);
    size_t mult = lcm_k(b->ls, b->lroot, b->lr);
    v->units = xmalloc(sizeof(size_t) * (size_t)c->size);
    v->elems = xmalloc(sizeof(size_t) * (size_t)c->size);
    v->displs = xmalloc(sizeof(size_t) * (size_t)c->size);
    for (int i = 0; i < c->size; i++) {
        v->units[i] = isv ? vunits(b->vpat, b->units, i, c->size, mult) : b->units;
        v->elems[i] = v->units[i] / (size_t)lr->k;
    }
    if (isv) {
        v->span = vdispls(b->dpat, v->elems, c->size, c->rank, v->displs);
    } else {
        for (int i = 0; i < c->size; i++) v->displs[i] = (size_t)i * v->elems[0];
        v->span = (size_t)c->size * v->elems[0];
    }
}

static void vspec_free(vspec_t *v)
{
    xfree(v->units);
    xfree(v->elems);
    xfree(v->displs);
}

static int call_gather(const tcomm_t *c, const bcase_t *b, int isv, const void *sb, int sn,
                       MPI_Datatype st, void *rb, const vspec_t *v)
{
    MPI_Datatype rt = layout(b->lr)->dt;
    if (!isv) return MPI_Gather(sb, sn, st, rb, (int)v->elems[0], rt, b->root, c->comm);
    int *cnt = to_int(v->elems, c->size), *dsp = to_int(v->displs, c->size);
    int rc = MPI_Gatherv(sb, sn, st, rb, cnt, dsp, rt, b->root, c->comm);
    xfree(cnt);
    xfree(dsp);
    return rc;
}

static void run_gather_any(const tcomm_t *c, const bcase_t *b, int isv)
{
    int me = c->rank, isroot = me == b->root, inplace = isroot && b->inplace;
    const layout_t *ls = layout(isroot ? b->lroot : b->ls), *lr = layout(b->lr);
    vspec_t v;
    vspec(&v, c, b, isv, b->lr);
    size_t ns = v.units[me] / (size_t)ls->k;
    tbuf_t sb, rb = {0};
    tbuf_alloc(&sb, ls->unit, layout_span(ls, 0, ns));
    tbuf_fill(&sb, ls, 0, ns, me, 0, 0);
    if (isroot) tbuf_alloc(&rb, lr->unit, layout_span(lr, 0, v.span));
    if (inplace) tbuf_fill(&rb, lr, v.displs[me], v.elems[me], me, 0, 0);
    uint64_t h = tbuf_hash(&sb);
    tcase(c, "%s", bdesc(b, FL | (isv ? BP_V : 0)));
    int rc = call_gather(c, b, isv, inplace ? MPI_IN_PLACE : sb.mem, (int)ns, ls->dt, rb.mem, &v);
    if (tcheck_rc(rc, isv ? "MPI_Gatherv" : "MPI_Gather")) {
        talg(0);
        if (tbuf_hash(&sb) != h) tfail("send buffer changed");
        for (int src = 0; isroot && src < c->size; src++)
            tbuf_expect(&rb, lr, v.displs[src], v.elems[src], src, 0, 0, "recvbuf");
        if (isroot) tbuf_untouched(&rb, "recvbuf");
    }
    tbuf_free(&sb);
    if (isroot) tbuf_free(&rb);
    vspec_free(&v);
}

static void run_gather(const tcomm_t *c, const bcase_t *b) { run_gather_any(c, b, 0); }
static void run_gatherv(const tcomm_t *c, const bcase_t *b) { run_gather_any(c, b, 1); }

void check_gather(const tcomm_t *comms, int ncomms)
{
    byte_plan(comms, ncomms, run_gather, FL, (size_t)1 << 19);
}

void check_gatherv(const tcomm_t *comms, int ncomms)
{
    byte_plan(comms, ncomms, run_gatherv, FL | BP_V, (size_t)1 << 19);
}

/* ---------------------------------------------------------------- scatter(v) */
/* At the root vspec describes the send side (elements of lroot); block j goes to rank j. */
static int call_scatter(const tcomm_t *c, const bcase_t *b, int isv, const void *sb,
                        const vspec_t *v, void *rb, int rn, MPI_Datatype rt)
{
    MPI_Datatype st = layout(b->lroot)->dt;
    if (!isv) return MPI_Scatter(sb, (int)v->elems[0], st, rb, rn, rt, b->root, c->comm);
    int *cnt = to_int(v->elems, c->size), *dsp = to_int(v->displs, c->size);
    int rc = MPI_Scatterv(sb, cnt, dsp, st, rb, rn, rt, b->root, c->comm);
    xfree(cnt);
    xfree(dsp);
    return rc;
}

static void run_scatter_any(const tcomm_t *c, const bcase_t *b, int isv)
{
    int me = c->rank, isroot = me == b->root, inplace = isroot && b->inplace;
    const layout_t *lsr = layout(b->lroot), *lr = layout(b->lr);
    vspec_t v;
    vspec(&v, c, b, isv, b->lroot);
    size_t nr = v.units[me] / (size_t)lr->k;
    tbuf_t sb = {0}, rb;
    tbuf_alloc(&rb, lr->unit, layout_span(lr, 0, nr));
    if (isroot) {
        tbuf_alloc(&sb, lsr->unit, layout_span(lsr, 0, v.span));
        for (int j = 0; j < c->size; j++) tbuf_fill(&sb, lsr, v.displs[j], v.elems[j], me, j, 0);
    }
    uint64_t h = isroot ? tbuf_hash(&sb) : 0;
    tcase(c, "%s", bdesc(b, FL | (isv ? BP_V : 0)));
    int rc = call_scatter(c, b, isv, sb.mem, &v, inplace ? MPI_IN_PLACE : rb.mem, (int)nr, lr->dt);
    if (tcheck_rc(rc, isv ? "MPI_Scatterv" : "MPI_Scatter")) {
        talg(0);
        if (isroot && tbuf_hash(&sb) != h) tfail("send buffer changed");
        if (!inplace) tbuf_expect(&rb, lr, 0, nr, b->root, me, 0, "recvbuf");
        tbuf_untouched(&rb, "recvbuf");
    }
    tbuf_free(&rb);
    if (isroot) tbuf_free(&sb);
    vspec_free(&v);
}

static void run_scatter(const tcomm_t *c, const bcase_t *b) { run_scatter_any(c, b, 0); }
static void run_scatterv(const tcomm_t *c, const bcase_t *b) { run_scatter_any(c, b, 1); }

void check_scatter(const tcomm_t *comms, int ncomms)
{
    byte_plan(comms, ncomms, run_scatter, FL, (size_t)1 << 19);
}

void check_scatterv(const tcomm_t *comms, int ncomms)
{
    byte_plan(comms, ncomms, run_scatterv, FL | BP_V, (size_t)1 << 19);
}
