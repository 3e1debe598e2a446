#include "vtypes.h"
#include "datagen.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static MPI_Datatype affine_type = MPI_DATATYPE_NULL;
static int unsigned_minmax_signed;   /* native MPI bug workaround, see vt_init */
static MPI_Op affine_op = MPI_OP_NULL;

static const char *const kind_names[VT_NKINDS] = {
    "int", "long", "unsigned", "float", "double", "2int", "float_int", "double_int", "affine",
    "INTEGER", "REAL", "DOUBLE_PRECISION", "LOGICAL", "2INTEGER", "2REAL", "DOUBLE_COMPLEX"};
static const char *const op_names[OP_NOPS] = {
    "SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR", "MAXLOC", "MINLOC",
    "AFFINE(user,noncommutative)"};

const char *vt_kind_name(vt_kind_t k) { return kind_names[k]; }
const char *vt_op_name(vt_op_t op) { return op_names[op]; }
int vt_op_commutes(vt_op_t op) { return op != OP_AFFINE; }

size_t vt_size(vt_kind_t k)
{
    static const size_t sz[VT_NKINDS] = {sizeof(int), sizeof(long), sizeof(unsigned), sizeof(float),
        sizeof(double), sizeof(vt_2int_t), sizeof(vt_fi_t), sizeof(vt_di_t), sizeof(vt_affine_t),
        sizeof(int), sizeof(float), sizeof(double), sizeof(int), sizeof(vt_2int_t),
        sizeof(vt_2real_t), sizeof(vt_dcomplex_t)};
    return sz[k];
}

MPI_Datatype vt_mpi_type(vt_kind_t k)
{
    switch (k) {
    case VT_INT: return MPI_INT;
    case VT_LONG: return MPI_LONG;
    case VT_UNSIGNED: return MPI_UNSIGNED;
    case VT_FLOAT: return MPI_FLOAT;
    case VT_DOUBLE: return MPI_DOUBLE;
    case VT_2INT: return MPI_2INT;
    case VT_FLOAT_INT: return MPI_FLOAT_INT;
    case VT_DOUBLE_INT: return MPI_DOUBLE_INT;
    case VT_FINT: return MPI_INTEGER;
    case VT_REAL: return MPI_REAL;
    case VT_DPREC: return MPI_DOUBLE_PRECISION;
    case VT_LOGICAL: return MPI_LOGICAL;
    case VT_2INTEGER: return MPI_2INTEGER;
    case VT_2REAL: return MPI_2REAL;
    case VT_DCOMPLEX: return MPI_DOUBLE_COMPLEX;
    default: return affine_type;
    }
}

MPI_Op vt_mpi_op(vt_op_t op)
{
    switch (op) {
    case OP_SUM: return MPI_SUM;
    case OP_PROD: return MPI_PROD;
    case OP_MIN: return MPI_MIN;
    case OP_MAX: return MPI_MAX;
    case OP_LAND: return MPI_LAND;
    case OP_LOR: return MPI_LOR;
    case OP_LXOR: return MPI_LXOR;
    case OP_BAND: return MPI_BAND;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    case OP_MAXLOC: return MPI_MAXLOC;
    case OP_MINLOC: return MPI_MINLOC;
    default: return affine_op;
    }
}

/* ------------------------------------------------------------------ user op */
static void affine_compose(const vt_affine_t *l, vt_affine_t *r)
{
    uint64_t a = (uint64_t)l->a * r->a % AFFINE_MOD;
    uint64_t b = ((uint64_t)l->b * r->a + r->b) % AFFINE_MOD;
    r->a = (uint32_t)a;
    r->b = (uint32_t)b;
}

static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) affine_compose((vt_affine_t *)in + i, (vt_affine_t *)inout + i);
}

/* MPICH 4.0 compares MPI_UNSIGNED as signed in MPI_MIN/MPI_MAX (pmodels/mpich#6083), also
 * in PMPI_Reduce_local, which mcoll relies on. That is not mcoll's bug: then the unsigned
 * MIN/MAX data stays below 2^31. */
static int probe_unsigned_minmax(void)
{
    unsigned big = 0x80000001u, small = 1u;
    if (PMPI_Reduce_local(&big, &small, 1, MPI_UNSIGNED, MPI_MIN) != MPI_SUCCESS) return 0;
    return small != 1u;
}

