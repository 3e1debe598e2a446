/* mcoll neighbor requests: the user's handle, the persistent point-to-point requests of a
 * plan, and the progress of the staged strategies.
 *
 * The handle the user holds is a real MPI request: an inactive persistent receive on a
 * private duplicate of MPI_COMM_SELF that is never started. A handle table recognises it in
 * the interposed MPI_Start/Wait/Test/...; the native MPI treats it as an inactive persistent
 * request (a stray native MPI_Wait returns at once, MPI_Request_free would free it).
 *
 * Progress: the S -> G -> R chain advances only inside mcoll calls. A blocking wait with a
 * single active request waits step by step in PMPI; with several active requests it polls
 * all of them, so ranks that wait on the same requests in different orders still finish
 * (and under MPI_THREAD_MULTIPLE always: below, the engine's lock). */
#include "neighbor_req.h"
#include "../core/config.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- handle table */
#define NBUCKET 256
static mc_nb_req_t *bucket[NBUCKET];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int nreq;
/* The progress engine's lock covers the list of started requests and every request's phase:
 * a pass of any thread advances every started request, its own and other threads', and with
 * MPI_THREAD_MULTIPLE threads pass at once. Only non-blocking MPI calls run under it
 * (Startall, Testall); a wait blocks in mc_waitall only where no other thread may call MPI
 * (below MPI_THREAD_MULTIPLE), else it polls, so no thread's progress waits for another's
 * blocked peers. Below MPI_THREAD_MULTIPLE the lock is skipped (one thread calls MPI at a
 * time, and the application orders those calls): taken always, it cost 1-3 % of a 0.85 us
 * iteration of a 2-rank stencil. */
static pthread_mutex_t eng_lock = PTHREAD_MUTEX_INITIALIZER;
static mc_nb_req_t *active_head; /* requests started and not yet complete */
static int nactive;

static void eng_enter(void)
{
    if (mc_threads_multiple()) pthread_mutex_lock(&eng_lock);
}

static void eng_leave(void)
{
    if (mc_threads_multiple()) pthread_mutex_unlock(&eng_lock);
}

static unsigned hkey(MPI_Request h)
{
    uint64_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    k *= 0x9E3779B97F4A7C15ull;
    return (unsigned)(k >> 56) % NBUCKET;
}

int mc_nb_any(void)
{
    return atomic_load_explicit(&nreq, memory_order_relaxed) > 0;
}

mc_nb_req_t *mc_nb_lookup(MPI_Request h)
{
    if (!mc_nb_any() || h == MPI_REQUEST_NULL) return NULL;
    pthread_mutex_lock(&table_lock);
    mc_nb_req_t *r = bucket[hkey(h)];
    while (r && r->handle != h) r = r->hnext;
    pthread_mutex_unlock(&table_lock);
    return r;
}

static void table_add(mc_nb_req_t *r)
{
    pthread_mutex_lock(&table_lock);
    unsigned k = hkey(r->handle);
    r->hnext = bucket[k];
    bucket[k] = r;
    atomic_fetch_add(&nreq, 1);
    pthread_mutex_unlock(&table_lock);
}

static void table_del(mc_nb_req_t *r)
{
    pthread_mutex_lock(&table_lock);
    mc_nb_req_t **pp = &bucket[hkey(r->handle)];
    while (*pp && *pp != r) pp = &(*pp)->hnext;
    if (*pp) {
        *pp = r->hnext;
        atomic_fetch_sub(&nreq, 1);
    }
    pthread_mutex_unlock(&table_lock);
}

static void active_add(mc_nb_req_t *r)
{
    r->anext = active_head;
    active_head = r;
    nactive++;
}

static void active_del(mc_nb_req_t *r)
{
    mc_nb_req_t **pp = &active_head;
    while (*pp && *pp != r) pp = &(*pp)->anext;
    if (*pp) {
        *pp = r->anext;
        nactive--;
    }
}

/* ---------------------------------------------------------------- the user's handle */
static MPI_Comm self_comm = MPI_COMM_NULL;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static void make_self(void)
{
    if (PMPI_Comm_dup(MPI_COMM_SELF, &self_comm) != MPI_SUCCESS) self_comm = MPI_COMM_NULL;
}

