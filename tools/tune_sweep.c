/* mcoll-tune sweep: every registered algorithm of every collective x sizes x segment sizes,
 * at this run's communicator size, timed by mcoll-bench's runner (bench_run_size: native and
 * the variants alternate within each repetition; median of the slowest rank).
 *
 *   mpiexec -n P mcoll-tune sweep --csv F [--rules R] [--coll LIST] [--min 8] [--max 4M]
 *                                  [--step 4] [--segs 8k,64k] [--time 0.05]
 *
 * Per collective and size: one pass with the built-in choice ("default") and every algorithm
 * forced (segmented ones unsegmented), then one pass per segment size smaller than the message
 * with only the segmented algorithms. A forced algorithm that declines (mcoll_last_alg names
 * another one) is not recorded. Rows are appended to the CSV (rank 0), then the measured-best
 * rules of everything in the CSV are rewritten to R: run it at several sizes into one CSV. */
#include "bench.h"
#include "tune.h"
#include "core/mc.h"
#include "mcoll.h"
#include <stdlib.h>
#include <string.h>

#define MAXSEG 8

typedef struct sw {
    bench_opts_t o;
    long segs[MAXSEG];
    int nseg, p, rank;
    size_t min, max, step;
    FILE *csv;
} sw_t;

static int segmented(const char *coll, const char *alg)
{
    int c = mc_coll_from_name(coll);
    const mc_alg_t *a = c < 0 ? NULL : mc_alg_find((mc_coll_t)c, alg);
    return a && (a->flags & MC_ALG_SEGMENTED);
}

static void emit(sw_t *s, const bench_row_t *row, const char *alg, const char *used, long seg,
                 const bench_stat_t *t)
{
    if (s->rank) return;
    fprintf(s->csv, "%s,%d,%zu,%s,%ld,%.3f,%.3f,%ld,%s\n", row->coll, row->p, row->bytes, alg, seg, t->med,
            t->min, row->iters, used);
}

/* One pass: variants at segment size seg (-1: the configured default). */
static int pass(sw_t *s, const bench_coll_t *bc, size_t m, bench_mem_t *mm, char (*var)[BENCH_NAME], int nv,
                long seg, int with_native)
{
    bench_row_t row;
    if (!nv) return 0;
    mcoll_set_segsize(bc->name, seg);
    int rc = bench_run_size(&s->o, bc, m, mm, var, nv, &row);
    mcoll_set_segsize(bc->name, -1);
    if (rc) return rc;
    if (with_native) emit(s, &row, "native", "native", -1, &row.native);
    for (int v = 0; v < row.nvar; v++) {
        const bench_variant_t *x = &row.var[v];
        int is_default = !strcmp(x->req, "default");
        if (!is_default && strcmp(x->req, x->used)) continue; /* declined */
        long sg = is_default ? -1 : segmented(bc->name, x->req) ? (seg < 0 ? 0 : seg) : -1;
        emit(s, &row, x->req, x->used, sg, &x->t);
    }
    return 0;
}

static int sweep_coll(sw_t *s, const bench_coll_t *bc, bench_mem_t *mm)
{
    char all[BENCH_MAX_VARIANTS][BENCH_NAME], segv[BENCH_MAX_VARIANTS][BENCH_NAME];
    int nall = bench_variants("default,all", bc->name, all, BENCH_MAX_VARIANTS), nseg = 0;
    for (int i = 0; i < nall; i++)
        if (segmented(bc->name, all[i])) memcpy(segv[nseg++], all[i], BENCH_NAME);
    int sized = bc->sblocks || bc->rblocks;
    double t0 = MPI_Wtime();
    for (size_t m = sized ? s->min : 0;; m = m * s->step > s->max && m < s->max ? s->max : m * s->step) {
        if (m > s->max) break;
        if (!(sized && bc->reduction && m < sizeof(float))) {
            int rc = pass(s, bc, m, mm, all, nall, -1, 1);
            for (int k = 0; k < s->nseg && !rc; k++)
                if ((size_t)s->segs[k] < m) rc = pass(s, bc, m, mm, segv, nseg, s->segs[k], 0);
            if (rc) return rc;
        }
        if (!sized || m >= s->max) break;
    }
    if (!s->rank) {
        printf("# %s p=%d: %.1f s\n", bc->name, s->p, MPI_Wtime() - t0);
        fflush(stdout);
    }
    return 0;
}

