/* The checkers: one entry point per collective, and the case plans they share. */
#ifndef VERIFY_CHECKS_H
#define VERIFY_CHECKS_H
#include "harness.h"
#include "layouts.h"

/* comms[0] is MPI_COMM_WORLD; the others (dup, reversed, split) get a reduced plan. */
typedef void (*check_fn)(const tcomm_t *comms, int ncomms);

void check_barrier(const tcomm_t *comms, int ncomms);
void check_bcast(const tcomm_t *comms, int ncomms);
void check_gather(const tcomm_t *comms, int ncomms);
void check_gatherv(const tcomm_t *comms, int ncomms);
void check_scatter(const tcomm_t *comms, int ncomms);
void check_scatterv(const tcomm_t *comms, int ncomms);
void check_allgather(const tcomm_t *comms, int ncomms);
void check_allgatherv(const tcomm_t *comms, int ncomms);
void check_alltoall(const tcomm_t *comms, int ncomms);
void check_alltoallv(const tcomm_t *comms, int ncomms);
void check_reduce(const tcomm_t *comms, int ncomms);
void check_allreduce(const tcomm_t *comms, int ncomms);
void check_reduce_scatter(const tcomm_t *comms, int ncomms);
void check_reduce_scatter_block(const tcomm_t *comms, int ncomms);
void check_scan(const tcomm_t *comms, int ncomms);
void check_exscan(const tcomm_t *comms, int ncomms);

/* mcoll_comm_info of every comm against virtual nodes of vnode_size world ranks (0: one node). */
void check_topology(const tcomm_t *comms, int ncomms, int vnode_size);

/* ---------------------------------------------------------------- byte collectives */
/* Count patterns of the v-collectives (per rank, or per pair for alltoallv). V_MIXED: every
 * other block V_BIG units larger (some blocks above the shm_hybrid switch, some below). */
enum { V_UNIFORM, V_IRREGULAR, V_SINGLE, V_MIXED, V_NPAT };
#define V_BIG 17000
/* Displacement patterns: packed in rank order, or reversed rank order with gaps. */
/* displacements: packed in rank order, reversed with gaps, or rotated by the calling rank (each
 * rank lays out its own buffer differently, as MPI allows) */
enum { D_PACKED, D_REVGAP, D_ROTATED, D_NPAT };

typedef struct {
    size_t units;               /* payload units per block (base of the v patterns) */
    int root, inplace;
    layout_id_t ls, lroot, lr;  /* send layout off root, send layout at root, receive layout */
    int vpat, dpat;
} bcase_t;

typedef void (*bcase_fn)(const tcomm_t *c, const bcase_t *b);

/* Flags of byte_plan: which parts of the plan apply to the collective. */
enum { BP_ROOTED = 1, BP_V = 2, BP_INPLACE = 4 };
/* Runs the shared case list; `large` units per block for the MB-sized cases (0: none). */
void byte_plan(const tcomm_t *comms, int ncomms, bcase_fn run, unsigned flags, size_t large);

/* Units of the block rank i contributes (or pair i->j), rounded up to a multiple of mult. */
size_t vunits(int vpat, size_t base, int i, int p, size_t mult);
size_t pair_units(int vpat, size_t base, int i, int j, size_t mult, int symmetric);
/* Element displacements of blocks with elems[] elements each; returns the span in elements. */
size_t vdispls(int dpat, const size_t *elems, int p, int me, size_t *displs);
/* int copies of size_t arrays for the MPI interface. */
int *to_int(const size_t *v, int n);
size_t lcm_k(layout_id_t a, layout_id_t b, layout_id_t c);
const char *vpat_name(int v);
const char *dpat_name(int d);
/* Case text for the labels: units, root, in-place, layouts, v patterns (static buffer). */
const char *bdesc(const bcase_t *b, unsigned flags);
/* Applies/undoes the segment-size and radix sweeps of the plan. */
int plan_segmented(void);
int plan_radix(void);
#endif