static int make_handle(MPI_Request *h)
{
    pthread_once(&self_once, make_self);
    if (self_comm == MPI_COMM_NULL) return MPI_ERR_INTERN;
    return PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, 0, self_comm, h);
}

/* ---------------------------------------------------------------- materialization */
/* An hindexed MPI_BYTE type over absolute addresses (used with MPI_BOTTOM). A block of more
 * than mc_int_max() bytes (its length is an int) takes several entries. */
static int blocks_type(const mc_nb_blks_t *l, MPI_Datatype *t)
{
    size_t lim = mc_int_max(), n = 0;
    for (size_t i = 0; i < l->n; i++) n += l->b[i].len ? (l->b[i].len + lim - 1) / lim : 1;
    if (n > (size_t)INT_MAX) return MPI_ERR_COUNT;
    int rc = MPI_SUCCESS, *len = malloc(sizeof(int) * (n ? n : 1));
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * (n ? n : 1));
    if (!len || !dsp) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    n = 0;
    for (size_t i = 0; i < l->n && rc == MPI_SUCCESS; i++) {
        size_t off = 0;
        do {
            size_t k = l->b[i].len - off < lim ? l->b[i].len - off : lim;
            len[n] = (int)k;
            rc = PMPI_Get_address((char *)l->b[i].addr + off, &dsp[n++]);
            off += k;
        } while (off < l->b[i].len && rc == MPI_SUCCESS);
    }
    if (rc == MPI_SUCCESS) rc = PMPI_Type_create_hindexed((int)n, len, dsp, MPI_BYTE, t);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(t);
out:
    free(len), free(dsp);
    return rc;
}

static int msg_init(mc_nb_req_t *r, int i)
{
    mc_nb_msg_t *m = &r->plan.msg[i];
    int tag = r->tag0 + m->step;
    void *buf = m->ubuf;
    int count = m->ucount;
    MPI_Datatype t = m->utype;
    if (t == MPI_DATATYPE_NULL) {
        m->bytes = m->blks.bytes;
        if (m->blks.n == 1 && m->blks.b[0].len <= mc_int_max()) {
            buf = m->blks.b[0].addr, count = (int)m->blks.b[0].len, t = MPI_BYTE;
        } else {
            int rc = blocks_type(&m->blks, &r->types[i]);
            if (rc != MPI_SUCCESS) return rc;
            buf = MPI_BOTTOM, count = 1, t = r->types[i];
        }
    }
    if (m->send) return PMPI_Send_init(buf, count, t, m->peer, tag, r->comm, &r->reqs[i]);
    return PMPI_Recv_init(buf, count, t, m->peer, tag, r->comm, &r->reqs[i]);
}

/* Index lists per phase: what starts at MPI_Start, what gates G and R, what they start. */
static int phases(mc_nb_req_t *r)
{
    int n = r->plan.nmsg;
    for (int k = 0; k < MC_NB_NLIST; k++) {
        r->list[k] = malloc(sizeof(MPI_Request) * (size_t)(n ? n : 1));
        r->nlist[k] = 0;
        if (!r->list[k]) return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++) {
        const mc_nb_msg_t *m = &r->plan.msg[i];
        int k;
        if (!m->send)
            k = MC_NB_START;
        else if (m->step == MC_NB_G && r->plan.alg != MCOLL_NEIGHBOR_STANDARD)
            k = MC_NB_GSEND;
        else if (m->step == MC_NB_R)
            k = MC_NB_RSEND;
        else
            k = MC_NB_START;
        r->list[k][r->nlist[k]++] = r->reqs[i];
        if (!m->send && m->step == MC_NB_S) r->list[MC_NB_SRECV][r->nlist[MC_NB_SRECV]++] = r->reqs[i];
        if (!m->send && m->step == MC_NB_G) r->list[MC_NB_GRECV][r->nlist[MC_NB_GRECV]++] = r->reqs[i];
        r->list[MC_NB_ALL][r->nlist[MC_NB_ALL]++] = r->reqs[i];
    }
    return MPI_SUCCESS;
}

