/* A communicator's set-up under mcoll: its view of the nodes, and its node region.
 *
 *   comm_setup [--rounds N]
 *
 * mcoll learns which node every process of MPI_COMM_WORLD is on from the first communicator
 * congruent with the world whose context it builds by communicating, and later communicators
 * take their nodes from that table without communication; a freed communicator's node region
 * waits in a pool for the next communicator with the same local ranks (MCOLL_SHM_POOL).
 *
 * Layout: communicators of many shapes (reordered, halves, thirds, a group, the shared-memory
 * split, a single rank), some made before the world's table is known and the rest after; for
 * each, mcoll_comm_info must equal what this program computes from MPI_Comm_split_type on the
 * world and MCOLL_VNODE_SIZE (virtual nodes of k consecutive world ranks), and collectives
 * on it (allreduce 8 B and 64 KiB, bcast from a rotating root, allgather in rank order) must
 * give the generator's values. The contexts made after the table is known must have used it.
 *
 * Pool (one node, every local rank in each communicator): duplicates of the world and reversed
 * copies, made, used and freed in turn, then two live at once with a third made beside them:
 * with MCOLL_SHM_POOL > 1 each shape maps one region and the rest take over a freed one, with
 * MCOLL_SHM_POOL=0 every communicator maps its own; results checked throughout, so a region
 * given to the wrong ranks, in the wrong order, or to two live communicators shows. */
#include "layout_check.h"
#include "mcoll.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, wsize, failures;
static int *wnode; /* [wsize] this program's node key of every world rank */

static void fail(const char *fmt, const char *what, long got, long want)
{
    if (failures++ < 12) {
        printf("FAIL rank %d: %s: ", wrank, what);
        printf(fmt, got, want);
        printf("\n");
    }
}

static void expect(const char *what, long got, long want)
{
    if (got != want) fail("got %ld, expected %ld", what, got, want);
}

/* Node key of every world rank: the lowest world rank on the same shared-memory node and, with
 * virtual nodes of k, in the same k-block; computed with the native MPI. */
static void world_nodes(void)
{
    const char *v = getenv("MCOLL_VNODE_SIZE");
    int k = v ? atoi(v) : 0, low = wrank;
    MPI_Comm shm;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wrank, MPI_INFO_NULL, &shm);
    PMPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_INT, MPI_MIN, shm);
    PMPI_Comm_free(&shm);
    int *lows = malloc(sizeof(int) * (size_t)wsize);
    PMPI_Allgather(&low, 1, MPI_INT, lows, 1, MPI_INT, MPI_COMM_WORLD);
    wnode = malloc(sizeof(int) * (size_t)wsize);
    for (int w = 0; w < wsize; w++) {
        wnode[w] = w;
        for (int u = 0; u < w; u++)
            if (lows[u] == lows[w] && (k <= 0 || u / k == w / k)) {
                wnode[w] = u;
                break;
            }
    }
    free(lows);
}

/* Expected view of comm from wnode, compared with mcoll_comm_info. */
static void check_layout(MPI_Comm comm, const char *name, int by_table)
{
    int p;
    MPI_Comm_size(comm, &p);
    MPI_Group g, wg;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *ranks = malloc(sizeof(int) * (size_t)p), *w = malloc(sizeof(int) * (size_t)p);
    for (int i = 0; i < p; i++) ranks[i] = i;
    PMPI_Group_translate_ranks(g, p, ranks, wg, w);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    for (int i = 0; i < p; i++) ranks[i] = wnode[w[i]]; /* the node key of every comm rank */
    check_new_context(comm, name, ranks, 1, by_table, expect);
    free(ranks);
    free(w);
}

/* Collectives on comm with values from the generator (comm rank i, element j, call salt s). */
static double gen(int i, long j, int s) { return (double)((i * 131 + j * 7 + s * 17) % 1009); }

static void check_colls(MPI_Comm comm, const char *name, int salt)
{
    int p, r;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    char what[96];
    long ns[] = {1, 8192};
    for (int t = 0; t < 2; t++) {
        long n = ns[t];
        double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
        for (long j = 0; j < n; j++) x[j] = gen(r, j, salt);
        MPI_Allreduce(x, y, (int)n, MPI_DOUBLE, MPI_SUM, comm);
        for (long j = 0; j < n; j++) {
            double want = 0;
            for (int i = 0; i < p; i++) want += gen(i, j, salt);
            if (y[j] != want) {
                snprintf(what, sizeof what, "%s: allreduce of %ld, element %ld", name, n, j);
                fail("got %ld, expected %ld", what, (long)y[j], (long)want);
                break;
            }
        }
        int root = (salt + t) % p;
        for (long j = 0; j < n; j++) x[j] = r == root ? gen(root, j, salt + 1) : -1;
        MPI_Bcast(x, (int)n, MPI_DOUBLE, root, comm);
        for (long j = 0; j < n; j++)
            if (x[j] != gen(root, j, salt + 1)) {
                snprintf(what, sizeof what, "%s: bcast of %ld from %d, element %ld", name, n, root, j);
                fail("got %ld, expected %ld", what, (long)x[j], (long)gen(root, j, salt + 1));
                break;
            }
        free(x);
        free(y);
    }
    int mine = 1000 * salt + r, *all = malloc(sizeof(int) * (size_t)p);
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, comm);
    for (int i = 0; i < p; i++)
        if (all[i] != 1000 * salt + i) {
            snprintf(what, sizeof what, "%s: allgather, block %d", name, i);
            fail("got %ld, expected %ld", what, all[i], 1000 * salt + i);
            break;
        }
    free(all);
}

