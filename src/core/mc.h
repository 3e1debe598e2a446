/* Internal declarations shared by every layer of mcoll.
 *
 * Naming: public API is mcoll_* (include/mcoll.h). Everything internal and non-static is
 * mc_* (types mc_*_t). Nothing inside the library calls MPI_*: only PMPI_*. */
#ifndef MC_H
#define MC_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#if MPI_VERSION >= 3
#define MC_CONST const
#else
#define MC_CONST
#endif

typedef enum {
    MC_BARRIER, MC_BCAST, MC_REDUCE, MC_ALLREDUCE, MC_REDUCE_SCATTER,
    MC_REDUCE_SCATTER_BLOCK, MC_ALLGATHER, MC_ALLGATHERV, MC_GATHER, MC_GATHERV,
    MC_SCATTER, MC_SCATTERV, MC_ALLTOALL, MC_ALLTOALLV, MC_SCAN, MC_EXSCAN,
    MC_NCOLL
} mc_coll_t;

const char *mc_coll_name(mc_coll_t c);
/* 1 for the collectives whose bytes per rank differ between ranks (gatherv, scatterv,
 * alltoallv: mc_args_t.bytes): no decision all ranks must share may depend on their size. */
int mc_coll_bytes_vary(mc_coll_t c);
int mc_coll_from_name(const char *name); /* -1 when unknown */

/* ---------------------------------------------------------------- context */
/* One per user communicator, cached as an attribute and freed with it. */
typedef struct mc_ctx {
    MPI_Comm comm;          /* the user's communicator (errors are raised on it) */
    MPI_Comm pcomm;         /* private duplicate: all mcoll point-to-point traffic; on one
                             * node made when first needed (mc_ctx_p2p), else MPI_COMM_NULL */
    int size, rank;
    /* node topology (real nodes via MPI_Comm_split_type, or virtual: MCOLL_VNODE_SIZE) */
    int nnodes, node, local_rank, local_size, leader, uniform_ppn;
    /* some rank's node holds more ranks (of any communicator) than it has online CPUs, agreed
     * by all ranks at creation (mc_host_load): the ranks per CPU of the busiest such node, 0 =
     * none; the model's lists then put the node region's algorithms first (select/model.c) */
    double load;
    int *node_of;           /* [size] node index of every rank */
    int *local_of;          /* [size] local rank of every rank */
    int *node_size;         /* [nnodes] ranks on each node */
    int *node_leader;       /* [nnodes] comm rank of each node's local rank 0 */
    MPI_Comm node_comm;     /* ranks of this node; on one node comm itself (collectives only) */
    MPI_Comm lane_comm;     /* ranks with this local rank, one per node, ordered by node;
                             * MPI_COMM_NULL on one node */
    uint64_t explained[MC_NCOLL]; /* MCOLL_VERBOSE: size classes (log2 bytes) already explained */
    struct mc_shm *shm;     /* node region (src/shm), created on first use */
    int shm_failed;         /* creation failed or disabled: shm algorithms decline */
    struct mc_hier *hier;   /* two-level view (src/coll/hier), built on first use */
    struct mc_msel *msel;   /* model-built decisions (src/select/model.c), built on first use */
    struct mc_sel_memo *memo; /* remembered choices per collective (src/select/select.c) */
    struct mc_nb_share *nb;   /* the persistent neighbor requests' communicator (src/neighbor) */
    int derived;            /* a node or lane context (mc_ctx_derive): its communicators are
                             * the parent's */
    int native;             /* mcoll's communicators could not be made: calls go to the
                             * native MPI (a shared marker, no other field is set) */
} mc_ctx_t;

/* Returns the context of comm, creating it on first use (collective on comm). A context
 * with `native` set means: leave comm's collectives to the native MPI. */
int mc_ctx_get(MPI_Comm comm, mc_ctx_t **out);
/* The context when this thread used comm last and no context was freed since; else NULL.
 * No MPI call: the entry layer's fast path. */
mc_ctx_t *mc_ctx_peek(MPI_Comm comm);
/* 1 when comm's collectives go to the native MPI (no context could be made; collective on
 * comm at its first use, as mc_ctx_get). */
int mc_ctx_native(MPI_Comm comm);
/* Makes ctx->pcomm if it is not there yet: collective on ctx's communicator, so call it
 * where every rank does (a point-to-point algorithm's start, chosen alike on every rank). */
int mc_ctx_p2p(mc_ctx_t *ctx);
/* Drops the context's reference to its neighbor requests' communicator (src/neighbor/share.c):
 * requests still alive keep it. */
void mc_nb_share_release(struct mc_nb_share *s);

/* Collectives mcoll makes for itself on a user's communicator (the neighbor engine's set-up):
 * run by the algorithm mcoll selects for such a call, whose waits yield (a native blocking
 * collective polls: with more ranks than cores MPICH's cost a time slice each), but not
 * counted in MCOLL_STATS; the native MPI takes them where mcoll declines. Contiguous
 * predefined types; errors are returned, not raised. */
