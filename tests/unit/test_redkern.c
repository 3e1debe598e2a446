/* Reduction kernels (src/shm/reduce.c), run as a 1-rank MPI singleton:
 *  - every (op, type) pair MPI's reduction table allows has a kernel (no silent fallback to
 *    PMPI_Reduce_local), and pairs it forbids have none;
 *  - every kernel is bit-identical to PMPI_Reduce_local (in = a, inout = b) on generated
 *    data (negative numbers, zeros, ties), for several counts, with out distinct from, equal
 *    to a, equal to b, and equal to both; integer types are checked against C semantics
 *    computed here instead (wrapping arithmetic), and where the MPI library disagrees a note
 *    is printed: Open MPI 4.1.4 saturates 8/16-bit SUM in its AVX component, compares
 *    MPI_UNSIGNED_LONG as signed and MPI_OFFSET as unsigned in MIN/MAX, MPICH 4.0.2 compares
 *    every unsigned type as signed in MIN/MAX;
 *  - mc_red2 / mc_red3 with non-commutative user-defined ops (2x2 integer matrix products)
 *    give a op b in MPI's order, including the aliasing cases, on a dense type and on types
 *    with holes (holes of the output untouched) and a nonzero true lower bound;
 *  - the DAV counter grows by 3 * count * extent per call.
 *
 *   unit_redkern [-v]   -v (or MCOLL_UNIT_BENCH=1): also times SUM of doubles */
#include "shm/shm.h"
#include "unit.h"
#include <complex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int verbose;

/* ---------------------------------------------------------------- MPI's reduction table */
enum { C_CINT, C_FINT, C_FLOAT, C_COMPLEX, C_LOGICAL, C_BYTE, C_PAIR, C_NONE };

typedef struct tinfo {
    MPI_Datatype t;
    const char *name;
    int cls;
    int vsize;      /* bytes of the value (pairs: of the value part) */
    int kind;       /* generator: 'i' integer, 'f' float, 'd' double, 'l' long double */
    int is_signed;  /* integers */
} tinfo_t;

