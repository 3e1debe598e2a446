/* Intercommunicators, intracommunicators whose processes come from two MPI worlds, and
 * communicators of a program that uses MPI sessions alone.
 *
 *   worlds [--spawn S] | worlds --sessions
 *
 * mcoll takes intracommunicators only: an intercommunicator's collectives go to the native MPI
 * and must give the MPI standard's intercommunicator results (the remote group's data).
 * MPI_Intercomm_merge of such a pair gives an intracommunicator mcoll handles.
 *
 * Phase 1, one world: the world's evens and odds (each group in reversed order) joined by
 * MPI_Intercomm_create; its collectives, then the merged communicator's layout and
 * collectives. Its context must come from the world's node table (every process is in this
 * world).
 *
 * Phase 2 (--spawn S, Open MPI: Debian's MPICH 4.0 cannot spawn here): the world spawns S
 * processes of this program, a second world; the intercommunicator's collectives, then
 * twice a merged communicator of both worlds. mcoll must find its nodes by communicating (no
 * process has the other world in its table) and, with virtual nodes (MCOLL_VNODE_SIZE=k),
 * must not put processes of different worlds on one virtual node because their world ranks
 * share a k-block. The second merged communicator takes over the first one's node region
 * (MCOLL_SHM_POOL > 0).
 *
 * Phase 3 (--sessions, MPI-4: MPICH here): no MPI_Init, so no MPI_COMM_WORLD; communicators
 * from the process set mpi://WORLD (sessions()). Virtual nodes from the process-set ranks.
 *
 * Layouts are computed here from MPI_Comm_split_type on the native MPI, each process's world
 * and world rank, and k; values from a generator of global ids (the parents' world ranks, then
 * the children's after them). */
#include "layout_check.h"
#include "mcoll.h"
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int wrank, wsize, failures, child;

static void fail(const char *what, long got, long want)
{
    if (failures++ < 12)
        printf("FAIL %s rank %d: %s: got %ld, expected %ld\n", child ? "child" : "parent", wrank, what, got,
               want);
}

static void expect(const char *what, long got, long want)
{
    if (got != want) fail(what, got, want);
}

static double gen(int g, long j, int s) { return (double)((g * 131 + j * 7 + s * 17) % 1009); }

/* One group of an intercommunicator: the global ids of its processes in local rank order. */
typedef struct {
    int n, *gid;
} group_t;

static group_t group_of(int n, int first, int step)
{
    group_t g = {n, malloc(sizeof(int) * (size_t)n)};
    for (int i = 0; i < n; i++) g.gid[i] = first + i * step;
    return g;
}

/* The root side of a rooted intercommunicator collective: MPI_ROOT at the root, MPI_PROC_NULL
 * at the rest of its group; the other group names the root's rank in the root's group. */
static int root_arg(int in_root_group, int me, int root)
{
    if (!in_root_group) return root;
    return me == root ? MPI_ROOT : MPI_PROC_NULL;
}

/* Allreduce (two sizes), allgather, bcast and reduce from either group, and a barrier on an
 * intercommunicator: every result is the remote group's. `low` tells this process's group
 * (the one whose roots go first). */
