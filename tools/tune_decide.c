/* Decision functions and their penalty (collective-models-decision §6.3, Figs. 6-7).
 *
 * A grid is a set of cells (collective, ranks, bytes), each with candidates (algorithm,
 * segment size) and a value per candidate: a measured median time (sweep CSV) or a model's
 * cost (mc_cost_eval). The decision of a cell is its cheapest candidate; collectives whose
 * rules must not depend on bytes (gatherv, scatterv, alltoallv) and barrier take one
 * decision per rank count: the candidate with the smallest sum over sizes of value / the
 * cell's best. Decisions become MCOLL_RULES rows: ranks split between the measured counts
 * (the last extends to '*'), bytes at the geometric middle between measured sizes.
 *
 *   mcoll-tune rules   --csv F --out R                  measured-best rules
 *   mcoll-tune model   --profile P --model M --out R [--csv F | --ranks 2,3,4 --min --max
 *                      --step --segs] [--level intra|inter]
 *   mcoll-tune compare --csv F --profile P [--models LIST] [--table T] [--png IMG]
 *                      [--penalty-csv C] [--level intra|inter] */
#include "tune.h"
#include "core/mc.h"
#include "select/rules.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXC 64

typedef struct cand {
    char alg[TUNE_NAME];
    long seg;
    double v;
    double v0; /* model grids: the cost with buffers in the shared heap (zero copy); else v */
} cand_t;

typedef struct cell {
    char coll[TUNE_NAME];
    int p;
    double bytes;
    int n, pick;
    cand_t c[MAXC];
    double t_default, t_native; /* measured; 0 = absent */
    char dflt[TUNE_NAME];       /* what the built-in choice ran */
} cell_t;

typedef struct grid {
    cell_t *cell;
    int n, cap;
} grid_t;

/* ---------------------------------------------------------------- small parsers */
long tune_parse_size(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0) return -1;
    if (*end == 'k' || *end == 'K') v *= 1024, end++;
    else if (*end == 'M') v *= 1024 * 1024, end++;
    else if (*end == 'G') v *= 1024.0 * 1024 * 1024, end++;
    return *end ? -1 : (long)v;
}

int tune_parse_list(const char *s, long *out, int max)
{
    char buf[256];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
        long v = tune_parse_size(t);
        if (v < 0 || n >= max) return -1;
        out[n++] = v;
    }
    return n;
}

/* ---------------------------------------------------------------- CSV */
int tune_csv_add(tune_csv_t *c, const tune_pt_t *p)
{
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 256;
        tune_pt_t *q = realloc(c->pt, (size_t)cap * sizeof *q);
        if (!q) return -1;
        c->pt = q, c->cap = cap;
    }
    c->pt[c->n++] = *p;
    return 0;
}

void tune_csv_free(tune_csv_t *c)
{
    free(c->pt);
    memset(c, 0, sizeof *c);
}

int tune_csv_read(const char *path, tune_csv_t *out)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int ln = 0;
    memset(out, 0, sizeof *out);
    if (!f) return perror(path), -1;
    while (fgets(line, sizeof line, f)) {
        tune_pt_t p;
        memset(&p, 0, sizeof p);
        if (++ln == 1 && !strncmp(line, "coll,", 5)) continue;
        if (sscanf(line, "%31[^,],%d,%lf,%31[^,],%ld,%lf,%lf,%ld,%31[^,\n]", p.coll, &p.p, &p.bytes, p.alg, &p.seg,
                   &p.med, &p.min, &p.iters, p.used) != 9) {
            fprintf(stderr, "mcoll-tune: %s line %d: malformed\n", path, ln);
            fclose(f);
            tune_csv_free(out);
            return -1;
        }
        if (tune_csv_add(out, &p)) return fclose(f), -1;
    }
    fclose(f);
    return 0;
}

