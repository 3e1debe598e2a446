/* Shared-memory barrier: dissemination over one flag line per rank, ceil(log2 p) rounds of
 * a release store and an acquire wait; no message, no system call while the peers run.
 * (A flat counter barrier makes every rank write one line: p-way contention on it costs more
 * than the log2 p rounds at the sizes of a node.) */
#include "../../shm/shm.h"

static int barrier_shm(mc_ctx_t *ctx, const mc_args_t *a)
{
    mc_shm_t *sh;
    int rc;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    mc_shm_barrier(sh);
    return MPI_SUCCESS;
}

/* ceil(log2 p) flag round trips between cores: alpha each (no payload). */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_ceil_log2(in->p) * h->alpha;
}

/* Flags only: no byte goes through a copy or reduction kernel. */
static double dav(const mc_cost_in_t *in) { return 0 * in->p; }

const mc_alg_t mc_alg_barrier_shm = {
    .coll = MC_BARRIER, .name = "shm",
    .doc = "node shared memory: dissemination over per-rank flag lines (one node only)",
    .fn = barrier_shm, .ok = mc_shm_alg_ok, .cost = cost, .dav = dav, .flags = 0,
};
