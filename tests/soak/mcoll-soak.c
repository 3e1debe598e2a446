/* mcoll-soak: long random sequences of collectives, each checked against the native MPI.
 *
 * mcoll-verify walks a fixed plan, one collective and one algorithm at a time. Here every call
 * draws everything at random from a seed all ranks share: the collective, the algorithm
 * (forced through mcoll_set_alg, or the default selection), segment size and radix, the
 * communicator (world, reversed, halves, a duplicate, and one re-made every few dozen calls,
 * some of them without a rank), the size (0 B to --max, log-uniform, odd), the datatypes (each
 * rank its own send and receive type of one signature: int, a vector with holes, a resized int
 * with a gap), the op and its type (every predefined class, MAXLOC pairs, a commutative and a
 * non-commutative user op), the root, in place, v-counts with zero blocks and displacements in
 * a shuffled order with gaps, buffers from malloc or from the shared heap, misaligned starts,
 * or exact malloc blocks (--exact-share of the malloc calls: what MCOLL_SHM_ADOPT adopts).
 * So the calls follow one another in mixes the plan never makes: what one call leaves in the
 * node region, the pools, the trials' schedules and the repeated-call path meets the next.
 *
 * Each call runs twice on the same inputs: through mcoll (MPI_*) and through the native MPI
 * (PMPI_*), on separate buffers prefilled identically, guard zones included. The oracle is the
 * native result: every byte of the receive and send buffers must be equal after the two calls
 * (holes of derived types and gaps between v-blocks too: neither may write them), and both
 * calls return MPI_SUCCESS. Data are chosen so that every reduction is exact in any order
 * (small integers in floating point, integers that do not overflow), so a different but legal
 * order of reduction cannot differ; the non-commutative op is exact too (affine maps mod 2^32).
 * Exscan's result on rank 0 is undefined and not compared.
 *
 * Usage: mcoll-soak [--seed N] [--iters N] [--max BYTES] [--heap-share 0..100]
 *                   [--exact-share 0..100] [--no-cma] [--verbose]
 * --no-cma: every rank forbids itself CMA right after MPI_Init (tests/verify/nocma.h), as on
 * a container's node; the native MPI must then do without it too (Open MPI
 * btl_vader_single_copy_mechanism=none, MPICH over UCX UCX_TLS=self,posix,sysv).
 * Prints "FAIL soak ..." for each difference (the call's full description: rerun with the same
 * seed to reproduce) and "PASSED" with a count of the algorithms that ran. */
#include "../verify/nocma.h" /* --no-cma: the ranks forbid themselves CMA */
#include "shm/heap.h"        /* mc_adopt_counts: how many exact blocks MCOLL_SHM_ADOPT adopted */
#include <mcoll.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t seed = 1;
static int wrank, wsize, verbose, fails, heap_share = 30, exact_share = 15, native_mpich, no_cma;
static size_t max_bytes = 4u << 20;
static char label[1024];

/* ---------------------------------------------------------------- random numbers */
/* Counter-based: a draw depends on (seed, call, key) only, so ranks of different
 * communicators (the halves) never fall out of step. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static long it_now;
static uint64_t draw(uint64_t key)
{
    return mix(seed ^ mix((uint64_t)it_now * 0x100000001b3ull ^ mix(key)));
}
static int pick(uint64_t key, int n)
{
    return n > 0 ? (int)(draw(key) % (uint64_t)n) : 0;
}
static int chance(uint64_t key, int percent)
{
    return pick(key, 100) < percent;
}
/* Data: a value per (call, rank, buffer, slot). */
static uint64_t datum(int r, int buf, size_t slot)
{
    return draw(((uint64_t)r << 48) ^ ((uint64_t)buf << 40) ^ slot ^ 0x5eed);
}

/* ---------------------------------------------------------------- datatypes */
/* Movers: each rank sends and receives in its own type of the call's family (the signatures
 * match: the counts are in ints, even, and a type holds 1 or 2 of them). */
enum { F_BYTE, F_INT, F_DOUBLE, NFAM };
typedef struct {
    const char *name;
    MPI_Datatype dt;
    int per;             /* base elements per datatype element */
    MPI_Aint ext, span1; /* extent, bytes from an element's start to its last byte */
} mtype_t;
static mtype_t mt_byte, mt_double, mt_int[3];

static void mk_mtype(mtype_t *t, const char *name, MPI_Datatype dt, int per)
{
    MPI_Aint lb, tlb, text;
    t->name = name, t->dt = dt, t->per = per;
    MPI_Type_get_extent(dt, &lb, &t->ext);
    MPI_Type_get_true_extent(dt, &tlb, &text);
    t->span1 = tlb + text;
}
static void types_init(void)
{
    MPI_Datatype vec, rsz;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* ints at 0 and 8, a hole at 4: extent 12 */
    MPI_Type_commit(&vec);
    MPI_Type_create_resized(MPI_INT, -4, 12, &rsz); /* lb -4, an int every 12 bytes */
    MPI_Type_commit(&rsz);
    mk_mtype(&mt_byte, "byte", MPI_BYTE, 1);
    mk_mtype(&mt_double, "double", MPI_DOUBLE, 1);
    mk_mtype(&mt_int[0], "int", MPI_INT, 1);
    mk_mtype(&mt_int[1], "vec2int", vec, 2);
    mk_mtype(&mt_int[2], "rsz12int", rsz, 1);
}
static size_t span(const mtype_t *t, long count)
{
    return count > 0 ? (size_t)((count - 1) * t->ext + t->span1) : 0;
}
/* The type rank r uses on side `side` (0 send, 1 receive) of this call. A rank's two types
 * have one size (ranks differ): Open MPI 4.1's tuned allgatherv decides by the send type's
 * size times the receive counts, so ranks whose send and receive types differ in size take
 * different algorithms and hang. */