static void check_inter(MPI_Comm inter, const group_t *mine, const group_t *remote, int low, int salt)
{
    int me;
    char what[128];
    MPI_Comm_rank(inter, &me);
    mcoll_comm_info_t info;
    expect("mcoll_comm_info on an intercommunicator", mcoll_comm_info(inter, &info), MPI_ERR_COMM);
    long ns[] = {3, 20000};
    for (int t = 0; t < 2; t++) {
        long n = ns[t];
        double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
        for (long j = 0; j < n; j++) x[j] = gen(mine->gid[me], j, salt + t);
        MPI_Allreduce(x, y, (int)n, MPI_DOUBLE, MPI_SUM, inter);
        for (long j = 0; j < n; j++) {
            double want = 0;
            for (int i = 0; i < remote->n; i++) want += gen(remote->gid[i], j, salt + t);
            if (y[j] != want) {
                snprintf(what, sizeof what, "intercommunicator allreduce of %ld, element %ld", n, j);
                fail(what, (long)y[j], (long)want);
                break;
            }
        }
        for (int side = 0; side < 2; side++) { /* the low group's root first, then the high's */
            int in_root = (side == 0) == low, rsize = in_root ? mine->n : remote->n;
            int root = (salt + side) % rsize, rgid = in_root ? mine->gid[root] : remote->gid[root];
            for (long j = 0; j < n; j++) x[j] = in_root && me == root ? gen(rgid, j, salt + 7) : -1;
            MPI_Bcast(x, (int)n, MPI_DOUBLE, root_arg(in_root, me, root), inter);
            for (long j = 0; j < n && !in_root; j++)
                if (x[j] != gen(rgid, j, salt + 7)) {
                    snprintf(what, sizeof what, "intercommunicator bcast of %ld from %d, element %ld", n, rgid, j);
                    fail(what, (long)x[j], (long)gen(rgid, j, salt + 7));
                    break;
                }
            for (long j = 0; j < n; j++) x[j] = gen(mine->gid[me], j, salt + 9), y[j] = -1;
            MPI_Reduce(x, y, (int)n, MPI_DOUBLE, MPI_SUM, root_arg(in_root, me, root), inter);
            for (long j = 0; j < n && in_root && me == root; j++) {
                double want = 0;
                for (int i = 0; i < remote->n; i++) want += gen(remote->gid[i], j, salt + 9);
                if (y[j] != want) {
                    snprintf(what, sizeof what, "intercommunicator reduce of %ld, element %ld", n, j);
                    fail(what, (long)y[j], (long)want);
                    break;
                }
            }
        }
        free(x);
        free(y);
    }
    int v = 1000 * salt + mine->gid[me], *all = malloc(sizeof(int) * (size_t)remote->n);
    MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, inter);
    for (int i = 0; i < remote->n; i++)
        if (all[i] != 1000 * salt + remote->gid[i]) {
            snprintf(what, sizeof what, "intercommunicator allgather, block %d", i);
            fail(what, all[i], 1000 * salt + remote->gid[i]);
            break;
        }
    free(all);
    MPI_Barrier(inter);
}

/* The layout mcoll must report for an intracommunicator: a node is the processes on one
 * shared-memory node (MPI_Comm_split_type, native); a virtual node, those of them of one world
 * with the same world rank / k. */
static void check_layout(MPI_Comm comm, const char *name, int by_table)
{
    const char *v = getenv("MCOLL_VNODE_SIZE");
    int k = v ? atoi(v) : 0, p, r, key[3];
    MPI_Comm shm;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &shm);
    key[0] = r;
    PMPI_Allreduce(MPI_IN_PLACE, &key[0], 1, MPI_INT, MPI_MIN, shm);
    PMPI_Comm_free(&shm);
    key[1] = k > 0 ? child : 0; /* one shared-memory node is one node, whatever the worlds */
    key[2] = k > 0 ? wrank / k : 0;
    int *keys = malloc(sizeof(int) * 3 * (size_t)p);
    PMPI_Allgather(key, 3, MPI_INT, keys, 3, MPI_INT, comm);
    check_new_context(comm, name, keys, 3, by_table, expect);
    free(keys);
}

/* Collectives on an intracommunicator whose rank i has global id gid[i]. */
static void check_intra(MPI_Comm comm, const int *gid, const char *name, int salt)
{
    int p, r;
    char what[128];
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    long ns[] = {1, 300, 65536};
    for (int t = 0; t < 3; t++) {
        long n = ns[t];
        double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
        for (long j = 0; j < n; j++) x[j] = gen(gid[r], j, salt + t);
        MPI_Allreduce(x, y, (int)n, MPI_DOUBLE, MPI_SUM, comm);
        for (long j = 0; j < n; j++) {
            double want = 0;
            for (int i = 0; i < p; i++) want += gen(gid[i], j, salt + t);
            if (y[j] != want) {
                snprintf(what, sizeof what, "%s: allreduce of %ld, element %ld", name, n, j);
                fail(what, (long)y[j], (long)want);
                break;
            }
        }
        int root = (salt + t) % p;
        for (long j = 0; j < n; j++) x[j] = r == root ? gen(gid[root], j, salt + 5) : -1;
        MPI_Bcast(x, (int)n, MPI_DOUBLE, root, comm);
        for (long j = 0; j < n; j++)
            if (x[j] != gen(gid[root], j, salt + 5)) {
                snprintf(what, sizeof what, "%s: bcast of %ld from %d, element %ld", name, n, root, j);
                fail(what, (long)x[j], (long)gen(gid[root], j, salt + 5));
                break;
            }
        for (long j = 0; j < n; j++) x[j] = gen(gid[r], j, salt + 6), y[j] = -1;
        MPI_Reduce(x, y, (int)n, MPI_DOUBLE, MPI_MAX, root, comm);
        for (long j = 0; j < n && r == root; j++) {
            double want = 0;
            for (int i = 0; i < p; i++)
                if (gen(gid[i], j, salt + 6) > want) want = gen(gid[i], j, salt + 6);
            if (y[j] != want) {
                snprintf(what, sizeof what, "%s: reduce of %ld to %d, element %ld", name, n, root, j);
                fail(what, (long)y[j], (long)want);
                break;
            }
        }
        free(x);
        free(y);
    }
    int v = 1000 * salt + gid[r], *all = malloc(sizeof(int) * (size_t)p);
    MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, comm);
    for (int i = 0; i < p; i++)
        if (all[i] != 1000 * salt + gid[i]) {
            snprintf(what, sizeof what, "%s: allgather, block %d", name, i);
            fail(what, all[i], 1000 * salt + gid[i]);
            break;
        }
    free(all);
    MPI_Barrier(comm);
}

