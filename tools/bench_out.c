/* mcoll-bench output: the terminal table, CSV and JSON (rank 0 only). */
#include "bench.h"
#include "mcoll.h"
#include <stdlib.h>
#include <string.h>

int bench_results_add(bench_results_t *r, const bench_row_t *row)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        bench_row_t *n = realloc(r->rows, sizeof *n * (size_t)cap);
        if (!n) return MPI_ERR_NO_MEM;
        r->rows = n;
        r->cap = cap;
    }
    r->rows[r->n++] = *row;
    return MPI_SUCCESS;
}

static const char *valid_word(int v) { return v < 0 ? "-" : v ? "ok" : "FAIL"; }

static double speedup(const bench_row_t *row, int v)
{
    return row->var[v].t.med > 0 ? row->native.med / row->var[v].t.med : 0;
}

/* "ring", "ring (asked bruck)" when the selector did not run the forced algorithm, or
 * "ring (default)" to tell the automatic choice apart among several variants. */
static const char *alg_label(const bench_variant_t *v, int nvar, char *buf, size_t n)
{
    int asked = strcmp(v->req, "default") != 0;
    if (asked && strcmp(v->req, v->used)) snprintf(buf, n, "%s (asked %s)", v->used, v->req);
    else if (!asked && nvar > 1) snprintf(buf, n, "%s (default)", v->used);
    else snprintf(buf, n, "%s", v->used);
    return buf;
}

void bench_print_header(const bench_results_t *r, const bench_coll_t *bc)
{
    const bench_opts_t *o = r->o;
    char root[96] = "";
    if (bc->rooted) snprintf(root, sizeof root, ", root %d", o->root);
    if (o->batch > 1)
        snprintf(root + strlen(root), sizeof root - strlen(root), "; mean of %ld back-to-back calls%s", o->batch,
                 bc->rooted ? ", roots rotating" : "");
    printf("\n# %s: %d ranks, %s, %s caches%s%s%s; times in us (median of the slowest rank)\n", bc->name,
           r->p, bc->reduction ? "float sum" : "bytes", bench_cache_mode(o), root,
           o->start_clock ? "; started at a common clock mark" : "",
           o->blocks ? "; each column timed in one block" : "");
    printf("%12s %7s %12s %12s %8s  %-28s %-5s%s%s\n", "bytes", "iters", "native_us", "mcoll_us", "speedup",
           "alg", "valid", r->bw > 0 ? "  floor_us native_x mcoll_x" : "",
           r->o->local_copy ? "  local_us nat/loc mc/loc" : "");
    fflush(stdout);
}

void bench_print_row(const bench_row_t *row)
{
    char lab[2 * BENCH_NAME + 16];
    for (int v = 0; v < row->nvar; v++)
    {
        printf("%12zu %7ld %12.2f %12.2f %8.2f  %-28s %-5s", row->bytes, row->iters,
               row->native.med, row->var[v].t.med, speedup(row, v),
               alg_label(&row->var[v], row->nvar, lab, sizeof lab), valid_word(row->var[v].valid));
        if (row->floor_us > 0)
            printf(" %9.1f %8.2f %7.2f", row->floor_us, row->native.med / row->floor_us,
                   row->var[v].t.med / row->floor_us);
        if (row->local_us > 0)
            printf(" %9.1f %7.2f %6.2f", row->local_us, row->native.med / row->local_us,
                   row->var[v].t.med / row->local_us);
        printf("\n");
    }
    fflush(stdout);
}

/* ---------------------------------------------------------------- CSV */
/* CSV mode column: hot or cold, with "-bK" for batches of K calls, "-clock" for samples
 * started at a clock mark and "-block" for columns timed in blocks. */
static const char *mode_word(const bench_opts_t *o)
{
    static char w[48];
    if (o->batch > 1) snprintf(w, sizeof w, "%s-b%ld", bench_cache_mode(o), o->batch);
    else snprintf(w, sizeof w, "%s", bench_cache_mode(o));
    if (o->start_clock) snprintf(w + strlen(w), sizeof w - strlen(w), "-clock");
    if (o->blocks) snprintf(w + strlen(w), sizeof w - strlen(w), "-block");
    return w;
}

int bench_write_csv(const bench_results_t *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "collective,ranks,bytes,iters,mode,variant,alg,native_us,mcoll_us,speedup,"
               "native_min_us,mcoll_min_us,native_max_us,mcoll_max_us,valid,floor_us,local_us\n");
    for (int i = 0; i < r->n; i++) {
        const bench_row_t *w = &r->rows[i];
        for (int v = 0; v < w->nvar; v++) {
            const bench_variant_t *x = &w->var[v];
            fprintf(f, "%s,%d,%zu,%ld,%s,%s,%s,%.3f,%.3f,%.4f,%.3f,%.3f,%.3f,%.3f,%s,%.3f,%.3f\n", w->coll,
                    w->p, w->bytes, w->iters, mode_word(r->o), x->req, x->used, w->native.med, x->t.med,
                    speedup(w, v), w->native.min, x->t.min, w->native.max, x->t.max, valid_word(x->valid),
                    w->floor_us, w->local_us);
        }
    }
    return fclose(f) ? -1 : 0;
}

/* ---------------------------------------------------------------- JSON */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void json_stat(FILE *f, const char *key, const bench_stat_t *s)
{
    fprintf(f, "\"%s\": {\"median_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f}", key, s->med,
            s->min, s->max);
}

static void json_variant(FILE *f, const bench_row_t *w, int v)
{
    const bench_variant_t *x = &w->var[v];
    fprintf(f, "        {\"variant\": ");
    json_str(f, x->req);
    fprintf(f, ", \"alg\": ");
    json_str(f, x->used);
    fprintf(f, ", ");
    json_stat(f, "mcoll", &x->t);
    fprintf(f, ", \"speedup\": %.4f, \"valid\": %s}", speedup(w, v),
            x->valid < 0 ? "null" : x->valid ? "true" : "false");
}

static void json_row(FILE *f, const bench_row_t *w)
{
    fprintf(f,
            "    {\"collective\": \"%s\", \"bytes\": %zu, \"iters\": %ld, \"floor_us\": %.3f, "
            "\"local_us\": %.3f, ",
            w->coll, w->bytes, w->iters, w->floor_us, w->local_us);
    json_stat(f, "native", &w->native);
    fprintf(f, ",\n      \"variants\": [\n");
    for (int v = 0; v < w->nvar; v++) {
        json_variant(f, w, v);
        fprintf(f, "%s\n", v + 1 < w->nvar ? "," : "");
    }
    fprintf(f, "      ]}");
}

int bench_write_json(const bench_results_t *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\n  \"tool\": \"mcoll-bench\",\n  \"mcoll_version\": \"%s\",\n  \"mpi\": ",
            MCOLL_VERSION);
    json_str(f, r->mpi);
    fprintf(f, ",\n  \"ranks\": %d,\n  \"mode\": \"%s\",\n  \"root\": %d,\n  \"copy_bandwidth\": %.0f,\n  \"results\": [\n",
            r->p, bench_cache_mode(r->o), r->o->root, r->bw);
    for (int i = 0; i < r->n; i++) {
        json_row(f, &r->rows[i]);
        fprintf(f, "%s\n", i + 1 < r->n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) ? -1 : 0;
}
