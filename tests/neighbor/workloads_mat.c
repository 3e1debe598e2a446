/* Global sparse matrices for the neighbor workloads: Matrix Market I/O and generators.
 * No MPI here, so the generator tool and the unit test use it without a launcher. */
#define NB_WORKLOADS_NO_MPI
#include "workloads.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MM_LINE 1024

void wl_csr_free(wl_csr_t *a)
{
    if (!a) return;
    free(a->rowptr);
    free(a->col);
    free(a->val);
    memset(a, 0, sizeof(*a));
}

/* ---------------------------------------------------------------- coordinate lists ---- */

typedef struct coo {
    int64_t n, cap;
    int64_t *i, *j;
    double *v;
} coo_t;

static void coo_free(coo_t *c)
{
    free(c->i);
    free(c->j);
    free(c->v);
    memset(c, 0, sizeof(*c));
}

static int coo_push(coo_t *c, int64_t i, int64_t j, double v)
{
    if (c->n == c->cap) {
        int64_t cap = c->cap ? 2 * c->cap : 1024;
        int64_t *ni = realloc(c->i, (size_t)cap * sizeof(*ni));
        if (ni) c->i = ni;
        int64_t *nj = realloc(c->j, (size_t)cap * sizeof(*nj));
        if (nj) c->j = nj;
        double *nv = realloc(c->v, (size_t)cap * sizeof(*nv));
        if (nv) c->v = nv;
        if (!ni || !nj || !nv) return -1;
        c->cap = cap;
    }
    c->i[c->n] = i;
    c->j[c->n] = j;
    c->v[c->n] = v;
    c->n++;
    return 0;
}

/* Counting sort by row, then sort each row by column and sum duplicates. */
static int coo_to_csr(const coo_t *c, int64_t nrows, int64_t ncols, wl_csr_t *a)
{
    memset(a, 0, sizeof(*a));
    a->nrows = nrows;
    a->ncols = ncols;
    a->rowptr = calloc((size_t)nrows + 1, sizeof(int64_t));
    a->col = malloc((size_t)(c->n ? c->n : 1) * sizeof(int64_t));
    a->val = malloc((size_t)(c->n ? c->n : 1) * sizeof(double));
    int64_t *fill = malloc(((size_t)nrows + 1) * sizeof(int64_t));
    if (!a->rowptr || !a->col || !a->val || !fill) goto fail;
    for (int64_t k = 0; k < c->n; k++) a->rowptr[c->i[k] + 1]++;
    for (int64_t r = 0; r < nrows; r++) a->rowptr[r + 1] += a->rowptr[r];
    memcpy(fill, a->rowptr, ((size_t)nrows + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < c->n; k++) {
        int64_t at = fill[c->i[k]]++;
        a->col[at] = c->j[k];
        a->val[at] = c->v[k];
    }
    /* insertion sort per row (rows are short) and merge in place */
    int64_t out = 0;
    for (int64_t r = 0; r < nrows; r++) {
        int64_t b = a->rowptr[r], e = a->rowptr[r + 1];
        for (int64_t k = b + 1; k < e; k++) {
            int64_t cj = a->col[k];
            double cv = a->val[k];
            int64_t m = k;
            for (; m > b && a->col[m - 1] > cj; m--) {
                a->col[m] = a->col[m - 1];
                a->val[m] = a->val[m - 1];
            }
            a->col[m] = cj;
            a->val[m] = cv;
        }
        a->rowptr[r] = out;
        for (int64_t k = b; k < e; k++) {
            if (out > a->rowptr[r] && a->col[out - 1] == a->col[k]) {
                a->val[out - 1] += a->val[k];
            } else {
                a->col[out] = a->col[k];
                a->val[out] = a->val[k];
                out++;
            }
        }
    }
    a->rowptr[nrows] = out;
    free(fill);
    return 0;
fail:
    free(fill);
    wl_csr_free(a);
    return -1;
}

/* ---------------------------------------------------------------- Matrix Market ---- */

typedef struct mm_reader {
    FILE *f;
    const char *name;
    long line;
    char *err;
    size_t errlen;
} mm_reader_t;

static int mm_fail(mm_reader_t *r, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (r->err && r->errlen) snprintf(r->err, r->errlen, "%s:%ld: %s", r->name, r->line, msg);
    return -1;
}

/* Next line into buf; 1 = got one, 0 = EOF, -1 = error (too long, embedded NUL). */
static int mm_getline(mm_reader_t *r, char *buf)
{
    if (!fgets(buf, MM_LINE, r->f)) return ferror(r->f) ? mm_fail(r, "read error") : 0;
    r->line++;
    size_t len = strlen(buf);
    if (len == MM_LINE - 1 && buf[len - 1] != '\n' && !feof(r->f))
        return mm_fail(r, "line longer than %d characters", MM_LINE - 2);
    return 1;
}

static int blank(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return *s == '\0';
}

enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW };

