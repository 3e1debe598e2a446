/* Per-rank neighbor patterns of the workloads (see workloads.h). Every rank derives the whole
 * pattern from the global structure, so senders and receivers agree by construction. */
#include "workloads.h"

#include <stdlib.h>
#include <string.h>

#ifndef NB_DATA_DIR
#define NB_DATA_DIR "tests/neighbor/data"
#endif

/* The tests link H4's patterns.c, which defines the real one; the benchmark and standalone
 * builds use this. */
__attribute__((weak)) void nb_pattern_free(nb_pattern_t *p)
{
    if (!p) return;
    free(p->sources);
    free(p->dests);
    free(p->rcounts);
    free(p->rdispls);
    free(p->scounts);
    free(p->sdispls);
    free(p->sidx);
    free(p->ridx);
    memset(p, 0, sizeof(*p));
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t sort_unique(int64_t *v, int64_t n)
{
    if (n == 0) return 0;
    qsort(v, (size_t)n, sizeof(int64_t), cmp_i64);
    int64_t m = 1;
    for (int64_t k = 1; k < n; k++)
        if (v[k] != v[m - 1]) v[m++] = v[k];
    return m;
}

/* Keys are peer * n + id, sorted: split them into a neighbor list, counts and ids. */
static int split_keys(const int64_t *keys, int64_t nk, int64_t n, int *deg, int **peers, int **counts,
                      int64_t **ids)
{
    int d = 0;
    for (int64_t k = 0; k < nk; k++) d += k == 0 || keys[k] / n != keys[k - 1] / n;
    *deg = d;
    *peers = malloc((size_t)(d ? d : 1) * sizeof(int));
    *counts = calloc((size_t)(d ? d : 1), sizeof(int));
    *ids = malloc((size_t)(nk ? nk : 1) * sizeof(int64_t));
    if (!*peers || !*counts || !*ids) return -1;
    int at = -1;
    for (int64_t k = 0; k < nk; k++) {
        if (k == 0 || keys[k] / n != keys[k - 1] / n) (*peers)[++at] = (int)(keys[k] / n);
        (*counts)[at]++;
        (*ids)[k] = keys[k] % n;
    }
    return 0;
}

/* layout 0: packed in neighbor order; 1: reverse order, 1..3 unused elements between blocks. */
static int make_displs(int deg, const int *counts, int layout, int **displs, int *len)
{
    *displs = malloc((size_t)(deg ? deg : 1) * sizeof(int));
    if (!*displs) return -1;
    int at = layout ? 1 : 0;
    for (int i = 0; i < deg; i++) {
        int b = layout ? deg - 1 - i : i;
        (*displs)[b] = at;
        at += counts[b] + (layout ? 1 + b % 3 : 0);
    }
    *len = at;
    return 0;
}

static int finish_displs(nb_pattern_t *p, int layout)
{
    if (make_displs(p->indeg, p->rcounts, layout, &p->rdispls, &p->rlen) ||
        make_displs(p->outdeg, p->scounts, layout, &p->sdispls, &p->slen))
        return -1;
    return 0;
}

static int *block_owner(int64_t n, int size)
{
    int *own = calloc((size_t)n, sizeof(int));
    if (!own) return NULL;
    for (int r = 0; r < size; r++)
        for (int64_t i = (int64_t)r * n / size; i < (int64_t)(r + 1) * n / size; i++) own[i] = r;
    return own;
}

/* Keys of what rank needs (recv: owner(c) * n + c over its rows) or must send
 * (send: owner(i) * n + c for rows of others and columns it owns). */
static int64_t collect(const wl_csr_t *a, const int *own, int rank, int recv, int64_t *keys)
{
    int64_t n = a->nrows, nk = 0;
    for (int64_t i = 0; i < n; i++) {
        if ((own[i] == rank) != recv) continue;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            int64_t c = a->col[k];
            if (recv && own[c] != rank) keys[nk++] = (int64_t)own[c] * n + c;
            if (!recv && own[c] == rank) keys[nk++] = (int64_t)own[i] * n + c;
        }
    }
    return sort_unique(keys, nk);
}