int vt_unsigned_minmax_broken(void) { return unsigned_minmax_signed; }

int vt_init(void)
{
    unsigned_minmax_signed = probe_unsigned_minmax();
    int rc = PMPI_Type_contiguous(2, MPI_UINT32_T, &affine_type);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&affine_type);
    if (rc == MPI_SUCCESS) rc = PMPI_Op_create(affine_fn, 0, &affine_op);
    return rc;
}

void vt_fini(void)
{
    if (affine_op != MPI_OP_NULL) PMPI_Op_free(&affine_op);
    if (affine_type != MPI_DATATYPE_NULL) PMPI_Type_free(&affine_type);
}

/* ------------------------------------------------------------------ combos */
int vt_combos(const vt_combo_t **out)
{
    static vt_combo_t list[96];
    static int n;
    if (!n) {
        /* MPI-4 §6.9.2: the C integers take every arithmetic, logical and bitwise op; the
         * Fortran INTEGER no logical one, LOGICAL only those, complex SUM and PROD */
        const vt_kind_t arith[] = {VT_INT, VT_LONG, VT_UNSIGNED, VT_FLOAT, VT_DOUBLE,
                                   VT_FINT, VT_REAL, VT_DPREC};
        const vt_kind_t ints[] = {VT_INT, VT_LONG, VT_UNSIGNED};
        const vt_kind_t locs[] = {VT_2INT, VT_FLOAT_INT, VT_DOUBLE_INT, VT_2INTEGER, VT_2REAL};
#define ALL(o_lo, o_hi, kinds)                                                                 \
    for (int o = o_lo; o <= o_hi; o++)                                                         \
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)                            \
            list[n++] = (vt_combo_t){kinds[i], (vt_op_t)o};
        ALL(OP_SUM, OP_MAX, arith)
        ALL(OP_LAND, OP_BXOR, ints)
        ALL(OP_BAND, OP_BXOR, ((const vt_kind_t[]){VT_FINT}))
        ALL(OP_LAND, OP_LXOR, ((const vt_kind_t[]){VT_LOGICAL}))
        ALL(OP_SUM, OP_PROD, ((const vt_kind_t[]){VT_DCOMPLEX}))
        ALL(OP_MAXLOC, OP_MINLOC, locs)
#undef ALL
        list[n++] = (vt_combo_t){VT_AFFINE, OP_AFFINE};
    }
    *out = list;
    return n;
}

/* ------------------------------------------------------------------ generation */
/* Integer value for an arithmetic/logical op; chosen so that reductions over <= 64 ranks never
 * overflow a signed int and logical results are neither always true nor always false. */
static long gen_integer(vt_op_t op, uint64_t h)
{
    static const long prod_set[8] = {1, -1, 2, 1, -2, 1, 1, -1};
    switch (op) {
    case OP_PROD: return prod_set[h % 8];
    case OP_LAND: return h % 8 ? (long)(h % 5 + 1) : 0;
    case OP_LOR: return h % 4 ? 0 : (long)(h % 3 + 1);
    case OP_LXOR: return h % 2 ? (long)(h % 9 + 1) : 0;
    case OP_BAND: return (long)(int32_t)((h | (h >> 7)) >> 16);
    case OP_BOR: return (long)(int32_t)((h & (h >> 9)) >> 16);
    case OP_BXOR: return (long)(int32_t)(h >> 16);
    default: return (long)(h % 2001) - 1000;
    }
}

/* Wide-range float: random mantissa scaled over ~40 binades. */
static double gen_wide(uint64_t h)
{
    double m = (double)(int32_t)(h >> 32) / 2147483648.0;
    return ldexp(m, (int)((h >> 8) % 40) - 20);
}

static double gen_real(vt_op_t op, vt_gen_t g, uint64_t h)
{
    static const double prod_set[8] = {1, -1, 2, 0.5, -2, 1, -0.5, 1};
    if (g == GEN_WIDE) return gen_wide(h);
    if (op == OP_PROD) return prod_set[h % 8];
    return (double)((long)(h % 2001) - 1000) / 8.0;   /* dyadic: sums stay exact */
}