static const mtype_t *mtype_of(int fam, int r, int side)
{
    if (fam == F_BYTE) return &mt_byte;
    if (fam == F_DOUBLE) return &mt_double;
    int k = pick(0x7000 + (uint64_t)r, 5); /* send/receive: int/int, rsz/int, int/rsz, rsz/rsz, vec/vec */
    return k == 4 ? &mt_int[1] : &mt_int[(side ? k >> 1 : k & 1) ? 2 : 0];
}
static size_t base_size(int fam)
{
    return fam == F_BYTE ? 1 : fam == F_INT ? 4 : 8;
}

/* Reductions: a predefined or user op on its type, values of a class that keeps the result
 * exact in any order of combination. */
enum { V_FULL, V_SMALL, V_PROD, V_LOGIC, V_LOC };
typedef struct {
    const char *name;
    MPI_Datatype dt;
    MPI_Op op;
    /* 'i' int32, 'd' double, 'f' float, 'l' int64, 's' int16, 'c' uint8, 'p' pair of int32,
     * 'q' float and int */
    int base;
    int vals;
    size_t size;
} rop_t;
static rop_t rops[32];
static int nrops;
static MPI_Datatype pair_u32;
static MPI_Op op_affine, op_usum;

/* x_lower then x_higher: f(t) = a t + b composed, mod 2^32 (associative, not commutative). */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    uint32_t *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        uint32_t a = y[2 * i] * x[2 * i], b = y[2 * i] * x[2 * i + 1] + y[2 * i + 1];
        y[2 * i] = a, y[2 * i + 1] = b;
    }
}
static void usum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++) y[i] += x[i];
}
static void rop(const char *name, MPI_Datatype dt, MPI_Op op, int base, int vals, size_t size)
{
    rops[nrops++] = (rop_t){name, dt, op, base, vals, size};
}
static void rops_init(void)
{
    MPI_Type_contiguous(2, MPI_UINT32_T, &pair_u32);
    MPI_Type_commit(&pair_u32);
    MPI_Op_create(affine, 0, &op_affine);
    MPI_Op_create(usum, 1, &op_usum);
    rop("int sum", MPI_INT, MPI_SUM, 'i', V_SMALL, 4);
    rop("int prod", MPI_INT, MPI_PROD, 'i', V_PROD, 4);
    rop("int max", MPI_INT, MPI_MAX, 'i', V_FULL, 4);
    rop("int min", MPI_INT, MPI_MIN, 'i', V_FULL, 4);
    rop("int band", MPI_INT, MPI_BAND, 'i', V_FULL, 4);
    rop("int bor", MPI_INT, MPI_BOR, 'i', V_FULL, 4);
    rop("int bxor", MPI_INT, MPI_BXOR, 'i', V_FULL, 4);
    rop("int land", MPI_INT, MPI_LAND, 'i', V_LOGIC, 4);
    rop("int lor", MPI_INT, MPI_LOR, 'i', V_LOGIC, 4);
    rop("int lxor", MPI_INT, MPI_LXOR, 'i', V_LOGIC, 4);
    rop("double sum", MPI_DOUBLE, MPI_SUM, 'd', V_SMALL, 8);
    rop("double sum", MPI_DOUBLE, MPI_SUM, 'd', V_SMALL, 8); /* the common case, twice as often */
    rop("double prod", MPI_DOUBLE, MPI_PROD, 'd', V_PROD, 8);
    rop("double max", MPI_DOUBLE, MPI_MAX, 'd', V_SMALL, 8);
    rop("double min", MPI_DOUBLE, MPI_MIN, 'd', V_SMALL, 8);
    rop("float sum", MPI_FLOAT, MPI_SUM, 'f', V_SMALL, 4);
    rop("float min", MPI_FLOAT, MPI_MIN, 'f', V_SMALL, 4);
    rop("long long sum", MPI_LONG_LONG, MPI_SUM, 'l', V_SMALL, 8);
    rop("long long bxor", MPI_LONG_LONG, MPI_BXOR, 'l', V_FULL, 8);
    rop("short sum", MPI_SHORT, MPI_SUM, 's', V_SMALL, 2);
    rop("short max", MPI_SHORT, MPI_MAX, 's', V_FULL, 2);
    rop("uint8 bxor", MPI_UINT8_T, MPI_BXOR, 'c', V_FULL, 1);
    /* no overflow: Open MPI 4.1's op/avx saturates 8- and 16-bit sums where C (and mcoll) wrap
     * (tests/unit/test_redkern.c checks the wrap) */
    rop("uint8 sum", MPI_UINT8_T, MPI_SUM, 'c', V_SMALL, 1);
    rop("2int maxloc", MPI_2INT, MPI_MAXLOC, 'p', V_LOC, 8);
    rop("2int minloc", MPI_2INT, MPI_MINLOC, 'p', V_LOC, 8);
    rop("float_int maxloc", MPI_FLOAT_INT, MPI_MAXLOC, 'q', V_LOC, 8);
    rop("user affine (non-commutative)", pair_u32, op_affine, 'p', V_FULL, 8);
    rop("user sum (commutative)", MPI_INT, op_usum, 'i', V_SMALL, 4);
}