int nb_pattern_spmv(const wl_csr_t *a, const int *owner, int size, int rank, int layout, nb_pattern_t *p)
{
    int64_t n = a->nrows;
    int *own = (int *)owner;
    int64_t *keys = malloc((size_t)(wl_nnz(a) ? wl_nnz(a) : 1) * sizeof(int64_t));
    int rc = -1;
    memset(p, 0, sizeof(*p));
    if (a->ncols != n || !keys) goto out;
    if (!own && !(own = block_owner(n, size))) goto out;
    int64_t nk = collect(a, own, rank, 1, keys);
    if (split_keys(keys, nk, n, &p->indeg, &p->sources, &p->rcounts, &p->ridx)) goto out;
    nk = collect(a, own, rank, 0, keys);
    if (split_keys(keys, nk, n, &p->outdeg, &p->dests, &p->scounts, &p->sidx)) goto out;
    rc = finish_displs(p, layout);
out:
    if (own != owner) free(own);
    free(keys);
    return rc;
}

/* ---------------------------------------------------------------- stencils ---- */

/* Process grid: the prime factors of size, largest first, each to the dimension whose
 * blocks are currently longest (MPI_Dims_create-like, but aware of the extents). */
static void proc_grid(int size, int dim, const int *ext, int *pg)
{
    int f[32], nf = 0, s = size;
    for (int d = 0; d < 3; d++) pg[d] = 1;
    for (int q = 2; q <= s; q++)
        while (s % q == 0 && nf < 32) f[nf++] = q, s /= q;
    for (int k = nf - 1; k >= 0; k--) {
        int best = 0;
        for (int d = 1; d < dim; d++)
            if ((double)ext[d] / pg[d] > (double)ext[best] / pg[best]) best = d;
        pg[best] *= f[k];
    }
}

static int block_of(int x, int e, int p)
{
    int q = (int)((int64_t)x * p / e);
    while (q + 1 < p && (int64_t)(q + 1) * e / p <= x) q++;
    while (q > 0 && (int64_t)q * e / p > x) q--;
    return q;
}

/* Structure of a box stencil (npts 5/9 in 2-D, 7/27 in 3-D), lexicographic points. */
static int stencil_csr(int dim, const int *e, int npts, wl_csr_t *a)
{
    int64_t n = (int64_t)e[0] * e[1] * e[2];
    memset(a, 0, sizeof(*a));
    a->nrows = a->ncols = n;
    a->rowptr = malloc(((size_t)n + 1) * sizeof(int64_t));
    a->col = malloc((size_t)n * 27 * sizeof(int64_t));
    if (!a->rowptr || !a->col) return -1;
    int full = npts == 9 || npts == 27, nnz = 0;
    a->rowptr[0] = 0;
    for (int64_t pnt = 0; pnt < n; pnt++) {
        int x = (int)(pnt % e[0]), y = (int)(pnt / e[0] % e[1]), z = (int)(pnt / e[0] / e[1]);
        for (int dz = dim == 3 ? -1 : 0; dz <= (dim == 3 ? 1 : 0); dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int far = (dx != 0) + (dy != 0) + (dz != 0);
                    int xx = x + dx, yy = y + dy, zz = z + dz;
                    if ((!full && far > 1) || xx < 0 || yy < 0 || zz < 0 || xx >= e[0] || yy >= e[1] ||
                        zz >= e[2])
                        continue;
                    a->col[nnz++] = xx + (int64_t)e[0] * (yy + (int64_t)e[1] * zz);
                }
        a->rowptr[pnt + 1] = nnz;
    }
    return 0;
}

static int parse_ext(const char *s, int *dim, int *e)
{
    char *end;
    e[0] = e[1] = e[2] = 1;
    for (*dim = 0; *dim < 3;) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 1 << 20) return -1;
        e[(*dim)++] = (int)v;
        if (*end != 'x') break;
        s = end + 1;
    }
    return *dim >= 2 ? 0 : -1;
}