#define T(t, cls, vsize, kind) {t, #t, cls, vsize, kind, 1}
#define U(t, cls, vsize, kind) {t, #t, cls, vsize, kind, 0}
static const tinfo_t types[] = {
    T(MPI_INT, C_CINT, sizeof(int), 'i'),
    T(MPI_LONG, C_CINT, sizeof(long), 'i'),
    T(MPI_SHORT, C_CINT, sizeof(short), 'i'),
    U(MPI_UNSIGNED_SHORT, C_CINT, sizeof(short), 'i'),
    U(MPI_UNSIGNED, C_CINT, sizeof(int), 'i'),
    U(MPI_UNSIGNED_LONG, C_CINT, sizeof(long), 'i'),
    T(MPI_LONG_LONG_INT, C_CINT, sizeof(long long), 'i'),
    T(MPI_LONG_LONG, C_CINT, sizeof(long long), 'i'),
    U(MPI_UNSIGNED_LONG_LONG, C_CINT, sizeof(long long), 'i'),
    T(MPI_SIGNED_CHAR, C_CINT, 1, 'i'),
    U(MPI_UNSIGNED_CHAR, C_CINT, 1, 'i'),
    T(MPI_INT8_T, C_CINT, 1, 'i'),
    T(MPI_INT16_T, C_CINT, 2, 'i'),
    T(MPI_INT32_T, C_CINT, 4, 'i'),
    T(MPI_INT64_T, C_CINT, 8, 'i'),
    U(MPI_UINT8_T, C_CINT, 1, 'i'),
    U(MPI_UINT16_T, C_CINT, 2, 'i'),
    U(MPI_UINT32_T, C_CINT, 4, 'i'),
    U(MPI_UINT64_T, C_CINT, 8, 'i'),
    T(MPI_AINT, C_FINT, sizeof(MPI_Aint), 'i'),
    T(MPI_OFFSET, C_FINT, sizeof(MPI_Offset), 'i'),
    T(MPI_COUNT, C_FINT, sizeof(MPI_Count), 'i'),
    T(MPI_INTEGER, C_FINT, sizeof(int), 'i'),
    T(MPI_FLOAT, C_FLOAT, sizeof(float), 'f'),
    T(MPI_DOUBLE, C_FLOAT, sizeof(double), 'd'),
    T(MPI_LONG_DOUBLE, C_FLOAT, sizeof(long double), 'l'),
    T(MPI_REAL, C_FLOAT, sizeof(float), 'f'),
    T(MPI_DOUBLE_PRECISION, C_FLOAT, sizeof(double), 'd'),
    T(MPI_C_FLOAT_COMPLEX, C_COMPLEX, sizeof(float), 'f'),
    T(MPI_C_COMPLEX, C_COMPLEX, sizeof(float), 'f'),
    T(MPI_C_DOUBLE_COMPLEX, C_COMPLEX, sizeof(double), 'd'),
    T(MPI_C_LONG_DOUBLE_COMPLEX, C_COMPLEX, sizeof(long double), 'l'),
    U(MPI_C_BOOL, C_LOGICAL, 1, 'b'),
    U(MPI_BYTE, C_BYTE, 1, 'i'),
    T(MPI_FLOAT_INT, C_PAIR, sizeof(float), 'f'),
    T(MPI_DOUBLE_INT, C_PAIR, sizeof(double), 'd'),
    T(MPI_LONG_INT, C_PAIR, sizeof(long), 'i'),
    T(MPI_2INT, C_PAIR, sizeof(int), 'i'),
    T(MPI_SHORT_INT, C_PAIR, sizeof(short), 'i'),
    T(MPI_LONG_DOUBLE_INT, C_PAIR, sizeof(long double), 'l'),
    /* not valid in reductions at all */
    T(MPI_CHAR, C_NONE, 1, 'i'),
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

enum { O_SUM, O_PROD, O_MIN, O_MAX, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MAXLOC, O_MINLOC, O_N };
static MPI_Op ops[O_N];
static const char *op_names[O_N] = {"SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR", "MAXLOC", "MINLOC"};

static int valid(int cls, int o)
{
    switch (cls) {
    case C_CINT: return o <= O_BXOR;
    case C_FINT: return o <= O_MAX || (o >= O_BAND && o <= O_BXOR);
    case C_FLOAT: return o <= O_MAX;
    case C_COMPLEX: return o <= O_PROD;
    case C_LOGICAL: return o >= O_LAND && o <= O_LXOR;
    case C_BYTE: return o >= O_BAND && o <= O_BXOR;
    case C_PAIR: return o == O_MAXLOC || o == O_MINLOC;
    default: return 0;
    }
}

/* ---------------------------------------------------------------- data */
static unsigned long long rng = 88172645463325252ull;
static unsigned long long next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* A float-ish value: small integers scaled by a power of two (exact products and sums are
 * not required, only determinism), zeros (never -0.0) and negatives. */
static long double gen_real(void)
{
    long v = (long)(next() % 41) - 20;
    int e = (int)(next() % 9) - 4;
    long double x = (long double)v;
    while (e > 0) x *= 2, e--;
    while (e < 0) x /= 3, e++;   /* inexact on purpose: rounding must match too */
    return x;
}

static void put_real(char *p, int kind, long double x)
{
    if (kind == 'f') { float f = (float)x; memcpy(p, &f, sizeof f); }
    else if (kind == 'd') { double d = (double)x; memcpy(p, &d, sizeof d); }
    else { long double l = x; memcpy(p, &l, 10); }   /* the 80 value bits; padding stays 0 */
}

static void put_int(char *p, int size, int small)
{
    unsigned long long v = next();
    if (small) v = (unsigned long long)((long long)(v % 7) - 3);
    memcpy(p, &v, (size_t)size);   /* little endian: the low bytes */
}

/* Fills element i of a and b (zeroed buffers of extent-sized elements): a third zeros,
 * a few ties (b = a), the rest random; for pairs ties of the value with other indices. */
static void gen(const tinfo_t *ti, size_t extent, char *a, char *b, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        char *x = a + i * extent, *y = b + i * extent;
        for (int side = 0; side < 2; side++) {
            char *p = side ? y : x;
            int r = (int)(next() % 6);
            switch (ti->cls) {
            case C_LOGICAL: *p = (char)(next() % 2); break;
            case C_PAIR:   /* few distinct values: many ties; the index is set below */
                if (ti->kind == 'i') put_int(p, ti->vsize, 1);
                else put_real(p, ti->kind, (long double)((long)(next() % 5) - 2));
                break;
            case C_COMPLEX:
                put_real(p, ti->kind, r == 0 ? 0 : gen_real());
                put_real(p + (ti->kind == 'l' ? 16 : ti->vsize), ti->kind, gen_real());
                break;
            case C_FLOAT: put_real(p, ti->kind, r == 0 ? 0 : gen_real()); break;
            default:
                if (r == 0) memset(p, 0, (size_t)ti->vsize);
                else put_int(p, ti->vsize, r == 1);
                break;
            }
        }
        if (ti->cls == C_PAIR) {
            /* the index follows the value, aligned to int */
            size_t off = ((size_t)(ti->kind == 'l' ? 16 : ti->vsize) + 3) & ~(size_t)3;
            int ia = (int)(next() % 10) - 2, ib = (int)(next() % 10) - 2;
            memcpy(x + off, &ia, sizeof ia);
            memcpy(y + off, &ib, sizeof ib);
        }
        if (next() % 8 == 0) memcpy(y, x, ti->cls == C_PAIR ? (size_t)ti->vsize : extent);   /* tie */
    }
}

/* ---------------------------------------------------------------- predefined kernels */
/* C semantics of op on one integer element of `size` bytes: the reference for integer
 * types (the MPI library is compared too, but it has known bugs there, see below). */
static void ref_int(int o, int size, int is_signed, const char *x, const char *y, char *out)
{
    unsigned long long ux = 0, uy = 0, r = 0;
    memcpy(&ux, x, (size_t)size), memcpy(&uy, y, (size_t)size);
    int shift = 64 - 8 * size;
    long long sx = (long long)(ux << shift) >> shift, sy = (long long)(uy << shift) >> shift;
    int less = is_signed ? sy < sx : uy < ux, greater = is_signed ? sy > sx : uy > ux;
    switch (o) {
    case O_SUM: r = ux + uy; break;
    case O_PROD: r = ux * uy; break;
    case O_MIN: r = less ? uy : ux; break;
    case O_MAX: r = greater ? uy : ux; break;
    case O_LAND: r = ux && uy; break;
    case O_LOR: r = ux || uy; break;
    case O_LXOR: r = !ux != !uy; break;
    case O_BAND: r = ux & uy; break;
    case O_BOR: r = ux | uy; break;
    case O_BXOR: r = ux ^ uy; break;
    }
    memcpy(out, &r, (size_t)size);
}