/* A communicator new to mcoll: its context made (from the table, or not), its layout, collectives. */
static void check_fresh(MPI_Comm merged, const int *gid, const char *name, int by_table, int salt)
{
    check_layout(merged, name, by_table);
    check_intra(merged, gid, name, salt);
}

/* Phase 1: evens and odds of this world, each group in reversed world order. */
static void one_world(void)
{
    int color = wrank % 2, nodd = wsize / 2, neven = wsize - nodd;
    /* local rank 0 of each group is its highest world rank */
    int top_even = 2 * (neven - 1), top_odd = 2 * nodd - 1;
    group_t even = group_of(neven, top_even, -2), odd = group_of(nodd, top_odd, -2);
    MPI_Comm local, inter, merged;
    MPI_Comm_split(MPI_COMM_WORLD, color, -wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? top_even : top_odd, 7, &inter);
    check_inter(inter, color ? &odd : &even, color ? &even : &odd, !color, 1);
    MPI_Intercomm_merge(inter, color, &merged); /* evens first */
    int *gid = malloc(sizeof(int) * (size_t)wsize);
    for (int i = 0; i < neven; i++) gid[i] = even.gid[i];
    for (int i = 0; i < nodd; i++) gid[neven + i] = odd.gid[i];
    check_fresh(merged, gid, "one world, merged", 1, 2);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    free(gid);
    free(even.gid);
    free(odd.gid);
}

/* Phase 2: parents (this world, global ids 0..P-1) and children (P..P+S-1); the children's
 * failures are added to parent 0's. */
static void two_worlds(MPI_Comm inter)
{
    int nl, nr, P, S;
    MPI_Comm_size(inter, &nl);
    MPI_Comm_remote_size(inter, &nr);
    P = child ? nr : nl;
    S = child ? nl : nr;
    group_t parents = group_of(P, 0, 1), children = group_of(S, P, 1);
    check_inter(inter, child ? &children : &parents, child ? &parents : &children, !child, 3);
    int *gid = malloc(sizeof(int) * (size_t)(P + S));
    for (int i = 0; i < P + S; i++) gid[i] = i;
    const char *pv = getenv("MCOLL_SHM_POOL");
    int pool = pv ? atoi(pv) : 4;
    for (int round = 0; round < 2; round++) {
        MPI_Comm merged;
        mcoll_setup_stats_t a, b;
        char name[64];
        snprintf(name, sizeof name, "two worlds, merged (%s)", round ? "again" : "first");
        MPI_Intercomm_merge(inter, child, &merged); /* parents first */
        mcoll_setup_stats(&a);
        check_fresh(merged, gid, name, 0, 4 + 10 * round);
        mcoll_setup_stats(&b);
        mcoll_comm_info_t info;
        if (mcoll_comm_info(merged, &info) == MPI_SUCCESS && info.local_size > 1) {
            char what[128];
            snprintf(what, sizeof what, "%s: node regions mapped or taken over", name);
            expect(what, (long)(b.regions_created - a.regions_created + b.regions_reused - a.regions_reused), 1);
            snprintf(what, sizeof what, "%s: node regions taken over", name);
            expect(what, (long)(b.regions_reused - a.regions_reused), round && pool > 0);
        }
        if (round == 1) { /* the children's failures to the parents */
            int theirs = child ? failures : 0, sum = 0;
            PMPI_Allreduce(&theirs, &sum, 1, MPI_INT, MPI_SUM, merged);
            if (!child) failures += wrank == 0 ? sum : 0;
        }
        MPI_Comm_free(&merged);
    }
    free(gid);
    free(parents.gid);
    free(children.gid);
}

#if MPI_VERSION >= 4
/* A communicator from a session over the given ranks of the process set mpi://WORLD. */
static MPI_Comm from_pset(MPI_Session ses, MPI_Group world, int n, const int *ranks, const char *tag)
{
    MPI_Group g;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Group_incl(world, n, ranks, &g);
    MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MPI_Group_free(&g);
    return c;
}