static int has_pad(const char *arg)
{
    return arg && strstr(arg, ":pad") != NULL;
}

static int comm_ids(MPI_Comm comm, int *size, int *rank)
{
    if (MPI_Comm_size(comm, size) != MPI_SUCCESS || MPI_Comm_rank(comm, rank) != MPI_SUCCESS) return -1;
    return 0;
}

/* A local failure becomes everyone's failure, so no rank goes on to a collective alone. */
static int agree(MPI_Comm comm, int rc, nb_pattern_t *p)
{
    int bad = rc != 0, any = 0;
    if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) any = 1;
    if (any) {
        nb_pattern_free(p);
        memset(p, 0, sizeof(*p));
    }
    return any ? -1 : 0;
}

/* arg "NPTS:NXxNY[xNZ][:pad]": halo of the SpMV with a box stencil on a block-partitioned grid. */
static int wl_stencil(MPI_Comm comm, const char *arg, nb_pattern_t *p)
{
    int size, rank, dim, e[3], pg[3], npts = atoi(arg ? arg : "");
    const char *c = arg ? strchr(arg, ':') : NULL;
    wl_csr_t a = {0};
    int *own = NULL, rc = -1;
    memset(p, 0, sizeof(*p));
    if (comm_ids(comm, &size, &rank) || !c || parse_ext(c + 1, &dim, e)) goto out;
    if (!(dim == 2 && (npts == 5 || npts == 9)) && !(dim == 3 && (npts == 7 || npts == 27))) goto out;
    proc_grid(size, dim, e, pg);
    if (stencil_csr(dim, e, npts, &a) || !(own = malloc((size_t)a.nrows * sizeof(int)))) goto out;
    for (int64_t pnt = 0; pnt < a.nrows; pnt++) {
        int x = (int)(pnt % e[0]), y = (int)(pnt / e[0] % e[1]), z = (int)(pnt / e[0] / e[1]);
        own[pnt] =
            block_of(x, e[0], pg[0]) + pg[0] * (block_of(y, e[1], pg[1]) + pg[1] * block_of(z, e[2], pg[2]));
    }
    rc = nb_pattern_spmv(&a, own, size, rank, has_pad(arg), p);
out:
    free(own);
    wl_csr_free(&a);
    return agree(comm, rc, p);
}

/* Strip of block (qx, qy) facing direction (dx, dy), row-major point ids. */
static int strip(const int *e, const int *pg, int qx, int qy, int dx, int dy, int64_t *ids)
{
    int x0 = (int)((int64_t)qx * e[0] / pg[0]), x1 = (int)((int64_t)(qx + 1) * e[0] / pg[0]);
    int y0 = (int)((int64_t)qy * e[1] / pg[1]), y1 = (int)((int64_t)(qy + 1) * e[1] / pg[1]);
    if (x1 <= x0 || y1 <= y0) return 0;
    if (dx) {
        x0 = dx < 0 ? x0 : x1 - 1;
        x1 = x0 + 1;
    }
    if (dy) {
        y0 = dy < 0 ? y0 : y1 - 1;
        y1 = y0 + 1;
    }
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) ids[n++] = x + (int64_t)e[0] * y;
    return n;
}

static const int halo_dir[8][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}, {-1, -1}, {1, -1}, {-1, 1}, {1, 1}};

/* One direction's edge on both sides: send my strip toward d, receive the strip the neighbor
 * at -d sends toward d. Listing both sides by d keeps duplicate edges matched in order. */
static int halo_edge(const int *e, const int *pg, int rank, int d, nb_pattern_t *p, int64_t *sbuf,
                     int64_t *rbuf, int *sn, int *rn)
{
    int qx = rank % pg[0], qy = rank / pg[0], dx = halo_dir[d][0], dy = halo_dir[d][1];
    int tx = (qx + dx + pg[0]) % pg[0], ty = (qy + dy + pg[1]) % pg[1];
    int fx = (qx - dx + pg[0]) % pg[0], fy = (qy - dy + pg[1]) % pg[1];
    p->dests[d] = tx + pg[0] * ty;
    p->sources[d] = fx + pg[0] * fy;
    p->scounts[d] = strip(e, pg, qx, qy, dx, dy, sbuf + *sn);
    p->rcounts[d] = strip(e, pg, fx, fy, dx, dy, rbuf + *rn);
    *sn += p->scounts[d];
    *rn += p->rcounts[d];
    return 0;
}