/* The shapes: index s, made from the world (collective over it: every rank takes part). */
#define NSHAPES 8
static const char *shape_name[NSHAPES] = {"reversed", "halves", "thirds reversed", "group of evens",
                                          "shared-memory split", "self", "dup", "rotated"};
static MPI_Comm make_shape(int s)
{
    MPI_Comm c = MPI_COMM_NULL;
    switch (s) {
    case 0: MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &c); break;
    case 1: MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2, wrank, &c); break;
    case 2: MPI_Comm_split(MPI_COMM_WORLD, wrank % 3, -wrank, &c); break;
    case 3: {
        MPI_Group wg, g;
        int n = (wsize + 1) / 2, *ev = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++) ev[i] = 2 * i;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_incl(wg, n, ev, &g);
        MPI_Comm_create(MPI_COMM_WORLD, g, &c); /* MPI_COMM_NULL on the odd ranks */
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
        free(ev);
        break;
    }
    case 4: MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wrank, MPI_INFO_NULL, &c); break;
    case 5: MPI_Comm_dup(MPI_COMM_SELF, &c); break;
    case 6: MPI_Comm_dup(MPI_COMM_WORLD, &c); break;
    case 7: MPI_Comm_split(MPI_COMM_WORLD, 0, (wrank + 1) % wsize, &c); break;
    }
    return c;
}

/* Whether mcoll knows the world's nodes: from the first context of a communicator congruent
 * with the world (this program's own account, to check mcoll's). */
static int table_known;

/* Checks comm's layout and collectives; its context (made by the layout check) must have come
 * from the table exactly when the table was known. */
static void check_comm(MPI_Comm c, const char *shape, int salt)
{
    char name[64];
    int same = MPI_UNEQUAL;
    snprintf(name, sizeof name, "%s (%s)", shape, table_known ? "by table" : "collective");
    check_layout(c, name, table_known);
    PMPI_Comm_compare(c, MPI_COMM_WORLD, &same);
    if (same == MPI_IDENT || same == MPI_CONGRUENT) table_known = 1;
    check_colls(c, name, salt);
}

/* Every shape but the world's duplicate (first == 0: it would teach the table at once). */
static void layout_phase(int first, int salt)
{
    for (int s = first; s < NSHAPES; s++) {
        if (first == 0 && s == 6) continue;
        MPI_Comm c = make_shape(s);
        if (c == MPI_COMM_NULL) continue;
        check_comm(c, shape_name[s], salt + s);
        MPI_Comm_free(&c);
    }
}

/* Pool: communicators of two orders, one after another, then two live with a third beside. */
static void pool_phase(int rounds, int pool)
{
    mcoll_setup_stats_t a, b;
    mcoll_setup_stats(&a);
    for (int i = 0; i < rounds; i++) {
        MPI_Comm c = make_shape(i % 2 ? 0 : 6);
        check_colls(c, i % 2 ? "pool: reversed" : "pool: dup", i);
        MPI_Comm_free(&c);
    }
    mcoll_setup_stats(&b);
    long created = (long)(b.regions_created - a.regions_created), reused = (long)(b.regions_reused - a.regions_reused);
    expect("pool: regions mapped and taken over", created + reused, rounds);
    if (pool >= 2) { /* the world's own and one per order at most; the rest taken over */
        if (created > 2) fail("got %ld, expected at most %ld", "pool: regions mapped", created, 2);
    } else if (pool == 0) {
        expect("pool: regions taken over with MCOLL_SHM_POOL=0", reused, 0);
    }
    /* two live duplicates, and a third made while they live: each keeps its own region, and
     * calls on the three interleave */
    MPI_Comm x = make_shape(6), y = make_shape(6);
    check_colls(x, "pool: first of two live", 1);
    check_colls(y, "pool: second of two live", 2);
    MPI_Comm_free(&x);
    MPI_Comm z = make_shape(6);
    for (int i = 0; i < rounds; i++) {
        check_colls(i % 2 ? y : z, i % 2 ? "pool: live beside a new one" : "pool: new one beside a live one", 10 + i);
    }
    MPI_Comm_free(&y);
    MPI_Comm_free(&z);
}

int main(int argc, char **argv)
{
    int rounds = 20;
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    world_nodes();
    const char *pv = getenv("MCOLL_SHM_POOL");
    int pool = pv ? atoi(pv) : 4;

    /* first the collective way (until a shape congruent with the world teaches the table:
     * at one rank, or the shared-memory split on one node), then the world, then by table */
    layout_phase(0, 0);
    check_comm(MPI_COMM_WORLD, "world", 3);
    layout_phase(0, 100);
    layout_phase(6, 200);

    mcoll_comm_info_t info;
    mcoll_comm_info(MPI_COMM_WORLD, &info);
    if (info.nnodes == 1 && wsize > 1) pool_phase(rounds, pool);

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mcoll_setup_stats_t st;
    mcoll_setup_stats(&st);
    if (!wrank)
        printf("%s: %d ranks, %d nodes; rank 0: %llu contexts (%llu by table), regions %llu mapped, %llu "
               "taken over\n",
               all ? "FAILED" : "PASSED", wsize, info.nnodes, (unsigned long long)st.contexts,
               (unsigned long long)st.contexts_by_table, (unsigned long long)st.regions_created,
               (unsigned long long)st.regions_reused);
    free(wnode);
    MPI_Finalize();
    return all != 0;
}
