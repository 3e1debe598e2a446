/* The intra-node shared-memory engine: the node region (flags, posted buffers, data area),
 * waits that spin then yield, the copy and reduction kernels, and the data paths to a peer's
 * own buffers (CMA single copy, shared-heap zero copy).
 *
 * Synchronization model. Every collective call on a region is one "op" (sh->op, the same
 * count on every local rank because collectives are ordered). A flag never resets: a rank
 * publishes progress by storing mc_seq(op, step) with release order, after writing the
 * payload; a reader waits until the flag has reached that value (wrap-safe compare). Steps
 * are algorithm-defined, 1 .. MC_STEP_MAX, increasing within an op.
 *
 * Data-area reuse. A rank's first write to the data area in op n must not overwrite what a
 * slower rank still reads from op n-1: mc_shm_begin() returns the op number; writers call
 * mc_shm_quiesce() before their first write (waits until every rank posted DONE for op n-1,
 * normally long true); every rank calls mc_shm_end() when it no longer reads shared data or
 * peers' posted buffers of this op. Algorithms that expose a user buffer to peers (posting)
 * wait for the readers' DONE of this op before returning. */
#ifndef MC_SHM_H
#define MC_SHM_H
#include "../core/mc.h"
#include <stdatomic.h>
#include <sys/types.h>

#define MC_LINE 128              /* flag line: two cache lines (adjacent-line prefetch) */
#define MC_CL 64                 /* cache line: minimum slice */
#define MC_STEP_BITS 24
#define MC_STEP_MAX ((1u << MC_STEP_BITS) - 2)
#define MC_STEP_END (MC_STEP_MAX + 1)

static inline uint64_t mc_seq(uint64_t op, uint32_t step) { return (op << MC_STEP_BITS) | step; }
static inline int mc_seq_reached(uint64_t v, uint64_t target) { return (int64_t)(v - target) >= 0; }

/* One flag per line; the rest of the line carries small payloads inline (bcast, allreduce
 * of a few elements) so a reader touches a single line. */
#define MC_INLINE (MC_LINE - 8)
typedef struct mc_flag {
    _Atomic uint64_t v;
    unsigned char data[MC_INLINE];
} __attribute__((aligned(MC_LINE))) mc_flag_t;

/* Two BAR lines per rank, barrier b on line b % 2: the other one is claimed for the next. */
enum { MC_F_STEP, MC_F_DONE, MC_F_AUX, MC_F_BAR, MC_F_BAR2, MC_NFLAGS };
/* STEP lines form a ring of MC_RING lines per rank, op n using line n % MC_RING, so a small
 * payload inline in a STEP line can be rewritten as soon as its readers finished op
 * n - MC_RING (mc_shm_quiesce_inline), not op n - 1: a writer of small messages does not
 * wait for the last op's readers, nor read their DONE lines on every call. Sixteen: a
 * writer reads a reader's DONE line (what it shows is remembered, sh->seen_done) on every
 * 15th op at most, and runs up to 15 ops ahead of its readers. With four, that read came
 * before every third small bcast's publication; the root claiming its next line (bcast_inline)
 * then made the median faster and every third call slower. Measured (AMD EPYC of family 26,
 * 2 ranks, bcast to a fixed root, median of the slower rank, 3 launches each, four lines ->
 * sixteen with the claim): single calls from a common clock mark 8-256 B 0.34-0.55 ->
 * 0.22-0.32 us (native Open MPI 0.49-0.69), p75 0.36-0.64 -> 0.25-0.49; back-to-back batches
 * of 100 8 B 0.17 -> 0.09-0.12 us (native 0.13-0.18), 256 B 0.18-0.20 -> 0.13 (native
 * 0.25-0.27), roots rotating the same (0.30-0.34). The claim with four lines: median 0.23-0.30,
 * p75 0.49-0.56; sixteen lines without the claim: no change. Sixteen cost 16 x 2176 bytes
 * per rank of the region. */
#define MC_RING 16
/* A STEP line is followed by MC_STEP_PAYLOAD bytes of its own: a payload of at most
 * MC_INLINE bytes rides in the line, a larger one up to MC_STEP_PAYLOAD in the lines after
 * it (mc_shm_slot_payload). Such a payload goes round the ring with its line, so its writer
 * waits for the readers of op n - MC_RING (mc_shm_quiesce_inline), usually already seen,
 * instead of reading every reader's DONE line of op n - 1 as the data area's users must
 * (mc_shm_quiesce): one line fetch fewer on the writer's path of a small call. Measured on
 * the Intel Xeon VM, 2 ranks, same-run ratio over native Open MPI, data area -> STEP
 * payload: single calls bcast 128 B-2 KiB 1.15-1.37x -> 1.34-1.57x, allgather(v) +0.05-0.1,
 * gather(v) +0.05-0.2; batches of 100 (roots rotating) bcast 128-512 B 1.42-1.53x ->
 * 1.60-2.43x, 1-2 KiB 1.44-1.53x -> 1.32-1.40x. In batches the ring costs from 1 KiB: one
 * buffer that every call rewrites beats a ring of them (bcast 4 KiB 2.7x -> 2.0x; reduce's
 * general small path 2-4 KiB 1.5-1.7x -> 1.3x, so it keeps its data-area slots), and the
 * payload stops at 2 KiB, where single calls still gain. A reader sees the line, then fetches
 * the payload after it: two round trips. Flagged payload lines (the op's value in the last 8
 * bytes of each, all polled at once: one round trip) measured worse on the firecracker VM
 * (bcast 128 B-1 KiB at 2 ranks; README "Measured", the passes at 4f6a240). */
#define MC_STEP_PAYLOAD 2048
#define MC_STEP_SLOT (MC_LINE + MC_STEP_PAYLOAD)
/* The fan exchanges (mc_shm_fan_begin): payloads of at most MC_FAN_MAX bytes (the limits:
 * dpml_fan in reduce_scatter/shm_common.c, bcast_fan in allgatherv/shm_common.c), a ring of
 * MC_FAN_RING slots per rank. */
#define MC_FAN_MAX 2048
#define MC_FAN_RING 16
#define MC_FAN_SLOT (MC_LINE + MC_FAN_MAX)

/* A buffer a rank exposes to its node: its address, plus where it lives in the poster's
 * shared heap (zero copy) when it does. MC_NPOST buffers per rank and op (e.g. sbuf, rbuf). */
#define MC_NPOST 2
typedef struct mc_post {
    uint64_t addr;          /* in the poster's address space (CMA) */
    uint64_t len;
    int64_t heap_off;       /* offset in the poster's shared heap, -1 = not in it */
    uint64_t heap_id;       /* which heap segment (see heap.h), 0 = none */
    uint64_t votes;         /* MC_VOTE_* bits of the poster (mc_shm_vote; 0 after mc_shm_post) */
    uint64_t took;          /* ns its last timed call took (mc_trial_publish; 0 = none) */
} __attribute__((aligned(MC_CL))) mc_post_t;
/* What a poster tells the others with its post, for decisions every rank must share: */
#define MC_VOTE_STAGE 1u /* it would rather the op staged than used CMA (mc_shm_direct_agreed) */
#define MC_VOTE_FAR 2u   /* it finds the node far (mc_shm_far) */
#define MC_VOTE_RING 4u  /* it would rather stage, unless every post moves fast by CMA (MC_VOTE_CMA_FAST) */
#define MC_VOTE_CMA_FAST 8u /* its post moves by CMA at a copy's rate (mc_cma_fast), or peers never touch it */
#define MC_VOTE_PIPE 16u /* the op is a pipe that goes direct only when every rank is far: zero copy too */

/* A small-payload exchange (mc_shm_sym_begin, mc_shm_fan_begin): [nbuf][p] slots of `slot`
 * bytes in the region, exchange k in row k % nbuf, and the count of exchanges so far. */
typedef struct mc_xchg {
    char *slots;
    uint64_t k;
    size_t slot;
    unsigned nbuf;
    uint64_t *seen;   /* [p] highest exchange each rank is known to have published, or NULL */
} mc_xchg_t;