static int mm_banner(mm_reader_t *r, char *buf, int *pattern, int *sym)
{
    char obj[32], fmt[32], field[32], symm[32], extra[2];
    int got = mm_getline(r, buf);
    if (got <= 0) return got < 0 ? -1 : mm_fail(r, "empty file (no %%%%MatrixMarket banner)");
    if (strncasecmp(buf, "%%MatrixMarket", 14) != 0)
        return mm_fail(r, "first line is not a %%%%MatrixMarket banner");
    int n = sscanf(buf + 14, "%31s %31s %31s %31s %1s", obj, fmt, field, symm, extra);
    if (n != 4) return mm_fail(r, "banner needs: matrix coordinate <field> <symmetry>");
    if (strcasecmp(obj, "matrix") != 0) return mm_fail(r, "object '%s' is not 'matrix'", obj);
    if (strcasecmp(fmt, "coordinate") != 0)
        return mm_fail(r, "format '%s' unsupported (only 'coordinate')", fmt);
    if (strcasecmp(field, "real") && strcasecmp(field, "double") && strcasecmp(field, "integer") &&
        strcasecmp(field, "pattern"))
        return mm_fail(r, "field '%s' unsupported (real, integer or pattern)", field);
    *pattern = strcasecmp(field, "pattern") == 0;
    if (!strcasecmp(symm, "general"))
        *sym = MM_GENERAL;
    else if (!strcasecmp(symm, "symmetric"))
        *sym = MM_SYMMETRIC;
    else if (!strcasecmp(symm, "skew-symmetric"))
        *sym = MM_SKEW;
    else
        return mm_fail(r, "symmetry '%s' unsupported (general, symmetric, skew-symmetric)", symm);
    return 0;
}

/* Skips comments and blank lines; 1 = data line in buf, 0 = EOF. */
static int mm_data_line(mm_reader_t *r, char *buf)
{
    for (;;) {
        int got = mm_getline(r, buf);
        if (got <= 0) return got;
        if (buf[0] != '%' && !blank(buf)) return 1;
    }
}

/* Parses a non-negative integer token; advances *s. */
static int parse_i64(char **s, int64_t *out)
{
    char *end;
    while (isspace((unsigned char)**s)) (*s)++;
    if (!isdigit((unsigned char)**s)) return -1;
    errno = 0;
    long long v = strtoll(*s, &end, 10);
    if (errno || end == *s) return -1;
    *out = v;
    *s = end;
    return 0;
}

static int parse_real(char **s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(*s, &end);
    if (end == *s || (errno == ERANGE && fabs(v) > 1.0)) return -1;
    *out = v;
    *s = end;
    return 0;
}

static int mm_size(mm_reader_t *r, char *buf, int64_t *m, int64_t *n, int64_t *nnz)
{
    int got = mm_data_line(r, buf);
    if (got <= 0) return got < 0 ? -1 : mm_fail(r, "missing size line (rows cols entries)");
    char *s = buf;
    if (parse_i64(&s, m) || parse_i64(&s, n) || parse_i64(&s, nnz) || !blank(s))
        return mm_fail(r, "size line must be three non-negative integers: rows cols entries");
    if (*m < 1 || *n < 1 || *m > INT32_MAX || *n > INT32_MAX)
        return mm_fail(r, "dimensions %lld x %lld out of range 1..2^31-1", (long long)*m, (long long)*n);
    if (*nnz > *m * *n) return mm_fail(r, "%lld entries exceed rows*cols", (long long)*nnz);
    return 0;
}