/* ---------------------------------------------------------------- grids */
static cell_t *find_cell(grid_t *g, const char *coll, int p, double bytes, int create)
{
    for (int i = g->n - 1; i >= 0; i--)
        if (g->cell[i].p == p && g->cell[i].bytes == bytes && !strcmp(g->cell[i].coll, coll)) return &g->cell[i];
    if (!create) return NULL;
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 128;
        cell_t *q = realloc(g->cell, (size_t)cap * sizeof *q);
        if (!q) return NULL;
        g->cell = q, g->cap = cap;
    }
    cell_t *c = &g->cell[g->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->coll, sizeof c->coll, "%s", coll);
    c->p = p, c->bytes = bytes, c->pick = -1;
    return c;
}

static int add_cand(cell_t *c, const char *alg, long seg, double v)
{
    for (int i = 0; i < c->n; i++)
        if (c->c[i].seg == seg && !strcmp(c->c[i].alg, alg)) { /* repeated run: keep the faster */
            if (v < c->c[i].v) c->c[i].v = c->c[i].v0 = v;
            return 0;
        }
    if (c->n == MAXC) return -1;
    if (snprintf(c->c[c->n].alg, TUNE_NAME, "%s", alg) >= TUNE_NAME) return -1; /* no such algorithm name */
    c->c[c->n].seg = seg;
    c->c[c->n].v0 = v;
    c->c[c->n++].v = v;
    return 0;
}

/* TUNE_STAT=min decides and compares on the fastest repetition instead of the median (a
 * loaded machine: a 5-repetition median can hold a 10-20 ms preemption). */
static int grid_from_csv(const tune_csv_t *csv, grid_t *g)
{
    const char *st = getenv("TUNE_STAT");
    int use_min = st && !strcmp(st, "min");
    memset(g, 0, sizeof *g);
    for (int i = 0; i < csv->n; i++) {
        tune_pt_t q = csv->pt[i], *p = &q;
        if (use_min) q.med = q.min;
        cell_t *c = find_cell(g, p->coll, p->p, p->bytes, 1);
        if (!c) return -1;
        if (!strcmp(p->alg, "native")) c->t_native = p->med;
        else if (!strcmp(p->alg, "default")) {
            c->t_default = p->med;
            memcpy(c->dflt, p->used, sizeof c->dflt);
        } else if (add_cand(c, p->alg, p->seg, p->med)) return -1;
    }
    return 0;
}

static int cand_index(const cell_t *c, const char *alg, long seg)
{
    for (int i = 0; i < c->n; i++)
        if (c->c[i].seg == seg && !strcmp(c->c[i].alg, alg)) return i;
    return -1;
}

/* Barrier has no size; the others' bytes differ between ranks (mc_coll_bytes_vary). */
static int bytes_free(const char *coll)
{
    int c = mc_coll_from_name(coll);
    return c == MC_BARRIER || (c >= 0 && mc_coll_bytes_vary((mc_coll_t)c));
}

static int best_of(const cell_t *c)
{
    int b = -1;
    for (int i = 0; i < c->n; i++)
        if (isfinite(c->c[i].v) && (b < 0 || c->c[i].v < c->c[b].v)) b = i;
    return b;
}

/* The decision of a cell: its best, or with model costs the cheapest with zero copy among
 * those within MC_MSEL_TOL of the best (as the run-time model selection; measured cells have
 * v0 = v, so this is their best). */
static int pick_of(const cell_t *c)
{
    int b = best_of(c), k = b;
    for (int i = 0; b >= 0 && i < c->n; i++)
        if (mc_msel_near(c->c[i].v, c->c[b].v) && c->c[i].v0 < c->c[k].v0) k = i;
    return k;
}

/* One decision for all sizes of (coll, p): smallest sum of value / the cell's best over
 * the cells that have the candidate (a candidate missing somewhere is not eligible). */
static void decide_bytes_free(grid_t *g, int k)
{
    cell_t *c0 = &g->cell[k];
    double best = INFINITY;
    int pick = -1;
    for (int j = 0; j < c0->n; j++) {
        double s = 0;
        for (int i = 0; i < g->n && isfinite(s); i++) {
            cell_t *c = &g->cell[i];
            if (c->p != c0->p || strcmp(c->coll, c0->coll)) continue;
            int x = cand_index(c, c0->c[j].alg, c0->c[j].seg), b = best_of(c);
            s += x < 0 || b < 0 || !isfinite(c->c[x].v) ? INFINITY : c->c[x].v / fmax(c->c[b].v, 1e-300);
        }
        if (s < best) best = s, pick = j;
    }
    for (int i = 0; i < g->n; i++) {
        cell_t *c = &g->cell[i];
        if (c->p == c0->p && !strcmp(c->coll, c0->coll))
            c->pick = pick < 0 ? best_of(c) : cand_index(c, c0->c[pick].alg, c0->c[pick].seg);
    }
}

static void decide(grid_t *g)
{
    for (int i = 0; i < g->n; i++) g->cell[i].pick = -2;
    for (int i = 0; i < g->n; i++) {
        if (g->cell[i].pick != -2) continue;
        if (bytes_free(g->cell[i].coll)) decide_bytes_free(g, i);
        else g->cell[i].pick = pick_of(&g->cell[i]);
    }
}