static void gen_loc(vt_kind_t k, uint64_t h, void *out)
{
    int v = (int)(h % 7), loc = (int)((h >> 20) % 100);   /* ties on v exercise the loc rule */
    if (k == VT_2INT || k == VT_2INTEGER) *(vt_2int_t *)out = (vt_2int_t){v - 3, loc};
    else if (k == VT_2REAL) *(vt_2real_t *)out = (vt_2real_t){(float)v * 0.5f - 1.0f, (float)loc};
    else if (k == VT_FLOAT_INT) *(vt_fi_t *)out = (vt_fi_t){(float)v * 0.5f - 1.0f, loc};
    else *(vt_di_t *)out = (vt_di_t){(double)v * 0.25 - 1.0, loc};
}

uint64_t vt_stream(vt_op_t op, uint32_t seed, int rank) { return gen_stream(seed, rank, (int)op); }

void vt_gen(vt_kind_t k, vt_op_t op, vt_gen_t g, uint64_t stream, size_t idx, void *out)
{
    uint64_t h = gen_at(stream, idx);
    memset(out, 0, vt_size(k));
    switch (k) {
    case VT_INT: case VT_FINT: *(int *)out = g == GEN_ONES ? 1 : (int)gen_integer(op, h); break;
    case VT_LOGICAL: *(int *)out = g == GEN_ONES || gen_integer(op, h) != 0; break;   /* .TRUE. is 1 */
    case VT_REAL: *(float *)out = g == GEN_ONES ? 1.0f : (float)gen_real(op, g, h); break;
    case VT_DPREC: *(double *)out = g == GEN_ONES ? 1.0 : gen_real(op, g, h); break;
    case VT_DCOMPLEX: {   /* dyadic parts, small in products: exact in any order */
        static const double im_set[4] = {0, 1, -1, 0};
        vt_dcomplex_t *z = out;
        if (g == GEN_ONES) *z = (vt_dcomplex_t){1, 0};
        else if (op == OP_PROD) *z = (vt_dcomplex_t){gen_real(op, g, h), im_set[(h >> 40) % 4]};
        else *z = (vt_dcomplex_t){gen_real(op, g, h), gen_real(op, g, h >> 17)};
        break;
    }
    case VT_LONG:
        *(long *)out = g == GEN_ONES ? 1 : op == OP_MIN || op == OP_MAX ? (long)h : gen_integer(op, h);
        break;
    case VT_UNSIGNED:   /* wraps are defined for unsigned: use all the bits */
        *(unsigned *)out = g == GEN_ONES ? 1u : op <= OP_MAX ? (unsigned)(h >> 23) | (op == OP_PROD)
                                                             : (unsigned)gen_integer(op, h);
        if (unsigned_minmax_signed && (op == OP_MIN || op == OP_MAX)) *(unsigned *)out >>= 1;
        break;
    case VT_FLOAT: *(float *)out = g == GEN_ONES ? 1.0f : (float)gen_real(op, g, h); break;
    case VT_DOUBLE: *(double *)out = g == GEN_ONES ? 1.0 : gen_real(op, g, h); break;
    case VT_AFFINE:
        *(vt_affine_t *)out = (vt_affine_t){(uint32_t)(1 + h % (AFFINE_MOD - 1)),
                                            (uint32_t)((h >> 32) % AFFINE_MOD)};
        break;
    default: gen_loc(k, h, out); break;
    }
}

/* ------------------------------------------------------------------ reduction */
#define ARITH(T, op, l, r)                                                                     \
    do {                                                                                       \
        T x = *(const T *)(l), *y = (T *)(r);                                                  \
        switch (op) {                                                                          \
        case OP_SUM: *y = (T)(x + *y); break;                                                  \
        case OP_PROD: *y = (T)(x * *y); break;                                                 \
        case OP_MIN: *y = x < *y ? x : *y; break;                                              \
        case OP_MAX: *y = x > *y ? x : *y; break;                                              \
        case OP_LAND: *y = (T)(x && *y); break;                                                \
        case OP_LOR: *y = (T)(x || *y); break;                                                 \
        case OP_LXOR: *y = (T)(!x != !*y); break;                                              \
        default: break;                                                                        \
        }                                                                                      \
    } while (0)

