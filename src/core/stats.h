/* Per-process counters (MCOLL_STATS): lock-free, safe under MPI_THREAD_MULTIPLE. */
#ifndef MC_STATS_H
#define MC_STATS_H
#include "mc.h"

#define MC_MAX_ALGS 16   /* per collective */

void mc_stats_handled(mc_coll_t c, int alg_index, size_t bytes);
void mc_stats_fallback(mc_coll_t c, size_t bytes);
/* Data-access volume and synchronization events of one call (shared-memory kernels). */
void mc_stats_shm(mc_coll_t c, uint64_t dav, uint64_t syncs);
/* Reduces the counters over MPI_COMM_WORLD and prints the table on rank 0. Collective. */
void mc_stats_report(void);
/* Thread-local record of what ran last (mcoll_last_alg). */
void mc_stats_set_last(mc_coll_t c, const char *alg);
#endif
