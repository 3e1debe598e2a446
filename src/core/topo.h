/* Hardware topology of this machine as hwloc sees it (process-wide, detected once).
 * The shared-memory engine sizes its slices from the cache sizes; mcoll-info prints it. */
#ifndef MC_TOPO_H
#define MC_TOPO_H
#include <stddef.h>

typedef struct mc_topo {
    int packages;        /* sockets */
    int numa_nodes;
    int cores;
    int pus;             /* hardware threads */
    size_t l1d, l2, l3;  /* bytes of one cache instance; 0 = level absent or unknown */
    int llc_level;       /* deepest cache level present (1..5), 0 = no cache reported */
    size_t llc;          /* bytes of one last-level cache instance */
    int llc_count;       /* instances of the last-level cache */
    int llc_pus;         /* PUs sharing one last-level cache instance */
    int llc_inclusive;   /* 1 inclusive, 0 exclusive/non-inclusive, -1 unknown */
} mc_topo_t;

/* Fills *t with the machine topology. Detection runs once per process (thread safe); later
 * calls copy the cached result. Returns MPI_SUCCESS, or MPI_ERR_OTHER when hwloc failed
 * (then counts are 1 and sizes 0, so callers can still proceed with defaults). */
int mc_topo_get(mc_topo_t *t);
/* Package (socket) index of the PU with OS index cpu (0 when unknown). */
int mc_topo_package_of_cpu(int cpu);

#endif
