/* Shared-memory data movement: one pipelined engine over "channels" of the node region, and
 * the address-posting (direct) protocol, for every byte collective (see shm_common.h). */
#include "shm_common.h"
#include "../../core/config.h"
#include "../../p2p/p2p.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Slice bounds. A slice is the unit of pipelining: the writer copies slice k in while the
 * readers copy slice k-1 out, so a message of n slices costs about (n + 1) slice copies.
 * Large slices amortize the flag round trip (~0.2 us) and stay far below the L2 of a core,
 * so a slice just written is still in cache when a reader takes it. */
#define MV_SLICE_MAX ((size_t)256 << 10)
#define MV_SLICE_MIN ((size_t)16 << 10)
/* Messages of a few slices are cut into at least this many, for overlap. */
#define MV_SLICE_DIV 4

static size_t min_sz(size_t x, size_t y) { return x < y ? x : y; }
static size_t max_sz(size_t x, size_t y) { return x > y ? x : y; }
static size_t floor_line(size_t n) { return n / MC_LINE * MC_LINE; }
static size_t nslices(size_t len, size_t slice) { return (len + slice - 1) / slice; }

/* Slice size: what one buffer of the layout holds (cap), at most MV_SLICE_MAX, and for a
 * message (hint, known to every rank; 0 = unknown) of a few slices a quarter of it. Writer
 * and readers of a channel compute it from the same values, so they agree. */
static size_t slice_of(size_t cap, size_t hint)
{
    size_t s = MV_SLICE_MAX;
    if (hint) {
        size_t q = (hint / MV_SLICE_DIV + MC_LINE - 1) / MC_LINE * MC_LINE;
        if (q < s) s = max_sz(q, MV_SLICE_MIN);
    }
    return min_sz(s, cap);
}

/* ================================================================ pipe engine */
/* The block size per rank from which the pipes' calls go direct on a far node, take the
 * trial (far_direct; scatter's and gather's from MV_TRIAL_ROOTED), and stream their copy-ins
 * in the hand-over band (pipe_steps). */
#define MV_FAR_DIRECT ((size_t)16 << 10)

/* A writer's channel: its bytes go through nbuf buffers of the region (shm, shm + slice,
 * ...), slice k in buffer k % nbuf; `reader` reads it (-1: every other rank). */
typedef struct {
    char *shm;
    const char *src;
    size_t len;
    int reader;
} mv_out_t;

/* A reader's channel from `writer` (the same shm and len as the writer's). */
typedef struct {
    const char *shm;
    char *dst;
    size_t len;
    int writer;
} mv_in_t;

typedef struct {
    mc_shm_t *sh;
    size_t slice;
    size_t nbuf;               /* buffers of a channel: slice k goes to buffer k % nbuf */
    size_t W, C;               /* adaptive copy: working set and cache capacity */
    int nout, nin;
    mv_out_t *out;
    mv_in_t *in;
    const char *lsrc;          /* own block, copied in slices alongside (skipped in place) */
    char *ldst;
    size_t llen;
    size_t user;               /* the call's user-buffer bytes (W without the region) */
    int nt_in;                 /* copy-ins stream (W > C, or mc_handover_nt of the user bytes) */
    int half;                  /* the channels lie in mc_shm_half's half of the data area */
} mv_pipe_t;

/* Small channels (one slice of at most MC_STEP_PAYLOAD bytes) travel with the writer's STEP
 * line: in it up to MC_INLINE bytes (the reader touches the one line it waits on), else in
 * the lines after it; either way the writer need not wait for the last op's readers. */
static char *inline_buf(mc_shm_t *sh, int writer, size_t len) { return (char *)mc_shm_step_payload(sh, writer, len); }

/* Step k: before refilling buffer k % nbuf a writer waits until its readers finished slice
 * k - nbuf (their AUX flag reached k - nbuf + 1); after copying it publishes STEP = k + 1.
 * The copy-in streams (mc_handover_nt) while the call's user bytes lie between the cores'
 * L1s and L2s, and once the working set exceeds the cache, although another core reads the
 * slice right after: a line left modified in the writer's cache reaches the reader by a
 * cross-core transfer, which here moves 6.5-8.5 GB/s against 19-24 GB/s from memory after
 * streaming stores (4-8 MiB through a ring of 64 KiB chunks, one core writing, the other
 * summing). Measured beyond the cache at 2 ranks, malloc buffers, staged shm_direct,
 * same-run ratio over native Open MPI, temporal against streaming copy-in: allgather 16 MiB
 * 1.59x against 1.74x, and 0.49-0.59x against 1.96-2.28x in the runs whose flag exchange
 * took 0.37 us (the state in which cross-core transfers are slow); bcast 32 MiB 1.21-1.46x
 * against 1.76-2.18x; alltoall 8 MiB 0.43-1.26x against 1.34-1.39x. In the band the movers'
 * trial may choose temporal copy-ins instead (sh->stage_t, mv_nways). */
static void pipe_write(mv_pipe_t *pp, size_t k)
{
    mc_shm_t *sh = pp->sh;
    size_t off = k * pp->slice;
    int any = 0;
    for (int c = 0; c < pp->nout; c++) {
        const mv_out_t *o = &pp->out[c];
        if (o->len <= off) continue;
        if (k >= pp->nbuf) {
            uint32_t done = (uint32_t)(k - pp->nbuf + 1);
            if (o->reader < 0) mc_shm_wait_all(sh, MC_F_AUX, done);
            else mc_shm_wait(sh, MC_F_AUX, o->reader, done);
        }
        char *dst = o->shm + (k % pp->nbuf) * pp->slice;
        size_t n = min_sz(pp->slice, o->len - off);
        if (pp->nt_in && n >= MC_FAR_NT_MIN) mc_copy_nt(dst, o->src + off, n);
        else mc_copy_t(dst, o->src + off, n);
        any = 1;
    }
    if (any) mc_shm_set(sh, MC_F_STEP, (uint32_t)(k + 1));
}

/* Reads slice j of every channel that has one, then acknowledges it. A writer waits for
 * acknowledgements up to (its slices) - nbuf only, and a reader's last slice count is at least
 * every channel's, so the acknowledgements of the last nbuf slices are never needed. */
static void pipe_read(mv_pipe_t *pp, size_t j, size_t kin)
{
    mc_shm_t *sh = pp->sh;
    size_t off = j * pp->slice;
    for (int c = 0; c < pp->nin; c++) {
        const mv_in_t *in = &pp->in[c];
        if (in->len <= off) continue;
        mc_shm_wait_step(sh, in->writer, (uint32_t)(j + 1), in->len);
        mc_copy_adaptive(in->dst + off, in->shm + (j % pp->nbuf) * pp->slice, min_sz(pp->slice, in->len - off), 1,
                         pp->W, pp->C);
    }
    if (j + pp->nbuf < kin) mc_shm_set(sh, MC_F_AUX, (uint32_t)(j + 1));
}

/* yhccl Algorithms 3-4 generalized: iteration k writes slice k of this rank's channels,
 * copies slice k of its own block, and reads slice k - 1 of the channels it receives. A wait
 * in iteration k only depends on other ranks' iteration k - 1, so no cycle can form. The op
 * was begun by the caller. */
static void pipe_steps(mv_pipe_t *pp)
{
    mc_shm_t *sh = pp->sh;
    size_t kout = 0, kin = 0, kl = 0;
    for (int c = 0; c < pp->nout; c++) kout = max_sz(kout, nslices(pp->out[c].len, pp->slice));
    for (int c = 0; c < pp->nin; c++) kin = max_sz(kin, nslices(pp->in[c].len, pp->slice));
    if (pp->lsrc != pp->ldst) kl = nslices(pp->llen, pp->slice);
    size_t K = max_sz(max_sz(kout, kl), kin ? kin + 1 : 0);
    int inl = 1;   /* only this op's STEP lines are written: the ring lets them go earlier */
    for (int c = 0; c < pp->nout; c++) inl &= mc_shm_is_inline(sh, pp->out[c].shm);
    /* the band by the user bytes (a small message's slices are larger than the message), near
     * for blocks the trial may time (MV_FAR_DIRECT) only: under them the band's streamed
     * copy-ins lost on both days measured (Zen 3 VM near, 2 ranks, same-run over native Open
     * MPI: alltoall of 8 KiB 2.2x -> 1.8-1.9x on 2026-11-26; on 2026-11-30, 2 launches each,
     * streamed / temporal, allgather of 12 KiB 2.39-2.44 / 1.47-1.48 us, alltoall of 10-12 KiB
     * 2.15-2.74 / 1.29-1.45), while the band's larger blocks went either way (mv_nways); far,
     * where lines left in the writer's cache cross slowly (latency.c), all of them stream */
    size_t longest = 0;
    for (int c = 0; c < pp->nout; c++) longest = max_sz(longest, pp->out[c].len);
    pp->nt_in = pp->W > pp->C || (!sh->stage_t && mc_handover_nt(pp->user, pp->C, sh->p) &&
                                  (longest >= MV_FAR_DIRECT || mc_shm_far(sh)));
    if (kout && inl) mc_shm_quiesce_inline(sh);
    else if (kout && pp->half) mc_shm_quiesce_half(sh);
    else if (kout) mc_shm_quiesce(sh);
    for (size_t k = 0; k < K; k++) {
        if (k < kout) pipe_write(pp, k);
        if (k < kl) {
            size_t off = k * pp->slice;
            mc_copy_adaptive(pp->ldst + off, pp->lsrc + off, min_sz(pp->slice, pp->llen - off), 1, pp->W,
                             pp->C);
        }
        if (k >= 1 && k - 1 < kin) pipe_read(pp, k - 1, kin);
    }
}

static int pipe_run(mv_pipe_t *pp)
{
    pipe_steps(pp);
    mc_shm_end(pp->sh);
    return MPI_SUCCESS;
}

/* A channel's slices go round nbuf buffers of its space: a writer refills buffer k % nbuf
 * once its readers finished slice k - nbuf. Two buffers (yhccl's double buffering) make the
 * writer wait for every reader's slice k - 2, and at 2 ranks on this VM such pipes lost to
 * native from 64 KiB and collapsed to 0.2-0.5x in some launches of the intermediate state;
 * with a ring of up to MC_BUF_RING bytes (mc_ring_nbuf), measured (`--alg shm_pipe`,
 * MCOLL_SHM_FAR_NS=0, intermediate launches, same-run ratio over native Open MPI, 2 buffers
 * -> ring): bcast
 * 1-8 MiB 0.73-1.05x -> 1.59-2.53x, allgather 512 KiB-4 MiB 0.21-0.87x -> 1.23-1.54x,
 * gather 512 KiB-2 MiB 0.24-1.87x -> 2.23-2.33x, scatter 1-8 MiB 0.21-0.87x -> 1.62-1.91x,
 * alltoall 512 KiB-4 MiB 0.21-1.00x -> 1.36-1.52x; 16-128 KiB the same. Beyond the cache
 * (copies streaming) the ring lost 15-30 % at 16 MiB (allgather 2.23-2.32x -> 1.78-1.80x,
 * gather, scatter and alltoall alike): there the two buffers stay cached while the user data
 * streams. So the ring serves calls within the cache, and only when every rank computes the
 * same working set (writer and reader must agree on nbuf): not gatherv, scatterv, alltoallv,
 * whose ranks know only their own counts. */
static void pipe_init(mv_pipe_t *pp, mc_shm_t *sh, size_t space, size_t slice, size_t user_bytes, size_t shm_bytes,
                      int agreed)
{
    *pp = (mv_pipe_t){.sh = sh, .slice = slice, .nbuf = 2, .user = user_bytes};
    pp->W = mc_shm_ws(user_bytes, shm_bytes);
    pp->C = mc_cache_capacity(sh->p);
    if (agreed && slice && pp->W <= pp->C) pp->nbuf = (size_t)mc_ring_nbuf(space, slice);
}

static void pipe_local(mv_pipe_t *pp, const void *src, void *dst, size_t len)
{
    pp->lsrc = src;
    pp->ldst = dst;
    pp->llen = len;
}

