/* mcoll — fast MPI collectives, interposed through the MPI profiling interface.
 *
 * Applications need no change: preload or link libmcoll.so before the MPI library and
 * every MPI collective it defines runs through mcoll. This header is only for programs that
 * want to steer or inspect mcoll at run time (tests, benchmarks, tuning tools). */
#ifndef MCOLL_H
#define MCOLL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCOLL_VERSION "0.1.0"

/* Force algorithm `alg` for collective `coll` in this process ("allreduce", "ring").
 * alg NULL or "auto" restores the default selection. Every rank of a communicator must make
 * the same choice before its next collective. Returns MPI_SUCCESS, or MPI_ERR_ARG for an
 * unknown collective or algorithm. Overrides MCOLL_<COLL>_ALG. */
int mcoll_set_alg(const char *coll, const char *alg);

/* Segment size in bytes (0 = unsegmented, -1 = back to the configured default) and radix
 * (fan-out of k-ary trees; -1 = default) used by the algorithms of `coll`. */
int mcoll_set_segsize(const char *coll, long segsize);
int mcoll_set_radix(const char *coll, int radix);

/* Registry introspection. Collective names: "barrier", "bcast", ..., "exscan". */
int mcoll_coll_count(void);
const char *mcoll_coll_name(int i);
int mcoll_alg_count(const char *coll);                  /* -1: unknown collective */
const char *mcoll_alg_name(const char *coll, int i);    /* NULL when out of range */
const char *mcoll_alg_doc(const char *coll, int i);

/* Name of the algorithm that ran the last call of `coll` in this thread, or "pmpi" when it
 * fell back to the native MPI, or NULL before the first call. It names the registered
 * algorithm the call was given to; the choices that algorithm makes inside the call (its data
 * path, a pipe run direct on a far node) do not change it. */
const char *mcoll_last_alg(const char *coll);

/* Topology as mcoll sees a communicator (nodes may be virtual: MCOLL_VNODE_SIZE).
 * MPI_ERR_INTERN when mcoll leaves comm to the native MPI because it could not make its own
 * communicators for it (the MPI had none left); mcoll_neighbor_alltoallv_init returns the
 * same there. */
typedef struct mcoll_comm_info {
    int size, rank;
    int node, nnodes;        /* this rank's node index (0..nnodes-1, ordered by lowest rank) */
    int local_rank, local_size;
    int uniform_ppn;         /* every node has the same number of ranks */
    int leader;              /* comm rank of this node's leader (local rank 0) */
} mcoll_comm_info_t;
int mcoll_comm_info(MPI_Comm comm, mcoll_comm_info_t *info);

/* This process's counters for one collective (see MCOLL_STATS). */
typedef struct mcoll_stats {
    uint64_t calls, handled, fallback, bytes;
    uint64_t dav;            /* bytes loaded + stored by the shared-memory copy/reduce kernels */
    uint64_t syncs;          /* shared-memory synchronization events (flag publications) */
    /* Traffic to ranks of other nodes (nodes may be virtual: MCOLL_VNODE_SIZE): messages and
     * bytes this process sent, and the inter-node rounds of the algorithms that span nodes
     * (each adds its schedule's rounds when this rank takes part in its inter-node phase). */
    uint64_t inter_msgs, inter_bytes, rounds;
    /* Handled calls that repeated a remembered call of the collective on their communicator
     * exactly (same buffers, count, predefined datatype and op, root): they reused its checked
     * arguments and its algorithm choice instead of preparing and selecting again. */
    uint64_t repeats;
} mcoll_stats_t;
int mcoll_stats_get(const char *coll, mcoll_stats_t *out);
uint64_t mcoll_stats_alg_calls(const char *coll, const char *alg);
void mcoll_stats_reset(void);

/* Set-up work of this process since MPI_Init (deterministic: for tests and for programs that
 * make many communicators). contexts: communicators mcoll built its view of (at their first
 * collective); contexts_by_table: of those, the ones whose nodes came from what an earlier
 * communicator congruent with MPI_COMM_WORLD found, with no communication; regions_created:
 * node regions mapped anew; regions_reused: regions taken over from freed communicators with
 * the same local ranks (MCOLL_SHM_POOL). */
typedef struct mcoll_setup_stats {
    uint64_t contexts, contexts_by_table, regions_created, regions_reused;
} mcoll_setup_stats_t;
void mcoll_setup_stats(mcoll_setup_stats_t *out);

/* Node-shared heap: memory every rank of the node maps once, so collectives on buffers from
 * it copy directly between processes (zero copy, no system call per operation).
 * MPI_Alloc_mem returns the same memory, and so does malloc() for blocks of MCOLL_MALLOC_MIN
 * bytes and more when libmcoll-malloc.so is preloaded (no source change). mcoll_free(NULL) is
 * a no-op; mcoll_malloc returns NULL when the heap is exhausted or unavailable. Alignment:
 * 64 bytes. */
void *mcoll_malloc(size_t size);
void mcoll_free(void *ptr);
/* The same with a larger alignment (a power of two up to 2 MiB). */
void *mcoll_malloc_aligned(size_t size, size_t align);
/* Usable bytes of the heap block that starts at ptr (at least what was asked); 0 when ptr
 * does not start one. Costs no lock for pointers outside the heap. */
size_t mcoll_heap_size(const void *ptr);