/* Fill n bytes with rank r's values for buffer `buf` in the representation of `base`. */
static void fill_base(void *p, size_t n, int base, int vals, int r, int buf)
{
    size_t unit = base == 'i' || base == 'f' ? 4 : base == 's' ? 2 : base == 'c' ? 1 : 8;
    unsigned char *b = p;
    size_t k = 0;
    for (; k + unit <= n; k += unit) {
        uint64_t u = datum(r, buf, k / unit);
        int64_t sm = (int64_t)(u % 2001) - 1000; /* small: sums of 8 stay exact everywhere */
        int64_t pr = (int64_t) "\1\2\1\377\3\1\1\2"[u % 8];
        if (pr == 255) pr = -1;
        int64_t lg = (int64_t) "\0\1\0\5"[u % 4];
        switch (base) {
        case 'i': {
            int32_t v = vals == V_SMALL   ? (int32_t)(sm * 997)
                        : vals == V_PROD  ? (int32_t)pr
                        : vals == V_LOGIC ? (int32_t)lg
                                          : (int32_t)u;
            memcpy(b + k, &v, 4);
            break;
        }
        case 's': {
            int16_t v = vals == V_SMALL ? (int16_t)(sm / 4) : (int16_t)u;
            memcpy(b + k, &v, 2);
            break;
        }
        case 'c':
            b[k] = (unsigned char)(vals == V_SMALL ? u % 32 : u);
            break;
        case 'l': {
            int64_t v = vals == V_SMALL ? sm * 1000003 : (int64_t)u;
            memcpy(b + k, &v, 8);
            break;
        }
        case 'f': {
            float v = (float)sm;
            memcpy(b + k, &v, 4);
            break;
        }
        case 'd': {
            double v = vals == V_PROD ? (double)(pr == 3 ? 0.5 : pr) : (double)sm * 1024;
            memcpy(b + k, &v, 8);
            break;
        }
        case 'p': {
            int32_t v[2] = {vals == V_LOC ? (int32_t)(u % 4) : (int32_t)u, (int32_t)(u >> 32)};
            if (vals == V_LOC) v[1] = (int32_t)((u >> 32) % 64);
            memcpy(b + k, v, 8);
            break;
        }
        case 'q': {
            struct {
                float f;
                int32_t i;
            } v = {(float)(u % 4), (int32_t)((u >> 32) % 64)};
            memcpy(b + k, &v, 8);
            break;
        }
        }
    }
    for (; k < n; k++) b[k] = (unsigned char)datum(r, buf, k);
}

/* ---------------------------------------------------------------- buffers */
/* Two sets per call: A for mcoll (malloc or the shared heap), B for the native MPI. Each
 * buffer has guard zones before and after, filled like the rest and compared - but for the
 * exact ones: a malloc block of the data bytes alone, as a program allocates its buffers,
 * which is what MCOLL_SHM_ADOPT may adopt (a post must cover the block). */
enum { GUARD = 64 };
typedef struct {
    unsigned char *base;
    size_t len;   /* bytes between the guards */
    size_t off;   /* misalignment of the start */
    size_t guard; /* GUARD, or 0 for an exact block */
    int heap;
} buf_t;
static void *at(buf_t *b)
{
    return b->base + b->guard + b->off;
}
static void buf_make(buf_t *b, size_t len, int heap, int exact, size_t off)
{
    b->guard = exact ? 0 : GUARD, b->off = exact ? 0 : off;
    size_t total = len + b->off + 2 * b->guard;
    b->len = len, b->heap = heap;
    b->base = heap ? mcoll_malloc(total) : malloc(total);
    if (!b->base) {
        printf("FAIL soak: out of memory (%zu bytes)\n", total);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
static void buf_free(buf_t *b)
{
    if (b->heap)
        mcoll_free(b->base);
    else
        free(b->base);
    b->base = NULL;
}
static size_t buf_total(const buf_t *b)
{
    return b->len + b->off + 2 * b->guard;
}

/* ---------------------------------------------------------------- communicators */
enum { C_WORLD, C_REV, C_HALF, C_DUP, C_REMADE, NCOMM };
static MPI_Comm comms[NCOMM];
static const char *comm_names[NCOMM] = {"world", "reversed", "half", "dup", "remade"};
static char remade_shape[64];

static void comm_remake(void)
{
    if (comms[C_REMADE] != MPI_COMM_NULL) MPI_Comm_free(&comms[C_REMADE]);
    int shape = pick(0xc0, 4), rot = pick(0xc1, wsize), out = pick(0xc2, wsize);
    int color = 0, key = (wrank + rot) % wsize;
    if (shape == 1 && wsize > 1 && wrank == out) color = MPI_UNDEFINED; /* one rank left out */
    if (shape == 2) key = -wrank;
    if (shape == 3) color = wrank % 3 == 0; /* thirds vs the rest */
    snprintf(remade_shape, sizeof remade_shape, "shape %d rot %d out %d", shape, rot, out);
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &comms[C_REMADE]);
    if (comms[C_REMADE] != MPI_COMM_NULL) MPI_Comm_set_errhandler(comms[C_REMADE], MPI_ERRORS_RETURN);
}
static void comms_init(void)
{
    comms[C_WORLD] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -wrank, &comms[C_REV]);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comms[C_HALF]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[C_DUP]);
    comms[C_REMADE] = MPI_COMM_NULL;
    for (int c = 0; c < NCOMM - 1; c++) MPI_Comm_set_errhandler(comms[c], MPI_ERRORS_RETURN);
}

/* ---------------------------------------------------------------- one call */
enum {
    BARRIER,
    BCAST,
    REDUCE,
    ALLREDUCE,
    REDUCE_SCATTER,
    REDUCE_SCATTER_BLOCK,
    ALLGATHER,
    ALLGATHERV,
    GATHER,
    GATHERV,
    SCATTER,
    SCATTERV,
    ALLTOALL,
    ALLTOALLV,
    SCAN,
    EXSCAN,
    NCOLL
};
static const char *coll_names[NCOLL] = {
    "barrier",   "bcast",      "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block",
    "allgather", "allgatherv", "gather", "gatherv",   "scatter",        "scatterv",
    "alltoall",  "alltoallv",  "scan",   "exscan"};

typedef struct {
    int coll, ci, p, r, root, inplace, fam, nat_first, radix, heap, exact, reps;
    long seg;
    MPI_Comm comm;
    long n;          /* ints (movers, even in the int family), bytes/doubles, or reduction elements */
    const rop_t *ro; /* reductions */
    int *cnt;        /* reduce_scatter's counts */
    int *scnt, *sdsp, *rcnt, *rdsp; /* v-counts and displacements in elements of st / rt */
    const mtype_t *st, *rt;
} call_t;

/* Block sizes: log-uniform, mostly small, sometimes empty; in base units of the family. */
static long draw_units(uint64_t key, size_t unit, long cap_bytes)
{
    int cls = pick(key, 100), e;
    if (cls < 5) return 0;
    e = cls < 50   ? pick(key + 1, 11)
        : cls < 80 ? 10 + pick(key + 1, 7)
        : cls < 95 ? 16 + pick(key + 1, 5)
                   : 20 + pick(key + 1, 3);
    long bytes = (1L << e) + (long)(draw(key + 2) % (uint64_t)((1L << e) / 2 + 1));
    if (bytes > cap_bytes) bytes = cap_bytes;
    long n = bytes / (long)unit;
    return n < 1 ? 1 : n;
}

/* A permutation of 0..p-1 (the order of blocks in a v-buffer) and a gap after each block. */
static void v_layout(uint64_t key, int p, const int *units, const mtype_t *t, int *elems, int *displ,
                     size_t *len)
{
    int order[64];
    for (int i = 0; i < p; i++) order[i] = i;
    if (chance(key, 50))
        for (int i = p - 1; i > 0; i--) {
            int j = pick(key + 10 + (uint64_t)i, i + 1), x = order[i];
            order[i] = order[j], order[j] = x;
        }
    long at_el = 0;
    size_t end = 0;
    for (int k = 0; k < p; k++) {
        int i = order[k];
        elems[i] = units[i] / t->per;
        displ[i] = (int)at_el;
        size_t e = (size_t)(at_el * t->ext) + span(t, elems[i]);
        if (e > end) end = e;
        at_el += elems[i] + pick(key + 100 + (uint64_t)k, 3); /* a gap of 0-2 elements */
    }
    *len = end;
}

#define CALL(nat, fn, ...) ((nat) ? P##fn(__VA_ARGS__) : fn(__VA_ARGS__))

