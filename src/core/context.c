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
#include <limits.h>
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
    mc_nb_share_release(c->nb);
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

int mc_world_up(void)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    return init && !fin;
}

int mc_raise_no_comm(int rc)
{
    if (mc_world_up()) PMPI_Comm_call_errhandler(MPI_COMM_WORLD, rc);
    return rc;
}

/* This process's world: MPI_COMM_WORLD's group, or, in a program that uses MPI sessions
 * without MPI_Init (MPI-4; MPI_COMM_WORLD is not valid there), the group of the process set
 * mpi://WORLD from a session of mcoll's own, finalized by world_release. */
typedef struct {
    MPI_Group g;
#if MPI_VERSION >= 4
    MPI_Session s;
#endif
} world_t;

static int world_group(world_t *w)
{
    w->g = MPI_GROUP_NULL;
#if MPI_VERSION >= 4
    w->s = MPI_SESSION_NULL;
    if (!mc_world_up()) {
        if (PMPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &w->s) != MPI_SUCCESS) return 0;
        return PMPI_Group_from_session_pset(w->s, "mpi://WORLD", &w->g) == MPI_SUCCESS;
    }
#endif
    return PMPI_Comm_group(MPI_COMM_WORLD, &w->g) == MPI_SUCCESS;
}

static void world_release(world_t *w)
{
    if (w->g != MPI_GROUP_NULL) PMPI_Group_free(&w->g);
#if MPI_VERSION >= 4
    if (w->s != MPI_SESSION_NULL) PMPI_Session_finalize(&w->s);
#endif
}

int mc_world_rank(void)
{
    world_t w;
    int r = -1;
    if (world_group(&w) && PMPI_Group_rank(w.g, &r) != MPI_SUCCESS) r = -1;
    world_release(&w);
    return r;
}

/* out[r] = the rank in world group wg of comm's rank r (MPI_UNDEFINED: not in that world), for
 * every rank of comm (p of them); scratch holds p ints. 0 when a call fails. */
static int world_ranks(MPI_Comm comm, MPI_Group wg, int p, int *scratch, int *out)
{
    MPI_Group g;
    if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS) return 0;
    for (int r = 0; r < p; r++) scratch[r] = r;
    int ok = PMPI_Group_translate_ranks(g, p, scratch, wg, out) == MPI_SUCCESS;
    PMPI_Group_free(&g);
    return ok;
}

/* This process's world rank, and its world's lowest rank in comm. A communicator may hold
 * processes of several MPI worlds (MPI_Comm_spawn, MPI_Comm_connect), each numbering its
 * processes from 0: a world is told apart by its lowest rank in comm, the first whose process
 * is in this process's world. Where the world cannot be read (no memory, a failed call), the
 * caller's comm rank stands for what is missing: its virtual node is then its own. */
static void world_place(MPI_Comm comm, int *wrank, int *first)
{
    world_t w;
    int p = 0;
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, first);
    *wrank = *first;
    int *in = malloc(2 * sizeof(int) * (size_t)p), *out = in ? in + p : NULL;
    int ok = in && world_group(&w) && PMPI_Group_rank(w.g, wrank) == MPI_SUCCESS &&
             world_ranks(comm, w.g, p, in, out);
    for (int r = 0; ok && r < p; r++)
        if (out[r] != MPI_UNDEFINED) {
            *first = r;
            break;
        }
    if (in) world_release(&w);
    free(in);
}

/* Node communicator: ranks sharing memory, optionally cut into virtual nodes of k
 * consecutive world ranks of one world. Local ranks follow comm rank order (split key). On one
 * node it is the user's communicator itself, which mcoll uses only for collectives (the
 * region's set-up).
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
    PMPI_Comm_size(shm, &n);
    mc_shm_note_host_ranks(n);
    if (k <= 0) {
        if (n == c->size) { /* one node (every rank sees it so) */
            PMPI_Comm_free(&shm);
            shm = comm;
        }
        c->node_comm = shm;
        return MPI_SUCCESS;
    }
    /* a virtual node: same shared node (its lowest comm rank), same world and the same world
     * rank / k; its color is the lowest comm rank that has all three */
    int wrank, mine[3], color = c->rank;
    int *all = malloc(3 * sizeof(int) * (size_t)c->size);
    world_place(comm, &wrank, &mine[2]);
    mine[1] = wrank / k;
    rc = PMPI_Allreduce(&c->rank, &mine[0], 1, MPI_INT, MPI_MIN, shm);
    PMPI_Comm_free(&shm);
    if (!all) return MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) rc = PMPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, comm);
    for (int r = 0; rc == MPI_SUCCESS && r < c->size; r++)
        if (!memcmp(all + 3 * r, mine, sizeof mine)) {
            color = r;
            break;
        }
    free(all);
    if (rc == MPI_SUCCESS) rc = PMPI_Comm_split(comm, color, c->rank, &c->node_comm);
    return rc;
}