#define MC_XLAT_N 8 /* line-fetch samples behind the estimate (latency.c) */

typedef enum { MC_PATH_AUTO, MC_PATH_COPY, MC_PATH_CMA, MC_PATH_ZERO } mc_path_t;

/* A trial (trial.c): the timed ways of one op at one size class on one region. */
#define MC_TRIAL_WAYS 3
#define MC_TRIAL_KEEP 4              /* samples per way behind its estimate */
#define MC_TRIAL_EVERY 64            /* every 64 calls, a burst of MC_TRIAL_BURST tries a way */
#define MC_TRIAL_BURST 3
#define MC_TRIAL_BEHIND 1.5          /* a way this much slower than the fastest is behind: */
#define MC_TRIAL_FAR_OFF 16          /* it is tried on every 16th of its turns only */
#define MC_TRIAL_LOW ((size_t)8 << 10)  /* the smallest size class's lower edge */
#define MC_TRIAL_MIN ((size_t)32 << 10) /* where most ops start their trials (mc_trial_of's from) */
#define MC_TRIAL_CLASSES 18          /* size classes: [8 KiB, 16 KiB), ... the last open */
/* ops with trials: the reductions' direct path by mc_sr_dest_t (0-2), the data movers' (3-7),
 * the zero-copy allgather(v)'s pull or push, streamed or temporal (8), scan's and exscan's
 * staged windows or direct reads (9, 10), the zero-copy allreduce's push or pull of the
 * results (11), the MA allreduce's windows or the symmetric exchange (12) */
enum {
    MC_TRIAL_BCAST = 3, MC_TRIAL_ALLGATHER, MC_TRIAL_GATHER, MC_TRIAL_SCATTER, MC_TRIAL_ALLTOALL, MC_TRIAL_ZC_ALLGATHER,
    MC_TRIAL_SCAN, MC_TRIAL_EXSCAN, MC_TRIAL_ZC_ALLREDUCE, MC_TRIAL_MA_ALLREDUCE, MC_TRIAL_SITES
};
typedef struct mc_trial {
    uint64_t calls;
    int last;                                        /* way + 1 of the last call, 0: none */
    uint32_t n[MC_TRIAL_WAYS];                       /* samples taken per way */
    double ns_per_b[MC_TRIAL_WAYS][MC_TRIAL_KEEP];   /* the last ones, a ring per way */
} mc_trial_t;

typedef struct mc_shm {
    int p, r;                /* local size, local rank */
    char *base;              /* mapping of the whole region */
    size_t len;
    uint64_t id;             /* the same on every local rank, unique on the node (region.c) */
    mc_flag_t *flags;        /* [MC_NFLAGS][p]; kind MC_F_STEP unused (the ring below) */
    char *step;              /* [p][MC_RING] STEP lines, MC_STEP_SLOT bytes apart */
    uint64_t *seen_done;     /* [p] last DONE value read from every rank (fewer line misses) */
    mc_post_t *posts;        /* [p][MC_NPOST] */
    char *data;              /* data area, MC_LINE aligned */
    size_t data_len;
    pid_t *pids;             /* [p] process id of every local rank */
    int cma;                 /* process_vm_readv/writev works between every pair */
    uint64_t op;             /* collective calls on this region so far */
    uint64_t bar;            /* barriers so far */
    mc_xchg_t sym;           /* the symmetric exchange (mc_shm_sym_begin) */
    mc_xchg_t fan;           /* the fan exchanges, in and out (mc_shm_fan_*) */
    int fan_root[MC_FAN_RING]; /* root of the last MC_FAN_RING fan exchanges, by k % MC_FAN_RING (-1: none) */
    unsigned char fan_out[MC_FAN_RING]; /* which of them were fan-outs (mc_shm_fan_begin) */
    uint64_t quiesced;       /* op for which mc_shm_quiesce already waited */
    uint64_t half_op, half_prev; /* the last two ops that used one half of the data area
                              * only (mc_shm_half: half op % 2), recorded by every rank */
    uint32_t step0;          /* STEP values of this op count from here (mc_shm_continue) */
    int cont;                /* the next mc_shm_begin continues this op (mc_shm_continue) */
    size_t step_len;         /* payload this rank last wrote after its STEP line (mc_shm_end claims as much) */
    uint64_t step_op;        /* the op it was written in */
    unsigned posted;         /* slots this rank posted in this op (mc_shm_post; bit per slot) */
    /* sockets (real from hwloc, or virtual: MCOLL_VSOCKET_SIZE consecutive local ranks) */
    int nsock, sock;         /* number of sockets, this rank's socket */
    int *sock_of;            /* [p] socket of every local rank */
    int *sock_first;         /* [nsock+1] local ranks of socket s: sock_rank[sock_first[s]..] */
    int *sock_rank;          /* [p] local ranks grouped by socket, ascending within */
    /* What the ranks learned about the node, from here to the end: a communicator that takes
     * the region over from the pool (region.c) starts afresh, as on a region of its own.
     * Everything above continues: the sequence numbers go on from the last call. */
    uint32_t xlat[MC_XLAT_N]; /* last line-fetch latencies, ns (mc_shm_xlat_add) */
    uint64_t nxlat;          /* samples taken */
    int far;                 /* the last answer of mc_shm_far (its log reports changes) */
    int far_all;             /* every rank voted MC_VOTE_FAR in the last posting round
                              * (mc_shm_post_round): the same on every rank */
    int far_others;          /* some other rank voted MC_VOTE_FAR in the last posting round */
    uint64_t far_calls;      /* pipe calls that could have gone direct while not far_all
                              * (the same on every rank; allgatherv/shm_common.c) */
    uint64_t far_vcalls;     /* shm_hybrid calls (gatherv, scatterv, alltoallv), counted
                              * apart so that they do not move the pipes' rechecks */
    mc_trial_t trial[MC_TRIAL_SITES][MC_TRIAL_CLASSES]; /* mc_trial_of */
    struct {                 /* the last timed call, until its time is shared (mc_trial_collect) */
        mc_trial_t *t;
        int way;
        double ns, bytes;
    } trial_pend;
    int trial_last;          /* the way the last timed call ran (-1: none; tests) */
    int stage_t;             /* this op's pipe copies in with temporal stores in the hand-over
                              * band: the movers' trial chose that way (allgatherv/shm_common.c) */
    unsigned char ordinary[MC_NCOLL]; /* the last posting round of the collective found a buffer
                                       * outside the shared heap (mc_shm_post_round): the model selection
                                       * orders its candidates for ordinary buffers (select/model.c); the
                                       * same on every rank */
    uint64_t ordinary_until;          /* the call at which those verdicts lapse (0: none set) */
} mc_shm_t;

/* Calls of the region so far: its ops and its small exchanges (which are no ops), one more at
 * each; the same on every rank. */
static inline uint64_t mc_shm_calls(const mc_shm_t *sh)
{
    return sh->op + sh->sym.k + sh->fan.k;
}
/* After a call's count went up: the verdicts of ordinary buffers lapse at sh->ordinary_until
 * (MC_ORDINARY_LAPSE). */
void mc_shm_lapse(mc_shm_t *sh);
static inline void mc_shm_tick(mc_shm_t *sh)
{
    if (mc_shm_calls(sh) == sh->ordinary_until) mc_shm_lapse(sh);
}

/* ---------------------------------------------------------------- region (region.c) */
/* The region of ctx's node, created on first use (collective over the node's ranks), or taken
 * over from the pool when every local rank holds the same idle one there.
 * Returns MPI_SUCCESS with *out NULL when shared memory is unavailable: callers decline. */