static int mm_entry(mm_reader_t *r, char *buf, int64_t m, int64_t n, int pattern, int64_t *i, int64_t *j,
                    double *v)
{
    char *s = buf;
    if (parse_i64(&s, i) || parse_i64(&s, j))
        return mm_fail(r, "expected 'row col%s'", pattern ? "" : " value");
    if (*i < 1 || *i > m || *j < 1 || *j > n)
        return mm_fail(r, "index (%lld, %lld) outside 1..%lld x 1..%lld", (long long)*i, (long long)*j,
                       (long long)m, (long long)n);
    *v = 1.0;
    if (!pattern && parse_real(&s, v)) return mm_fail(r, "missing or malformed value");
    if (!blank(s)) return mm_fail(r, "unexpected text after the entry");
    return 0;
}

static int mm_entries(mm_reader_t *r, char *buf, int64_t m, int64_t n, int64_t nnz, int pattern, int sym,
                      coo_t *c)
{
    int64_t i = 0, j = 0, k = 0;
    double v = 0.0;
    int got;
    while ((got = mm_data_line(r, buf)) > 0) {
        if (k == nnz) return mm_fail(r, "more entries than the %lld announced", (long long)nnz);
        if (mm_entry(r, buf, m, n, pattern, &i, &j, &v)) return -1;
        if (sym != MM_GENERAL && j > i)
            return mm_fail(r, "entry above the diagonal in a %s file",
                           sym == MM_SKEW ? "skew-symmetric" : "symmetric");
        if (coo_push(c, i - 1, j - 1, v)) return mm_fail(r, "out of memory");
        if (sym != MM_GENERAL && i != j && coo_push(c, j - 1, i - 1, sym == MM_SKEW ? -v : v))
            return mm_fail(r, "out of memory");
        k++;
    }
    if (got < 0) return -1;
    if (k != nnz) return mm_fail(r, "file ends after %lld of %lld entries", (long long)k, (long long)nnz);
    return 0;
}

int wl_mm_read_stream(FILE *f, const char *name, wl_csr_t *a, char *err, size_t errlen)
{
    mm_reader_t r = {f, name ? name : "(stream)", 0, err, errlen};
    char *buf = malloc(MM_LINE);
    coo_t c = {0};
    int pattern = 0, sym = 0, rc = -1;
    int64_t m = 0, n = 0, nnz = 0; /* set by mm_size; initialized for -O3, which cannot see that */
    memset(a, 0, sizeof(*a));
    if (!buf) return mm_fail(&r, "out of memory");
    if (mm_banner(&r, buf, &pattern, &sym) || mm_size(&r, buf, &m, &n, &nnz)) goto out;
    if (sym != MM_GENERAL && m != n) {
        mm_fail(&r, "a symmetric matrix must be square (%lld x %lld)", (long long)m, (long long)n);
        goto out;
    }
    if (mm_entries(&r, buf, m, n, nnz, pattern, sym, &c)) goto out;
    if (coo_to_csr(&c, m, n, a)) {
        mm_fail(&r, "out of memory");
        goto out;
    }
    if (pattern) {
        free(a->val);
        a->val = NULL;
    }
    rc = 0;
out:
    coo_free(&c);
    free(buf);
    return rc;
}

int wl_mm_read(const char *path, wl_csr_t *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof(*a));
    FILE *f = fopen(path, "r");
    if (!f) {
        if (err && errlen) snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = wl_mm_read_stream(f, path, a, err, errlen);
    fclose(f);
    return rc;
}

