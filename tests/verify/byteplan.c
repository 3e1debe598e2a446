/* The case list shared by the byte collectives (bcast, gather(v), scatter(v), allgather(v),
 * alltoall(v)): counts, odd sizes, datatypes, roots, in-place, v patterns, segment sizes,
 * radix, other communicators and a few MB-sized cases. */
#include "checks.h"
#include "mcoll.h"
#include "core/mc.h"
#include "core/config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const vnames[V_NPAT] = {"uniform", "irregular", "single", "mixed"};
static const char *const dnames[D_NPAT] = {"packed", "reversed+gaps", "rotated by rank"};
const char *vpat_name(int v) { return vnames[v]; }
const char *dpat_name(int d) { return dnames[d]; }

const char *bdesc(const bcase_t *b, unsigned flags)
{
    static char s[200];
    int n = snprintf(s, sizeof s, "units=%zu", b->units);
    if (flags & BP_ROOTED) n += snprintf(s + n, sizeof s - (size_t)n, " root=%d", b->root);
    if (b->inplace) n += snprintf(s + n, sizeof s - (size_t)n, " in_place");
    n += snprintf(s + n, sizeof s - (size_t)n, " send=%s", layout(b->ls)->name);
    if ((flags & BP_ROOTED) && b->lroot != b->ls)
        n += snprintf(s + n, sizeof s - (size_t)n, " root_send=%s", layout(b->lroot)->name);
    n += snprintf(s + n, sizeof s - (size_t)n, " recv=%s", layout(b->lr)->name);
    if (flags & BP_V) snprintf(s + n, sizeof s - (size_t)n, " counts=%s displs=%s", vnames[b->vpat], dnames[b->dpat]);
    return s;
}

static size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

size_t vunits(int vpat, size_t base, int i, int p, size_t mult)
{
    size_t u = base;
    if (vpat == V_IRREGULAR) u = i % 3 == 1 ? 0 : base + (size_t)((i * 5) % 7);
    else if (vpat == V_SINGLE) u = i == p - 1 ? base : 0;
    else if (vpat == V_MIXED) u = i % 2 ? base : base + V_BIG;
    return round_up(u, mult);
}

size_t pair_units(int vpat, size_t base, int i, int j, size_t mult, int symmetric)
{
    if (symmetric && i > j) { int t = i; i = j; j = t; }
    size_t u = base;
    if (vpat == V_IRREGULAR) u = (i + 2 * j) % 3 == 1 ? 0 : base + (size_t)((i * 5 + j * 3) % 7);
    else if (vpat == V_SINGLE) u = (i + j) % 4 == 1 ? base : 0;
    else if (vpat == V_MIXED) u = (i + 2 * j) % 3 ? base : base + V_BIG;
    return round_up(u, mult);
}

size_t vdispls(int dpat, const size_t *elems, int p, int me, size_t *displs)
{
    size_t at = dpat == D_REVGAP ? 1 : 0;
    for (int k = 0; k < p; k++) {
        int i = dpat == D_REVGAP ? p - 1 - k : dpat == D_ROTATED ? (k + me) % p : k;
        displs[i] = at;
        at += elems[i] + (dpat == D_REVGAP ? 2 : dpat == D_ROTATED ? (size_t)me % 3 : 0);
    }
    return at;
}

int *to_int(const size_t *v, int n)
{
    int *r = xmalloc(sizeof *r * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) r[i] = (int)v[i];
    return r;
}

static size_t lcm(size_t a, size_t b)
{
    size_t x = a, y = b;
    while (y) { size_t t = x % y; x = y; y = t; }
    return a / x * b;
}

size_t lcm_k(layout_id_t a, layout_id_t b, layout_id_t c)
{
    return lcm(lcm((size_t)layout(a)->k, (size_t)layout(b)->k), (size_t)layout(c)->k);
}

int plan_segmented(void)
{
    if (T.mode == ALG_AUTO) return !strcmp(T.coll, "bcast") || !strcmp(T.coll, "reduce") ||
                                   !strcmp(T.coll, "allreduce");
    return (T.alg_flags & MC_ALG_SEGMENTED) != 0;
}

int plan_radix(void)
{
    if (T.mode == ALG_AUTO) return !strcmp(T.coll, "bcast") || !strcmp(T.coll, "reduce");
    return (T.alg_flags & MC_ALG_RADIX) != 0;
}

/* ---------------------------------------------------------------- plan parts */
static bcase_t simple(size_t units, int root, int inplace, layout_id_t l)
{
    return (bcase_t){.units = units, .root = root, .inplace = inplace, .ls = l, .lroot = l, .lr = l};
}

static void go(const tcomm_t *c, bcase_fn run, bcase_t b) { run(c, &b); }

static void counts_part(const tcomm_t *c, bcase_fn run, unsigned flags)
{
    static const size_t ints[] = {0, 1, 2, 3, 13, 64, 1009, 4099, 65537};
    static const size_t bytes[] = {1, 7, 13, 1009, 65539};
    int inp = (flags & BP_INPLACE) != 0;
    for (size_t i = 0; i < NELEM(ints); i++)
        go(c, run, simple(ints[i], (int)i % c->size, inp && i % 2, L_INT));
    for (size_t i = 0; i < NELEM(bytes); i++)
        go(c, run, simple(bytes[i], (int)(i + 1) % c->size, inp && i % 2 == 0, L_BYTE));
}

