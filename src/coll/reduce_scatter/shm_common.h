/* Shared-memory reductions, written once for reduce_scatter(_block), allreduce and reduce:
 * the movement-avoiding (MA) engine of yhccl (flat and socket-aware), the DPML-like
 * small-message reduction and the chunk-parallel direct reduction of pip-mcoll. The
 * collectives differ only in where each rank's final piece goes (mc_sr_dest_t) and are thin
 * wrappers around these functions.
 *
 * Vocabulary. The input is cut into windows; a window holds p pieces, piece i being the part
 * whose result rank i finalizes. reduce_scatter: piece i of window w = elements
 * [w*I, w*I + I) of block i (clipped to the block); allreduce/reduce: window w = elements
 * [w*p*I, (w+1)*p*I) of the vector, split into p balanced pieces. So every byte of every
 * block is in exactly one piece, which is what keeps the DAV formulas exact for uneven
 * reduce_scatter counts too. */
#ifndef MC_RS_SHM_COMMON_H
#define MC_RS_SHM_COMMON_H
#include "../../shm/shm.h"

typedef enum {
    MC_SR_RS,   /* reduce_scatter(_block): rank i's result to its own rbuf */
    MC_SR_ALL,  /* allreduce: result in the region, every rank copies it out */
    MC_SR_ROOT, /* reduce: result in the region, the root copies it out */
} mc_sr_dest_t;

/* The reduction's shape: dest, and for MC_SR_RS the blocks (counts/displs in elements, or
 * NULL for equal blocks of a->count). allreduce/reduce reduce a->count elements. */
typedef struct mc_sr_job {
    mc_sr_dest_t dest;
    const size_t *counts, *displs;
    int handover;   /* the MA engine's writes into the region: MC_SR_HO_* */
} mc_sr_job_t;

/* How the MA engine writes its slices: by the node's distance (ma_setup: streamed when far),
 * or as the direct path's trial chose (mc_sr_direct). */
enum { MC_SR_HO_RULE, MC_SR_HO_TEMPORAL, MC_SR_HO_STREAM };

/* Movement-avoiding reduction (commutative ops). socket_aware: two levels over the region's
 * sockets (MA within each socket into a per-socket partial, then every rank reduces its piece
 * across the m partials); with one socket it is the flat algorithm. */
int mc_sr_ma(mc_ctx_t *ctx, const mc_args_t *a, const mc_sr_job_t *job, int socket_aware);
/* DPML-like: everybody copies its whole input into its slot (inline in the flag line when
 * it fits), then reductions in rank order (any op). */
int mc_sr_dpml(mc_ctx_t *ctx, const mc_args_t *a, const mc_sr_job_t *job);
/* Chunk-parallel direct reduction over posted user buffers (commutative ops); falls back to
 * mc_sr_ma when the posts are not reachable. */
int mc_sr_direct(mc_ctx_t *ctx, const mc_args_t *a, const mc_sr_job_t *job);

/* Windowed scan / exscan through the slots (any op, rank order kept). */
int mc_sr_scan(mc_ctx_t *ctx, const mc_args_t *a, int exclusive);
/* Movement-avoiding scan / exscan: the windows' folds split by columns among the ranks (any
 * op, rank order kept); its ok is mc_sr_scan_ok. */
int mc_sr_scan_ma(mc_ctx_t *ctx, const mc_args_t *a, int exclusive);
double mc_sr_scan_ma_dav(int exclusive, const mc_cost_in_t *in);
double mc_sr_scan_ma_cost(int exclusive, const mc_hockney_t *h, const mc_cost_in_t *in);
int mc_sr_scan_ok(const mc_ctx_t *ctx, const mc_args_t *a);
double mc_sr_scan_dav(int exclusive, const mc_cost_in_t *in);
double mc_sr_scan_cost(int exclusive, const mc_hockney_t *h, const mc_cost_in_t *in);

/* Applicability. */
int mc_sr_ma_ok(const mc_ctx_t *ctx, const mc_args_t *a);
int mc_sr_ma_socket_ok(const mc_ctx_t *ctx, const mc_args_t *a);
int mc_sr_dpml_ok(const mc_ctx_t *ctx, const mc_args_t *a);

/* DPML variants: reduce up to this size (the whole input) takes one sync, the root reducing
 * all inputs; larger, two (parts, then the copy-out). Allreduce takes the symmetric exchange
 * up to mc_sym_max(p) (at least this), one sync with every rank reducing all inputs.
 * Measured at 2 ranks on an Intel Xeon VM, batches of 100, one sync against shm_ma: allreduce
 * 4-12 KiB 1.30-3.06 us against 1.42-3.25 (16 KiB a tie), reduce 4-16 KiB 0.89-3.32 against
 * 1.60-4.24; two syncs at 8 KiB: 2.60-2.73 us. 16 KiB, not 4: the model costs a size class
 * at its middle (4-8 KiB at 5.8 KiB), so at 4 KiB it ranked the two-sync path and chose
 * shm_ma (reduce 4 KiB 0.98x native -> 1.67x). */
#define MC_SR_DPML_TINY 16384
/* reduce_scatter's inputs take the symmetric exchange up to this size: its copy-in is the
 * whole input, of which each peer reads a block (8 KiB inputs of 2 ranks: 1.87 us against
 * 1.32 on the general path). */
#define MC_SR_SYM_RS_MAX 4096
/* Data-access volume (m = a->bytes: the whole input vector of one rank). */
double mc_sr_ma_dav(mc_sr_dest_t dest, const mc_cost_in_t *in);
double mc_sr_dpml_dav(mc_sr_dest_t dest, const mc_cost_in_t *in);
double mc_sr_direct_dav(mc_sr_dest_t dest, const mc_cost_in_t *in);
/* Hockney costs (crude: alpha per synchronization, beta per byte moved by one rank). */
double mc_sr_ma_cost(mc_sr_dest_t dest, int socket_aware, const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_sr_dpml_cost(mc_sr_dest_t dest, const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_sr_direct_cost(mc_sr_dest_t dest, const mc_hockney_t *h, const mc_cost_in_t *in);
#endif