/* ---------------------------------------------------------------- pipe collectives */
static size_t blk_extent(const mc_blk_t *b, int p)
{
    size_t e = 0;
    for (int i = 0; i < p; i++)
        if (mc_blk_len(b, i)) e = max_sz(e, mc_blk_off(b, i) + mc_blk_len(b, i));
    return e;
}

static size_t blk_total(const mc_blk_t *b, int p)
{
    size_t t = 0;
    for (int i = 0; i < p; i++) t += mc_blk_len(b, i);
    return t;
}

/* Hybrid (gatherv, scatterv, alltoallv: the sizes differ between ranks, so no size rule can
 * pick pipe or direct for the whole call): the pipe, except that a block whose two ends both
 * find it large goes straight between the user buffers (CMA, or a pointer into the shared
 * heap) like the direct algorithm's. Both ends know the block's size (the root or the sender
 * from its counts, the other end from its own count), so they agree with no posting round:
 * the owner of the buffer posts it and writes the block's offset into the block's own
 * channel (unused, as the block does not go through it), raises STEP 1 (with the pipe's
 * first slice, or alone when it has no pipe channel), and waits at the end for the DONE of
 * the ranks that went direct; the other end waits for that STEP 1, reads the offset and
 * copies. Sizes: those of the direct algorithms against the pipes (MV_HYBRID_MIN near, where
 * the uniform collectives switch; MV_FAR_DIRECT when the last posting round found every rank
 * far), within the cache (direct_nt, estimated from the block as if every block were that
 * size, which both ends can compute), and for gather below MV_HYBRID_GATHER unless far: at
 * 2 ranks, malloc buffers, same-run ratio over native Open MPI (3 launches, flag exchange
 * 0.10-0.12 us), gatherv's pipe took 0.99-1.15x at 128 KiB, 1.47-1.87x at 256 KiB and
 * 2.29-2.50x at 512 KiB, direct 1.22-1.54x, 1.21-1.33x, 1.26-1.32x (gatherv's slices are
 * larger than gather's, whose pipe has the size as a hint: 1.05-1.31x at 256-512 KiB). */
#define MV_HYBRID_MIN ((size_t)64 << 10)
#define MV_HYBRID_GATHER ((size_t)256 << 10)
static int direct_nt(mc_shm_t *sh, size_t user_bytes);

/* user: the call's user bytes for blocks of len; near, blocks from upper take the pipe
 * (SIZE_MAX: none). hybrid 0: the plain pipe. */
static int hybrid_direct(mc_shm_t *sh, int hybrid, size_t len, size_t user, size_t upper)
{
    if (!hybrid || len < (sh->far_all ? MV_FAR_DIRECT : MV_HYBRID_MIN)) return 0;   /* small: no more */
    return mc_shm_cma_ok(sh) && !direct_nt(sh, user) && (sh->far_all || len < upper);
}

/* The owner's side, after posting its buffer (mc_shm_post waits until the last op's readers
 * are done with the region): a direct block's offset in its channel. */
static void hybrid_offset(char *channel, size_t off) { memcpy(channel, &off, sizeof off); }

/* The other end: once the owner raised STEP 1, where the block lies in its posted buffer. */
static size_t hybrid_wait(mc_shm_t *sh, int owner, const char *channel)
{
    size_t off;
    mc_shm_wait(sh, MC_F_STEP, owner, 1);
    memcpy(&off, channel, sizeof off);
    return off;
}

/* A message that fits the root's STEP payload, inside an op (bcast_direct staging after its
 * posting round; others take bcast_fan): the pipeline's one slice without its bookkeeping.
 * Same copies, same DAV (2n per rank). */
static int bcast_inline(mc_shm_t *sh, const mc_args_t *a)
{
    char *line = inline_buf(sh, a->root, a->count);
    if (sh->r == a->root) {
        mc_shm_quiesce_inline(sh);
        mc_copy_t(line, a->rbuf, a->count);
        mc_shm_set(sh, MC_F_STEP, 1);
    } else {
        mc_shm_wait_step(sh, a->root, 1, a->count);
        mc_copy_t(a->rbuf, line, a->count);
    }
    mc_shm_end(sh);
    /* the root's line of the next op, for a root that stays (MC_RING in shm.h); a root that
     * rotates writes another line next, and this one, polled by nobody, is left unused */
    if (sh->r == a->root) mc_claim(mc_step_line(sh, sh->r, sh->op + 1), MC_LINE);
    return MPI_SUCCESS;
}

/* Up to MC_FAN_MAX bytes a bcast is a fan-out exchange (shm.h, mc_shm_fan_begin): no op,
 * no DONE flag; each reader's publication after its copy tells the root the slot is free.
 * Same copies and DAV as bcast_inline, which a bcast_direct that stages still takes (inside
 * its op). Measured (AMD EPYC VM of family 26, slow state, 2 ranks, Open MPI, 3-4 launches
 * each alternating, STEP line -> fan-out): batches of 100 with roots rotating 8-32 B 0.31 ->
 * 0.19-0.25 us (native 0.43-0.53), 128-256 B 0.35-0.46 -> 0.25-0.31, 512 B-1 KiB alike, 2 KiB
 * 0.61-0.71 -> 0.58-0.60 (with mc_shm_fan_claim_next's payload-only claim; 0.70-0.76 with
 * the flag line claimed too); single calls from a common clock mark 8-512 B alike, 1 KiB
 * 0.87-0.92 -> 0.50-0.65, 2 KiB 1.07-1.30 -> 0.87-1.05 (native 1.79-2.21). */
static int bcast_fan(mc_shm_t *sh, const mc_args_t *a)
{
    size_t n = a->count;
    unsigned char *mine = mc_shm_fan_begin(sh, a->root, 1, n);
    if (sh->r == a->root) mc_copy_t(mine, a->rbuf, n);
    else mc_copy_t(a->rbuf, mc_shm_x_wait(sh, &sh->fan, a->root, n), n);
    mc_shm_x_publish(sh, &sh->fan);
    mc_shm_fan_claim_next(sh, n);
    mc_shm_fan_end(sh);
    return MPI_SUCCESS;
}

/* Only the root writes: its buffers split the whole data area, or, on a crowded node (more
 * ranks than CPUs), up to MV_HALF_MAX one half of it (mc_shm_half, alternating between ops),
 * so the root of the next such bcast need not wait for this one's slowest reader, whom the
 * scheduler may have set aside. Measured (Open MPI, 8 ranks on the 2 cores, batches of 20,
 * roots rotating, same-run ratio over native, 3 launches, one place -> halves): 4-16 KiB
 * 1.53-1.74x -> 2.38-3.21x, 32 KiB 0.90-0.94x -> 1.53-1.64x, 64 KiB 1.14-1.15x -> 1.74-1.83x,
 * 128-256 KiB 1.42-1.92x -> 1.99-2.60x. Not at 2 ranks on 2 cores: with roots rotating the
 * next root is the last op's only reader, nothing to wait for, and alternating the halves
 * alone cost 0.64 -> 0.92 us at 4 KiB, 3.0 -> 3.5 us at 64 KiB. Larger messages keep to one
 * place: beyond the cache their two buffers stay cached while the user data streams. */
#define MV_HALF_MAX ((size_t)256 << 10)
static int bcast_pipe(mc_shm_t *sh, const mc_args_t *a)
{
    int p = sh->p, root = a->root;
    size_t n = a->count, space = floor_line(sh->data_len);
    mv_pipe_t pp;
    mv_out_t out;
    mv_in_t in;
    mc_shm_begin(sh);
    if (n <= MC_STEP_PAYLOAD && n) return bcast_inline(sh, a);
    /* inline sizes returned above; n == 0 copies nothing */
    int half = mc_shm_crowded(sh) && n <= MV_HALF_MAX && n <= space / 2;
    char *buf = half ? mc_shm_half(sh, &space) : sh->data;
    pipe_init(&pp, sh, space, slice_of(floor_line(space / 2), n), n * (size_t)p, 0, 1);
    pp.W += 2 * pp.slice;
    pp.half = half;
    if (sh->r == root) {
        out = (mv_out_t){buf, a->rbuf, n, -1};
        pp.out = &out;
        pp.nout = 1;
    } else {
        in = (mv_in_t){buf, a->rbuf, n, root};
        pp.in = &in;
        pp.nin = 1;
    }
    return pipe_run(&pp);
}

/* An allgather (root < 0) or gather whose blocks fit the STEP payload: the pipeline's one
 * slice without its bookkeeping, as bcast_inline. Same copies, same DAV. */
static int gather_inline(mc_shm_t *sh, const mc_args_t *a, int root)
{
    int p = sh->p, r = sh->r;
    size_t n = a->count;
    char *rbuf = a->rbuf;
    mc_shm_begin(sh);
    if (r != root) {
        mc_shm_quiesce_inline(sh);
        mc_copy_t(inline_buf(sh, r, n), a->sbuf, n);
        mc_shm_set(sh, MC_F_STEP, 1);
    }
    if (root < 0 || r == root) {
        if (a->sbuf != rbuf + (size_t)r * n) mc_copy_t(rbuf + (size_t)r * n, a->sbuf, n);
        for (int j = 1; j < p; j++) {   /* staggered: rank r starts with r + 1 */
            int w = (r + j) % p;
            mc_shm_wait_step(sh, w, 1, n);
            mc_copy_t(rbuf + (size_t)w * n, inline_buf(sh, w, n), n);
        }
    }
    mc_shm_end(sh);
    return MPI_SUCCESS;
}

/* Rank w's block goes through the buffers of its slot, or with its STEP line when it is one
 * slice that fits there. */
static char *ag_buf(mc_shm_t *sh, int w, size_t len, size_t slice)
{
    return len <= MC_STEP_PAYLOAD && len <= slice ? inline_buf(sh, w, len) : mc_shm_slot_of(sh, w);
}

static int allgatherv_pipe(mc_shm_t *sh, const mc_args_t *a, const mc_blk_t *b)
{
    int p = sh->p, r = sh->r;
    size_t mine = mc_blk_len(b, r), longest = 0, total = 0;
    for (int i = 0; i < p; i++) {
        longest = max_sz(longest, mc_blk_len(b, i));
        total += mc_blk_len(b, i);
    }
    mv_pipe_t pp;
    mv_out_t out;
    mv_in_t in[p];
    mc_shm_begin(sh);
    pipe_init(&pp, sh, mc_shm_slot(sh), slice_of(floor_line(mc_shm_slot(sh) / 2), longest), total * (size_t)(p + 1), 0,
              1);
    pp.W += 2 * (size_t)p * pp.slice;
    if (p > 1 && mine) {
        out = (mv_out_t){ag_buf(sh, r, mine, pp.slice), a->sbuf, mine, -1};
        pp.out = &out;
        pp.nout = 1;
    }
    pp.in = in;
    for (int j = 1; j < p; j++) {   /* staggered: rank r starts with r + 1 */
        int w = (r + j) % p;
        size_t len = mc_blk_len(b, w);
        if (len) in[pp.nin++] = (mv_in_t){ag_buf(sh, w, len, pp.slice), (char *)a->rbuf + mc_blk_off(b, w), len, w};
    }
    pipe_local(&pp, a->sbuf, (char *)a->rbuf + mc_blk_off(b, r), mine);
    return pipe_run(&pp);
}

/* Non-roots write their block through their slot; the root reads them all. b is
 * significant at the root only (non-roots know their own count). hybrid: large blocks are
 * written straight into the root's rbuf (hybrid_direct). */