static int is_int_class(int cls) { return cls == C_CINT || cls == C_FINT || cls == C_BYTE || cls == C_LOGICAL; }

/* (op, type) pairs where the MPI library deviates from C semantics (reported once). */
static int deviations;

static void check_pair(const tinfo_t *ti, int o, size_t extent, size_t count)
{
    mc_red_kernel_t k = mc_red_kernel(ops[o], ti->t);
    size_t bytes = count * extent + 1;   /* + 1: malloc(0) */
    char *a = calloc(1, bytes), *b = calloc(1, bytes), *exp = calloc(1, bytes), *out = calloc(1, bytes);
    char *tmp = calloc(1, bytes), *mpi = calloc(1, bytes);
    if (!a || !b || !exp || !out || !tmp || !mpi) {
        CHECK(0, "no memory");
        goto done;
    }
    gen(ti, extent, a, b, count);
    memcpy(mpi, b, count * extent);
    int rc = PMPI_Reduce_local(a, mpi, (int)count, ti->t, ops[o]);
    CHECK(rc == MPI_SUCCESS, "%s on %s: PMPI_Reduce_local rejects a pair of MPI's table", op_names[o], ti->name);
    if (rc != MPI_SUCCESS || !k) goto done;
    /* integers: C semantics (independent of the MPI library); the rest: bit-identical to MPI */
    if (is_int_class(ti->cls)) {
        for (size_t i = 0; i < count; i++)
            ref_int(o, ti->vsize, ti->is_signed, a + i * extent, b + i * extent, exp + i * extent);
        static const tinfo_t *noted_t;
        static int noted_o = -1;
        if (memcmp(mpi, exp, count * extent) && !(noted_t == ti && noted_o == o)) {
            size_t i = 0;
            while (!memcmp(mpi + i * extent, exp + i * extent, extent)) i++;
            printf("  note: the MPI library deviates from C semantics: %s on %s (count %zu, element %zu)\n",
                   op_names[o], ti->name, count, i);
            noted_t = ti, noted_o = o;
            deviations++;
        }
    } else {
        memcpy(exp, mpi, count * extent);
    }

    k(out, a, b, count);   /* distinct */
    CHECK(!memcmp(out, exp, count * extent), "%s on %s count %zu: out = a op b wrong", op_names[o], ti->name, count);
    memcpy(tmp, a, count * extent);
    k(tmp, tmp, b, count);   /* out == a */
    CHECK(!memcmp(tmp, exp, count * extent), "%s on %s count %zu: out == a wrong", op_names[o], ti->name, count);
    memcpy(tmp, b, count * extent);
    k(tmp, a, tmp, count);   /* out == b */
    CHECK(!memcmp(tmp, exp, count * extent), "%s on %s count %zu: out == b wrong", op_names[o], ti->name, count);
    /* out == a == b */
    if (is_int_class(ti->cls)) {
        for (size_t i = 0; i < count; i++)
            ref_int(o, ti->vsize, ti->is_signed, a + i * extent, a + i * extent, exp + i * extent);
    } else {
        memcpy(exp, a, count * extent);
        PMPI_Reduce_local(a, exp, (int)count, ti->t, ops[o]);
    }
    memcpy(tmp, a, count * extent);
    k(tmp, tmp, tmp, count);
    CHECK(!memcmp(tmp, exp, count * extent), "%s on %s count %zu: out == a == b wrong", op_names[o], ti->name, count);
done:
    free(a), free(b), free(exp), free(out), free(tmp), free(mpi);
}

static void test_predefined(void)
{
    static const size_t counts[] = {0, 1, 7, 33, 1000, 4099};
    int kernels = 0, extra = 0;
    for (int i = 0; i < NTYPES; i++) {
        const tinfo_t *ti = &types[i];
        MPI_Aint lb, extent;
        PMPI_Type_get_extent(ti->t, &lb, &extent);
        for (int o = 0; o < O_N; o++) {
            mc_red_kernel_t k = mc_red_kernel(ops[o], ti->t);
            if (!valid(ti->cls, o)) {
                CHECK(!k, "%s on %s: a kernel for a pair MPI's table does not allow", op_names[o], ti->name);
#ifdef OPEN_MPI
                /* informational: what the MPI library accepts beyond the table (MPICH
                 * asserts instead of returning an error) */
                char x[64] = {0}, y[64] = {0};
                if (verbose && PMPI_Reduce_local(x, y, 1, ti->t, ops[o]) == MPI_SUCCESS) {
                    printf("  MPI also accepts %s on %s (no kernel: PMPI_Reduce_local)\n", op_names[o], ti->name);
                    extra++;
                }
#endif
                continue;
            }
            CHECK(k != NULL, "%s on %s: no kernel", op_names[o], ti->name);
            if (!k) continue;
            kernels++;
            for (int c = 0; c < 6; c++) check_pair(ti, o, (size_t)extent, counts[c]);
        }
    }
    if (deviations)
        printf("  (%d pairs where the MPI library is wrong; known: Open MPI 4.1.4 saturates 8/16-bit SUM in its\n"
               "   op/avx component and compares MPI_UNSIGNED_LONG as signed and MPI_OFFSET as unsigned in\n"
               "   MIN/MAX; MPICH 4.0.2 compares unsigned types as signed in MIN/MAX)\n",
               deviations);
    printf("predefined: %d (op, type) kernels checked against PMPI_Reduce_local", kernels);
    if (verbose) printf("; MPI accepts %d more pairs (PMPI_Reduce_local path)", extra);
    printf("\n");
    CHECK(mc_red_kernel(MPI_SUM, MPI_DATATYPE_NULL) == NULL, "kernel for MPI_DATATYPE_NULL");
    CHECK(mc_red_kernel(MPI_REPLACE, MPI_INT) == NULL, "kernel for MPI_REPLACE");
    CHECK(mc_red_kernel(MPI_OP_NULL, MPI_INT) == NULL, "kernel for MPI_OP_NULL");
    /* the one-entry cache must not leak between lookups */
    CHECK(mc_red_kernel(MPI_SUM, MPI_INT) != NULL && mc_red_kernel(MPI_SUM, MPI_CHAR) == NULL &&
              mc_red_kernel(MPI_SUM, MPI_INT) != NULL,
          "lookup cache");
    MPI_Datatype dup;
    PMPI_Type_contiguous(1, MPI_DOUBLE, &dup);
    PMPI_Type_commit(&dup);
    CHECK(mc_red_kernel(MPI_SUM, dup) == NULL, "kernel for a derived type");
    PMPI_Type_free(&dup);
}

/* MIN/MAX ties between +0 and -0: the lower-ranked operand (a) wins, as in MPICH and Open
 * MPI's base component (Open MPI's op/avx returns b: not compared with the library here). */
static void test_signed_zero(void)
{
    static const MPI_Datatype ts[3] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
    static const int sizes[3] = {sizeof(float), sizeof(double), 10};
    for (int t = 0; t < 3; t++)
        for (int o = O_MIN; o <= O_MAX; o++)
            for (int neg_a = 0; neg_a < 2; neg_a++) {
                enum { N = 37 };
                long double la[N], lb[N], lo[N];
                float fa[N], fb[N], fo[N];
                double da[N], db[N], dout[N];
                void *a = t == 0 ? (void *)fa : t == 1 ? (void *)da : (void *)la;
                void *b = t == 0 ? (void *)fb : t == 1 ? (void *)db : (void *)lb;
                void *out = t == 0 ? (void *)fo : t == 1 ? (void *)dout : (void *)lo;
                for (int i = 0; i < N; i++) {
                    fa[i] = neg_a ? -0.0f : 0.0f, fb[i] = neg_a ? 0.0f : -0.0f;
                    da[i] = neg_a ? -0.0 : 0.0, db[i] = neg_a ? 0.0 : -0.0;
                    la[i] = neg_a ? -0.0L : 0.0L, lb[i] = neg_a ? 0.0L : -0.0L;
                }
                mc_red_kernel_t k = mc_red_kernel(ops[o], ts[t]);
                if (!k) continue;
                k(out, a, b, N);
                int ok = 1;
                size_t stride = t == 2 ? sizeof(long double) : (size_t)sizes[t];
                for (int i = 0; i < N; i++)
                    ok &= !memcmp((char *)out + i * stride, (char *)a + i * stride, (size_t)sizes[t]);
                CHECK(ok, "%s type %d, a = %s0: the result is not a", op_names[o], t, neg_a ? "-" : "+");
            }
}

/* mc_red2 / mc_red3 through mc_red_init with a predefined op, and the DAV count. */
static void test_red_predefined(void)
{
    enum { N = 777 };
    double a[N], b[N], exp[N], out[N];
    for (int i = 0; i < N; i++) a[i] = (double)gen_real(), b[i] = (double)gen_real();
    mc_args_t args = {.op = MPI_SUM, .dtype = MPI_DOUBLE, .extent = sizeof(double), .commute = 1};
    mc_red_t r;
    mc_red_init(&r, &args);
    CHECK(r.op == MPI_SUM && r.dtype == MPI_DOUBLE && r.extent == sizeof(double) && r.commute == 1 && r.k3,
          "mc_red_init fields");
    memcpy(exp, b, sizeof b);
    PMPI_Reduce_local(a, exp, N, MPI_DOUBLE, MPI_SUM);
    uint64_t before = mc_dav_bytes;
    CHECK(mc_red3(&r, out, a, b, N) == MPI_SUCCESS && !memcmp(out, exp, sizeof exp), "mc_red3 SUM double");
    CHECK(mc_dav_bytes - before == 3 * N * sizeof(double), "mc_red3 DAV %llu", (unsigned long long)(mc_dav_bytes - before));
    before = mc_dav_bytes;
    CHECK(mc_red2(&r, a, b, N) == MPI_SUCCESS && !memcmp(b, exp, sizeof exp), "mc_red2 SUM double");
    CHECK(mc_dav_bytes - before == 3 * N * sizeof(double), "mc_red2 DAV %llu", (unsigned long long)(mc_dav_bytes - before));
}