static void layouts_part(const tcomm_t *c, bcase_fn run, unsigned flags)
{
    static const layout_id_t pairs[][2] = {
        {L_VECTOR, L_INT}, {L_INT, L_VECTOR}, {L_CONTIG3, L_INT}, {L_STRIDED, L_INT}, {L_INT, L_STRIDED},
        {L_LB, L_LB}, {L_LB, L_INT}, {L_VECTOR, L_CONTIG3}, {L_CONTIG3, L_CONTIG3}, {L_STRIDED, L_LB}};
    int inp = (flags & BP_INPLACE) != 0;
    for (size_t i = 0; i < NELEM(pairs); i++)
        for (size_t m = 0; m < 3; m++) {
            bcase_t b = {.units = (size_t[]){12, 1212, 0}[m], .root = (int)(i + m) % c->size,
                         .inplace = inp && (i + m) % 3 == 1, .ls = pairs[i][0], .lroot = pairs[i][0],
                         .lr = pairs[i][1], .vpat = (int)(i % V_NPAT), .dpat = (int)(m % D_NPAT)};
            if (m == 2 && i > 2) continue;   /* count 0 with a few derived types is enough */
            run(c, &b);
        }
}

/* The root uses a different datatype than the other ranks (same type signature). */
static void root_types_part(const tcomm_t *c, bcase_fn run)
{
    static const layout_id_t trip[][3] = {
        {L_VECTOR, L_CONTIG3, L_INT}, {L_INT, L_LB, L_STRIDED}, {L_STRIDED, L_INT, L_VECTOR}};
    for (size_t i = 0; i < NELEM(trip); i++) {
        bcase_t b = {.units = 1212, .root = (int)(c->size - 1 - (int)i % c->size), .ls = trip[i][0],
                     .lroot = trip[i][1], .lr = trip[i][2], .vpat = V_IRREGULAR, .dpat = D_REVGAP};
        run(c, &b);
    }
}

static void roots_part(const tcomm_t *c, bcase_fn run, unsigned flags)
{
    static const size_t units[] = {13, 1009};
    for (int root = 0; root < c->size; root++)
        for (size_t i = 0; i < NELEM(units); i++)
            for (int inp = 0; inp <= ((flags & BP_INPLACE) != 0); inp++)
                go(c, run, simple(units[i], root, inp, L_INT));
}

static void vpat_part(const tcomm_t *c, bcase_fn run, unsigned flags)
{
    static const size_t units[] = {13, 1009};
    int k = 0;
    for (int v = 0; v < V_NPAT; v++)
        for (int d = 0; d < D_NPAT; d++)
            for (size_t i = 0; i < (T.quick ? 1 : NELEM(units)); i++, k++) {
                bcase_t b = simple(units[i], k % c->size, (flags & BP_INPLACE) && k % 2, L_INT);
                b.vpat = v;
                b.dpat = d;
                run(c, &b);
            }
}

static void segsize_part(const tcomm_t *c, bcase_fn run)
{
    static const long segs[] = {0, 3, 1001, 8192};
    for (size_t s = 0; s < NELEM(segs); s++) {
        tset_segsize(segs[s]);
        go(c, run, simple(segs[s] == 3 ? 1009 : 65537, (int)s % c->size, 0, L_BYTE));
        go(c, run, simple(segs[s] == 3 ? 13 : 4099, (int)(s + 1) % c->size, 0, L_INT));
        go(c, run, simple(1212, (int)(s + 2) % c->size, 0, L_VECTOR));
    }
    tset_segsize(-1);
}

static void radix_part(const tcomm_t *c, bcase_fn run)
{
    static const int radix[] = {2, 3, 4, 7};
    for (size_t r = 0; r < NELEM(radix); r++) {
        tset_radix(radix[r]);
        go(c, run, simple(1009, (int)r % c->size, 0, L_INT));
        go(c, run, simple(1, (int)(r + 1) % c->size, 0, L_BYTE));
    }
    tset_radix(-1);
}

static void other_comms_part(const tcomm_t *c, bcase_fn run, unsigned flags)
{
    static const size_t units[] = {13, 1, 1009};
    for (size_t i = 0; i < (T.quick ? 1 : NELEM(units)); i++)
        for (int r = 0; r < 2; r++) {
            bcase_t b = simple(units[i], r ? c->size - 1 : 0, (flags & BP_INPLACE) && (i + (size_t)r) % 2, L_INT);
            b.vpat = (int)(i % V_NPAT);
            b.dpat = r;
            run(c, &b);
        }
    bcase_t b = {.units = 1212, .root = c->size / 2, .ls = L_VECTOR, .lroot = L_VECTOR, .lr = L_INT,
                 .vpat = V_IRREGULAR, .dpat = D_REVGAP};
    run(c, &b);
}

/* One MB-sized case: `large` ints per block, sent as bytes. */
static void large_part(const tcomm_t *c, bcase_fn run, size_t large)
{
    go(c, run, simple(large * 4 + 3, c->size - 1, 1, L_BYTE));
}

void byte_plan(const tcomm_t *comms, int ncomms, bcase_fn run, unsigned flags, size_t large)
{
    const tcomm_t *w = &comms[0];
    if (T.large_only) {
        if (large) large_part(w, run, large);
        return;
    }
    counts_part(w, run, flags);
    layouts_part(w, run, flags);
    if (flags & BP_ROOTED) root_types_part(w, run);
    if (flags & BP_ROOTED) roots_part(w, run, flags);
    if (flags & BP_V) vpat_part(w, run, flags);
    if (plan_segmented()) segsize_part(w, run);
    if (plan_radix()) radix_part(w, run);
    for (int i = 1; i < ncomms; i++) other_comms_part(&comms[i], run, flags);
    if (large && !T.quick) large_part(w, run, large);
}