static int gatherv_pipe(mc_shm_t *sh, const mc_args_t *a, const mc_blk_t *b, size_t hint, int hybrid)
{
    int p = sh->p, r = sh->r, root = a->root, rc = MPI_SUCCESS, nd = 0;
    mv_pipe_t pp;
    mv_out_t out;
    mv_in_t in[p];
    int direct[p];
    mc_shm_begin(sh);
    pipe_init(&pp, sh, mc_shm_slot(sh), slice_of(floor_line(mc_shm_slot(sh) / 2), hint), 2 * a->count * (size_t)p, 0,
              hint != 0);
    pp.W += 2 * (size_t)p * pp.slice;
    if (r != root) {
        size_t n = a->count, user = 2 * (size_t)p * n;
        if (hybrid_direct(sh, hybrid, n, user, MV_HYBRID_GATHER)) {
            size_t off = hybrid_wait(sh, root, mc_shm_slot_of(sh, r));
            rc = mc_peer_write_nt(sh, root, 0, off, a->sbuf, n, direct_nt(sh, user));
            mc_shm_end(sh);
            return rc;
        }
        if (n) {
            out = (mv_out_t){ag_buf(sh, r, n, pp.slice), a->sbuf, n, root};
            pp.out = &out;
            pp.nout = 1;
        }
        return pipe_run(&pp);
    }
    pp.in = in;
    for (int j = 1; j < p; j++) {
        int w = (r + j) % p;
        size_t len = mc_blk_len(b, w);
        if (hybrid_direct(sh, hybrid, len, 2 * (size_t)p * len, MV_HYBRID_GATHER)) direct[nd++] = w;
        else if (len) in[pp.nin++] = (mv_in_t){ag_buf(sh, w, len, pp.slice), (char *)a->rbuf + mc_blk_off(b, w), len, w};
    }
    if (nd) {
        mc_shm_post(sh, 0, a->rbuf, blk_extent(b, p));
        for (int i = 0; i < nd; i++) hybrid_offset(mc_shm_slot_of(sh, direct[i]), mc_blk_off(b, direct[i]));
        mc_shm_set(sh, MC_F_STEP, 1);   /* the root writes no channel */
    }
    pipe_local(&pp, a->sbuf, (char *)a->rbuf + mc_blk_off(b, r), a->count);
    pipe_run(&pp);
    for (int i = 0; i < nd; i++) mc_shm_wait(sh, MC_F_DONE, direct[i], MC_STEP_END);
    return rc;
}

/* The root writes rank d's block through d's slot; each rank reads its own. hybrid: large
 * blocks are read straight from the root's sbuf (hybrid_direct). */
static int scatterv_pipe(mc_shm_t *sh, const mc_args_t *a, const mc_blk_t *b, size_t hint, int hybrid)
{
    int p = sh->p, r = sh->r, root = a->root, rc = MPI_SUCCESS, nd = 0;
    mv_pipe_t pp;
    mv_out_t out[p];
    mv_in_t in;
    int direct[p];
    mc_shm_begin(sh);
    pipe_init(&pp, sh, mc_shm_slot(sh), slice_of(floor_line(mc_shm_slot(sh) / 2), hint), 2 * a->count * (size_t)p, 0,
              hint != 0);
    pp.W += 2 * (size_t)p * pp.slice;
    if (r != root) {
        size_t n = a->count;
        if (hybrid_direct(sh, hybrid, n, 0, SIZE_MAX)) {
            size_t off = hybrid_wait(sh, root, mc_shm_slot_of(sh, r));
            rc = mc_peer_read_nt(sh, root, 0, off, a->rbuf, n, direct_nt(sh, 2 * (size_t)p * n));
            mc_shm_end(sh);
            return rc;
        }
        if (n) {
            in = (mv_in_t){mc_shm_slot_of(sh, r), a->rbuf, n, root};
            pp.in = &in;
            pp.nin = 1;
        }
        return pipe_run(&pp);
    }
    pp.out = out;
    for (int j = 1; j < p; j++) {
        int d = (r + j) % p;
        size_t len = mc_blk_len(b, d);
        if (hybrid_direct(sh, hybrid, len, 0, SIZE_MAX)) direct[nd++] = d;
        else if (len) out[pp.nout++] = (mv_out_t){mc_shm_slot_of(sh, d), (const char *)a->sbuf + mc_blk_off(b, d), len, d};
    }
    if (nd) {
        mc_shm_post(sh, 0, a->sbuf, blk_extent(b, p));
        for (int i = 0; i < nd; i++) hybrid_offset(mc_shm_slot_of(sh, direct[i]), mc_blk_off(b, direct[i]));
        if (!pp.nout) mc_shm_set(sh, MC_F_STEP, 1);   /* else with the pipe's first slice */
    }
    pipe_local(&pp, (const char *)a->sbuf + mc_blk_off(b, r), a->rbuf, a->count);
    pipe_run(&pp);
    for (int i = 0; i < nd; i++) mc_shm_wait(sh, MC_F_DONE, direct[i], MC_STEP_END);
    return rc;
}

/* Pair (w, d) owns two buffers at sub-slot w * p + d of the data area. */
static size_t a2a_sub(const mc_shm_t *sh) { return floor_line(sh->data_len / ((size_t)sh->p * (size_t)sh->p)); }

/* hybrid: large blocks are read straight from the sender's sbuf (hybrid_direct), after the
 * pipe's steps (a sender raises STEP 1 before it waits for anything, so no cycle). */
static int alltoallv_pipe(mc_shm_t *sh, const mc_args_t *a, const mc_blk_t *sb, const mc_blk_t *rb,
                          size_t hint, int hybrid)
{
    int p = sh->p, r = sh->r, rc = MPI_SUCCESS, ndo = 0, ndi = 0;
    size_t sub = a2a_sub(sh), total = 0, pp2 = (size_t)p * (size_t)p;
    for (int i = 0; i < p; i++) total += mc_blk_len(sb, i);
    mv_pipe_t pp;
    mv_out_t out[p];
    mv_in_t in[p];
    int dout[p], din[p];
    mc_shm_begin(sh);
    pipe_init(&pp, sh, sub, slice_of(floor_line(sub / 2), hint), 2 * total * (size_t)p, 0, hint != 0);
    pp.W += 2 * pp2 * pp.slice;
    pp.out = out;
    pp.in = in;
    for (int j = 1; j < p; j++) {
        int d = (r + j) % p, w = (r - j + p) % p;   /* writer r - 1 serves r first */
        size_t sl = mc_blk_len(sb, d), rl = mc_blk_len(rb, w);
        char *sch = sh->data + ((size_t)r * (size_t)p + (size_t)d) * sub;
        char *rch = sh->data + ((size_t)w * (size_t)p + (size_t)r) * sub;
        if (hybrid_direct(sh, hybrid, sl, 2 * pp2 * sl, SIZE_MAX)) dout[ndo++] = d;
        else if (sl) out[pp.nout++] = (mv_out_t){sch, (const char *)a->sbuf + mc_blk_off(sb, d), sl, d};
        if (hybrid_direct(sh, hybrid, rl, 2 * pp2 * rl, SIZE_MAX)) din[ndi++] = w;
        else if (rl) in[pp.nin++] = (mv_in_t){rch, (char *)a->rbuf + mc_blk_off(rb, w), rl, w};
    }
    if (ndo) {
        mc_shm_post(sh, 0, a->sbuf, blk_extent(sb, p));
        for (int i = 0; i < ndo; i++)
            hybrid_offset(sh->data + ((size_t)r * (size_t)p + (size_t)dout[i]) * sub, mc_blk_off(sb, dout[i]));
        if (!pp.nout) mc_shm_set(sh, MC_F_STEP, 1);   /* else with the pipe's first slice */
    }
    pipe_local(&pp, (const char *)a->sbuf + mc_blk_off(sb, r), (char *)a->rbuf + mc_blk_off(rb, r),
               mc_blk_len(rb, r));
    pipe_steps(&pp);
    for (int i = 0; i < ndi && rc == MPI_SUCCESS; i++) {
        int w = din[i];
        size_t rl = mc_blk_len(rb, w);
        size_t off = hybrid_wait(sh, w, sh->data + ((size_t)w * (size_t)p + (size_t)r) * sub);
        rc = mc_peer_read_nt(sh, w, 0, off, (char *)a->rbuf + mc_blk_off(rb, w), rl, direct_nt(sh, 2 * pp2 * rl));
    }
    mc_shm_end(sh);
    for (int i = 0; i < ndo; i++) mc_shm_wait(sh, MC_F_DONE, dout[i], MC_STEP_END);
    return rc;
}

/* ================================================================ direct (address posting) */
/* Why a rank would rather stage (direct_open's `stage`, bits): MV_STAGE_PIPE, the call is a
 * pipe that goes direct only on a far node (with zero-copy buffers too: a forced pipe stays
 * one near); MV_STAGE_CMA, CMA's rate loses to the pipe here
 * (ring_stage, direct_nt, gatherv's MV_GATHER_STAGE: measured with buffers of 4 KiB pages),
 * waived when every post moves fast by CMA (transparent huge pages, mc_cma_fast). With
 * MV_POST_LOCAL no peer copies from or into this rank's post by CMA (gather's and scatter's
 * non-roots), so its pages do not matter. Measured at 2 ranks, buffers of huge pages
 * (`mcoll-bench --thp`), 3 launches, same-run ratio over native Open MPI (whose CMA gains as
 * much: bcast 1 MiB 79 -> 41 us), staged against `MCOLL_SHM_PATH=cma`: bcast 2-8 MiB
 * 0.90-1.48x against 1.52-1.97x, allgather 2-4 MiB 0.78-1.17x against 1.00-1.06x, 8 MiB
 * 0.98-1.07x against 1.11-1.32x. */
#define MV_STAGE_PIPE 1
#define MV_STAGE_CMA 2
#define MV_POST_LOCAL 4
/* The pipe this call falls back to may post (the hybrid pipes): a refusal ends the op, where
 * it otherwise hands the op on to the pipe (mc_shm_continue), since a slower rank may still
 * read this op's posts. */
#define MV_POSTS_AGAIN 16
/* The trial (mv_trial) chose to stage: binds (MC_VOTE_STAGE), since the trial timed CMA on
 * these buffers, pages and all; a waiver for huge pages made the trial's staged turns run CMA
 * where malloc returned them (the CI machine's transparent huge pages, `always`). */
#define MV_STAGE_TRIAL 8
#define MV_CMA_PROBE_MIN ((size_t)256 << 10)   /* smaller posts count as slow: no probe */
/* pipe_unless_far of the direct algorithms: 1 falls back to the pipe, this to the hybrid */
#define MV_HYBRID_UNLESS_FAR 2

/* Starts a direct op: posts buf (slot 0) and, when given, a table of p offsets in this
 * rank's data slot (peers look up where their part lies); waits for every rank's post.
 * stage (MV_STAGE_* bits): why this rank would rather stage through the region (see the
 * callers for what was measured). Returns 1 when the op goes ahead (mc_shm_direct_agreed:
 * every post reachable, and no vote to stage unless all is zero copy or, for MV_STAGE_CMA,
 * every post fast by CMA); 0 when not (nothing was read): the caller then runs the pipe
 * instead, which continues the op (mc_shm_continue; unless MV_POSTS_AGAIN: the op ends). */
static int direct_open2(mc_shm_t *sh, mc_coll_t coll, const void *buf, size_t len, const size_t *table,
                        int stage, const void *buf1, size_t len1);
static int direct_open(mc_shm_t *sh, mc_coll_t coll, const void *buf, size_t len, const size_t *table,
                       int stage)
{
    return direct_open2(sh, coll, buf, len, table, stage, NULL, 0);
}

/* The same, also posting buf1 (slot 1) when given: peers may write there. */
static int direct_open2(mc_shm_t *sh, mc_coll_t coll, const void *buf, size_t len, const size_t *table,
                        int stage, const void *buf1, size_t len1)
{
    mc_shm_begin(sh);
    /* the posts are shared data too: a slower rank may still read our previous post (to
     * decide reachability) until it is done with the previous op */
    mc_shm_quiesce(sh);
    if (table) {
        size_t *t = (size_t *)mc_shm_slot_of(sh, sh->r);
        for (int i = 0; i < sh->p; i++) t[i] = table[i];
    }
    mc_shm_post(sh, 0, buf, len);
    if (stage & MV_STAGE_PIPE) mc_shm_vote(sh, 0, MC_VOTE_PIPE);
    if (stage & MV_STAGE_TRIAL) mc_shm_vote(sh, 0, MC_VOTE_STAGE);
    if (stage & MV_STAGE_CMA) {
        mc_shm_vote(sh, 0, MC_VOTE_RING);
        if ((stage & MV_POST_LOCAL) || mc_post(sh, sh->r, 0)->heap_off >= 0 ||
            (len >= MV_CMA_PROBE_MIN && mc_cma_fast(buf, len)))
            mc_shm_vote(sh, 0, MC_VOTE_CMA_FAST);
    } else if (stage & MV_POST_LOCAL) {
        mc_shm_vote(sh, 0, MC_VOTE_CMA_FAST);
    }
    if (buf1) mc_shm_post(sh, 1, buf1, len1);
    mc_trial_publish(sh);
    mc_shm_post_round(sh, coll);
    mc_trial_collect(sh);
    if (mc_shm_direct_agreed(sh, 0)) return 1;
    if (stage & MV_POSTS_AGAIN) mc_shm_end(sh);
    else mc_shm_continue(sh);
    return 0;
}