/* ---------------------------------------------------------------- streaming reductions */
/* mc_red3_nt / mc_red3_adaptive against mc_red3 on the same inputs, bit for bit, with guard
 * bytes around the destination: every predefined kernel, counts below, at and above the
 * streaming threshold and over several blocks (odd counts: partial last lines), destination
 * and source alignments inside a line, out distinct, == a, == b, == a == b; every nt
 * variant the CPU has for one type; the DAV counter. */
#define NT_GUARD 64
static size_t nt_cases;

static int nt_one(const mc_red_t *r, const char *what, const char *a0, const char *b0, size_t count,
                  size_t oa, size_t sa, int alias, char *buf, char *exp, char *work, int adaptive)
{
    size_t ext = r->extent, len = count * ext;
    char *out = buf + NT_GUARD + oa;   /* buf is 64-aligned */
    char *a = work, *b = work;
    /* the reference: mc_red3 with the same aliasing (it is correct per test_predefined) */
    memset(exp, 0x5A, len + 2 * NT_GUARD);
    char *eo = exp + NT_GUARD;
    char *ea = alias == 1 || alias == 3 ? eo : work + 2 * (len + 64) + sa;
    char *eb = alias == 2 || alias == 3 ? eo : work + 3 * (len + 64) + sa;
    memcpy(ea, a0, len);
    if (alias != 3) memcpy(eb, b0, len);
    mc_red3(r, eo, ea, eb, count);
    memset(buf, 0x5A, len + 2 * NT_GUARD + 64);
    a = alias == 1 || alias == 3 ? out : work + sa;
    b = alias == 2 || alias == 3 ? out : work + (len + 64) + sa;
    memcpy(a, a0, len);
    if (alias != 3) memcpy(b, b0, len);
    uint64_t before = mc_dav_bytes;
    int rc = adaptive ? mc_red3_adaptive(r, out, a, b, count, 1, 2, 1) : mc_red3_nt(r, out, a, b, count);
    nt_cases++;
    int ok = rc == MPI_SUCCESS && !memcmp(out - NT_GUARD, exp, len + 2 * NT_GUARD) &&
             mc_dav_bytes - before == 3 * (uint64_t)len;
    CHECK(ok, "%s count %zu out align %zu src align %zu alias %d: differs from mc_red3 (rc %d, DAV %llu)", what, count, oa,
          sa, alias, rc, (unsigned long long)(mc_dav_bytes - before));
    return ok;
}

static void nt_pair(const tinfo_t *ti, int o, size_t extent, int thorough)
{
    size_t t = (MC_RED_NT_MIN + extent - 1) / extent;
    size_t counts[] = {0, 1, 7, t - 1, t, t + 1, 4096 / extent + 3, 3 * 4096 / extent + 5, 20011};
    size_t maxc = 20011, bytes = maxc * extent + 4 * NT_GUARD + 128;
    char *a0 = malloc(bytes), *b0 = malloc(bytes), *exp = malloc(bytes);
    char *buf = aligned_alloc(64, (bytes + 63) / 64 * 64), *work = malloc(4 * bytes);
    mc_args_t args = {.op = ops[o], .dtype = ti->t, .extent = extent, .commute = 1};
    mc_red_t r;
    mc_red_init(&r, &args);
    if (!a0 || !b0 || !exp || !buf || !work) {
        CHECK(0, "no memory");
        goto done;
    }
    memset(a0, 0, bytes), memset(b0, 0, bytes);
    gen(ti, extent, a0, b0, maxc);
    char what[96];
    snprintf(what, sizeof what, "red3_nt %s on %s", op_names[o], ti->name);
    static const size_t al[] = {0, 1, 8, 40, 63};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (int i = 0; i < 5; i++)
            for (int alias = 0; alias < 4; alias++) {
                if (!thorough && i % 2) continue;
                size_t oa = al[i] / extent * extent % 64;  /* element-aligned out: the usual case */
                if (i == 1) oa = 1;                        /* and a misaligned one */
                if (!nt_one(&r, what, a0, b0, counts[c], oa, al[4 - i], alias, buf, exp, work, alias == 0 && i == 2))
                    goto done;
            }
done:
    free(a0), free(b0), free(exp), free(buf), free(work);
}

/* mc_red3_nt_multi: 1..4 destinations with equal or different offsets in a line, the first
 * or the second being a or b; every destination gets mc_red3's result, guards intact, DAV
 * 3n + 2n(nout - 1). */
