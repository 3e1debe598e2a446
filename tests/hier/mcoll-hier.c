/* mcoll-hier: inter-node counters of the algorithms that span nodes (see hier_test.h).
 *   mcoll-hier [--alg NAME[,NAME..]]   (default: every registered row)
 * Run with virtual nodes (MCOLL_VNODE_SIZE=k) or on several real nodes; rows whose
 * algorithm needs at least two nodes are skipped (with a note) on one node. */
#include "hier_test.h"
#include "mcoll.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 256
static const hc_row_t *rows[MAX_ROWS];
static int nrows, fails, checks;

void hc_register(const hc_row_t *r, int n)
{
    for (int i = 0; i < n && nrows < MAX_ROWS; i++) rows[nrows++] = &r[i];
}

/* ---------------------------------------------------------------- formula helpers */
int hc_ceil_log2(int x) { return hc_ceil_log(2, x); }

int hc_ceil_log(int base, int x)
{
    int k = 0;
    for (long v = 1; v < x; v *= base) k++;
    return k;
}

size_t hc_part_len(size_t n, int p, int i) { return n / (size_t)p + ((size_t)i < n % (size_t)p); }

int hc_binomial_children(int node, int N, int root)
{
    int v = (node - root + N) % N, k = 0;
    for (int m = 1; m < N; m <<= 1) {
        if (v & m) break;          /* m reached v's lowest set bit: no more children */
        if (v + m < N) k++;
    }
    return k;
}

/* ---------------------------------------------------------------- topology */
static int *node_of, *local_of, *node_size, *rank_of;
static int rank_of_stride;

int hc_rank_of(const hc_case_t *c, int node, int local)
{
    return local < c->Pmax ? rank_of[node * rank_of_stride + local] : -1;
}

static int topo(hc_case_t *c)
{
    mcoll_comm_info_t info;
    if (mcoll_comm_info(c->comm, &info) != MPI_SUCCESS) return -1;
    int me[2] = {info.node, info.local_rank}, *all = malloc(sizeof(int) * 2 * (size_t)info.size);
    free(node_of), free(local_of), free(node_size), free(rank_of);
    node_of = malloc(sizeof(int) * (size_t)info.size);
    local_of = malloc(sizeof(int) * (size_t)info.size);
    node_size = calloc((size_t)info.nnodes, sizeof(int));
    if (!all || !node_of || !local_of || !node_size) return -1;
    PMPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, c->comm);
    for (int r = 0; r < info.size; r++) {
        node_of[r] = all[2 * r], local_of[r] = all[2 * r + 1];
        node_size[node_of[r]]++;
    }
    free(all);
    c->size = info.size, c->rank = info.rank, c->N = info.nnodes, c->n = info.node;
    c->P = info.local_size, c->l = info.local_rank;
    c->Pmin = c->Pmax = node_size[0];
    for (int k = 1; k < c->N; k++) {
        if (node_size[k] < c->Pmin) c->Pmin = node_size[k];
        if (node_size[k] > c->Pmax) c->Pmax = node_size[k];
    }
    rank_of_stride = c->Pmax;
    rank_of = malloc(sizeof(int) * (size_t)c->N * (size_t)c->Pmax);
    if (!rank_of) return -1;
    for (int i = 0; i < c->N * c->Pmax; i++) rank_of[i] = -1;
    for (int r = 0; r < c->size; r++) rank_of[node_of[r] * c->Pmax + local_of[r]] = r;
    c->node_of = node_of, c->local_of = local_of, c->node_size = node_size;
    c->extent = sizeof(int);
    return 0;
}

/* ---------------------------------------------------------------- calls */
static int *sbuf, *rbuf;

static void buffers(const hc_case_t *c)
{
    size_t n = c->count * (size_t)c->size + 1;
    free(sbuf), free(rbuf);
    sbuf = malloc(n * sizeof(int));
    rbuf = malloc(n * sizeof(int));
    if (!sbuf || !rbuf) {
        fprintf(stderr, "mcoll-hier: out of memory\n");
        PMPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t i = 0; i < n; i++) sbuf[i] = (int)(i + (size_t)c->rank);
}

int hc_run_barrier(const hc_case_t *c) { return MPI_Barrier(c->comm); }
int hc_run_bcast(const hc_case_t *c) { return MPI_Bcast(sbuf, (int)c->count, MPI_INT, c->root, c->comm); }
int hc_run_reduce(const hc_case_t *c)
{
    return MPI_Reduce(sbuf, rbuf, (int)c->count, MPI_INT, MPI_SUM, c->root, c->comm);
}
int hc_run_allreduce(const hc_case_t *c)
{
    return MPI_Allreduce(sbuf, rbuf, (int)c->count, MPI_INT, MPI_SUM, c->comm);
}
int hc_run_allgather(const hc_case_t *c)
{
    return MPI_Allgather(sbuf, (int)c->count, MPI_INT, rbuf, (int)c->count, MPI_INT, c->comm);
}
int hc_run_gather(const hc_case_t *c)
{
    return MPI_Gather(sbuf, (int)c->count, MPI_INT, rbuf, (int)c->count, MPI_INT, c->root, c->comm);
}
int hc_run_scatter(const hc_case_t *c)
{
    return MPI_Scatter(sbuf, (int)c->count, MPI_INT, rbuf, (int)c->count, MPI_INT, c->root, c->comm);
}
int hc_run_alltoall(const hc_case_t *c)
{
    return MPI_Alltoall(sbuf, (int)c->count, MPI_INT, rbuf, (int)c->count, MPI_INT, c->comm);
}

