/* Neighbor alltoallv entry points and the request calls that must recognise mcoll's
 * persistent neighbor requests (src/neighbor). Requests that are not mcoll's pass to PMPI
 * unchanged; while no mcoll request exists the only cost is one relaxed atomic load. */
#include "../neighbor/neighbor.h"
#include "entry.h"
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static int raise_on(mc_nb_req_t *r, int rc)
{
    if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(mc_nb_user_comm(r), rc);
    return rc;
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                           MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc;
    if (mc_comm_ok(comm) && sendbuf != MPI_IN_PLACE &&
        mc_nb_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                        &rc))
        return rc;
    return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                   recvtype, comm);
}

#if MPI_VERSION >= 4
/* MPI 4 persistent neighborhood collective: an mcoll request for dist-graph communicators,
 * the native one for anything else (other topologies, invalid arguments). */
int MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    int status = MPI_UNDEFINED;
    if (mc_comm_ok(comm) && request && sendbuf != MPI_IN_PLACE &&
        PMPI_Topo_test(comm, &status) == MPI_SUCCESS && status == MPI_DIST_GRAPH &&
        sendtype != MPI_DATATYPE_NULL && recvtype != MPI_DATATYPE_NULL && !mc_ctx_native(comm))
        return mc_nb_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                          NULL, NULL, comm, info, request);
    return PMPI_Neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                        recvtype, comm, info, request);
}
#endif

int MPI_Start(MPI_Request *request)
{
    mc_nb_req_t *r = request ? mc_nb_lookup(*request) : NULL;
    if (!r) return PMPI_Start(request);
    return raise_on(r, mc_nb_start(r));
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    if (!mc_nb_any() || count <= 0 || !array_of_requests) return PMPI_Startall(count, array_of_requests);
    int i = 0, rc = MPI_SUCCESS;
    while (i < count && rc == MPI_SUCCESS) {
        mc_nb_req_t *r = mc_nb_lookup(array_of_requests[i]);
        if (r) {
            rc = raise_on(r, mc_nb_start(r));
            i++;
            continue;
        }
        int j = i + 1; /* a run of native requests goes to PMPI in one call */
        while (j < count && !mc_nb_lookup(array_of_requests[j])) j++;
        rc = PMPI_Startall(j - i, array_of_requests + i);
        i = j;
    }
    return rc;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    mc_nb_req_t *r = request ? mc_nb_lookup(*request) : NULL;
    if (!r) return PMPI_Wait(request, status);
    int rc = mc_nb_wait(r);
    mc_nb_status_empty(status);
    return raise_on(r, rc);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    mc_nb_req_t *r = request ? mc_nb_lookup(*request) : NULL;
    if (!r) return PMPI_Test(request, flag, status);
    int rc = mc_nb_test(r, flag);
    if (*flag) mc_nb_status_empty(status);
    return raise_on(r, rc);
}

/* The state without completing (an inactive request reads as complete, empty status). */
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    mc_nb_req_t *r = mc_nb_lookup(request);
    if (!r || !flag) return PMPI_Request_get_status(request, flag, status);
    int rc = mc_nb_test(NULL, NULL);
    *flag = mc_nb_done(r);
    if (*flag) mc_nb_status_empty(status);
    return raise_on(r, rc);
}

int MPI_Request_free(MPI_Request *request)
{
    mc_nb_req_t *r = request ? mc_nb_lookup(*request) : NULL;
    if (!r) return PMPI_Request_free(request);
    MPI_Comm comm = mc_nb_user_comm(r);
    int rc = mc_nb_free(r, request);
    if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
    return rc;
}