/* Runs the call on buffer set (s, rb): through the native MPI if nat, else through mcoll. */
static int run(const call_t *c, int nat, buf_t *s, buf_t *rb)
{
    void *sb =
        c->inplace && (c->coll != REDUCE && c->coll != GATHER && c->coll != GATHERV) ? MPI_IN_PLACE : at(s);
    void *r = at(rb);
    int root_ip = c->inplace && c->r == c->root;
    MPI_Datatype sdt = c->st ? c->st->dt : MPI_DATATYPE_NULL, rdt = c->rt ? c->rt->dt : MPI_DATATYPE_NULL;
    const rop_t *o = c->ro;
    int n = (int)c->n;
    switch (c->coll) {
    case BARRIER:
        return CALL(nat, MPI_Barrier, c->comm);
    case BCAST:
        return CALL(nat, MPI_Bcast, r, n / c->rt->per, rdt, c->root, c->comm);
    case REDUCE:
        return CALL(nat, MPI_Reduce, root_ip ? MPI_IN_PLACE : at(s), r, n, o->dt, o->op, c->root, c->comm);
    case ALLREDUCE:
        return CALL(nat, MPI_Allreduce, sb, r, n, o->dt, o->op, c->comm);
    case REDUCE_SCATTER:
        return CALL(nat, MPI_Reduce_scatter, sb, r, c->cnt, o->dt, o->op, c->comm);
    case REDUCE_SCATTER_BLOCK:
        return CALL(nat, MPI_Reduce_scatter_block, sb, r, n, o->dt, o->op, c->comm);
    case SCAN:
        return CALL(nat, MPI_Scan, sb, r, n, o->dt, o->op, c->comm);
    case EXSCAN:
        return CALL(nat, MPI_Exscan, sb, r, n, o->dt, o->op, c->comm);
    case ALLGATHER:
        return CALL(nat, MPI_Allgather, sb, n / c->st->per, sdt, r, n / c->rt->per, rdt, c->comm);
    case ALLGATHERV:
        return CALL(nat, MPI_Allgatherv, sb, c->scnt[0], sdt, r, c->rcnt, c->rdsp, rdt, c->comm);
    case GATHER:
        return CALL(nat, MPI_Gather, root_ip ? MPI_IN_PLACE : at(s), n / c->st->per, sdt, r, n / c->rt->per,
                    rdt, c->root, c->comm);
    case GATHERV:
        return CALL(nat, MPI_Gatherv, root_ip ? MPI_IN_PLACE : at(s), c->scnt[0], sdt, r, c->rcnt, c->rdsp,
                    rdt, c->root, c->comm);
    case SCATTER:
        return CALL(nat, MPI_Scatter, at(s), n / c->st->per, sdt, root_ip ? MPI_IN_PLACE : r, n / c->rt->per,
                    rdt, c->root, c->comm);
    case SCATTERV:
        return CALL(nat, MPI_Scatterv, at(s), c->scnt, c->sdsp, sdt, root_ip ? MPI_IN_PLACE : r, c->rcnt[0],
                    rdt, c->root, c->comm);
    case ALLTOALL:
        return CALL(nat, MPI_Alltoall, sb, n / c->st->per, sdt, r, n / c->rt->per, rdt, c->comm);
    case ALLTOALLV:
        return CALL(nat, MPI_Alltoallv, sb, c->scnt, c->sdsp, sdt, r, c->rcnt, c->rdsp, rdt, c->comm);
    }
    return MPI_ERR_INTERN;
}

/* Appends a name and n ints to the label. */
static void list_ints(const char *name, const int *v, int n)
{
    size_t l = strlen(label);
    l += (size_t)snprintf(label + l, sizeof label - l, "%s", name);
    for (int i = 0; i < n && l < sizeof label; i++)
        l += (size_t)snprintf(label + l, sizeof label - l, " %d", v[i]);
}

static void describe(const call_t *c, const char *alg)
{
    snprintf(label, sizeof label,
             "seed %llu call %ld: %s alg %s comm %s%s%s (p %d, rank %d) n %ld %s%s%s root %d%s first %s",
             (unsigned long long)seed, it_now, coll_names[c->coll], alg, comm_names[c->ci],
             c->ci == C_REMADE ? " " : "", c->ci == C_REMADE ? remade_shape : "", c->p, c->r, c->n,
             c->ro   ? c->ro->name
             : c->st ? c->st->name
                     : "",
             c->rt && !c->ro ? "->" : "", c->rt && !c->ro ? c->rt->name : "", c->root,
             c->inplace ? " in place" : "", c->nat_first ? "native" : "mcoll");
    size_t l = strlen(label);
    snprintf(label + l, sizeof label - l, " segsize %ld radix %d %s x%d", c->seg, c->radix,
             c->heap ? "heap" : c->exact ? "malloc exact" : "malloc", c->reps);
    if (c->coll == REDUCE_SCATTER) list_ints(" counts", c->cnt, c->p);
    if (c->coll == SCATTERV || c->coll == ALLTOALLV)
        list_ints(" sendcounts", c->scnt, c->p), list_ints(" sdispls", c->sdsp, c->p);
    if (c->coll == ALLGATHERV || c->coll == GATHERV || c->coll == ALLTOALLV)
        list_ints(" recvcounts", c->rcnt, c->p), list_ints(" rdispls", c->rdsp, c->p);
}

/* Every byte of the two buffers, guards included, except data bytes [skip_from, skip_to). */
static void compare(const call_t *c, int rep, const char *what, const buf_t *a, const buf_t *b,
                    size_t skip_from, size_t skip_to)
{
    size_t n = buf_total(a), lo = a->guard + a->off + skip_from, hi = a->guard + a->off + skip_to;
    for (size_t i = 0; i < n; i++)
        if ((i < lo || i >= hi) && a->base[i] != b->base[i]) {
            long pos = (long)i - (long)a->guard - (long)a->off;
            if (fails++ < 20)
                printf("FAIL soak %s rep %d: %s byte %ld of %zu: mcoll 0x%02x, native 0x%02x (%s ran)\n",
                       label, rep, what, pos, a->len, a->base[i], b->base[i],
                       mcoll_last_alg(coll_names[c->coll]));
            return;
        }
}

/* ---------------------------------------------------------------- coverage */
/* How many calls each (collective, algorithm that ran) pair took, summed over the ranks. */
enum { MAXALG = 16 };
static long ran[NCOLL][MAXALG + 1];
static void count_ran(int coll)
{
    const char *cn = coll_names[coll], *last = mcoll_last_alg(cn);
    int na = mcoll_alg_count(cn), k = MAXALG;
    for (int i = 0; last && i < na && i < MAXALG; i++)
        if (!strcmp(mcoll_alg_name(cn, i), last)) k = i;
    ran[coll][k]++;
}

