#include "stats.h"
#include "config.h"
#include "mcoll.h"
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    _Atomic uint64_t calls, handled, fallback, bytes;
    _Atomic uint64_t alg_calls[MC_MAX_ALGS];
} coll_stats_t;

static coll_stats_t st[MC_NCOLL];
static _Thread_local const char *last_alg[MC_NCOLL];

void mc_stats_handled(mc_coll_t c, int alg_index, size_t bytes)
{
    atomic_fetch_add_explicit(&st[c].calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st[c].handled, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st[c].bytes, bytes, memory_order_relaxed);
    if (alg_index >= 0 && alg_index < MC_MAX_ALGS)
        atomic_fetch_add_explicit(&st[c].alg_calls[alg_index], 1, memory_order_relaxed);
}

void mc_stats_fallback(mc_coll_t c, size_t bytes)
{
    atomic_fetch_add_explicit(&st[c].calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st[c].fallback, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st[c].bytes, bytes, memory_order_relaxed);
    last_alg[c] = "pmpi";
}

void mc_stats_set_last(mc_coll_t c, const char *alg) { last_alg[c] = alg; }

const char *mcoll_last_alg(const char *coll)
{
    int c = mc_coll_from_name(coll);
    return c < 0 ? NULL : last_alg[c];
}

int mcoll_stats_get(const char *coll, mcoll_stats_t *out)
{
    int c = mc_coll_from_name(coll);
    if (c < 0 || !out) return MPI_ERR_ARG;
    out->calls = st[c].calls;
    out->handled = st[c].handled;
    out->fallback = st[c].fallback;
    out->bytes = st[c].bytes;
    return MPI_SUCCESS;
}

uint64_t mcoll_stats_alg_calls(const char *coll, const char *alg)
{
    int c = mc_coll_from_name(coll);
    if (c < 0 || !alg) return 0;
    for (int i = 0; i < mc_alg_count(c) && i < MC_MAX_ALGS; i++)
        if (!strcmp(mc_alg_at(c, i)->name, alg)) return st[c].alg_calls[i];
    return 0;
}

void mcoll_stats_reset(void)
{
    for (int c = 0; c < MC_NCOLL; c++) {
        st[c].calls = st[c].handled = st[c].fallback = st[c].bytes = 0;
        for (int i = 0; i < MC_MAX_ALGS; i++) st[c].alg_calls[i] = 0;
    }
}

/* Row layout for the reduction: calls, handled, fallback, bytes, then per-algorithm calls. */
#define ROW (4 + MC_MAX_ALGS)

static void print_table(const uint64_t *sum, int nprocs)
{
    printf("mcoll statistics (sum over %d ranks)\n", nprocs);
    printf("%-22s %10s %10s %10s %14s  %s\n", "collective", "calls", "mcoll", "fallback", "bytes", "algorithms");
    for (int c = 0; c < MC_NCOLL; c++) {
        const uint64_t *r = sum + (size_t)c * ROW;
        if (!r[0]) continue;
        printf("%-22s %10llu %10llu %10llu %14llu ", mc_coll_name(c), (unsigned long long)r[0],
               (unsigned long long)r[1], (unsigned long long)r[2], (unsigned long long)r[3]);
        for (int i = 0; i < mc_alg_count(c) && i < MC_MAX_ALGS; i++)
            if (r[4 + i]) printf(" %s=%llu", mc_alg_at(c, i)->name, (unsigned long long)r[4 + i]);
        printf("\n");
    }
    fflush(stdout);
}

void mc_stats_report(void)
{
    uint64_t mine[MC_NCOLL * ROW], sum[MC_NCOLL * ROW];
    for (int c = 0; c < MC_NCOLL; c++) {
        uint64_t *r = mine + (size_t)c * ROW;
        r[0] = st[c].calls; r[1] = st[c].handled; r[2] = st[c].fallback; r[3] = st[c].bytes;
        for (int i = 0; i < MC_MAX_ALGS; i++) r[4 + i] = st[c].alg_calls[i];
    }
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Reduce(mine, sum, MC_NCOLL * ROW, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) print_table(sum, size);
}
