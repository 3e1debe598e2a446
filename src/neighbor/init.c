/* mcoll_neighbor_alltoallv_init(_ext): argument checks, options, plans of the candidate
 * strategies, the model's choice, the request. Also the blocking MPI_Neighbor_alltoallv. */
#include "../core/config.h"
#include "../core/log.h"
#include "neighbor_req.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *alg_names[MCOLL_NEIGHBOR_NALG] = {"standard", "aggregated", "dedup"};

const char *mc_nb_cfg(const char *name)
{
    for (int i = 0; i < mc_cfg_var_count(); i++)
        if (!strcmp(mc_cfg_var_at(i)->name, name)) return mc_cfg_value(mc_cfg_var_at(i));
    return "";
}

static int info_str(MPI_Info info, const char *key, char *val, int len)
{
    int flag = 0;
    if (info == MPI_INFO_NULL) return 0;
#if MPI_VERSION >= 4
    int buflen = len;
    if (PMPI_Info_get_string(info, key, &buflen, val, &flag) != MPI_SUCCESS) return 0;
#else
    if (PMPI_Info_get(info, key, len - 1, val, &flag) != MPI_SUCCESS) return 0;
#endif
    return flag;
}

/* -1 auto, else MCOLL_NEIGHBOR_*; -2 unknown name. */
static int parse_alg(const char *s)
{
    if (!s || !*s || !strcmp(s, "auto")) return -1;
    for (int a = 0; a < MCOLL_NEIGHBOR_NALG; a++)
        if (!strcmp(s, alg_names[a])) return a;
    return -2;
}

static int options(MPI_Info info, int *alg, int *socket)
{
    char v[64];
    const char *s = info_str(info, "mcoll_neighbor_alg", v, sizeof v) ? v : mc_nb_cfg("MCOLL_NEIGHBOR_ALG");
    *alg = parse_alg(s);
    if (*alg == -2) {
        mc_warn("unknown neighbor strategy '%s': using auto", s);
        *alg = -1;
    }
    s = info_str(info, "mcoll_neighbor_region", v, sizeof v) ? v : mc_nb_cfg("MCOLL_NEIGHBOR_REGION");
    *socket = !strcmp(s, "socket");
    return MPI_SUCCESS;
}

