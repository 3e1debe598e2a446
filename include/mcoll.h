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
 * fell back to the native MPI, or NULL before the first call. */
const char *mcoll_last_alg(const char *coll);

/* Topology as mcoll sees a communicator (nodes may be virtual: MCOLL_VNODE_SIZE). */
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
} mcoll_stats_t;
int mcoll_stats_get(const char *coll, mcoll_stats_t *out);
uint64_t mcoll_stats_alg_calls(const char *coll, const char *alg);
void mcoll_stats_reset(void);

/* Node-shared heap: memory every rank of the node maps once, so collectives on buffers from
 * it copy directly between processes (zero copy, no system call per operation).
 * MPI_Alloc_mem returns the same memory. mcoll_free(NULL) is a no-op; mcoll_malloc returns
 * NULL when the heap is exhausted or unavailable. Alignment: 64 bytes. */
void *mcoll_malloc(size_t size);
void mcoll_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif
