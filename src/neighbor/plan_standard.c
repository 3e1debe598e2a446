/* Standard strategy (paper Alg. 1-3): one persistent send per out-edge and one persistent
 * receive per in-edge, straight from and into the user's buffers with the user's datatypes,
 * so any datatype works. Edges of zero bytes carry no message on either side (both ends
 * know the count is zero: matching type signatures). Duplicated edges keep list order,
 * which MPI's non-overtaking rule matches k-th to k-th. */
#include "neighbor.h"

static int add(mc_nb_plan_t *p, int inter, int peer, int send, void *buf, int count, MPI_Datatype t,
               size_t bytes)
{
    /* the step only labels the counters: with no S and R steps everything starts at once */
    mc_nb_msg_t *m = mc_nb_plan_msg(p, peer, send, inter ? MC_NB_G : MC_NB_L);
    if (!m) return MPI_ERR_NO_MEM;
    m->ubuf = buf;
    m->ucount = count;
    m->utype = t;
    m->bytes = bytes;
    return MPI_SUCCESS;
}

int mc_nb_plan_standard(const mc_nb_in_t *in, mc_nb_plan_t *p)
{
    int rc = MPI_SUCCESS;
    p->alg = MCOLL_NEIGHBOR_STANDARD;
    for (int i = 0; i < in->indeg && rc == MPI_SUCCESS; i++) {
        size_t bytes = (size_t)in->rcounts[i] * (size_t)in->rsize;
        if (bytes == 0) continue;
        rc = add(p, in->region_of[in->sources[i]] != in->region, in->sources[i], 0,
                 in->rbuf + (MPI_Aint)in->rdispls[i] * in->rext, in->rcounts[i], in->rtype, bytes);
    }
    for (int i = 0; i < in->outdeg && rc == MPI_SUCCESS; i++) {
        size_t bytes = (size_t)in->scounts[i] * (size_t)in->ssize;
        if (bytes == 0) continue;
        rc = add(p, in->region_of[in->dests[i]] != in->region, in->dests[i], 1,
                 (char *)in->sbuf + (MPI_Aint)in->sdispls[i] * in->sext, in->scounts[i], in->stype, bytes);
    }
    return rc;
}