static int type_info(MPI_Datatype t, MPI_Aint *ext, int *size, int *contig)
{
    MPI_Aint lb, tlb, text;
    if (t == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
    int rc = PMPI_Type_size(t, size);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_get_extent(t, &lb, ext);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_get_true_extent(t, &tlb, &text);
    if (rc != MPI_SUCCESS) return MPI_ERR_TYPE;
    *contig = lb == 0 && tlb == 0 && *size == *ext && text == *ext;
    return MPI_SUCCESS;
}

static int counts_ok(const int *c, const int *d, int n)
{
    if (n && (!c || !d)) return 0;
    for (int i = 0; i < n; i++)
        if (c[i] < 0) return 0;
    return 1;
}

static int neighbors(mc_nb_in_t *in, MPI_Comm comm)
{
    int weighted, status;
    int rc = PMPI_Topo_test(comm, &status);
    if (rc != MPI_SUCCESS) return rc;
    if (status != MPI_DIST_GRAPH) return MPI_ERR_TOPOLOGY;
    rc = PMPI_Dist_graph_neighbors_count(comm, &in->indeg, &in->outdeg, &weighted);
    if (rc != MPI_SUCCESS) return rc;
    size_t ni = (size_t)(in->indeg ? in->indeg : 1), no = (size_t)(in->outdeg ? in->outdeg : 1);
    in->sources = malloc(sizeof(int) * ni);
    in->dests = malloc(sizeof(int) * no);
    int *sw = malloc(sizeof(int) * ni), *dw = malloc(sizeof(int) * no);
    if (!in->sources || !in->dests || !sw || !dw)
        rc = MPI_ERR_NO_MEM;
    else
        rc = PMPI_Dist_graph_neighbors(comm, in->indeg, in->sources, weighted ? sw : MPI_UNWEIGHTED,
                                       in->outdeg, in->dests, weighted ? dw : MPI_UNWEIGHTED);
    free(sw), free(dw);
    return rc;
}

static void in_free(mc_nb_in_t *in)
{
    mc_nb_regions_free(in);
    free(in->sources), free(in->dests);
}

/* Fills `in` from the call; local checks only. */
static int describe(mc_nb_in_t *in, const void *sbuf, const int *scounts, const int *sdispls,
                    MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
                    MPI_Datatype rtype, const int64_t *sidx, const int64_t *ridx, MPI_Comm comm)
{
    int sc, rcg, rc = neighbors(in, comm);
    if (rc != MPI_SUCCESS) return rc;
    if (!counts_ok(scounts, sdispls, in->outdeg) || !counts_ok(rcounts, rdispls, in->indeg))
        return MPI_ERR_COUNT;
    rc = type_info(stype, &in->sext, &in->ssize, &sc);
    if (rc == MPI_SUCCESS) rc = type_info(rtype, &in->rext, &in->rsize, &rcg);
    if (rc != MPI_SUCCESS) return rc;
    in->contig = sc && rcg;
    in->sbuf = sbuf, in->rbuf = rbuf;
    in->scounts = scounts, in->sdispls = sdispls, in->rcounts = rcounts, in->rdispls = rdispls;
    in->stype = stype, in->rtype = rtype;
    in->sidx = sidx, in->ridx = ridx;
    return MPI_SUCCESS;
}

/* One allreduce agrees on whether some rank's arguments were wrong (*bad on any rank), on
 * what may be built (types and index arrays may differ per rank) and on whether the proposed
 * slot of the shared communicator is free on every rank. Also makes comm's context (and its
 * private communicator), collective at the first use: every rank gets here. A context that
 * cannot be had (the MPI out of communicators: the same on every rank) is returned. */
static int agree(mc_nb_in_t *in, MPI_Comm comm, int *bad)
{
    int ctx_rc = mc_ctx_get(comm, &in->ctx);
    if (ctx_rc == MPI_SUCCESS && in->ctx->native) ctx_rc = MPI_ERR_INTERN; /* no communicators left */
    if (ctx_rc == MPI_SUCCESS) ctx_rc = mc_ctx_p2p(in->ctx);
    int slot_free = ctx_rc == MPI_SUCCESS && mc_nb_share_propose(in->ctx, &in->slot);
    int v[6] = {!*bad && ctx_rc == MPI_SUCCESS,
                in->contig,
                in->sidx && in->ridx && in->ssize == in->rsize,
                in->ssize,
                -in->ssize,
                slot_free};
    int rc = mc_inner_allreduce(v, 6, MPI_INT, MPI_MIN, comm); /* native without a context */
    *bad = rc != MPI_SUCCESS || !v[0];
    in->agg_ok = v[1];
    in->dedup_ok = v[1] && v[2] && v[3] == -v[4] && v[3] > 0;
    in->shared = v[5];
    return ctx_rc != MPI_SUCCESS ? ctx_rc : rc;
}

static int pick(int forced, int built[], const double *cost)
{
    if (forced >= 0) {
        while (forced > 0 && !built[forced]) forced--; /* dedup -> aggregated -> standard */
        return forced;
    }
    int best = MCOLL_NEIGHBOR_STANDARD;
    for (int a = 1; a < MCOLL_NEIGHBOR_NALG; a++)
        if (built[a] && cost[a] >= 0 && cost[a] < cost[best]) best = a;
    return best;
}

static void fill_stats(mc_nb_req_t *r, const mc_nb_in_t *in, const double *cost)
{
    mcoll_neighbor_stats_t *s = &r->stats;
    mc_nb_counts_t c;
    mc_nb_plan_count(in, &r->plan, &c);
    s->alg = r->plan.alg;
    snprintf(s->alg_name, sizeof s->alg_name, "%s", alg_names[s->alg]);
    s->region_socket = in->region_socket;
    s->shared_comm = r->share != NULL;
    s->nregions = in->nregions;
    for (int st = 0; st < MC_NB_NSTEP; st++) {
        s->intra_msgs += c.msgs[st][0][0], s->intra_bytes += c.bytes[st][0][0];
        s->inter_msgs += c.msgs[st][1][0], s->inter_bytes += c.bytes[st][1][0];
        s->step_msgs[st] = c.msgs[st][0][0] + c.msgs[st][1][0];
        s->step_bytes[st] = c.bytes[st][0][0] + c.bytes[st][1][0];
    }
    s->self_bytes = c.self_bytes;
    for (int a = 0; a < MCOLL_NEIGHBOR_NALG; a++) s->cost[a] = cost[a];
}

static void explain(const mc_nb_in_t *in, int forced, const double *cost, int alg)
{
    if (mc_cfg()->verbose < 1 || in->rank != 0) return;
    mc_info("neighbor_alltoallv_init: %d ranks, %d %s regions; predicted us/iter standard %.2f "
            "aggregated %.2f dedup %.2f (-1: not built) -> %s (%s)",
            in->size, in->nregions, in->region_socket ? "socket" : "node", cost[0] * 1e6,
            cost[1] < 0 ? -1 : cost[1] * 1e6, cost[2] < 0 ? -1 : cost[2] * 1e6, alg_names[alg],
            forced >= 0 ? "forced" : "model");
}

/* Builds the candidate plans, chooses, keeps the chosen one in r->plan. */
static int plan_and_choose(mc_nb_req_t *r, mc_nb_in_t *in, int forced)
{
    mc_nb_plan_t plans[MCOLL_NEIGHBOR_NALG];
    mc_nb_plan_t *pp[MCOLL_NEIGHBOR_NALG] = {NULL, NULL, NULL};
    int built[MCOLL_NEIGHBOR_NALG] = {1, 0, 0}, agg_ok = in->agg_ok, dedup_ok = in->dedup_ok, rc;
    double cost[MCOLL_NEIGHBOR_NALG];
    memset(plans, 0, sizeof plans);
    built[MCOLL_NEIGHBOR_DEDUP] = dedup_ok && (forced < 0 || forced == MCOLL_NEIGHBOR_DEDUP);
    built[MCOLL_NEIGHBOR_AGGREGATED] = agg_ok && (forced < 0 || forced == MCOLL_NEIGHBOR_AGGREGATED ||
                                                  (forced == MCOLL_NEIGHBOR_DEDUP && !dedup_ok));
    rc = mc_nb_plan_standard(in, &plans[0]);
    pp[0] = &plans[0];
    if (built[1]) {
        int e = mc_nb_plan_aggregated(in, &plans[1]);
        if (rc == MPI_SUCCESS) rc = e;
        pp[1] = &plans[1];
    }
    if (built[2]) {
        int e = mc_nb_plan_dedup(in, &plans[2]);
        if (rc == MPI_SUCCESS) rc = e;
        pp[2] = &plans[2];
    }
    int e = mc_nb_costs(in, pp, MCOLL_NEIGHBOR_NALG, cost, &rc);
    if (rc == MPI_SUCCESS) rc = e;
    int alg = pick(forced, built, cost);
    if (rc == MPI_SUCCESS) {
        r->plan = plans[alg];
        memset(&plans[alg], 0, sizeof plans[alg]);
        fill_stats(r, in, cost);
        explain(in, forced, cost, alg);
    }
    for (int a = 0; a < MCOLL_NEIGHBOR_NALG; a++) mc_nb_plan_free(&plans[a]);
    return rc;
}

/* The agreed slot of the shared communicator, or a duplicate of the request's own. */
static int request_comm(mc_nb_req_t *r, mc_nb_in_t *in)
{
    if (in->shared) {
        r->share = mc_nb_share_take(in->ctx, in->slot);
        r->slot = in->slot;
        r->comm = mc_nb_share_comm(r->share);
        r->tag0 = (int)in->slot * MC_NB_NTAG;
    } else {
        int rc = PMPI_Comm_dup(in->ctx->pcomm, &r->comm);
        if (rc != MPI_SUCCESS) return rc;
    }
    in->comm = r->comm;
    in->tag0 = r->tag0;
    return MPI_SUCCESS;
}

static int init_collective(mc_nb_req_t *r, mc_nb_in_t *in, int forced)
{
    int rc = request_comm(r, in);
    if (rc != MPI_SUCCESS) return rc;
    PMPI_Comm_size(in->comm, &in->size);
    PMPI_Comm_rank(in->comm, &in->rank);
    mc_nb_cost_params(in->region_socket);
    rc = mc_nb_regions(in);
    if (rc == MPI_SUCCESS) rc = plan_and_choose(r, in, forced);
    if (rc == MPI_SUCCESS) rc = mc_nb_req_materialize(r);
    return rc;
}

int mc_nb_init(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
               const int *rcounts, const int *rdispls, MPI_Datatype rtype, const int64_t *sidx,
               const int64_t *ridx, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    double t0 = PMPI_Wtime();
    mc_nb_in_t in;
    memset(&in, 0, sizeof in);
    if (comm == MPI_COMM_NULL) return mc_raise_no_comm(MPI_ERR_COMM);
    if (!request) return PMPI_Comm_call_errhandler(comm, MPI_ERR_REQUEST), MPI_ERR_REQUEST;
    if ((sidx == NULL) != (ridx == NULL)) return PMPI_Comm_call_errhandler(comm, MPI_ERR_ARG), MPI_ERR_ARG;
    int forced = -1,
        rc = describe(&in, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, sidx, ridx, comm);
    if (rc == MPI_SUCCESS) rc = options(info, &forced, &in.region_socket);
    /* Counts and types are checked locally: when only some ranks find an error, every rank
     * must leave here, or the others would wait forever in the set-up's collectives; the same
     * allreduce agrees on which strategies may be built. (A topology error is the same on
     * every rank, and then comm may not take a collective.) */
    if (in.sources) {
        int bad = rc != MPI_SUCCESS, e = agree(&in, comm, &bad);
        if (rc == MPI_SUCCESS) rc = e != MPI_SUCCESS ? e : bad ? MPI_ERR_OTHER : MPI_SUCCESS;
    }
    mc_nb_req_t *r = calloc(1, sizeof *r);
    if (rc == MPI_SUCCESS && !r) rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        free(r), in_free(&in);
        PMPI_Comm_call_errhandler(comm, rc);
        return rc;
    }
    r->handle = MPI_REQUEST_NULL;
    r->comm = MPI_COMM_NULL;
    r->ucomm = comm;
    rc = init_collective(r, &in, forced);
    in_free(&in);
    if (rc != MPI_SUCCESS) {
        mc_nb_req_destroy(r);
        PMPI_Comm_call_errhandler(comm, rc);
        return rc;
    }
    r->stats.init_time = PMPI_Wtime() - t0;
    *request = r->handle;
    return MPI_SUCCESS;
}

