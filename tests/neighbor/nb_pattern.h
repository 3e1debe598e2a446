/* Neighbor-alltoallv communication patterns for tests and benchmarks (shared by the built-in
 * patterns of tests/neighbor/patterns.c and the workloads of tests/neighbor/workloads.c).
 * Counts are in elements of the program's element type; see /tmp/h/neighbor-api.md. */
#ifndef NB_PATTERN_H
#define NB_PATTERN_H
#include <mpi.h>
#include <stdint.h>

typedef struct nb_pattern {
    int indeg, outdeg;
    int *sources, *dests;   /* [indeg], [outdeg] ranks of comm (duplicates/self allowed) */
    int *rcounts, *rdispls; /* [indeg] elements */
    int *scounts, *sdispls; /* [outdeg] */
    int64_t *sidx, *ridx;   /* [sum scounts], [sum rcounts] global ids, or both NULL */
    int slen, rlen;         /* buffer lengths in elements (>= max displ + count) */
} nb_pattern_t;

/* Collective over comm; fills p for the calling rank (arrays from malloc). 0 = success.
 * arg: parameters (may be NULL or ""). */
typedef int (*nb_workload_fn)(MPI_Comm comm, const char *arg, nb_pattern_t *p);
typedef struct nb_workload {
    const char *name;
    nb_workload_fn fn;
    const char *arg;
} nb_workload_t;

void nb_pattern_free(nb_pattern_t *p);

/* Built-in patterns (patterns.c). */
extern const nb_workload_t nb_builtin[];
extern const int nb_nbuiltin;
#endif