static void test_red_nt_multi(void)
{
    static const MPI_Datatype ts[] = {MPI_DOUBLE, MPI_INT, MPI_FLOAT_INT, MPI_LONG_DOUBLE};
    static const size_t counts[] = {0, 5, 200, 1000, 7777};
    enum { MAXN = 7777, SLOT = MAXN * 16 + 4 * NT_GUARD };
    char *a0 = malloc(SLOT), *b0 = malloc(SLOT), *exp = malloc(SLOT);
    char *area = aligned_alloc(64, (6 * (size_t)SLOT + 63) / 64 * 64);
    if (!a0 || !b0 || !exp || !area) {
        CHECK(0, "no memory");
        goto done;
    }
    for (int t = 0; t < 4; t++) {
        const tinfo_t *ti = NULL;
        for (int i = 0; i < NTYPES; i++)
            if (types[i].t == ts[t]) ti = &types[i];
        MPI_Aint lb, extent;
        PMPI_Type_get_extent(ts[t], &lb, &extent);
        size_t ext = (size_t)extent;
        int o = ti->cls == C_PAIR ? O_MAXLOC : O_SUM;
        mc_args_t args = {.op = ops[o], .dtype = ts[t], .extent = ext, .commute = 1};
        mc_red_t r;
        mc_red_init(&r, &args);
        memset(a0, 0, SLOT), memset(b0, 0, SLOT);
        gen(ti, ext, a0, b0, MAXN);
        for (int c = 0; c < 5; c++)
            for (int nout = 1; nout <= 4; nout++)
                for (int mode = 0; mode < 6; mode++) {   /* alias: 0 none, 1 outs[0] = a, 2 outs[0] = b,
                                                          * 3 outs[1] = b; 4, 5: different offsets */
                    size_t count = counts[c], len = count * ext;
                    if (mode == 3 && nout < 2) continue;
                    /* holes (long double padding) keep outs[0]'s bytes, copied to the others */
                    if (mode == 1 || mode == 2) memcpy(exp, mode == 1 ? a0 : b0, len);
                    else memset(exp, 0x5A, len);
                    mc_red3(&r, exp, mode == 1 ? exp : a0, mode == 2 ? exp : b0, count);
                    memset(area, 0x5A, 6 * SLOT);
                    /* slot s: [guard][data][guard], data at s * SLOT + NT_GUARD + offset */
                    void *outs[4];
                    size_t offs[4];
                    for (int j = 0; j < nout; j++) {
                        offs[j] = mode >= 4 ? (size_t)(j * 8 + (mode == 5 ? j : 0)) % 64 : 8;
                        outs[j] = area + (size_t)j * SLOT + NT_GUARD + offs[j];
                    }
                    char *a = area + 4 * (size_t)SLOT + NT_GUARD + 8, *b = area + 5 * (size_t)SLOT + NT_GUARD + 8;
                    if (mode == 1) a = outs[0];
                    if (mode == 2) b = outs[0];
                    if (mode == 3) b = outs[1];
                    memcpy(a, a0, len), memcpy(b, b0, len);
                    uint64_t before = mc_dav_bytes;
                    int rc = mc_red3_nt_multi(&r, outs, nout, a, b, count);
                    int ok = rc == MPI_SUCCESS && mc_dav_bytes - before == (3 + 2 * (uint64_t)(nout - 1)) * len;
                    for (int j = 0; j < nout && ok; j++) {
                        const unsigned char *q = (unsigned char *)outs[j];
                        ok = !memcmp(q, exp, len);
                        for (size_t g = 1; g <= NT_GUARD && ok; g++) ok = q[-(ptrdiff_t)g] == 0x5A && q[len + g - 1] == 0x5A;
                    }
                    nt_cases++;
                    CHECK(ok, "red3_nt_multi %s count %zu nout %d mode %d (rc %d, DAV %llu)", ti->name, count, nout, mode,
                          rc, (unsigned long long)(mc_dav_bytes - before));
                }
    }
done:
    free(a0), free(b0), free(exp), free(area);
}

static void test_red_nt(void)
{
    for (int i = 0; i < NTYPES; i++) {
        const tinfo_t *ti = &types[i];
        MPI_Aint lb, extent;
        PMPI_Type_get_extent(ti->t, &lb, &extent);
        for (int o = 0; o < O_N; o++)
            if (valid(ti->cls, o) && mc_red_kernel(ops[o], ti->t)) {
                int common = (o <= O_MAX) && (ti->t == MPI_FLOAT || ti->t == MPI_DOUBLE || ti->t == MPI_INT32_T ||
                                              ti->t == MPI_INT64_T || ti->t == MPI_UINT32_T || ti->t == MPI_UINT64_T);
                nt_pair(ti, o, (size_t)extent, common);
            }
    }
    /* every streaming-store variant (the blocks are streamed by the current one) */
    static const char *kinds[] = {"avx512", "avx2", "sse2", "scalar"};
    for (int k = 0; k < 4; k++) {
        if (mc_copy_nt_force(kinds[k]) != 0) continue;
        for (int i = 0; i < NTYPES; i++) {
            if (types[i].t == MPI_DOUBLE) nt_pair(&types[i], O_SUM, sizeof(double), 1);
            if (types[i].t == MPI_FLOAT) nt_pair(&types[i], O_MAX, sizeof(float), 1);
        }
    }
    mc_copy_nt_force("auto");
    /* the adaptive choice's other branch is mc_red3 itself */
    enum { N = 5000 };
    static double a[N], b[N], o1[N], o2[N];
    for (int i = 0; i < N; i++) a[i] = (double)gen_real(), b[i] = (double)gen_real();
    mc_args_t args = {.op = MPI_SUM, .dtype = MPI_DOUBLE, .extent = sizeof(double), .commute = 1};
    mc_red_t r;
    mc_red_init(&r, &args);
    uint64_t before = mc_dav_bytes;
    mc_red3_adaptive(&r, o1, a, b, N, 0, 2, 1);
    mc_red3_adaptive(&r, o2, a, b, N, 1, 1, 1);
    CHECK(mc_dav_bytes - before == 6 * N * sizeof(double), "adaptive DAV");
    mc_red3(&r, b, a, b, N);
    CHECK(!memcmp(o1, b, sizeof b) && !memcmp(o2, b, sizeof b), "adaptive temporal branch");
    test_red_nt_multi();
    printf("red3_nt: %zu cases against mc_red3\n", nt_cases);
}

