/* mcoll_comm_info against an independent computation: all ranks of a test run share one
 * machine, so with MCOLL_VNODE_SIZE=k the virtual node of world rank w is w / k (k = 0: one
 * node). Inside a communicator, nodes are numbered by their lowest comm rank and local ranks
 * follow comm rank order. */
#include "checks.h"
#include "mcoll.h"
#include <stdlib.h>

static void expected_info(const tcomm_t *c, const int *world_of, int k, mcoll_comm_info_t *e)
{
    int p = c->size, *first = xmalloc(sizeof(int) * (size_t)p), nnodes = 0, sizes_equal = 1;
    int *vnode = xmalloc(sizeof(int) * (size_t)p), *count = xmalloc(sizeof(int) * (size_t)p);
    for (int i = 0; i < p; i++) vnode[i] = k > 0 ? world_of[i] / k : 0;
    *e = (mcoll_comm_info_t){.size = p, .rank = c->rank};
    for (int i = 0; i < p; i++) {   /* first[n] = lowest comm rank of node n */
        int n = 0;
        while (n < nnodes && vnode[first[n]] != vnode[i]) n++;
        if (n == nnodes) { first[nnodes] = i; count[nnodes++] = 0; }
        if (i == c->rank) { e->node = n; e->local_rank = count[n]; e->leader = first[n]; }
        count[n]++;
    }
    for (int n = 1; n < nnodes; n++) sizes_equal &= count[n] == count[0];
    e->nnodes = nnodes;
    e->local_size = count[e->node];
    e->uniform_ppn = sizes_equal;
    xfree(first);
    xfree(vnode);
    xfree(count);
}

#define FIELD(f)                                                                               \
    if (got.f != want.f) tfail("mcoll_comm_info." #f " = %d, expected %d", got.f, want.f)

void check_topology(const tcomm_t *comms, int ncomms, int vnode_size)
{
    int wrank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    for (int i = 0; i < ncomms; i++) {
        const tcomm_t *c = &comms[i];
        int *world_of = xmalloc(sizeof(int) * (size_t)c->size);
        tcase(c, "mcoll_comm_info vnode_size=%d", vnode_size);
        if (tcheck_rc(PMPI_Allgather(&wrank, 1, MPI_INT, world_of, 1, MPI_INT, c->comm), "PMPI_Allgather")) {
            mcoll_comm_info_t got, want;
            expected_info(c, world_of, vnode_size, &want);
            if (tcheck_rc(mcoll_comm_info(c->comm, &got), "mcoll_comm_info")) {
                FIELD(size); FIELD(rank); FIELD(node); FIELD(nnodes);
                FIELD(local_rank); FIELD(local_size); FIELD(uniform_ppn); FIELD(leader);
            }
        }
        xfree(world_of);
    }
}