/* ---------------------------------------------------------------- rules files */
static int cmp_cell(const void *a, const void *b)
{
    const cell_t *x = a, *y = b;
    int c = strcmp(x->coll, y->coll);
    if (c) return c;
    if (x->p != y->p) return x->p - y->p;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static void sort_grid(grid_t *g) { qsort(g->cell, (size_t)g->n, sizeof *g->cell, cmp_cell); }

static int next_p(const grid_t *g, int i)
{
    for (int j = i + 1; j < g->n; j++)
        if (strcmp(g->cell[j].coll, g->cell[i].coll)) return -1;
        else if (g->cell[j].p != g->cell[i].p) return g->cell[j].p;
    return -1;
}

static int first_p(const grid_t *g, int i)
{
    return i == 0 || strcmp(g->cell[i - 1].coll, g->cell[i].coll);
}

static void seg_str(long seg, char *buf, size_t n)
{
    if (seg < 0) snprintf(buf, n, "-");
    else snprintf(buf, n, "%ld", seg);
}

/* Rows of one (coll, p) block [i, j): equal neighbouring decisions merged. */
static void write_block(FILE *f, const grid_t *g, int i, int j, int plo, int phi)
{
    char ranks[32], seg[32];
    if (phi < 0) snprintf(ranks, sizeof ranks, "%d-*", plo);
    else if (phi == plo) snprintf(ranks, sizeof ranks, "%d", plo);
    else snprintf(ranks, sizeof ranks, "%d-%d", plo, phi);
    if (bytes_free(g->cell[i].coll)) {
        const cell_t *c = &g->cell[i];
        if (c->pick >= 0) {
            seg_str(c->c[c->pick].seg, seg, sizeof seg);
            fprintf(f, "%-21s %-6s %-20s %-20s %s\n", c->coll, ranks, "*", c->c[c->pick].alg, seg);
        }
        return;
    }
    double lo = 0;
    for (int k = i; k < j; k++) {
        const cell_t *c = &g->cell[k];
        if (c->pick < 0) continue;
        int e = k;
        while (e + 1 < j && g->cell[e + 1].pick >= 0 &&
               !strcmp(g->cell[e + 1].c[g->cell[e + 1].pick].alg, c->c[c->pick].alg) &&
               g->cell[e + 1].c[g->cell[e + 1].pick].seg == c->c[c->pick].seg)
            e++;
        char bytes[64];
        if (e + 1 >= j) snprintf(bytes, sizeof bytes, "%.0f-*", lo);
        else {
            double hi = floor(sqrt(fmax(g->cell[e].bytes, 1) * g->cell[e + 1].bytes));
            snprintf(bytes, sizeof bytes, "%.0f-%.0f", lo, hi);
            lo = hi + 1;
        }
        seg_str(c->c[c->pick].seg, seg, sizeof seg);
        fprintf(f, "%-21s %-6s %-20s %-20s %s\n", c->coll, ranks, bytes, c->c[c->pick].alg, seg);
        k = e;
    }
}

static int write_rules(grid_t *g, const char *path, const char *what)
{
    FILE *f = fopen(path, "w");
    if (!f) return perror(path), -1;
    sort_grid(g);
    fprintf(f, "# mcoll rules (MCOLL_RULES=%s): %s\n", path, what);
    fprintf(f, "# collective  ranks  bytes  algorithm  segsize\n");
    for (int i = 0; i < g->n;) {
        int j = i;
        while (j < g->n && g->cell[j].p == g->cell[i].p && !strcmp(g->cell[j].coll, g->cell[i].coll)) j++;
        write_block(f, g, i, j, first_p(g, i) ? 1 : g->cell[i].p, next_p(g, i) < 0 ? -1 : next_p(g, i) - 1);
        i = j;
    }
    if (fclose(f)) return -1;
    /* the library's own parser must accept what was written */
    mc_rules_t r;
    char err[512];
    if (mc_rules_load(path, &r, err, sizeof err)) return fprintf(stderr, "mcoll-tune: %s\n", err), -1;
    mc_rules_free(&r);
    return 0;
}

int tune_write_measured_rules(const tune_csv_t *c, const char *path)
{
    grid_t g;
    int rc = grid_from_csv(c, &g);
    if (!rc) decide(&g);
    if (!rc) rc = write_rules(&g, path, "measured best of `mcoll-tune sweep`");
    free(g.cell);
    return rc;
}

/* ---------------------------------------------------------------- models */
typedef struct mopt {
    const char *profile, *csv, *out, *models;
    mc_level_t level;
    long ranks[16], segs[8];
    int nranks, nsegs;
    long min, max, step;
} mopt_t;

/* Algorithms that can run at this level: one node has no hier/mo ones, nodes of one rank
 * no shm ones. */
static int runs_at(const char *alg, mc_level_t lv)
{
    int multi = !strncmp(alg, "hier", 4) || !strncmp(alg, "mo", 2);
    return lv == MC_LEVEL_INTRA ? !multi : strncmp(alg, "shm", 3) != 0;
}

/* Model cost of candidate x in cell c; xmap as in mc_cost_in_t (0: the profile's CMA start-up,
 * ordinary buffers; -1: buffers in the shared heap, zero copy). */
static double model_cost(const cell_t *c, const cand_t *x, mc_model_t m, const mc_profile_t *prof, mc_level_t lv,
                         double xmap)
{
    int ci = mc_coll_from_name(c->coll);
    const mc_alg_t *a = ci < 0 ? NULL : mc_alg_find((mc_coll_t)ci, x->alg);
    if (!a) return INFINITY;
    mc_cost_in_t in = {.p = c->p, .m = c->bytes, .ms = x->seg > 0 && x->seg < c->bytes ? (double)x->seg : c->bytes,
                       .radix = 4, .sockets = 1, .nodes = lv == MC_LEVEL_INTRA ? 1 : c->p, .xmap = xmap};
    double t = mc_cost_eval(a, m, prof, lv, &in); /* shared-memory ones: DAV line (model.h) */
    return isfinite(t) && t >= 0 ? t : INFINITY;
}

/* The model's grid: the measured cells with model costs in place of the times. */
static int model_grid(const grid_t *meas, grid_t *g, mc_model_t m, const mc_profile_t *prof, mc_level_t lv)
{
    g->n = g->cap = meas->n;
    g->cell = malloc((size_t)(meas->n ? meas->n : 1) * sizeof *g->cell);
    if (!g->cell) return -1;
    memcpy(g->cell, meas->cell, (size_t)meas->n * sizeof *g->cell);
    for (int i = 0; i < g->n; i++)
        for (int k = 0; k < g->cell[i].n; k++) {
            cand_t *x = &g->cell[i].c[k];
            x->v = model_cost(&g->cell[i], x, m, prof, lv, 0);
            /* zero copy on one node only, as the run-time selection */
            x->v0 = lv == MC_LEVEL_INTRA ? model_cost(&g->cell[i], x, m, prof, lv, -1) : x->v;
            if (!isfinite(x->v0)) x->v0 = x->v;
        }
    decide(g);
    return 0;
}

/* Without a CSV: the grid of ranks x sizes with every registered algorithm that runs at
 * the level (segmented ones unsegmented and at each segment size below the message). */
static int synth_grid(const mopt_t *o, grid_t *g)
{
    memset(g, 0, sizeof *g);
    for (int ci = 0; ci < MC_NCOLL; ci++) {
        const char *coll = mc_coll_name((mc_coll_t)ci);
        int sized = strcmp(coll, "barrier") != 0;
        for (int r = 0; r < o->nranks; r++)
            for (long m = sized ? o->min : 0;; m = m * o->step > o->max && m < o->max ? o->max : m * o->step) {
                cell_t *c = find_cell(g, coll, (int)o->ranks[r], (double)m, 1);
                if (!c) return -1;
                for (int k = 0; k < mc_alg_count((mc_coll_t)ci); k++) {
                    const mc_alg_t *a = mc_alg_at((mc_coll_t)ci, k);
                    if (!runs_at(a->name, o->level)) continue;
                    int sg = a->flags & MC_ALG_SEGMENTED;
                    add_cand(c, a->name, sg ? 0 : -1, 0);
                    for (int s = 0; sg && s < o->nsegs; s++)
                        if (o->segs[s] < m) add_cand(c, a->name, o->segs[s], 0);
                }
                if (!sized || m >= o->max) break;
            }
    }
    return 0;
}

static int load_profile(const char *path, mc_profile_t *p)
{
    char err[512];
    if (!path) return mc_profile_default(p), 0;
    if (mc_profile_load(path, p, err, sizeof err)) return fprintf(stderr, "mcoll-tune: %s\n", err), -1;
    return 0;
}

static int mparse(int argc, char **argv, mopt_t *o)
{
    memset(o, 0, sizeof *o);
    o->models = "hockney,loggp,plogp";
    o->min = 8, o->max = 4 << 20, o->step = 4;
    o->nranks = 3, o->ranks[0] = 2, o->ranks[1] = 3, o->ranks[2] = 4;
    o->nsegs = 2, o->segs[0] = 8192, o->segs[1] = 65536;
    for (int i = 0; i + 1 < argc; i += 2) {
        const char *f = argv[i], *v = argv[i + 1];
        if (!strcmp(f, "--profile")) o->profile = v;
        else if (!strcmp(f, "--csv")) o->csv = v;
        else if (!strcmp(f, "--out")) o->out = v;
        else if (!strcmp(f, "--model") || !strcmp(f, "--models")) o->models = v;
        else if (!strcmp(f, "--level")) o->level = !strcmp(v, "inter") ? MC_LEVEL_INTER : MC_LEVEL_INTRA;
        else if (!strcmp(f, "--ranks")) o->nranks = tune_parse_list(v, o->ranks, 16);
        else if (!strcmp(f, "--segs")) o->nsegs = tune_parse_list(v, o->segs, 8);
        else if (!strcmp(f, "--min")) o->min = tune_parse_size(v);
        else if (!strcmp(f, "--max")) o->max = tune_parse_size(v);
        else if (!strcmp(f, "--step")) o->step = atol(v);
        else return -1;
    }
    return argc % 2 || o->nranks < 1 || o->nsegs < 0 || o->min < 1 || o->max < o->min || o->step < 2 ? -1 : 0;
}

int tune_rules_main(int argc, char **argv)
{
    mopt_t o;
    tune_csv_t c;
    if (mparse(argc, argv, &o) || !o.csv || !o.out)
        return fprintf(stderr, "usage: mcoll-tune rules --csv SWEEP.csv --out FILE\n"), 2;
    if (tune_csv_read(o.csv, &c)) return 1;
    int rc = tune_write_measured_rules(&c, o.out);
    tune_csv_free(&c);
    if (!rc) printf("wrote %s\n", o.out);
    return rc ? 1 : 0;
}

int tune_model_main(int argc, char **argv)
{
    mopt_t o;
    mc_profile_t prof;
    grid_t base = {0}, g = {0};
    tune_csv_t c = {0};
    int m;
    if (mparse(argc, argv, &o) || !o.out || (m = mc_model_from_name(o.models)) < 0) {
        fprintf(stderr, "usage: mcoll-tune model --profile P --model hockney|loggp|plogp --out FILE\n"
                        "         [--csv SWEEP.csv | --ranks 2,3,4 --min 8 --max 4M --step 4 --segs 8k,64k]"
                        " [--level intra|inter]\n");
        return 2;
    }
    if (load_profile(o.profile, &prof)) return 1;
    int rc = o.csv ? tune_csv_read(o.csv, &c) || grid_from_csv(&c, &base) : synth_grid(&o, &base);
    if (!rc) rc = model_grid(&base, &g, (mc_model_t)m, &prof, o.level);
    char what[160];
    snprintf(what, sizeof what, "%s model, profile %s (%s level)", o.models, prof.name,
             o.level == MC_LEVEL_INTRA ? "intra" : "inter");
    if (!rc) rc = write_rules(&g, o.out, what);
    if (!rc) printf("wrote %s\n", o.out);
    free(base.cell);
    free(g.cell);
    tune_csv_free(&c);
    return rc ? 1 : 0;
}

/* ---------------------------------------------------------------- penalty */
#define MAXM 4
typedef struct pen {
    char name[TUNE_NAME];
    double *pct; /* per measured cell; NAN where undefined */
} pen_t;

/* % over the measured best of the measured time of what `g` picked in each cell. */
static void penalties(const grid_t *meas, const grid_t *g, double *pct)
{
    for (int i = 0; i < meas->n; i++) {
        const cell_t *c = &meas->cell[i];
        int b = best_of(c), k = g->cell[i].pick;
        pct[i] = b < 0 || k < 0 ? NAN : 100.0 * (c->c[k].v / c->c[b].v - 1);
    }
}

static void builtin_penalties(const grid_t *meas, double *pct)
{
    for (int i = 0; i < meas->n; i++) {
        const cell_t *c = &meas->cell[i];
        int b = best_of(c);
        pct[i] = b < 0 || c->t_default <= 0 ? NAN : 100.0 * (c->t_default / c->c[b].v - 1);
    }
}

static void print_table(FILE *f, const grid_t *meas, const pen_t *pen, int np)
{
    fprintf(f, "| collective |");
    for (int k = 0; k < np; k++) fprintf(f, " %s mean / max %% (<=10%%) |", pen[k].name);
    fprintf(f, "\n|---|");
    for (int k = 0; k < np; k++) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < meas->n; i++) {
            const char *coll = meas->cell[i].coll;
            if (pass == 0 && i && !strcmp(coll, meas->cell[i - 1].coll)) continue;
            if (pass == 1 && i) break;
            fprintf(f, "| %s |", pass ? "**all**" : coll);
            for (int k = 0; k < np; k++) {
                double s = 0, mx = 0;
                int n = 0, ok = 0;
                for (int j = 0; j < meas->n; j++) {
                    if ((!pass && strcmp(meas->cell[j].coll, coll)) || isnan(pen[k].pct[j])) continue;
                    s += pen[k].pct[j], n++, ok += pen[k].pct[j] <= 10;
                    if (pen[k].pct[j] > mx) mx = pen[k].pct[j];
                }
                if (n) fprintf(f, " %.1f / %.0f (%d/%d) |", s / n, mx, ok, n);
                else fprintf(f, " - |");
            }
            fprintf(f, "\n");
        }
}