static int usage(int rank)
{
    if (!rank)
        fprintf(stderr, "usage: mpiexec -n P mcoll-tune sweep --csv FILE [--rules FILE] [--coll LIST|all]\n"
                        "         [--min B] [--max B] [--step K] [--segs a,b,...] [--time SEC]\n");
    return 2;
}

static int parse(sw_t *s, int argc, char **argv, const char **csv, const char **rules, char *colls, size_t cn)
{
    for (int i = 0; i + 1 < argc; i += 2) {
        const char *f = argv[i], *v = argv[i + 1];
        if (!strcmp(f, "--csv")) *csv = v;
        else if (!strcmp(f, "--rules")) *rules = v;
        else if (!strcmp(f, "--coll")) snprintf(colls, cn, "%s", v);
        else if (!strcmp(f, "--min")) s->min = (size_t)tune_parse_size(v);
        else if (!strcmp(f, "--max")) s->max = (size_t)tune_parse_size(v);
        else if (!strcmp(f, "--step")) s->step = (size_t)atol(v);
        else if (!strcmp(f, "--time")) s->o.time_limit = atof(v);
        else if (!strcmp(f, "--segs")) {
            if ((s->nseg = tune_parse_list(v, s->segs, MAXSEG)) < 0) return -1;
        } else return -1;
    }
    if (argc % 2 || !*csv || s->step < 2 || s->min < 1 || s->max < s->min || s->o.time_limit <= 0) return -1;
    return 0;
}

static size_t arena(const sw_t *s)
{
    size_t need = 0;
    for (int i = 0; i < s->o.ncolls; i++) {
        const bench_coll_t *bc = bench_coll_at(s->o.colls[i]);
        size_t b = bench_mem_slot(bench_sbytes(bc, s->max, s->p), bench_rbytes(bc, s->max, s->p));
        if (b > need) need = b;
    }
    return need;
}

int tune_sweep_main(int argc, char **argv)
{
    sw_t s = {.min = 8, .max = 4u << 20, .step = 4, .nseg = 2, .segs = {8192, 65536}};
    const char *csv = NULL, *rules = NULL;
    char colls[512] = "all";
    int rc = 0;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.p);
    memset(&s.o, 0, sizeof s.o);
    s.o.warmup = -1;
    s.o.time_limit = 0.05;
    s.o.max_mem = (size_t)1 << 30;
    snprintf(s.o.algs, sizeof s.o.algs, "default,all");
    if (parse(&s, argc, argv, &csv, &rules, colls, sizeof colls)) {
        usage(s.rank);
        MPI_Finalize();
        return 2;
    }
    for (char *sv = NULL, *t = strtok_r(colls, ",", &sv); t; t = strtok_r(NULL, ",", &sv))
        for (int i = 0; i < bench_coll_count(); i++)
            if ((!strcmp(t, "all") || !strcmp(t, bench_coll_at(i)->name)) && s.o.ncolls < BENCH_MAX_COLLS)
                s.o.colls[s.o.ncolls++] = i;
    bench_mem_t mm;
    if (bench_mem_init(&mm, arena(&s), 0, 0, 0, 0, 0)) MPI_Abort(MPI_COMM_WORLD, 1);
    if (!s.rank) {
        FILE *f = fopen(csv, "r");
        int fresh = !f || fgetc(f) == EOF;
        if (f) fclose(f);
        s.csv = fopen(csv, "a");
        if (!s.csv) perror(csv), MPI_Abort(MPI_COMM_WORLD, 1);
        if (fresh) fprintf(s.csv, "coll,p,bytes,alg,segsize,med_us,min_us,iters,used\n");
        printf("# mcoll-tune sweep: %d ranks, %zu..%zu B x%zu, %d collectives, %.3f s per size and pass\n", s.p,
               s.min, s.max, s.step, s.o.ncolls, s.o.time_limit);
    }
    double t0 = MPI_Wtime();
    for (int i = 0; i < s.o.ncolls && !rc; i++) {
        rc = sweep_coll(&s, bench_coll_at(s.o.colls[i]), &mm);
        if (!s.rank) fflush(s.csv);
    }
    if (!s.rank) {
        fclose(s.csv);
        printf("# sweep p=%d: %.1f s\n", s.p, MPI_Wtime() - t0);
        tune_csv_t c = {0};
        if (rules && !rc) {
            rc = tune_csv_read(csv, &c) || tune_write_measured_rules(&c, rules);
            if (!rc) printf("wrote %s\n", rules);
        }
        tune_csv_free(&c);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    bench_mem_free(&mm);
    MPI_Finalize();
    return rc ? 1 : 0;
}
