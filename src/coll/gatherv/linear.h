/* Linear (flat-tree) rooted byte collectives, shared by gather/gatherv and scatter/scatterv
 * (defined in gatherv/linear.c and scatterv/linear.c):
 * gather is gatherv with equal blocks at offsets i * block. */
#ifndef MC_COLL_ROOTED_LINEAR_H
#define MC_COLL_ROOTED_LINEAR_H
#include "../../p2p/p2p.h"

/* Where rank i's block lives in the root's buffer: counts/displs when given (v-collectives),
 * else `block` bytes at i * block. Only meaningful at the root. */
typedef struct mc_vlayout {
    const size_t *counts, *displs;
    size_t block;
} mc_vlayout_t;

static inline size_t mc_vlen(const mc_vlayout_t *l, int i)
{
    return l->counts ? l->counts[i] : l->block;
}
static inline size_t mc_voff(const mc_vlayout_t *l, int i)
{
    return l->displs ? l->displs[i] : (size_t)i * l->block;
}

/* Root receives (gatherv) or sends (scatterv) every block directly; other ranks exchange
 * their a->count bytes with the root. Zero-byte blocks are not sent at all. */
int mc_gatherv_linear_run(mc_ctx_t *ctx, const mc_args_t *a, const mc_vlayout_t *l);
int mc_scatterv_linear_run(mc_ctx_t *ctx, const mc_args_t *a, const mc_vlayout_t *l);

/* Hockney: the root's port handles p-1 messages of m bytes one after another:
 * T = (p - 1) * (alpha + m * beta). */
double mc_rooted_linear_cost(const mc_hockney_t *h, const mc_cost_in_t *in);
#endif