/* Rows (coll, p) x columns (sizes): ' ' < 5 %, '.' < 10, 'o' < 25, 'O' < 50, '#' >= 50. */
static void print_ascii(FILE *f, const grid_t *meas, const pen_t *pen)
{
    fprintf(f, "%s: ' ' <5%%  . <10%%  o <25%%  O <50%%  # >=50%%; columns: sizes ascending\n", pen->name);
    for (int i = 0; i < meas->n;) {
        int j = i;
        fprintf(f, "  %-21s p=%-3d ", meas->cell[i].coll, meas->cell[i].p);
        while (j < meas->n && meas->cell[j].p == meas->cell[i].p && !strcmp(meas->cell[j].coll, meas->cell[i].coll)) {
            double x = pen->pct[j++];
            fputc(isnan(x) ? '?' : x < 5 ? ' ' : x < 10 ? '.' : x < 25 ? 'o' : x < 50 ? 'O' : '#', f);
        }
        fprintf(f, "|\n");
        i = j;
    }
}

/* Heat map (paper Fig. 7): one panel per decision function; x = log2 bytes, y = (coll, p). */
static int plot(const grid_t *meas, const pen_t *pen, int np, const char *png)
{
    char dat[1024], gp[1024];
    snprintf(dat, sizeof dat, "%s.dat", png);
    snprintf(gp, sizeof gp, "%s.gp", png);
    FILE *d = fopen(dat, "w"), *s = fopen(gp, "w");
    if (!d || !s) return d ? fclose(d) : 0, s ? fclose(s) : 0, -1;
    int nrow = 0;
    double hw = 1e9; /* half the smallest distance between size columns */
    for (int i = 0; i < meas->n; i++)
        for (int j = 0; j < meas->n; j++)
            if (meas->cell[j].bytes > meas->cell[i].bytes && meas->cell[i].bytes > 0)
                hw = fmin(hw, 0.5 * log2(meas->cell[j].bytes / meas->cell[i].bytes));
    if (hw > 1e8) hw = 0.5;
    fprintf(s, "set terminal pngcairo size %d,%d font ',8'\nset output '%s'\n", 330 * np + 120, 900, png);
    fprintf(s, "set palette defined (0 'white', 5 'white', 10 '#ffe0a0', 50 '#ff6000', 100 '#800000')\n");
    fprintf(s, "set cbrange [0:100]\nset xlabel 'log2 bytes per rank'\nset yrange [-0.5:*] reverse\n"
               "set ytics (");
    for (int i = 0; i < meas->n; i++) {
        if (i && meas->cell[i].p == meas->cell[i - 1].p && !strcmp(meas->cell[i].coll, meas->cell[i - 1].coll)) continue;
        fprintf(s, "%s'%s %d' %d", nrow ? ", " : "", meas->cell[i].coll, meas->cell[i].p, nrow);
        nrow++;
    }
    fprintf(s, ")\nset multiplot layout 1,%d title 'mcoll: %% over the measured best (clipped at 100)'\n", np);
    for (int k = 0; k < np; k++) {
        int row = -1;
        fprintf(d, "# %s\n", pen[k].name);
        for (int i = 0; i < meas->n; i++) {
            const cell_t *c = &meas->cell[i];
            if (!i || c->p != c[-1].p || strcmp(c->coll, c[-1].coll)) row++;
            if (!isnan(pen[k].pct[i]))
                fprintf(d, "%g %d %g\n", c->bytes > 0 ? log2(c->bytes) : -1, row, fmin(100, pen[k].pct[i]));
        }
        fprintf(d, "\n\n");
        fprintf(s, "%s\nset title '%s'\nplot '%s' index %d using 1:2:(%g):(0.5):3 with boxxyerror fs solid "
                   "fc palette notitle\n",
                k ? "set ytics format ''" : "", pen[k].name, dat, k, hw);
    }
    fprintf(s, "unset multiplot\n");
    fclose(d);
    fclose(s);
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>&1", gp);
    return system(cmd) == 0 ? 0 : -1;
}