int mcoll_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    return mc_nb_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, NULL,
                      NULL, comm, info, request);
}

int mcoll_neighbor_alltoallv_init_ext(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                      MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                      const int rdispls[], MPI_Datatype recvtype,
                                      const int64_t global_sindices[], const int64_t global_rindices[],
                                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return mc_nb_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                      global_sindices, global_rindices, comm, info, request);
}

/* ---------------------------------------------------------------- blocking */
#define MC_NB_TAG_BLOCKING 990

/* The standard strategy, straight: nonblocking point-to-point on the private communicator. */
static int blocking_standard(const mc_nb_in_t *in, MPI_Comm pcomm)
{
    int n = 0, rc = MPI_SUCCESS;
    MPI_Request *q = malloc(sizeof(MPI_Request) * (size_t)(in->indeg + in->outdeg + 1));
    if (!q) return MPI_ERR_NO_MEM;
    for (int j = 0; j < in->indeg && rc == MPI_SUCCESS; j++)
        if (in->rcounts[j] && in->rsize)
            rc = PMPI_Irecv(in->rbuf + (MPI_Aint)in->rdispls[j] * in->rext, in->rcounts[j], in->rtype,
                            in->sources[j], MC_NB_TAG_BLOCKING, pcomm, &q[n++]);
    for (int i = 0; i < in->outdeg && rc == MPI_SUCCESS; i++)
        if (in->scounts[i] && in->ssize)
            rc = PMPI_Isend((char *)in->sbuf + (MPI_Aint)in->sdispls[i] * in->sext, in->scounts[i], in->stype,
                            in->dests[i], MC_NB_TAG_BLOCKING, pcomm, &q[n++]);
    int w = mc_waitall(n, q);
    free(q);
    return rc == MPI_SUCCESS ? w : rc;
}