/* Fills both buffer sets alike (repetition rep: new data), runs the call through mcoll and
 * through the native MPI, and compares. */
static void run_both(const call_t *c, int rep, buf_t *sa, buf_t *sbn, buf_t *ra, buf_t *rbn)
{
    int base = c->ro ? c->ro->base : c->fam == F_BYTE ? 'c' : c->fam == F_INT ? 'i' : 'd';
    int vals = c->ro ? c->ro->vals : V_FULL;
    fill_base(sa->base, buf_total(sa), base, vals, c->r, 1 + 2 * rep);
    fill_base(ra->base, buf_total(ra), base, vals, c->r, 2 + 2 * rep);
    memcpy(sbn->base, sa->base, buf_total(sa));
    memcpy(rbn->base, ra->base, buf_total(ra));
    int rc_a, rc_b;
    if (c->nat_first)
        rc_b = run(c, 1, sbn, rbn), rc_a = run(c, 0, sa, ra);
    else
        rc_a = run(c, 0, sa, ra), rc_b = run(c, 1, sbn, rbn);
    count_ran(c->coll);
    if (rc_a != MPI_SUCCESS || rc_b != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc_a != MPI_SUCCESS ? rc_a : rc_b, msg, &len);
        if (fails++ < 20)
            printf("FAIL soak %s rep %d: mcoll returned %d, native %d (%s)\n", label, rep, rc_a, rc_b, msg);
        return;
    }
    /* undefined after the call: exscan's result on rank 0; in place, the input past this
     * rank's block of a reduce-scatter (Open MPI's native one works there) */
    size_t from = 0, to = 0;
    if (c->coll == EXSCAN && c->r == 0) to = ra->len;
    if (c->inplace && c->coll == REDUCE_SCATTER) from = c->ro->size * (size_t)c->cnt[c->r], to = ra->len;
    if (c->inplace && c->coll == REDUCE_SCATTER_BLOCK) from = c->ro->size * (size_t)c->n, to = ra->len;
    compare(c, rep, "receive buffer", ra, rbn, from, to);
    compare(c, rep, "send buffer", sa, sbn, 0, 0);
}

/* A reduction's op, count and buffer lengths (bytes) under cap bytes per block. */
static void draw_reduction(call_t *c, long cap, size_t *slen, size_t *rlen)
{
    c->ro = &rops[pick(11, nrops)];
    /* MPICH 4.0's own in-place reduce to a root other than 0 (4 KiB and more) crashes,
     * and its in-place reduce-scatter of unequal blocks (hundreds of KiB) fails an overlap
     * assertion: no oracle there */
    if (native_mpich && c->inplace && (c->coll == REDUCE_SCATTER || (c->coll == REDUCE && c->root != 0)))
        c->inplace = 0;
    c->n = draw_units(12, c->ro->size, cap);
    size_t e = c->ro->size;
    switch (c->coll) {
    case REDUCE_SCATTER_BLOCK:
        *slen = e * (size_t)c->n * (size_t)c->p;
        *rlen = c->inplace ? *slen : e * (size_t)c->n;
        break;
    case REDUCE_SCATTER: {
        long tot = 0;
        for (int i = 0; i < c->p; i++) {
            c->cnt[i] = chance(200 + (uint64_t)i, 15) ? 0 : (int)draw_units(300 + (uint64_t)i, e, cap);
            tot += c->cnt[i];
        }
        *slen = e * (size_t)tot, *rlen = c->inplace ? *slen : e * (size_t)c->cnt[c->r];
        break;
    }
    default:
        *slen = *rlen = e * (size_t)c->n;
    }
}