/* arg "NPTS:NXxNY[:pad]", NPTS 5 or 9: periodic halo exchange, one edge per direction, so
 * small process grids give self-loops and duplicated neighbors. */
static int wl_halo(MPI_Comm comm, const char *arg, nb_pattern_t *p)
{
    int size, rank, dim, e[3], pg[3], npts = atoi(arg ? arg : ""), rc = -1;
    const char *c = arg ? strchr(arg, ':') : NULL;
    memset(p, 0, sizeof(*p));
    if (comm_ids(comm, &size, &rank) || !c || parse_ext(c + 1, &dim, e) || dim != 2 ||
        (npts != 5 && npts != 9))
        goto out;
    proc_grid(size, 2, e, pg);
    int nd = npts == 5 ? 4 : 8, sn = 0, rn = 0;
    size_t most = 2 * (size_t)(e[0] + e[1]) + 4;
    p->indeg = p->outdeg = nd;
    p->sources = malloc(nd * sizeof(int));
    p->dests = malloc(nd * sizeof(int));
    p->scounts = malloc(nd * sizeof(int));
    p->rcounts = malloc(nd * sizeof(int));
    p->sidx = malloc(most * sizeof(int64_t) * 2);
    p->ridx = malloc(most * sizeof(int64_t) * 2);
    if (!p->sources || !p->dests || !p->scounts || !p->rcounts || !p->sidx || !p->ridx) goto out;
    for (int d = 0; d < nd; d++) halo_edge(e, pg, rank, d, p, p->sidx, p->ridx, &sn, &rn);
    rc = finish_displs(p, has_pad(arg));
out:
    return agree(comm, rc, p);
}

/* arg "N:NNZROW:FAR:BAND:SEED[:pad]": SpMV of wl_random_local. */
static int wl_random(MPI_Comm comm, const char *arg, nb_pattern_t *p)
{
    int size, rank, rc = -1, nnz_row;
    long long n, band;
    unsigned long long seed;
    double far;
    wl_csr_t a = {0};
    memset(p, 0, sizeof(*p));
    if (comm_ids(comm, &size, &rank) || !arg ||
        sscanf(arg, "%lld:%d:%lf:%lld:%llu", &n, &nnz_row, &far, &band, &seed) != 5)
        goto out;
    if (wl_random_local(n, nnz_row, far, band, seed, &a)) goto out;
    rc = nb_pattern_spmv(&a, NULL, size, rank, has_pad(arg), p);
out:
    wl_csr_free(&a);
    return agree(comm, rc, p);
}

/* arg "FILE[:pad]"; FILE without '/' is looked up in MCOLL_NB_DATA or NB_DATA_DIR. */
static int wl_mtx(MPI_Comm comm, const char *arg, nb_pattern_t *p)
{
    int size, rank, rc = -1;
    char path[1024], file[512], err[512];
    wl_csr_t a = {0};
    memset(p, 0, sizeof(*p));
    if (comm_ids(comm, &size, &rank) || !arg || !*arg) goto out;
    snprintf(file, sizeof(file), "%s", arg);
    char *pad = strstr(file, ":pad");
    if (pad && pad[4] == '\0') *pad = '\0';
    const char *dir = getenv("MCOLL_NB_DATA") ? getenv("MCOLL_NB_DATA") : NB_DATA_DIR;
    if (strchr(file, '/'))
        snprintf(path, sizeof(path), "%s", file);
    else
        snprintf(path, sizeof(path), "%s/%s", dir, file);
    if (wl_mm_read(path, &a, err, sizeof(err))) {
        if (rank == 0) fprintf(stderr, "workload mtx: %s\n", err);
        goto out;
    }
    if (a.nrows != a.ncols) {
        if (rank == 0) fprintf(stderr, "workload mtx: %s is not square\n", path);
        goto out;
    }
    rc = nb_pattern_spmv(&a, NULL, size, rank, has_pad(arg), p);
out:
    wl_csr_free(&a);
    return agree(comm, rc, p);
}