static int alloc_tables(mc_ctx_t *c)
{
    size_t p = (size_t)c->size;
    c->node_of = malloc(sizeof(int) * p);
    c->local_of = malloc(sizeof(int) * p);
    c->node_size = calloc(p, sizeof(int));
    c->node_leader = malloc(sizeof(int) * p);
    return c->node_of && c->local_of && c->node_size && c->node_leader;
}

/* The tables from every rank's leader (lowest comm rank of its node); nodes are numbered in
 * order of their leaders, so node indices agree on all ranks. */
static void fill_tables(mc_ctx_t *c, const int *lead)
{
    c->nnodes = 0;
    for (int r = 0; r < c->size; r++) {
        if (lead[r] == r) {
            c->node_leader[c->nnodes] = r;
            c->node_of[r] = c->nnodes++;
        } else {
            c->node_of[r] = c->node_of[lead[r]]; /* leader < r: already numbered */
        }
        c->local_of[r] = c->node_size[c->node_of[r]]++;
    }
    c->node = c->node_of[c->rank];
    c->leader = c->node_leader[c->node];
    c->local_rank = c->local_of[c->rank];
    c->local_size = c->node_size[c->node];
    c->uniform_ppn = 1;
    for (int n = 1; n < c->nnodes; n++)
        if (c->node_size[n] != c->node_size[0]) c->uniform_ppn = 0;
}

/* The collective way: the node communicator, then every rank's leader from it. */
static int leaders_by_split(mc_ctx_t *c, int *lead)
{
    int rc = split_nodes(c);
    if (rc != MPI_SUCCESS) return rc;
    if (c->node_comm != c->comm) PMPI_Comm_set_errhandler(c->node_comm, MPI_ERRORS_RETURN);
    int my_leader = c->rank;
    rc = PMPI_Allreduce(MPI_IN_PLACE, &my_leader, 1, MPI_INT, MPI_MIN, c->node_comm);
    if (rc == MPI_SUCCESS) rc = PMPI_Allgather(&my_leader, 1, MPI_INT, lead, 1, MPI_INT, c->comm);
    return rc;
}

/* Which node every process of MPI_COMM_WORLD is on does not depend on the communicator, so it
 * is learned once: world_key[w] is the world rank of w's node leader, taken from the first
 * context made the collective way for a communicator congruent with the world. A later
 * communicator's leaders then need no communication (MPI_Comm_split_type alone cost 9 of the
 * 57 us mcoll added to a fresh communicator's first 8-byte allreduce at 2 ranks). */
static int *_Atomic world_key;
static int world_size;
static _Atomic uint64_t made, made_by_table; /* contexts (mcoll_setup_stats) */

static void learn_world(const mc_ctx_t *c)
{
    int same = MPI_UNEQUAL;
    if (atomic_load(&world_key) || !mc_world_up() ||
        PMPI_Comm_compare(c->comm, MPI_COMM_WORLD, &same) != MPI_SUCCESS ||
        (same != MPI_IDENT && same != MPI_CONGRUENT))
        return; /* known, or no MPI_COMM_WORLD (MPI sessions alone), or not the world */
    int *key = malloc(sizeof(int) * (size_t)c->size), *none = NULL;
    if (!key) return;
    for (int r = 0; r < c->size; r++) key[r] = c->node_leader[c->node_of[r]];
    world_size = c->size;
    if (!atomic_compare_exchange_strong(&world_key, &none, key)) free(key);
}

/* The leaders from world_key: 0 when it is not known yet or a rank of comm is not in this
 * process's MPI_COMM_WORLD (dynamic processes: then every rank has one not in its own). */
static int leaders_by_table(const mc_ctx_t *c, int *lead)
{
    int *key = atomic_load(&world_key), p = c->size, ok = key != NULL;
    MPI_Group wg = MPI_GROUP_NULL;
    int *w = ok ? malloc(sizeof(int) * 2 * (size_t)p) : NULL;
    int *first = ok ? malloc(sizeof(int) * (size_t)world_size) : NULL;
    ok = w && first && PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS &&
         world_ranks(c->comm, wg, p, w + p, w);
    for (int i = 0; ok && i < world_size; i++) first[i] = -1;
    for (int r = 0; ok && r < p; r++) {
        ok = w[r] >= 0 && w[r] < world_size; /* not MPI_UNDEFINED */
        if (!ok) break;
        int k = key[w[r]];
        if (first[k] < 0) first[k] = r;
        lead[r] = first[k];
    }
    if (wg != MPI_GROUP_NULL) PMPI_Group_free(&wg);
    free(w);
    free(first);
    return ok;
}