/* A data mover's types, counts, v-layouts and buffer lengths (bytes) under cap bytes per block. */
static void draw_mover(call_t *c, long cap, size_t *slen, size_t *rlen)
{
    size_t unit = base_size(c->fam);
    c->st = mtype_of(c->fam, c->r, 0), c->rt = mtype_of(c->fam, c->r, 1);
    c->n = draw_units(12, unit, cap);
    if (c->fam == F_INT) c->n &= ~1L; /* a vec2int holds two */
    long n = c->n;
    switch (c->coll) {
    case BCAST:
        *rlen = span(c->rt, n / c->rt->per);
        break;
    case ALLGATHER:
    case ALLTOALL:
        *slen = span(c->st, n / c->st->per * (c->coll == ALLTOALL ? c->p : 1));
        *rlen = span(c->rt, n / c->rt->per * c->p);
        break;
    case GATHER:
        *slen = span(c->st, n / c->st->per);
        *rlen = c->r == c->root ? span(c->rt, n / c->rt->per * c->p) : 0;
        break;
    case SCATTER:
        *slen = c->r == c->root ? span(c->st, n / c->st->per * c->p) : 0;
        *rlen = span(c->rt, n / c->rt->per);
        break;
    case ALLGATHERV:
    case GATHERV:
    case SCATTERV: {
        int units[64];
        for (int i = 0; i < c->p; i++) {
            units[i] = chance(400 + (uint64_t)i, 15) ? 0 : (int)draw_units(500 + (uint64_t)i, unit, cap);
            if (c->fam == F_INT) units[i] &= ~1;
        }
        if (c->coll == SCATTERV) {
            if (c->r == c->root) v_layout(600, c->p, units, c->st, c->scnt, c->sdsp, slen);
            c->rcnt[0] = units[c->r] / c->rt->per;
            *rlen = span(c->rt, c->rcnt[0]);
        } else {
            if (c->coll == ALLGATHERV || c->r == c->root)
                v_layout(600, c->p, units, c->rt, c->rcnt, c->rdsp, rlen);
            c->scnt[0] = units[c->r] / c->st->per;
            *slen = span(c->st, c->scnt[0]);
            if (c->inplace && c->coll == ALLGATHERV) *slen = 0; /* each input sits in its own block */
        }
        break;
    }
    case ALLTOALLV: {
        int units[64][64];
        for (int i = 0; i < c->p; i++)
            for (int j = 0; j < c->p; j++) {
                int a = i < j || !c->inplace ? i : j,
                    b = i < j || !c->inplace ? j : i; /* symmetric in place */
                uint64_t k = 700 + (uint64_t)a * 64 + (uint64_t)b;
                units[i][j] = chance(k, 15) ? 0 : (int)draw_units(k + 5000, unit, cap / (c->p > 1 ? 2 : 1));
                if (c->fam == F_INT) units[i][j] &= ~1;
            }
        int col[64];
        for (int i = 0; i < c->p; i++) col[i] = units[i][c->r];
        v_layout(800 + (uint64_t)c->r, c->p, units[c->r], c->st, c->scnt, c->sdsp, slen);
        v_layout(900 + (uint64_t)c->r, c->p, col, c->rt, c->rcnt, c->rdsp, rlen);
        if (c->inplace) *slen = 0; /* the receive side's counts on both ends: symmetric */
        break;
    }
    }
}

