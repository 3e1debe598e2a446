/* mcoll-bench internals: options, the per-collective runner table, buffers, timing and output.
 * Every rank parses the same argv, so options need no broadcast; only rank 0 prints. */
#ifndef BENCH_H
#define BENCH_H
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

#define BENCH_MAX_COLLS 16
#define BENCH_MAX_VARIANTS 16
#define BENCH_NAME 32

/* ---------------------------------------------------------------- options */
typedef struct bench_opts {
    int colls[BENCH_MAX_COLLS];  /* indices into the runner table, in run order */
    int ncolls;
    size_t min, max;             /* bytes per rank, swept in powers of two */
    long iters;                  /* 0: scaled to the size */
    long warmup;                 /* -1: scaled to the iterations */
    long batch;                  /* calls per timed sample (mean); rooted: roots rotate */
    char algs[512];              /* comma list of "default", "all", algorithm names */
    int cold, validate, root;
    int dirty;                   /* each rank rewrites its send buffer before every call */
    int start_clock;             /* samples start at a common instant of the node's clock */
    int blocks;                  /* each column's repetitions back to back, not interleaved */
    int heap;                    /* buffers from the node-shared heap (mcoll_malloc) */
    int thp;                     /* buffers advised to transparent huge pages */
    int apart;                   /* hot buffers as malloc blocks of their own, each call's size */
    int skew;                    /* rank r's buffers (r * skew) mod 64 bytes past their place */
    int roofline;                /* measure the copy bandwidth; print time / DRAM floor */
    int local_copy;              /* time each size's output share copied locally (local_us) */
    double time_limit;           /* seconds of timed work per size when iterations are automatic */
    size_t max_mem;              /* bytes of benchmark buffers per rank */
    const char *csv, *json, *plot;
} bench_opts_t;

/* 0 ok, 1 help printed, -1 error printed (rank 0 prints). */
int bench_parse_args(int argc, char **argv, int rank, bench_opts_t *o);
/* "cold", "dirty" (hot, inputs rewritten before each call) or "hot". */
const char *bench_cache_mode(const bench_opts_t *o);

/* ---------------------------------------------------------------- collectives */
/* One call's arguments. Sizes: m bytes per rank of the collective's natural message; count
 * elements of dt per block (reductions: floats, summed; others: bytes). */
typedef struct bench_call {
    char *sbuf, *rbuf;
    size_t m;
    int count;
    MPI_Datatype dt;
    size_t elem;
    int p, rank, root;
    int *counts, *displs;        /* [p] uniform blocks, elements, for the v-collectives */
} bench_call_t;

/* Buffer shape in blocks of count elements: 0, 1, or BENCH_P (one block per rank). */
#define BENCH_P (-1)

typedef struct bench_coll {
    const char *name;
    int reduction;               /* float sum: count = m / sizeof(float) */
    int rooted;
    int sblocks, rblocks;
    int inout;                   /* bcast: the input is rbuf at the root */
    int (*call)(int native, const bench_call_t *c);
    size_t (*check)(const bench_call_t *c);  /* significant rbuf bytes on this rank */
} bench_coll_t;

int bench_coll_count(void);
const bench_coll_t *bench_coll_at(int i);
int bench_coll_index(const char *name);       /* -1 when unknown */
/* Bytes of sbuf / rbuf for a block of `block` bytes at p ranks. */
size_t bench_sbytes(const bench_coll_t *bc, size_t block, int p);
size_t bench_rbytes(const bench_coll_t *bc, size_t block, int p);
/* Deterministic inputs (exact in float sums, whatever the order) and a poisoned output. */
void bench_fill_inputs(const bench_coll_t *bc, const bench_call_t *c);
void bench_poison_output(const bench_coll_t *bc, const bench_call_t *c);

/* ---------------------------------------------------------------- buffers */
/* One arena for the whole run. Hot: every call uses its start. Cold: calls walk through an
 * arena larger than twice the last-level cache, so each call's buffers were evicted. Apart
 * (hot only): no arena, see bench_mem_init. */