static size_t peer_table(mc_shm_t *sh, int rank, int i) { return ((const size_t *)mc_shm_slot_of(sh, rank))[i]; }

/* The data movers' trial (shm/trial.c) on ordinary buffers: staged through the pipe (its
 * ring, its own rule for streaming) or CMA. The rules in the direct algorithms below were
 * measured on AMD EPYC VMs (staging near from 512 KiB-2 MiB blocks, CMA far outside the
 * hand-over band, the streamed pipe in it); on an Intel Xeon VM, whose node is always far, CMA
 * won at every size from 64 KiB to 8 MiB and the band's streamed pipes lost most (2 ranks,
 * same-run over native Open MPI, 2 launches each, default against MCOLL_SHM_PATH=cma:
 * allgather and alltoall 64-256 KiB 0.38-0.42x against 1.01-1.11x, gather 64-512 KiB
 * 0.54-0.90x against 1.30-1.63x, scatter 64 KiB-1 MiB 0.55-0.78x against 1.47-1.62x). So the
 * uniform collectives' direct algorithm, asked for as such (not a pipe's far recheck), times
 * both ways from MC_TRIAL_MIN bytes of user buffers (every rank knows the same sizes) and
 * keeps to the faster; MCOLL_SHM_TRIAL=0 and MCOLL_SHM_PATH keep the rules. */
enum { MV_WAY_STAGE, MV_WAY_CMA, MV_WAY_STAGE_T };
static int mv_trials(const mc_shm_t *sh) { return sh->cma && mc_trials_on(); }
/* In the hand-over band (mc_handover_nt) staging has two ways: its pipe streams its copy-ins
 * (MV_WAY_STAGE, the rule's way) or writes them with temporal stores (MV_WAY_STAGE_T). On
 * the same Zen 3 VM in the same near state (line fetch 50-70 ns) streaming had won by
 * 1.1-1.6x (2026-11-26, pipe_steps) and then lost by 1.2-1.9x (2026-11-30, 2 ranks, malloc
 * buffers, default selection, 2 launches each, streamed against temporal: allgather 16-128
 * KiB 3.2-3.5 / 1.8 us at 16 KiB, 8.8-9.9 / 7.0 at 64 KiB; alltoall 64 KiB 5.5-6.0 / 3.9;
 * gather 32 KiB 3.4 / 2.5; scatter 32 KiB 3.3 / 2.4; MPICH runs alike); nothing the node
 * shows tells the two apart, so the trial times both. Every rank computes the same user
 * bytes, so the same ways. */
static int mv_nways(const mc_shm_t *sh, size_t user) { return mc_handover_nt(user, SIZE_MAX, sh->p) ? 3 : 2; }
/* pipe_unless_far: 0 for the direct algorithm (staging is a vote the zero-copy path
 * overrides), MV_STAGE_PIPE for a pipe's call routed here (far_direct: staging is the pipe,
 * whatever the buffers), MV_HYBRID_UNLESS_FAR: no trial. */
static mc_trial_t *mv_trial(mc_shm_t *sh, int site, size_t user, int pipe_unless_far, int *stage)
{
    sh->stage_t = 0;
    if (pipe_unless_far == MV_HYBRID_UNLESS_FAR || !mv_trials(sh)) return NULL;
    mc_trial_t *tr = mc_trial_of(sh, site, user, MC_TRIAL_MIN);
    if (!tr) return NULL;
    int way = mc_trial_way(tr, mv_nways(sh, user)), staged = way != MV_WAY_CMA;
    sh->stage_t = way == MV_WAY_STAGE_T;
    *stage &= ~(MV_STAGE_CMA | MV_STAGE_PIPE);
    if (staged) *stage |= pipe_unless_far ? MV_STAGE_PIPE : MV_STAGE_CMA | MV_STAGE_TRIAL;
    return tr;
}

/* Whether the call takes the direct algorithm's posting round: not a pipe's call that its
 * trial sends down the pipe, except on the calls that share samples (mc_trial_shares). The
 * round cost such a call a flag exchange and an op: 2 ranks, batches of 100 back-to-back
 * calls, same-run over native Open MPI, bcast 16 KiB 1.52-1.55x against 1.87-1.94x as a
 * plain pipe (MCOLL_SHM_TRIAL=0). */
static int mv_round(const mc_shm_t *sh, const mc_trial_t *tr, size_t user, int pipe_unless_far, int stage)
{
    return !tr || pipe_unless_far != MV_STAGE_PIPE || !(stage & MV_STAGE_PIPE) ||
           mc_trial_shares(tr, mv_nways(sh, user));
}

/* After direct_open: when to start the clock; NULL when the direct algorithm found every post
 * zero copy (no way to choose: its staging votes are ignored; a pipe's vote is not, and there
 * the direct way is zero copy). */
static mc_trial_t *mv_trial_start(mc_shm_t *sh, mc_trial_t *tr, int pipe_unless_far, int direct, double *t0)
{
    if (tr && direct && !pipe_unless_far && mc_shm_all_zero_copy(sh, 0)) tr = NULL;
    *t0 = tr ? mc_trial_clock() : 0;
    return tr;
}

/* The staged way this call ran (the pipe read sh->stage_t). */
static int mv_staged(const mc_shm_t *sh) { return sh->stage_t ? MV_WAY_STAGE_T : MV_WAY_STAGE; }

static int mv_trial_end(mc_shm_t *sh, mc_trial_t *tr, int way, double t0, size_t user, int rc)
{
    sh->stage_t = 0;
    if (tr) mc_trial_done(sh, tr, way, mc_trial_clock() - t0, (double)user);
    return rc;
}

/* Ends a direct op; a rank whose post peers used waits until they all finished. */
static int direct_close(mc_shm_t *sh, int posted_used, int rc)
{
    mc_shm_end(sh);
    if (posted_used) mc_shm_wait_all(sh, MC_F_DONE, MC_STEP_END);
    return rc;
}

/* Copies into the user's receive buffers stream when the working set (user_bytes: every
 * rank's buffers the collective touches) exceeds the cache. */
static int direct_nt(mc_shm_t *sh, size_t user_bytes)
{
    return mc_shm_ws(user_bytes, 0) > mc_cache_capacity(sh->p);
}

/* Whether a zero-copy allgather pushes its blocks with streaming stores instead of pulling
 * them: beyond half the cache (allgatherv_direct). */
static int push_nt(mc_shm_t *sh, size_t user_bytes)
{
    return 2 * mc_shm_ws(user_bytes, 0) > mc_cache_capacity(sh->p);
}

/* Near, the pipe with its ring (pipe_init) beats CMA for ordinary buffers from some size:
 * measured at 2 ranks, malloc buffers, 2 launches (flag exchange 0.19-0.22 us), same-run
 * ratio over native Open MPI, ring pipe against the direct algorithm's CMA: allgather
 * 512 KiB-4 MiB 1.24-1.54x against 1.00-1.07x, alltoall 1.27-1.48x against 0.99-1.07x,
 * gather 512 KiB 2.23-2.24x against 1.30-1.31x, scatter 1-16 MiB 1.49-1.92x against
 * 1.28-1.38x (512 KiB 1.19-1.50x against 1.29-1.34x), bcast 2-16 MiB 2.13-2.70x against
 * 1.94-2.16x (1 MiB 1.62x against 1.90x); at 256 KiB allgather, alltoall and gather went
 * either way between launches (0.77-1.22x staged against 1.02x, gather 1.21-1.99x against
 * 1.3x). So a rank votes to stage from these block sizes unless it finds the node far (the
 * pipes collapse there) - only where the call's pipe gets the ring (every rank computes the
 * same working set; not gatherv, scatterv, alltoallv). Buffers all in the shared heap
 * ignore the votes (zero copy). Those pipes copied in with temporal stores; a call in the
 * hand-over band (`user` bytes, mc_handover_nt) streams its copy-ins, and a rank that finds
 * the node far votes to stage there: in the slow state the streamed pipe beat CMA (2 ranks,
 * malloc buffers, 10 launches each, flag exchange 0.36-0.37 us, medians, CMA against the
 * streamed pipe: allgather 64-256 KiB 1.03-1.07x against 1.10-1.23x, gather 0.91-1.17x against
 * 1.46-1.62x, scatter 1.20-1.24x against 1.50-1.67x, alltoall 64-128 KiB 1.04-1.10x against
 * 1.11-1.19x; see far_direct). bcast's pipe did not (128-256 KiB 1.42-1.50x against
 * 1.25-1.33x): it passes user 0, never in the band. */
#define MV_RING_STAGE ((size_t)512 << 10)         /* allgather(v), alltoall, gather */
#define MV_RING_STAGE_SCATTER ((size_t)1 << 20)
#define MV_RING_STAGE_BCAST ((size_t)2 << 20)
static int ring_stage(mc_shm_t *sh, int ring, size_t block, size_t from, size_t user)
{
    if (!ring) return 0;
    return mc_shm_far(sh) ? mc_handover_nt(user, SIZE_MAX, sh->p) : block >= from;
}

/* The own block (user buffer to user buffer), unless in place. */
static void local_copy(mc_shm_t *sh, void *dst, const void *src, size_t n, size_t user_bytes)
{
    if (dst != src && n) mc_copy_adaptive(dst, src, n, 1, mc_shm_ws(user_bytes, 0), mc_cache_capacity(sh->p));
}

/* Part c of p of an n-byte message, boundaries on cache lines (the last part takes the rest). */
static size_t line_part_start(size_t n, int p, int c) { return c >= p ? n : floor_line(n / (size_t)p * (size_t)c); }

/* Every rank copies (p-1)/p of the message instead of the readers copying it all while the
 * root waits: with 2 ranks one core alone cannot draw the node's memory bandwidth. Reader v
 * pulls parts 1..p-1 of its copy from the root's posted buffer, starting with part v so the
 * readers spread over the source; the root pushes part 0 into every reader's posted buffer
 * and raises STEP 2 when done. Copies stream when the p buffers exceed the cache (adaptive
 * copy, paper Algorithm 1). Measured at 2 ranks, heap buffers, 32-64 MiB: on an AMD EPYC (C =
 * 33 MiB) streaming takes 3.6-5.2 ms against 6.4-6.7 ms for glibc's memcpy at 64 MiB; on an
 * earlier machine (C = 109 MiB) glibc's memcpy (rep movsb) had been 15-25% faster than
 * mc_copy_nt at 64 MiB: MCOLL_SHM_CACHE above the working set keeps the copies temporal. */