/* Draw one call on communicator comm (this rank's view), run it both ways, compare. */
static void one_call(int ci, MPI_Comm comm)
{
    call_t c = {.ci = ci, .comm = comm};
    MPI_Comm_size(comm, &c.p);
    MPI_Comm_rank(comm, &c.r);
    c.coll = pick(1, NCOLL);
    c.root = pick(2, c.p);
    c.fam = pick(3, NFAM);
    c.nat_first = chance(4, 50);
    int is_red = c.coll == REDUCE || c.coll == ALLREDUCE || c.coll == REDUCE_SCATTER ||
                 c.coll == REDUCE_SCATTER_BLOCK || c.coll == SCAN || c.coll == EXSCAN;
    int per_rank = c.coll == ALLGATHER || c.coll == ALLGATHERV || c.coll == GATHER || c.coll == GATHERV ||
                   c.coll == SCATTER || c.coll == SCATTERV || c.coll == ALLTOALL || c.coll == ALLTOALLV ||
                   c.coll == REDUCE_SCATTER || c.coll == REDUCE_SCATTER_BLOCK;
    long cap = (long)max_bytes / (per_rank ? c.p : 1);
    /* MPICH 4.0 (ch4:ucx) loses data of a non-contiguous message of 150000 ints and more
     * between two processes, and its allgatherv hangs from 8192 ints per block between ints,
     * vectors and resized ints: no oracle for derived types beyond the eager sizes there */
    if (native_mpich && c.fam == F_INT && !is_red && cap > (4 << 10)) cap = 4 << 10;
    c.inplace = c.coll != BARRIER && c.coll != BCAST && chance(5, 25);
    int cnt_[3][64] = {{0}};
    c.cnt = cnt_[0], c.scnt = cnt_[1], c.rcnt = cnt_[2];
    int sdsp_[64] = {0}, rdsp_[64] = {0};
    c.sdsp = sdsp_, c.rdsp = rdsp_;
    if (c.p > 64) {
        printf("FAIL soak: more than 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* algorithm, segment size, radix: the same on every rank */
    const char *cn = coll_names[c.coll];
    int na = mcoll_alg_count(cn), ai = pick(6, na + na / 2 + 1) - na / 2 - 1; /* about 1/3 the default */
    const char *alg = ai >= 0 ? mcoll_alg_name(cn, ai) : "auto";
    static const long segs[] = {0, 3, 1001, 8192, 65536};
    c.seg = chance(7, 20) ? segs[pick(8, 5)] : -1;
    /* MPICH busy-polls: oversubscribed, each point-to-point round there waits for the
     * scheduler (1.4 ms at 3 ranks on 2 cores against 1.2 us at 2), and one reduce-scatter of
     * 1.1 MiB blocks in segments of 3 bytes (one element each) ran 13 minutes. Segments of at
     * least cap / 256 (the same on every rank) keep a call to a few hundred rounds. */
    if (native_mpich && c.seg > 0 && c.seg < cap / 256) c.seg = cap / 256;
    c.radix = chance(9, 20) ? 2 + pick(10, 7) : -1;
    mcoll_set_alg(cn, alg);
    mcoll_set_segsize(cn, c.seg);
    mcoll_set_radix(cn, c.radix);

    size_t slen = 0, rlen = 0;
    if (is_red)
        draw_reduction(&c, cap, &slen, &rlen);
    else if (c.coll != BARRIER)
        draw_mover(&c, cap, &slen, &rlen);
    if (c.inplace && (c.coll == ALLGATHER || c.coll == ALLTOALL)) slen = 0; /* the input is in rbuf */

    /* buffers: A (mcoll) in the heap for some calls, B (native) from malloc; same contents.
     * Some calls repeat on the same buffers with new data (mcoll's repeated-call path). */
    c.heap = chance(13, heap_share), c.reps = chance(16, 20) ? 2 + pick(17, 3) : 1;
    c.exact = !c.heap && chance(18, exact_share);
    size_t al = c.ro ? 8 : c.fam == F_BYTE ? 1 : c.fam == F_INT ? 4 : 8;
    size_t soff = al * (size_t)pick(14, 8), roff = al * (size_t)pick(15, 8);
    buf_t sa, sbn, ra, rbn;
    buf_make(&sa, slen, c.heap, c.exact, soff), buf_make(&sbn, slen, 0, c.exact, soff);
    buf_make(&ra, rlen, c.heap, c.exact, roff), buf_make(&rbn, rlen, 0, c.exact, roff);
    describe(&c, alg);
    if (verbose > 1 && wrank == 0) printf("%s\n", label);
    for (int rep = 0; rep < c.reps; rep++) run_both(&c, rep, &sa, &sbn, &ra, &rbn);
    buf_free(&sa), buf_free(&sbn), buf_free(&ra), buf_free(&rbn);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char head[] = "FAIL TIMEOUT: still running ";
    ssize_t w = write(1, head, sizeof head - 1);
    w = write(1, label, strlen(label));
    w = write(1, "\n", 1);
    (void)w;
    _exit(1);
}

int main(int argc, char **argv)
{
    long iters = 1000;
    const char *wd = getenv("MCOLL_TEST_WATCHDOG");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--verbose"))
            verbose++;
        else if (v && !strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 0), i++;
        else if (v && !strcmp(a, "--iters"))
            iters = atol(v), i++;
        else if (v && !strcmp(a, "--max"))
            max_bytes = (size_t)atol(v), i++;
        else if (v && !strcmp(a, "--heap-share"))
            heap_share = atoi(v), i++;
        else if (v && !strcmp(a, "--exact-share"))
            exact_share = atoi(v), i++;
        else if (!strcmp(a, "--no-cma"))
            no_cma = 1;
        else {
            fprintf(stderr, "usage: mcoll-soak [--seed N] [--iters N] [--max BYTES] [--heap-share 0..100]"
                            " [--exact-share 0..100] [--no-cma] [--verbose]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (no_cma && test_forbid_cma()) {
        printf("FAIL: --no-cma: could not install the seccomp filter\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    signal(SIGALRM, on_alarm);
    alarm(wd ? (unsigned)atoi(wd) : 900);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    MPI_Get_library_version(lib, &liblen);
    native_mpich = strstr(lib, "MPICH") != NULL;
    types_init();
    rops_init();
    comms_init();
    snprintf(label, sizeof label, "seed %llu setting up", (unsigned long long)seed);
    for (it_now = 0; it_now < iters; it_now++) {
        if (it_now % 40 == 0) comm_remake();
        int ci = pick(0xcc, NCOMM);
        if (comms[ci] == MPI_COMM_NULL) continue; /* this rank is not in the remade one */
        one_call(ci, comms[ci]);
        if (verbose && wrank == 0 && it_now % 100 == 0) printf("call %ld\n", it_now), fflush(stdout);
    }
    alarm(0);
    long all[NCOLL][MAXALG + 1], repeats = 0, rep_all = 0;
    for (int k = 0; k < NCOLL; k++) {
        mcoll_stats_t st;
        if (mcoll_stats_get(coll_names[k], &st) == MPI_SUCCESS) repeats += (long)st.repeats;
    }
    PMPI_Reduce(&repeats, &rep_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int owned, peers;
    unsigned long made, made_all = 0;
    mc_adopt_counts(&owned, &peers, &made);
    PMPI_Reduce(&made, &made_all, 1, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(ran, all, NCOLL * (MAXALG + 1), MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int total_fails = 0;
    PMPI_Reduce(&fails, &total_fails, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("soak: seed %llu, %ld calls on %d ranks; rank-calls per algorithm that ran:\n",
               (unsigned long long)seed, iters, wsize);
        for (int k = 0; k < NCOLL; k++) {
            const char *cn = coll_names[k];
            printf("  %-20s", cn);
            for (int i = 0; i < mcoll_alg_count(cn) && i < MAXALG; i++)
                if (all[k][i]) printf(" %s %ld", mcoll_alg_name(cn, i), all[k][i]);
            if (all[k][MAXALG]) printf(" pmpi %ld", all[k][MAXALG]);
            printf("\n");
        }
        printf("  repeated-call path taken %ld times\n", rep_all);
        printf("  malloc blocks adopted %lu\n", made_all);
        printf(total_fails ? "FAIL soak: %d differences\n" : "PASSED\n", total_fails);
    }
    for (int c = C_REV; c < NCOMM; c++)
        if (comms[c] != MPI_COMM_NULL) MPI_Comm_free(&comms[c]);
    MPI_Type_free(&mt_int[1].dt), MPI_Type_free(&mt_int[2].dt), MPI_Type_free(&pair_u32);
    MPI_Op_free(&op_affine), MPI_Op_free(&op_usum);
    MPI_Finalize();
    return 0;
}
