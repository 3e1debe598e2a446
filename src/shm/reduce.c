/* Reduction kernels: out = a op b for every predefined (op, type) pair MPI defines, as plain
 * loops the compiler vectorizes (one clone per SIMD level, picked at load time), and the
 * PMPI_Reduce_local path for everything else (user-defined ops, derived types).
 *
 * Results must be bit-identical to what the MPI library computes, because an algorithm may
 * mix both (or run on a communicator where another rank takes the PMPI path):
 *  - MIN/MAX are (b < a ? b : a) / (b > a ? b : a), as MPICH and Open MPI's base component
 *    compute op(inout, in) with in = a: on ties (+0 vs -0) the lower-ranked operand wins
 *    (Open MPI 4.1's op/avx component returns b there);
 *  - MAXLOC/MINLOC keep b's value on ties and take the smaller index;
 *  - floating point is never contracted into fused multiply-adds (complex products);
 *  - logical ops yield 0 or 1.
 * Integers follow C semantics where MPI libraries have bugs: SUM/PROD wrap (computed in the
 * unsigned type, so signed overflow is not undefined; Open MPI 4.1.4's op/avx saturates 8
 * and 16-bit SUM), MIN/MAX compare unsigned types as unsigned and MPI_OFFSET as signed
 * (Open MPI 4.1.4 and MPICH 4.0.2 get some of these wrong). See tests/unit/test_redkern.c.
 * Kernels are element-wise and read both operands before writing, so out may alias a or b
 * (the vectorizer's run-time overlap check accepts equal pointers). */
#if defined(__GNUC__) && !defined(__clang__)
/* -O2 vectorizes only loops that need no run-time alias check; these all do (out may alias
 * a or b). Never contract a*b+c into an FMA: MPI's own code (built for baseline x86-64)
 * rounds twice. */
#pragma GCC optimize("O3", "fp-contract=off")
#endif
#include "shm.h"
#include <complex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* gcc picks one clone per CPU at load time (ifunc). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VEC __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VEC
#endif

/* ---------------------------------------------------------------- kernels */
#define KERNEL(attr, name, T, EXPR)                                                          \
    attr static void name(void *out_, const void *a_, const void *b_, size_t n)               \
    {                                                                                        \
        typedef T u_t __attribute__((aligned(1))); /* any address: MPI buffers need not be */ \
        u_t *out = out_;                                                                     \
        const u_t *a = a_, *b = b_;                                                          \
        for (size_t i = 0; i < n; i++) {                                                     \
            T x = a[i], y = b[i];                                                            \
            out[i] = (T)(EXPR);                                                              \
        }                                                                                    \
    }

/* Integer ops whose result does not depend on signedness, per width; U is the unsigned
 * type the arithmetic runs in (at least unsigned int: no promotion to signed int). */
