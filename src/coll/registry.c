/* The algorithm registry: every algorithm of every collective, in one table per collective.
 * An algorithm lives in src/coll/<collective>/<name>.c and defines mc_alg_<coll>_<name>. */
#include "../core/mc.h"
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Weak references: a build missing an algorithm file still links; the registry skips the
 * hole and the unit test registry_complete fails, naming it. */
#define ALG(coll, name) extern const mc_alg_t mc_alg_##coll##_##name __attribute__((weak));
#define REF(coll, name) &mc_alg_##coll##_##name,

#define BARRIER(X) X(barrier, linear) X(barrier, double_ring) X(barrier, recursive_doubling) X(barrier, bruck) \
    X(barrier, shm) X(barrier, hier)
#define BCAST(X) X(bcast, linear) X(bcast, pipeline) X(bcast, binomial) X(bcast, binary) X(bcast, split_binary) \
    X(bcast, shm_pipe) X(bcast, shm_direct) X(bcast, hier)
#define REDUCE(X) X(reduce, linear) X(reduce, pipeline) X(reduce, binomial) X(reduce, binary) X(reduce, kchain) \
    X(reduce, shm_dpml) X(reduce, shm_ma) X(reduce, shm_ma_socket) X(reduce, shm_direct) X(reduce, hier)
#define ALLREDUCE(X) X(allreduce, recursive_doubling) X(allreduce, ring) X(allreduce, rabenseifner) X(allreduce, reduce_bcast) \
    X(allreduce, shm_dpml) X(allreduce, shm_ma) X(allreduce, shm_ma_socket) X(allreduce, shm_direct) \
    X(allreduce, hier_ma_ring) X(allreduce, mo_rsag) X(allreduce, mo_bruck)
#define REDUCE_SCATTER(X) X(reduce_scatter, ring) X(reduce_scatter, recursive_halving) \
    X(reduce_scatter, shm_dpml) X(reduce_scatter, shm_ma) X(reduce_scatter, shm_ma_socket) X(reduce_scatter, shm_direct)
#define REDUCE_SCATTER_BLOCK(X) X(reduce_scatter_block, ring) X(reduce_scatter_block, recursive_halving) \
    X(reduce_scatter_block, shm_dpml) X(reduce_scatter_block, shm_ma) X(reduce_scatter_block, shm_ma_socket) \
    X(reduce_scatter_block, shm_direct)
#define ALLGATHER(X) X(allgather, ring) X(allgather, recursive_doubling) X(allgather, bruck) \
    X(allgather, shm_pipe) X(allgather, shm_direct) X(allgather, mo_bruck) X(allgather, mo_ring)
#define ALLGATHERV(X) X(allgatherv, ring) X(allgatherv, recursive_doubling) X(allgatherv, shm_pipe) X(allgatherv, shm_direct)
#define GATHER(X) X(gather, linear) X(gather, binomial) X(gather, shm_pipe) X(gather, shm_direct) X(gather, hier)
#define GATHERV(X) X(gatherv, linear) X(gatherv, shm_pipe) X(gatherv, shm_direct) X(gatherv, shm_hybrid)
#define SCATTER(X) X(scatter, linear) X(scatter, binomial) X(scatter, shm_pipe) X(scatter, shm_direct) \
    X(scatter, mo)
#define SCATTERV(X) X(scatterv, linear) X(scatterv, shm_pipe) X(scatterv, shm_direct) X(scatterv, shm_hybrid)
#define ALLTOALL(X) X(alltoall, linear) X(alltoall, pairwise) X(alltoall, bruck) X(alltoall, shm_pipe) X(alltoall, shm_direct)
#define ALLTOALLV(X) X(alltoallv, linear) X(alltoallv, pairwise) X(alltoallv, shm_pipe) X(alltoallv, shm_direct) X(alltoallv, shm_hybrid)
#define SCAN(X) X(scan, linear) X(scan, recursive_doubling) X(scan, shm) X(scan, shm_ma)
#define EXSCAN(X) X(exscan, linear) X(exscan, recursive_doubling) X(exscan, shm) X(exscan, shm_ma)

#define ALL(X) BARRIER(X) BCAST(X) REDUCE(X) ALLREDUCE(X) REDUCE_SCATTER(X) REDUCE_SCATTER_BLOCK(X) \
    ALLGATHER(X) ALLGATHERV(X) GATHER(X) GATHERV(X) SCATTER(X) SCATTERV(X) ALLTOALL(X)              \
    ALLTOALLV(X) SCAN(X) EXSCAN(X)