#define BITS(T, op, l, r)                                                                      \
    do {                                                                                       \
        T x = *(const T *)(l), *y = (T *)(r);                                                  \
        if (op == OP_BAND) *y &= x;                                                            \
        else if (op == OP_BOR) *y |= x;                                                        \
        else if (op == OP_BXOR) *y ^= x;                                                       \
        else ARITH(T, op, l, r);                                                               \
    } while (0)

/* MAXLOC/MINLOC: the better value wins; equal values keep the smaller index. */
#define LOC(T, op, l, r)                                                                       \
    do {                                                                                       \
        const T *x = (const T *)(l);                                                           \
        T *y = (T *)(r);                                                                       \
        int better = op == OP_MAXLOC ? x->v > y->v : x->v < y->v;                              \
        if (better) *y = *x;                                                                   \
        else if (x->v == y->v && x->i < y->i) y->i = x->i;                                     \
    } while (0)

static void apply_int(vt_kind_t k, vt_op_t op, const void *l, void *r)
{
    if (k == VT_INT) {   /* sums/products of int wrap in MPI: compute them unsigned */
        if (op == OP_SUM) { *(int *)r = (int)((unsigned)*(const int *)l + (unsigned)*(int *)r); return; }
        if (op == OP_PROD) { *(int *)r = (int)((unsigned)*(const int *)l * (unsigned)*(int *)r); return; }
        BITS(int, op, l, r);
    } else if (k == VT_LONG) {
        if (op == OP_SUM) { *(long *)r = (long)((unsigned long)*(const long *)l + (unsigned long)*(long *)r); return; }
        if (op == OP_PROD) { *(long *)r = (long)((unsigned long)*(const long *)l * (unsigned long)*(long *)r); return; }
        BITS(long, op, l, r);
    } else {
        BITS(unsigned, op, l, r);
    }
}

void vt_apply(vt_kind_t k, vt_op_t op, const void *l, void *r)
{
    switch (k) {
    case VT_FINT: apply_int(VT_INT, op, l, r); break;
    case VT_INT: case VT_LONG: case VT_UNSIGNED: apply_int(k, op, l, r); break;
    case VT_LOGICAL: ARITH(int, op, l, r); break;
    case VT_FLOAT: case VT_REAL: ARITH(float, op, l, r); break;
    case VT_DOUBLE: case VT_DPREC: ARITH(double, op, l, r); break;
    case VT_2INT: case VT_2INTEGER: LOC(vt_2int_t, op, l, r); break;
    case VT_2REAL: LOC(vt_2real_t, op, l, r); break;
    case VT_DCOMPLEX: {
        const vt_dcomplex_t *x = l;
        vt_dcomplex_t *y = r;
        if (op == OP_SUM) *y = (vt_dcomplex_t){x->re + y->re, x->im + y->im};
        else *y = (vt_dcomplex_t){x->re * y->re - x->im * y->im, x->re * y->im + x->im * y->re};
        break;
    }
    case VT_FLOAT_INT: LOC(vt_fi_t, op, l, r); break;
    case VT_DOUBLE_INT: LOC(vt_di_t, op, l, r); break;
    default: affine_compose(l, r); break;
    }
}

void vt_expect(vt_kind_t k, vt_op_t op, vt_gen_t g, const uint64_t *streams, int lo, int hi,
               size_t idx, void *out)
{
    /* WIDE data accumulates in long double (only compared with a tolerance) */
    if (g == GEN_WIDE && (k == VT_FLOAT || k == VT_DOUBLE)) {
        long double s = 0;
        for (int r = lo; r <= hi; r++) {
            double x = gen_wide(gen_at(streams[r], idx));
            s += k == VT_FLOAT ? (float)x : x;
        }
        if (k == VT_FLOAT) *(float *)out = (float)s;
        else *(double *)out = (double)s;
        return;
    }
    unsigned char acc[32], x[32];
    vt_gen(k, op, g, streams[lo], idx, acc);
    for (int r = lo + 1; r <= hi; r++) {
        vt_gen(k, op, g, streams[r], idx, x);
        vt_apply(k, op, acc, x);
        memcpy(acc, x, vt_size(k));
    }
    memcpy(out, acc, vt_size(k));
}

