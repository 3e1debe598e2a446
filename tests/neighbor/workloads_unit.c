/* Unit test of the workload matrices (no MPI): the Matrix Market reader on good and malformed
 * input (a clear error, never a crash), write/read round trip, the operators' properties. */
#define NB_WORKLOADS_NO_MPI
#include "workloads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int fails;

#define CHECK(c, ...)                                                                                        \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            fails++;                                                                                         \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                      \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
        }                                                                                                    \
    } while (0)

static int read_text(const char *text, wl_csr_t *a, char *err, size_t len)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    if (!f) return -2;
    int rc = wl_mm_read_stream(f, "mem", a, err, len);
    fclose(f);
    return rc;
}

static void bad(const char *text, const char *expect)
{
    wl_csr_t a;
    char err[256] = "";
    int rc = read_text(text, &a, err, sizeof(err));
    CHECK(rc == -1, "malformed input accepted (expected '%s')", expect);
    CHECK(strstr(err, expect) != NULL, "error '%s' does not mention '%s'", err, expect);
    wl_csr_free(&a);
}

static void test_reader(void)
{
    wl_csr_t a;
    char err[256];
    const char *ok = "%%MatrixMarket matrix coordinate real symmetric\n% comment\n\n3 3 4\n1 1 2\n2 1 -1\n"
                     "3 2 -1e0\n3 3 2.5\n";
    CHECK(read_text(ok, &a, err, sizeof(err)) == 0, "good file rejected: %s", err);
    CHECK(a.nrows == 3 && wl_nnz(&a) == 6, "symmetric expansion: %lld entries", (long long)wl_nnz(&a));
    CHECK(a.col[a.rowptr[1]] == 0 && a.val[a.rowptr[1]] == -1.0, "row 1 starts with (1,0) = -1");
    wl_csr_free(&a);
    const char *dup = "%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 3\n1 3\n2 1\n";
    CHECK(read_text(dup, &a, err, sizeof(err)) == 0, "pattern file rejected: %s", err);
    CHECK(wl_nnz(&a) == 2 && a.val == NULL, "duplicates merged, no values");
    wl_csr_free(&a);
    bad("", "empty file");
    bad("hello\n", "banner");
    bad("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "only 'coordinate'");
    bad("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "field 'complex'");
    bad("%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", "symmetry 'hermitian'");
    bad("%%MatrixMarket matrix coordinate real\n", "banner needs");
    bad("%%MatrixMarket matrix coordinate real general\n", "missing size line");
    bad("%%MatrixMarket matrix coordinate real general\n2 2\n", "three non-negative");
    bad("%%MatrixMarket matrix coordinate real general\n-2 2 1\n", "three non-negative");
    bad("%%MatrixMarket matrix coordinate real general\n0 2 0\n", "out of range");
    bad("%%MatrixMarket matrix coordinate real general\n2 2 5\n", "exceed");
    bad("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n", "file ends after 1 of 2");
    bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n", "more entries");
    bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", "outside");
    bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n", "outside");
    bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", "malformed value");
    bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n", "malformed value");
    bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 7\n", "unexpected text");
    bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 a 1\n", "expected 'row col value'");
    bad("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n", "above the diagonal");
    bad("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", "must be square");
    char *longline = malloc(3000);
    strcpy(longline, "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 ");
    size_t l = strlen(longline);
    memset(longline + l, '1', 2000);
    strcpy(longline + l + 2000, "\n");
    bad(longline, "longer than");
    free(longline);
    CHECK(wl_mm_read("/nonexistent/x.mtx", &a, err, sizeof(err)) == -1 && strstr(err, "No such"),
          "missing file: %s", err);
}

static int symmetric(const wl_csr_t *a)
{
    for (int64_t r = 0; r < a->nrows; r++)
        for (int64_t k = a->rowptr[r]; k < a->rowptr[r + 1]; k++) {
            int64_t c = a->col[k], q = a->rowptr[c];
            while (q < a->rowptr[c + 1] && a->col[q] != r) q++;
            if (q == a->rowptr[c + 1] || fabs(a->val[q] - a->val[k]) > 1e-12 * (1 + fabs(a->val[k])))
                return 0;
        }
    return 1;
}

static int64_t max_row(const wl_csr_t *a)
{
    int64_t m = 0;
    for (int64_t r = 0; r < a->nrows; r++)
        if (a->rowptr[r + 1] - a->rowptr[r] > m) m = a->rowptr[r + 1] - a->rowptr[r];
    return m;
}

static void test_operators(void)
{
    wl_grid_t g;
    wl_csr_t a, b, c;
    char err[256];
    CHECK(wl_grid_init(&g, 6, 5, 1) == 0, "morton grid");
    int seen[30] = {0}, perm = 1;
    for (int p = 0; p < 30; p++) perm &= g.index[p] >= 0 && g.index[p] < 30 && !seen[g.index[p]]++;
    CHECK(perm, "Morton numbering of a 6x5 grid is a permutation");
    wl_grid_free(&g);
    for (int npts = 7; npts <= 9; npts += 2) {
        CHECK(wl_rotaniso_level(16, 16, 0.001, 45, npts, 1, 0, &a) == 0, "rotaniso %d", npts);
        CHECK(max_row(&a) == npts && symmetric(&a), "%d-point, symmetric", npts);
        wl_csr_free(&a);
    }
    int64_t expect_rows[] = {256, 64, 16}, expect_width[] = {9, 25, 49};
    for (int l = 0; l < 3; l++) {
        CHECK(wl_rotaniso_level(16, 16, 0.001, 45, 9, 1, l, &a) == 0, "level %d", l);
        CHECK(a.nrows == expect_rows[l] && symmetric(&a), "level %d: %lld rows, symmetric", l,
              (long long)a.nrows);
        CHECK(l == 2 || max_row(&a) == expect_width[l], "level %d stencil %lld points", l,
              (long long)max_row(&a));
        wl_csr_free(&a);
    }
    CHECK(wl_random_local(200, 6, 0.2, 10, 3, &a) == 0 && wl_random_local(200, 6, 0.2, 10, 3, &b) == 0,
          "random");
    CHECK(wl_nnz(&a) == wl_nnz(&b) && memcmp(a.col, b.col, wl_nnz(&a) * sizeof(int64_t)) == 0,
          "random is deterministic");
    /* round trip through the writer, general and symmetric */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f && wl_mm_write(f, &a, 0, "round\ntrip") == 0 && fclose(f) == 0, "write");
    CHECK(read_text(text, &c, err, sizeof(err)) == 0, "reread: %s", err);
    CHECK(wl_nnz(&c) == wl_nnz(&a) && memcmp(c.col, a.col, wl_nnz(&a) * sizeof(int64_t)) == 0,
          "same structure");
    free(text);
    wl_csr_free(&b);
    wl_csr_free(&c);
    wl_csr_free(&a);
    CHECK(wl_rotaniso_level(12, 12, 0.001, 45, 9, 1, 1, &a) == 0, "level 1");
    f = open_memstream(&text, &len);
    CHECK(f && wl_mm_write(f, &a, 1, NULL) == 0 && fclose(f) == 0, "write symmetric");
    CHECK(read_text(text, &c, err, sizeof(err)) == 0, "reread symmetric: %s", err);
    CHECK(wl_nnz(&c) == wl_nnz(&a) && memcmp(c.col, a.col, wl_nnz(&a) * sizeof(int64_t)) == 0,
          "symmetric round trip");
    free(text);
    wl_csr_free(&a);
    wl_csr_free(&c);
}

int main(void)
{
    test_reader();
    test_operators();
    printf("workloads_unit: %s\n", fails ? "FAILED" : "ALL PASSED");
    return fails != 0;
}