int wl_mm_write(FILE *f, const wl_csr_t *a, int symmetric, const char *comment)
{
    int64_t cnt = 0;
    for (int64_t r = 0; r < a->nrows; r++)
        for (int64_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) cnt += !symmetric || a->col[k] <= r;
    fprintf(f, "%%%%MatrixMarket matrix coordinate %s %s\n", a->val ? "real" : "pattern",
            symmetric ? "symmetric" : "general");
    if (comment) {
        const char *s = comment;
        while (*s) {
            const char *e = strchr(s, '\n');
            int len = e ? (int)(e - s) : (int)strlen(s);
            fprintf(f, "%% %.*s\n", len, s);
            s += len + (e != NULL);
        }
    }
    fprintf(f, "%lld %lld %lld\n", (long long)a->nrows, (long long)a->ncols, (long long)cnt);
    for (int64_t r = 0; r < a->nrows; r++)
        for (int64_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
            if (symmetric && a->col[k] > r) continue;
            if (a->val)
                fprintf(f, "%lld %lld %.8g\n", (long long)r + 1, (long long)a->col[k] + 1, a->val[k]);
            else
                fprintf(f, "%lld %lld\n", (long long)r + 1, (long long)a->col[k] + 1);
        }
    return ferror(f) ? -1 : 0;
}

/* ---------------------------------------------------------------- grids ---- */

static uint64_t morton_key(uint32_t x, uint32_t y)
{
    uint64_t k = 0;
    for (int b = 0; b < 32; b++)
        k |= ((uint64_t)((x >> b) & 1) << (2 * b)) | ((uint64_t)((y >> b) & 1) << (2 * b + 1));
    return k;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int wl_grid_init(wl_grid_t *g, int nx, int ny, int morton)
{
    int64_t n = (int64_t)nx * ny;
    g->nx = nx;
    g->ny = ny;
    g->morton = morton;
    g->index = malloc((size_t)n * sizeof(int64_t));
    if (!g->index) return -1;
    if (!morton) {
        for (int64_t p = 0; p < n; p++) g->index[p] = p;
        return 0;
    }
    /* row of a point = rank of its Z-order key among all keys (handles any nx, ny) */
    uint64_t *keys = malloc((size_t)n * sizeof(uint64_t));
    if (!keys) return -1;
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) keys[x + (int64_t)nx * y] = morton_key(x, y);
    qsort(keys, (size_t)n, sizeof(uint64_t), cmp_u64);
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            uint64_t k = morton_key(x, y);
            uint64_t *at = bsearch(&k, keys, (size_t)n, sizeof(uint64_t), cmp_u64);
            g->index[x + (int64_t)nx * y] = at - keys;
        }
    free(keys);
    return 0;
}

void wl_grid_free(wl_grid_t *g)
{
    free(g->index);
    g->index = NULL;
}

/* ---------------------------------------------------------------- operators ---- */

int wl_rotaniso(const wl_grid_t *g, double eps, double theta_deg, int npts, wl_csr_t *a)
{
    double th = theta_deg * M_PI / 180.0, c = cos(th), s = sin(th);
    /* -(A u_xx + 2B u_xy + C u_yy), h^2 scaled */
    double A = c * c + eps * s * s, C = s * s + eps * c * c, B = (1.0 - eps) * c * s;
    double st[3][3]; /* [dy+1][dx+1] */
    memset(st, 0, sizeof(st));
    if (npts == 9) {
        st[1][1] = 2 * A + 2 * C;
        st[1][0] = st[1][2] = -A;
        st[0][1] = st[2][1] = -C;
        st[2][2] = st[0][0] = -B / 2; /* NE, SW */
        st[2][0] = st[0][2] = B / 2;  /* NW, SE */
    } else if (npts == 7) {
        st[1][1] = 2 * A + 2 * C - 2 * B;
        st[1][0] = st[1][2] = -A + B;
        st[0][1] = st[2][1] = -C + B;
        st[2][2] = st[0][0] = -B;
    } else {
        return -1;
    }
    coo_t co = {0};
    for (int y = 0; y < g->ny; y++)
        for (int x = 0; x < g->nx; x++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int xx = x + dx, yy = y + dy;
                    double v = st[dy + 1][dx + 1];
                    if (v == 0.0 || xx < 0 || yy < 0 || xx >= g->nx || yy >= g->ny) continue;
                    if (coo_push(&co, g->index[x + (int64_t)g->nx * y], g->index[xx + (int64_t)g->nx * yy],
                                 v)) {
                        coo_free(&co);
                        return -1;
                    }
                }
    int64_t n = (int64_t)g->nx * g->ny;
    int rc = coo_to_csr(&co, n, n, a);
    coo_free(&co);
    return rc;
}