/* ------------------------------------------------------------------ compare */
int vt_equal(vt_kind_t k, const void *got, const void *want)
{
    switch (k) {
    case VT_FLOAT: case VT_REAL: return *(const float *)got == *(const float *)want;
    case VT_DOUBLE: case VT_DPREC: return *(const double *)got == *(const double *)want;
    case VT_DCOMPLEX: {   /* == per part: a product's zero part may carry either sign */
        const vt_dcomplex_t *a = got, *b = want;
        return a->re == b->re && a->im == b->im;
    }
    case VT_FLOAT_INT: {
        const vt_fi_t *a = got, *b = want;
        return a->v == b->v && a->i == b->i;
    }
    case VT_DOUBLE_INT: {
        const vt_di_t *a = got, *b = want;
        return a->v == b->v && a->i == b->i;
    }
    default: return memcmp(got, want, vt_size(k)) == 0;   /* no padding in the others */
    }
}

double vt_magnitude(vt_kind_t k, const void *v)
{
    if (k == VT_FLOAT) return fabs((double)*(const float *)v);
    if (k == VT_DOUBLE) return fabs(*(const double *)v);
    return 0;
}

int vt_close(vt_kind_t k, const void *got, const void *want, double scale, double tol)
{
    double g, w;
    if (k == VT_FLOAT) { g = *(const float *)got; w = *(const float *)want; }
    else if (k == VT_DOUBLE) { g = *(const double *)got; w = *(const double *)want; }
    else return vt_equal(k, got, want);
    return fabs(g - w) <= tol * scale;
}

uint64_t vt_hash(vt_kind_t k, const void *v, uint64_t h)
{
    if (k == VT_FLOAT_INT) {
        const vt_fi_t *x = v;
        return hash_bytes(&x->i, sizeof x->i, hash_bytes(&x->v, sizeof x->v, h));
    }
    if (k == VT_DOUBLE_INT) {
        const vt_di_t *x = v;
        return hash_bytes(&x->i, sizeof x->i, hash_bytes(&x->v, sizeof x->v, h));
    }
    return hash_bytes(v, vt_size(k), h);
}

void vt_format(vt_kind_t k, const void *v, char *buf, size_t n)
{
    switch (k) {
    case VT_INT: snprintf(buf, n, "%d", *(const int *)v); break;
    case VT_LONG: snprintf(buf, n, "%ld", *(const long *)v); break;
    case VT_UNSIGNED: snprintf(buf, n, "%u", *(const unsigned *)v); break;
    case VT_FLOAT: snprintf(buf, n, "%.9g", (double)*(const float *)v); break;
    case VT_DOUBLE: snprintf(buf, n, "%.17g", *(const double *)v); break;
    case VT_FINT: case VT_LOGICAL: snprintf(buf, n, "%d", *(const int *)v); break;
    case VT_REAL: snprintf(buf, n, "%.9g", (double)*(const float *)v); break;
    case VT_DPREC: snprintf(buf, n, "%.17g", *(const double *)v); break;
    case VT_2REAL: snprintf(buf, n, "(%g,%g)", (double)((const vt_2real_t *)v)->v, (double)((const vt_2real_t *)v)->i); break;
    case VT_DCOMPLEX: snprintf(buf, n, "(%g,%g)", ((const vt_dcomplex_t *)v)->re, ((const vt_dcomplex_t *)v)->im); break;
    case VT_2INT: case VT_2INTEGER: snprintf(buf, n, "(%d,%d)", ((const vt_2int_t *)v)->v, ((const vt_2int_t *)v)->i); break;
    case VT_FLOAT_INT: snprintf(buf, n, "(%g,%d)", (double)((const vt_fi_t *)v)->v, ((const vt_fi_t *)v)->i); break;
    case VT_DOUBLE_INT: snprintf(buf, n, "(%g,%d)", ((const vt_di_t *)v)->v, ((const vt_di_t *)v)->i); break;
    default: snprintf(buf, n, "(%u,%u)", ((const vt_affine_t *)v)->a, ((const vt_affine_t *)v)->b); break;
    }
}