int mc_nb_req_materialize(mc_nb_req_t *r)
{
    int n = r->plan.nmsg, rc = MPI_SUCCESS;
    r->reqs = malloc(sizeof(MPI_Request) * (size_t)(n ? n : 1));
    r->types = malloc(sizeof(MPI_Datatype) * (size_t)(n ? n : 1));
    if (!r->reqs || !r->types) return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) r->reqs[i] = MPI_REQUEST_NULL, r->types[i] = MPI_DATATYPE_NULL;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) rc = msg_init(r, i);
    if (rc == MPI_SUCCESS) rc = phases(r);
    if (rc == MPI_SUCCESS) rc = make_handle(&r->handle);
    if (rc == MPI_SUCCESS) table_add(r);
    return rc;
}

void mc_nb_req_destroy(mc_nb_req_t *r)
{
    if (!r) return;
    int fin = 0;
    PMPI_Finalized(&fin);
    for (int i = 0; !fin && r->reqs && i < r->plan.nmsg; i++) {
        if (r->reqs[i] != MPI_REQUEST_NULL) PMPI_Request_free(&r->reqs[i]);
        if (r->types[i] != MPI_DATATYPE_NULL) PMPI_Type_free(&r->types[i]);
    }
    if (!fin && r->handle != MPI_REQUEST_NULL) {
        table_del(r);
        PMPI_Request_free(&r->handle);
    }
    if (r->share)
        mc_nb_share_drop(r->share, r->slot);
    else if (!fin && r->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&r->comm);
    for (int k = 0; k < MC_NB_NLIST; k++) free(r->list[k]);
    free(r->reqs), free(r->types);
    mc_nb_plan_free(&r->plan);
    free(r);
}

/* ---------------------------------------------------------------- running */
static void run_copies(const mc_nb_copy_t *c)
{
    for (size_t i = 0; i < c->dst.n; i++) mc_memmove(c->dst.b[i].addr, c->src.b[i].addr, c->dst.b[i].len);
}

static int startall(mc_nb_req_t *r, int k)
{
    return r->nlist[k] ? PMPI_Startall(r->nlist[k], r->list[k]) : MPI_SUCCESS;
}

/* Waits (block) or tests one list; *done says whether it completed. */
static int gate(mc_nb_req_t *r, int k, int block, int *done)
{
    *done = 1;
    if (!r->nlist[k]) return MPI_SUCCESS;
    if (block) return mc_waitall(r->nlist[k], r->list[k]);
    return PMPI_Testall(r->nlist[k], r->list[k], done, MPI_STATUSES_IGNORE);
}

static void finish(mc_nb_req_t *r)
{
    run_copies(&r->plan.copy_self);
    run_copies(&r->plan.copy_g);
    run_copies(&r->plan.copy_dup); /* last: its sources were filled by receives and copy_g */
    r->phase = MC_NB_IDLE;
    active_del(r);
}

/* Moves r as far as it goes; block: until complete. The caller holds the engine's lock. */
static int advance(mc_nb_req_t *r, int block)
{
    int done = 1, rc = MPI_SUCCESS;
    if (r->phase == MC_NB_WAIT_S) {
        rc = gate(r, MC_NB_SRECV, block, &done);
        if (rc != MPI_SUCCESS || !done) return rc;
        rc = startall(r, MC_NB_GSEND);
        r->phase = MC_NB_WAIT_G;
    }
    if (rc == MPI_SUCCESS && r->phase == MC_NB_WAIT_G) {
        rc = gate(r, MC_NB_GRECV, block, &done);
        if (rc != MPI_SUCCESS || !done) return rc;
        rc = startall(r, MC_NB_RSEND);
        r->phase = MC_NB_WAIT_ALL;
    }
    if (rc == MPI_SUCCESS && r->phase == MC_NB_WAIT_ALL) {
        rc = gate(r, MC_NB_ALL, block, &done);
        if (rc != MPI_SUCCESS || !done) return rc;
        finish(r);
    }
    return rc;
}

