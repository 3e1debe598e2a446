/* Built-in neighbor patterns. Every rank generates the same global edge list from a seed
 * and keeps its own edges, so both ends agree on counts, order of duplicated edges and ids.
 * Ids: rank a's values are a pool of ids (shared by several destinations, and repeated
 * inside blocks), so de-duplication has something to remove. */
#include "nb_pattern.h"
#include <stdlib.h>
#include <string.h>

typedef struct edge {
    int a, b, n;
    int64_t id0; /* ids: pool(a, id0 + j) */
} edge_t;

typedef struct gen {
    edge_t *e;
    int n, cap;
    uint64_t s;
    int pool; /* distinct values per rank */
} gen_t;

static uint64_t rnd(gen_t *g)
{
    g->s ^= g->s << 13, g->s ^= g->s >> 7, g->s ^= g->s << 17;
    return g->s;
}

static int64_t id_of(const gen_t *g, int a, int64_t k)
{
    return (int64_t)a * 100000 + (k * 7) % g->pool;
}

static void add(gen_t *g, int a, int b, int n)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->e = realloc(g->e, sizeof(edge_t) * (size_t)g->cap);
    }
    g->e[g->n++] = (edge_t){a, b, n, (int64_t)(rnd(g) % 1000)};
}

/* Turns the global list into rank me's pattern. gap: elements left between blocks;
 * reverse: displacements in decreasing order (blocks need not be in neighbor order). */
static int finish(gen_t *g, int me, int gap, int reverse, nb_pattern_t *p)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < g->n; i++) p->outdeg += g->e[i].a == me, p->indeg += g->e[i].b == me;
    size_t o = (size_t)p->outdeg + 1, in = (size_t)p->indeg + 1;
    p->dests = malloc(sizeof(int) * o), p->scounts = malloc(sizeof(int) * o),
    p->sdispls = malloc(sizeof(int) * o);
    p->sources = malloc(sizeof(int) * in), p->rcounts = malloc(sizeof(int) * in),
    p->rdispls = malloc(sizeof(int) * in);
    int so = 0, ro = 0, ns = 0, nr = 0, stot = 0, rtot = 0;
    for (int i = 0; i < g->n; i++) {
        if (g->e[i].a == me) stot += g->e[i].n;
        if (g->e[i].b == me) rtot += g->e[i].n;
    }
    p->sidx = malloc(sizeof(int64_t) * (size_t)(stot + 1));
    p->ridx = malloc(sizeof(int64_t) * (size_t)(rtot + 1));
    int sk = 0, rk = 0;
    for (int i = 0; i < g->n; i++) {
        const edge_t *e = &g->e[i];
        if (e->a == me) {
            p->dests[ns] = e->b, p->scounts[ns] = e->n, p->sdispls[ns] = so;
            so += e->n + gap, ns++;
            for (int j = 0; j < e->n; j++) p->sidx[sk++] = id_of(g, e->a, e->id0 + j);
        }
        if (e->b == me) {
            p->sources[nr] = e->a, p->rcounts[nr] = e->n, p->rdispls[nr] = ro;
            ro += e->n + gap, nr++;
            for (int j = 0; j < e->n; j++) p->ridx[rk++] = id_of(g, e->a, e->id0 + j);
        }
    }
    if (reverse) {
        for (int i = 0; i < ns; i++) p->sdispls[i] = so - p->sdispls[i] - p->scounts[i] - gap;
        for (int i = 0; i < nr; i++) p->rdispls[i] = ro - p->rdispls[i] - p->rcounts[i] - gap;
    }
    p->slen = so + 1, p->rlen = ro + 1;
    free(g->e);
    return 0;
}

static void sizes(MPI_Comm comm, int *p, int *me)
{
    MPI_Comm_size(comm, p);
    MPI_Comm_rank(comm, me);
}

