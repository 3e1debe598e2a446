/* Per-communicator context: created on the first collective, cached as an attribute, and
 * freed by the attribute's delete callback (MPI_Comm_free, or MPI_Finalize for the
 * predefined communicators). */
#include "config.h"
#include "log.h"
#include "mc.h"
#include "mcoll.h"
#include "../shm/shm.h"
#include "../coll/hier/hier.h"
#include "../select/select.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;

/* The attribute lookup costs about 200 instructions per call; a thread's last (comm, ctx)
 * pair is reused until any context is deleted (a freed handle may be reused for a new
 * communicator), which bumps the generation. */
#include <stdatomic.h>
static _Atomic unsigned ctx_gen = 1;
static __thread struct { MPI_Comm comm; mc_ctx_t *ctx; unsigned gen; } last;

mc_ctx_t *mc_ctx_peek(MPI_Comm comm)
{
    if (last.ctx && last.comm == comm && last.gen == atomic_load_explicit(&ctx_gen, memory_order_acquire))
        return last.ctx;
    return NULL;
}

static void remember(MPI_Comm comm, mc_ctx_t *c)
{
    last.comm = comm;
    last.ctx = c;
    last.gen = atomic_load_explicit(&ctx_gen, memory_order_acquire);
}

void mc_ctx_free(mc_ctx_t *c)
{
    int fin = 0;
    if (!c) return;
    PMPI_Finalized(&fin);
    mc_hier_free(c->hier); /* with the node and lane contexts it derived */
    if (!fin && !c->derived) {
        if (c->lane_comm != MPI_COMM_NULL) PMPI_Comm_free(&c->lane_comm);
        if (c->node_comm != MPI_COMM_NULL && c->node_comm != c->comm) PMPI_Comm_free(&c->node_comm);
        if (c->pcomm != MPI_COMM_NULL) PMPI_Comm_free(&c->pcomm);
    }
    mc_shm_free(c->shm);
    mc_msel_free(c->msel);
    mc_sel_memo_free(c->memo);
    free(c->node_of);
    free(c->local_of);
    free(c->node_size);
    free(c->node_leader);
    free(c);
}

/* The context of every communicator mcoll could not make its own communicators for (the MPI
 * ran out of them: MPICH 4.0 has about 2048 context ids, Open MPI 4.1 64K): its collectives
 * go to the native MPI, as they would without mcoll. Shared, never freed. */
static mc_ctx_t native_marker = {.native = 1};

static int delete_fn(MPI_Comm comm, int kv, void *attr, void *extra)
{
    atomic_fetch_add_explicit(&ctx_gen, 1, memory_order_acq_rel);
    if (attr != &native_marker) mc_ctx_free(attr);
    return MPI_SUCCESS;
}

static void create_keyval(void)
{
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL);
}

/* Node communicator: ranks sharing memory, optionally cut into virtual nodes of k
 * consecutive world ranks. Local ranks follow comm rank order (split key). On one node it is
 * the user's communicator itself, which mcoll uses only for collectives (the region's set-up).
 * Every communicator mcoll creates is split from the whole of the user's communicator, never
 * from a part of it: with MPI_THREAD_MULTIPLE a creation over a subset, inside a collective
 * of one thread, could wait forever on the MPI's context-id agreement, which lets one creation
 * at a time proceed in each process (Open MPI 4.1 hung so with virtual nodes and threads on
 * their own communicators). A split of all of it is ordered like any collective on it. */
static int split_nodes(mc_ctx_t *c)
{
    MPI_Comm shm, comm = c->comm;
    int k = mc_cfg()->vnode_size, rc, n = 0;
    rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &shm);
    if (rc != MPI_SUCCESS) return rc;
    if (k <= 0) {
        PMPI_Comm_size(shm, &n);
        if (n == c->size) { /* one node (every rank sees it so) */
            PMPI_Comm_free(&shm);
            shm = comm;
        }
        c->node_comm = shm;
        return MPI_SUCCESS;
    }
    /* a virtual node: same shared node (its lowest comm rank) and the same world rank / k;
     * its color is the lowest comm rank that has both */
    int wrank, mine[2], color = c->rank;
    int *all = malloc(2 * sizeof(int) * (size_t)c->size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    mine[1] = wrank / k;
    rc = PMPI_Allreduce(&c->rank, &mine[0], 1, MPI_INT, MPI_MIN, shm);
    PMPI_Comm_free(&shm);
    if (!all) return MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) rc = PMPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    for (int r = 0; rc == MPI_SUCCESS && r < c->size; r++)
        if (all[2 * r] == mine[0] && all[2 * r + 1] == mine[1]) {
            color = r;
            break;
        }
    free(all);
    if (rc == MPI_SUCCESS) rc = PMPI_Comm_split(comm, color, c->rank, &c->node_comm);
    return rc;
}