int mc_nb_active(const mc_nb_req_t *r)
{
    return r->uactive;
}
int mc_nb_done(const mc_nb_req_t *r)
{
    eng_enter();
    int done = r->phase == MC_NB_IDLE;
    eng_leave();
    return done;
}
void mc_nb_complete(mc_nb_req_t *r)
{
    r->uactive = 0;
}

int mc_nb_start(mc_nb_req_t *r)
{
    int rc = MPI_ERR_REQUEST;
    eng_enter();
    if (r->phase == MC_NB_IDLE && !r->uactive) rc = startall(r, MC_NB_START);
    if (rc == MPI_SUCCESS) {
        r->starts++;
        r->uactive = 1;
        r->phase = MC_NB_WAIT_S;
        active_add(r);
        rc = advance(r, 0); /* G may start at once (no S receives) */
    }
    eng_leave();
    return rc;
}

/* One non-blocking pass over every active request; the caller holds the engine's lock. */
static int progress_all(void)
{
    int rc = MPI_SUCCESS;
    mc_nb_req_t *r = active_head;
    while (r) {
        mc_nb_req_t *next = r->anext; /* advance may unlink r */
        int e = advance(r, 0);
        if (e != MPI_SUCCESS && rc == MPI_SUCCESS) rc = e;
        r = next;
    }
    return rc;
}

int mc_nb_test(mc_nb_req_t *r, int *flag)
{
    eng_enter();
    int rc = progress_all();
    int done = !r || r->phase == MC_NB_IDLE;
    eng_leave();
    if (flag) *flag = done;
    if (r && done) r->uactive = 0;
    return rc;
}

/* Threads in mc_nb_wait (MPI_THREAD_MULTIPLE). A wait there polls: a pass under the lock, the
 * lock dropped, again; while another thread waits too, each drop yields. Otherwise the thread
 * that dropped the lock took it straight back, and the sleeper its unlock woke found it taken
 * and slept again - a convoy (4 threads per rank waiting on their neighbor requests, 5 ranks
 * on virtual nodes of 2, ASan build: 6,700 futex sleeps a second, mcoll-threads 55 s; 10-14 s
 * with the yield, the optimized build alike at 4.3-5.2 s against 4.7-5.5). A thread alone
 * yields only after 64 passes: a yield per pass would slow its polling. */
static _Atomic int nwaiters;

int mc_nb_wait(mc_nb_req_t *r)
{
    int rc = MPI_SUCCESS, spins = 0, mt = mc_threads_multiple();
    r->uactive = 0;
    if (mt) nwaiters++;
    eng_enter();
    if (r->phase != MC_NB_IDLE && nactive == 1 && !mt) {
        rc = advance(r, 1);
    } else {
        while (r->phase != MC_NB_IDLE && (rc = progress_all()) == MPI_SUCCESS && r->phase != MC_NB_IDLE) {
            eng_leave();
            if (++spins > 64 || (mt && nwaiters > 1))
                sched_yield(); /* oversubscribed nodes: let the peers run */
            eng_enter();
        }
    }
    eng_leave();
    if (mt) nwaiters--;
    return rc;
}

int mc_nb_free(mc_nb_req_t *r, MPI_Request *h)
{
    int rc = MPI_SUCCESS;
    /* completing here (instead of at a later progress call that may never come) keeps the
     * peers that wait on this rank's G and R sends from hanging */
    if (!mc_nb_done(r)) rc = mc_nb_wait(r);
    mc_nb_req_destroy(r);
    *h = MPI_REQUEST_NULL;
    return rc;
}

MPI_Comm mc_nb_user_comm(const mc_nb_req_t *r)
{
    return r->ucomm;
}

void mc_nb_status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE) return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
}

int mcoll_neighbor_stats(MPI_Request req, mcoll_neighbor_stats_t *out)
{
    mc_nb_req_t *r = mc_nb_lookup(req);
    if (!r || !out) return MPI_ERR_REQUEST;
    *out = r->stats;
    out->starts = r->starts;
    return MPI_SUCCESS;
}
