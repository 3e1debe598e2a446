/* Test bookkeeping shared by the checkers: what is being tested (collective, algorithm, case
 * label), failure reporting, and the algorithm-selection checks after every call. */
#ifndef VERIFY_HARNESS_H
#define VERIFY_HARNESS_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* A communicator under test. Data and expectations are keyed by the rank in `comm`. */
typedef struct {
    MPI_Comm comm;
    const char *name;       /* world, dup, reversed, split */
    int rank, size;
} tcomm_t;

typedef enum { ALG_AUTO, ALG_FORCED, ALG_ENV } alg_mode_t;

typedef struct {
    uint32_t seed;
    int quick, verbose;
    int large_only;             /* --large: only the MB-sized cases */
    int heap;                   /* --heap: buffers from the node-shared heap (mcoll_malloc) */
    int wrank, wsize;
    /* what runs now */
    const char *coll;
    const char *alg;            /* forced name, or "auto" */
    alg_mode_t mode;
    unsigned alg_flags;         /* MC_ALG_* of the forced algorithm */
    int alg_has_ok;             /* it may decline calls on its own */
    long seg;                   /* segment size set for this case (-1: default) */
    int radix;                  /* radix set for this case (-1: default) */
    char label[400];
    /* counters (this process) */
    long calls, fails, ran, declined, printed;
    long talgs;                 /* collective calls checked by talg */
} harness_t;

extern harness_t T;

/* Starts a case: label = "comm=<name> " + printf(fmt). */
void tcase(const tcomm_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* mcoll_set_segsize/radix on T.coll, remembered for the case labels (-1: default). */
void tset_segsize(long seg);
void tset_radix(int radix);
/* Reports one failure of the current case on this rank. */
void tfail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Non-MPI_SUCCESS return codes are failures; returns rc == MPI_SUCCESS. */
int tcheck_rc(int rc, const char *call);
/* After a call of T.coll: the forced algorithm must have run (mcoll packs derived datatypes,
 * so it runs for them too) unless the algorithm has an ok() hook that may decline the call;
 * a commutative-only algorithm must never run for a non-commutative op. */
void talg(int noncommutative);
/* Every rank of c must hold the same hash h (e.g. allreduce results, bitwise): checked at the
 * next tagree_flush, at a tagree on another communicator, or once TAGREE_BATCH checks wait:
 * one native allgather for many cases (MPICH's blocking calls poll without yielding, so on an
 * oversubscribed node each one cost a time slice: 10 of MPICH's verify_allreduce_np3's 11.5 s
 * were one allgather per case). Every rank of c makes the same sequence of tagree calls. */
void tagree(const tcomm_t *c, uint64_t h, const char *what);
/* The checks tagree deferred, made now (at the end of each algorithm's run). */
void tagree_flush(void);

/* Test memory: malloc, or the shared heap with --heap (then free it with xfree). */
void *xmalloc(size_t n);
void xfree(void *p);
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#endif