int mc_shm_create(mc_ctx_t *ctx, mc_shm_t **out);
static inline int mc_shm_get(mc_ctx_t *ctx, mc_shm_t **out)
{
    if ((*out = ctx->shm)) return MPI_SUCCESS;
    return mc_shm_create(ctx, out);
}
/* The context of sh is freed: the region goes to the pool (MCOLL_SHM_POOL), or is unmapped. */
void mc_shm_free(mc_shm_t *sh);
/* MPI_Finalize: unmaps the pooled regions; later frees unmap at once. */
void mc_shm_pool_close(void);
/* Regions this process mapped anew, and took over from the pool (mcoll_setup_stats). */
void mc_shm_region_counts(uint64_t *created, uint64_t *reused);

/* `rank`'s STEP line of op `op` (its ring slot). */
static inline mc_flag_t *mc_step_line(const mc_shm_t *sh, int rank, uint64_t op)
{
    return (mc_flag_t *)(sh->step + ((size_t)rank * MC_RING + op % MC_RING) * MC_STEP_SLOT);
}
static inline mc_flag_t *mc_flag(mc_shm_t *sh, int kind, int rank)
{
    if (kind == MC_F_STEP) return mc_step_line(sh, rank, sh->op);
    return &sh->flags[kind * sh->p + rank];
}
static inline mc_post_t *mc_post(mc_shm_t *sh, int rank, int slot)
{
    return &sh->posts[rank * MC_NPOST + slot];
}
/* Per-rank slot of the data area: data_len / p rounded down to MC_LINE. */
static inline size_t mc_shm_slot(const mc_shm_t *sh) { return sh->data_len / (size_t)sh->p / MC_LINE * MC_LINE; }
static inline char *mc_shm_slot_of(mc_shm_t *sh, int rank) { return sh->data + (size_t)rank * mc_shm_slot(sh); }

uint64_t mc_shm_begin(mc_shm_t *sh);     /* starts an op, returns its number */
/* After a posting round (mc_shm_post_round) whose op found it cannot go direct, instead of
 * mc_shm_end: the next mc_shm_begin continues this op, and the algorithm it runs (which must
 * not post: a slower rank may still read this op's posts) counts its STEP values from the
 * round's (sh->step0 = MC_POST_STEP, added by mc_shm_set, _wait, _wait_step and _test).
 * Every rank passed the round, so no rank still reads the last op's data (the posts
 * quiesced) and the algorithm's first writes need no other wait; ending the op instead made
 * every rank wait for the others' DONE of it before the next op's first write: one more flag
 * round (the reductions' staged way at 2 ranks on an AMD EPYC VM, slow state: reduce and
 * reduce_scatter_block 16-64 KiB 0.2-0.45 us, 5-15 %). */
void mc_shm_continue(mc_shm_t *sh);
#define MC_POST_STEP 1
void mc_shm_quiesce(mc_shm_t *sh);       /* every rank finished reading shared data of op-1
                                          * (waits once per op) */
void mc_shm_quiesce_inline(mc_shm_t *sh); /* enough before writing only this op's STEP line
                                          * payload: every rank finished op - MC_RING */
/* The half of the data area (data_len / 2 bytes, line-aligned) an op that needs no more uses:
 * half op % 2. Every rank of the op calls it (writers and readers), so all of them know that
 * the op kept to it; a writer of the next op that does the same then quiesces (with
 * mc_shm_quiesce_half) only up to op - 2, and runs one op ahead of the slowest readers. */
char *mc_shm_half(mc_shm_t *sh, size_t *len);
void mc_shm_quiesce_half(mc_shm_t *sh);  /* mc_shm_quiesce, for a writer of mc_shm_half */
/* p is this a pointer into the STEP ring (a payload of the STEP line's own)? */
static inline int mc_shm_is_inline(const mc_shm_t *sh, const void *p)
{
    return (const char *)p >= sh->step && (const char *)p < sh->step + (size_t)sh->p * MC_RING * MC_STEP_SLOT;
}
void mc_shm_end(mc_shm_t *sh);           /* this rank no longer reads shared data of this op */

/* STEP values are the algorithm's own (1 .. MC_STEP_MAX - sh->step0): sh->step0 is added. */
void mc_shm_set(mc_shm_t *sh, int kind, uint32_t step);              /* publish (release) */
void mc_shm_wait(mc_shm_t *sh, int kind, int rank, uint32_t step);   /* acquire */
/* mc_shm_wait for `rank`'s STEP line whose payload of len bytes this rank reads next. */
void mc_shm_wait_step(mc_shm_t *sh, int rank, uint32_t step, size_t len);
void mc_shm_wait_all(mc_shm_t *sh, int kind, uint32_t step);         /* every other rank */
int mc_shm_test(mc_shm_t *sh, int kind, int rank, uint32_t step);    /* reached? no wait */
/* Node barrier: dissemination over the BAR flags, ceil(log2 p) rounds. */
void mc_shm_barrier(mc_shm_t *sh);

/* Symmetric exchange of a small payload (at most MC_SYM_MAX bytes per rank): every rank
 * publishes its payload and then reads the payload of every other rank, as a small allreduce
 * or reduce_scatter does. Double-buffered with a count of its own (sh->sym) and no DONE flag:
 * exchange k writes buffer k % 2, last written by exchange k - 2; a rank that finished
 * exchange k - 1 has seen every peer publish k - 1, which each peer did after it finished
 * reading exchange k - 2 (its loads precede that release store). So a writer never waits for
 * its readers, and one exchange costs one publication and one read per peer. Ops that are
 * not symmetric must not use it (the argument needs every rank to wait for every peer).
 * A slot is the flag line followed by the payload area: a payload of at most MC_INLINE
 * bytes rides in the flag line (one line to read), a larger one starts at the next line
 * (aligned: the reduction kernels' vector loads do not straddle lines).
 * Not an op: no mc_shm_begin/end, the STEP ring and DONE flags are untouched.
 *   begin: starts exchange k, returns this rank's payload buffer for len bytes;
 *   mc_shm_x_publish: release store of k;  mc_shm_x_wait: the payload of `rank` for k. */
/* 32 KiB, not 16: an allreduce of 16-32 KiB at 2 ranks took 25-30 % less time than on
 * shm_dpml's two-sync path and on shm_ma (three flag rounds), in both states of the AMD EPYC
 * VM (forced, batches of 10: 20 KiB 1.90-2.21 us against 2.62-3.07 and 2.62-3.19; 28 KiB
 * 2.42-2.85 against 3.20-3.77 and 3.25-4.02), and at 3-8 oversubscribed ranks about half the
 * two-sync path's (24 KiB at 8 ranks 45-57 us against 91-95): one flag round instead of three
 * is worth more than the data it reads again (DAV ps(3p-1) against s(7p-3)). */
#define MC_SYM_MAX 32768
/* Two ranks: the symmetric exchange moves less data than shm_dpml's two-sync path (DAV 10s
 * against 11s) in one flag round instead of two, so it takes every allreduce shm_dpml runs,
 * up to the default MCOLL_SHM_SMALL. Measured at 2 ranks (forced shm_dpml, batches of 10,
 * slow state of the AMD EPYC VM, 2 launches each alternating, two-sync -> symmetric): 48 KiB
 * 5.48-5.50 -> 4.61-4.63 us, 64 KiB 6.59-6.65 -> 5.86-5.97, 128 KiB 11.9-12.0 -> 11.4,
 * 256 KiB 22.6-22.7 -> 20.9-21.4. From 3 ranks every rank reads p - 1 inputs more than its
 * part, DAV ps(3p-1) against s(7p-3), and the data outweighs a flag round (MC_SYM_MAX). */
#define MC_SYM_MAX_PAIR ((size_t)256 << 10)
static inline size_t mc_sym_max(int p) { return p == 2 ? MC_SYM_MAX_PAIR : MC_SYM_MAX; }
/* Slot of `rank` in exchange k of x (the slot of exchange k - x->nbuf, reused). */
static inline mc_flag_t *mc_shm_xslot_at(const mc_shm_t *sh, const mc_xchg_t *x, uint64_t k, int rank)
{
    size_t i = (size_t)(k % x->nbuf) * (size_t)sh->p + (size_t)rank;
    return (mc_flag_t *)(x->slots + i * x->slot);
}
/* Slot of `rank` in the current exchange of x. */
static inline mc_flag_t *mc_shm_xslot(const mc_shm_t *sh, const mc_xchg_t *x, int rank)
{
    return mc_shm_xslot_at(sh, x, x->k, rank);
}
/* Payload of len bytes in an exchange slot or STEP line f: the flag line's data, or
 * the area after the line. */
