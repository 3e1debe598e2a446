/* Rabenseifner allreduce: recursive-halving reduce-scatter then recursive-doubling allgather
 * over q = largest power of two <= p balanced slots of the vector; the other ranks are folded
 * in pairwise first and get the result at the end. Partners are at distance 1, 2, 4, ... in
 * the halving, so partials cover contiguous rank ranges (rank order kept); each element is
 * reduced by one rank and then copied, so the result is bitwise identical everywhere. */
#include "../reduce_scatter/common.h"

/* Halving then doubling on the active ranks; the owned slot is moved to rbuf in between
 * when the last combine left it in the scratch buffer. */
static int halve_and_double(mc_ctx_t *ctx, const mc_args_t *a, const mc_fold_t *f, void *buf[2], int *cur)
{
    size_t *sd = mc_malloc(sizeof(size_t) * ((size_t)f->q + 1));
    if (!sd) return MPI_ERR_NO_MEM;
    for (int s = 0; s <= f->q; s++) sd[s] = mc_part_start(a->count, f->q, s);
    int rc = mc_rs_halving(ctx, a, f, buf, cur, sd);
    if (rc == MPI_SUCCESS) {
        int s = mc_rs_bitrev(f->v, f->k);
        mc_rs_copy(mc_elem(a->rbuf, sd[s], a), mc_elem(buf[*cur], sd[s], a), sd[s + 1] - sd[s], a);
        rc = mc_ag_doubling(ctx, a, f, a->rbuf, sd);
    }
    mc_free(sd);
    return rc;
}

static int allreduce_rabenseifner(mc_ctx_t *ctx, const mc_args_t *a)
{
    return mc_fold_allreduce(ctx, a, halve_and_double);
}

/* k = log2 q, f = [p != q]: halving k*alpha + (q-1)/q*m*(beta + gamma), doubling
 * k*alpha + (q-1)/q*m*beta, the fold 2*alpha + 2*m*beta + m*gamma:
 * 2k*alpha + 2(q-1)/q*m*beta + (q-1)/q*m*gamma + f*(2*alpha + 2*m*beta + m*gamma). */
static double cost(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int k = mc_floor_log2(in->p), q = 1 << k;
    double part = (double)(q - 1) / q * in->m;
    double t = 2 * k * h->alpha + 2 * part * h->beta + part * h->gamma;
    if (q != in->p) t += 2 * h->alpha + 2 * in->m * h->beta + in->m * h->gamma;
    return t;
}

const mc_alg_t mc_alg_allreduce_rabenseifner = {
    .coll = MC_ALLREDUCE, .name = "rabenseifner",
    .doc = "recursive-halving reduce-scatter + recursive-doubling allgather; keeps rank order",
    .fn = allreduce_rabenseifner, .ok = NULL, .cost = cost, .flags = 0,
};