/* ================================================================ neighbor (issue 5) ====
 * Persistent neighborhood alltoallv on distributed-graph communicators (topology from
 * MPI_Dist_graph_create[_adjacent]). Three strategies, chosen at init:
 *   "standard"    persistent point-to-point, one message per neighbor;
 *   "aggregated"  locality-aware 3-step: fully local messages (l) in parallel with an initial
 *                 redistribution inside the region (s), one message per region pair (g, the
 *                 region's pairs load-balanced over its ranks), a final redistribution (r);
 *   "dedup"       aggregated, but a value (global id) needed by several ranks of a region
 *                 crosses regions, and moves inside a region, once (needs the _ext indices).
 * Region = node (real, or virtual: MCOLL_VNODE_SIZE) or socket (MCOLL_NEIGHBOR_REGION).
 * The returned request is a real MPI request handle: MPI_Start/Startall/Wait/Waitall/Test/
 * Testall/Waitany/Request_free work on it (mcoll interposes them; other requests pass through
 * unchanged). It is inactive after init, like any persistent request. Freeing an active request
 * frees it at completion (the buffers must stay valid until the operation has completed).
 *
 * MPI_Info keys (info may be MPI_INFO_NULL; keys override the environment):
 *   "mcoll_neighbor_alg"     standard | aggregated | dedup | auto   (env MCOLL_NEIGHBOR_ALG)
 *   "mcoll_neighbor_region"  node | socket                          (env MCOLL_NEIGHBOR_REGION)
 * Every rank of comm must pass the same values (the strategy is a collective decision).
 * Datatypes: any. Aggregated/dedup need send and recv types whose data is contiguous
 * (MPI_Type_size == extent, lb 0); other types run the standard strategy. */
int mcoll_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                  const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request);

/* The de-duplicating extension. Positions are numbered in neighbor order, elements within a
 * block in order (position k of the send side is element j of block i with
 * k = sendcounts[0] + ... + sendcounts[i-1] + j; the element lives at sendbuf + (sdispls[i] + j)
 * * extent(sendtype)); the same for the receive side with recvcounts.
 *   global_sindices[k]: global id of the value at send position k (total sum(sendcounts));
 *   global_rindices[k]: global id of the value expected at receive position k.
 * Contract: on each rank, send positions with the same id hold the same bytes in every
 * iteration (one value per id per rank: e.g. the row index of a distributed vector), and the
 * id at a receive position equals the id at the matching position of the sender's block (the
 * ids describe the same exchange as the counts). dedup then sends each distinct id of a
 * source rank once per destination region (and once per destination rank inside it). Either
 * array may be NULL only if both are: then this is mcoll_neighbor_alltoallv_init (and a
 * forced "dedup" runs "aggregated"). Ids need not be dense or sorted; ids of different source
 * ranks are independent (the pair (source rank, id) names a value). */
int mcoll_neighbor_alltoallv_init_ext(const void *sendbuf, const int sendcounts[],
                                      const int sdispls[], MPI_Datatype sendtype,
                                      void *recvbuf, const int recvcounts[], const int rdispls[],
                                      MPI_Datatype recvtype, const int64_t global_sindices[],
                                      const int64_t global_rindices[], MPI_Comm comm,
                                      MPI_Info info, MPI_Request *request);

enum { MCOLL_NEIGHBOR_STANDARD = 0, MCOLL_NEIGHBOR_AGGREGATED = 1, MCOLL_NEIGHBOR_DEDUP = 2,
       MCOLL_NEIGHBOR_NALG = 3 };
enum { MCOLL_NEIGHBOR_STEP_L = 0, MCOLL_NEIGHBOR_STEP_S = 1, MCOLL_NEIGHBOR_STEP_G = 2,
       MCOLL_NEIGHBOR_STEP_R = 3 };

/* What a neighbor request does. Counts are per iteration (one MPI_Start + completion) and
 * are what THIS rank sends; they are deterministic (computed from the plan at init). */
typedef struct mcoll_neighbor_stats {
    int alg;                 /* MCOLL_NEIGHBOR_STANDARD / _AGGREGATED / _DEDUP (what runs) */
    char alg_name[16];       /* "standard", "aggregated", "dedup" */
    int region_socket;       /* 0: regions are nodes, 1: sockets */
    int nregions;            /* regions of the communicator */
    uint64_t intra_msgs, intra_bytes;   /* to ranks of this rank's region (self excluded) */
    uint64_t inter_msgs, inter_bytes;   /* to ranks of other regions */
    uint64_t self_bytes;                /* copied to itself (self-loops), no message */
    uint64_t step_msgs[4], step_bytes[4]; /* by step l, s, g, r (standard: l and g only) */
    /* Predicted seconds per iteration of each strategy (max over ranks of the model, same on
     * every rank); < 0 when the strategy is not applicable (dedup without indices, ...). */
    double cost[MCOLL_NEIGHBOR_NALG];
    double init_time;        /* seconds this rank spent in init (plan + request setup) */
    uint64_t starts;         /* iterations started so far */
    int shared_comm;         /* 1: its messages go on its communicator's shared duplicate (a
                              * slot of tags), 0: on a duplicate of its own */
} mcoll_neighbor_stats_t;

/* MPI_SUCCESS, or MPI_ERR_REQUEST when req is not a live mcoll neighbor request. */
int mcoll_neighbor_stats(MPI_Request req, mcoll_neighbor_stats_t *out);
/* ============================================================ end neighbor (issue 5) ==== */

#ifdef __cplusplus
}
#endif
#endif
