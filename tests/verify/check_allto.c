/* Non-rooted byte collectives (allgather, allgatherv, alltoall, alltoallv) and barrier. */
#include "checks.h"
#include <mpi.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- allgather(v) */
typedef struct {
    size_t *units, *elems, *displs;     /* per rank block, in elements of the receive type */
    size_t span;
} ablocks_t;

static void ablocks(ablocks_t *a, const tcomm_t *c, const bcase_t *b, int isv)
{
    size_t p = (size_t)c->size, mult = lcm_k(b->ls, b->lroot, b->lr);
    const layout_t *lr = layout(b->lr);
    a->units = xmalloc(sizeof(size_t) * p);
    a->elems = xmalloc(sizeof(size_t) * p);
    a->displs = xmalloc(sizeof(size_t) * p);
    for (int i = 0; i < c->size; i++) {
        a->units[i] = isv ? vunits(b->vpat, b->units, i, c->size, mult) : b->units;
        a->elems[i] = a->units[i] / (size_t)lr->k;
        a->displs[i] = (size_t)i * a->elems[i];
    }
    a->span = isv ? vdispls(b->dpat, a->elems, c->size, c->rank, a->displs) : p * a->elems[0];
}

static void ablocks_free(ablocks_t *a)
{
    xfree(a->units);
    xfree(a->elems);
    xfree(a->displs);
}

static int call_allgather(const tcomm_t *c, const bcase_t *b, int isv, const void *sb, int sn,
                          void *rb, const ablocks_t *a)
{
    MPI_Datatype st = layout(b->ls)->dt, rt = layout(b->lr)->dt;
    if (!isv) return MPI_Allgather(sb, sn, st, rb, (int)a->elems[0], rt, c->comm);
    int *cnt = to_int(a->elems, c->size), *dsp = to_int(a->displs, c->size);
    int rc = MPI_Allgatherv(sb, sn, st, rb, cnt, dsp, rt, c->comm);
    xfree(cnt);
    xfree(dsp);
    return rc;
}

static void run_allgather_any(const tcomm_t *c, const bcase_t *b, int isv)
{
    int me = c->rank;
    const layout_t *ls = layout(b->ls), *lr = layout(b->lr);
    ablocks_t a;
    ablocks(&a, c, b, isv);
    size_t ns = a.units[me] / (size_t)ls->k;
    tbuf_t sb, rb;
    tbuf_alloc(&sb, ls->unit, layout_span(ls, 0, ns));
    tbuf_fill(&sb, ls, 0, ns, me, 0, 0);
    tbuf_alloc(&rb, lr->unit, layout_span(lr, 0, a.span));
    if (b->inplace) tbuf_fill(&rb, lr, a.displs[me], a.elems[me], me, 0, 0);
    uint64_t h = tbuf_hash(&sb);
    tcase(c, "%s", bdesc(b, BP_INPLACE | (isv ? BP_V : 0)));
    int rc = call_allgather(c, b, isv, b->inplace ? MPI_IN_PLACE : sb.mem, (int)ns, rb.mem, &a);
    if (tcheck_rc(rc, isv ? "MPI_Allgatherv" : "MPI_Allgather")) {
        talg(0);
        if (tbuf_hash(&sb) != h) tfail("send buffer changed");
        for (int src = 0; src < c->size; src++)
            tbuf_expect(&rb, lr, a.displs[src], a.elems[src], src, 0, 0, "recvbuf");
        tbuf_untouched(&rb, "recvbuf");
    }
    tbuf_free(&sb);
    tbuf_free(&rb);
    ablocks_free(&a);
}

static void run_allgather(const tcomm_t *c, const bcase_t *b) { run_allgather_any(c, b, 0); }
static void run_allgatherv(const tcomm_t *c, const bcase_t *b) { run_allgather_any(c, b, 1); }

void check_allgather(const tcomm_t *comms, int ncomms)
{
    byte_plan(comms, ncomms, run_allgather, BP_INPLACE, (size_t)1 << 18);
}

void check_allgatherv(const tcomm_t *comms, int ncomms)
{
    byte_plan(comms, ncomms, run_allgatherv, BP_INPLACE | BP_V, (size_t)1 << 18);
}

/* ---------------------------------------------------------------- alltoall(v) */
/* One side of an alltoall(v): block per peer, in elements of that side's type. */
typedef struct {
    size_t *elems, *displs, span;
} side_t;

static void side(side_t *s, const tcomm_t *c, const bcase_t *b, int isv, int sending, int dpat)
{
    size_t p = (size_t)c->size, mult = lcm_k(b->ls, b->lroot, b->lr);
    const layout_t *l = layout(sending ? b->ls : b->lr);
    s->elems = xmalloc(sizeof(size_t) * p);
    s->displs = xmalloc(sizeof(size_t) * p);
    for (int j = 0; j < c->size; j++) {
        int from = sending ? c->rank : j, to = sending ? j : c->rank;
        size_t u = isv ? pair_units(b->vpat, b->units, from, to, mult, b->inplace) : b->units;
        s->elems[j] = u / (size_t)l->k;
        s->displs[j] = (size_t)j * s->elems[j];
    }
    s->span = isv ? vdispls(dpat, s->elems, c->size, c->rank, s->displs) : p * s->elems[0];
}

