#include "layouts.h"
#include "datagen.h"
#include "harness.h"
#include <stdlib.h>
#include <string.h>

#define GUARD_UNITS 24

static layout_t L[L_NLAYOUTS];

static int make(layout_id_t id, const char *name, MPI_Datatype dt, size_t unit, int k, int ext,
                const int *map, int contiguous)
{
    layout_t *l = &L[id];
    *l = (layout_t){.name = name, .dt = dt, .unit = unit, .k = k, .ext = ext, .contiguous = contiguous};
    memcpy(l->map, map, sizeof(int) * (size_t)k);
    return dt == MPI_INT || dt == MPI_BYTE ? MPI_SUCCESS : PMPI_Type_commit(&l->dt);
}

int layouts_init(void)
{
    MPI_Datatype c3, vec, str, lb;
    int rc = PMPI_Type_contiguous(3, MPI_INT, &c3);
    rc |= PMPI_Type_vector(2, 2, 3, MPI_INT, &vec);              /* ints 0,1,3,4 of 5 */
    rc |= PMPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &str);   /* every other int */
    /* one int at byte 4: lb 4, extent 4: size == extent but the data is not at buf */
    int bl = 1;
    MPI_Aint disp = sizeof(int);
    MPI_Datatype it = MPI_INT;
    rc |= PMPI_Type_create_struct(1, &bl, &disp, &it, &lb);
    if (rc != MPI_SUCCESS) return rc;
    rc |= make(L_BYTE, "byte", MPI_BYTE, 1, 1, 1, (int[]){0}, 1);
    rc |= make(L_INT, "int", MPI_INT, 4, 1, 1, (int[]){0}, 1);
    rc |= make(L_CONTIG3, "contig3", c3, 4, 3, 3, (int[]){0, 1, 2}, 1);
    rc |= make(L_VECTOR, "vector(2,2,3)", vec, 4, 4, 5, (int[]){0, 1, 3, 4}, 0);
    rc |= make(L_STRIDED, "resized(int,ext8)", str, 4, 1, 2, (int[]){0}, 0);
    rc |= make(L_LB, "struct(lb=4)", lb, 4, 1, 1, (int[]){1}, 0);
    return rc;
}

void layouts_fini(void)
{
    for (int i = L_CONTIG3; i < L_NLAYOUTS; i++) PMPI_Type_free(&L[i].dt);
}

const layout_t *layout(layout_id_t id) { return &L[id]; }

size_t layout_span(const layout_t *l, size_t displ, size_t n)
{
    int maxmap = 0;
    for (int j = 0; j < l->k; j++) maxmap = l->map[j] > maxmap ? l->map[j] : maxmap;
    return n ? (displ + n - 1) * (size_t)l->ext + (size_t)maxmap + 1 : 0;
}

void tbuf_alloc(tbuf_t *b, size_t unit, size_t units)
{
    b->unit = unit;
    b->units = units;
    b->mem = xmalloc((units + GUARD_UNITS) * unit);
    b->mark = calloc(units + GUARD_UNITS, 1);
    if (!b->mark) abort();
    memset(b->mem, SENTINEL_BYTE, (units + GUARD_UNITS) * unit);
}

void tbuf_free(tbuf_t *b)
{
    xfree(b->mem);
    free(b->mark);
    b->mem = b->mark = NULL;
}

static size_t unit_at(const layout_t *l, size_t displ, size_t e, int j)
{
    return (displ + e) * (size_t)l->ext + (size_t)l->map[j];
}

static void put(tbuf_t *b, size_t u, uint64_t stream, size_t q)
{
    if (b->unit == 1) {
        b->mem[u] = gen_byte(stream, q);
    } else {
        int32_t v = gen_int(stream, q);
        memcpy(b->mem + u * 4, &v, 4);
    }
}

static int matches(const tbuf_t *b, size_t u, uint64_t stream, size_t q, long *got, long *want)
{
    if (b->unit == 1) {
        *got = b->mem[u];
        *want = gen_byte(stream, q);
    } else {
        int32_t v;
        memcpy(&v, b->mem + u * 4, 4);
        *got = v;
        *want = gen_int(stream, q);
    }
    return *got == *want;
}

void tbuf_fill(tbuf_t *b, const layout_t *l, size_t displ, size_t n, int src, int tag, size_t q0)
{
    uint64_t s = gen_stream(T.seed, src, tag);
    for (size_t e = 0; e < n; e++)
        for (int j = 0; j < l->k; j++) put(b, unit_at(l, displ, e, j), s, q0 + e * (size_t)l->k + (size_t)j);
}

long tbuf_expect(tbuf_t *b, const layout_t *l, size_t displ, size_t n, int src, int tag, size_t q0,
                 const char *what)
{
    long bad = 0, got, want;
    uint64_t s = gen_stream(T.seed, src, tag);
    for (size_t e = 0; e < n; e++)
        for (int j = 0; j < l->k; j++) {
            size_t u = unit_at(l, displ, e, j), q = q0 + e * (size_t)l->k + (size_t)j;
            b->mark[u] = 1;
            if (matches(b, u, s, q, &got, &want)) continue;
            if (bad++ < 3)
                tfail("%s: unit %zu of the block from rank %d (buffer unit %zu): got %ld expected %ld",
                      what, q, src, u, got, want);
        }
    if (bad > 3) tfail("%s: %ld wrong units in the block from rank %d", what, bad, src);
    return bad;
}

void tbuf_mark(tbuf_t *b, const layout_t *l, size_t displ, size_t n)
{
    for (size_t e = 0; e < n; e++)
        for (int j = 0; j < l->k; j++) b->mark[unit_at(l, displ, e, j)] = 1;
}

long tbuf_untouched(tbuf_t *b, const char *what)
{
    long bad = 0;
    for (size_t u = 0; u < b->units + GUARD_UNITS; u++) {
        if (b->mark[u]) continue;
        int ok = 1;
        for (size_t i = 0; i < b->unit; i++) ok &= b->mem[u * b->unit + i] == SENTINEL_BYTE;
        if (!ok && bad++ < 3)
            tfail("%s: unit %zu %s was written", what, u, u >= b->units ? "(guard past the end)" : "(hole)");
    }
    return bad;
}

uint64_t tbuf_hash(const tbuf_t *b)
{
    return hash_bytes(b->mem, (b->units + GUARD_UNITS) * b->unit, 0);
}
