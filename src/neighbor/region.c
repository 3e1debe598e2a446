/* Regions (nodes or sockets), the load-balanced owners of inter-region pairs, the region
 * exchanges of plan metadata, and a (rank, id) hash map. */
#define _GNU_SOURCE
#include "../core/config.h"
#include "../core/topo.h"
#include "neighbor.h"
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Socket of this rank: virtual (MCOLL_VSOCKET_SIZE local ranks each) or the hwloc package
 * of the CPU it runs on. */
static int my_socket(const mc_ctx_t *ctx)
{
    int k = mc_cfg()->vsocket_size;
    if (k > 0) return ctx->local_rank / k;
    int cpu = sched_getcpu();
    return cpu < 0 ? 0 : mc_topo_package_of_cpu(cpu);
}

/* Regions numbered in order of their lowest rank, so every rank agrees. */
static int number_regions(mc_nb_in_t *in, const int *key)
{
    int p = in->size, n = 0;
    int *first = malloc(sizeof(int) * (size_t)p);
    if (!first) return MPI_ERR_NO_MEM;
    for (int r = 0; r < p; r++) {
        int g = -1;
        for (int q = 0; q < n && g < 0; q++)
            if (key[2 * first[q]] == key[2 * r] && key[2 * first[q] + 1] == key[2 * r + 1]) g = q;
        if (g < 0) {
            g = n;
            first[n++] = r;
        }
        in->region_of[r] = g;
    }
    free(first);
    in->nregions = n;
    return MPI_SUCCESS;
}

static int socket_regions(mc_nb_in_t *in)
{
    int mine[2] = {in->ctx->node, my_socket(in->ctx)};
    int *key = malloc(sizeof(int) * 2 * (size_t)in->size);
    if (!key) return MPI_ERR_NO_MEM;
    int rc = mc_inner_allgather(mine, key, 2, MPI_INT, in->ctx->comm);
    if (rc == MPI_SUCCESS) rc = number_regions(in, key);
    free(key);
    return rc;
}

int mc_nb_regions(mc_nb_in_t *in)
{
    int p = in->size, rc;
    in->region_of = malloc(sizeof(int) * (size_t)p);
    in->rmembers = malloc(sizeof(int) * (size_t)p);
    if (!in->region_of || !in->rmembers) return MPI_ERR_NO_MEM;
    if (in->region_socket) {
        rc = socket_regions(in);
        if (rc != MPI_SUCCESS) return rc;
    } else {
        memcpy(in->region_of, in->ctx->node_of, sizeof(int) * (size_t)p);
        in->nregions = in->ctx->nnodes;
    }
    in->region = in->region_of[in->rank];
    in->rsize_local = 0;
    for (int r = 0; r < p; r++) {
        if (in->region_of[r] != in->region) continue;
        if (r == in->rank) in->rlocal = in->rsize_local;
        in->rmembers[in->rsize_local++] = r;
    }
    return MPI_SUCCESS;
}

void mc_nb_regions_free(mc_nb_in_t *in)
{
    free(in->region_of);
    free(in->rmembers);
    in->region_of = in->rmembers = NULL;
}

typedef struct item {
    double w;
    int kind; /* 0: this region sends to `other`, 1: receives from it */
    int other;
} item_t;

static int item_cmp(const void *a, const void *b)
{
    const item_t *x = a, *y = b;
    if (x->w != y->w) return x->w > y->w ? -1 : 1;
    if (x->kind != y->kind) return x->kind - y->kind;
    return x->other - y->other;
}

/* Longest-processing-time-first inside region g over its sent and received pairs: the
 * pairs' costs (alpha + beta * bytes) spread over the region's ranks, so one rank neither
 * sends nor receives all inter-region traffic. */
static void assign_region(const mc_nb_in_t *in, int g, const int64_t *vol, const int *members, int nm,
                          item_t *it, double *load, int *send_owner, int *recv_owner)
{
    int R = in->nregions, n = 0;
    for (int o = 0; o < R; o++) {
        if (o == g) continue;
        if (vol[(size_t)g * R + o] > 0) it[n++] = (item_t){mc_nb_pair_weight(vol[(size_t)g * R + o]), 0, o};
        if (vol[(size_t)o * R + g] > 0) it[n++] = (item_t){mc_nb_pair_weight(vol[(size_t)o * R + g]), 1, o};
    }
    qsort(it, (size_t)n, sizeof *it, item_cmp);
    for (int k = 0; k < nm; k++) load[k] = 0;
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int k = 1; k < nm; k++)
            if (load[k] < load[best]) best = k;
        load[best] += it[i].w;
        if (it[i].kind == 0)
            send_owner[(size_t)g * R + it[i].other] = members[best];
        else
            recv_owner[(size_t)it[i].other * R + g] = members[best];
    }
}

