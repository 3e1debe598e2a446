/* Shared allgather(v) machinery: the ring and the recursive doubling run on a general
 * block layout (counts/displs in bytes), and allgather passes the uniform layout. */
#ifndef MC_ALLGATHERV_COMMON_H
#define MC_ALLGATHERV_COMMON_H
#include "../../p2p/p2p.h"

/* Where every rank's block lives in rbuf. counts == NULL is the uniform layout of
 * allgather: block i holds `count` bytes at i * count. */
typedef struct mc_agv {
    const void *sbuf;           /* this rank's block; may equal its place in rbuf */
    char *rbuf;
    const size_t *counts, *displs;
    size_t count;
    mc_coll_t coll;             /* tag */
} mc_agv_t;

static inline size_t mc_agv_len(const mc_agv_t *v, int i)
{
    return v->counts ? v->counts[i] : v->count;
}
static inline size_t mc_agv_disp(const mc_agv_t *v, int i)
{
    return v->counts ? v->displs[i] : (size_t)i * v->count;
}

/* The views of the two collectives' arguments. */
mc_agv_t mc_agv_of_allgather(const mc_args_t *a);
mc_agv_t mc_agv_of_allgatherv(const mc_args_t *a);

int mc_agv_ring(const mc_ctx_t *ctx, const mc_agv_t *v);
int mc_agv_recdbl(const mc_ctx_t *ctx, const mc_agv_t *v);


/* Hockney costs, shared with allgather (m = bytes per rank). */
double mc_agv_ring_cost(const mc_hockney_t *h, const mc_cost_in_t *in);
double mc_agv_recdbl_cost(const mc_hockney_t *h, const mc_cost_in_t *in);
#endif
