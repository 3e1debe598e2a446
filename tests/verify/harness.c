#include "harness.h"
#include "mcoll.h"
#include "core/mc.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

harness_t T;

#define MAX_PRINTED 40   /* failure lines per process: enough to diagnose, not a flood */

void tset_segsize(long seg)
{
    if (mcoll_set_segsize(T.coll, seg) != MPI_SUCCESS) tfail("mcoll_set_segsize(%ld) failed", seg);
    T.seg = seg;
}

void tset_radix(int radix)
{
    if (mcoll_set_radix(T.coll, radix) != MPI_SUCCESS) tfail("mcoll_set_radix(%d) failed", radix);
    T.radix = radix;
}

/* --verbose --verbose: each case with its duration (printed when the next one starts). */
static void tcase_timing(const tcomm_t *c)
{
    static double last;
    static char prev[sizeof T.label + 64];
    double now = PMPI_Wtime();
    if (last) printf("  %8.4fs %s\n", now - last, prev);
    snprintf(prev, sizeof prev, "%s/%s %s", T.coll, T.alg, T.label);
    last = now;
    (void)c;
}

void tcase(const tcomm_t *c, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(T.label, sizeof T.label, "comm=%s(p=%d) ", c->name, c->size);
    if (T.seg >= 0) n += snprintf(T.label + n, sizeof T.label - (size_t)n, "seg=%ld ", T.seg);
    if (T.radix >= 0) n += snprintf(T.label + n, sizeof T.label - (size_t)n, "radix=%d ", T.radix);
    va_start(ap, fmt);
    vsnprintf(T.label + n, sizeof T.label - (size_t)n, fmt, ap);
    va_end(ap);
    T.calls++;
    if (T.verbose > 1 && T.wrank == 0) tcase_timing(c);
}

void tfail(const char *fmt, ...)
{
    T.fails++;
    if (++T.printed > MAX_PRINTED) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("FAIL coll=%s alg=%s case=[%s] rank=%d: %s\n", T.coll, T.alg, T.label, T.wrank, msg);
    if (T.printed == MAX_PRINTED) printf("FAIL rank=%d: further failures not printed\n", T.wrank);
    fflush(stdout);
}

int tcheck_rc(int rc, const char *call)
{
    if (rc == MPI_SUCCESS) return 1;
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    PMPI_Error_string(rc, s, &len);
    tfail("%s returned %d (%s)", call, rc, s);
    return 0;
}

void talg(int noncommutative)
{
    const char *last = mcoll_last_alg(T.coll);
    T.talgs++;
    if (!last) {
        tfail("mcoll_last_alg(\"%s\") is NULL after a call", T.coll);
        return;
    }
    if (T.mode == ALG_AUTO) return;
    int same = !strcmp(last, T.alg);
    if (noncommutative && (T.alg_flags & MC_ALG_COMMUTATIVE_ONLY)) {
        if (same) tfail("commutative-only algorithm ran for a non-commutative op");
        return;
    }
    if (same) T.ran++;
    else if (T.alg_has_ok) T.declined++;
    else tfail("forced algorithm did not run: mcoll_last_alg = \"%s\"", last);
}

#define TAGREE_BATCH 64
static struct {
    const tcomm_t *c;
    int n;
    uint64_t h[TAGREE_BATCH];
    const char *what[TAGREE_BATCH];
    char label[TAGREE_BATCH][sizeof T.label];
} agree;

void tagree_flush(void)
{
    const tcomm_t *c = agree.c;
    int n = agree.n;
    agree.n = 0;
    if (!n) return;
    uint64_t *all = xmalloc(sizeof *all * (size_t)n * (size_t)c->size);
    char now[sizeof T.label];
    memcpy(now, T.label, sizeof now);
    int rc = PMPI_Allgather(agree.h, n, MPI_UINT64_T, all, n, MPI_UINT64_T, c->comm);
    for (int k = 0; k < n && tcheck_rc(rc, "PMPI_Allgather"); k++) /* reports a failure once */
        for (int r = 0; r < c->size; r++)
            if (all[(size_t)r * (size_t)n + (size_t)k] != agree.h[k]) {
                memcpy(T.label, agree.label[k], sizeof T.label); /* the failure names its case */
                tfail("%s differs between rank %d and rank %d of the comm", agree.what[k], c->rank, r);
                memcpy(T.label, now, sizeof T.label);
                break;
            }
    xfree(all);
}

void tagree(const tcomm_t *c, uint64_t h, const char *what)
{
    if (agree.n && (agree.c->comm != c->comm || agree.n == TAGREE_BATCH)) tagree_flush();
    agree.c = c;
    agree.h[agree.n] = h;
    agree.what[agree.n] = what;
    memcpy(agree.label[agree.n++], T.label, sizeof T.label);
}

void *xmalloc(size_t n)
{
    void *p = T.heap ? mcoll_malloc(n ? n : 1) : malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "mcoll-verify: out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

void xfree(void *p)
{
    if (T.heap) mcoll_free(p);
    else free(p);
}