/* ---------------------------------------------------------------- user-defined ops */
/* A 2x2 int matrix per element: entries at int offsets lay->at[0..3], elements every
 * lay->stride ints; the other ints are holes. The op multiplies matrices: inout = in x inout
 * (MPI order: the lower-ranked operand on the left). Not commutative. */
typedef struct layout {
    const char *name;
    int at[4], stride;
    MPI_Datatype t;
} layout_t;
static const layout_t *cur;

static void matmul_op(void *in_, void *inout_, int *len, MPI_Datatype *dt)
{
    const int *in = in_;
    int *io = inout_;
    const int *s = cur->at;
    for (int e = 0; e < *len; e++, in += cur->stride, io += cur->stride) {
        int a0 = in[s[0]], a1 = in[s[1]], a2 = in[s[2]], a3 = in[s[3]];
        int b0 = io[s[0]], b1 = io[s[1]], b2 = io[s[2]], b3 = io[s[3]];
        io[s[0]] = a0 * b0 + a1 * b2;
        io[s[1]] = a0 * b1 + a1 * b3;
        io[s[2]] = a2 * b0 + a3 * b2;
        io[s[3]] = a2 * b1 + a3 * b3;
    }
}

static void ref_mul(const int *a, const int *b, int *r, const int *s)
{
    r[0] = a[s[0]] * b[s[0]] + a[s[1]] * b[s[2]];
    r[1] = a[s[0]] * b[s[1]] + a[s[1]] * b[s[3]];
    r[2] = a[s[2]] * b[s[0]] + a[s[3]] * b[s[2]];
    r[3] = a[s[2]] * b[s[1]] + a[s[3]] * b[s[3]];
}

static void fill_mat(int *m, size_t count, int hole)
{
    for (size_t i = 0; i < count * (size_t)cur->stride; i++) m[i] = hole;
    for (size_t e = 0; e < count; e++)
        for (int j = 0; j < 4; j++) m[e * cur->stride + cur->at[j]] = (int)(next() % 7) - 3;
}

/* out must hold a x b at the matrix entries and `hole` in the holes. */
static int check_mat(const int *out, const int *a, const int *b, size_t count, int hole)
{
    for (size_t e = 0; e < count; e++) {
        const int *o = out + e * cur->stride;
        int r[4];
        ref_mul(a + e * cur->stride, b + e * cur->stride, r, cur->at);
        for (int j = 0; j < 4; j++)
            if (o[cur->at[j]] != r[j]) return 0;
        for (int j = 0; j < cur->stride; j++)
            if (j != cur->at[0] && j != cur->at[1] && j != cur->at[2] && j != cur->at[3] && o[j] != hole) return 0;
    }
    return 1;
}

static void test_user_case(mc_red_t *r, size_t count)
{
    size_t ints = count * (size_t)cur->stride + 1, ext = (size_t)cur->stride * sizeof(int);
    int *a = malloc(ints * sizeof(int)), *b = malloc(ints * sizeof(int)), *out = malloc(ints * sizeof(int));
    int *a0 = malloc(ints * sizeof(int)), *b0 = malloc(ints * sizeof(int));
    if (!a || !b || !out || !a0 || !b0) {
        CHECK(0, "no memory");
        goto done;
    }
    fill_mat(a0, count, -1111);
    fill_mat(b0, count, -2222);
    size_t bytes = count * ext;
    uint64_t before;
#define DAV_OK() (mc_dav_bytes - before == 3 * count * ext)

    memcpy(a, a0, bytes), memcpy(b, b0, bytes), fill_mat(out, count, -3333);
    before = mc_dav_bytes;
    int rc = mc_red3(r, out, a, b, count);
    CHECK(rc == MPI_SUCCESS && check_mat(out, a0, b0, count, -3333) && !memcmp(a, a0, bytes) && !memcmp(b, b0, bytes) && DAV_OK(),
          "%s count %zu: mc_red3 out distinct (rc %d)", cur->name, count, rc);

    before = mc_dav_bytes;
    rc = mc_red3(r, a, a, b, count);
    CHECK(rc == MPI_SUCCESS && check_mat(a, a0, b0, count, -1111) && !memcmp(b, b0, bytes) && DAV_OK(),
          "%s count %zu: mc_red3 out == a (rc %d)", cur->name, count, rc);

    memcpy(a, a0, bytes);
    before = mc_dav_bytes;
    rc = mc_red3(r, b, a, b, count);
    CHECK(rc == MPI_SUCCESS && check_mat(b, a0, b0, count, -2222) && !memcmp(a, a0, bytes) && DAV_OK(),
          "%s count %zu: mc_red3 out == b (rc %d)", cur->name, count, rc);

    before = mc_dav_bytes;
    rc = mc_red3(r, a, a, a, count);
    CHECK(rc == MPI_SUCCESS && check_mat(a, a0, a0, count, -1111) && DAV_OK(), "%s count %zu: mc_red3 out == a == b (rc %d)",
          cur->name, count, rc);

    memcpy(a, a0, bytes), memcpy(b, b0, bytes);
    before = mc_dav_bytes;
    rc = mc_red2(r, a, b, count);
    CHECK(rc == MPI_SUCCESS && check_mat(b, a0, b0, count, -2222) && !memcmp(a, a0, bytes) && DAV_OK(),
          "%s count %zu: mc_red2 (rc %d)", cur->name, count, rc);
#undef DAV_OK
done:
    free(a), free(b), free(out), free(a0), free(b0);
}