static int ring(MPI_Comm comm, const char *arg, nb_pattern_t *pt)
{
    int p, me;
    sizes(comm, &p, &me);
    gen_t g = {.s = 0x1234567, .pool = 5};
    for (int a = 0; a < p; a++) {
        add(&g, a, (a + 1) % p, 3);
        add(&g, a, (a + p - 1) % p, 3);
    }
    return finish(&g, me, 1, 0, pt);
}

/* Random graph, mostly towards nearby ranks (locality), with zero counts, self-loops and
 * duplicated edges. */
static int random_local(MPI_Comm comm, const char *arg, nb_pattern_t *pt)
{
    int p, me;
    sizes(comm, &p, &me);
    gen_t g = {.s = 0x9e3779b97f4a7c15ull, .pool = 6};
    for (int a = 0; a < p; a++) {
        int deg = 1 + (int)(rnd(&g) % 5);
        for (int k = 0; k < deg; k++) {
            int far = rnd(&g) % 3 == 0;
            int b = far ? (int)(rnd(&g) % (uint64_t)p) : (a + (int)(rnd(&g) % 3)) % p;
            int n = (int)(rnd(&g) % 6); /* 0..5 elements: zero counts happen */
            add(&g, a, b, n);
            if (rnd(&g) % 4 == 0) add(&g, a, b, n + 1); /* duplicated neighbor */
        }
    }
    return finish(&g, me, 2, 1, pt);
}

static int empty(MPI_Comm comm, const char *arg, nb_pattern_t *pt)
{
    int p, me;
    sizes(comm, &p, &me);
    gen_t g = {.s = 1, .pool = 3};
    return finish(&g, me, 0, 0, pt);
}

/* Only rank 0 sends (to everyone, itself included): empty lists elsewhere. */
static int one_to_all(MPI_Comm comm, const char *arg, nb_pattern_t *pt)
{
    int p, me;
    sizes(comm, &p, &me);
    gen_t g = {.s = 77, .pool = 4};
    for (int b = 0; b < p; b++) add(&g, 0, b, 4);
    return finish(&g, me, 1, 0, pt);
}

static int self_only(MPI_Comm comm, const char *arg, nb_pattern_t *pt)
{
    int p, me;
    sizes(comm, &p, &me);
    gen_t g = {.s = 5, .pool = 3};
    for (int a = 0; a < p; a++) add(&g, a, a, 5), add(&g, a, a, 2);
    return finish(&g, me, 1, 0, pt);
}

/* Everyone to everyone twice, the same few values: duplicates inside and across regions. */
static int dense_dup(MPI_Comm comm, const char *arg, nb_pattern_t *pt)
{
    int p, me;
    sizes(comm, &p, &me);
    gen_t g = {.s = 99, .pool = 8};
    for (int a = 0; a < p; a++)
        for (int b = 0; b < p; b++) add(&g, a, b, 6), add(&g, a, b, 3);
    return finish(&g, me, 0, 0, pt);
}

/* Larger blocks (multi-kilobyte messages). */
static int large(MPI_Comm comm, const char *arg, nb_pattern_t *pt)
{
    int p, me;
    sizes(comm, &p, &me);
    gen_t g = {.s = 4242, .pool = 3000};
    for (int a = 0; a < p; a++) {
        add(&g, a, (a + 1) % p, 2000);
        add(&g, a, (a + p / 2) % p, 1500);
    }
    return finish(&g, me, 3, 0, pt);
}

const nb_workload_t nb_builtin[] = {
    {"ring", ring, ""},           {"random_local", random_local, ""},
    {"empty", empty, ""},         {"one_to_all", one_to_all, ""},
    {"self_only", self_only, ""}, {"dense_dup", dense_dup, ""},
    {"large", large, ""},
};
const int nb_nbuiltin = (int)(sizeof nb_builtin / sizeof nb_builtin[0]);

void nb_pattern_free(nb_pattern_t *p)
{
    free(p->sources), free(p->dests), free(p->rcounts), free(p->rdispls);
    free(p->scounts), free(p->sdispls), free(p->sidx), free(p->ridx);
    memset(p, 0, sizeof *p);
}
