/* Per-process counters (MCOLL_STATS): lock-free, safe under MPI_THREAD_MULTIPLE. */
#ifndef MC_STATS_H
#define MC_STATS_H
#include "mc.h"

#define MC_MAX_ALGS 16   /* per collective */

/* One handled call: its algorithm (index and name, for mcoll_last_alg), its bytes, and the
 * data-access volume and synchronization events of its shared-memory kernels. */
void mc_stats_handled(mc_coll_t c, int alg_index, size_t bytes, const char *alg, uint64_t dav,
                      uint64_t syncs);
/* A handled call took the repeated-call path (mc_run_again). */
void mc_stats_repeat(mc_coll_t c);
void mc_stats_fallback(mc_coll_t c, size_t bytes);
/* Point-to-point traffic to a rank of another node: counted by src/p2p for every send, so
 * algorithms never count messages themselves. Attributed to the collective being run by
 * this thread (mc_stats_enter), else to c (the collective of the message's tag). */
void mc_stats_inter(mc_coll_t c, uint64_t msgs, uint64_t bytes);
/* Inter-node rounds of an algorithm's schedule: added by the algorithm, once per call on
 * every rank that takes part in its inter-node phase. */
void mc_stats_rounds(mc_coll_t c, uint64_t rounds);
/* Marks the collective this thread runs (nested calls restore the outer one): sub-algorithms
 * of other collectives run on node or lane contexts then count their inter-node traffic
 * under the user's collective. Returns the previous mark (-1: none) for mc_stats_leave. */
int mc_stats_enter(mc_coll_t c);
void mc_stats_leave(int prev);
/* Reduces the counters over MPI_COMM_WORLD and prints the table on rank 0. Collective. */
void mc_stats_report(void);
/* A program of MPI sessions alone (no MPI_Init, so no MPI_COMM_WORLD): the process of world
 * rank 0 prints its own counters. Not collective: MPI does not promise that every process
 * finalizes its sessions, so a reduction there could wait forever. */
void mc_stats_report_own(int world_rank);
#endif
