#include "stats.h"
#include "config.h"
#include "mcoll.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Counters live in per-thread blocks (no locked instruction on the call path); a block is
 * linked into a global list when its thread first counts and is never freed, so a report
 * sums every thread's counts, also those of threads that have exited. Each counter has one
 * writer; readers load them relaxed. */
typedef struct coll_stats {
    _Atomic uint64_t calls, handled, fallback, bytes, dav, syncs;
    _Atomic uint64_t inter_msgs, inter_bytes, rounds, repeats;
    _Atomic uint64_t alg_calls[MC_MAX_ALGS];
} coll_stats_t;

typedef struct stats_block {
    coll_stats_t c[MC_NCOLL];
    struct stats_block *next;
} stats_block_t;

static stats_block_t first_block;      /* the first thread's (usually the only one) */
static _Atomic(stats_block_t *) blocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread stats_block_t *mine;
static _Thread_local const char *last_alg[MC_NCOLL];
static _Thread_local int current = -1;   /* mc_stats_enter */

/* A thread's first count links its block in (out of line: the call path stays short). */
__attribute__((noinline)) static stats_block_t *attach(void)
{
    pthread_mutex_lock(&blocks_lock);
    stats_block_t *b = atomic_load(&blocks) ? calloc(1, sizeof *b) : &first_block;
    if (b) {
        b->next = atomic_load(&blocks);
        atomic_store(&blocks, b);
    }
    pthread_mutex_unlock(&blocks_lock);
    static stats_block_t lost;     /* allocation failed: count somewhere harmless */
    return mine = b ? b : &lost;
}

static inline coll_stats_t *my_stats(mc_coll_t c)
{
    stats_block_t *b = mine;
    if (__builtin_expect(!b, 0)) b = attach();
    return &b->c[c];
}

static inline void bump(_Atomic uint64_t *x, uint64_t v)
{
    atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + v, memory_order_relaxed);
}

void mc_stats_handled(mc_coll_t c, int alg_index, size_t bytes, const char *alg, uint64_t dav,
                      uint64_t syncs)
{
    coll_stats_t *s = my_stats(c);
    bump(&s->calls, 1);
    bump(&s->handled, 1);
    bump(&s->bytes, bytes);
    if (alg_index >= 0 && alg_index < MC_MAX_ALGS) bump(&s->alg_calls[alg_index], 1);
    if (dav) bump(&s->dav, dav);
    if (syncs) bump(&s->syncs, syncs);
    last_alg[c] = alg;
}

void mc_stats_repeat(mc_coll_t c) { bump(&my_stats(c)->repeats, 1); }

void mc_stats_fallback(mc_coll_t c, size_t bytes)
{
    coll_stats_t *s = my_stats(c);
    bump(&s->calls, 1);
    bump(&s->fallback, 1);
    bump(&s->bytes, bytes);
    last_alg[c] = "pmpi";
}

void mc_stats_inter(mc_coll_t c, uint64_t msgs, uint64_t bytes)
{
    coll_stats_t *s = my_stats(current >= 0 ? (mc_coll_t)current : c);
    bump(&s->inter_msgs, msgs);
    bump(&s->inter_bytes, bytes);
}

void mc_stats_rounds(mc_coll_t c, uint64_t rounds)
{
    if (rounds) bump(&my_stats(c)->rounds, rounds);
}

int mc_stats_enter(mc_coll_t c)
{
    int prev = current;
    current = (int)c;
    return prev;
}

void mc_stats_leave(int prev) { current = prev; }

/* Sum over every thread's block of one counter (offset into coll_stats_t). */
static uint64_t total(mc_coll_t c, size_t off)
{
    uint64_t t = 0;
    for (stats_block_t *b = atomic_load(&blocks); b; b = b->next)
        t += atomic_load_explicit((_Atomic uint64_t *)((char *)&b->c[c] + off), memory_order_relaxed);
    return t;
}
#define TOTAL(c, field) total(c, offsetof(coll_stats_t, field))

const char *mcoll_last_alg(const char *coll)
{
    int c = mc_coll_from_name(coll);
    return c < 0 ? NULL : last_alg[c];
}