static void side_free(side_t *s)
{
    xfree(s->elems);
    xfree(s->displs);
}

static int call_alltoall(const tcomm_t *c, const bcase_t *b, int isv, const void *sb,
                         const side_t *S, void *rb, const side_t *R)
{
    MPI_Datatype st = layout(b->ls)->dt, rt = layout(b->lr)->dt;
    if (!isv) return MPI_Alltoall(sb, (int)S->elems[0], st, rb, (int)R->elems[0], rt, c->comm);
    int *sc = to_int(S->elems, c->size), *sd = to_int(S->displs, c->size);
    int *rcnt = to_int(R->elems, c->size), *rd = to_int(R->displs, c->size);
    int rc = MPI_Alltoallv(sb, sc, sd, st, rb, rcnt, rd, rt, c->comm);
    xfree(sc);
    xfree(sd);
    xfree(rcnt);
    xfree(rd);
    return rc;
}

static void run_alltoall_any(const tcomm_t *c, const bcase_t *b, int isv)
{
    int me = c->rank;
    const layout_t *ls = layout(b->ls), *lr = layout(b->lr);
    side_t S, R;
    side(&S, c, b, isv, 1, (b->dpat + 1) % D_NPAT);
    side(&R, c, b, isv, 0, b->dpat);
    tbuf_t sb, rb;
    tbuf_alloc(&sb, ls->unit, layout_span(ls, 0, S.span));
    tbuf_alloc(&rb, lr->unit, layout_span(lr, 0, R.span));
    for (int j = 0; j < c->size; j++) {
        tbuf_fill(&sb, ls, S.displs[j], S.elems[j], me, j, 0);
        if (b->inplace) tbuf_fill(&rb, lr, R.displs[j], R.elems[j], me, j, 0);
    }
    uint64_t h = tbuf_hash(&sb);
    tcase(c, "%s", bdesc(b, BP_INPLACE | (isv ? BP_V : 0)));
    int rc = call_alltoall(c, b, isv, b->inplace ? MPI_IN_PLACE : sb.mem, &S, rb.mem, &R);
    if (tcheck_rc(rc, isv ? "MPI_Alltoallv" : "MPI_Alltoall")) {
        talg(0);
        if (tbuf_hash(&sb) != h) tfail("send buffer changed");
        for (int src = 0; src < c->size; src++)
            tbuf_expect(&rb, lr, R.displs[src], R.elems[src], src, me, 0, "recvbuf");
        tbuf_untouched(&rb, "recvbuf");
    }
    tbuf_free(&sb);
    tbuf_free(&rb);
    side_free(&S);
    side_free(&R);
}

static void run_alltoall(const tcomm_t *c, const bcase_t *b) { run_alltoall_any(c, b, 0); }
static void run_alltoallv(const tcomm_t *c, const bcase_t *b) { run_alltoall_any(c, b, 1); }

void check_alltoall(const tcomm_t *comms, int ncomms)
{
    byte_plan(comms, ncomms, run_alltoall, BP_INPLACE, (size_t)1 << 16);
}

void check_alltoallv(const tcomm_t *comms, int ncomms)
{
    byte_plan(comms, ncomms, run_alltoallv, BP_INPLACE | BP_V, (size_t)1 << 16);
}

/* ---------------------------------------------------------------- barrier */
/* All ranks share one machine, so CLOCK_MONOTONIC is a common clock: no rank may leave the
 * barrier before the last rank entered it. One rank in turn arrives late. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_barrier(const tcomm_t *c, int late, int rounds)
{
    tcase(c, "late_rank=%d rounds=%d", late, rounds);
    double *enter = xmalloc(sizeof(double) * (size_t)c->size * (size_t)rounds), mine[64] = {0}, leave[64];
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        if (c->rank == late && r == 0) usleep(3000);
        mine[r] = now();
        ok = tcheck_rc(MPI_Barrier(c->comm), "MPI_Barrier");
        leave[r] = now();
        if (ok) talg(0);
    }
    /* every rank takes part even after a failure, so nobody hangs here */
    ok = tcheck_rc(PMPI_Allgather(mine, rounds, MPI_DOUBLE, enter, rounds, MPI_DOUBLE, c->comm),
                   "PMPI_Allgather") && ok;
    for (int r = 0; ok && r < rounds; r++)
        for (int i = 0; i < c->size; i++) {
            double e = enter[(size_t)i * (size_t)rounds + (size_t)r];
            if (e > leave[r]) {
                tfail("round %d: left the barrier %.6f s before rank %d entered it", r, e - leave[r], i);
                break;
            }
        }
    xfree(enter);
}

void check_barrier(const tcomm_t *comms, int ncomms)
{
    if (T.large_only) return;   /* nothing is large about a barrier */
    for (int i = 0; i < ncomms; i++)
        for (int late = 0; late < comms[i].size; late++) run_barrier(&comms[i], late, i ? 2 : 6);
}