static int bcast_direct(mc_shm_t *sh, const mc_args_t *a, int pipe_unless_far)
{
    int p = sh->p, root = a->root, rc = MPI_SUCCESS;
    size_t n = a->count;
    int v = mc_vrank(sh->r, root, p), nt = direct_nt(sh, n * (size_t)p);
    /* Equal parts: at 2 ranks with malloc buffers (CMA) a root's part of 0.3, 0.4, 0.6 or 0.7
     * of the message instead of 1/2 took 15-65 % longer at 256 KiB-4 MiB (1 MiB: 48-66 against
     * 40 us, 2 launches each), so the root's CMA writes keep pace with the reader's reads.
     * As allgather, CMA only while the copies stay in the cache: measured at 2 ranks with
     * malloc buffers (time against native MPI in the same run, 3 runs each), CMA 1.2-1.7x
     * against staging's 0.7-1.9x from 256 KiB to 4 MiB; 1.8-2.5x against 1.2-3.4x at 8-16 MiB. */
    int stage = (pipe_unless_far && !mc_shm_far(sh) ? MV_STAGE_PIPE : 0) |
                (nt || ring_stage(sh, 1, n, MV_RING_STAGE_BCAST, 0) ? MV_STAGE_CMA : 0);
    size_t user = n * (size_t)p;
    double t0;
    mc_trial_t *tr = mv_trial(sh, MC_TRIAL_BCAST, user, pipe_unless_far, &stage);
    int direct =
        mv_round(sh, tr, user, pipe_unless_far, stage) && direct_open(sh, a->coll, a->rbuf, n, NULL, stage);
    tr = mv_trial_start(sh, tr, pipe_unless_far, direct, &t0);
    if (!direct) return mv_trial_end(sh, tr, mv_staged(sh), t0, user, bcast_pipe(sh, a));
    if (v == 0) {
        size_t len = line_part_start(n, p, 1);
        for (int i = 1; i < p && rc == MPI_SUCCESS; i++)
            if (len) rc = mc_peer_write_nt(sh, (root + i) % p, 0, 0, a->rbuf, len, nt);
        mc_shm_set(sh, MC_F_STEP, 2);   /* even after an error: readers must not hang */
    } else {
        for (int i = 0; i < p - 1 && rc == MPI_SUCCESS; i++) {
            int c = 1 + (v - 1 + i) % (p - 1);
            size_t off = line_part_start(n, p, c), len = line_part_start(n, p, c + 1) - off;
            if (len) rc = mc_peer_read_nt(sh, root, 0, off, (char *)a->rbuf + off, len, nt);
        }
        mc_shm_wait(sh, MC_F_STEP, root, 2);   /* part 0 is in; the root is done with my post */
    }
    return mv_trial_end(sh, tr, MV_WAY_CMA, t0, user, direct_close(sh, v == 0, rc));
}

/* Push: this rank's block goes to every rank's rbuf (its own first), sub-block by sub-block so
 * the source is read from memory once and the other copies find it in cache; streaming stores
 * when nt, else temporal. Ranks without a local pointer get their copy by CMA. Where the block
 * goes in rank k's rbuf is k's displacement (allgatherv: each rank has its own, posted as its
 * table). */
#define MV_PUSH_BLOCK ((size_t)64 << 10)
static int allgatherv_push(mc_shm_t *sh, const mc_args_t *a, const mc_blk_t *b, int nt)
{
    int p = sh->p, r = sh->r, rc = MPI_SUCCESS;
    size_t mine = mc_blk_len(b, r);
    for (size_t o = 0; o < mine && rc == MPI_SUCCESS; o += MV_PUSH_BLOCK) {
        size_t len = min_sz(MV_PUSH_BLOCK, mine - o);
        const char *src = (const char *)a->sbuf + o;
        for (int j = 0; j < p && rc == MPI_SUCCESS; j++) {
            int k = (r + j) % p;
            size_t at = b->cnt ? peer_table(sh, k, r) : mc_blk_off(b, r);
            rc = mc_peer_write_nt(sh, k, 1, at + o, src, len, nt);   /* own block in place: nothing */
        }
    }
    mc_shm_set(sh, MC_F_STEP, 2);
    mc_shm_wait_all(sh, MC_F_STEP, 2);   /* every block is in my rbuf */
    return direct_close(sh, 1, rc);
}

/* The zero-copy allgather(v)'s trial up to the cache (W <= C): pull (temporal copies from the
 * peers' blocks), push streamed (this rank's block into every rank's rbuf) or push with
 * temporal stores. The rules push streamed where a rank found the node far (on the AMD VM's
 * far state pushing won 6-10x; on an Intel Xeon VM, always far, it lost 2-3x: 2 ranks, heap
 * buffers, same-run over native Open MPI, 64-256 KiB blocks push 0.74-1.01x, pull
 * 1.51-1.69x) and from W > C/2 (push_nt). Temporal pushes lost there once (4 MiB blocks
 * 1.48-1.94x native against 2.29-2.91x streamed, 2026-11-26) and won in another state of the
 * same VM kind (2026-12-03, 2 ranks, heap buffers, mcoll-bench --order block, 3 launches
 * each alternating, pull and streamed push against the three ways: Open MPI 1 MiB 49-55 ->
 * 35-37 us, 2 MiB 88-113 -> 72-84, 3 MiB 217-292 -> 158-163 (beyond C/2 before: no trial);
 * MPICH 1 MiB 54 -> 37). Beyond the cache the rule streams: a trial there only cost the
 * short runs their tries of a slower way (64 MiB blocks, a few calls per size: 1.62-1.64x
 * native against 2.09x). Every rank sees the same posts, so the same zero copy. Not while
 * another trial times the call (a pipe's call routed here: its direct way keeps the rule). */
enum { ZC_WAY_PULL, ZC_WAY_PUSH, ZC_WAY_PUSH_T, ZC_WAYS };
static mc_trial_t *zc_trial(mc_shm_t *sh, const mc_trial_t *outer, size_t user)
{
    if (outer || !mc_trials_on() || !mc_shm_all_zero_copy(sh, 0) || direct_nt(sh, user)) return NULL;
    return mc_trial_of(sh, MC_TRIAL_ZC_ALLGATHER, user, MC_TRIAL_MIN);
}

static int allgatherv_direct(mc_shm_t *sh, const mc_args_t *a, const mc_blk_t *b, int pipe_unless_far)
{
    int p = sh->p, r = sh->r, rc = MPI_SUCCESS;
    /* from the counts, which every rank has alike (displacements may differ between ranks) */
    size_t mine = mc_blk_len(b, r), total = blk_total(b, p), user = total * (size_t)(p + 1);
    int nt = direct_nt(sh, user);
    int stage = (pipe_unless_far && !mc_shm_far(sh) ? MV_STAGE_PIPE : 0) |
                (nt || ring_stage(sh, 1, total / (size_t)p, MV_RING_STAGE, user) ? MV_STAGE_CMA : 0);
    /* Streaming (above the cache), pushing reads every block once instead of p times; below,
     * pulling leaves each block in the cache of the rank that reads it. CMA reads lose to
     * staging once the copies stream: measured at 2 ranks with malloc buffers (time against
     * native MPI in the same run, 3 runs each), both 0.93-1.18x up to 4 MiB per rank; at
     * 8-16 MiB staging 1.4-2.1x, CMA 1.0x.
     * On a far node (any rank's vote) zero-copy blocks are pushed below the cache too: a pull
     * fetches the peer's block from the peer's cache, which the far state makes slow, while a
     * push reads its own block and streams it. Measured at 2 ranks, heap buffers, launches
     * alternating with MCOLL_SHM_FAR_NS=0 (pull), slow state (flag exchange 0.35-0.37 us):
     * MPICH runs, pull 75-183 us at 256-512 KiB blocks and 280-310 at 1 MiB (1.0-1.6x
     * native), push 15-28 and 51-55 us (6-10x); Open MPI runs, whose native and pull find the
     * peer's unchanged block still cached from the previous call, pull 12-46 us at 256 KiB-
     * 1 MiB (2.3-2.5x), push 18-58 (2.0-2.5x). Near, both 22-26 us at 256 KiB.
     * Without trials zero-copy blocks are pushed from half the cache (push_nt): a pull reads every
     * foreign block from the other core's cache and allocates the receive buffer in its own,
     * so the call's lines cross the cores on top of the working set the paper's W counts.
     * Measured at 2 ranks, heap buffers, 6 launches each, same-run ratio over native Open MPI:
     * 4 MiB blocks (W = 24 MiB, C = 34 MiB) pull 1.80-1.94x (one launch 2.82x), push
     * 2.29-2.91x; 512 KiB-2 MiB and 8 MiB the same either way. Plain copies (every rank
     * copying S bytes at once, again and again, temporal against streaming) switch at W =
     * 32 MiB here: the formula's C holds for them, not for the pull. */
    double t0;
    mc_trial_t *tr = a->coll == MC_ALLGATHER ? mv_trial(sh, MC_TRIAL_ALLGATHER, user, pipe_unless_far, &stage) : NULL;
    int direct =
        mv_round(sh, tr, user, pipe_unless_far, stage) &&
        direct_open2(sh, a->coll, a->sbuf, mine, b->cnt ? b->dsp : NULL, stage, a->rbuf, blk_extent(b, p));
    tr = mv_trial_start(sh, tr, pipe_unless_far, direct, &t0);
    if (!direct) return mv_trial_end(sh, tr, mv_staged(sh), t0, user, allgatherv_pipe(sh, a, b));
    int way = MV_WAY_CMA;
    if (mc_shm_all_zero_copy(sh, 1)) {
        mc_trial_t *zt = zc_trial(sh, tr, user);
        int zw = zt ? mc_trial_way(zt, ZC_WAYS)
                    : push_nt(sh, user) || mc_shm_voted(sh, 0, MC_VOTE_FAR) ? ZC_WAY_PUSH : ZC_WAY_PULL;
        if (zt) tr = zt, way = zw, t0 = mc_trial_clock();
        if (zw != ZC_WAY_PULL) return mv_trial_end(sh, tr, way, t0, user, allgatherv_push(sh, a, b, zw == ZC_WAY_PUSH));
    }
    for (int j = 1; j < p && rc == MPI_SUCCESS; j++) {
        int w = (r + j) % p;
        size_t len = mc_blk_len(b, w);
        if (len) rc = mc_peer_read_nt(sh, w, 0, 0, (char *)a->rbuf + mc_blk_off(b, w), len, nt);
    }
    local_copy(sh, (char *)a->rbuf + mc_blk_off(b, r), a->sbuf, mine, user);
    return mv_trial_end(sh, tr, way, t0, user, direct_close(sh, 1, rc));
}

/* The root posts rbuf (and for gatherv its displacements); every rank writes its block into
 * it. b is significant at the root only. */
#define MV_GATHER_STAGE ((size_t)1 << 20) /* near, ordinary buffers: stage blocks from this size */
static int gatherv_direct(mc_shm_t *sh, const mc_args_t *a, const mc_blk_t *b, size_t hint, int pipe_unless_far)
{
    int p = sh->p, r = sh->r, root = a->root, rc = MPI_SUCCESS;
    int is_root = r == root, v = a->coll == MC_GATHERV;   /* b->cnt is NULL off the root */
    const size_t *table = is_root && v ? b->dsp : NULL;
    /* Through CMA every block is a CMA write into the root's rbuf: measured at 2 ranks with
     * malloc buffers (time against native MPI in the same run, 3 runs each), staging 1.2-1.3x
     * against CMA's 1.1-1.2x at 64-256 KiB, 1.1-1.3x against 1.3-1.4x at 512 KiB-2 MiB,
     * 1.4-2.5x against 1.0-1.4x at 4-16 MiB (an earlier VM). On this one (AMD EPYC, launches
     * alternating staged / `MCOLL_SHM_PATH=cma`, same-run ratio over native Open MPI, medians)
     * the intermediate state, the common one in MPI runs, has staging at 0.90-1.06x against
     * CMA's 1.07-1.31x at 64-512 KiB (with --dirty 0.94-1.27x against 1.24-1.38x) and
     * 1.75-2.00x against 1.29-1.44x at 1-4 MiB; the slow state (far) 0.23-0.47x against
     * 0.96-1.58x at 16 KiB-4 MiB. So a rank votes to stage from MV_GATHER_STAGE unless it
     * finds the node far, and always when the copies would stream; gather (uniform, its pipe
     * with the ring) from MV_RING_STAGE already (ring_stage). */
    int stage = (pipe_unless_far && !mc_shm_far(sh) ? MV_STAGE_PIPE : 0) |
                (direct_nt(sh, 2 * (size_t)p * a->count) || (!mc_shm_far(sh) && a->count >= MV_GATHER_STAGE) ||
                         ring_stage(sh, !v, a->count, MV_RING_STAGE, 2 * (size_t)p * a->count)
                     ? MV_STAGE_CMA
                     : 0);
    size_t user = 2 * (size_t)p * a->count;
    double t0;
    mc_trial_t *tr = !v ? mv_trial(sh, MC_TRIAL_GATHER, user, pipe_unless_far, &stage) : NULL;
    if ((stage & MV_STAGE_CMA) && !is_root) stage |= MV_POST_LOCAL;   /* the root never reads my post */
    if (pipe_unless_far == MV_HYBRID_UNLESS_FAR) stage |= MV_POSTS_AGAIN;
    int direct = mv_round(sh, tr, user, pipe_unless_far, stage) &&
                 direct_open(sh, a->coll, is_root ? a->rbuf : a->sbuf, is_root ? blk_extent(b, p) : a->count,
                             table, stage);
    tr = mv_trial_start(sh, tr, pipe_unless_far, direct, &t0);
    if (!direct)
        return mv_trial_end(sh, tr, mv_staged(sh), t0, user,
                            gatherv_pipe(sh, a, b, hint, pipe_unless_far == MV_HYBRID_UNLESS_FAR));
    if (!is_root) {
        size_t off = v ? peer_table(sh, root, r) : (size_t)r * b->count;
        /* the root's rbuf and every rank's block (b is the root's: estimate from ours) */
        if (a->count) rc = mc_peer_write_nt(sh, root, 0, off, a->sbuf, a->count, direct_nt(sh, 2 * (size_t)p * a->count));
    } else {
        local_copy(sh, (char *)a->rbuf + mc_blk_off(b, r), a->sbuf, a->count, 2 * blk_extent(b, p));
    }
    return mv_trial_end(sh, tr, MV_WAY_CMA, t0, user, direct_close(sh, is_root, rc));
}