/* ---------------------------------------------------------------- checking */
static void check(const hc_row_t *row, const hc_case_t *c, const char *what, uint64_t got, uint64_t want)
{
    checks++;
    if (want == HC_ANY || got == want) return;
    fails++;
    printf("FAIL %s/%s comm=%s N=%d P=%d (node %d, local %d) count=%zu root=%d rank=%d: %s %llu, expected %llu\n",
           row->coll, row->alg, c->comm_name, c->N, c->P, c->n, c->l, c->count, c->root, c->rank, what,
           (unsigned long long)got, (unsigned long long)want);
}

/* One call: returns 1 when the algorithm ran (it may decline where it does not apply). */
static int run_case(const hc_row_t *row, const hc_case_t *c)
{
    mcoll_stats_t st;
    hc_expect_t e;
    PMPI_Barrier(c->comm);
    mcoll_stats_reset();
    int rc = row->run(c);
    mcoll_stats_get(row->coll, &st);
    const char *ran = mcoll_last_alg(row->coll);
    if (rc != MPI_SUCCESS) {
        fails++;
        printf("FAIL %s/%s comm=%s count=%zu rank=%d: MPI error %d\n", row->coll, row->alg, c->comm_name,
               c->count, c->rank, rc);
    }
    if (!ran || strcmp(ran, row->alg)) return 0;
    row->expect(c, &e);
    check(row, c, "inter_msgs", st.inter_msgs, e.msgs);
    check(row, c, "inter_bytes", st.inter_bytes, e.bytes);
    check(row, c, "rounds", st.rounds, e.rounds);
    return 1;
}

static const size_t counts[] = {1, 7, 840, 1001};

static void run_row(const hc_row_t *row, hc_case_t *c)
{
    long ran = 0, calls = 0, g[2];
    if (mcoll_set_alg(row->coll, row->alg) != MPI_SUCCESS) {
        fails++;
        printf("FAIL %s/%s: no such algorithm\n", row->coll, row->alg);
        return;
    }
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        c->count = counts[i];
        int nroots = row->flags & HC_ANY_ROOT ? c->size : 1;
        for (c->root = 0; c->root < nroots; c->root++, calls++) ran += run_case(row, c);
    }
    c->root = 0;
    mcoll_set_alg(row->coll, "auto");
    long mine[2] = {ran, calls};
    PMPI_Allreduce(mine, g, 2, MPI_LONG, MPI_SUM, c->comm);
    if (c->rank == 0 && g[0] != g[1])
        printf("  NOTE %s/%s comm=%s N=%d: ran %ld of %ld calls%s\n", row->coll, row->alg, c->comm_name, c->N,
               g[0], g[1], c->N < 2 ? " (one node)" : "");
}

static int selected(const char *list, const char *alg)
{
    if (!list) return 1;
    size_t n = strlen(alg);
    for (const char *s = list; (s = strstr(s, alg)); s += n)
        if ((s == list || s[-1] == ',') && (s[n] == 0 || s[n] == ',')) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *only = argc > 2 && !strcmp(argv[1], "--alg") ? argv[2] : NULL;
    int wrank;
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm rev;
    PMPI_Comm_split(MPI_COMM_WORLD, 0, -wrank, &rev);
    struct { MPI_Comm comm; const char *name; } comms[] = {{MPI_COMM_WORLD, "world"}, {rev, "reversed"}};
    for (int k = 0; k < 2; k++) {
        hc_case_t c = {.comm = comms[k].comm, .comm_name = comms[k].name};
        if (topo(&c)) {
            fprintf(stderr, "mcoll-hier: topology query failed\n");
            PMPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
            if (counts[i] > c.count) c.count = counts[i];
        buffers(&c);   /* for the largest count */
        for (int i = 0; i < nrows; i++)
            if (selected(only, rows[i]->alg)) run_row(rows[i], &c);
    }
    long mine[2] = {fails, checks}, sum[2];
    PMPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("mcoll-hier: %s rows=%d checks=%ld failures=%ld\n", sum[0] ? "FAILED" : "ALL PASSED", nrows,
               sum[1], sum[0]);
    PMPI_Comm_free(&rev);
    MPI_Finalize();
    return sum[0] != 0;
}