static inline unsigned char *mc_shm_slot_payload(mc_flag_t *f, size_t len)
{
    return len <= MC_INLINE ? f->data : (unsigned char *)f + MC_LINE;
}
/* Payload of len <= MC_STEP_PAYLOAD bytes in `rank`'s STEP line of this op. */
static inline unsigned char *mc_shm_step_payload(mc_shm_t *sh, int rank, size_t len)
{
    if (rank == sh->r && len > MC_INLINE) {
        sh->step_len = len;
        sh->step_op = sh->op;
    }
    return mc_shm_slot_payload(mc_flag(sh, MC_F_STEP, rank), len);
}

/* Takes the lines of [p, p + len) into this core's cache for writing (PREFETCHW): a hint,
 * no wait, the data unchanged, so safe whoever still reads them. A rank's write to a line a
 * peer read last must first take the line back from the peer's cache, a cross-core round
 * trip on the writer's path; this rank's lines of the next exchange or op, claimed when it
 * finished this one, are its own again by the time it writes them. Bare two-process test on
 * the Intel Xeon VM (one flag per rank and exchange, a ring of 4, both starting at the same
 * instant): 0.20-0.22 us per exchange, 0.14-0.15 with the next line claimed; back-to-back
 * the same. Not a prefetch to read: that would leave the line shared. Where the instruction
 * is missing (x86 before Broadwell) it is a no-op. */
static inline void mc_claim(const void *p, size_t len)
{
    for (size_t o = 0; o < len; o += MC_CL) {
#if defined(__x86_64__) || defined(__i386__)
        __asm__ volatile("prefetchw %0" : : "m"(*((const char *)p + o)));
#else
        __builtin_prefetch((const char *)p + o, 1, 3);
#endif
    }
}
/* The most a rank claims after an exchange or op: claims invalidate the peers' copies while
 * the peers may still be reading this exchange's payloads, traffic that grows with the size
 * and meets their reads; measured gains stop at 2 KiB (larger payloads are streamed on the
 * far node measured, so never claimed there). Payloads of the STEP ring stop at
 * MC_STEP_PAYLOAD. */
#define MC_CLAIM_MAX 2048
_Static_assert(MC_STEP_PAYLOAD <= MC_CLAIM_MAX, "a STEP payload is claimed whole");
/* This rank's slot of exchange x->k + 1 (flag line and payload), for a payload of len bytes
 * like this one's, unless it is streamed (mc_shm_sym_fill: its lines must not be in this
 * cache then) or larger than MC_CLAIM_MAX. Nor the flag line alone of a streamed payload:
 * a peer polls it while the payload streams, and a claimed line then costs the writer one
 * more round trip (allreduce 2-8 KiB single calls, one ordering of launches: 1.47-3.15x over
 * native Open MPI without the claim, 1.38-2.97x with it). Flag and payload together, for
 * payloads of 121 B-2 KiB: allreduce 128-256 B single calls 1.56-1.59x -> 1.79-1.85x, reduce
 * of 1 KiB to a fixed root from a common start 0.49-0.50 -> 0.36-0.42 us, against the
 * payload alone. */
static inline void mc_shm_x_claim_next(const mc_shm_t *sh, const mc_xchg_t *x, size_t len, int streamed)
{
    if (!streamed && len <= MC_CLAIM_MAX)
        mc_claim(mc_shm_xslot_at(sh, x, x->k + 1, sh->r), MC_LINE + (len > MC_INLINE ? len : 0));
}
/* A fan exchange's claim of this rank's next slot: flag line and payload up to
 * MC_FAN_LINE_CLAIM_MAX bytes, the payload alone above. A larger payload keeps the rank that
 * claims busy longer (the reader copying it out, the root reducing it), and with rotating
 * roots the next exchange's other rank, done early, already polls this rank's next flag line:
 * claiming that line takes it from the poller and costs the writer one more round trip, as
 * with the STEP line (mc_shm_end). Measured (AMD EPYC VM of family 26, slow state, 2 ranks,
 * Open MPI, same-run over native, 5 launches each alternating, line and payload -> payload
 * alone): reduce of 2 KiB batches of 100 with roots rotating 1.48x -> 1.76x, single calls
 * from a common clock mark 1.96x -> 1.84x; bcast of 2 KiB batches 1.17x -> 1.65x (3
 * launches). At 128-256 B the line's claim wins (reduce batches 0.24-0.26 against 0.34-0.43
 * us without it, bcast 0.24-0.34 against 0.34-0.49). */
#define MC_FAN_LINE_CLAIM_MAX 1024
static inline void mc_shm_fan_claim_next(const mc_shm_t *sh, size_t len)
{
    if (len <= MC_FAN_LINE_CLAIM_MAX)
        mc_shm_x_claim_next(sh, &sh->fan, len, 0);
    else
        mc_claim((const char *)mc_shm_xslot_at(sh, &sh->fan, sh->fan.k + 1, sh->r) + MC_LINE, len);
}
static inline unsigned char *mc_shm_sym_begin(mc_shm_t *sh, size_t len)
{
    ++sh->sym.k;
    mc_shm_tick(sh);
    return mc_shm_slot_payload(mc_shm_xslot(sh, &sh->sym, sh->r), len);
}
/* The symmetric exchange's copy-in: streaming stores from MC_FAR_NT_MIN bytes when the node
 * is far (mc_shm_far), so the readers fetch the payload from memory rather than from the
 * writer's cache. Measured at 2 ranks on a far node, allreduce in batches of 100: 2 KiB
 * 1.04-1.16 us against 1.52-1.69, 1 KiB 0.80-0.84 against 1.00; 512 B the same, 256 B
 * 0.65 against 0.41. On a near node streaming costs 2x (2 KiB 0.86 against 0.41 us), and
 * so it does in the fan-in exchange even when far (one reader: reduce 1 KiB 0.74 against
 * 0.45 us). */
void mc_shm_sym_fill(mc_shm_t *sh, unsigned char *dst, const void *src, size_t len);
/* Both exchanges: publish this rank's payload; wait for (and return) the payload of `rank`
 * (every MC_X_PROBE-th exchange also samples the line-fetch latency). */
#define MC_X_PROBE 16
void mc_shm_x_publish(mc_shm_t *sh, mc_xchg_t *x);
const unsigned char *mc_shm_x_wait(mc_shm_t *sh, const mc_xchg_t *x, int rank, size_t len);