/* The root posts sbuf (and for scatterv its displacements); every rank reads its block. */
static int scatterv_direct(mc_shm_t *sh, const mc_args_t *a, const mc_blk_t *b, size_t hint, int pipe_unless_far)
{
    int p = sh->p, r = sh->r, root = a->root, rc = MPI_SUCCESS;
    int is_root = r == root, v = a->coll == MC_SCATTERV;  /* b->cnt is NULL off the root */
    const size_t *table = is_root && v ? b->dsp : NULL;
    /* CMA reads from the root's sbuf all at once, while the pipe serializes the blocks through
     * the root: measured at 2 ranks with malloc buffers, CMA is 1.2-1.4x faster at 256 KiB-16 MiB. */
    int stage = (pipe_unless_far && !mc_shm_far(sh) ? MV_STAGE_PIPE : 0) |
                (ring_stage(sh, !v, a->count, MV_RING_STAGE_SCATTER, 2 * (size_t)p * a->count) ? MV_STAGE_CMA : 0) | (is_root ? 0 : MV_POST_LOCAL);
    size_t user = 2 * (size_t)p * a->count;
    double t0;
    mc_trial_t *tr = !v ? mv_trial(sh, MC_TRIAL_SCATTER, user, pipe_unless_far, &stage) : NULL;
    if (pipe_unless_far == MV_HYBRID_UNLESS_FAR) stage |= MV_POSTS_AGAIN;
    int direct = mv_round(sh, tr, user, pipe_unless_far, stage) &&
                 direct_open(sh, a->coll, is_root ? a->sbuf : a->rbuf, is_root ? blk_extent(b, p) : a->count,
                             table, stage);
    tr = mv_trial_start(sh, tr, pipe_unless_far, direct, &t0);
    if (!direct)
        return mv_trial_end(sh, tr, mv_staged(sh), t0, user,
                            scatterv_pipe(sh, a, b, hint, pipe_unless_far == MV_HYBRID_UNLESS_FAR));
    if (!is_root) {
        size_t off = v ? peer_table(sh, root, r) : (size_t)r * b->count;
        if (a->count) rc = mc_peer_read_nt(sh, root, 0, off, a->rbuf, a->count, direct_nt(sh, 2 * (size_t)p * a->count));
    } else {
        local_copy(sh, a->rbuf, (const char *)a->sbuf + mc_blk_off(b, r), a->count, 2 * blk_extent(b, p));
    }
    return mv_trial_end(sh, tr, MV_WAY_CMA, t0, user, direct_close(sh, is_root, rc));
}

/* Read-based: every rank posts sbuf (and for alltoallv its send displacements) and reads
 * its block from every peer, starting with r + 1. */
static int alltoallv_direct(mc_shm_t *sh, const mc_args_t *a, const mc_blk_t *sb, const mc_blk_t *rb,
                            size_t hint, int pipe_unless_far)
{
    int p = sh->p, r = sh->r, rc = MPI_SUCCESS;
    size_t user = (blk_extent(sb, p) + blk_extent(rb, p)) * (size_t)p;
    int nt = direct_nt(sh, user);
    int stage = (pipe_unless_far && !mc_shm_far(sh) ? MV_STAGE_PIPE : 0) |
                (nt || ring_stage(sh, hint != 0, hint, MV_RING_STAGE, user) ? MV_STAGE_CMA : 0);
    /* As allgather: measured the same way, both 0.91-1.19x while the copies stay in the
     * cache; at 8-16 MiB per block staging 1.1-1.8x, CMA 1.0x. nt is this rank's view
     * (alltoallv blocks differ); the votes combine them. */
    double t0;
    mc_trial_t *tr = a->coll == MC_ALLTOALL ? mv_trial(sh, MC_TRIAL_ALLTOALL, user, pipe_unless_far, &stage) : NULL;
    if (pipe_unless_far == MV_HYBRID_UNLESS_FAR) stage |= MV_POSTS_AGAIN;
    int direct = mv_round(sh, tr, user, pipe_unless_far, stage) &&
                 direct_open(sh, a->coll, a->sbuf, blk_extent(sb, p), sb->cnt ? sb->dsp : NULL, stage);
    tr = mv_trial_start(sh, tr, pipe_unless_far, direct, &t0);
    if (!direct)
        return mv_trial_end(sh, tr, mv_staged(sh), t0, user,
                            alltoallv_pipe(sh, a, sb, rb, hint, pipe_unless_far == MV_HYBRID_UNLESS_FAR));
    for (int j = 1; j < p && rc == MPI_SUCCESS; j++) {
        int w = (r + j) % p;
        size_t len = mc_blk_len(rb, w);
        size_t off = sb->cnt ? peer_table(sh, w, r) : (size_t)r * sb->count;
        if (len) rc = mc_peer_read_nt(sh, w, 0, off, (char *)a->rbuf + mc_blk_off(rb, w), len, nt);
    }
    local_copy(sh, (char *)a->rbuf + mc_blk_off(rb, r), (const char *)a->sbuf + mc_blk_off(sb, r),
               mc_blk_len(rb, r), user);
    return mv_trial_end(sh, tr, MV_WAY_CMA, t0, user, direct_close(sh, 1, rc));
}

/* ================================================================ entry points */
/* On a far node (latency.c) the pipes lose to CMA from MV_FAR_DIRECT bytes per rank: each
 * slice crosses between the cores through lines the other core just read or wrote, and the
 * far state makes every such line slow, streamed or not. Measured at 2 ranks, malloc
 * buffers, 40 pairs of launches (`--alg shm_pipe,shm_direct`, with and without --dirty),
 * same-run ratio over native Open MPI, pipe against direct (CMA), medians:
 * slow state (flag exchange 0.36-0.49 us, 8-9 launches) bcast 8 KiB 0.87-1.02x against
 * 1.05-1.07x, 16-128 KiB 0.22-0.56x against 1.13-1.33x, allgather 16-128 KiB 0.22-0.76x
 * against 1.03-1.15x; intermediate state (0.12-0.27 us, 30 launches) bcast 16 KiB 1.41x
 * against 1.19x, allgather 16 KiB 1.44-1.54x against 1.08x (the pipes keep these sizes when
 * near). The same at 16-32 KiB for the others (8 launches, `--alg shm_direct` with
 * MCOLL_SHM_PATH=copy against =cma; slow state): gather 0.34-0.47x against 1.07-1.08x,
 * scatter 0.35-0.49x against 1.29x, alltoall 0.36-0.53x against 1.15-1.19x. So a pipe op of
 * that size (CMA available; a size every rank knows: not gatherv, scatterv, alltoallv)
 * starts with the posting round of the direct algorithm when the last round found every
 * rank far, and every MV_FAR_RECHECK-th such call otherwise (the distance changes while a
 * program runs, and the round is how the ranks agree; counted per region, not by op number,
 * so that calls interleaved with other ops still come round): every rank votes to stage
 * unless it finds the node far, so the op runs direct only when all do, and the pipe
 * otherwise. Those losing pipes copied in with temporal stores; a call in the hand-over
 * band (mc_handover_nt: the call's user bytes between the ranks' L1s and L2s) streams its
 * copy-ins, and there the pipe beats CMA in the slow state too (2 ranks, malloc buffers,
 * forced far, 10 launches each all slow, flag exchange 0.36-0.37 us, medians, direct
 * against the streamed pipe: allgather 16-256 KiB 1.03-1.12x against 1.10-2.16x, gather
 * 1.08-1.17x against 1.46-1.79x, scatter 1.23-1.26x against 1.50-1.92x, alltoall 16-128 KiB
 * 1.06-1.17x against 1.11-2.09x, bcast 32-64 KiB 1.14-1.29x against 1.47-1.61x but 128-256
 * KiB 1.42-1.50x against 1.25-1.33x); above the band the streamed pipe fell to 0.18-0.26x
 * (allgather, gather, scatter from 512 KiB, alltoall from 256 KiB, bcast from 1 MiB: 2 MiB
 * of user buffers and more) and below it (bcast 16 KiB) to 0.51x. So a call in the band
 * keeps its pipe on a far node; every rank computes the same user bytes. */
#define MV_FAR_RECHECK 64
/* With trials, scatter's and gather's pipes take the trial from MV_TRIAL_ROOTED bytes per
 * rank (the others from MV_FAR_DIRECT). On the Intel Xeon VM (2 ranks, malloc buffers,
 * same-run over native Open MPI, 2 launches each alternating, trial from 16 KiB against from
 * 8 KiB), 8 KiB blocks: batches of 100 scatter 0.79-0.83x -> 1.01-1.04x, gather 0.97-0.98x ->
 * 1.17-1.29x; single calls (4 launches) scatter 0.83-1.15x -> 1.12-1.18x, gather 0.87-1.12x
 * -> 1.09-1.26x. allgather and alltoall gained in batches (1.11-1.15x -> 1.14-1.23x) but
 * lost in single calls (1.26-1.32x -> 1.07-1.16x: their pipe 1.29-1.32x, CMA 1.18-1.22x, the
 * bursts and sharing rounds of the trial the rest), so they keep MV_FAR_DIRECT. */
#define MV_TRIAL_ROOTED ((size_t)8 << 10)
__attribute__((noinline)) static int far_direct_rule(mc_shm_t *sh, size_t per_rank, size_t user, size_t trial_from)
{
    int trials = mv_trials(sh) && user >= MC_TRIAL_MIN;
    if (per_rank < (trials ? trial_from : MV_FAR_DIRECT) || !mc_shm_cma_ok(sh)) return 0;
    /* With trials (mv_trial) every such call takes the direct algorithm's posting round and
     * its trial chooses between the pipe and CMA: the band's streamed pipe won on the AMD VM
     * above and lost to CMA on an Intel one, where the node's distance, sampled only by these
     * rounds, also flickered around the threshold (2 ranks, same-run over native Open MPI:
     * allgather and alltoall 32 KiB 0.57-0.62x as pipes, 1.05-1.16x by CMA). */
    if (trials) return 1;
    if (mc_handover_nt(user, SIZE_MAX, sh->p)) return 0;
    return sh->far_all || ++sh->far_calls % MV_FAR_RECHECK == 0;
}

/* The size test first, inline: calls below both sizes (most small ones) never go direct, and
 * asking far_direct_rule cost an 8-byte bcast with the root alternating 278 instructions per
 * call outside its waits, against 234 now (callgrind). */
