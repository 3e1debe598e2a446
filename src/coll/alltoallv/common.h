/* Shared alltoall(v) machinery: linear and pairwise exchange on a general layout (byte
 * counts and displacements on both sides); alltoall passes the uniform layout. */
#ifndef MC_ALLTOALLV_COMMON_H
#define MC_ALLTOALLV_COMMON_H
#include "../../p2p/p2p.h"

/* scounts == NULL is the uniform layout of alltoall: `count` bytes per peer at peer*count
 * on both sides. */
typedef struct mc_a2av {
    const char *sbuf;
    char *rbuf;
    const size_t *scounts, *sdispls, *rcounts, *rdispls;
    size_t count;
    mc_coll_t coll;             /* tag */
} mc_a2av_t;

static inline size_t mc_a2av_slen(const mc_a2av_t *v, int i) { return v->scounts ? v->scounts[i] : v->count; }
static inline size_t mc_a2av_rlen(const mc_a2av_t *v, int i) { return v->scounts ? v->rcounts[i] : v->count; }
static inline const char *mc_a2av_sptr(const mc_a2av_t *v, int i)
{
    return v->sbuf + (v->scounts ? v->sdispls[i] : (size_t)i * v->count);
}
static inline char *mc_a2av_rptr(const mc_a2av_t *v, int i)
{
    return v->rbuf + (v->scounts ? v->rdispls[i] : (size_t)i * v->count);
}

mc_a2av_t mc_a2av_of_alltoall(const mc_args_t *a);
mc_a2av_t mc_a2av_of_alltoallv(const mc_args_t *a);

int mc_a2av_linear(const mc_ctx_t *ctx, const mc_a2av_t *v);
int mc_a2av_pairwise(const mc_ctx_t *ctx, const mc_a2av_t *v);

/* Hockney costs, shared with alltoall (m = bytes per peer). */
double mc_a2av_linear_cost(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_a2av_pairwise_cost(const mc_hockney_t *h, const mc_cost_in_t *in);
#endif