int mc_nb_assign(const mc_nb_in_t *in, const int64_t *vol, int *send_owner, int *recv_owner)
{
    int R = in->nregions, p = in->size;
    int *members = malloc(sizeof(int) * (size_t)p), *start = calloc((size_t)R + 1, sizeof(int));
    item_t *it = malloc(sizeof(item_t) * 2 * (size_t)R);
    double *load = malloc(sizeof(double) * (size_t)p);
    if (!members || !start || !it || !load) {
        free(members), free(start), free(it), free(load);
        return MPI_ERR_NO_MEM;
    }
    for (int r = 0; r < p; r++) start[in->region_of[r] + 1]++;
    for (int g = 0; g < R; g++) start[g + 1] += start[g];
    int *fill = malloc(sizeof(int) * (size_t)R);
    if (!fill) {
        free(members), free(start), free(it), free(load);
        return MPI_ERR_NO_MEM;
    }
    memcpy(fill, start, sizeof(int) * (size_t)R);
    for (int r = 0; r < p; r++) members[fill[in->region_of[r]]++] = r;
    free(fill);
    for (size_t i = 0; i < (size_t)R * R; i++) send_owner[i] = recv_owner[i] = -1;
    for (int g = 0; g < R; g++)
        assign_region(in, g, vol, members + start[g], start[g + 1] - start[g], it, load, send_owner,
                      recv_owner);
    free(members), free(start), free(it), free(load);
    return MPI_SUCCESS;
}

int mc_nb_allreduce_i64(const mc_nb_in_t *in, int64_t *v, int n)
{
    return mc_inner_allreduce(v, n, MPI_INT64_T, MPI_SUM, in->ctx->comm);
}

/* Point-to-point on in->comm: every list is sent first, then each member's is probed for its
 * length and received in member order. A rank waits only for its region's lists: no
 * region-wide collective, and no region communicator made at every init (on MPICH with more
 * ranks than cores each of those syncs cost a scheduling slice). */
int mc_nb_region_exchange(const mc_nb_in_t *in, int64_t **sendl, const int *scnt, int64_t **recv, int *rcnt)
{
    int n = in->rsize_local, me = in->rlocal, ns = 0, rc = MPI_SUCCESS;
    MPI_Request *q = malloc(sizeof(MPI_Request) * (size_t)n);
    *recv = NULL;
    if (!q) return MPI_ERR_NO_MEM;
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++)
        if (k != me)
            rc = PMPI_Isend(sendl[k], scnt[k], MPI_INT64_T, in->rmembers[k], in->tag0 + MC_NB_TAG_REGION,
                            in->comm, &q[ns++]);
    size_t rt = 0;
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
        MPI_Status st;
        rcnt[k] = scnt[k];
        if (k != me) rc = mc_probe(in->rmembers[k], in->tag0 + MC_NB_TAG_REGION, in->comm, &st);
        if (k != me && rc == MPI_SUCCESS) rc = PMPI_Get_count(&st, MPI_INT64_T, &rcnt[k]);
        rt += (size_t)rcnt[k];
    }
    if (rc == MPI_SUCCESS && !(*recv = malloc(sizeof(int64_t) * (rt ? rt : 1)))) rc = MPI_ERR_NO_MEM;
    rt = 0;
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
        if (k == me && scnt[k])
            memcpy(*recv + rt, sendl[k], sizeof(int64_t) * (size_t)scnt[k]);
        else if (k != me)
            rc = PMPI_Recv(*recv + rt, rcnt[k], MPI_INT64_T, in->rmembers[k], in->tag0 + MC_NB_TAG_REGION,
                           in->comm, MPI_STATUS_IGNORE);
        rt += (size_t)rcnt[k];
    }
    int w = mc_waitall(ns, q);
    if (rc == MPI_SUCCESS) rc = w;
    if (rc != MPI_SUCCESS) {
        free(*recv);
        *recv = NULL;
    }
    free(q);
    return rc;
}

/* ---------------------------------------------------------------- (rank, id) map */
static size_t hash(int rank, int64_t id)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull ^ ((uint64_t)(unsigned)rank * 0xC2B2AE3D27D4EB4Full);
    return (size_t)(h ^ (h >> 29));
}

int mc_nb_map_init(mc_nb_map_t *m, size_t expect)
{
    size_t cap = 16;
    while (cap < 2 * expect + 2) cap <<= 1;
    m->cap = cap;
    m->n = 0;
    m->key_id = malloc(sizeof(int64_t) * cap);
    m->key_rank = malloc(sizeof(int) * cap);
    m->val = malloc(sizeof(size_t) * cap);
    if (!m->key_id || !m->key_rank || !m->val) {
        mc_nb_map_free(m);
        return MPI_ERR_NO_MEM;
    }
    for (size_t i = 0; i < cap; i++) m->key_rank[i] = -1;
    return MPI_SUCCESS;
}

static int grow(mc_nb_map_t *m)
{
    mc_nb_map_t g;
    if (mc_nb_map_init(&g, m->cap) != MPI_SUCCESS) return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->key_rank[i] >= 0) {
            size_t v = m->val[i];
            mc_nb_map_get(&g, m->key_rank[i], m->key_id[i], &v, 1);
        }
    mc_nb_map_free(m);
    *m = g;
    return 0;
}

int mc_nb_map_get(mc_nb_map_t *m, int rank, int64_t id, size_t *val, int insert)
{
    size_t mask = m->cap - 1, i = hash(rank, id) & mask;
    while (m->key_rank[i] >= 0) {
        if (m->key_rank[i] == rank && m->key_id[i] == id) {
            *val = m->val[i];
            return 1;
        }
        i = (i + 1) & mask;
    }
    if (!insert) return 0;
    if (2 * (m->n + 1) > m->cap) {
        if (grow(m) != 0) return -1;
        return mc_nb_map_get(m, rank, id, val, 1);
    }
    m->key_rank[i] = rank;
    m->key_id[i] = id;
    m->val[i] = *val;
    m->n++;
    return 0;
}

void mc_nb_map_free(mc_nb_map_t *m)
{
    free(m->key_id);
    free(m->key_rank);
    free(m->val);
    memset(m, 0, sizeof *m);
}