/* arg "NXxNY:NPTS:LEVEL[:EPS:THETA]": level LEVEL of the rotated anisotropic smoothed-
 * aggregation hierarchy (Morton ordered), built in memory. */
static int wl_rotaniso_fn(MPI_Comm comm, const char *arg, nb_pattern_t *p)
{
    int size, rank, rc = -1, nx, ny, npts, level;
    double eps = 0.001, theta = 45.0;
    wl_csr_t a = {0};
    memset(p, 0, sizeof(*p));
    if (comm_ids(comm, &size, &rank) || !arg ||
        sscanf(arg, "%dx%d:%d:%d:%lf:%lf", &nx, &ny, &npts, &level, &eps, &theta) < 4)
        goto out;
    if (nx < 1 || ny < 1 || level < 0 || level > 12 ||
        wl_rotaniso_level(nx, ny, eps, theta, npts, 1, level, &a))
        goto out;
    rc = nb_pattern_spmv(&a, NULL, size, rank, has_pad(arg), p);
out:
    wl_csr_free(&a);
    return agree(comm, rc, p);
}

/* Kinds for nb_workload_spec ("kind:args"). */
static const nb_workload_t kinds[] = {
    {"stencil", wl_stencil, NULL},      {"halo", wl_halo, NULL},
    {"random", wl_random, NULL},        {"mtx", wl_mtx, NULL},
    {"rotaniso", wl_rotaniso_fn, NULL},
};

/* Sizes for tests at 2..8 ranks: small enough to run every strategy in seconds. */
const nb_workload_t nb_workloads[] = {
    {"stencil2d5", wl_stencil, "5:24x20"},
    {"stencil2d9", wl_stencil, "9:23x21:pad"},
    {"stencil3d7", wl_stencil, "7:9x8x7"},
    {"stencil3d27", wl_stencil, "27:8x7x6"},
    {"stencil2d9-tiny", wl_stencil, "9:3x2"}, /* more ranks than points: empty lists */
    {"halo2d5p", wl_halo, "5:16x12"},
    {"halo2d9p", wl_halo, "9:13x11:pad"},
    {"random", wl_random, "800:7:0.1:60:1"},
    {"random-far", wl_random, "500:5:0.5:20:2:pad"},
    {"rotaniso9-l0", wl_mtx, "rotaniso9_64x64_l0.mtx"},
    {"rotaniso9-l1", wl_mtx, "rotaniso9_64x64_l1.mtx"},
    {"rotaniso9-l2", wl_mtx, "rotaniso9_64x64_l2.mtx:pad"},
    {"rotaniso9-l3", wl_mtx, "rotaniso9_64x64_l3.mtx"},
    {"rotaniso7-l0", wl_mtx, "rotaniso7_32x32_l0.mtx"},
    {"random-general", wl_mtx, "random_general_300.mtx"},
};
const int nb_nworkloads = sizeof(nb_workloads) / sizeof(nb_workloads[0]);

const nb_workload_t *nb_workload_find(const char *name)
{
    for (int i = 0; i < nb_nworkloads; i++)
        if (strcmp(nb_workloads[i].name, name) == 0) return &nb_workloads[i];
    return NULL;
}

int nb_workload_spec(MPI_Comm comm, const char *spec, nb_pattern_t *p)
{
    const nb_workload_t *w = nb_workload_find(spec);
    if (w) return w->fn(comm, w->arg, p);
    const char *c = strchr(spec, ':');
    size_t len = c ? (size_t)(c - spec) : strlen(spec);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
        if (strlen(kinds[k].name) == len && strncmp(kinds[k].name, spec, len) == 0)
            return kinds[k].fn(comm, c ? c + 1 : "", p);
    memset(p, 0, sizeof(*p));
    return -1;
}
