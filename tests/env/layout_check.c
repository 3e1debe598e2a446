#include "layout_check.h"
#include "mcoll.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void check_new_context(MPI_Comm comm, const char *name, const int *keys, int width, int by_table,
                       expect_fn expect)
{
    int p, r;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    size_t kb = sizeof(int) * (size_t)width;
    int *node = malloc(sizeof(int) * (size_t)p), *count = calloc((size_t)p, sizeof(int));
    int nnodes = 0, local = 0, leader = -1;
    for (int i = 0; i < p; i++) {
        node[i] = -1;
        for (int j = 0; j < i && node[i] < 0; j++)
            if (!memcmp(keys + width * j, keys + width * i, kb)) node[i] = node[j];
        if (node[i] < 0) node[i] = nnodes++;
        int mine = !memcmp(keys + width * i, keys + width * r, kb);
        if (mine && i < r) local++;
        if (mine && leader < 0) leader = i;
        count[node[i]]++;
    }
    int uniform = 1;
    for (int n = 1; n < nnodes; n++) uniform &= count[n] == count[0];
    mcoll_comm_info_t info;
    mcoll_setup_stats_t a, b;
    char what[160];
    mcoll_setup_stats(&a);
    int rc = mcoll_comm_info(comm, &info);
    mcoll_setup_stats(&b);
    snprintf(what, sizeof what, "%s: contexts made", name);
    expect(what, (long)(b.contexts - a.contexts), 1);
    snprintf(what, sizeof what, "%s: contexts made by the world's table", name);
    expect(what, (long)(b.contexts_by_table - a.contexts_by_table), by_table);
    snprintf(what, sizeof what, "%s: mcoll_comm_info", name);
    expect(what, rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        long got[] = {info.size, info.rank, info.nnodes, info.node, info.local_rank, info.local_size,
                      info.leader, info.uniform_ppn};
        long want[] = {p, r, nnodes, node[r], local, count[node[r]], leader, uniform};
        const char *field[] = {"size", "rank", "nnodes", "node", "local_rank", "local_size", "leader",
                               "uniform_ppn"};
        for (int i = 0; i < 8; i++) {
            snprintf(what, sizeof what, "%s: %s", name, field[i]);
            expect(what, got[i], want[i]);
        }
    }
    free(node);
    free(count);
}