static int csr_alloc(wl_csr_t *a, int64_t nrows, int64_t ncols, int64_t nnz)
{
    memset(a, 0, sizeof(*a));
    a->nrows = nrows;
    a->ncols = ncols;
    a->rowptr = calloc((size_t)nrows + 1, sizeof(int64_t));
    a->col = malloc((size_t)(nnz ? nnz : 1) * sizeof(int64_t));
    a->val = malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
    if (a->rowptr && a->col && a->val) return 0;
    wl_csr_free(a);
    return -1;
}

static int csr_transpose(const wl_csr_t *a, wl_csr_t *t)
{
    int64_t nnz = wl_nnz(a);
    if (csr_alloc(t, a->ncols, a->nrows, nnz)) return -1;
    for (int64_t k = 0; k < nnz; k++) t->rowptr[a->col[k] + 1]++;
    for (int64_t r = 0; r < t->nrows; r++) t->rowptr[r + 1] += t->rowptr[r];
    int64_t *fill = malloc(((size_t)t->nrows + 1) * sizeof(int64_t));
    if (!fill) {
        wl_csr_free(t);
        return -1;
    }
    memcpy(fill, t->rowptr, ((size_t)t->nrows + 1) * sizeof(int64_t));
    for (int64_t r = 0; r < a->nrows; r++)
        for (int64_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
            int64_t at = fill[a->col[k]]++;
            t->col[at] = r; /* rows visited in order: columns of t come out sorted */
            t->val[at] = a->val ? a->val[k] : 1.0;
        }
    free(fill);
    return 0;
}

/* C = A B with a dense accumulator row (Gustavson); columns sorted per row. */
static int csr_mult(const wl_csr_t *a, const wl_csr_t *b, wl_csr_t *c)
{
    coo_t co = {0};
    double *acc = calloc((size_t)b->ncols, sizeof(double));
    int64_t *mark = malloc((size_t)b->ncols * sizeof(int64_t));
    int64_t *list = malloc((size_t)b->ncols * sizeof(int64_t));
    int rc = -1;
    if (!acc || !mark || !list) goto out;
    for (int64_t j = 0; j < b->ncols; j++) mark[j] = -1;
    for (int64_t r = 0; r < a->nrows; r++) {
        int64_t nl = 0;
        for (int64_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
            double av = a->val ? a->val[k] : 1.0;
            int64_t m = a->col[k];
            for (int64_t q = b->rowptr[m]; q < b->rowptr[m + 1]; q++) {
                int64_t j = b->col[q];
                if (mark[j] != r) {
                    mark[j] = r;
                    acc[j] = 0.0;
                    list[nl++] = j;
                }
                acc[j] += av * (b->val ? b->val[q] : 1.0);
            }
        }
        for (int64_t q = 0; q < nl; q++)
            if (coo_push(&co, r, list[q], acc[list[q]])) goto out;
    }
    rc = coo_to_csr(&co, a->nrows, b->ncols, c);
out:
    coo_free(&co);
    free(acc);
    free(mark);
    free(list);
    return rc;
}

