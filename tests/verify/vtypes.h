/* Value types and operations of the reduction tests: how to generate an element for a given
 * (op, rank, index), how to combine two elements exactly as MPI defines the op, how to compare
 * and hash results. The non-commutative user op is affine-map composition:
 * (a,b) o (c,d) = (a*c mod M, (b*c + d) mod M), i.e. "apply x -> a*x+b, then x -> c*x+d". */
#ifndef VERIFY_VTYPES_H
#define VERIFY_VTYPES_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* VT_FINT .. VT_DCOMPLEX: Fortran's predefined types (MPI_INTEGER, MPI_REAL,
 * MPI_DOUBLE_PRECISION, MPI_LOGICAL, MPI_2INTEGER, MPI_2REAL, MPI_DOUBLE_COMPLEX), which a C
 * program may use too and a Fortran program reaches mcoll with. */
typedef enum { VT_INT, VT_LONG, VT_UNSIGNED, VT_FLOAT, VT_DOUBLE, VT_2INT, VT_FLOAT_INT,
               VT_DOUBLE_INT, VT_AFFINE, VT_FINT, VT_REAL, VT_DPREC, VT_LOGICAL, VT_2INTEGER,
               VT_2REAL, VT_DCOMPLEX, VT_NKINDS } vt_kind_t;
typedef enum { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_LAND, OP_LOR, OP_LXOR, OP_BAND, OP_BOR,
               OP_BXOR, OP_MAXLOC, OP_MINLOC, OP_AFFINE, OP_NOPS } vt_op_t;

/* EXACT: values whose reduction is exact in any order (small ints, dyadic floats).
 * WIDE: floats over many binades, so the result depends on the reduction order.
 * ONES: every element 1 (SUM then counts contributions: double counting shows). */
typedef enum { GEN_EXACT, GEN_WIDE, GEN_ONES } vt_gen_t;

typedef struct { int v, i; } vt_2int_t;
typedef struct { float v; int i; } vt_fi_t;
typedef struct { double v; int i; } vt_di_t;
typedef struct { uint32_t a, b; } vt_affine_t;
typedef struct { float v, i; } vt_2real_t;      /* MPI_2REAL: the index is a REAL too */
typedef struct { double re, im; } vt_dcomplex_t;

#define AFFINE_MOD 1000003u

typedef struct {
    vt_kind_t kind;
    vt_op_t op;
} vt_combo_t;

/* Creates the user datatype/op (after MPI_Init) and frees them (before MPI_Finalize). */
int vt_init(void);
void vt_fini(void);
/* The native MPI's MIN/MAX treat MPI_UNSIGNED as signed (the data then avoids the top bit). */
int vt_unsigned_minmax_broken(void);

const char *vt_kind_name(vt_kind_t k);
const char *vt_op_name(vt_op_t op);
MPI_Datatype vt_mpi_type(vt_kind_t k);
MPI_Op vt_mpi_op(vt_op_t op);
size_t vt_size(vt_kind_t k);               /* C size == MPI extent */
int vt_op_commutes(vt_op_t op);

/* Every valid (type, op) pair of the predefined ops plus the user op; returns the count. */
int vt_combos(const vt_combo_t **out);

/* Data stream of `rank` for an op (datagen.h); element idx of that rank's contribution. */
uint64_t vt_stream(vt_op_t op, uint32_t seed, int rank);
void vt_gen(vt_kind_t k, vt_op_t op, vt_gen_t g, uint64_t stream, size_t idx, void *out);
/* right = left op right: `left` is the lower-ranked operand, as in MPI_Reduce_local. */
void vt_apply(vt_kind_t k, vt_op_t op, const void *left, void *right);
/* Expected reduction of element idx over ranks lo..hi (inclusive), in rank order;
 * streams[r] is rank r's stream. */
void vt_expect(vt_kind_t k, vt_op_t op, vt_gen_t g, const uint64_t *streams, int lo, int hi,
               size_t idx, void *out);
/* Field-wise equality (padding ignored); for WIDE data a relative tolerance `tol` applies
 * to the value against `scale` (sum of magnitudes). */
int vt_equal(vt_kind_t k, const void *got, const void *want);
int vt_close(vt_kind_t k, const void *got, const void *want, double scale, double tol);
double vt_magnitude(vt_kind_t k, const void *v);
uint64_t vt_hash(vt_kind_t k, const void *v, uint64_t h);
void vt_format(vt_kind_t k, const void *v, char *buf, size_t n);
#endif