/* ---------------------------------------------------------------- arrays */
/* The mcoll requests of an array (NULL for native ones); NULL when there are none. */
static mc_nb_req_t **find_mcoll(int n, const MPI_Request *reqs, int *found)
{
    *found = 0;
    if (!mc_nb_any() || n <= 0 || !reqs) return NULL;
    mc_nb_req_t **m = NULL;
    for (int i = 0; i < n; i++) {
        mc_nb_req_t *r = mc_nb_lookup(reqs[i]);
        if (!r) continue;
        if (!m && !(m = calloc((size_t)n, sizeof *m))) return NULL;
        m[i] = r;
        (*found)++;
    }
    return m;
}

/* A copy of the array with mcoll requests replaced by MPI_REQUEST_NULL, for PMPI. */
static MPI_Request *natives(int n, const MPI_Request *reqs, mc_nb_req_t **m)
{
    MPI_Request *t = malloc(sizeof(MPI_Request) * (size_t)n);
    if (t)
        for (int i = 0; i < n; i++) t[i] = m[i] ? MPI_REQUEST_NULL : reqs[i];
    return t;
}

static void merge_back(int n, MPI_Request *reqs, const MPI_Request *t, mc_nb_req_t **m, MPI_Status *st)
{
    for (int i = 0; i < n; i++) {
        if (!m[i]) {
            reqs[i] = t[i];
        } else if (st != MPI_STATUSES_IGNORE) {
            mc_nb_status_empty(&st[i]);
        }
    }
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    int nm, rc = MPI_SUCCESS;
    mc_nb_req_t **m = find_mcoll(count, array_of_requests, &nm);
    if (!m) return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    /* each wait progresses every active mcoll request, so the order here cannot deadlock */
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
        if (m[i]) rc = raise_on(m[i], mc_nb_wait(m[i]));
    MPI_Request *t = rc == MPI_SUCCESS ? natives(count, array_of_requests, m) : NULL;
    if (rc == MPI_SUCCESS && !t) rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Waitall(count, t, array_of_statuses);
        merge_back(count, array_of_requests, t, m, array_of_statuses);
    }
    free(t), free(m);
    return rc;
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status *array_of_statuses)
{
    int nm, rc = MPI_SUCCESS, done = 1;
    mc_nb_req_t **m = find_mcoll(count, array_of_requests, &nm);
    if (!m) return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    rc = mc_nb_test(NULL, NULL);
    for (int i = 0; i < count; i++)
        if (m[i] && !mc_nb_done(m[i])) done = 0;
    *flag = 0;
    /* natives are tested (and possibly completed) only when every mcoll request is done, so
     * a false answer never consumes a native completion */
    MPI_Request *t = rc == MPI_SUCCESS && done ? natives(count, array_of_requests, m) : NULL;
    if (rc == MPI_SUCCESS && done && !t) rc = MPI_ERR_NO_MEM;
    if (t) {
        rc = PMPI_Testall(count, t, flag, array_of_statuses);
        if (*flag) merge_back(count, array_of_requests, t, m, array_of_statuses);
        for (int i = 0; *flag && i < count; i++)
            if (m[i]) mc_nb_complete(m[i]);
    }
    free(t), free(m);
    return rc;
}

/* One pass of Testany over a mixed array; `was` marks the mcoll requests active on entry. */
static int testany_pass(int count, MPI_Request *reqs, mc_nb_req_t **m, const char *was, int *index, int *flag,
                        MPI_Status *status)
{
    int rc = mc_nb_test(NULL, NULL), any_active = 0;
    *flag = 0;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        if (!m[i]) continue;
        if (was[i] && mc_nb_done(m[i])) {
            mc_nb_complete(m[i]);
            *index = i, *flag = 1;
            mc_nb_status_empty(status);
            return MPI_SUCCESS;
        }
        any_active |= was[i];
    }
    MPI_Request *t = rc == MPI_SUCCESS ? natives(count, reqs, m) : NULL;
    if (!t) return rc == MPI_SUCCESS ? MPI_ERR_NO_MEM : rc;
    rc = PMPI_Testany(count, t, index, flag, status);
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED) reqs[*index] = t[*index];
    if (*flag && *index == MPI_UNDEFINED && any_active) *flag = 0; /* an mcoll one is pending */
    free(t);
    return rc;
}