/* This node's load (mc_host_load) in thousandths, as the creation's allreduces carry it. */
static int load_milli(void)
{
    double l = mc_host_load() * 1000;
    return l < INT_MAX / 2 ? (int)l : INT_MAX / 2;
}

/* mcoll's communicators for comm: a private duplicate for its point-to-point traffic
 * (mc_ctx_p2p), and where comm spans nodes the node and lane splits. On one node nothing is
 * created until a point-to-point algorithm first runs: shared-memory algorithms need no
 * communicator of their own. The MPI's supply is finite (MPICH 4.0: 2046 live duplicates of
 * the world natively; 511 under mcoll when each took three more).
 * Every rank takes the same way, agreed by one allreduce: the leaders from world_key, or the
 * collective way; out of memory or communicators, all ranks' calls go native. On one node by
 * world_key nothing can fail after that allreduce, so it is the only one. The allreduces carry
 * the nodes' load too (ctx->load, the last one's: a first context's split learns it). */
static int ctx_create(MPI_Comm comm, mc_ctx_t **out)
{
    mc_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return MPI_ERR_NO_MEM;
    c->comm = comm;
    c->pcomm = c->node_comm = c->lane_comm = MPI_COMM_NULL;
    PMPI_Comm_size(comm, &c->size);
    PMPI_Comm_rank(comm, &c->rank);
    int *lead = malloc(sizeof(int) * (size_t)c->size), rc = MPI_SUCCESS;
    /* [2]: minus this node's load in thousandths (known from an earlier split; a first
     * split's is agreed by the second allreduce below): the busiest node's */
    int mine[3] = {lead && alloc_tables(c), 0, -load_milli()}, way[3] = {0, 0, 0};
    if (mine[0]) mine[1] = leaders_by_table(c, lead);
    if (PMPI_Allreduce(mine, way, 3, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) way[0] = 0;
    int ok = way[0], all = way[0], by_table = way[1];
    c->load = -way[2] / 1000.0;
    if (ok && by_table) {
        fill_tables(c, lead);
        c->node_comm = comm;
        if (c->nnodes > 1) {
            rc = PMPI_Comm_split(comm, c->leader, c->rank, &c->node_comm);
            if (rc == MPI_SUCCESS) PMPI_Comm_set_errhandler(c->node_comm, MPI_ERRORS_RETURN);
        }
    } else if (ok) {
        rc = leaders_by_split(c, lead);
        if (rc == MPI_SUCCESS) {
            fill_tables(c, lead);
            learn_world(c);
        }
    }
    free(lead);
    if (ok && c->nnodes > 1 && rc == MPI_SUCCESS) rc = mc_ctx_p2p(c);
    if (ok && c->nnodes > 1 && rc == MPI_SUCCESS)
        rc = PMPI_Comm_split(c->pcomm, c->local_rank, c->node, &c->lane_comm);
    if (ok && !(by_table && c->nnodes == 1)) {
        int two[2] = {rc == MPI_SUCCESS, -load_milli()}, agreed[2];
        ok = two[0];
        all = PMPI_Allreduce(two, agreed, 2, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS && agreed[0];
        if (all) c->load = -agreed[1] / 1000.0;
    }
    if (!all) {
        if (!mine[0]) rc = MPI_ERR_NO_MEM;
        mc_ctx_free(c);
        c = &native_marker;
        static atomic_int warned;
        char why[MPI_MAX_ERROR_STRING] = "on another rank";
        int len = 0;
        if (rc != MPI_SUCCESS) PMPI_Error_string(rc, why, &len);
        if (!atomic_exchange(&warned, 1))
            mc_warn("could not create mcoll's communicators for a communicator (%s): its collectives "
                    "use the native MPI", why);
    }
    atomic_fetch_add(&made, 1);
    if (all && by_table) atomic_fetch_add(&made_by_table, 1);
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

void mc_ctx_counts(uint64_t *contexts, uint64_t *by_table)
{
    *contexts = atomic_load(&made);
    *by_table = atomic_load(&made_by_table);
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
    int *lead = malloc(sizeof(int) * (size_t)c->size); /* one node, or one rank per node */
    if (!lead || !alloc_tables(c)) {
        free(lead);
        mc_ctx_free(c);
        return MPI_ERR_NO_MEM;
    }
    for (int r = 0; r < c->size; r++) lead[r] = lane ? r : 0;
    fill_tables(c, lead);
    free(lead);
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
