/* mcoll-bench --plot: latency against size, log-log, one panel per collective (gnuplot).
 * Data and script go to a private temporary directory removed afterwards. */
#include "bench.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXP BENCH_MAX_COLLS

typedef struct plot {
    char dir[64];
    char files[MAXP][96];
    const char *titles[MAXP];
    int ncols[MAXP];              /* data columns besides bytes */
    int n;
} plot_t;

/* Barrier has no size axis: only collectives with sized rows get a panel. */
static int write_data(const bench_results_t *r, const char *coll, const char *path, int *ncols)
{
    FILE *f = fopen(path, "w");
    int header = 0;
    if (!f) return -1;
    for (int i = 0; i < r->n; i++) {
        const bench_row_t *w = &r->rows[i];
        if (strcmp(w->coll, coll) || !w->bytes) continue;
        if (!header++) {
            fprintf(f, "bytes native");
            for (int v = 0; v < w->nvar; v++)
                fprintf(f, strcmp(w->var[v].req, "default") ? " mcoll:%s" : " mcoll", w->var[v].req);
            fprintf(f, "\n");
            *ncols = 1 + w->nvar;
        }
        fprintf(f, "%zu %.4g", w->bytes, w->native.med);
        for (int v = 0; v < w->nvar; v++) fprintf(f, " %.4g", w->var[v].t.med);
        fprintf(f, "\n");
    }
    fclose(f);
    return header ? 0 : 1;
}

static int collect(const bench_results_t *r, plot_t *pl)
{
    char dir[sizeof pl->dir];
    memcpy(dir, pl->dir, sizeof dir);   /* a separate source keeps snprintf's restrict honest */
    for (int i = 0; i < r->o->ncolls && pl->n < MAXP; i++) {
        const char *coll = bench_coll_at(r->o->colls[i])->name;
        snprintf(pl->files[pl->n], sizeof pl->files[0], "%s/%s.dat", dir, coll);
        int rc = write_data(r, coll, pl->files[pl->n], &pl->ncols[pl->n]);
        if (rc < 0) return -1;
        if (rc > 0) { unlink(pl->files[pl->n]); continue; }
        pl->titles[pl->n++] = coll;
    }
    return 0;
}

static const char *terminal(void)
{
    return system("gnuplot -e 'set terminal pngcairo' </dev/null >/dev/null 2>&1") == 0 ? "pngcairo"
                                                                                         : "png";
}

/* "64", "16K", "4M": powers of two read better than gnuplot's binary prefixes. */
static void tic_label(size_t b, char *buf, size_t n)
{
    if (b >= (1u << 20) && b % (1u << 20) == 0) snprintf(buf, n, "%zuM", b >> 20);
    else if (b >= 1024 && b % 1024 == 0) snprintf(buf, n, "%zuK", b >> 10);
    else snprintf(buf, n, "%zu", b);
}

/* At most ~8 labelled tics over the sweep: every 2nd, 4th, ... power of two. */
static void write_xtics(FILE *f, size_t lo, size_t hi)
{
    char lab[32];
    int span = 0, step = 1;
    lo = lo ? lo : 1;
    for (size_t b = lo; b < hi; b *= 2) span++;
    while (span / step > 8) step *= 2;
    fprintf(f, "set xtics (");
    for (size_t b = lo, i = 0; b <= hi; b *= 2, i++) {
        if (i % (size_t)step) continue;
        tic_label(b, lab, sizeof lab);
        fprintf(f, "%s\"%s\" %zu", i ? ", " : "", lab, b);
    }
    fprintf(f, ")\n");
}

static int write_script(const bench_results_t *r, const plot_t *pl, const char *out, const char *sp)
{
    FILE *f = fopen(sp, "w");
    int cols = pl->n <= 1 ? 1 : pl->n <= 4 ? 2 : 3, rows = (pl->n + cols - 1) / cols;
    if (!f) return -1;
    fprintf(f, "set terminal %s noenhanced size %d,%d\nset output '%s'\n", terminal(), 520 * cols, 400 * rows, out);
    fprintf(f, "set multiplot layout %d,%d title 'mcoll-bench: %d ranks, %s caches'\n", rows, cols, r->p,
            r->o->cold ? "cold" : "hot");
    write_xtics(f, r->o->min, r->o->max);
    fprintf(f, "set logscale x 2\nset logscale y 10\nset grid\n"
               "set key top left\nset xlabel 'bytes per rank'\nset ylabel 'latency (us)'\n"
               "set datafile missing 'nan'\n");
    for (int i = 0; i < pl->n; i++)
        fprintf(f, "set title '%s'\nplot for [i=2:%d] '%s' using 1:i with linespoints title columnheader(i)\n",
                pl->titles[i], pl->ncols[i] + 1, pl->files[i]);
    fprintf(f, "unset multiplot\n");
    return fclose(f) ? -1 : 0;
}

static void cleanup(const plot_t *pl, const char *sp)
{
    for (int i = 0; i < pl->n; i++) unlink(pl->files[i]);
    unlink(sp);
    rmdir(pl->dir);
}

int bench_plot(const bench_results_t *r, const char *path)
{
    plot_t pl = {.n = 0};
    char sp[96], cmd[160];
    int rc = -1;
    if (strchr(path, '\'')) return -1;   /* the script quotes the path */
    snprintf(pl.dir, sizeof pl.dir, "/tmp/mcoll-plot-XXXXXX");
    if (!mkdtemp(pl.dir)) return -1;
    snprintf(sp, sizeof sp, "%s/plot.gp", pl.dir);
    if (collect(r, &pl) == 0 && pl.n && write_script(r, &pl, path, sp) == 0) {
        snprintf(cmd, sizeof cmd, "gnuplot '%s'", sp);
        rc = system(cmd) == 0 ? 0 : -1;
    }
    cleanup(&pl, sp);
    return rc;
}