static inline int far_direct(mc_shm_t *sh, size_t per_rank, size_t user, size_t trial_from)
{
    return (per_rank >= trial_from || per_rank >= MV_FAR_DIRECT) && far_direct_rule(sh, per_rank, user, trial_from);
}

/* shm_hybrid's gatherv, scatterv and alltoallv send their blocks direct from MV_FAR_DIRECT
 * bytes when the last posting round found every rank far (sh->far_all, hybrid_direct), but
 * make no round themselves, so a program of such calls alone never saw the node change
 * (slow state, 2 ranks, scatterv and alltoallv of 16-32 KiB blocks: 0.34-0.55x native).
 * Their sizes differ between ranks, so the count of such calls decides (the same on every
 * rank): every MV_FAR_RECHECK-th starts with the direct algorithm's posting round, whose
 * votes refresh far_all, and runs direct only when every rank finds the node far, the hybrid
 * otherwise. 10 launches each alternating, same-run ratio over native Open MPI: slow launches
 * 0.34-0.55x -> 1.11-1.26x; the others alike (32 KiB 0.85-1.27x either way). */
static int far_recheck_v(mc_shm_t *sh)
{
    return mc_shm_cma_ok(sh) && ++sh->far_vcalls % MV_FAR_RECHECK == 0;
}

int mc_mv_bcast(mc_ctx_t *ctx, const mc_args_t *a, int how)
{
    mc_shm_t *sh;
    int rc;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    if (sh->p == 1 || a->count == 0) return MPI_SUCCESS;   /* every rank knows both */
    if (how == MC_MV_DIRECT) return bcast_direct(sh, a, 0);
    if (a->count <= MC_FAN_MAX) return bcast_fan(sh, a);
    return far_direct(sh, a->count, a->count * (size_t)sh->p, MV_FAR_DIRECT) ? bcast_direct(sh, a, 1) : bcast_pipe(sh, a);
}

int mc_mv_allgatherv(mc_ctx_t *ctx, const mc_args_t *a, int how)
{
    mc_shm_t *sh;
    int rc;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    int uniform = a->coll == MC_ALLGATHER;
    mc_blk_t b = {uniform ? NULL : a->counts, uniform ? NULL : a->displs, a->count};
    if (uniform && a->count == 0) return MPI_SUCCESS;
    if (how == MC_MV_DIRECT) return allgatherv_direct(sh, a, &b, 0);
    if (uniform && sh->p > 1 && a->count <= MC_STEP_PAYLOAD) return gather_inline(sh, a, -1);
    size_t total = blk_total(&b, sh->p);
    return far_direct(sh, total / (size_t)sh->p, total * (size_t)(sh->p + 1), MV_FAR_DIRECT) ? allgatherv_direct(sh, a, &b, 1)
                                                                             : allgatherv_pipe(sh, a, &b);
}

int mc_mv_gatherv(mc_ctx_t *ctx, const mc_args_t *a, int how)
{
    mc_shm_t *sh;
    int rc;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    int uniform = a->coll == MC_GATHER;
    mc_blk_t b = {uniform ? NULL : a->counts, uniform ? NULL : a->displs, a->count};
    if (uniform && a->count == 0) return MPI_SUCCESS;
    size_t hint = uniform ? a->count : 0;
    if (how == MC_MV_DIRECT || (uniform && far_direct(sh, a->count, 2 * a->count * (size_t)sh->p, MV_TRIAL_ROOTED))) return gatherv_direct(sh, a, &b, hint, 0);
    if (uniform && sh->p > 1 && a->count <= MC_STEP_PAYLOAD) return gather_inline(sh, a, a->root);
    if (how == MC_MV_HYBRID && !uniform && far_recheck_v(sh)) return gatherv_direct(sh, a, &b, hint, MV_HYBRID_UNLESS_FAR);
    return gatherv_pipe(sh, a, &b, hint, how == MC_MV_HYBRID);
}

int mc_mv_scatterv(mc_ctx_t *ctx, const mc_args_t *a, int how)
{
    mc_shm_t *sh;
    int rc;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    int uniform = a->coll == MC_SCATTER;
    mc_blk_t b = {uniform ? NULL : a->counts, uniform ? NULL : a->displs, a->count};
    if (uniform && a->count == 0) return MPI_SUCCESS;
    size_t hint = uniform ? a->count : 0;
    if (how == MC_MV_DIRECT) return scatterv_direct(sh, a, &b, hint, 0);
    if (how == MC_MV_HYBRID && !uniform && far_recheck_v(sh)) return scatterv_direct(sh, a, &b, hint, MV_HYBRID_UNLESS_FAR);
    return uniform && far_direct(sh, a->count, 2 * a->count * (size_t)sh->p, MV_TRIAL_ROOTED) ? scatterv_direct(sh, a, &b, hint, 1) : scatterv_pipe(sh, a, &b, hint, how == MC_MV_HYBRID);
}

int mc_mv_alltoallv(mc_ctx_t *ctx, const mc_args_t *a, int how)
{
    mc_shm_t *sh;
    int rc;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    int uniform = a->coll == MC_ALLTOALL;
    mc_blk_t sb = {uniform ? NULL : a->scounts, uniform ? NULL : a->sdispls, a->count};
    mc_blk_t rb = {uniform ? NULL : a->counts, uniform ? NULL : a->displs, a->count};
    if (uniform && a->count == 0) return MPI_SUCCESS;
    size_t hint = uniform ? a->count : 0;
    if (how == MC_MV_DIRECT) return alltoallv_direct(sh, a, &sb, &rb, hint, 0);
    if (how == MC_MV_HYBRID && !uniform && far_recheck_v(sh))
        return alltoallv_direct(sh, a, &sb, &rb, hint, MV_HYBRID_UNLESS_FAR);
    return uniform && far_direct(sh, a->count, 2 * a->count * (size_t)sh->p * (size_t)sh->p, MV_FAR_DIRECT) ? alltoallv_direct(sh, a, &sb, &rb, hint, 1)
                                               : alltoallv_pipe(sh, a, &sb, &rb, hint, how == MC_MV_HYBRID);
}

/* ================================================================ applicability */
/* The data area the region will have (region.c rounds MCOLL_SHM_SIZE up to pages). */
static size_t data_len_cfg(void)
{
    long s = mc_cfg()->shm_size;
    size_t n = s > 0 ? (size_t)s : (size_t)1 << 20;
    return (n + 4095) / 4096 * 4096;
}

int mc_mv_ok(const mc_ctx_t *ctx, const mc_args_t *a)
{
    if (!mc_shm_alg_ok(ctx, a)) return 0;
    size_t p = (size_t)ctx->size, slot = floor_line(data_len_cfg() / p);
    return slot >= 2 * MC_LINE && slot >= p * sizeof(size_t);
}

int mc_mv_ok_a2a(const mc_ctx_t *ctx, const mc_args_t *a)
{
    size_t p = (size_t)ctx->size;
    return mc_mv_ok(ctx, a) && floor_line(data_len_cfg() / (p * p)) >= 2 * MC_LINE;
}

/* ================================================================ models */
/* bcast pipe: root copy-in 2m + (p - 1) copy-outs 2m (none at p = 1). */
double mc_mv_dav_bcast_pipe(const mc_cost_in_t *in) { return in->p > 1 ? 2.0 * in->p * in->m : 0; }
/* bcast direct: each of the p - 1 readers copies m from the root's buffer. */
double mc_mv_dav_bcast_direct(const mc_cost_in_t *in) { return 2.0 * (in->p - 1) * in->m; }
/* allgather pipe: p copy-ins, p (p - 1) copy-outs, and p own blocks copied sbuf -> rbuf
 * directly (0 in place); p = 1 only copies its own block. */
double mc_mv_dav_allgather_pipe(const mc_cost_in_t *in)
{
    return in->p > 1 ? 2.0 * in->p * (in->p + 1) * in->m : 2.0 * in->m;
}
/* allgather direct: every rank reads p - 1 blocks and copies its own. */
double mc_mv_dav_allgather_direct(const mc_cost_in_t *in) { return 2.0 * in->p * in->p * in->m; }
/* gather/scatter pipe: p - 1 blocks in and out of the region, plus the root's own block. */
double mc_mv_dav_rooted_pipe(const mc_cost_in_t *in) { return 2.0 * (2 * in->p - 1) * in->m; }
/* gather/scatter direct: p - 1 blocks straight between user buffers, plus the root's own. */
double mc_mv_dav_rooted_direct(const mc_cost_in_t *in) { return 2.0 * in->p * in->m; }
/* alltoall pipe: every rank moves p - 1 blocks in, p - 1 out and its own (m = one block). */
double mc_mv_dav_alltoall_pipe(const mc_cost_in_t *in) { return 2.0 * in->p * (2 * in->p - 1) * in->m; }
double mc_mv_dav_alltoall_direct(const mc_cost_in_t *in) { return 2.0 * in->p * in->p * in->m; }
/* alltoallv: m = all bytes a rank sends (p blocks). */
double mc_mv_dav_alltoallv_pipe(const mc_cost_in_t *in) { return 2.0 * (2 * in->p - 1) * in->m; }
double mc_mv_dav_alltoallv_direct(const mc_cost_in_t *in) { return 2.0 * in->p * in->m; }
/* hybrid: which of the two a block of m bytes takes (hybrid_direct, near, within the cache;
 * never without CMA, heap buffers included) */
static int hybrid_goes_direct(const mc_cost_in_t *in, double m, double upper)
{
    return !in->nocma && m >= (double)MV_HYBRID_MIN && m < upper;
}
double mc_mv_dav_gather_hybrid(const mc_cost_in_t *in)
{
    return hybrid_goes_direct(in, in->m, (double)MV_HYBRID_GATHER) ? mc_mv_dav_rooted_direct(in) : mc_mv_dav_rooted_pipe(in);
}
double mc_mv_dav_scatter_hybrid(const mc_cost_in_t *in)
{
    return hybrid_goes_direct(in, in->m, HUGE_VAL) ? mc_mv_dav_rooted_direct(in) : mc_mv_dav_rooted_pipe(in);
}
double mc_mv_dav_alltoallv_hybrid(const mc_cost_in_t *in)
{
    double blk = in->p > 0 ? in->m / in->p : in->m;
    return hybrid_goes_direct(in, blk, HUGE_VAL) ? mc_mv_dav_alltoallv_direct(in) : mc_mv_dav_alltoallv_pipe(in);
}

/* Hockney .cost of the shared-memory algorithms: alpha per flag round, beta per byte of
 * data-access volume (a copied byte is a load and a store: 2 beta), in->xmap per single copy
 * from another address space (CMA; 0 in the shared heap) on the critical path and
 * in->xmap_b per byte it moves (a plain copy's 2 beta when 0). */
static double xcopy(const mc_hockney_t *h, const mc_cost_in_t *in, int copies, double bytes)
{
    return copies * in->xmap + bytes * (in->xmap_b > 0 ? in->xmap_b : 2 * h->beta);
}

/* Buffers outside the heap (in->xmap > 0: CMA) whose copies would stream (in->far: the
 * call's buffers exceed the caches, direct_nt) or whose blocks reach `from` (the pipe's ring
 * beats CMA, ring_stage; a near node assumed): the ranks vote to stage, so the direct
 * algorithm costs its posting round (MC_POST_ROUND) plus its pipe. */
static int staged(const mc_cost_in_t *in, size_t from)
{
    return in->xmap > 0 && (in->far || in->m >= (double)from);
}

