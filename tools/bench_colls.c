/* The runner table: how each collective is called, how big its buffers are and which bytes
 * of its output are defined on each rank. native = 1 calls PMPI_* (the MPI library itself),
 * native = 0 calls MPI_* (interposed by mcoll). Both use the same buffers. */
#include "bench.h"
#include <string.h>

#define CALL(native, fn, ...) ((native) ? P##fn(__VA_ARGS__) : fn(__VA_ARGS__))
#define W MPI_COMM_WORLD
#define SUM MPI_SUM

static int c_barrier(int n, const bench_call_t *c) { (void)c; return CALL(n, MPI_Barrier, W); }
static int c_bcast(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Bcast, c->rbuf, c->count, c->dt, c->root, W);
}
static int c_reduce(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Reduce, c->sbuf, c->rbuf, c->count, c->dt, SUM, c->root, W);
}
static int c_allreduce(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Allreduce, c->sbuf, c->rbuf, c->count, c->dt, SUM, W);
}
static int c_reduce_scatter(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Reduce_scatter, c->sbuf, c->rbuf, c->counts, c->dt, SUM, W);
}
static int c_reduce_scatter_block(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Reduce_scatter_block, c->sbuf, c->rbuf, c->count, c->dt, SUM, W);
}
static int c_allgather(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Allgather, c->sbuf, c->count, c->dt, c->rbuf, c->count, c->dt, W);
}
static int c_allgatherv(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Allgatherv, c->sbuf, c->count, c->dt, c->rbuf, c->counts, c->displs, c->dt, W);
}
static int c_gather(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Gather, c->sbuf, c->count, c->dt, c->rbuf, c->count, c->dt, c->root, W);
}
static int c_gatherv(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Gatherv, c->sbuf, c->count, c->dt, c->rbuf, c->counts, c->displs, c->dt,
                c->root, W);
}
static int c_scatter(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Scatter, c->sbuf, c->count, c->dt, c->rbuf, c->count, c->dt, c->root, W);
}
static int c_scatterv(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Scatterv, c->sbuf, c->counts, c->displs, c->dt, c->rbuf, c->count, c->dt,
                c->root, W);
}
static int c_alltoall(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Alltoall, c->sbuf, c->count, c->dt, c->rbuf, c->count, c->dt, W);
}
static int c_alltoallv(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Alltoallv, c->sbuf, c->counts, c->displs, c->dt, c->rbuf, c->counts,
                c->displs, c->dt, W);
}
static int c_scan(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Scan, c->sbuf, c->rbuf, c->count, c->dt, SUM, W);
}
static int c_exscan(int n, const bench_call_t *c)
{
    return CALL(n, MPI_Exscan, c->sbuf, c->rbuf, c->count, c->dt, SUM, W);
}

/* Defined output bytes on this rank (MPI leaves the rest undefined). */
static size_t block(const bench_call_t *c) { return (size_t)c->count * c->elem; }
static size_t k_none(const bench_call_t *c) { (void)c; return 0; }
static size_t k_block(const bench_call_t *c) { return block(c); }
static size_t k_all(const bench_call_t *c) { return block(c) * (size_t)c->p; }
static size_t k_root_block(const bench_call_t *c) { return c->rank == c->root ? block(c) : 0; }
static size_t k_root_all(const bench_call_t *c) { return c->rank == c->root ? k_all(c) : 0; }
static size_t k_not_first(const bench_call_t *c) { return c->rank ? block(c) : 0; }

static const bench_coll_t table[] = {
    {"barrier", 0, 0, 0, 0, 0, c_barrier, k_none},
    {"bcast", 0, 1, 0, 1, 1, c_bcast, k_block},
    {"reduce", 1, 1, 1, 1, 0, c_reduce, k_root_block},
    {"allreduce", 1, 0, 1, 1, 0, c_allreduce, k_block},
    {"reduce_scatter", 1, 0, BENCH_P, 1, 0, c_reduce_scatter, k_block},
    {"reduce_scatter_block", 1, 0, BENCH_P, 1, 0, c_reduce_scatter_block, k_block},
    {"allgather", 0, 0, 1, BENCH_P, 0, c_allgather, k_all},
    {"allgatherv", 0, 0, 1, BENCH_P, 0, c_allgatherv, k_all},
    {"gather", 0, 1, 1, BENCH_P, 0, c_gather, k_root_all},
    {"gatherv", 0, 1, 1, BENCH_P, 0, c_gatherv, k_root_all},
    {"scatter", 0, 1, BENCH_P, 1, 0, c_scatter, k_block},
    {"scatterv", 0, 1, BENCH_P, 1, 0, c_scatterv, k_block},
    {"alltoall", 0, 0, BENCH_P, BENCH_P, 0, c_alltoall, k_all},
    {"alltoallv", 0, 0, BENCH_P, BENCH_P, 0, c_alltoallv, k_all},
    {"scan", 1, 0, 1, 1, 0, c_scan, k_block},
    {"exscan", 1, 0, 1, 1, 0, c_exscan, k_not_first},
};
#define NCOLL ((int)(sizeof table / sizeof table[0]))

int bench_coll_count(void) { return NCOLL; }
const bench_coll_t *bench_coll_at(int i) { return i >= 0 && i < NCOLL ? &table[i] : NULL; }

int bench_coll_index(const char *name)
{
    for (int i = 0; i < NCOLL; i++)
        if (!strcmp(table[i].name, name)) return i;
    return -1;
}

static size_t blocks(int b, size_t block, int p) { return b == BENCH_P ? block * (size_t)p : (size_t)b * block; }
size_t bench_sbytes(const bench_coll_t *bc, size_t block, int p) { return blocks(bc->sblocks, block, p); }
size_t bench_rbytes(const bench_coll_t *bc, size_t block, int p) { return blocks(bc->rblocks, block, p); }

/* Small integers: every partial float sum is exact, so any reduction order gives the same
 * bytes, and a rank-dependent pattern catches misplaced blocks. */
static void fill(char *buf, size_t bytes, const bench_call_t *c)
{
    if (c->elem == sizeof(float)) {
        float *f = (float *)buf;
        for (size_t i = 0; i < bytes / sizeof(float); i++) f[i] = (float)((c->rank * 5 + i) % 13);
        return;
    }
    for (size_t i = 0; i < bytes; i++) buf[i] = (char)(c->rank * 37 + i * 7 + (i >> 8) + 1);
}

void bench_fill_inputs(const bench_coll_t *bc, const bench_call_t *c)
{
    size_t blk = block(c);
    if (bc->inout) {
        if (c->rank == c->root) fill(c->rbuf, bench_rbytes(bc, blk, c->p), c);
        return;
    }
    fill(c->sbuf, bench_sbytes(bc, blk, c->p), c);
}

void bench_poison_output(const bench_coll_t *bc, const bench_call_t *c)
{
    if (bc->inout && c->rank == c->root) return;
    memset(c->rbuf, 0xA5, bench_rbytes(bc, block(c), c->p));
}