/* Fan-in exchange of a small payload (at most MC_FAN_MAX bytes per rank) to a root, as a
 * small reduce does: every rank publishes its payload, only the root reads them all. Slots as
 * in the symmetric exchange, a ring of MC_FAN_RING per rank, with a count of their own
 * (sh->fan; publish and wait are mc_shm_x_*). Exchange k reuses the slots of exchange
 * k - MC_FAN_RING, which only that exchange's root read; every rank publishes in every
 * exchange, in order, so once that root published k - MC_FAN_RING + 1 it was done reading:
 * a writer needs that much (every rank knows the root of each exchange). What a rank knows
 * is kept (sh->fan.seen: from its waits as a root, and from these checks, which read the
 * root's latest slot, k - 1), so with a fixed root a writer reads the root's line on every
 * (MC_FAN_RING - 1)-th exchange only, not on every one as with two slots (the root's line
 * fetched before the writer may write: two line transfers per reduce instead of one), and
 * with rotating roots it already saw the publication it needs as a root itself. Measured
 * (Intel Xeon VM, 2 ranks, reduce 4 B-1 KiB, same-run over native Open MPI, mean over the
 * sizes per launch, alternating launches two slots / three / four): single calls 1.30-1.46x /
 * 1.37-1.44x / 1.40-1.49x; back-to-back batches of 100 with rotating roots lose some (2.15-2.39x
 * / 2.14-2.28x / 1.94-2.24x), as every ring of slots did against fewer (mc_shm_step_payload).
 * That read of the root's line came in begin, between a writer's entry and its publication,
 * so it sat on the root's path; it is made in end now, after the publication, for the next
 * exchange (begin still waits when that was not enough), and the ring has sixteen slots, so
 * with a fixed root it comes every 15th exchange and writers run up to 15 ahead. Measured on
 * an AMD EPYC (family 26, 2 ranks, reduce to a fixed root, 3 launches each, median of the
 * slower rank): single calls from a common clock mark, four slots -> this, 8 B 0.38-0.42 ->
 * 0.26-0.33 us, 128-256 B 0.50-0.67 -> 0.28-0.36 (native Open MPI 0.53-0.76), 1-2 KiB the
 * same; back-to-back batches of 100, 8 B 0.18-0.29 -> 0.13-0.16 us (native 0.14-0.17), roots
 * rotating the same. Either half alone gave the single calls as much (8 B: four slots with
 * the read in end 0.25-0.30 us, sixteen slots without it 0.25-0.26), the batches gain from
 * the sixteen. A root prefetching its peers' next slots after its exchange lost (8 B single
 * calls 0.40-0.43 us: it takes back the lines the writers claimed). Sixteen slots cost
 * 16 x 2176 bytes per rank of the region.
 * A fan-out (out = 1, a small bcast) shares the slots and the count: the root publishes its
 * payload, every other rank reads it and then publishes (no payload), so the root's slot of
 * exchange k - MC_FAN_RING is free once every other rank published k - MC_FAN_RING, which
 * with rotating roots it saw as a reader, and with a fixed root end's checks find (one read
 * of each reader's line in fifteen exchanges).
 * Not an op: no mc_shm_begin/end.
 *   begin: starts exchange k with `root`, a fan-out if `out`, returns this rank's payload
 *   buffer (after the wait).
 *   end: after this rank's part of exchange k (its publication, and its reads as the root or
 *   a fan-out's reader). */
unsigned char *mc_shm_fan_begin(mc_shm_t *sh, int root, int out, size_t len);
void mc_shm_fan_end(mc_shm_t *sh);

/* Spin-then-yield until *f reaches target: 8 ranks on 2 cores must make progress. */
void mc_wait_flag(_Atomic uint64_t *f, uint64_t target);
/* A communicator has n ranks on this node (MPI_COMM_TYPE_SHARED): more of them than online
 * CPUs shorten the waits' spins (sync.c, MCOLL_SHM_SPIN). */
void mc_shm_note_host_ranks(int n);
/* Some communicator put more ranks on this node than it has online CPUs (this process's
 * view: a communicator's ranks agree on it, mc_ctx_t.load). */
int mc_host_oversubscribed(void);
/* The region's ranks outnumber the node's online CPUs (or MCOLL_OVERSUBSCRIBED says so): the
 * same answer on every rank of the region, so an algorithm may choose by it. */
int mc_shm_crowded(const mc_shm_t *sh);
/* Its load: the most ranks a communicator put on this node per online CPU (at least 1), 0 when
 * not oversubscribed. */
double mc_host_load(void);
/* The spins in force: MCOLL_SHM_SPIN, or 256, 4 when oversubscribed, 1 on one CPU. */
int mc_shm_spin_limit(void);
/* mc_wait_flag on flag line f whose inline payload of len bytes is read next: a payload
 * that reaches the line's second cache line (more than MC_CL - 8 bytes) has that line
 * loaded on every spin too, so its fetch overlaps the flag's instead of following it.
 * Measured (Intel Xeon VM, 2 ranks, same-run over native Open MPI, allreduce of 64 B):
 * single calls 1.22-1.23x -> 1.37-1.38x, batches of 100 1.58-1.65x -> 1.77-1.85x. Loading
 * the lines of a payload after the flag line on every spin lost (allreduce 128-512 B in
 * batches 1.53-1.63x -> 1.38-1.49x): several lines the writer is filling then bounce.
 * The fan exchanges wait on the flag alone (mc_shm_x_wait): there the waiting rank is often
 * early (a reduce's root, a bcast's reader), and its loads take the second line from the
 * writer while it fills it. AMD EPYC VM of family 26, slow state, 2 ranks, 64 B, batches of
 * 100 with rotating roots, 3 launches each alternating: bcast 0.30-0.36 -> 0.24-0.25 us,
 * reduce 0.28-0.30 -> 0.23-0.24; single calls alike (0.39-0.50 either way); the symmetric
 * exchange's allreduce there 0.20-0.23 without it against 0.23-0.24 with it (kept: Intel). */
void mc_wait_inline(mc_flag_t *f, uint64_t target, size_t len);

/* ---------------------------------------------------------------- counters (region.c) */
/* Data-access volume (bytes loaded + stored by the copy and reduce kernels) and
 * synchronization events (flag publications) of this thread; mc_run attributes the delta of
 * each call to its collective (MCOLL_STATS, mcoll_stats_get). */
extern __thread uint64_t mc_dav_bytes __attribute__((tls_model("initial-exec")));
extern __thread uint64_t mc_sync_events __attribute__((tls_model("initial-exec")));
/* Bytes written by the streaming kernels (mc_copy_nt, and mc_red3_nt(_multi) where they
 * stream) on this thread: a test's view of the adaptive and far choices. */
extern __thread uint64_t mc_nt_bytes __attribute__((tls_model("initial-exec")));

/* ---------------------------------------------------------------- copy kernels (copy.c) */
/* The destination 1-31 bytes past the source modulo 64: where `rep movsb` (glibc's memcpy
 * from a few KiB, the kernel's CMA copy) is 4-20x slower on AMD Zen 3 (mc_memmove, cma.c). */
static inline int mc_movsb_skewed(uintptr_t d, uintptr_t s) { return ((d - s) & 63) - 1 < 31; }
/* All count 2n bytes of DAV. Any alignment and length; regions must not overlap. */
void mc_copy_t(void *dst, const void *src, size_t n);    /* temporal: memcpy */
void mc_copy_nt(void *dst, const void *src, size_t n);   /* streaming stores + sfence */
/* Paper Algorithm 1 (as the prose says): nt-copy when the destination is non-temporal
 * (nontemporal != 0) and the algorithm's working set W exceeds the cache capacity C;
 * t-copy otherwise. */
void mc_copy_adaptive(void *dst, const void *src, size_t n, int nontemporal, size_t W, size_t C);
/* Whether a writer streams what it hands to another core through the region (a pipe's
 * slice, a scan's window; writes of MC_FAR_NT_MIN bytes and more): beyond the cache capacity
 * (W > C, Algorithm 1), and while the call's working set lies between the ranks' L1s and
 * their L2s together (p L1 <= W < p L2; L1 32 KiB when hwloc does not say). In that band the
 * reader takes each slice right after it was written, from the writer's private cache, by a
 * cross-core transfer that moves 6.5-8.5 GB/s on this VM; streamed, the slice comes from
 * memory at 19-24 GB/s. Between the L2s and C temporal stores won; below the L1s the few
 * lines cross faster than memory answers (8 B-8 KiB per rank, 4 launches each: streamed
 * 0.5-0.8x native at 256 B-2 KiB against 1.1-2.0x, 4-8 KiB 1.7-3.5x against 2.0-6.8x; at
 * 16 KiB alike). The VM measured (AMD EPYC, family 25) has hwloc report one L3 shared by
 * both cores, yet lines move between them slowly; where cores do share a fast L3 the band
 * may cost (no such machine here). Measured at 2 ranks, malloc buffers, near node (line
 * fetch 50 ns), 4 launches each alternating, same-run ratio over native Open MPI, temporal
 * copy-in at every size against streaming at every size (the band is where the second won):
 * bcast pipe 64-256 KiB 0.66-0.85x -> 1.07-1.28x, 512 KiB 0.96-1.20x -> 1.35-1.38x, 1-2 MiB
 * 1.80-2.38x -> 1.41-1.55x; allgather and alltoall pipes 64-128 KiB 0.68-0.82x ->
 * 0.75-1.06x, 512 KiB-2 MiB 1.34-1.53x -> 0.92-1.06x; gather 32-128 KiB 0.72-1.14x ->
 * 1.11-1.50x; scan 16-256 KiB 1.1-1.6x -> 1.6-2.2x, 512 KiB-8 MiB 1.9-2.8x -> 1.3-2.0x;
 * exscan 64-256 KiB 0.62-0.85x -> 0.97-1.16x, 512 KiB 0.90-1.44x -> 1.21-1.41x, 1-8 MiB
 * 2.1-2.8x -> 1.3-1.7x. The user bytes decide the band: a pipe's region slices (16 KiB at
 * least) counted in, 1-2 KiB messages streamed and ran 0.6-0.85x against 1.2-2.2x. */