static void test_user_ops(void)
{
    static layout_t lays[] = {
        {"dense 4 ints", {0, 1, 2, 3}, 4, MPI_DATATYPE_NULL},
        {"holes after entries 1 and 3", {0, 1, 3, 4}, 6, MPI_DATATYPE_NULL},
        {"holes before entries 0 and 2 (true lb 4)", {1, 2, 4, 5}, 6, MPI_DATATYPE_NULL},
    };
    MPI_Op op;
    PMPI_Op_create(matmul_op, 0, &op);
    for (int l = 0; l < 3; l++) {
        layout_t *L = &lays[l];
        int bl[2] = {2, 2}, disp[2] = {L->at[0], L->at[2]};
        MPI_Datatype idx;
        PMPI_Type_indexed(2, bl, disp, MPI_INT, &idx);
        PMPI_Type_create_resized(idx, 0, (MPI_Aint)(L->stride * sizeof(int)), &L->t);
        PMPI_Type_commit(&L->t);
        PMPI_Type_free(&idx);
        cur = L;
        mc_args_t args = {.op = op, .dtype = L->t, .extent = (size_t)L->stride * sizeof(int), .commute = 0};
        mc_red_t r;
        mc_red_init(&r, &args);
        CHECK(!r.k3 && !r.commute, "%s: user op got a kernel or commute", L->name);
        /* 40000 elements: several chunks of the bounded temporaries */
        static const size_t counts[] = {0, 1, 7, 33, 1000, 40000};
        for (int c = 0; c < 6; c++) test_user_case(&r, counts[c]);
        PMPI_Type_free(&L->t);
    }
    PMPI_Op_free(&op);
}

/* ---------------------------------------------------------------- benchmark */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* SUM of doubles, out = a + b: DAV bandwidth 3 * bytes / time, best of 5. */
static void bench(void)
{
    const size_t big = (size_t)32 << 20, n = big / sizeof(double);
    double *a = malloc(big), *b = malloc(big), *o = malloc(big);
    if (!a || !b || !o) goto done;
    for (size_t i = 0; i < n; i++) a[i] = (double)i, b[i] = 1.0, o[i] = 0;
    mc_red_kernel_t k = mc_red_kernel(MPI_SUM, MPI_DOUBLE);
    static const size_t sizes[] = {(size_t)32 << 10, (size_t)256 << 10, (size_t)32 << 20};
    printf("bench: SUM double, DAV bandwidth GB/s (3 * bytes / time, best of 5)\n");
    for (int s = 0; s < 3; s++) {
        size_t m = sizes[s] / sizeof(double), reps = big / sizes[s];
        double best3 = 1e30, best2 = 1e30, bestp = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now();
            for (size_t j = 0; j < reps; j++) k(o, a, b, m);   /* the same slice: in cache when small */
            double t1 = now();
            for (size_t j = 0; j < reps; j++) k(b, a, b, m);
            double t2 = now();
            for (size_t j = 0; j < reps; j++) PMPI_Reduce_local(a, b, (int)m, MPI_DOUBLE, MPI_SUM);
            double t3 = now();
            best3 = t1 - t0 < best3 ? t1 - t0 : best3;
            best2 = t2 - t1 < best2 ? t2 - t1 : best2;
            bestp = t3 - t2 < bestp ? t3 - t2 : bestp;
        }
        double d = 3.0 * (double)(reps * m * sizeof(double)) / 1e9;
        printf("  %8zu KiB: out=a+b %6.2f   b=a+b %6.2f   PMPI_Reduce_local %6.2f\n", sizes[s] >> 10, d / best3, d / best2,
               d / bestp);
    }
done:
    free(a), free(b), free(o);
}

int main(int argc, char **argv)
{
    verbose = (argc > 1 && !strcmp(argv[1], "-v")) || getenv("MCOLL_UNIT_BENCH");
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        printf("FAIL: MPI_Init (singleton)\n");
        return 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const MPI_Op o[O_N] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR, MPI_LXOR,
                           MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    memcpy(ops, o, sizeof ops);

    test_predefined();
    test_signed_zero();
    test_red_predefined();
    test_red_nt();
    test_user_ops();
    if (verbose) bench();
    int rc = unit_summary("unit_redkern");
    MPI_Finalize();
    return rc;
}
