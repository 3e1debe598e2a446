/* The mcoll neighbor request (request.c, init.c). */
#ifndef MC_NEIGHBOR_REQ_H
#define MC_NEIGHBOR_REQ_H
#include "neighbor.h"

/* Request lists: started at MPI_Start (all receives, L and S sends, standard sends), gates
 * (S receives before G sends, G receives before R sends), and everything. */
enum { MC_NB_START, MC_NB_SRECV, MC_NB_GSEND, MC_NB_GRECV, MC_NB_RSEND, MC_NB_ALL, MC_NB_NLIST };
enum { MC_NB_IDLE, MC_NB_WAIT_S, MC_NB_WAIT_G, MC_NB_WAIT_ALL };

struct mc_nb_req {
    MPI_Request handle; /* what the user holds */
    MPI_Comm ucomm;     /* user's communicator (errors) */
    MPI_Comm comm;      /* its context's shared communicator, or a duplicate of its own */
    mc_nb_share_t *share; /* holder of comm, NULL: comm is the request's own */
    uint32_t slot;        /* on the shared communicator */
    int tag0;             /* its messages' tags: tag0 + step */
    mc_nb_plan_t plan;
    MPI_Request *reqs;   /* [plan.nmsg] persistent point-to-point */
    MPI_Datatype *types; /* [plan.nmsg] owned block types */
    MPI_Request *list[MC_NB_NLIST];
    int nlist[MC_NB_NLIST];
    int phase;   /* progress of the current iteration (MC_NB_IDLE: done); under the engine's lock */
    int uactive; /* started and not yet completed by a wait/test call */
    uint64_t starts;
    mcoll_neighbor_stats_t stats;
    mc_nb_req_t *hnext, *anext;
};

/* Creates the point-to-point requests and the user's handle, and registers it. */
int mc_nb_req_materialize(mc_nb_req_t *r);
void mc_nb_req_destroy(mc_nb_req_t *r);
#endif