int mc_handover_nt(size_t W, size_t C, int p);
/* Building blocks of other streaming kernels (mc_red3_nt), which count their own DAV: n
 * bytes (a multiple of MC_CL) to dst (MC_CL aligned) with the current variant's streaming
 * stores, no fence, nothing counted; mc_stream_fence() orders them before later stores. */
void mc_stream_lines(void *dst, const void *src, size_t n);
void mc_stream_fence(void);
/* No x86 part has more than 48 MiB of last-level cache per core (AMD's stacked-cache EPYCs): a
 * larger claim per PU sharing the cache is a virtual machine reporting its host's cache (seen:
 * 508 MiB "per core"), which would keep every copy temporal (measured on that VM: streaming at
 * C = 32 MiB made allgather, reduce and bcast of 8-64 MiB 1.2-1.8x faster). */
#define MC_LLC_PER_PU_MAX ((size_t)64 << 20)
int mc_llc_credible(size_t llc, int pus);
/* C = LLC + p * L2 (non-inclusive LLC) or LLC (inclusive), for p ranks, from hwloc; the
 * capacity of MCOLL_PROFILE (cache.adaptive) replaces it, MCOLL_SHM_CACHE overrides both. An
 * LLC hwloc does not find, or one that is not credible, counts as 32 MiB. */
size_t mc_cache_capacity(int p);
/* Kernel variants, for tests and mcoll-info: "avx512", "avx2", "sse2", "scalar". */
const char *mc_copy_nt_kind(void);
int mc_copy_nt_force(const char *kind);  /* 0 ok, -1 unknown or unsupported on this CPU */

/* ---------------------------------------------------------------- reduction kernels (reduce.c) */
/* A reduction prepared once per call: a vectorized kernel for predefined (op, type) pairs,
 * PMPI_Reduce_local otherwise. Operand order follows MPI: "in" is the lower-ranked. */
typedef void (*mc_red_kernel_t)(void *out, const void *a, const void *b, size_t count);
typedef struct mc_red {
    MPI_Op op;
    MPI_Datatype dtype;
    size_t extent;
    int commute;
    mc_red_kernel_t k3;     /* out = a op b; NULL for user-defined ops */
} mc_red_t;
void mc_red_init(mc_red_t *r, const mc_args_t *a);
/* inout = in op inout (count elements). 3 * count * extent bytes of DAV. */
int mc_red2(const mc_red_t *r, const void *in, void *inout, size_t count);
/* out = a op b; out may alias a or b. 3 * count * extent bytes of DAV. */
int mc_red3(const mc_red_t *r, void *out, const void *a, const void *b, size_t count);
/* mc_red3 with the result written by streaming stores (+ sfence), so the destination's
 * lines are not read first (no read-for-ownership): for a result that is not read again
 * soon. Predefined (op, type) pairs of at least MC_RED_NT_MIN bytes; anything else runs
 * mc_red3. Same DAV, same bits; out may alias a or b. */
#define MC_RED_NT_MIN 1024
int mc_red3_nt(const mc_red_t *r, void *out, const void *a, const void *b, size_t count);
/* outs[0] = a op b, and the same result to outs[1 .. nout-1], all streamed: each block is
 * computed once (in L1) and written to every destination, so the result is never read back.
 * DAV 3n + 2n(nout - 1) (n = count * extent), as mc_red3 then nout - 1 copies of the result.
 * Any destination may be a or b exactly (every block is read before it is written); none may
 * overlap another, or a or b partially. */
int mc_red3_nt_multi(const mc_red_t *r, void *const *outs, int nout, const void *a, const void *b,
                     size_t count);
/* The choice of mc_copy_adaptive: streaming when nontemporal and W > C, else mc_red3. */
int mc_red3_adaptive(const mc_red_t *r, void *out, const void *a, const void *b, size_t count,
                     int nontemporal, size_t W, size_t C);
/* The kernel for (op, type), or NULL (then PMPI_Reduce_local is used). */
mc_red_kernel_t mc_red_kernel(MPI_Op op, MPI_Datatype t);

/* ---------------------------------------------------------------- data paths (path.c, cma.c) */
mc_path_t mc_shm_path(void);            /* MCOLL_SHM_PATH */
/* Probe at region creation, collective over node_comm (ranks in local-rank order, sh->pids
 * filled): each rank reads a word of every peer with process_vm_readv; returns 1 when every
 * rank succeeded with every peer (same answer on all ranks), 0 otherwise. */
int mc_cma_probe(mc_shm_t *sh, MPI_Comm node_comm);
/* Where the Yama scope read from scope_file is 1, lets any process of this user attach to this
 * one (PR_SET_PTRACER_ANY), so peers may use CMA on it: 1 done, 0 not needed (another scope,
 * or no such file), -errno when the kernel refused (cma.c; the probe calls it once per
 * process unless MCOLL_SHM_PTRACER=0). */
int mc_cma_allow_peers(const char *scope_file);
int mc_cma_read(pid_t pid, void *dst, const void *remote_src, size_t n);
int mc_cma_write(pid_t pid, void *remote_dst, const void *src, size_t n);
/* Whether a transfer whose destination lies 1-31 bytes past its source (mod 64) goes through
 * a bounce buffer at the remote side's alignment (the kernel's rep movsb is slow there on
 * some CPUs; probed once, cma.c); mc_cma_bounce_set forces it (1), forbids it (0) or leaves
 * it to the probe (-1): tests. */
int mc_cma_bounces(void);
void mc_cma_bounce_set(int mode);
/* Whether this process's buffer moves by CMA at a copy's rate (huge pages; cma.c), measured
 * once per address range and kept (the MC_CMA_RANGES most recently used ranges; a buffer
 * inside a kept range shares its answer), measured again every MC_CMA_RECHECK-th use;
 * MCOLL_SHM_CMA_FAST=1/0 forces the answer. */
#define MC_CMA_RANGES 16
#define MC_CMA_RECHECK 256
int mc_cma_fast(const void *buf, size_t len);
/* Replaces the rate measurement behind mc_cma_fast (NULL: the timed probe again), so tests
 * check the bookkeeping around it (ranges, re-measurement, modes) without timing. */
void mc_cma_measure_set(int (*fn)(const char *buf, size_t len));

/* Exposes buf (len bytes) as this rank's post `slot` for the current op. Posts are shared
 * data: this quiesces first (a slower rank may still read the previous op's posts). Not a
 * flag: publish with mc_shm_set afterwards. */
void mc_shm_post(mc_shm_t *sh, int slot, const void *buf, size_t len);
/* How this rank can reach rank's posted buffer: MC_PATH_ZERO (a local pointer exists),
 * MC_PATH_CMA, or MC_PATH_COPY (unreachable: the algorithm must stage through the region).
 * Honors MCOLL_SHM_PATH. */