static char *active_marks(int count, mc_nb_req_t **m)
{
    char *was = calloc((size_t)count, 1);
    for (int i = 0; was && i < count; i++) was[i] = m[i] && mc_nb_active(m[i]);
    return was;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    int nm;
    mc_nb_req_t **m = find_mcoll(count, array_of_requests, &nm);
    if (!m) return PMPI_Testany(count, array_of_requests, index, flag, status);
    char *was = active_marks(count, m);
    int rc = was ? testany_pass(count, array_of_requests, m, was, index, flag, status) : MPI_ERR_NO_MEM;
    free(was), free(m);
    return rc;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    int nm, flag = 0, rc = MPI_SUCCESS, spins = 0;
    mc_nb_req_t **m = find_mcoll(count, array_of_requests, &nm);
    if (!m) return PMPI_Waitany(count, array_of_requests, index, status);
    char *was = active_marks(count, m);
    if (!was) rc = MPI_ERR_NO_MEM;
    while (rc == MPI_SUCCESS && !flag) {
        rc = testany_pass(count, array_of_requests, m, was, index, &flag, status);
        if (++spins > 64) sched_yield();
    }
    free(was), free(m);
    return rc;
}

/* One pass of Testsome over a mixed array: the mcoll requests active on entry (`was`) that
 * are done, then whatever PMPI_Testsome completes among the native ones. MPI_UNDEFINED only
 * when no request of either kind is active. */
static int testsome_pass(int count, MPI_Request *reqs, mc_nb_req_t **m, const char *was, int *outcount,
                         int *indices, MPI_Status *statuses)
{
    int rc = mc_nb_test(NULL, NULL), n = 0, pending = 0, nat = 0;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        if (!m[i] || !was[i]) continue;
        if (!mc_nb_done(m[i])) {
            pending = 1;
            continue;
        }
        mc_nb_complete(m[i]);
        if (statuses != MPI_STATUSES_IGNORE) mc_nb_status_empty(&statuses[n]);
        indices[n++] = i;
    }
    MPI_Request *t = rc == MPI_SUCCESS ? natives(count, reqs, m) : NULL;
    if (!t) return rc == MPI_SUCCESS ? MPI_ERR_NO_MEM : rc;
    rc = PMPI_Testsome(count, t, &nat, indices + n,
                       statuses == MPI_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : statuses + n);
    if (rc == MPI_SUCCESS && nat != MPI_UNDEFINED)
        for (int k = n; k < n + nat; k++) reqs[indices[k]] = t[indices[k]];
    free(t);
    *outcount = nat == MPI_UNDEFINED && n == 0 && !pending ? MPI_UNDEFINED
                                                           : n + (nat == MPI_UNDEFINED ? 0 : nat);
    return rc;
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[])
{
    int nm;
    mc_nb_req_t **m = find_mcoll(incount, array_of_requests, &nm);
    if (!m) return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    char *was = active_marks(incount, m);
    int rc = was ? testsome_pass(incount, array_of_requests, m, was, outcount, array_of_indices,
                                 array_of_statuses)
                 : MPI_ERR_NO_MEM;
    free(was), free(m);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[])
{
    int nm, rc = MPI_SUCCESS, spins = 0;
    mc_nb_req_t **m = find_mcoll(incount, array_of_requests, &nm);
    if (!m) return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    char *was = active_marks(incount, m);
    if (!was) rc = MPI_ERR_NO_MEM;
    *outcount = 0;
    while (rc == MPI_SUCCESS && *outcount == 0) {
        rc = testsome_pass(incount, array_of_requests, m, was, outcount, array_of_indices, array_of_statuses);
        if (++spins > 64) sched_yield();
    }
    free(was), free(m);
    return rc;
}