/* Smoothed prolongator: P = (I - omega D^-1 A) P0, P0 = 2x2 aggregates of g. */
static int sa_prolongator(const wl_csr_t *a, const wl_grid_t *g, const wl_grid_t *gc, double omega,
                          wl_csr_t *p)
{
    coo_t co = {0};
    wl_csr_t p0 = {0}, s = {0};
    int rc = -1;
    for (int y = 0; y < g->ny; y++)
        for (int x = 0; x < g->nx; x++)
            if (coo_push(&co, g->index[x + (int64_t)g->nx * y], gc->index[x / 2 + (int64_t)gc->nx * (y / 2)],
                         1.0))
                goto out;
    if (coo_to_csr(&co, a->nrows, (int64_t)gc->nx * gc->ny, &p0)) goto out;
    coo_free(&co);
    /* S = I - omega D^-1 A */
    for (int64_t r = 0; r < a->nrows; r++) {
        double d = 0.0;
        for (int64_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++)
            if (a->col[k] == r) d = a->val[k];
        if (d == 0.0) d = 1.0;
        for (int64_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++)
            if (coo_push(&co, r, a->col[k], (a->col[k] == r ? 1.0 : 0.0) - omega * a->val[k] / d)) goto out;
    }
    if (coo_to_csr(&co, a->nrows, a->ncols, &s)) goto out;
    rc = csr_mult(&s, &p0, p);
out:
    coo_free(&co);
    wl_csr_free(&p0);
    wl_csr_free(&s);
    return rc;
}

int wl_sa_coarsen(const wl_csr_t *a, const wl_grid_t *g, double omega, wl_csr_t *ac, wl_grid_t *gc)
{
    wl_csr_t p = {0}, pt = {0}, ap = {0};
    int rc = -1;
    if (!a->val || a->nrows != (int64_t)g->nx * g->ny || a->ncols != a->nrows) return -1;
    if (wl_grid_init(gc, (g->nx + 1) / 2, (g->ny + 1) / 2, g->morton)) return -1;
    if (sa_prolongator(a, g, gc, omega, &p) || csr_transpose(&p, &pt) || csr_mult(a, &p, &ap) ||
        csr_mult(&pt, &ap, ac))
        goto out;
    rc = 0;
out:
    if (rc) wl_grid_free(gc);
    wl_csr_free(&p);
    wl_csr_free(&pt);
    wl_csr_free(&ap);
    return rc;
}

int wl_rotaniso_level(int nx, int ny, double eps, double theta_deg, int npts, int morton, int level,
                      wl_csr_t *a)
{
    wl_grid_t g = {0}, gc = {0};
    wl_csr_t cur = {0}, next = {0};
    if (wl_grid_init(&g, nx, ny, morton) || wl_rotaniso(&g, eps, theta_deg, npts, &cur)) goto fail;
    for (int l = 0; l < level; l++) {
        if (wl_sa_coarsen(&cur, &g, 2.0 / 3.0, &next, &gc)) goto fail;
        wl_csr_free(&cur);
        wl_grid_free(&g);
        cur = next;
        g = gc;
        memset(&next, 0, sizeof(next));
        memset(&gc, 0, sizeof(gc));
    }
    wl_grid_free(&g);
    *a = cur;
    return 0;
fail:
    wl_grid_free(&g);
    wl_csr_free(&cur);
    return -1;
}

int wl_random_local(int64_t n, int nnz_row, double far_frac, int64_t band, uint64_t seed, wl_csr_t *a)
{
    coo_t co = {0};
    if (n < 1 || nnz_row < 1) return -1;
    if (band < 1) band = 1;
    for (int64_t r = 0; r < n; r++) {
        uint64_t h = wl_mix(seed * 0x632be59bd9b4e019ULL ^ (uint64_t)r);
        if (coo_push(&co, r, r, 4.0)) goto fail;
        for (int e = 1; e < nnz_row; e++) {
            h = wl_mix(h);
            double u = (double)(h >> 11) / 9007199254740992.0;
            uint64_t h2 = wl_mix(h ^ 0x5bd1e995);
            int64_t c;
            if (u < far_frac)
                c = (int64_t)(h2 % (uint64_t)n);
            else
                c = r - band + (int64_t)(h2 % (uint64_t)(2 * band + 1));
            if (c < 0 || c >= n) c = r;
            if (coo_push(&co, r, c, -0.5)) goto fail;
        }
    }
    int rc = coo_to_csr(&co, n, n, a);
    coo_free(&co);
    return rc;
fail:
    coo_free(&co);
    return -1;
}