/* Every rank learns every rank's leader (lowest comm rank of its node); nodes are numbered
 * in order of their leaders, so node indices agree on all ranks. */
static int build_tables(mc_ctx_t *c)
{
    int p = c->size, rc;
    int *lead = malloc(sizeof(int) * (size_t)p);
    c->node_of = malloc(sizeof(int) * (size_t)p);
    c->local_of = malloc(sizeof(int) * (size_t)p);
    c->node_size = calloc((size_t)p, sizeof(int));
    c->node_leader = malloc(sizeof(int) * (size_t)p);
    if (!lead || !c->node_of || !c->local_of || !c->node_size || !c->node_leader) {
        free(lead);
        return MPI_ERR_NO_MEM;
    }
    int my_leader = c->rank;
    rc = PMPI_Allreduce(MPI_IN_PLACE, &my_leader, 1, MPI_INT, MPI_MIN, c->node_comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(&my_leader, 1, MPI_INT, lead, 1, MPI_INT, c->comm);
    if (rc != MPI_SUCCESS) { free(lead); return rc; }
    c->nnodes = 0;
    for (int r = 0; r < p; r++) {
        if (lead[r] == r) {
            c->node_leader[c->nnodes] = r;
            c->node_of[r] = c->nnodes++;
        } else {
            c->node_of[r] = c->node_of[lead[r]]; /* leader < r: already numbered */
        }
        c->local_of[r] = c->node_size[c->node_of[r]]++;
    }
    free(lead);
    c->node = c->node_of[c->rank];
    c->leader = c->node_leader[c->node];
    c->uniform_ppn = 1;
    for (int n = 1; n < c->nnodes; n++)
        if (c->node_size[n] != c->node_size[0]) c->uniform_ppn = 0;
    return MPI_SUCCESS;
}

/* mcoll's communicators for comm: a private duplicate for its point-to-point traffic
 * (mc_ctx_p2p), and where comm spans nodes the node and lane splits. On one node nothing is
 * created until a point-to-point algorithm first runs: shared-memory algorithms need no
 * communicator of their own. The MPI's supply is finite (MPICH 4.0: 2046 live duplicates of
 * the world natively; 511 under mcoll when each took three more). */
static int ctx_create(MPI_Comm comm, mc_ctx_t **out)
{
    mc_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return MPI_ERR_NO_MEM;
    c->comm = comm;
    c->pcomm = c->node_comm = c->lane_comm = MPI_COMM_NULL;
    PMPI_Comm_size(comm, &c->size);
    PMPI_Comm_rank(comm, &c->rank);
    int rc = split_nodes(c), ok, all = 0;
    if (rc == MPI_SUCCESS) {
        if (c->node_comm != comm) PMPI_Comm_set_errhandler(c->node_comm, MPI_ERRORS_RETURN);
        PMPI_Comm_rank(c->node_comm, &c->local_rank);
        PMPI_Comm_size(c->node_comm, &c->local_size);
        rc = build_tables(c);
    }
    if (rc == MPI_SUCCESS && c->nnodes > 1) rc = mc_ctx_p2p(c);
    if (rc == MPI_SUCCESS && c->nnodes > 1) rc = PMPI_Comm_split(c->pcomm, c->local_rank, c->node, &c->lane_comm);
    /* Every rank takes the same way: out of communicators, all ranks' calls go native. */
    ok = rc == MPI_SUCCESS;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all = 0;
    if (!all) {
        mc_ctx_free(c);
        c = &native_marker;
        static atomic_int warned;
        char why[MPI_MAX_ERROR_STRING] = "on another rank";
        int len = 0;
        if (!ok) PMPI_Error_string(rc, why, &len);
        if (!atomic_exchange(&warned, 1))
            mc_warn("could not create mcoll's communicators for a communicator (%s): its collectives "
                    "use the native MPI", why);
    }
    rc = PMPI_Comm_set_attr(comm, keyval, c);
    if (rc != MPI_SUCCESS) {
        if (c != &native_marker) mc_ctx_free(c);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
}

/* The attribute lookup, or the context's creation: kept out of line so the fast path of
 * mc_ctx_get needs no stack frame. */
__attribute__((noinline)) static int ctx_lookup(MPI_Comm comm, mc_ctx_t **out)
{
    void *val = NULL;
    int flag = 0;
    pthread_once(&keyval_once, create_keyval);
    int rc = PMPI_Comm_get_attr(comm, keyval, &val, &flag);
    if (rc != MPI_SUCCESS) return rc;
    if (flag) {
        *out = val;
        remember(comm, val);
        return MPI_SUCCESS;
    }
    rc = ctx_create(comm, out);
    if (rc == MPI_SUCCESS) remember(comm, *out);
    return rc;
}

int mc_ctx_get(MPI_Comm comm, mc_ctx_t **out)
{
    if ((*out = mc_ctx_peek(comm))) return MPI_SUCCESS;
    return ctx_lookup(comm, out);
}

int mc_ctx_p2p(mc_ctx_t *c)
{
    if (c->pcomm != MPI_COMM_NULL) return MPI_SUCCESS;
    int rc = PMPI_Comm_dup(c->comm, &c->pcomm);
    if (rc == MPI_SUCCESS) rc = PMPI_Comm_set_errhandler(c->pcomm, MPI_ERRORS_RETURN);
    return rc;
}

int mc_ctx_native(MPI_Comm comm)
{
    mc_ctx_t *c;
    return mc_ctx_get(comm, &c) != MPI_SUCCESS || c->native;
}

/* The node's context is one node of local_size ranks; the lane's, one rank per node. Both
 * borrow the parent's communicator as their own and private one: mcoll made it, no user
 * traffic shares it. */
int mc_ctx_derive(const mc_ctx_t *parent, int lane, mc_ctx_t **out)
{
    mc_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return MPI_ERR_NO_MEM;
    c->derived = 1;
    c->comm = c->pcomm = lane ? parent->lane_comm : parent->node_comm;
    c->node_comm = lane ? MPI_COMM_NULL : c->comm;
    c->lane_comm = MPI_COMM_NULL;
    PMPI_Comm_size(c->comm, &c->size);
    PMPI_Comm_rank(c->comm, &c->rank);
    int p = c->size, nn = lane ? p : 1;
    c->node_of = malloc(sizeof(int) * (size_t)p);
    c->local_of = malloc(sizeof(int) * (size_t)p);
    c->node_size = malloc(sizeof(int) * (size_t)nn);
    c->node_leader = malloc(sizeof(int) * (size_t)nn);
    if (!c->node_of || !c->local_of || !c->node_size || !c->node_leader) {
        mc_ctx_free(c);
        return MPI_ERR_NO_MEM;
    }
    for (int r = 0; r < p; r++) {
        c->node_of[r] = lane ? r : 0;
        c->local_of[r] = lane ? 0 : r;
    }
    for (int n = 0; n < nn; n++) {
        c->node_size[n] = lane ? 1 : p;
        c->node_leader[n] = n;
    }
    c->nnodes = nn;
    c->node = c->node_of[c->rank];
    c->local_rank = c->local_of[c->rank];
    c->local_size = c->node_size[c->node];
    c->leader = c->node_leader[c->node];
    c->uniform_ppn = 1;
    c->shm_failed = lane; /* one rank per node: no region, and no node communicator for one */
    *out = c;
    return MPI_SUCCESS;
}

/* Called before PMPI_Finalize so the predefined communicators' contexts are released while
 * MPI can still free their communicators. */
void mc_ctx_release_predefined(void)
{
    MPI_Comm predefined[] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    if (keyval == MPI_KEYVAL_INVALID) return;
    for (int i = 0; i < 2; i++) {
        void *val;
        int flag = 0;
        /* deleting an absent attribute is an error in some MPIs */
        if (PMPI_Comm_get_attr(predefined[i], keyval, &val, &flag) == MPI_SUCCESS && flag)
            PMPI_Comm_delete_attr(predefined[i], keyval);
    }
}

int mcoll_comm_info(MPI_Comm comm, mcoll_comm_info_t *info)
{
    mc_ctx_t *c;
    int inter = 0;
    if (!info || comm == MPI_COMM_NULL) return MPI_ERR_ARG;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_ERR_COMM;
    int rc = mc_ctx_get(comm, &c);
    if (rc != MPI_SUCCESS) return rc;
    if (c->native) return MPI_ERR_INTERN; /* mcoll has no view of it */
    *info = (mcoll_comm_info_t){.size = c->size, .rank = c->rank, .node = c->node,
                                .nnodes = c->nnodes, .local_rank = c->local_rank,
                                .local_size = c->local_size, .uniform_ppn = c->uniform_ppn,
                                .leader = c->leader};
    return MPI_SUCCESS;
}