int mc_inner_allreduce(void *buf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int mc_inner_allgather(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Comm comm);
/* The context of parent's node communicator (lane = 0) or lane communicator (lane = 1),
 * from parent's tables: no communication, no communicator created. Not cached as an
 * attribute: the owner (the two-level view) frees it with mc_ctx_free before the parent's
 * communicators go. */
int mc_ctx_derive(const mc_ctx_t *parent, int lane, mc_ctx_t **out);
void mc_ctx_free(mc_ctx_t *c);
void mc_ctx_release_predefined(void);
/* Contexts made (native markers included), and those whose node layout came from the table of
 * MPI_COMM_WORLD's nodes without communication (mcoll_setup_stats). */
void mc_ctx_counts(uint64_t *contexts, uint64_t *by_table);
/* MPI_Init has run and MPI_Finalize not: MPI_COMM_WORLD is valid (not in a program that
 * uses MPI sessions alone). */
int mc_world_up(void);
/* This process's rank in its world (MPI_COMM_WORLD, or the process set mpi://WORLD of a
 * session of mcoll's own where MPI_Init was not called); -1 when it cannot be read. */
int mc_world_rank(void);
/* Raises rc for an error attached to no communicator (a null one, MPI_Free_mem) on
 * MPI_COMM_WORLD, as the native MPIs do; with MPI sessions alone there is no world and rc is
 * only returned. Returns rc. */
int mc_raise_no_comm(int rc);

/* ---------------------------------------------------------------- arguments */
/* The entry layer (src/pmpi) validates the user's call and normalizes it into mc_args_t.
 * Non-reduction collectives are expressed in bytes (dtype MPI_BYTE, extent 1): their
 * datatypes are contiguous, otherwise the call falls back to PMPI. Reductions keep
 * (count, dtype, op) so PMPI_Reduce_local applies the operation.
 *
 * MPI_IN_PLACE never reaches an algorithm; the contract per collective:
 *  bcast      rbuf: buffer on every rank, count bytes.
 *  reduce     sbuf on every rank (== rbuf at an in-place root); rbuf significant at root.
 *  allreduce, scan, exscan   sbuf may equal rbuf.
 *  reduce_scatter_block  sbuf holds size*count elements; sbuf may equal rbuf (in place).
 *  reduce_scatter        counts[] elements per rank, displs[] their prefix sums (elements);
 *                        sbuf may equal rbuf.
 *  allgather  sbuf = this rank's block of count bytes; may equal rbuf + rank*count.
 *  allgatherv counts[]/displs[] bytes in rbuf; sbuf may equal rbuf + displs[rank].
 *  gather     sbuf count bytes; at root rbuf size*count, sbuf may equal rbuf + root*count.
 *  gatherv    sbuf count bytes; at root counts[]/displs[] (bytes) describe rbuf.
 *  scatter    rbuf count bytes; at root sbuf size*count, rbuf may equal sbuf + root*count.
 *  scatterv   rbuf count bytes; at root counts[]/displs[] (bytes) describe sbuf.
 *  alltoall   sbuf and rbuf size*count bytes, distinct (in place is staged by the entry).
 *  alltoallv  scounts/sdispls and counts/displs in bytes, distinct buffers.
 *  exscan     rbuf on rank 0 is left untouched. */
typedef struct mc_args {
    mc_coll_t coll;
    const void *sbuf;
    void *rbuf;
    size_t count;
    MPI_Datatype dtype;
    size_t extent;          /* bytes between consecutive elements of dtype */
    MPI_Op op;
    int commute;
    int root;
    const size_t *counts, *displs;     /* receive side of v-collectives, reduce_scatter */
    const size_t *scounts, *sdispls;   /* send side of alltoallv */
    long segsize;           /* bytes, 0 = unsegmented */
    int radix;
    size_t bytes;           /* payload for stats and selection: bytes per rank of the
                             * collective's natural message (allreduce/reduce_scatter: the
                             * whole input vector; allgather: one block; alltoall: one
                             * destination's block; allgatherv: the mean block; alltoallv: all
                             * bytes sent, gatherv/scatterv: this rank's block — these three differ
                             * between ranks, so no selection may depend on them) */
} mc_args_t;

/* A call's arguments as the application passed them (sbuf may be MPI_IN_PLACE; unused ones
 * zero): what a repeated call is recognized by before any checking (mc_select_again). */
typedef struct mc_key {
    const void *sbuf, *rbuf;
    int count, root;
    MPI_Datatype dt;
    MPI_Op op;
} mc_key_t;

/* ---------------------------------------------------------------- registry */
typedef struct mc_cost_in {
    int p;              /* ranks */
    double m;           /* bytes per rank (as in the collective's count) */
    double ms;          /* segment size in bytes (m when unsegmented) */
    int radix;
    int sockets;        /* sockets of the node (socket-aware shared-memory algorithms) */
    int nodes;          /* nodes the p ranks span (algorithms across nodes); 0 = unknown:
                         * they then assume one rank per node */
    const struct mc_hockney *intra; /* algorithms across nodes: parameters of their node steps
                                     * (shared memory); NULL = the cost's own parameters */
    double xmap;        /* shared-memory algorithms: start-up of one single copy from another
                         * rank's address space (a CMA system call); 0 = buffers in the shared
                         * heap (zero copy) or not modelled */
    double xmap_b;      /* and its seconds per byte (0: a plain copy, 2 beta per byte) */
    int far;            /* shared-memory algorithms: the call's buffers exceed the caches
                         * (set by mc_cost_eval from the profile; copies then stream) */
    double load;        /* ranks per online CPU of an oversubscribed node (mc_ctx_t.load), 0 =
                         * not oversubscribed: a flag round then waits for a scheduling round */
    int nocma;          /* shared-memory algorithms: no single copies between address spaces
                         * (the node's probe refused CMA, or MCOLL_SHM_PATH=copy|zero), so
                         * ordinary buffers are staged and nothing tries CMA; 0 = CMA works */
} mc_cost_in_t;

typedef struct mc_hockney {
    double alpha;       /* seconds per message */
    double beta;        /* seconds per byte */
    double gamma;       /* seconds per byte reduced */
} mc_hockney_t;

typedef int (*mc_alg_fn)(mc_ctx_t *ctx, const mc_args_t *a);
typedef int (*mc_alg_ok_fn)(const mc_ctx_t *ctx, const mc_args_t *a);
/* Seconds; +inf: not a candidate of the model-built selection there (it still runs forced). */
typedef double (*mc_cost_fn)(const mc_hockney_t *h, const mc_cost_in_t *in);
/* Data-access volume (bytes loaded + stored on the node, all ranks together) of a
 * shared-memory algorithm: what the kernels' counters add up to for one call. */
typedef double (*mc_dav_fn)(const mc_cost_in_t *in);

enum { MC_ALG_COMMUTATIVE_ONLY = 1, MC_ALG_SEGMENTED = 2, MC_ALG_RADIX = 4 };

typedef struct mc_alg {
    mc_coll_t coll;
    const char *name;       /* short, stable: used in env vars, rules, stats, plots */
    const char *doc;
    mc_alg_fn fn;
    mc_alg_ok_fn ok;        /* NULL: always applicable (beyond flags) */
    mc_cost_fn cost;        /* Hockney-model time in seconds */
    mc_dav_fn dav;          /* shared-memory algorithms: data-access volume; NULL: an
                             * algorithm that sends on pcomm (mc_ctx_p2p before it runs) */
    unsigned flags;
} mc_alg_t;

int mc_alg_count(mc_coll_t c);
const mc_alg_t *mc_alg_at(mc_coll_t c, int i);
const mc_alg_t *mc_alg_find(mc_coll_t c, const char *name);
int mc_alg_applicable(const mc_alg_t *alg, const mc_ctx_t *ctx, const mc_args_t *a);
int mc_alg_index(const mc_alg_t *alg);
const char *mc_alg_expected(int i);   /* "coll/name" the registry expects; NULL after the last */

/* ---------------------------------------------------------------- utilities */
/* Tags on the private communicator: one per collective, so a stray message can never be
 * matched by another collective's receive. */
#define MC_TAG(coll) (1000 + (int)(coll))

void *mc_malloc(size_t n);           /* NULL only for n == 0 or real exhaustion; free with mc_free */
void mc_free(void *p);
void mc_keep_release(void);           /* frees the large temporaries mc_free kept (MPI_Finalize) */
/* Whether MPI runs at MPI_THREAD_MULTIPLE (asked once, inside an MPI call). */
int mc_threads_multiple(void);
int mc_is_pof2(int x);
int mc_floor_log2(int x);            /* -1 for x <= 0 */
/* Size class of b bytes for per-size caches: 0 for 0, else floor(log2 b) + 1, at most 31
 * (1 GiB and more share the last). */
static inline int mc_size_class(size_t b)
{
    if (!b) return 0;
    int k = 64 - __builtin_clzll((unsigned long long)b);
    return k < 31 ? k : 31;
}
int mc_ceil_log2(int x);
/* memmove, but not glibc's `rep movsb` where it is slow (shm/copy.c): every bulk local copy of
 * user data goes through it. */
void mc_memmove(void *dst, const void *src, size_t n);
/* inout = in op inout for `count` elements of t (extent ext) by PMPI_Reduce_local, in pieces
 * of at most mc_int_max() elements (its count is an int). */
int mc_reduce_pieces(const void *in, void *inout, size_t count, MPI_Datatype t, MPI_Aint ext, MPI_Op op);
/* Writes a printf-style message into err[n] (when given) and returns -1: parsers' errors. */
int mc_errmsg(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