/* Phase 3 (--sessions, MPI-4): no MPI_Init; communicators from a session's process set: the
 * whole set, reversed, and again after the first is freed (its node region taken over). No
 * MPI_COMM_WORLD, so no node table: every context is made by communicating, virtual nodes
 * from the process-set ranks. Errors raised through the communicator's handler. Returns the
 * failures over every process. */
static int sessions(void)
{
    MPI_Session ses;
    MPI_Group world;
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ses) != MPI_SUCCESS) {
        fail("MPI_Session_init", 1, 0);
        return failures;
    }
    MPI_Group_from_session_pset(ses, "mpi://WORLD", &world);
    MPI_Group_rank(world, &wrank);
    MPI_Group_size(world, &wsize);
    int *ranks = malloc(sizeof(int) * (size_t)wsize), *gid = malloc(sizeof(int) * (size_t)wsize);
    const char *pv = getenv("MCOLL_SHM_POOL");
    int pool = pv ? atoi(pv) : 4, all = 0;
    for (int round = 0; round < 3; round++) {
        int rev = round == 1;
        for (int i = 0; i < wsize; i++) ranks[i] = gid[i] = rev ? wsize - 1 - i : i;
        char name[64], what[128];
        snprintf(name, sizeof name, "session, %s", rev ? "reversed" : round ? "whole set again" : "whole set");
        mcoll_setup_stats_t a, b;
        mcoll_setup_stats(&a);
        MPI_Comm c = from_pset(ses, world, wsize, ranks, rev ? "mcoll.worlds.reversed" : "mcoll.worlds.set");
        check_fresh(c, gid, name, 0, 20 + round);
        mcoll_setup_stats(&b);
        mcoll_comm_info_t info;
        if (round == 2 && mcoll_comm_info(c, &info) == MPI_SUCCESS && info.local_size > 1) {
            snprintf(what, sizeof what, "%s: node regions taken over", name);
            expect(what, (long)(b.regions_reused - a.regions_reused), pool > 0);
        }
        /* errors: the communicator's handler (MPI_ERRORS_RETURN), the standard's classes */
        int x = 1, y = 0, rc, cls = -1;
        rc = MPI_Bcast(&x, 1, MPI_INT, wsize, c);
        MPI_Error_class(rc, &cls);
        snprintf(what, sizeof what, "%s: bcast from root %d, error class", name, wsize);
        expect(what, cls, MPI_ERR_ROOT);
        rc = MPI_Allreduce(&x, &y, -1, MPI_INT, MPI_SUM, c);
        MPI_Error_class(rc, &cls);
        snprintf(what, sizeof what, "%s: allreduce of -1 elements, error class", name);
        expect(what, cls, MPI_ERR_COUNT);
        if (round == 2) PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, c);
        MPI_Comm_free(&c);
    }
    free(ranks);
    free(gid);
    MPI_Group_free(&world);
    MPI_Session_finalize(&ses);
    return all;
}
#endif

static void on_alarm(int sig)
{
    (void)sig;
    const char m[] = "FAIL watchdog: worlds did not finish\n";
    if (write(1, m, sizeof m - 1) < 0) _exit(2);
    _exit(2);
}

int main(int argc, char **argv)
{
    int spawn = 0, ses = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--spawn") && i + 1 < argc) spawn = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--child")) child = 1;
        else if (!strcmp(argv[i], "--sessions")) ses = 1;
    }
    if (getenv("MCOLL_TEST_WATCHDOG")) {
        signal(SIGALRM, on_alarm);
        alarm((unsigned)atoi(getenv("MCOLL_TEST_WATCHDOG")));
    }
    if (ses) {
#if MPI_VERSION >= 4
        int all = sessions();
        if (!wrank) printf("%s: %d processes, sessions alone\n", all ? "FAILED" : "PASSED", wsize);
        return all != 0;
#else
        printf("FAIL: --sessions needs an MPI-4 library\n");
        return 1;
#endif
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Barrier(MPI_COMM_WORLD); /* the world's context: its node table */
    if (!child && wsize >= 2) one_world();
    if (spawn > 0 || child) {
        MPI_Comm inter;
        if (child) {
            MPI_Comm_get_parent(&inter);
        } else {
            char self[4096];
            ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
            char *args[] = {"--child", NULL};
            self[len > 0 ? len : 0] = 0;
            MPI_Comm_spawn(self, args, spawn, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        }
        two_worlds(inter);
        MPI_Comm_disconnect(&inter);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!child && !wrank)
        printf("%s: %d ranks, %d spawned\n", all ? "FAILED" : "PASSED", wsize, spawn);
    MPI_Finalize();
    return all != 0;
}