int tune_compare_main(int argc, char **argv)
{
    const char *csvp = NULL, *prof_path = NULL, *png = NULL, *table = NULL, *pcsv = NULL, *models = "hockney,loggp,plogp";
    mc_level_t lv = MC_LEVEL_INTRA;
    for (int i = 0; i + 1 < argc; i += 2) {
        const char *f = argv[i], *v = argv[i + 1];
        if (!strcmp(f, "--csv")) csvp = v;
        else if (!strcmp(f, "--profile")) prof_path = v;
        else if (!strcmp(f, "--png")) png = v;
        else if (!strcmp(f, "--table")) table = v;
        else if (!strcmp(f, "--penalty-csv")) pcsv = v;
        else if (!strcmp(f, "--models")) models = v;
        else if (!strcmp(f, "--level")) lv = !strcmp(v, "inter") ? MC_LEVEL_INTER : MC_LEVEL_INTRA;
        else argc = -1;
    }
    if (argc < 0 || argc % 2 || !csvp) {
        fprintf(stderr, "usage: mcoll-tune compare --csv SWEEP.csv [--profile P] [--models hockney,loggp,plogp]\n"
                        "         [--table FILE] [--png FILE] [--penalty-csv FILE] [--level intra|inter]\n");
        return 2;
    }
    mc_profile_t prof;
    tune_csv_t csv;
    grid_t meas;
    if (load_profile(prof_path, &prof) || tune_csv_read(csvp, &csv)) return 1;
    if (grid_from_csv(&csv, &meas)) return 1;
    sort_grid(&meas);
    decide(&meas);
    pen_t pen[MAXM + 1];
    int np = 0, rc = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", models);
    for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t && np < MAXM; t = strtok_r(NULL, ",", &sv)) {
        int m = mc_model_from_name(t);
        grid_t g;
        if (m < 0) return fprintf(stderr, "mcoll-tune: unknown model %s\n", t), 2;
        snprintf(pen[np].name, TUNE_NAME, "%s", t);
        pen[np].pct = calloc((size_t)meas.n + 1, sizeof(double));
        if (model_grid(&meas, &g, (mc_model_t)m, &prof, lv)) return 1;
        penalties(&meas, &g, pen[np++].pct);
        free(g.cell);
    }
    snprintf(pen[np].name, TUNE_NAME, "builtin");
    pen[np].pct = calloc((size_t)meas.n + 1, sizeof(double));
    builtin_penalties(&meas, pen[np++].pct);
    FILE *f = table ? fopen(table, "w") : NULL;
    printf("# penalty of each decision function over the measured best (profile %s, %s level)\n", prof.name,
           lv == MC_LEVEL_INTRA ? "intra" : "inter");
    print_table(stdout, &meas, pen, np);
    if (f) {
        fprintf(f, "# mcoll-tune compare: %% over the measured best; mean / max, (cells within 10%%)/cells\n"
                   "# profile %s; sweep %s\n\n", prof.name, csvp);
        print_table(f, &meas, pen, np);
        fprintf(f, "\n");
        for (int k = 0; k < np; k++) print_ascii(f, &meas, &pen[k]);
        fclose(f);
        printf("wrote %s\n", table);
    }
    if (pcsv && (f = fopen(pcsv, "w"))) {
        fprintf(f, "coll,p,bytes,best_alg,best_seg,best_us,decision,alg,seg,pct\n");
        for (int k = 0; k < np; k++) {
            grid_t g = {0};
            int m = mc_model_from_name(pen[k].name);
            if (m >= 0) model_grid(&meas, &g, (mc_model_t)m, &prof, lv);
            for (int i = 0; i < meas.n; i++) {
                const cell_t *c = &meas.cell[i];
                int b = best_of(c), x = m >= 0 ? g.cell[i].pick : -1;
                if (b < 0) continue;
                fprintf(f, "%s,%d,%.0f,%s,%ld,%.3f,%s,%s,%ld,%.1f\n", c->coll, c->p, c->bytes, c->c[b].alg, c->c[b].seg,
                        c->c[b].v, pen[k].name, x >= 0 ? c->c[x].alg : m >= 0 ? "-" : c->dflt,
                        x >= 0 ? c->c[x].seg : -1, pen[k].pct[i]);
            }
            free(g.cell);
        }
        fclose(f);
        printf("wrote %s\n", pcsv);
    }
    if (png) {
        if (plot(&meas, pen, np, png)) {
            fprintf(stderr, "mcoll-tune: gnuplot could not write %s; the ASCII map is in the table file\n", png);
            rc = table ? 0 : 1;
        } else {
            printf("wrote %s\n", png);
        }
    }
    for (int k = 0; k < np; k++) free(pen[k].pct);
    free(meas.cell);
    tune_csv_free(&csv);
    return rc;
}