int mcoll_stats_get(const char *coll, mcoll_stats_t *out)
{
    int c = mc_coll_from_name(coll);
    if (c < 0 || !out) return MPI_ERR_ARG;
    out->calls = TOTAL(c, calls);
    out->handled = TOTAL(c, handled);
    out->fallback = TOTAL(c, fallback);
    out->bytes = TOTAL(c, bytes);
    out->dav = TOTAL(c, dav);
    out->syncs = TOTAL(c, syncs);
    out->inter_msgs = TOTAL(c, inter_msgs);
    out->inter_bytes = TOTAL(c, inter_bytes);
    out->rounds = TOTAL(c, rounds);
    out->repeats = TOTAL(c, repeats);
    return MPI_SUCCESS;
}

uint64_t mcoll_stats_alg_calls(const char *coll, const char *alg)
{
    int c = mc_coll_from_name(coll);
    if (c < 0 || !alg) return 0;
    for (int i = 0; i < mc_alg_count(c) && i < MC_MAX_ALGS; i++)
        if (!strcmp(mc_alg_at(c, i)->name, alg)) return TOTAL(c, alg_calls[i]);
    return 0;
}

void mcoll_stats_reset(void)
{
    /* racy against other threads counting at the same moment, like any reset */
    for (stats_block_t *b = atomic_load(&blocks); b; b = b->next)
        memset(b->c, 0, sizeof b->c);
}

/* Row layout for the reduction: calls, handled, fallback, bytes, dav, syncs, inter_msgs,
 * inter_bytes, rounds, then per-algorithm calls. */
#define NFIX 9
#define ROW (NFIX + MC_MAX_ALGS)

static void print_table(const uint64_t *sum, const char *whose)
{
    printf("mcoll statistics (%s)\n", whose);
    printf("%-22s %10s %10s %10s %14s %14s %10s %10s %14s %10s  %s\n", "collective", "calls", "mcoll",
           "fallback", "bytes", "shm_dav", "shm_syncs", "inter_msgs", "inter_bytes", "rounds",
           "algorithms");
    for (int c = 0; c < MC_NCOLL; c++) {
        const uint64_t *r = sum + (size_t)c * ROW;
        if (!r[0]) continue;
        printf("%-22s %10llu %10llu %10llu %14llu %14llu %10llu %10llu %14llu %10llu ", mc_coll_name(c),
               (unsigned long long)r[0], (unsigned long long)r[1], (unsigned long long)r[2],
               (unsigned long long)r[3], (unsigned long long)r[4], (unsigned long long)r[5],
               (unsigned long long)r[6], (unsigned long long)r[7], (unsigned long long)r[8]);
        for (int i = 0; i < mc_alg_count(c) && i < MC_MAX_ALGS; i++)
            if (r[NFIX + i]) printf(" %s=%llu", mc_alg_at(c, i)->name, (unsigned long long)r[NFIX + i]);
        printf("\n");
    }
    fflush(stdout);
}

/* This process's rows (all threads' counters) into out[MC_NCOLL * ROW]. */
static void own_rows(uint64_t *out)
{
    for (int c = 0; c < MC_NCOLL; c++) {
        uint64_t *r = out + (size_t)c * ROW;
        r[0] = TOTAL(c, calls); r[1] = TOTAL(c, handled); r[2] = TOTAL(c, fallback);
        r[3] = TOTAL(c, bytes); r[4] = TOTAL(c, dav); r[5] = TOTAL(c, syncs);
        r[6] = TOTAL(c, inter_msgs); r[7] = TOTAL(c, inter_bytes); r[8] = TOTAL(c, rounds);
        for (int i = 0; i < MC_MAX_ALGS; i++) r[NFIX + i] = TOTAL(c, alg_calls[i]);
    }
}

void mc_stats_report(void)
{
    uint64_t mine[MC_NCOLL * ROW], sum[MC_NCOLL * ROW];
    char whose[64];
    own_rows(mine);
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Reduce(mine, sum, MC_NCOLL * ROW, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    snprintf(whose, sizeof whose, "sum over %d ranks", size);
    if (rank == 0) print_table(sum, whose);
}

void mc_stats_report_own(int world_rank)
{
    uint64_t mine[MC_NCOLL * ROW];
    if (world_rank != 0) return;
    own_rows(mine);
    print_table(mine, "world rank 0 alone: no MPI_Finalize, where the ranks' counts are summed");
}
