/* mcoll-hier: inter-node counters (MCOLL_STATS inter_msgs, inter_bytes, rounds) of the
 * algorithms that span nodes, checked against formulas. One row per algorithm: how to make
 * one call of its collective, and what this rank must count for it. Rows live in tables
 * registered with HC_REGISTER, in mcoll-hier.c or in any tests/hier/counters_<x>.c (the
 * CMake glob builds them all into mcoll-hier):
 *
 *     static const hc_row_t rows[] = {
 *         {"allgather", "mo_bruck", hc_run_allgather, expect_mo_bruck, HC_ANY_ROOT},
 *     };
 *     HC_REGISTER(rows)
 *
 * The harness runs every row on several communicators (world, reversed) and counts, with
 * every root when the row is rooted; for each it resets the counters, makes the call with
 * the algorithm forced, checks that the algorithm ran (mcoll_last_alg) and compares the
 * counters of the row's collective with the row's expectation. */
#ifndef HC_TEST_H
#define HC_TEST_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* One call: the communicator as mcoll sees it (nodes may be virtual) and the arguments. */
typedef struct hc_case {
    MPI_Comm comm;
    const char *comm_name;
    int size, rank;
    int N, n;               /* nodes; this rank's node (mcoll_comm_info numbering) */
    int P, l;               /* ranks on this node; this rank's local rank */
    int Pmin, Pmax;         /* fewest / most ranks on a node */
    const int *node_of;     /* [size] node of every comm rank */
    const int *local_of;    /* [size] local rank of every comm rank */
    const int *node_size;   /* [N] ranks on every node */
    int root;               /* rooted collectives; 0 otherwise */
    size_t count;           /* elements of MPI_INT per rank (the collective's count argument) */
    size_t extent;          /* bytes per element (4) */
} hc_case_t;

/* Comm rank of local rank `local` on node `node`, -1 if that node has fewer ranks. */
int hc_rank_of(const hc_case_t *c, int node, int local);

/* Expected counters of this rank; HC_ANY leaves one unchecked. */
#define HC_ANY UINT64_MAX
typedef struct hc_expect {
    uint64_t msgs, bytes, rounds;
} hc_expect_t;

typedef int (*hc_run_fn)(const hc_case_t *c);   /* one call; returns the MPI result */
typedef void (*hc_expect_fn)(const hc_case_t *c, hc_expect_t *e);

enum { HC_ANY_ROOT = 1 };   /* rooted: run with every root */

typedef struct hc_row {
    const char *coll, *alg;
    hc_run_fn run;
    hc_expect_fn expect;
    unsigned flags;
} hc_row_t;

void hc_register(const hc_row_t *rows, int n);
#define HC_REGISTER(rows)                                                                        \
    __attribute__((constructor)) static void hc_register_##rows(void)                            \
    {                                                                                            \
        hc_register(rows, (int)(sizeof rows / sizeof rows[0]));                                  \
    }

/* Calls of the common collectives on MPI_INT data (count elements per rank, the natural
 * per-rank count of each: allgather/gather/scatter blocks, alltoall per destination). */
int hc_run_barrier(const hc_case_t *c);
int hc_run_bcast(const hc_case_t *c);
int hc_run_reduce(const hc_case_t *c);      /* MPI_SUM */
int hc_run_allreduce(const hc_case_t *c);   /* MPI_SUM */
int hc_run_allgather(const hc_case_t *c);
int hc_run_gather(const hc_case_t *c);
int hc_run_scatter(const hc_case_t *c);
int hc_run_alltoall(const hc_case_t *c);

/* Formula helpers. */
int hc_ceil_log2(int x);                     /* 0 for x <= 1 */
int hc_ceil_log(int base, int x);            /* smallest k with base^k >= x */
size_t hc_part_len(size_t n, int p, int i);  /* balanced split, the first n % p parts longer */
/* Children of node index `node` in a binomial tree over N nodes rooted at `root`. */
int hc_binomial_children(int node, int N, int root);
/* Does `node` have a parent in that tree (every node but the root). */
static inline int hc_binomial_has_parent(int node, int root) { return node != root; }
#endif