mc_path_t mc_peer_path(mc_shm_t *sh, int rank, int slot);
/* CMA may carry copies between the ranks: the probe found it working and MCOLL_SHM_PATH
 * allows it. */
int mc_shm_cma_ok(const mc_shm_t *sh);
/* Local pointer to rank's posted buffer (zero copy), or NULL. */
void *mc_peer_ptr(mc_shm_t *sh, int rank, int slot);
/* Copies between a peer's posted buffer (at offset off) and local memory, by the best path. */
int mc_peer_read(mc_shm_t *sh, int rank, int slot, size_t off, void *dst, size_t n);
int mc_peer_write(mc_shm_t *sh, int rank, int slot, size_t off, const void *src, size_t n);
/* The same with a hint: nt != 0 writes the destination with streaming stores on the zero-copy
 * path (mc_copy_nt instead of mc_copy_t); the CMA path is the kernel's copy either way. */
int mc_peer_read_nt(mc_shm_t *sh, int rank, int slot, size_t off, void *dst, size_t n, int nt);
int mc_peer_write_nt(mc_shm_t *sh, int rank, int slot, size_t off, const void *src, size_t n, int nt);
/* Every rank can reach every other rank's post `slot` (all ranks compute the same answer
 * from the posts, so they can agree on a path without communicating). */
int mc_shm_all_reachable(mc_shm_t *sh, int slot);
/* Every rank's post `slot` is in its shared heap (or empty) and zero copy is allowed: the
 * same answer on every rank, from the posts (every rank may use local pointers to them). */
int mc_shm_all_zero_copy(mc_shm_t *sh, int slot);
/* Adds vote (MC_VOTE_*) to this rank's post `slot`. Call after mc_shm_post, before
 * publishing. MC_VOTE_STAGE: the op should stage through the region rather than copy by CMA
 * (the algorithm knows which of its CMA copies lose to staging; zero copy is never refused). */
void mc_shm_vote(mc_shm_t *sh, int slot, unsigned vote);
/* Some rank's post `slot` carries vote (mc_shm_voted), or every rank's does
 * (mc_shm_all_voted): the same answers on every rank once the posts are published
 * (mc_shm_post_round). */
int mc_shm_voted(mc_shm_t *sh, int slot, unsigned vote);
int mc_shm_all_voted(mc_shm_t *sh, int slot, unsigned vote);
/* The posting round of a direct op of collective coll, after its mc_shm_post of slot 0: adds
 * MC_VOTE_FAR to that post when this rank finds the node far, raises STEP 1 and waits for
 * every rank's, timing the next rank's flag (a distance sample, latency.c: every direct op
 * takes one); then sh->far_all tells whether every rank voted far, and sh->ordinary[coll]
 * whether some buffer posted in this op lies outside the shared heap (unchanged when the op
 * posted none). */
void mc_shm_post_round(mc_shm_t *sh, mc_coll_t coll);
/* The buffers posted in this op, on every rank: -1 none (every post empty), 1 every one zero
 * copy (in its poster's shared heap, and zero copy allowed), 0 some not. The same on every
 * rank after the posting round. */
int mc_shm_posts_zero_copy(mc_shm_t *sh);
/* A verdict of ordinary buffers (sh->ordinary) holds for MC_ORDINARY_LAPSE calls of the
 * region, then every collective's lapses at once: the next call of each is ordered for heap
 * buffers again, and a direct algorithm chosen so posts its buffers, finding out whether they
 * are in the heap now. Calls are ops and the small exchanges (symmetric, fan-in), which are
 * no ops: counted in ops alone, a program whose ordinary order takes a small exchange (an
 * allreduce of 16-32 KiB at 2 ranks, whose heap order takes shm_direct) never saw its
 * verdict lapse. Every rank counts the same calls. */
#define MC_ORDINARY_LAPSE 256
static inline int mc_shm_ordinary(const mc_shm_t *sh, mc_coll_t c)
{
    return sh->ordinary[c];
}
/* A direct op on the posts `slot` may go ahead: every post is reachable, no poster voted
 * MC_VOTE_PIPE and, unless every one is zero copy or MCOLL_SHM_PATH=cma, none voted to stage,
 * nor MC_VOTE_RING while some post is not fast by CMA. The same answer on every rank, from
 * the posts. */
int mc_shm_direct_agreed(mc_shm_t *sh, int slot);

/* ---------------------------------------------------------------- cross-core latency (latency.c) */
/* An acquire load of *f into *v, and how long it took in ns (0: no timestamp counter). */
uint32_t mc_timed_load(_Atomic uint64_t *f, uint64_t *v);
/* The estimate from the first n samples of v (n <= MC_XLAT_N): the second largest (the only
 * one for n = 1; 0 for n = 0). */
uint32_t mc_xlat_estimate(const uint32_t *v, int n);
/* Records a sample (ns; 0 is none). */
void mc_shm_xlat_add(mc_shm_t *sh, uint32_t ns);
/* mc_wait_flag on a peer's flag that also samples: the load that first sees the target
 * fetched the line its writer had just modified (sync.c). */
void mc_shm_wait_probe(mc_shm_t *sh, _Atomic uint64_t *f, uint64_t target);
/* This rank's estimate from its last MC_XLAT_N samples, ns (0: none yet). */
uint32_t mc_shm_xlat(const mc_shm_t *sh);
/* This rank finds the node "far": its estimate exceeds MCOLL_SHM_FAR_NS (0 = never); with no
 * sample of its own yet, some other rank voted far at the last posting round. Data
 * handed to another core then goes through memory: writes of at least MC_FAR_NT_MIN bytes
 * into the region stream (mc_shm_far_stream); a zero-copy allgather pushes its blocks with
 * streaming stores when any rank votes far (MC_VOTE_FAR); the data movers' pipes run their
 * direct algorithm (CMA) when every rank does (sh->far_all; allgatherv/shm_common.c). */
int mc_shm_far(mc_shm_t *sh);
/* The reductions' and scans' hand-overs through the region stream: the node is far and not
 * oversubscribed (latency.c). */
int mc_shm_far_stream(mc_shm_t *sh);

/* ---------------------------------------------------------------- trials (trial.c) */
/* Trials are on: MCOLL_SHM_TRIAL=1 and the path not forced (MCOLL_SHM_PATH=auto). */
int mc_trials_on(void);
/* The trial of op site at this size (NULL below from, itself at least MC_TRIAL_LOW). Its
 * ways are the op's own. */
mc_trial_t *mc_trial_of(mc_shm_t *sh, int site, size_t bytes, size_t from);
/* The way this call runs (counts the call): a function of the call count and of the samples,
 * which every rank of the region shares (below), so the same on every rank. */
int mc_trial_way(mc_trial_t *t, int nways);
/* The fastest of the ways in the bit mask allowed (-1: none allowed). */
int mc_trial_best(const mc_trial_t *t, int nways, unsigned allowed);
/* Samples are shared through the posting round of the next timed op: mc_trial_done keeps this
 * rank's time of a call of way, mc_trial_publish (after mc_shm_post of slot 0) puts it into the
 * post, mc_trial_collect (after mc_shm_post_round) records the largest of the ranks' times as
 * the call's sample, on every rank. */
void mc_trial_done(mc_shm_t *sh, mc_trial_t *t, int way, double ns, double bytes);
void mc_trial_publish(mc_shm_t *sh);
void mc_trial_collect(mc_shm_t *sh);
/* An op whose way needs no posting round may skip it, but not on every call, or its samples
 * would wait long to be shared: whether the call mc_trial_way just counted takes the round
 * anyway (every call of the first turns, then the bursts and the MC_TRIAL_KEEP calls after
 * each). The same on every rank. */
int mc_trial_shares(const mc_trial_t *t, int nways);
/* An op with no posting round at all: on the calls of t that share samples (mc_trial_shares),
 * right after the call's mc_trial_done, the pending sample goes round a symmetric exchange
 * of its time (one flag round; mc_trial_publish and mc_trial_collect otherwise). */