ALL(ALG)

static const mc_alg_t *const barrier[] = {BARRIER(REF)};
static const mc_alg_t *const bcast[] = {BCAST(REF)};
static const mc_alg_t *const reduce[] = {REDUCE(REF)};
static const mc_alg_t *const allreduce[] = {ALLREDUCE(REF)};
static const mc_alg_t *const reduce_scatter[] = {REDUCE_SCATTER(REF)};
static const mc_alg_t *const reduce_scatter_block[] = {REDUCE_SCATTER_BLOCK(REF)};
static const mc_alg_t *const allgather[] = {ALLGATHER(REF)};
static const mc_alg_t *const allgatherv[] = {ALLGATHERV(REF)};
static const mc_alg_t *const gather[] = {GATHER(REF)};
static const mc_alg_t *const gatherv[] = {GATHERV(REF)};
static const mc_alg_t *const scatter[] = {SCATTER(REF)};
static const mc_alg_t *const scatterv[] = {SCATTERV(REF)};
static const mc_alg_t *const alltoall[] = {ALLTOALL(REF)};
static const mc_alg_t *const alltoallv[] = {ALLTOALLV(REF)};
static const mc_alg_t *const scan[] = {SCAN(REF)};
static const mc_alg_t *const exscan[] = {EXSCAN(REF)};

#define T(arr) {arr, (int)(sizeof arr / sizeof arr[0])}
static const struct { const mc_alg_t *const *algs; int n; } table[MC_NCOLL] = {
    [MC_BARRIER] = T(barrier), [MC_BCAST] = T(bcast), [MC_REDUCE] = T(reduce), [MC_ALLREDUCE] = T(allreduce),
    [MC_REDUCE_SCATTER] = T(reduce_scatter), [MC_REDUCE_SCATTER_BLOCK] = T(reduce_scatter_block),
    [MC_ALLGATHER] = T(allgather), [MC_ALLGATHERV] = T(allgatherv), [MC_GATHER] = T(gather),
    [MC_GATHERV] = T(gatherv), [MC_SCATTER] = T(scatter), [MC_SCATTERV] = T(scatterv),
    [MC_ALLTOALL] = T(alltoall), [MC_ALLTOALLV] = T(alltoallv), [MC_SCAN] = T(scan), [MC_EXSCAN] = T(exscan),
};

static const mc_alg_t *present[MC_NCOLL][32];
static int npresent[MC_NCOLL];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int compacted;   /* fast path: selection reads the registry on every call */

static void compact(void)
{
    for (int c = 0; c < MC_NCOLL; c++)
        for (int i = 0; i < table[c].n; i++)
            if (table[c].algs[i]) present[c][npresent[c]++] = table[c].algs[i];
    atomic_store_explicit(&compacted, 1, memory_order_release);
}

int mc_alg_count(mc_coll_t c)
{
    if ((unsigned)c >= MC_NCOLL) return 0;
    if (!atomic_load_explicit(&compacted, memory_order_acquire)) pthread_once(&once, compact);
    return npresent[c];
}

const mc_alg_t *mc_alg_at(mc_coll_t c, int i)
{
    return i >= 0 && i < mc_alg_count(c) ? present[c][i] : NULL;
}

const mc_alg_t *mc_alg_find(mc_coll_t c, const char *name)
{
    for (int i = 0; name && i < mc_alg_count(c); i++)
        if (!strcmp(present[c][i]->name, name)) return present[c][i];
    return NULL;
}

/* Names the registry expects, for the completeness test and mcoll-info. */
#define NAME(coll, name) #coll "/" #name,
static const char *const expected[] = {ALL(NAME) NULL};
const char *mc_alg_expected(int i) { return expected[i]; }

int mc_alg_index(const mc_alg_t *alg)
{
    for (int i = 0; i < mc_alg_count(alg->coll); i++)
        if (present[alg->coll][i] == alg) return i;
    return -1;
}

int mc_alg_applicable(const mc_alg_t *alg, const mc_ctx_t *ctx, const mc_args_t *a)
{
    if ((alg->flags & MC_ALG_COMMUTATIVE_ONLY) && !a->commute) return 0;
    return alg->ok ? alg->ok(ctx, a) : 1;
}