/* The trials (shm/trial.c, mv_trial): from MC_TRIAL_MIN bytes of user buffers (`user`, as the
 * algorithms count them) the uniform movers time their ways and keep the faster, so a call
 * costs the faster way plus the bursts that try the other (MC_TRIAL_BURST of every
 * MC_TRIAL_EVERY calls; every MC_TRIAL_FAR_OFF-th turn only for a way MC_TRIAL_BEHIND times
 * slower). The direct algorithm tries on ordinary buffers only (zero copy has one way): its
 * posting round then the pipe, or single copies by CMA. A pipe's call from `from` bytes per
 * rank tries too (far_direct_rule), through the direct algorithm: single copies (CMA, or zero
 * copy in the shared heap) after the posting round, or its own pipe, which takes the round
 * only on the calls that share samples (mv_round: MC_TRIAL_BURST + MC_TRIAL_KEEP of every
 * MC_TRIAL_EVERY). One rank has no peers, so no trial. So where both try, the pipe has the
 * direct algorithm's ways without most of its posting rounds. Measured before these costs
 * (malloc buffers, written before every call, forced, median of 2 launches): at 2 ranks
 * shm_direct took 0-9 % longer than shm_pipe from 16 KiB (bcast 32 KiB 2.31 / 2.10 us, scatter
 * 64 KiB 4.80 / 4.57), at 4 ranks on the 2 cores 10-20 % (scatter 32-64 KiB 22.8 / 18.1 and
 * 44.7 / 39.4 us, bcast 128 KiB 18.5 / 14.3, alltoall 256 KiB 211 / 187), where the model had
 * chosen it; with heap buffers the zero-copy direct algorithm ran 2-5 % ahead of the pipe's
 * trial (bcast 64 KiB 1.51 / 1.58 us). Where CMA is refused (in->nocma) nothing tries
 * (mv_trials). */
static int tries(const mc_cost_in_t *in, double user)
{
    return in->p > 1 && !in->nocma && mc_trials_on() && user >= (double)MC_TRIAL_MIN;
}
static double trial_of(double a, double b)
{
    double lo = fmin(a, b), hi = fmax(a, b), share = (double)MC_TRIAL_BURST / MC_TRIAL_EVERY;
    return lo + (hi > MC_TRIAL_BEHIND * lo ? share / MC_TRIAL_FAR_OFF : share) * (hi - lo);
}
/* A direct algorithm: pipe, its pipe's own cost; single, its copies' (CMA or zero copy);
 * stage, whether its rule stages (staged); user, its trial's bytes (0: none, the
 * v-collectives). Without CMA (in->nocma) ordinary buffers always stage: direct_open finds
 * them unreachable after the posting round. */
static double direct_way(const mc_hockney_t *h, const mc_cost_in_t *in, double pipe, double single, int stage,
                         double user)
{
    double s = mc_stage_round(h, in, pipe) + mc_all_waits(in, 1) + pipe;
    if (in->xmap > 0 && in->nocma) return s;
    if (in->xmap > 0 && tries(in, user)) return trial_of(s, single);
    return stage ? s : single;
}
/* A uniform mover's pipe; per_rank against from: whether its calls take the trial (with heap
 * buffers too: its calls reach zero copy through it where CMA works, far_direct_rule). */
static double pipe_way(const mc_hockney_t *h, const mc_cost_in_t *in, double pipe, double single,
                       double per_rank, size_t from, double user)
{
    if (!tries(in, user) || per_rank < (double)from) return pipe;
    double shares = (double)(MC_TRIAL_BURST + MC_TRIAL_KEEP) / MC_TRIAL_EVERY;
    return trial_of(pipe + shares * mc_stage_round(h, in, pipe), single);
}

/* Pipes: copy-in and copy-out overlap, so a rank's time is its copy-outs plus one slice;
 * two flag round trips. Direct (address posting, direct_open/direct_close): alpha is one flag
 * exchange of the node (every rank publishes one flag and waits for everyone's: the posts are
 * read in parallel, not one round trip per peer), then single copies: two exchanges (posts
 * visible; DONE before a posted buffer may be reused), three for bcast (the root's part 0).
 * The uniform collectives' costs below take their trials into account (direct_way, pipe_way);
 * the v-collectives (no trials) the rules. */
/* bcast's pipe against its model: measured at 2 ranks (malloc buffers, hot and --dirty, 10
 * launches, flag exchange 0.14-0.38 us) it took 7.8-8.0 us at 64 KiB and 15.1-15.4 us at
 * 128 KiB where copies at c_copy give 3.7 and 6.9 (the built-in profile), 2.1-2.2x; the
 * direct algorithm 4.6 and 6.9-7.0 us where its model gives 4.7 and 6.4; allgather's pipe
 * 10.4 us at 64 KiB against 8.3. Plain copies of 64 KiB another core has just written run
 * at 35-43 GB/s here (memset by one rank, memcpy by the other), and the ring of buffers
 * (pipe_init), which ends the reuse of slice buffers within a call, left 16-128 KiB as they
 * were: the cause is not found; the model's one overlapped 1.25 m does not hold at these
 * sizes. So bcast's pipe bytes count MC_XCORE times (shm.h)
 * within the caches (beyond them the slices stream through memory at t_copy); the pipe then
 * stopped at 32 KiB (2 ranks), where it measured 1.03-1.09x native against direct's
 * 1.28-1.33x (0.82-0.85x against 1.42-1.46x at 64 KiB; 16 KiB: 1.38-1.55x against
 * 1.17-1.20x). The factor is this VM's; where the cores share the last-level cache a line
 * moves between them faster and the pipe may keep larger sizes. Since the costs count the
 * trials (pipe_way), from 16 KiB per rank the pipe's calls cost the faster of this and CMA,
 * which the model took for faster there (2026-11-30: the pipe's own way then measured 2.10
 * against the direct algorithm's 2.31 us at 32 KiB, 3.68 against 3.83 at 64). */
static double cost_bcast_pipe(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return 2 * h->alpha + 2 * h->beta * 1.25 * (in->far ? 1 : MC_XCORE) * in->m;
}
/* every rank copies (p - 1)/p of the message, all at once; the root writes part 0 into
 * each of the p - 1 readers */
static double cost_bcast_single(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return 3 * h->alpha + mc_all_waits(in, 2) + xcopy(h, in, in->p - 1, in->m * (in->p - 1) / in->p);
}
double mc_mv_cost_bcast_pipe(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return pipe_way(h, in, cost_bcast_pipe(h, in), cost_bcast_single(h, in), in->m, MV_FAR_DIRECT,
                    in->m * in->p);
}
double mc_mv_cost_bcast_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return direct_way(h, in, cost_bcast_pipe(h, in), cost_bcast_single(h, in),
                      staged(in, MV_RING_STAGE_BCAST), in->m * in->p);
}
/* allgather(v): the pipe; every rank reads p - 1 blocks and copies its own */
double mc_mv_cost_allgatherv_pipe(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return 2 * h->alpha + 2 * h->beta * in->m * (in->p + 1);
}
/* allgather's and alltoall's: every rank reads a block from each of the p - 1 others and
 * copies its own */
static double cost_read_single(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return 2 * h->alpha + mc_all_waits(in, 2) + 2 * h->beta * in->m +
           xcopy(h, in, in->p - 1, in->m * (in->p - 1));
}
double mc_mv_cost_allgatherv_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return direct_way(h, in, mc_mv_cost_allgatherv_pipe(h, in), cost_read_single(h, in),
                      staged(in, MV_RING_STAGE), 0);
}
static double allgather_user(const mc_cost_in_t *in)
{
    return in->m * in->p * (in->p + 1);
}
double mc_mv_cost_allgather_pipe(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return pipe_way(h, in, mc_mv_cost_allgatherv_pipe(h, in), cost_read_single(h, in), in->m, MV_FAR_DIRECT,
                    allgather_user(in));
}
double mc_mv_cost_allgather_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return direct_way(h, in, mc_mv_cost_allgatherv_pipe(h, in), cost_read_single(h, in),
                      staged(in, MV_RING_STAGE), allgather_user(in));
}
double mc_mv_cost_rooted_pipe(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return 2 * h->alpha + 2 * h->beta * in->m * in->p;
}
/* p - 1 ranks copy one block each at once, sharing the root buffer's memory bandwidth */
double mc_mv_cost_rooted_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return 2 * h->alpha + xcopy(h, in, 1, in->m * (in->p > 2 ? in->p / 2.0 : 1.0));
}
/* the direct algorithms' (with their waits; the hybrids have no posting round) */
static double cost_rooted_single(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return mc_mv_cost_rooted_direct(h, in) + mc_all_waits(in, 2);
}
double mc_mv_cost_scatterv_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return direct_way(h, in, mc_mv_cost_rooted_pipe(h, in), cost_rooted_single(h, in), 0, 0);
}
/* scatter: from MV_RING_STAGE_SCATTER buffers outside the heap cost the posting round, then
 * the pipe (ring_stage; not for copies that would stream, as the others) */
double mc_mv_cost_scatter_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int stage = in->xmap > 0 && in->m >= (double)MV_RING_STAGE_SCATTER;
    return direct_way(h, in, mc_mv_cost_rooted_pipe(h, in), cost_rooted_single(h, in), stage,
                      2 * in->p * in->m);
}
double mc_mv_cost_scatter_pipe(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return pipe_way(h, in, mc_mv_cost_rooted_pipe(h, in), cost_rooted_single(h, in), in->m, MV_TRIAL_ROOTED,
                    2 * in->p * in->m);
}
/* gather(v): as scatter on the zero-copy path and with CMA below MV_RING_STAGE (gatherv:
 * MV_GATHER_STAGE); from it, or beyond the caches, buffers outside the heap cost the posting
 * round, then the pipe (gatherv_direct votes to stage rather than write by CMA) */
double mc_mv_cost_gatherv_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return direct_way(h, in, mc_mv_cost_rooted_pipe(h, in), cost_rooted_single(h, in),
                      staged(in, MV_RING_STAGE), 0);
}
double mc_mv_cost_gather_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return direct_way(h, in, mc_mv_cost_rooted_pipe(h, in), cost_rooted_single(h, in),
                      staged(in, MV_RING_STAGE), 2 * in->p * in->m);
}
/* gather's pipe: its calls that take the trial run the direct algorithm itself (posting round
 * and all: mc_mv_gatherv, gatherv_direct), but only where CMA works (far_direct_rule): costed
 * with zero copy it stays the pipe, and the direct algorithm keeps the heap's buffers */
double mc_mv_cost_gather_pipe(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->xmap > 0 && tries(in, 2 * in->p * in->m) && in->m >= (double)MV_TRIAL_ROOTED)
        return mc_mv_cost_gather_direct(h, in);
    return mc_mv_cost_rooted_pipe(h, in);
}
/* alltoall(v), m = one block */
double mc_mv_cost_alltoallv_pipe(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return 2 * h->alpha + 2 * h->beta * in->m * (2 * in->p - 1);
}
double mc_mv_cost_alltoallv_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return direct_way(h, in, mc_mv_cost_alltoallv_pipe(h, in), cost_read_single(h, in),
                      staged(in, MV_RING_STAGE), 0);
}
double mc_mv_cost_alltoall_pipe(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return pipe_way(h, in, mc_mv_cost_alltoallv_pipe(h, in), cost_read_single(h, in), in->m, MV_FAR_DIRECT,
                    2 * in->m * in->p * in->p);
}
double mc_mv_cost_alltoall_direct(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return direct_way(h, in, mc_mv_cost_alltoallv_pipe(h, in), cost_read_single(h, in),
                      staged(in, MV_RING_STAGE), 2 * in->m * in->p * in->p);
}
/* hybrid: the direct algorithm's copies without its posting round (one flag round for the
 * offsets, one for DONE), the pipe's below MV_HYBRID_MIN, beyond the caches and without CMA */
double mc_mv_cost_gather_hybrid(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->far || !hybrid_goes_direct(in, in->m, (double)MV_HYBRID_GATHER))
        return mc_mv_cost_rooted_pipe(h, in);
    return mc_mv_cost_rooted_direct(h, in);
}
double mc_mv_cost_scatter_hybrid(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    return hybrid_goes_direct(in, in->m, HUGE_VAL) ? mc_mv_cost_rooted_direct(h, in)
                                                   : mc_mv_cost_rooted_pipe(h, in);
}
double mc_mv_cost_alltoallv_hybrid(const mc_hockney_t *h, const mc_cost_in_t *in)
{
    mc_cost_in_t b = *in;
    b.m = in->p > 0 ? in->m / in->p : in->m;
    if (in->far || !hybrid_goes_direct(in, b.m, HUGE_VAL)) return mc_mv_cost_alltoallv_pipe(h, &b);
    return mc_mv_cost_alltoallv_direct(h, &b); /* within the caches: no staging */
}