#define BENCH_POOL 128
typedef struct bench_mem {
    char *arena;
    char *base;                  /* what to free when arena was aligned by hand */
    size_t bytes, off;
    int cold, heap, apart;
    size_t skew;                 /* bytes every buffer starts past its place (< 64) */
    char *sblk, *rblk;           /* apart: the current call's blocks, of sn and rn bytes */
    size_t sn, rn;
    char *pool[BENCH_POOL];      /* apart: every block made so far, freed at the end */
    size_t pool_n[BENCH_POOL];
    int npool;
} bench_mem_t;

/* apart: no arena; each call's sbuf and rbuf are malloc blocks of exactly its sizes, taken
 * from a pool by size when the sizes change (a program's own buffers: MCOLL_SHM_ADOPT can
 * adopt them). */
int bench_mem_init(bench_mem_t *mm, size_t need, int cold, int heap, int thp, int apart, size_t skew);
/* Lays out sbytes + rbytes for the next call (hot: same place; cold: the next slot). */
void bench_mem_next(bench_mem_t *mm, size_t sbytes, size_t rbytes, bench_call_t *c);
void bench_mem_free(bench_mem_t *mm);
/* Arena bytes one call's buffers occupy. */
size_t bench_mem_slot(size_t sbytes, size_t rbytes);

/* ---------------------------------------------------------------- measurement */
typedef struct bench_stat {
    double med, min, max;        /* microseconds, per-call max across ranks */
} bench_stat_t;
/* Median, min and max in microseconds of n times in seconds (sorts t). */
bench_stat_t bench_stats(double *t, long n);

typedef struct bench_variant {
    char req[BENCH_NAME];        /* what was asked: "default" or an algorithm name */
    char used[BENCH_NAME];       /* mcoll_last_alg after the call */
    bench_stat_t t;
    int valid;                   /* 1 same bytes as native, 0 differs, -1 not checked */
} bench_variant_t;

typedef struct bench_row {
    const char *coll;
    size_t bytes;
    int p;
    long iters;
    bench_stat_t native;
    double floor_us;             /* minimum data volume / copy bandwidth; 0 = not measured */
    double local_us;             /* --local-copy: bench_local_copy's time; 0 = not measured */
    int nvar;
    bench_variant_t var[BENCH_MAX_VARIANTS];
} bench_row_t;

/* Expands --alg (default, all, names) into the variants registered for `coll`. */
int bench_variants(const char *algs, const char *coll, char (*out)[BENCH_NAME], int max);
/* Measures one collective at one size for native + every variant; collective. */
int bench_run_size(const bench_opts_t *o, const bench_coll_t *bc, size_t m, bench_mem_t *mm,
                   char (*variants)[BENCH_NAME], int nvar, bench_row_t *row);

/* ---------------------------------------------------------------- output */
typedef struct bench_results {
    bench_row_t *rows;
    int n, cap;
    int p;
    char mpi[128];
    const bench_opts_t *o;
    double bw;                   /* --roofline: copy bandwidth of the node, bytes/s */
} bench_results_t;

/* ---------------------------------------------------------------- roofline */
double bench_copy_bandwidth(size_t bytes_per_rank);
double bench_min_volume(const char *coll, int p, size_t bytes);
double bench_flag_exchange(int rounds);
double bench_out_share(const char *coll, int p, size_t bytes);
double bench_local_copy(size_t out, size_t in, int reps);

int bench_results_add(bench_results_t *r, const bench_row_t *row);
void bench_print_header(const bench_results_t *r, const bench_coll_t *bc);
void bench_print_row(const bench_row_t *row);
int bench_write_csv(const bench_results_t *r, const char *path);
int bench_write_json(const bench_results_t *r, const char *path);
int bench_plot(const bench_results_t *r, const char *path);

#endif