#define INT_WIDTH_KERNELS(w, T, U)                                                           \
    KERNEL(VEC, k_sum_##w, T, (U)x + (U)y)                                                   \
    KERNEL(VEC, k_prod_##w, T, (U)x * (U)y)                                                  \
    KERNEL(VEC, k_land_##w, T, x && y)                                                       \
    KERNEL(VEC, k_lor_##w, T, x || y)                                                        \
    KERNEL(VEC, k_lxor_##w, T, !x != !y)                                                     \
    KERNEL(VEC, k_band_##w, T, x & y)                                                        \
    KERNEL(VEC, k_bor_##w, T, x | y)                                                         \
    KERNEL(VEC, k_bxor_##w, T, x ^ y)
INT_WIDTH_KERNELS(8, uint8_t, unsigned)
INT_WIDTH_KERNELS(16, uint16_t, unsigned)
INT_WIDTH_KERNELS(32, uint32_t, uint32_t)
INT_WIDTH_KERNELS(64, uint64_t, uint64_t)

/* Ordered ops: per C type (integers by width and signedness, floating types). */
#define MINMAX_KERNELS(attr, tag, T)                                                         \
    KERNEL(attr, k_min_##tag, T, y < x ? y : x)                                              \
    KERNEL(attr, k_max_##tag, T, y > x ? y : x)
MINMAX_KERNELS(VEC, i8, int8_t)
MINMAX_KERNELS(VEC, u8, uint8_t)
MINMAX_KERNELS(VEC, i16, int16_t)
MINMAX_KERNELS(VEC, u16, uint16_t)
MINMAX_KERNELS(VEC, i32, int32_t)
MINMAX_KERNELS(VEC, u32, uint32_t)
MINMAX_KERNELS(VEC, i64, int64_t)
MINMAX_KERNELS(VEC, u64, uint64_t)
MINMAX_KERNELS(VEC, f32, float)
MINMAX_KERNELS(VEC, f64, double)
MINMAX_KERNELS(, f80, long double)   /* x87: nothing to vectorize */

KERNEL(VEC, k_sum_f32, float, x + y)
KERNEL(VEC, k_prod_f32, float, x * y)
KERNEL(VEC, k_sum_f64, double, x + y)
KERNEL(VEC, k_prod_f64, double, x * y)
KERNEL(, k_sum_f80, long double, x + y)
KERNEL(, k_prod_f80, long double, x * y)

/* Complex: C semantics (the product recovers infinities like the MPI library's C code). */
KERNEL(VEC, k_sum_c32, float _Complex, x + y)
KERNEL(, k_prod_c32, float _Complex, x * y)
KERNEL(VEC, k_sum_c64, double _Complex, x + y)
KERNEL(, k_prod_c64, double _Complex, x * y)
KERNEL(, k_sum_c80, long double _Complex, x + y)
KERNEL(, k_prod_c80, long double _Complex, x * y)

/* MAXLOC/MINLOC on {value; int index} pairs. */
#define LOC_KERNELS(tag, V)                                                                  \
    typedef struct {                                                                         \
        V v;                                                                                 \
        int k;                                                                               \
    } pair_##tag##_t;                                                                        \
    LOC_KERNEL(k_maxloc_##tag, pair_##tag##_t, >)                                            \
    LOC_KERNEL(k_minloc_##tag, pair_##tag##_t, <)
#define LOC_KERNEL(name, P, CMP)                                                             \
    static void name(void *out_, const void *a_, const void *b_, size_t n)                   \
    {                                                                                        \
        typedef P u_t __attribute__((aligned(1)));                                          \
        u_t *out = out_;                                                                     \
        const u_t *a = a_, *b = b_;                                                          \
        for (size_t i = 0; i < n; i++) {                                                     \
            P x = a[i], y = b[i];                                                            \
            int win = x.v CMP y.v, tie = x.v == y.v;                                         \
            out[i].v = win ? x.v : y.v;                                                      \
            out[i].k = win ? x.k : tie && x.k < y.k ? x.k : y.k;                             \
        }                                                                                    \
    }
LOC_KERNELS(float, float)
LOC_KERNELS(double, double)
LOC_KERNELS(long, long)
LOC_KERNELS(int, int)
LOC_KERNELS(short, short)
LOC_KERNELS(ldouble, long double)

/* Direct streaming kernels for the common pairs (float, double, 32 and 64-bit integers;
 * SUM, PROD, MIN, MAX) with AVX-512: a and b are loaded, combined and streamed a line at a
 * time, without the round trip of the block through L1 (measured 15-20% faster when a core's
 * memory bandwidth is the limit). The element results are those of the plain kernels: the
 * same operations, MIN/MAX as the same select (y < x ? y : x) written with masks. */
typedef void (*nt_lines_t)(char *out, const char *a, const char *b, size_t n);
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

#define NT_LINES(name, T, I, EXPR)                                                           \
    __attribute__((target("avx512f"))) static void name(char *out, const char *a, const char *b, \
                                                         size_t n)                           \
    {                                                                                        \
        typedef T v_t __attribute__((vector_size(64)));                                      \
        typedef I m_t __attribute__((vector_size(64))); /* masks (MIN/MAX) */               \
        (void)sizeof(m_t);                                                                   \
        for (size_t i = 0; i < n; i += MC_CL) {                                              \
            v_t x, y, r;                                                                     \
            memcpy(&x, a + i, MC_CL);                                                        \
            memcpy(&y, b + i, MC_CL);                                                        \
            r = EXPR;                                                                        \
            _mm512_stream_si512((__m512i *)(out + i), (__m512i)r);                           \
        }                                                                                    \
    }
/* y < x ? y : x, element-wise, as a bit select */
#define SEL(c) ((v_t)(((m_t)(c) & (m_t)y) | (~(m_t)(c) & (m_t)x)))
#define NT_FAMILY(tag, T, I, U)                                                              \
    NT_LINES(nt_min_##tag, T, I, SEL(y < x))                                                 \
    NT_LINES(nt_max_##tag, T, I, SEL(y > x))
NT_FAMILY(f32, float, int32_t, uint32_t)
NT_FAMILY(f64, double, int64_t, uint64_t)
NT_FAMILY(i32, int32_t, int32_t, uint32_t)
NT_FAMILY(u32, uint32_t, int32_t, uint32_t)
NT_FAMILY(i64, int64_t, int64_t, uint64_t)
NT_FAMILY(u64, uint64_t, int64_t, uint64_t)
NT_LINES(nt_sum_f32, float, int32_t, x + y)
NT_LINES(nt_prod_f32, float, int32_t, x * y)
NT_LINES(nt_sum_f64, double, int64_t, x + y)
NT_LINES(nt_prod_f64, double, int64_t, x * y)
NT_LINES(nt_sum_32, uint32_t, int32_t, x + y)
NT_LINES(nt_prod_32, uint32_t, int32_t, x * y)
NT_LINES(nt_sum_64, uint64_t, int64_t, x + y)
NT_LINES(nt_prod_64, uint64_t, int64_t, x * y)

#define MC_NT_LINES 1
#endif

/* ---------------------------------------------------------------- table */
enum { O_SUM, O_PROD, O_MIN, O_MAX, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR,
       O_MAXLOC, O_MINLOC, O_N };

typedef struct red_row {
    MPI_Datatype t;
    mc_red_kernel_t k[O_N];
    nt_lines_t nt[O_N];   /* streaming kernel of the same operation, or NULL */
} red_row_t;

#define MAX_ROWS 64
static red_row_t rows[MAX_ROWS];
static int nrows;
static MPI_Op ops[O_N];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Operation groups of MPI's reduction table (MPI-4.0 §6.9.2). */
enum {
    G_CINT,       /* C integer: every arithmetic, logical and bitwise op */
    G_FINT,       /* Fortran integer and multi-language (Aint, Offset, Count): no logical ops */
    G_FLOAT,      /* MIN MAX SUM PROD */
    G_COMPLEX,    /* SUM PROD */
    G_LOGICAL,    /* LAND LOR LXOR */
    G_BYTE,       /* BAND BOR BXOR */
    G_PAIR        /* MAXLOC MINLOC */
};

/* Registers t when the MPI library lays it out as the C type we compute with. */
static red_row_t *add_row(MPI_Datatype t, size_t csize, size_t cvalue_size)
{
    MPI_Aint lb, extent;
    int size;
    if (t == MPI_DATATYPE_NULL || nrows == MAX_ROWS) return NULL;
    for (int i = 0; i < nrows; i++)
        if (rows[i].t == t) return NULL;   /* alias of a registered handle (MPI_LONG_LONG) */
    if (PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS || lb != 0 ||
        (size_t)extent != csize)
        return NULL;
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS || (size_t)size < cvalue_size) return NULL;
    red_row_t *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    r->t = t;
    return r;
}

static void add_int(MPI_Datatype t, size_t size, int is_signed, int group)
{
    red_row_t *r = add_row(t, size, size);
    if (!r) return;
#define W(w, s, u)                                                                           \
    r->k[O_SUM] = k_sum_##w, r->k[O_PROD] = k_prod_##w;                                      \
    r->k[O_MIN] = is_signed ? k_min_##s : k_min_##u;                                         \
    r->k[O_MAX] = is_signed ? k_max_##s : k_max_##u;                                         \
    r->k[O_LAND] = k_land_##w, r->k[O_LOR] = k_lor_##w, r->k[O_LXOR] = k_lxor_##w;           \
    r->k[O_BAND] = k_band_##w, r->k[O_BOR] = k_bor_##w, r->k[O_BXOR] = k_bxor_##w;
    switch (size) {
    case 1: W(8, i8, u8) break;
    case 2: W(16, i16, u16) break;
    case 4: W(32, i32, u32) break;
    case 8: W(64, i64, u64) break;
    default: nrows--; return;   /* no such integer width here */
    }
#undef W
    if (group == G_FINT) r->k[O_LAND] = r->k[O_LOR] = r->k[O_LXOR] = NULL;
}

/* S: 1 for a signed type (MIN/MAX compare signed) */
#define ADD_CINT(t, T, S) add_int(t, sizeof(T), S, G_CINT)
#define ADD_FINT(t, T, S) add_int(t, sizeof(T), S, G_FINT)
#define ADD4(t, T, sum, prod, min, max)                                                      \
    do {                                                                                     \
        red_row_t *r_ = add_row(t, sizeof(T), sizeof(T));                                    \
        if (r_) r_->k[O_SUM] = sum, r_->k[O_PROD] = prod, r_->k[O_MIN] = min,                \
                r_->k[O_MAX] = max;                                                          \
    } while (0)
#define ADD_FLOAT(t, T, tag) ADD4(t, T, k_sum_##tag, k_prod_##tag, k_min_##tag, k_max_##tag)
#define ADD_COMPLEX(t, T, tag) ADD4(t, T, k_sum_##tag, k_prod_##tag, NULL, NULL)
/* the value and the index, without the padding */
#define ADD_PAIR(t, tag)                                                                     \
    do {                                                                                     \
        red_row_t *r_ = add_row(t, sizeof(pair_##tag##_t),                                   \
                                sizeof(((pair_##tag##_t *)0)->v) + sizeof(int));             \
        if (r_) r_->k[O_MAXLOC] = k_maxloc_##tag, r_->k[O_MINLOC] = k_minloc_##tag;          \
    } while (0)

static void build(void)
{
    const MPI_Op o[O_N] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR, MPI_LXOR,
                           MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    memcpy(ops, o, sizeof ops);

    ADD_CINT(MPI_INT, int, 1);
    ADD_CINT(MPI_LONG, long, 1);
    ADD_CINT(MPI_SHORT, short, 1);
    ADD_CINT(MPI_UNSIGNED_SHORT, unsigned short, 0);
    ADD_CINT(MPI_UNSIGNED, unsigned, 0);
    ADD_CINT(MPI_UNSIGNED_LONG, unsigned long, 0);
    ADD_CINT(MPI_LONG_LONG_INT, long long, 1);
    ADD_CINT(MPI_LONG_LONG, long long, 1);
    ADD_CINT(MPI_UNSIGNED_LONG_LONG, unsigned long long, 0);
    ADD_CINT(MPI_SIGNED_CHAR, signed char, 1);
    ADD_CINT(MPI_UNSIGNED_CHAR, unsigned char, 0);
    ADD_CINT(MPI_INT8_T, int8_t, 1);
    ADD_CINT(MPI_INT16_T, int16_t, 1);
    ADD_CINT(MPI_INT32_T, int32_t, 1);
    ADD_CINT(MPI_INT64_T, int64_t, 1);
    ADD_CINT(MPI_UINT8_T, uint8_t, 0);
    ADD_CINT(MPI_UINT16_T, uint16_t, 0);
    ADD_CINT(MPI_UINT32_T, uint32_t, 0);
    ADD_CINT(MPI_UINT64_T, uint64_t, 0);
    ADD_FINT(MPI_AINT, MPI_Aint, 1);
    ADD_FINT(MPI_OFFSET, MPI_Offset, 1);
#ifdef MPI_COUNT
    ADD_FINT(MPI_COUNT, MPI_Count, 1);
#endif
    /* Fortran INTEGER(n)/REAL(n)/COMPLEX(n) compute as the C types of their size (add_row
     * checks the extent; MPI_LOGICAL, MPI_2REAL and MPI_2DOUBLE_PRECISION, whose truth values
     * and index fields are Fortran's, go through PMPI_Reduce_local) */
    ADD_FINT(MPI_INTEGER, int, 1);
    ADD_FINT(MPI_INTEGER1, int8_t, 1);
    ADD_FINT(MPI_INTEGER2, int16_t, 1);
    ADD_FINT(MPI_INTEGER4, int32_t, 1);
    ADD_FINT(MPI_INTEGER8, int64_t, 1);
    ADD_FLOAT(MPI_FLOAT, float, f32);
    ADD_FLOAT(MPI_DOUBLE, double, f64);
    ADD_FLOAT(MPI_LONG_DOUBLE, long double, f80);
    ADD_FLOAT(MPI_REAL, float, f32);
    ADD_FLOAT(MPI_DOUBLE_PRECISION, double, f64);
    ADD_FLOAT(MPI_REAL4, float, f32);
    ADD_FLOAT(MPI_REAL8, double, f64);
    ADD_COMPLEX(MPI_C_FLOAT_COMPLEX, float _Complex, c32);
#ifdef MPI_C_COMPLEX
    ADD_COMPLEX(MPI_C_COMPLEX, float _Complex, c32);
#endif
    ADD_COMPLEX(MPI_C_DOUBLE_COMPLEX, double _Complex, c64);
    ADD_COMPLEX(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, c80);
    ADD_COMPLEX(MPI_COMPLEX, float _Complex, c32);
    ADD_COMPLEX(MPI_COMPLEX8, float _Complex, c32);
    ADD_COMPLEX(MPI_DOUBLE_COMPLEX, double _Complex, c64);
    ADD_COMPLEX(MPI_COMPLEX16, double _Complex, c64);

    /* C bool as bytes (a byte other than 0/1 is still "true", and the result is 0/1) */
    red_row_t *r = add_row(MPI_C_BOOL, 1, 1);
    if (r) r->k[O_LAND] = k_land_8, r->k[O_LOR] = k_lor_8, r->k[O_LXOR] = k_lxor_8;
    r = add_row(MPI_BYTE, 1, 1);
    if (r) r->k[O_BAND] = k_band_8, r->k[O_BOR] = k_bor_8, r->k[O_BXOR] = k_bxor_8;

    ADD_PAIR(MPI_FLOAT_INT, float);
    ADD_PAIR(MPI_DOUBLE_INT, double);
    ADD_PAIR(MPI_LONG_INT, long);
    ADD_PAIR(MPI_2INT, int);
    ADD_PAIR(MPI_2INTEGER, int);
    ADD_PAIR(MPI_SHORT_INT, short);
    ADD_PAIR(MPI_LONG_DOUBLE_INT, ldouble);

#ifdef MC_NT_LINES
    /* here, where the kernels' addresses are taken as above (a target_clones function's
     * address differs between code and static initializers) */
    if (!__builtin_cpu_supports("avx512f")) return;
    for (int i = 0; i < nrows; i++)
        for (int o = 0; o < O_N; o++) {
            mc_red_kernel_t k = rows[i].k[o];
            nt_lines_t *nt = &rows[i].nt[o];
#define NT_MAP(kern, ntk)                                                                    \
    if (k && k == kern) *nt = ntk;
            NT_MAP(k_sum_f32, nt_sum_f32) NT_MAP(k_prod_f32, nt_prod_f32)
            NT_MAP(k_min_f32, nt_min_f32) NT_MAP(k_max_f32, nt_max_f32)
            NT_MAP(k_sum_f64, nt_sum_f64) NT_MAP(k_prod_f64, nt_prod_f64)
            NT_MAP(k_min_f64, nt_min_f64) NT_MAP(k_max_f64, nt_max_f64)
            NT_MAP(k_sum_32, nt_sum_32) NT_MAP(k_prod_32, nt_prod_32)
            NT_MAP(k_min_i32, nt_min_i32) NT_MAP(k_max_i32, nt_max_i32)
            NT_MAP(k_min_u32, nt_min_u32) NT_MAP(k_max_u32, nt_max_u32)
            NT_MAP(k_sum_64, nt_sum_64) NT_MAP(k_prod_64, nt_prod_64)
            NT_MAP(k_min_i64, nt_min_i64) NT_MAP(k_max_i64, nt_max_i64)
            NT_MAP(k_min_u64, nt_min_u64) NT_MAP(k_max_u64, nt_max_u64)
#undef NT_MAP
        }
#endif
}

static mc_red_kernel_t lookup(MPI_Op op, MPI_Datatype t)
{
    pthread_once(&once, build);
    int o = 0;
    while (o < O_N && ops[o] != op) o++;
    if (o == O_N) return NULL;
    for (int i = 0; i < nrows; i++)
        if (rows[i].t == t) return rows[i].k[o];
    return NULL;
}

/* Handles of predefined ops and types never change, and a freed user handle that is reused
 * is again a user handle (no kernel): the last answer stays valid. */
static __thread struct {
    MPI_Op op;
    MPI_Datatype t;
    mc_red_kernel_t k;
    int valid;
} last;

mc_red_kernel_t mc_red_kernel(MPI_Op op, MPI_Datatype t)
{
    if (last.valid && last.op == op && last.t == t) return last.k;
    mc_red_kernel_t k = lookup(op, t);
    last.op = op, last.t = t, last.k = k, last.valid = 1;
    return k;
}

/* ---------------------------------------------------------------- reductions */
void mc_red_init(mc_red_t *r, const mc_args_t *a)
{
    r->op = a->op;
    r->dtype = a->dtype;
    r->extent = a->extent;
    r->commute = a->commute;
    r->k3 = mc_red_kernel(a->op, a->dtype);
}

static int reduce_local(const mc_red_t *r, const void *in, void *inout, size_t count)
{
    return mc_reduce_pieces(in, inout, count, r->dtype, (MPI_Aint)r->extent, r->op);
}

int mc_red2(const mc_red_t *r, const void *in, void *inout, size_t count)
{
    mc_dav_bytes += 3 * (uint64_t)count * r->extent;
    if (r->k3) {
        r->k3(inout, in, inout, count);
        return MPI_SUCCESS;
    }
    return reduce_local(r, in, inout, count);
}

/* ---- user-defined operations: PMPI_Reduce_local only computes inout = in op inout */

/* Where the bytes of one element live relative to its address, and whether elements are
 * dense (no holes: a byte copy of count * extent bytes is a typed copy). */
typedef struct layout {
    MPI_Aint tlb, text;
    int size, dense;
} layout_t;

static int get_layout(const mc_red_t *r, layout_t *L)
{
    int rc = PMPI_Type_get_true_extent(r->dtype, &L->tlb, &L->text);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_size(r->dtype, &L->size);
    if (rc != MPI_SUCCESS) return rc;
    L->dense = L->tlb == 0 && (size_t)L->text == r->extent && (size_t)L->size == r->extent;
    return MPI_SUCCESS;
}

/* Copies k elements from src to dst without writing the holes of dst (the user may keep
 * data there): pack into `pack` (k * size bytes), unpack into dst. */
static int copy_elems(const mc_red_t *r, const layout_t *L, void *dst, const void *src, size_t k,
                      void *pack)
{
    if (L->dense) {
        mc_memmove(dst, src, k * r->extent);
        return MPI_SUCCESS;
    }
    int pos = 0, bytes = (int)(k * (size_t)L->size);
    int rc = PMPI_Pack(src, (int)k, r->dtype, pack, bytes, &pos, MPI_COMM_SELF);
    if (rc != MPI_SUCCESS) return rc;
    pos = 0;
    return PMPI_Unpack(pack, bytes, &pos, dst, (int)k, r->dtype, MPI_COMM_SELF);
}

#define TMP_BYTES ((size_t)256 << 10)   /* bound on the temporaries of the slow path */

static int red3_user(const mc_red_t *r, char *out, const char *a, const char *b, size_t count)
{
    /* MPI's shape already (in and inout must be distinct buffers) */
    if (out == b && a != b) return reduce_local(r, a, out, count);
    layout_t L;
    int rc = get_layout(r, &L);
    if (rc != MPI_SUCCESS) return rc;
    size_t size = L.size > 0 ? (size_t)L.size : 1;
    size_t per = r->extent > size ? r->extent : size;
    size_t k = TMP_BYTES / per;
    if (k < 1) k = 1;
    if (k > (size_t)INT_MAX / size) k = (size_t)INT_MAX / size;
    if (k > count) k = count;
    /* out == a: b's chunk goes to a temporary, is reduced with a there, and copied to out;
     * otherwise b is copied into out and reduced in place. */
    int via_tmp = out == a;
    size_t span = via_tmp ? (k - 1) * r->extent + (size_t)L.text : 0;
    size_t packlen = L.dense ? 0 : k * size;
    char *tmp = NULL, *pack = NULL;
    if (span + packlen) {
        tmp = malloc(span + packlen);
        if (!tmp) return MPI_ERR_NO_MEM;
        pack = tmp + span;
    }
    for (size_t i = 0; i < count && rc == MPI_SUCCESS; i += k) {
        size_t n = count - i < k ? count - i : k, off = i * r->extent;
        if (via_tmp) {
            char *t = tmp - L.tlb;   /* element 0 of the temporary */
            mc_memmove(tmp, b + off + L.tlb, (n - 1) * r->extent + (size_t)L.text);
            rc = reduce_local(r, a + off, t, n);
            if (rc == MPI_SUCCESS) rc = copy_elems(r, &L, out + off, t, n, pack);
        } else {
            rc = copy_elems(r, &L, out + off, b + off, n, pack);
            if (rc == MPI_SUCCESS) rc = reduce_local(r, a + off, out + off, n);
        }
    }
    free(tmp);
    return rc;
}

int mc_red3(const mc_red_t *r, void *out, const void *a, const void *b, size_t count)
{
    mc_dav_bytes += 3 * (uint64_t)count * r->extent;
    if (r->k3) {
        r->k3(out, a, b, count);
        return MPI_SUCCESS;
    }
    if (!count) return MPI_SUCCESS;
    return red3_user(r, out, a, b, count);
}

/* ---------------------------------------------------------------- streaming reductions
 *
 * The vectorized kernel computes a block into a small buffer that stays in L1, and the
 * block's whole lines are streamed to out: every (op, type) pair at once, and the loads of a
 * and b are plain loads the hardware prefetchers follow. buf[0] mirrors the line of out that
 * holds the block's first byte, so streamed lines are whole and aligned whatever out's
 * alignment: the first line of out, when partial, is written with plain stores, and a block
 * whose last line is partial carries it to the front of buf, where the next block completes
 * it. Blocks span a whole number of lines (a multiple of lcm(extent, 64) bytes), so the
 * carry always has the same length. Every line of out is written after the inputs of its
 * elements were read, so out may alias a or b. */
#define RED_NT_BLOCK 4096   /* bytes computed per round trip through L1 */

/* Kernels that leave bytes of an element unwritten (x87 values in 16-byte slots, padded
 * pairs): streaming out of buf would fill those holes with whatever buf held, where mc_red3
 * leaves the destination's bytes alone. They take mc_red3 (slow types anyway). */
static int writes_whole_elements(mc_red_kernel_t k)
{
    static const mc_red_kernel_t holes[] = {
        k_sum_f80, k_prod_f80, k_min_f80, k_max_f80, k_sum_c80, k_prod_c80,
        k_maxloc_double, k_minloc_double, k_maxloc_long, k_minloc_long,
        k_maxloc_short, k_minloc_short, k_maxloc_ldouble, k_minloc_ldouble};
    for (size_t i = 0; i < sizeof holes / sizeof holes[0]; i++)
        if (k == holes[i]) return 0;
    return 1;
}

/* The streaming loop for outs that share their offset in a line; DAV counted by the caller. */
static void red3_stream(const mc_red_t *r, void *const *outs, int nout, const char *x, const char *y,
                        size_t count, size_t unit)
{
    size_t ext = r->extent;
    _Alignas(MC_CL) char buf[RED_NT_BLOCK + MC_CL];
    size_t bb = RED_NT_BLOCK / unit * unit, B = bb / ext;   /* block: bytes, elements */
    size_t m = (uintptr_t)outs[0] & (MC_CL - 1), lo = m;  /* buf[lo..) is ours to write */
    ptrdiff_t line = -(ptrdiff_t)m;                      /* out offset buf[0] mirrors */
    for (size_t i = 0; i < count; i += B) {
        size_t k = count - i < B ? count - i : B, end = m + k * ext, whole = end & ~(size_t)(MC_CL - 1);
        r->k3(buf + m, x + i * ext, y + i * ext, k);
        size_t s = lo ? MC_CL : 0, last = i + k >= count;
        for (int j = 0; j < nout; j++) {
            char *l = (char *)outs[j] + line;
            if (lo) /* the first line of out, shared with bytes before it */
                memcpy(l + lo, buf + lo, (end < MC_CL ? end : MC_CL) - lo);
            if (whole > s) mc_stream_lines(l + s, buf + s, whole - s);
            if (last && end > whole && whole >= s) memcpy(l + whole, buf + whole, end - whole);
        }
        lo = 0;
        if (!last) {   /* whole == bb: carry the partial line to the front */
            memcpy(buf, buf + whole, end - whole);
            line += (ptrdiff_t)whole;
        }
    }
    mc_stream_fence();
}

static int red3_nt_ok(const mc_red_t *r, size_t count, size_t *unit)
{
    size_t ext = r->extent, g = ext & (size_t)-ext;   /* lowest set bit: gcd(ext, 64) below */
    if (g > MC_CL) g = MC_CL;
    *unit = g ? ext * (MC_CL / g) : 0;                 /* bytes of lcm(ext, 64) */
    return r->k3 && ext && count * ext >= MC_RED_NT_MIN && *unit <= RED_NT_BLOCK &&
           writes_whole_elements(r->k3);
}



/* The streaming kernel of (op, type), or NULL: only with the avx512 nt variant. */
static nt_lines_t nt_lines_for(const mc_red_t *r)
{
    pthread_once(&once, build);
    if (strcmp(mc_copy_nt_kind(), "avx512")) return NULL;
    int o = 0;
    while (o < O_N && ops[o] != r->op) o++;
    for (int i = 0; i < nrows && o < O_N; i++)
        if (rows[i].t == r->dtype) return rows[i].nt[o];
    return NULL;
}

int mc_red3_nt(const mc_red_t *r, void *out, const void *a, const void *b, size_t count)
{
    size_t unit, ext = r->extent;
    if (!red3_nt_ok(r, count, &unit)) return mc_red3(r, out, a, b, count);
    mc_dav_bytes += 3 * (uint64_t)count * ext;
    mc_nt_bytes += (uint64_t)count * ext;
    nt_lines_t lines = nt_lines_for(r);
    if (!lines || (uintptr_t)out % ext) {
        red3_stream(r, &out, 1, a, b, count, unit);
        return MPI_SUCCESS;
    }
    /* elements up to out's first line boundary, whole lines, the rest: plain kernel,
     * streaming kernel, plain kernel (line by line, so out may alias a or b) */
    char *o = out;
    const char *x = a, *y = b;
    size_t h = ((MC_CL - ((uintptr_t)o & (MC_CL - 1))) & (MC_CL - 1)) / ext;
    size_t body = (count - h) * ext & ~(size_t)(MC_CL - 1), t = h + body / ext;
    r->k3(o, x, y, h);
    lines(o + h * ext, x + h * ext, y + h * ext, body);
    r->k3(o + t * ext, x + t * ext, y + t * ext, count - t);
    mc_stream_fence();
    return MPI_SUCCESS;
}

int mc_red3_nt_multi(const mc_red_t *r, void *const *outs, int nout, const void *a, const void *b, size_t count)
{
    size_t unit, n = count * r->extent;
    int same = 1;
    for (int j = 1; j < nout; j++) same &= ((uintptr_t)outs[j] & (MC_CL - 1)) == ((uintptr_t)outs[0] & (MC_CL - 1));
    if (nout < 1) return MPI_SUCCESS;
    if (!same || !red3_nt_ok(r, count, &unit)) {
        /* the result once, then copies of it (byte copies, as a gather of it would be) */
        int rc = mc_red3_nt(r, outs[0], a, b, count);
        for (int j = 1; j < nout && rc == MPI_SUCCESS; j++) mc_copy_nt(outs[j], outs[0], n);
        return rc;
    }
    mc_dav_bytes += 3 * (uint64_t)n + 2 * (uint64_t)n * (uint64_t)(nout - 1);
    mc_nt_bytes += (uint64_t)n * (uint64_t)nout;
    red3_stream(r, outs, nout, a, b, count, unit);
    return MPI_SUCCESS;
}

int mc_red3_adaptive(const mc_red_t *r, void *out, const void *a, const void *b, size_t count,
                     int nontemporal, size_t W, size_t C)
{
    if (nontemporal && W > C) return mc_red3_nt(r, out, a, b, count);
    return mc_red3(r, out, a, b, count);
}