int mc_nb_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
                    const int *rcounts, const int *rdispls, MPI_Datatype rtype, MPI_Comm comm, int *rc)
{
    mc_nb_in_t in;
    int forced, sock;
    memset(&in, 0, sizeof in);
    /* anything invalid (or not a dist graph) goes to the native MPI, which reports it */
    if (describe(&in, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, NULL, NULL, comm) !=
        MPI_SUCCESS) {
        in_free(&in);
        return 0;
    }
    mc_ctx_t *ctx;
    if (mc_ctx_get(comm, &ctx) != MPI_SUCCESS || ctx->native || mc_ctx_p2p(ctx) != MPI_SUCCESS) {
        /* no communicators left */
        in_free(&in);
        return 0;
    }
    options(MPI_INFO_NULL, &forced, &sock);
    if (forced > MCOLL_NEIGHBOR_STANDARD) {
        /* a forced locality-aware strategy: a one-shot plan (init cost every call) */
        MPI_Request req;
        in_free(&in);
        *rc = mc_nb_init(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, NULL, NULL, comm,
                         MPI_INFO_NULL, &req);
        if (*rc != MPI_SUCCESS) return 1;
        mc_nb_req_t *r = mc_nb_lookup(req);
        *rc = mc_nb_start(r);
        if (*rc == MPI_SUCCESS) *rc = mc_nb_wait(r);
        int e = mc_nb_free(r, &req);
        if (*rc == MPI_SUCCESS) *rc = e;
        if (*rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, *rc);
        return 1;
    }
    *rc = blocking_standard(&in, ctx->pcomm);
    in_free(&in);
    if (*rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, *rc);
    return 1;
}
