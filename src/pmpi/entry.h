/* Shared machinery of the MPI_* entry points: argument checks, datatype views, staging of
 * non-contiguous buffers, dispatch to the selected algorithm and the PMPI fallback.
 *
 * Decisions to fall back depend only on arguments that MPI requires to agree on every rank
 * (communicator, op, reduction datatype, counts, root), so all ranks take the same path.
 * Invalid arguments also fall back: the native MPI then raises its own error class through
 * the communicator's error handler. */
#ifndef MC_ENTRY_H
#define MC_ENTRY_H
#include "../core/mc.h"

typedef struct mc_dt {
    MPI_Count size; /* MPI_Type_size_x: a type of more than 2 GiB (the big-count idiom) is exact */
    MPI_Aint lb, extent, true_lb, true_extent;
    int contig;     /* bytes in memory are exactly the packed bytes, starting at the buffer */
    int elem_ok;    /* usable as reduction elements: count * extent bytes from the buffer */
} mc_dt_t;

/* 0 when the type is MPI_DATATYPE_NULL or unusable. */
int mc_dt_get(MPI_Datatype t, mc_dt_t *d);
/* The communicator is valid, intra, and MPI is running. */
int mc_comm_ok(MPI_Comm comm);
/* mc_comm_ok, and the communicator's size and this rank (from the cached context when the
 * thread used comm last). */
int mc_comm_dims(MPI_Comm comm, int *size, int *rank);
/* (op, type) may be handled: a predefined op on a predefined type of its class, or a
 * user-defined op on an element-contiguous type. Sets *commute. */
int mc_reduction_ok(MPI_Op op, MPI_Datatype t, const mc_dt_t *d, int *commute);

/* Errors some native MPIs crash on instead of reporting (a null communicator, a negative
 * reduction count): mcoll raises them itself with the standard's class, on MPI_COMM_WORLD for
 * a null communicator (left to the native MPI in a program of MPI sessions alone, which has
 * no world). Returns 1 when raised (*rc holds the code). */
int mc_precheck(MPI_Comm comm, int count, int *rc);

/* Arguments of a data-movement collective: bytes, no op. */
void mc_byte_args(mc_args_t *a, mc_coll_t c);
/* v-collective counts present and non-negative. */
int mc_counts_ok(const int *counts, const int *displs, int p);

/* Runs the selected algorithm. Returns 1 when handled (*rc holds the result, already
 * passed to the error handler when not MPI_SUCCESS), 0 when the caller must fall back. */
int mc_run(MPI_Comm comm, mc_args_t *a, int *rc);
/* mc_run for a call whose raw arguments k may be recognized when repeated (NULL: never;
 * see mc_key_stable): an identical later call then takes mc_run_again. */
int mc_run_key(MPI_Comm comm, mc_args_t *a, const mc_key_t *k, int *rc);
/* mc_run for a collective of mcoll's own (mc_inner_allreduce): not counted, errors returned
 * in *rc and not raised. */
int mc_run_inner(MPI_Comm comm, mc_args_t *a, int *rc);
/* The call with raw arguments k repeats a remembered handled call of collective c on comm
 * (same buffers, count, handles, root; nothing the choice depends on changed): runs the same
 * algorithm on the arguments prepared then, with no checks, preparation or selection (an
 * 8-byte allreduce at 2 ranks: 284 instructions outside waits instead of 540, callgrind).
 * 0: take the normal path. */
int mc_run_again(MPI_Comm comm, mc_coll_t c, const mc_key_t *k, int *rc);
/* The handles of a key can never be freed and reused (predefined datatype and op, or none):
 * only such keys are remembered. */
int mc_key_stable(MPI_Datatype t, MPI_Op op);
/* Counts a fallback (the caller then calls PMPI). */
void mc_fallback(mc_coll_t c, size_t bytes);
/* Reports an error raised by mcoll itself (allocation, packing) on comm. */
int mc_raise(MPI_Comm comm, int rc);

/* Contiguous view of n elements of type t at buf: buf itself when contiguous, else a packed
 * temporary (*tmp, to free); `fill` packs the current contents in. */
int mc_view(const void *buf, size_t n, MPI_Datatype t, const mc_dt_t *d, int fill, MPI_Comm comm,
            void **view, void **tmp);
/* Copies a packed view back into buf (no-op when the view is buf itself). */
int mc_unview(const void *tmp, size_t n, MPI_Datatype t, MPI_Comm comm, void *buf);

/* Byte layout of p blocks (counts[i] elements of t at displs[i]) for the v-collectives:
 * the user's buffer when t is contiguous, else a packed temporary in rank order. */
typedef struct mc_blocks {
    size_t *cnt, *dsp;  /* bytes */
    char *base;         /* user buffer or tmp */
    char *tmp;
} mc_blocks_t;
int mc_blocks_make(mc_blocks_t *b, int p, const int *counts, const int *displs, const void *buf,
                   const mc_dt_t *d);
int mc_blocks_pack(const mc_blocks_t *b, int p, const int *counts, const int *displs,
                   const void *buf, MPI_Datatype t, MPI_Comm comm);
int mc_blocks_unpack(const mc_blocks_t *b, int p, const int *counts, const int *displs,
                     void *buf, MPI_Datatype t, MPI_Comm comm);
void mc_blocks_free(mc_blocks_t *b);
#endif