void mc_trial_share(mc_shm_t *sh, const mc_trial_t *t, int nways);
/* Now, in ns (a monotonic clock): a call's start and end. */
double mc_trial_clock(void);
/* Tests: fn(way, measured ns) replaces every measurement (NULL: the clock again). */
void mc_trial_measure_set(double (*fn)(int way, double ns));
#define MC_FAR_NT_MIN 1024

/* ---------------------------------------------------------------- shared heap (heap.c) */
/* mcoll_malloc / MPI_Alloc_mem memory lives in per-process memfd segments that peers map
 * once, so a posted address in it is used directly (zero copy, no syscall per operation). */
int mc_heap_lookup(const void *p, uint64_t *heap_id, int64_t *off);   /* 1 if p is in my heap */
/* Local address of (poster pid, heap_id, off), mapping the poster's segment on first use;
 * NULL when it cannot be mapped. */
void *mc_heap_translate(pid_t pid, uint64_t heap_id, int64_t off, size_t len);

/* ---------------------------------------------------------------- algorithm glue (alg.c) */
/* Applicability shared by every shm_* algorithm: the whole communicator is one node (real or
 * virtual) and shared memory is not disabled or known to be unavailable. */
int mc_shm_alg_ok(const mc_ctx_t *ctx, const mc_args_t *a);
/* Region of the call's node. Returns 1 with *sh set; or 0 when no region can be had, after
 * running the first applicable non-shm algorithm instead (*rc holds its result). Every local
 * rank reaches the same answer (creation agrees collectively). */
int mc_shm_enter_slow(mc_ctx_t *ctx, const mc_args_t *a, mc_shm_t **sh, int *rc);
static inline int mc_shm_enter(mc_ctx_t *ctx, const mc_args_t *a, mc_shm_t **sh, int *rc)
{
    if ((*sh = ctx->shm)) return 1;
    return mc_shm_enter_slow(ctx, a, sh, rc);
}
/* Working-set bound for adaptive copies: what the algorithm touches (buffers + region). */
static inline size_t mc_shm_ws(size_t user_bytes, size_t shm_bytes) { return user_bytes + shm_bytes; }

/* Buffers of a ring that a channel's slices (the pipes), a reduction's windows (MA) or a scan
 * slot's windows go round: as many of buf bytes as min(space, MC_BUF_RING) holds, at least two.
 * Two (yhccl's double buffering) make a writer wait for the slowest reader's slice k - 2;
 * the ring, within one core's L2 here (MC_BUF_RING), rarely waits (README "The pipes' ring"). */
#define MC_BUF_RING ((size_t)1 << 20)
static inline int mc_ring_nbuf(size_t space, size_t buf)
{
    size_t n = (space < MC_BUF_RING ? space : MC_BUF_RING) / (buf ? buf : 1);
    return n < 2 ? 2 : (int)n;
}

/* Cost models: on an oversubscribed node (mc_cost_in_t.load ranks per CPU) a waiter yields, and
 * the rank it waits for runs after the other ranks of the waiter's core, so a flag round costs
 * about load - 1 yields more (mc_sched_round; every shared-memory cost, model/classic.c
 * shm_cost). One yield took 1.6 us on the 2-core VM; a flag round more measured 6.3 us at 8
 * ranks (load 4: allreduce shm_ma against shm_dpml, 4-16 KiB) and 8 us (scan's two algorithms,
 * 1-4 KiB), 2.5 us at 3 (load 1.5, the scans), while the reductions' switch from shm_dpml's
 * two all-rank waits to shm_ma's p steps fell at 16-32 KiB at 3 ranks, 32-64 at 4, 128-256 at
 * 8: load - 1 rounds of 2.1 us put the model's there (load rounds of 1.6 us put the 3 ranks'
 * at 32-64 KiB, 10-60 % behind shm_ma there). */
#define MC_YIELD_ROUND 2.1e-6
static inline double mc_sched_round(double load)
{
    return load > 1 ? (load - 1) * MC_YIELD_ROUND : 0;
}
/* Cost models: how many times a plain copy's time a byte takes when one core copies it out of
 * the region right after another core wrote it there, within the caches (bcast's pipe, a
 * scan's first window; the measurements are at their cost functions). This VM's cores hand
 * lines over slowly (mc_handover_nt); where they share a fast last-level cache less. */
#define MC_XCORE 2.0
/* Cost models: a direct algorithm's posting round, in flag rounds (alpha), where the call
 * then runs another algorithm (the reductions' shm_ma with ordinary buffers, the movers'
 * pipe when they stage): the flag line and the post's line each cross between the cores,
 * and the round reads every rank's post. Measured at 2 ranks on an AMD EPYC VM (malloc
 * buffers, 4-6 launches, flag exchange 0.16-0.24 us): shm_direct took 0.3-0.4 us more than
 * shm_ma forced at 16-64 KiB (allreduce, reduce_scatter_block, reduce: 14-24 %), where one
 * alpha (the built-in 0.2 us) kept it within MC_MSEL_TOL of shm_ma from 32 KiB. */
#define MC_POST_ROUND 2.0
/* The cost of that posting round: MC_POST_ROUND line hand-overs, and one scheduling round
 * on an oversubscribed node (shared-memory costs see h->alpha with mc_sched_round(load) in
 * it; model/classic.c shm_cost). */
static inline double mc_post_round(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    double y = mc_sched_round(in->load), lines = h->alpha - y;
    return MC_POST_ROUND * (lines > 0 ? lines : 0) + y;
}
/* Cost models: on an oversubscribed node (in->load ranks per CPU) a wait for every rank takes
 * about two scheduling rounds where the flag round's alpha counts one (mc_sched_round; a
 * pipe's reader waits for its one writer): the direct algorithms wait so n times, their
 * posting round and, on the posted buffers, the DONE before they may be reused. Measured at 4
 * ranks on the 2 cores (load 2; forced, median of 2 launches, Open MPI): the movers' direct
 * algorithm with heap buffers 4.8-5.2 us above the pipe at 1 KiB (allgather 10.7 / 5.5,
 * alltoall 11.0 / 6.3, gather 10.2 / 5.3), where the model counted the same flag rounds, and
 * staged through the pipe (malloc buffers, 16 KiB) 3.8-4.5 us above it (allgather 16.8 /
 * 13.0, alltoall 24.0 / 19.6, scatter 16.1 / 11.6) where the posting round counted 2.5. */
static inline double mc_all_waits(const mc_cost_in_t *in, int n) { return n * mc_sched_round(in->load); }
/* Cost models: a call that runs another algorithm (`staged`: its cost) after a direct
 * algorithm's posting round: the round, and on an oversubscribed node MC_STAGE_LOAD of the
 * other algorithm. There the round holds the ranks that run first until every rank has been
 * scheduled and posted, where the other algorithm alone would start at once; back to back
 * (batches of 10) the two took the same within 2-6 %. Measured (single calls after a barrier,
 * Open MPI, us): the movers at 4 ranks on the 2 cores (MCOLL_SHM_PATH=copy, 2 launches in
 * both orders, direct / pipe): allgather 512 KiB-1 MiB 199 / 174, 401 / 348; alltoall 258 /
 * 225, 903 / 795; bcast 48 / 41, 88 / 80; scatter 87 / 70, 166 / 138: beyond the round's 4-5
 * us, 3-17 % of the pipe (3 ranks: 0-18 %). The reductions' shm_direct on ordinary buffers
 * (the round, then shm_ma) likewise: 3 and 4 ranks, forced, both orders, 64 KiB-1 MiB 0-25 %
 * above shm_ma (reduce 512 KiB at 3 ranks 56-58 / 49-55 us); the heap order's tolerance
 * counts the share too (select/model.c). */
#define MC_STAGE_LOAD 0.1
static inline double mc_stage_round(const mc_hockney_t *h, const mc_cost_in_t *in, double staged)
{
    return mc_post_round(h, in) + (in->load > 1 ? MC_STAGE_LOAD * staged : 0);
}

#endif
