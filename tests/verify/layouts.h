/* Datatype layouts for the byte collectives, and guarded buffers to check them.
 *
 * A message is a sequence of payload "units" (ints, or bytes for L_BYTE). A layout says where
 * unit j of element e lives: at unit offset (displ + e) * ext + map[j] from the buffer start.
 * Sender and receiver may use different layouts with the same unit type (matching type
 * signatures), e.g. send 3 MPI_Type_vector elements, receive 12 MPI_INT. Unit q of the message
 * from `src` carries gen_int/gen_byte(seed, src, tag, q). Buffers start out filled with the
 * sentinel and have a guard zone after them; a receive check marks the units it expects and
 * then requires every other unit (holes of the layout, gaps between blocks, guard) untouched. */
#ifndef VERIFY_LAYOUTS_H
#define VERIFY_LAYOUTS_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { L_BYTE, L_INT, L_CONTIG3, L_VECTOR, L_STRIDED, L_LB, L_NLAYOUTS } layout_id_t;

typedef struct {
    const char *name;
    MPI_Datatype dt;
    size_t unit;        /* bytes per payload unit: 1 or 4 */
    int k;              /* payload units per element */
    int ext;            /* extent in units */
    int map[4];         /* unit offsets inside an element (beyond ext when lb > 0) */
    int contiguous;     /* packed and starting at the buffer address */
} layout_t;

int layouts_init(void);
void layouts_fini(void);
const layout_t *layout(layout_id_t id);

typedef struct {
    unsigned char *mem;
    size_t units;       /* usable units (guard not included) */
    size_t unit;
    unsigned char *mark;
} tbuf_t;

/* Units a buffer needs for elements [displ, displ + n) of layout l. */
size_t layout_span(const layout_t *l, size_t displ, size_t n);

void tbuf_alloc(tbuf_t *b, size_t unit, size_t units);
void tbuf_free(tbuf_t *b);
/* Writes message units q0.. of (src, tag) into elements [displ, displ + n) of layout l. */
void tbuf_fill(tbuf_t *b, const layout_t *l, size_t displ, size_t n, int src, int tag, size_t q0);
/* Checks those units hold that data (reports the first mismatches) and marks them. */
long tbuf_expect(tbuf_t *b, const layout_t *l, size_t displ, size_t n, int src, int tag, size_t q0,
                 const char *what);
/* Marks units without checking (e.g. significant data this check does not look at). */
void tbuf_mark(tbuf_t *b, const layout_t *l, size_t displ, size_t n);
/* Every unmarked unit and the guard must still hold the sentinel. */
long tbuf_untouched(tbuf_t *b, const char *what);
uint64_t tbuf_hash(const tbuf_t *b);
#endif
