/* Shared-memory reductions: MA (flat and socket-aware), DPML-like, direct, and the windowed
 * scan. See shm_common.h for the vocabulary (windows, pieces, destinations). */
#include "shm_common.h"
#include <math.h>
#include "../../core/config.h"
#include "../../p2p/p2p.h"

static size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}
static size_t min_sz(size_t x, size_t y)
{
    return x < y ? x : y;
}
static size_t max_sz(size_t x, size_t y)
{
    return x > y ? x : y;
}

/* The data area the region has or will have (region.c rounds MCOLL_SHM_SIZE to pages). */
static size_t data_len_of(const mc_ctx_t *ctx)
{
    if (ctx->shm) return ctx->shm->data_len;
    long s = mc_cfg()->shm_size;
    return round_up(s > 0 ? (size_t)s : (size_t)1 << 20, 4096);
}

static size_t blk_count(const mc_args_t *a, const mc_sr_job_t *job, int i)
{
    return job->counts ? job->counts[i] : a->count;
}
static size_t blk_displ(const mc_args_t *a, const mc_sr_job_t *job, int i)
{
    return job->displs ? job->displs[i] : (size_t)i * a->count;
}

/* Elements of the whole input vector of one rank. */
static size_t input_count(const mc_args_t *a, const mc_sr_job_t *job, int p)
{
    if (job->dest != MC_SR_RS) return a->count;
    if (!job->counts) return a->count * (size_t)p;
    size_t n = 0;
    for (int i = 0; i < p; i++) n += job->counts[i];
    return n;
}

/* out = a op b where out may start below a inside it (in-place reduce_scatter: the result of
 * block r goes to the front of the buffer that holds block r further on). Chunks no longer
 * than the distance keep every write behind the reads still to come. out is the user's
 * result: streamed when the working set W exceeds the cache C (mc_red3_adaptive). */
static int red3_fwd(const mc_red_t *red, char *out, const char *a, const char *b, size_t n, size_t W,
                    size_t C)
{
    size_t ext = red->extent;
    if (out < a && a < out + n * ext) {
        size_t d = (size_t)(a - out) / ext;
        for (size_t i = 0; i < n; i += d) {
            int rc = mc_red3_adaptive(red, out + i * ext, a + i * ext, b + i * ext, min_sz(d, n - i), 1, W, C);
            if (rc != MPI_SUCCESS) return rc;
        }
        return MPI_SUCCESS;
    }
    return mc_red3_adaptive(red, out, a, b, n, 1, W, C);
}

/* dst = x_1 op (x_0 op dst)...: the last of a chain of reductions into the user's result is
 * the one that writes it for good, so only that one streams (the others stay in cache). */
static int red2_last(const mc_red_t *red, const void *in, void *inout, size_t n, int last, size_t W, size_t C)
{
    if (last) return mc_red3_adaptive(red, inout, in, inout, n, 1, W, C);
    return mc_red2(red, in, inout, n);
}

/* I_max: the largest slice or window of the MA engine and of scan (MCOLL_SHM_SLICE). */
static size_t slice_max(void)
{
    return mc_cfg()->shm_slice > 0 ? (size_t)mc_cfg()->shm_slice : (size_t)128 << 10;
}

/* A call whose steps would pass MC_STEP_MAX goes on in a new op (steps from 1 again), once
 * every rank finished the last one. */
static void next_op(mc_shm_t *sh)
{
    mc_shm_end(sh);
    mc_shm_begin(sh);
    mc_shm_quiesce(sh);
}

/* ================================================================ movement-avoiding engine
 *
 * Level 1 (every socket s of n_s ranks, or the whole node as one socket): at step j member t
 * handles slice (t+1+j) mod n_s of the window; step 0 copies its part of the slice into the
 * socket's partial, later steps reduce its part into it. Before step j > 0 it waits until the
 * next member finished step j-1 (which worked on the same slice). Flat (one socket): slices
 * are the pieces and the last step (piece t) writes to the destination (reduce_scatter:
 * red3 into rbuf) or reduces in place (allreduce/reduce). Level 2 (m > 1 sockets): after all
 * level-1 steps of the window, rank r reduces piece r across the m partials (into its rbuf,
 * or into partial 0). Copy-out (allreduce: every rank, reduce: root) of window w happens
 * after the reductions of window w+1 (two buffers or more: a ring, mc_ring_nbuf), so it overlaps them.
 *
 * On a far node (mc_shm_far) every write into the region streams (mc_copy_nt, mc_red3_nt):
 * each slice is handed to another core next, and there a line read from memory beats one
 * fetched from the writer's cache (README "Measured"); near, the slices stay temporal
 * (streaming them cost 1.2-3x: the next core then reads memory instead of a cache).
 *
 * Flags: STEP = window * S + level-1 step + 1, window * S + S after level 2 (S = largest
 * socket + 1; flat: S = p). AUX = windows copied out. A buffer is rewritten (step 0 of window
 * w) only after everybody finished window w - nbuf with it.
 *
 * DAV per byte of input: level 1 of a socket of n: 1 copy + (n-1) reductions = 3n - 1;
 * level 2: 3(m-1); so s(3p - m) + 3s(m-1) = s(3p + 2m - 3) for any socket sizes (flat m = 1:
 * s(3p - 1)); allreduce + 2sp (every rank copies out), reduce + 2s(p-1)/p (the root copies out
 * the others' pieces: its own piece's last reduction writes its rbuf, as reduce_scatter's
 * does; exact up to one element, since a window's pieces share its remainder; nothing at 2
 * ranks from MC_SR_WHOLE_MIN, where the root's piece is the whole window: ma_whole). */
typedef struct ma {
    mc_shm_t *sh;
    const mc_args_t *a;
    const mc_sr_job_t *job;
    mc_red_t red;
    const char *sb;
    char *rb;
    size_t ext, I, stride, W, C, nwin;
    int p, r, m, S, nbuf;
    int far;            /* the node is far: writes into the region stream */
    int whole;          /* reduce at 2 ranks: the root's piece is the whole window (ma_whole) */
    int k, t, nk, next; /* my socket, my index in it, its size, next member */
    size_t *off, *len;  /* [p] pieces of a window: sbuf offset and length, elements */
} ma_t;

static void ma_pieces(ma_t *e, size_t w)
{
    const mc_args_t *a = e->a;
    if (e->job->dest == MC_SR_RS) {
        size_t lo = w * e->I;
        for (int i = 0; i < e->p; i++) {
            size_t c = blk_count(a, e->job, i);
            e->off[i] = blk_displ(a, e->job, i) + lo;
            e->len[i] = c > lo ? min_sz(c - lo, e->I) : 0;
        }
        return;
    }
    if (e->whole) {
        size_t lo = w * e->I, n = min_sz(a->count - lo, e->I);
        for (int i = 0; i < e->p; i++) e->off[i] = lo, e->len[i] = i == a->root ? n : 0;
        return;
    }
    size_t lo = w * (size_t)e->p * e->I, n = min_sz(a->count - lo, (size_t)e->p * e->I);
    for (int i = 0; i < e->p; i++) {
        e->off[i] = lo + mc_part_start(n, e->p, i);
        e->len[i] = mc_part_len(n, e->p, i);
    }
}

/* Piece i of socket k's partial in the buffer of local window lw. */
static char *ma_shm(const ma_t *e, size_t lw, int k, int i)
{
    size_t idx = ((lw % (size_t)e->nbuf) * (size_t)e->m + (size_t)k) * (size_t)e->p + (size_t)i;
    return e->sh->data + idx * e->stride;
}

/* A reduce at 2 ranks (flat) from MC_SR_WHOLE_MIN bytes of input: the root's piece is the
 * whole window of I elements (the other rank's is empty), so the other rank's step 0 copies
 * its input in and the root's last step reduces it with its own straight into rbuf: the root
 * puts nothing and copies nothing out (DAV 5s = s(3p-1) instead of 6s), while the other rank
 * copies the next window in (its empty step 1 still waits for the root's step 0 of the window
 * before: one window ahead, enough since its copy outruns the root's reduction). With both
 * ranks' pieces the root puts half, reduces half and copies half out (about 3.5s of the
 * root's traffic against 3s). Measured at 2 ranks,
 * malloc buffers, Open MPI, `shm_ma` forced, `--order block`, 3 launches each alternating:
 * 256 KiB 14.3-14.4 -> 16.9-17.3 us (the root waits for the first window), 512 KiB
 * 25.3-28.4 -> 23.6-25.2, 1 MiB 47.3-49.2 -> 46.0-46.4, 2 MiB 92.5-95.7 -> 83.6-84.9,
 * 4 MiB 180-181 -> 153-160, 8 MiB 464-486 -> 369-401. */
#define MC_SR_WHOLE_MIN ((size_t)512 << 10)

static int ma_whole(mc_sr_dest_t dest, int p, int m, size_t s)
{
    return dest == MC_SR_ROOT && p == 2 && m == 1 && s >= MC_SR_WHOLE_MIN;
}

static uint32_t ma_fin(const ma_t *e, size_t lw)
{
    return (uint32_t)(lw * (size_t)e->S + (size_t)e->S);
}

/* Smallest input (bytes per rank) whose slices stream on a far node. Measured there at 2
 * ranks (median ratio over native Open MPI, temporal against streamed slices): reduce_scatter
 * gains at every size (4-256 KiB blocks 1.4-3.6x -> 4.0-12.7x); allreduce loses below 32 KiB
 * (8 KiB 4.1x -> 2.8x) and gains from it (64 KiB 2.1x -> 3.5x); reduce loses below 512 KiB
 * (64 KiB 1.08x -> 0.91x, 256 KiB equal) and gains from it (1 MiB 0.95x -> 1.77x). */
static size_t ma_far_min(mc_sr_dest_t dest)
{
    return dest == MC_SR_RS ? 0 : dest == MC_SR_ALL ? (size_t)32 << 10 : (size_t)512 << 10;
}

/* Writes of n elements into the region: shm = src, or shm = src op shm; streamed on a far
 * node (from MC_FAR_NT_MIN bytes). */
static void ma_put(const ma_t *e, char *shm, const char *src, size_t n)
{
    if (e->far && n * e->ext >= MC_FAR_NT_MIN) mc_copy_nt(shm, src, n * e->ext);
    else mc_copy_adaptive(shm, src, n * e->ext, 0, e->W, e->C);
}
static int ma_fold(const ma_t *e, char *shm, const char *src, size_t n)
{
    if (e->far && n * e->ext >= MC_FAR_NT_MIN) return mc_red3_nt(&e->red, shm, src, shm, n);
    return mc_red2(&e->red, src, shm, n);
}

/* Where the last reduction of this rank's own piece of window w goes when it is this rank's
 * result for good: reduce_scatter's block in rbuf, and reduce's piece r at the root (no other
 * rank reads it, so it skips the region and the copy-out); NULL: into the region. */
static char *ma_own_dst(const ma_t *e, size_t w)
{
    if (e->job->dest == MC_SR_RS) return e->rb + w * e->I * e->ext;
    if (e->job->dest == MC_SR_ROOT && e->r == e->a->root) return e->rb + e->off[e->r] * e->ext;
    return NULL;
}

/* Level-1 step j on elements [lo, lo + n) of piece i. */
static int ma_apply(ma_t *e, size_t w, size_t lw, int j, int i, size_t lo, size_t n)
{
    size_t ext = e->ext;
    const char *src = e->sb + (e->off[i] + lo) * ext;
    char *shm = ma_shm(e, lw, e->k, i) + lo * ext, *dst;
    if (e->m == 1 && j == e->nk - 1 && (dst = ma_own_dst(e, w))) { /* piece i is mine */
        dst += lo * ext;
        if (j) return red3_fwd(&e->red, dst, src, shm, n, e->W, e->C);
        if (dst != src) mc_copy_adaptive(dst, src, n * ext, 1, e->W, e->C); /* p == 1 */
        return MPI_SUCCESS;
    }
    if (!j) {
        ma_put(e, shm, src, n);
        return MPI_SUCCESS;
    }
    return ma_fold(e, shm, src, n);
}

/* Slice u of the window for a socket of nk members: the pieces themselves when flat, else
 * the u-th of nk balanced ranges of the pieces laid end to end. */
static int ma_slice(ma_t *e, size_t w, size_t lw, int j, int u)
{
    if (e->m == 1) return ma_apply(e, w, lw, j, u, 0, e->len[u]);
    size_t total = 0, acc = 0;
    for (int i = 0; i < e->p; i++) total += e->len[i];
    size_t lo = mc_part_start(total, e->nk, u), hi = lo + mc_part_len(total, e->nk, u);
    for (int i = 0; i < e->p && acc < hi; acc += e->len[i], i++) {
        size_t a0 = max_sz(lo, acc), a1 = min_sz(hi, acc + e->len[i]);
        if (a0 >= a1) continue;
        int rc = ma_apply(e, w, lw, j, i, a0 - acc, a1 - a0);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* Before the first write of local window lw into its buffer: everybody is done with window
 * pw = lw - nbuf in it (reductions, and the copy-outs that waited for them). */
static void ma_reuse_wait(ma_t *e, size_t pw)
{
    mc_shm_t *sh = e->sh;
    switch (e->job->dest) {
    case MC_SR_ALL:
        mc_shm_wait_all(sh, MC_F_AUX, (uint32_t)pw + 1);
        break;
    case MC_SR_ROOT:
        if (e->r != e->a->root) mc_shm_wait(sh, MC_F_AUX, e->a->root, (uint32_t)pw + 1);
        break;
    case MC_SR_RS:
        if (e->m > 1)
            mc_shm_wait_all(sh, MC_F_STEP, ma_fin(e, pw));
        else if (e->next != e->r)
            mc_shm_wait(sh, MC_F_STEP, e->next, ma_fin(e, pw));
        break;
    }
}

static int ma_level1(ma_t *e, size_t w, size_t lw)
{
    uint32_t base = (uint32_t)(lw * (size_t)e->S);
    ma_pieces(e, w);
    for (int j = 0; j < e->nk; j++) {
        if (j)
            mc_shm_wait(e->sh, MC_F_STEP, e->next, base + (uint32_t)j);
        else if (lw >= (size_t)e->nbuf)
            ma_reuse_wait(e, lw - (size_t)e->nbuf);
        int rc = ma_slice(e, w, lw, j, (e->t + 1 + j) % e->nk);
        if (rc != MPI_SUCCESS) return rc;
        mc_shm_set(e->sh, MC_F_STEP, base + (uint32_t)j + 1);
    }
    return MPI_SUCCESS;
}

/* Piece r across the m socket partials. */
static int ma_level2(ma_t *e, size_t w, size_t lw)
{
    mc_shm_t *sh = e->sh;
    uint32_t base = (uint32_t)(lw * (size_t)e->S);
    for (int x = 0; x < e->p; x++) {
        int s = sh->sock_of[x];
        if (x != e->r)
            mc_shm_wait(sh, MC_F_STEP, x, base + (uint32_t)(sh->sock_first[s + 1] - sh->sock_first[s]));
    }
    size_t n = e->len[e->r];
    int rc = MPI_SUCCESS;
    char *dst = ma_own_dst(e, w);
    if (dst) {
        rc = mc_red3_adaptive(&e->red, dst, ma_shm(e, lw, 0, e->r), ma_shm(e, lw, 1, e->r), n, e->m == 2, e->W,
                              e->C);
        for (int k = 2; k < e->m && rc == MPI_SUCCESS; k++)
            rc = red2_last(&e->red, ma_shm(e, lw, k, e->r), dst, n, k == e->m - 1, e->W, e->C);
    } else {
        for (int k = 1; k < e->m && rc == MPI_SUCCESS; k++)
            rc = ma_fold(e, ma_shm(e, lw, 0, e->r), ma_shm(e, lw, k, e->r), n);
    }
    mc_shm_set(sh, MC_F_STEP, ma_fin(e, lw));
    return rc;
}

static void ma_copyout(ma_t *e, size_t w, size_t lw)
{
    if (e->job->dest == MC_SR_ROOT && e->r != e->a->root) return;
    mc_shm_wait_all(e->sh, MC_F_STEP, ma_fin(e, lw));
    ma_pieces(e, w);
    int skip = ma_own_dst(e, w) ? e->r : -1; /* the root's own piece is in rbuf already */
    for (int i = 0; i < e->p; i++)
        if (i != skip)
            mc_copy_adaptive(e->rb + e->off[i] * e->ext, ma_shm(e, lw, 0, i), e->len[i] * e->ext, 1, e->W, e->C);
    mc_shm_set(e->sh, MC_F_AUX, (uint32_t)lw + 1);
}

/* The windows' buffers form a ring, as the pipes' do (allgatherv/shm_common.c, pipe_init):
 * step 0 of window w rewrites buffer w % nbuf once every rank has copied window w - nbuf out,
 * so with two buffers (yhccl's double buffering) a rank that runs ahead waits for the slowest
 * rank's copy-out of the window before last; with a ring it rarely waits. Each rank's share
 * of the ring (the m slots of every window it writes first) is at most MC_BUF_RING, one core's
 * L2 here; the copy-out still trails the reductions by one window. Measured at 2 ranks, malloc
 * buffers, 6 launches each alternating, same-run ratio over native Open MPI, 2 buffers ->
 * ring of 4 / 8 (the ring's size): allreduce 1-2 MiB 1.12-1.66x -> 1.38-1.65x, 4 MiB
 * 1.35-1.63x -> 1.32-1.83x; reduce 1-4 MiB (launches outside the slow state) 1.27-1.72x ->
 * 1.62-2.35x; reduce_scatter_block 512 KiB-2 MiB blocks 2.5-3.6x (most launches) ->
 * 3.8-6.8x; 8 MiB the same or better; 4 and 8 buffers alike. */
/* Slice I (elements) and buffering: I = max(min(block, I_max), cache line), shrunk until
 * nbuf * m * p slots fit the data area (nbuf = 2 when possible, then up to MC_BUF_RING per rank).
 * 0 when not even one element per slot fits. Every rank computes the same (the ring's index
 * of a window must agree). */
static size_t ma_slice_elems(size_t data_len, int p, int m, size_t blk, size_t ext, int *nbuf)
{
    size_t imax = slice_max();
    size_t ib = max_sz(min_sz(blk * ext, imax), MC_CL);
    size_t I = max_sz(ib / ext, 1);
    for (*nbuf = 2; *nbuf >= 1; (*nbuf)--) {
        size_t cap = data_len / ((size_t)*nbuf * (size_t)m * (size_t)p) / MC_LINE * MC_LINE;
        if (cap < ext) continue;
        I = min_sz(I, cap / ext);
        if (*nbuf == 2) {
            size_t slot = round_up(I * ext, MC_LINE) * (size_t)m;
            *nbuf = mc_ring_nbuf(data_len / (size_t)p, slot);
        }
        return I;
    }
    return 0;
}

static int ma_setup(ma_t *e, mc_shm_t *sh, const mc_args_t *a, const mc_sr_job_t *job, int socket_aware)
{
    e->sh = sh;
    e->a = a;
    e->job = job;
    e->p = sh->p;
    e->r = sh->r;
    e->ext = a->extent;
    e->sb = a->sbuf;
    e->rb = a->rbuf;
    mc_red_init(&e->red, a);
    if (socket_aware && sh->nsock > 1) {
        int first = sh->sock_first[sh->sock];
        e->m = sh->nsock;
        e->k = sh->sock;
        e->nk = sh->sock_first[e->k + 1] - first;
        e->t = 0;
        while (sh->sock_rank[first + e->t] != e->r) e->t++;
        e->next = sh->sock_rank[first + (e->t + 1) % e->nk];
        e->S = 0;
        for (int s = 0; s < e->m; s++)
            if (sh->sock_first[s + 1] - sh->sock_first[s] > e->S)
                e->S = sh->sock_first[s + 1] - sh->sock_first[s];
        e->S++;
    } else {
        e->m = 1;
        e->k = 0;
        e->nk = e->p;
        e->t = e->r;
        e->next = (e->r + 1) % e->p;
        e->S = e->p;
    }
    size_t blk = 0, total = input_count(a, job, e->p);
    e->whole = ma_whole(job->dest, e->p, e->m, total * e->ext);
    if (job->dest == MC_SR_RS)
        for (int i = 0; i < e->p; i++) blk = max_sz(blk, blk_count(a, job, i));
    else
        blk = e->whole ? a->count : (a->count + (size_t)e->p - 1) / (size_t)e->p;
    e->I = ma_slice_elems(sh->data_len, e->p, e->m, blk, e->ext, &e->nbuf);
    if (!e->I) return MPI_ERR_INTERN; /* excluded by the ok function */
    e->stride = round_up(e->I * e->ext, MC_LINE);
    if (job->dest == MC_SR_RS || e->whole)
        e->nwin = (blk + e->I - 1) / e->I;
    else
        e->nwin = (a->count + (size_t)e->p * e->I - 1) / ((size_t)e->p * e->I);
    size_t s = total * e->ext, out = job->dest == MC_SR_ALL ? s * (size_t)e->p : s;
    e->W = mc_shm_ws(s * (size_t)e->p + out, (size_t)e->nbuf * (size_t)e->m * (size_t)e->p * e->stride);
    e->C = mc_cache_capacity(e->p);
    e->far = job->handover == MC_SR_HO_RULE ? s >= ma_far_min(job->dest) && mc_shm_far_stream(sh)
                                            : job->handover == MC_SR_HO_STREAM;
    e->off = mc_malloc(2 * sizeof(size_t) * (size_t)e->p);
    if (!e->off) return MPI_ERR_NO_MEM;
    e->len = e->off + e->p;
    return MPI_SUCCESS;
}

/* One op's worth of windows [w0, w0 + nw): local window numbers keep steps in range. */
static int ma_run(ma_t *e, size_t w0, size_t nw)
{
    size_t lag = e->nbuf > 1 ? 1 : 0;   /* copy-out of window w after the reductions of w + 1 */
    int out = e->job->dest != MC_SR_RS;
    for (size_t lw = 0; lw < nw; lw++) {
        int rc = ma_level1(e, w0 + lw, lw);
        if (rc == MPI_SUCCESS && e->m > 1) rc = ma_level2(e, w0 + lw, lw);
        if (rc != MPI_SUCCESS) return rc;
        if (out && lw >= lag) ma_copyout(e, w0 + lw - lag, lw - lag);
    }
    if (out)
        for (size_t lw = nw > lag ? nw - lag : 0; lw < nw; lw++) ma_copyout(e, w0 + lw, lw);
    return MPI_SUCCESS;
}

static int ma_windows(mc_shm_t *sh, const mc_args_t *a, const mc_sr_job_t *job, int socket_aware)
{
    int rc;
    ma_t e;
    rc = ma_setup(&e, sh, a, job, socket_aware);
    mc_shm_begin(sh);   /* (or continues a direct op's: mc_shm_continue) */
    if (rc != MPI_SUCCESS) {
        mc_shm_end(sh);
        return rc;
    }
    if (e.nwin) mc_shm_quiesce(sh);
    /* Steps must stay below MC_STEP_MAX: very long calls continue in a new op. */
    for (size_t w0 = 0, nw; w0 < e.nwin && rc == MPI_SUCCESS; w0 += nw) {
        if (w0) next_op(sh);
        nw = min_sz((MC_STEP_MAX - sh->step0) / (size_t)e.S - 1, e.nwin - w0);
        rc = ma_run(&e, w0, nw);
    }
    mc_shm_end(sh);
    mc_free(e.off);
    return rc;
}

static int dpml_sym(mc_shm_t *sh, const mc_args_t *a, const mc_sr_job_t *job, size_t s);

/* An allreduce of at most mc_sym_max(p) bytes (at 2 ranks 256 KiB) can also run as the
 * symmetric exchange (dpml_sym: one flag round; every rank reduces every input, DAV
 * ps(3p-1) against the windows' s(5p-1)). The model ranks the windows ahead at 2 ranks,
 * 32-256 KiB (at 46 KiB 5.93 against 5.99 us), while the exchange was faster in every VM
 * state measured up to 128 KiB and in most at 256 KiB (README "Shared-memory engine",
 * symmetric exchange). So from MC_TRIAL_MIN the engine times both (trial.c); the exchange
 * has no posting round, so the samples go round one of their own (mc_trial_share). Not for
 * the direct path's staged calls (a handover set by its trial, or its op taken on): there
 * the exchange gained nothing measurable at 2 ranks, 128-256 KiB, with the posting round
 * (mc_shm_continue) or without it (its staged calls skip it on ordinary buffers; README
 * "Node distance"); nor in the socket-aware variant. */
enum { MA_WAY_WINDOWS, MA_WAY_SYM };
static mc_trial_t *ma_trial(mc_shm_t *sh, const mc_sr_job_t *job, size_t s, int socket_aware)
{
    if (job->dest != MC_SR_ALL || socket_aware || job->handover != MC_SR_HO_RULE || sh->cont ||
        sh->p < 2 || s > mc_sym_max(sh->p) || !mc_trials_on())
        return NULL;
    return mc_trial_of(sh, MC_TRIAL_MA_ALLREDUCE, s, MC_TRIAL_MIN);
}

int mc_sr_ma(mc_ctx_t *ctx, const mc_args_t *a, const mc_sr_job_t *job, int socket_aware)
{
    mc_shm_t *sh;
    int rc;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    size_t s = a->count * a->extent;
    mc_trial_t *tr = ma_trial(sh, job, s, socket_aware);
    if (!tr) return ma_windows(sh, a, job, socket_aware);
    int way = mc_trial_way(tr, 2);
    double t0 = mc_trial_clock();
    rc = way == MA_WAY_WINDOWS ? ma_windows(sh, a, job, socket_aware) : dpml_sym(sh, a, job, s);
    mc_trial_done(sh, tr, way, mc_trial_clock() - t0, (double)s);
    mc_trial_share(sh, tr, 2);
    return rc;
}

static int ma_fits(const mc_ctx_t *ctx, const mc_args_t *a, int m)
{
    int nbuf;
    return mc_shm_alg_ok(ctx, a) && a->extent > 0 &&
           ma_slice_elems(data_len_of(ctx), ctx->size, m, 1, a->extent, &nbuf) > 0;
}

int mc_sr_ma_ok(const mc_ctx_t *ctx, const mc_args_t *a)
{
    return ma_fits(ctx, a, 1);
}

int mc_sr_ma_socket_ok(const mc_ctx_t *ctx, const mc_args_t *a)
{
    /* Before the region exists the socket count is unknown: assume the worst (p). */
    return ma_fits(ctx, a, ctx->shm ? ctx->shm->nsock : ctx->size);
}

double mc_sr_ma_dav(mc_sr_dest_t dest, const mc_cost_in_t *in)
{
    double p = in->p, s = in->m, m = in->sockets > 1 ? in->sockets : 1;
    double rs = s * (3 * p + 2 * m - 3);
    if (ma_whole(dest, in->p, (int)m, (size_t)s)) return rs;
    return dest == MC_SR_RS ? rs : dest == MC_SR_ALL ? rs + 2 * s * p : rs + 2 * s * (p - 1) / p;
}

double mc_sr_ma_cost(mc_sr_dest_t dest, int socket_aware, const mc_hockney_t *h, const mc_cost_in_t *in)
{
    mc_cost_in_t c = *in;
    if (!socket_aware) c.sockets = 1;
    double imax = (double)slice_max();
    double windows = in->m > 0 ? in->m / (in->p * imax) : 0;
    windows = windows < 1 ? 1 : windows + 1;
    double syncs = socket_aware && in->sockets > 1 ? (double)in->p / in->sockets + 1 : in->p;
    /* allreduce and reduce: the last window's copy-out waits for every piece, one flag round
     * more; not its scheduling share (mc_sched_round: MC_YIELD_ROUND was fitted with p rounds) */
    double out = dest != MC_SR_RS ? h->alpha - mc_sched_round(in->load) : 0;
    return windows * syncs * h->alpha + out + mc_sr_ma_dav(dest, &c) / in->p * h->beta +
           in->m * (in->p - 1) / in->p * h->gamma;
}

/* ================================================================ DPML-like small messages
 *
 * Every rank copies its input into its slot (or the inline payload of its STEP flag line when
 * it fits MC_INLINE bytes) and raises STEP 1. reduce_scatter: rank r reduces block r of all
 * inputs in rank order into rbuf (one sync). allreduce up to mc_sym_max(p) (the symmetric
 * exchange), reduce up to MC_SR_DPML_TINY: every rank (reduce: the root) reduces all inputs in
 * rank order into rbuf (one sync); larger: rank r reduces part r of all inputs in rank order
 * into slot 0, raises STEP 2, and every rank copies the result out (reduce: the root reduces
 * its own part into rbuf and copies out the others').
 * DAV (s = input bytes, p > 1): copy-in 2ps; reduce_scatter + 3s(p-1); tiny allreduce
 * + 3s(p-1)p, tiny reduce + 3s(p-1); large allreduce + 3s(p-1) + 2ps, large reduce
 * + 3s(p-1) + 2s(p-1)/p (exact up to one element, the root's part's share of the remainder).
 * p = 1: 2s (a copy to rbuf). */
static const char *dpml_in(mc_shm_t *sh, int inl, int k)
{
    return inl ? (const char *)mc_flag(sh, MC_F_STEP, k)->data : mc_shm_slot_of(sh, k);
}

/* out = in_0 op in_1 op ... op in_{p-1} over n elements at byte offset off, left to right;
 * the last reduction streams when out is the user's (nt) and W > C. */
static int dpml_chain(mc_shm_t *sh, const mc_red_t *red, int inl, char *out, size_t off, size_t n, int nt, size_t W,
                      size_t C)
{
    int p = sh->p;
    int rc = mc_red3_adaptive(red, out, dpml_in(sh, inl, 0) + off, dpml_in(sh, inl, 1) + off, n, nt && p == 2, W, C);
    for (int k = 2; k < p && rc == MPI_SUCCESS; k++)
        rc = mc_red3_adaptive(red, out, out, dpml_in(sh, inl, k) + off, n, nt && k == p - 1, W, C);
    return rc;
}

/* This rank's own input for position r of a chain that folds into rbuf[0, n): its own buffer,
 * not its published slot, unless the input is rbuf itself (in place) and earlier positions
 * overwrite it first, or it overlaps rbuf otherwise (reduce_scatter in place): NULL then.
 * Reading the slot back after a peer read it costs a line transfer on the critical path: an
 * 8-byte allreduce at 2 ranks, back-to-back, 0.25-0.30 us with the slot, 0.17-0.19 us with
 * the own buffer (native Open MPI 0.41-0.44). */
static const unsigned char *own_input(const mc_args_t *a, int r, size_t off, size_t n)
{
    const unsigned char *own = (const unsigned char *)a->sbuf + off, *dst = a->rbuf;
    size_t len = n * a->extent;
    if (own + len <= dst || dst + len <= own) return own;
    return own == dst && r <= 1 ? own : NULL;
}

/* out = in_0 op ... op in_{p-1} over n elements at byte offset off of exchange x's payloads
 * (len bytes each; this rank's own input from own_input where it can), each waited for as it
 * is needed; every peer's payload is waited for even after an error, since the next exchange
 * relies on it. */
static int xchain(mc_shm_t *sh, const mc_xchg_t *x, size_t len, const mc_args_t *a, size_t off, size_t n)
{
    int rc = MPI_SUCCESS;
    const unsigned char *own = own_input(a, sh->r, off, n), *acc = NULL;
    mc_red_t red;
    mc_red_init(&red, a);
    for (int k = 0; k < sh->p; k++) {
        const unsigned char *in = k == sh->r && own ? own : mc_shm_x_wait(sh, x, k, len) + off;
        if (k > 0 && rc == MPI_SUCCESS) rc = mc_red3(&red, a->rbuf, acc, in, n);
        acc = k == 0 ? in : a->rbuf;
    }
    return rc;
}

/* Inputs of an allreduce of at most mc_sym_max(p) bytes (shm.h: 32 KiB, at 2 ranks 256 KiB)
 * or of a reduce_scatter of at most MC_SR_SYM_RS_MAX: every rank reads every input, so the
 * symmetric exchange carries them (no op, no DONE flag, no wait for readers): copy in,
 * publish, then the rank-order chain over the payloads. Same DAV as the general path's
 * one-sync allreduce, which it replaces (MC_SR_DPML_TINY <= MC_SYM_MAX <= mc_sym_max(p)). */
_Static_assert(MC_SR_DPML_TINY <= MC_SYM_MAX, "an allreduce's one-sync path is the symmetric one");
static int dpml_sym(mc_shm_t *sh, const mc_args_t *a, const mc_sr_job_t *job, size_t s)
{
    int r = sh->r, rs = job->dest == MC_SR_RS;
    size_t off = rs ? blk_displ(a, job, r) * a->extent : 0, n = rs ? blk_count(a, job, r) : a->count;
    mc_shm_sym_fill(sh, mc_shm_sym_begin(sh, s), a->sbuf, s);
    mc_shm_x_publish(sh, &sh->sym);
    int rc = xchain(sh, &sh->sym, s, a, off, n);
    mc_shm_x_claim_next(sh, &sh->sym, s, s >= MC_FAR_NT_MIN && mc_shm_far_stream(sh));
    return rc;
}

/* A reduce of at most MC_FAN_MAX bytes (shm.h): the fan-in exchange (every rank copies in, the root
 * chains in rank order; no op, no DONE flag). Same DAV as the tiny path.
 * Measured (2 ranks, batches of 100, roots rotating): 128-256 B 0.34-0.38 us against 0.41-0.45
 * on the general path, 2 KiB 0.64-0.67 against 0.47-0.54 (so the limit was 1 KiB; on an AMD
 * EPYC the same: 0.51-0.57 against 0.38-0.43). In such batches alternating buffers lost to the
 * one data-area slot that every call rewrites (shm.h, MC_STEP_PAYLOAD). With the slot claimed
 * for the next exchange (then mc_shm_x_claim_next) 2 KiB gains on the Intel Xeon VM (same-run over
 * native Open MPI, 3 launches each, limit 1 KiB -> 2 KiB: batches 1.50-1.55x -> 1.59-1.71x,
 * single calls 1.16-1.29x -> 1.70-1.94x; MPICH runs: batches the same, single calls
 * 1.64-1.68x -> 2.04-2.38x): the limit is 2 KiB. On an AMD EPYC (family 26, its slow state,
 * 5 launches each) 2 KiB lost in batches, 1.80-1.84x -> 1.51-1.56x, and gained little in single
 * calls, 1.39-1.67x -> 1.56-1.63x: still 1.5x, so the limit stays. Later on that VM, with
 * the payload alone claimed above 1 KiB (mc_shm_fan_claim_next), 2 KiB batches against the
 * general path 1.76x against 1.97x, single calls 1.84x against 1.69x (5 launches each).
 * The root publishes but copies nothing when the chain reads its own input from sbuf
 * (own_input): nobody else reads a root's payload. Its copy had sat on the root's path: AMD
 * EPYC (family 25), 2 ranks, same-run over native Open MPI, 4 launches each alternating,
 * reduce of 2 KiB: single calls 0.35-0.37 -> 0.32-0.33 us (1.40-1.50x -> 1.58-1.65x), from a
 * common clock mark 0.42-0.44 -> 0.39-0.40, batches with rotating roots 0.30 -> 0.27-0.28;
 * 256 B-1 KiB within 0.01-0.02 us either way. DAV s(5p-5) then (mc_sr_dpml_dav). */
static int dpml_fan(mc_shm_t *sh, const mc_args_t *a, size_t s)
{
    unsigned char *slot = mc_shm_fan_begin(sh, a->root, 0, s);
    if (sh->r != a->root || !own_input(a, sh->r, 0, a->count)) mc_copy_t(slot, a->sbuf, s);
    mc_shm_x_publish(sh, &sh->fan);
    int rc = sh->r == a->root ? xchain(sh, &sh->fan, s, a, 0, a->count) : MPI_SUCCESS;
    mc_shm_fan_claim_next(sh, s);
    mc_shm_fan_end(sh);
    return rc;
}

int mc_sr_dpml(mc_ctx_t *ctx, const mc_args_t *a, const mc_sr_job_t *job)
{
    mc_shm_t *sh;
    int rc = MPI_SUCCESS;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    int p = sh->p, r = sh->r;
    size_t ext = a->extent, s = input_count(a, job, p) * ext;
    int inl = s <= MC_INLINE;
    if (p > 1 && job->dest == MC_SR_ROOT && s <= MC_FAN_MAX) return dpml_fan(sh, a, s);
    if (p > 1 && job->dest != MC_SR_ROOT && s <= (job->dest == MC_SR_RS ? MC_SR_SYM_RS_MAX : mc_sym_max(p)))
        return dpml_sym(sh, a, job, s);
    mc_shm_begin(sh);
    if (p == 1) {
        if (a->rbuf != a->sbuf && s) mc_copy_t(a->rbuf, a->sbuf, s);
        mc_shm_end(sh);
        return MPI_SUCCESS;
    }
    mc_red_t red;
    mc_red_init(&red, a);
    /* inputs in the region and the user's buffers */
    size_t W = mc_shm_ws(3 * (size_t)p * s, (size_t)p * s), C = mc_cache_capacity(p);
    char *mine = inl ? (char *)mc_flag(sh, MC_F_STEP, r)->data : mc_shm_slot_of(sh, r);
    if (inl) mc_shm_quiesce_inline(sh);
    else mc_shm_quiesce(sh);
    mc_copy_t(mine, a->sbuf, s);
    mc_shm_set(sh, MC_F_STEP, 1);
    int root = job->dest == MC_SR_ROOT ? a->root : r;
    if (job->dest == MC_SR_RS) {
        mc_shm_wait_all(sh, MC_F_STEP, 1);
        rc = dpml_chain(sh, &red, inl, a->rbuf, blk_displ(a, job, r) * ext, blk_count(a, job, r), 1, W, C);
    } else if (s <= MC_SR_DPML_TINY) {
        if (r == root) {
            mc_shm_wait_all(sh, MC_F_STEP, 1);
            rc = dpml_chain(sh, &red, inl, a->rbuf, 0, a->count, 1, W, C);
        }
    } else {
        /* part r of the result: into slot 0, the root's own part straight into its rbuf (the
         * chains read the slots only, so an in-place rbuf is free to take it) */
        mc_shm_wait_all(sh, MC_F_STEP, 1);
        size_t off = mc_part_start(a->count, p, r) * ext, n = mc_part_len(a->count, p, r);
        size_t end = off + n * ext;
        int mine = job->dest == MC_SR_ROOT && r == root; /* allreduce: every part to slot 0 */
        char *res = mc_shm_slot_of(sh, 0), *dst = mine ? (char *)a->rbuf + off : res + off;
        rc = dpml_chain(sh, &red, 0, dst, off, n, mine, W, C);
        mc_shm_set(sh, MC_F_STEP, 2);
        if (r == root) {
            mc_shm_wait_all(sh, MC_F_STEP, 2);
            if (mine) { /* the parts before and after its own */
                mc_copy_adaptive(a->rbuf, res, off, 1, W, C);
                mc_copy_adaptive((char *)a->rbuf + end, res + end, s - end, 1, W, C);
            } else {
                mc_copy_adaptive(a->rbuf, res, s, 1, W, C);
            }
        }
    }
    mc_shm_end(sh);
    return rc;
}

int mc_sr_dpml_ok(const mc_ctx_t *ctx, const mc_args_t *a)
{
    size_t slot = data_len_of(ctx) / (size_t)ctx->size / MC_LINE * MC_LINE;
    return mc_shm_alg_ok(ctx, a) && a->bytes <= slot && (long)a->bytes <= mc_cfg()->shm_small;
}

double mc_sr_dpml_dav(mc_sr_dest_t dest, const mc_cost_in_t *in)
{
    double p = in->p, s = in->m;
    if (in->p == 1) return 2 * s;
    double red = 3 * s * (p - 1);
    switch (dest) {
    case MC_SR_RS:
        return 2 * p * s + red;
    case MC_SR_ALL:
        return in->m <= mc_sym_max(in->p) ? 2 * p * s + red * p : 4 * p * s + red; /* symmetric path */
    default: /* up to MC_FAN_MAX the fan-in exchange, whose root reads its own input from sbuf */
        if (in->m <= MC_FAN_MAX) return 2 * (p - 1) * s + red;
        return in->m <= MC_SR_DPML_TINY ? 2 * p * s + red : 2 * p * s + red + 2 * s * (p - 1) / p;
    }
}

double mc_sr_dpml_cost(mc_sr_dest_t dest, const mc_hockney_t *h, const mc_cost_in_t *in)
{
    int two = dest != MC_SR_RS && in->m > (dest == MC_SR_ALL ? mc_sym_max(in->p) : MC_SR_DPML_TINY);
    return (two ? 2 : 1) * h->alpha + mc_sr_dpml_dav(dest, in) / in->p * h->beta +
           in->m * (in->p - 1) / in->p * h->gamma;
}

/* ================================================================ direct (pip-mcoll)
 *
 * Every rank posts sbuf (post 0) and rbuf (post 1). Rank r reduces its chunk (its block, or
 * part r of the vector) across all inputs, reading peers' inputs in place (shared heap) or
 * through CMA into a private scratch, in sub-blocks that stay in L2, and writes the result:
 * reduce_scatter -> its rbuf, allreduce -> its rbuf (then every rank reads the other chunks
 * from their owners' rbufs), reduce -> the root's rbuf. The operand that may alias the
 * destination (in place) is always the first one read. Posts that some rank cannot reach:
 * the movement-avoiding algorithm runs instead. Above the cache (W > C) results written to
 * user buffers stream (mc_red3_nt, no read-for-ownership of the destination), and allreduce
 * with every rbuf in a shared heap pushes each chunk's result into all rbufs as it is
 * computed (mc_red3_nt_multi) instead of every rank reading the chunks back from their
 * owners' rbufs: results are written once to memory and never read again.
 * DAV zero copy (p > 1): 3s(p-1) reductions, allreduce + 2s(p-1) gathering (pull or push);
 * CMA adds 2 bytes per byte read from (or, reduce, written to) a peer. p = 1: 2s. */
#define MC_SR_DIRECT_BLOCK (64 << 10)
#define MC_SR_FAR_CMA ((size_t)1 << 20) /* allreduce on a far node: CMA from this input size */

typedef struct direct {
    mc_shm_t *sh;
    const mc_args_t *a;
    mc_red_t red;
    int nt;       /* results written to user buffers stream (working set above the cache) */
    char **out;   /* allreduce push: [p] local pointers to every rank's rbuf, NULL = CMA */
    void **tgt;   /* [p] scratch for the destinations of one sub-block */
    char **in;    /* [p] local pointers to the posted inputs, or NULL (CMA) */
    char *scr[3]; /* CMA scratch: two operands and the accumulator */
} direct_t;

static const char *direct_operand(direct_t *d, int k, size_t off, size_t n, char *scr, int *rc)
{
    size_t ext = d->a->extent;
    if (d->in[k]) return d->in[k] + off * ext;
    *rc = mc_peer_read(d->sh, k, 0, off * ext, scr, n * ext);
    return scr;
}

/* dst[0..n) = op over all ranks of input elements [off, off + n); `first` goes first. The
 * last reduction streams the result when nt (dst is a user's buffer, not scratch). */
static int direct_reduce(direct_t *d, int first, size_t off, char *dst, size_t n, int nt)
{
    int p = d->sh->p, rc = MPI_SUCCESS;
    const char *x0 = direct_operand(d, first, off, n, d->scr[0], &rc);
    for (int q = 1; q < p && rc == MPI_SUCCESS; q++) {
        int k = q - 1 < first ? q - 1 : q, last = nt && q == p - 1;
        const char *x = direct_operand(d, k, off, n, d->scr[1], &rc);
        if (rc != MPI_SUCCESS) break;
        if (q == 1) rc = last ? mc_red3_nt(&d->red, dst, x0, x, n) : mc_red3(&d->red, dst, x0, x, n);
        else rc = last ? mc_red3_nt(&d->red, dst, x, dst, n) : mc_red2(&d->red, x, dst, n);
    }
    return rc;
}

/* allreduce, push: the result of input elements [off, off + n) is computed once and streamed
 * into every rank's rbuf at once (mc_red3_nt_multi: never read back, no read-for-ownership);
 * partial results (p > 2) stay in scratch. Ranks whose rbuf has no local pointer get it by
 * CMA from this rank's rbuf. The operand order is direct_reduce's. */
static int direct_push(direct_t *d, size_t off, size_t n)
{
    mc_shm_t *sh = d->sh;
    int p = sh->p, r = sh->r, rc = MPI_SUCCESS, nout = 0;
    size_t ext = d->a->extent;
    char *acc = d->scr[2];
    for (int i = 0; i < p; i++) {   /* own rbuf first: it may be an operand (in place) */
        int k = (r + i) % p;
        if (d->out[k]) d->tgt[nout++] = d->out[k] + off * ext;
    }
    const char *x0 = direct_operand(d, r, off, n, d->scr[0], &rc);
    for (int q = 1; q < p && rc == MPI_SUCCESS; q++) {
        int k = q - 1 < r ? q - 1 : q;
        const char *x = direct_operand(d, k, off, n, d->scr[1], &rc);
        if (rc != MPI_SUCCESS) break;
        if (q == p - 1) rc = mc_red3_nt_multi(&d->red, d->tgt, nout, q == 1 ? x0 : x, q == 1 ? x : acc, n);
        else rc = q == 1 ? mc_red3(&d->red, acc, x0, x, n) : mc_red2(&d->red, x, acc, n);
    }
    for (int k = 0; k < p && rc == MPI_SUCCESS; k++)
        if (!d->out[k]) rc = mc_peer_write(sh, k, 1, off * ext, d->tgt[0], n * ext);
    return rc;
}


static int direct_chunk(direct_t *d, const mc_sr_job_t *job, size_t base, size_t n, char *dst_local)
{
    mc_shm_t *sh = d->sh;
    const mc_args_t *a = d->a;
    size_t ext = a->extent, blk = max_sz(MC_SR_DIRECT_BLOCK / ext, 1);
    int root = job->dest == MC_SR_ROOT ? a->root : sh->r, rc = MPI_SUCCESS;
    char *dst = dst_local;
    if (!dst) dst = mc_peer_ptr(sh, root, 1); /* the root's rbuf, when a pointer reaches it */
    size_t dst0 = dst_local ? 0 : base;
    for (size_t o = 0; o < n && rc == MPI_SUCCESS; o += blk) {
        size_t len = min_sz(blk, n - o);
        if (d->out) {
            rc = direct_push(d, base + o, len);
            continue;
        }
        char *out = dst ? dst + (dst0 + o) * ext : d->scr[2];
        rc = direct_reduce(d, root, base + o, out, len, dst && d->nt);
        if (rc == MPI_SUCCESS && !dst) rc = mc_peer_write(sh, root, 1, (base + o) * ext, out, len * ext);
    }
    return rc;
}

/* The direct path's ways on ordinary buffers (its trial, shm/trial.c): staged through the
 * region with temporal or with streaming stores (the MA engine), or CMA. */
enum { SR_WAY_TEMPORAL, SR_WAY_STREAM, SR_WAY_CMA };
/* the zero-copy allreduce's ways (its own trial, MC_TRIAL_ZC_ALLREDUCE) */
enum { ZC_RED_PUSH, ZC_RED_PULL };

/* The trial of this op (NULL: the fixed rules): from MC_TRIAL_MIN bytes of input (the
 * direct algorithm's smallest default size), while the path is MCOLL_SHM_PATH=auto and
 * MCOLL_SHM_TRIAL=1. */
static mc_trial_t *sr_trial(mc_shm_t *sh, const mc_sr_job_t *job, size_t s)
{
    return mc_trials_on() ? mc_trial_of(sh, (int)job->dest, s, MC_TRIAL_MIN) : NULL;
}

static void sr_trial_took(mc_shm_t *sh, mc_trial_t *tr, int way, double t0, size_t s)
{
    if (tr) mc_trial_done(sh, tr, way, mc_trial_clock() - t0, (double)s);
}

/* The MA engine runs the op staged, with the stores of the trial's way (its rule without one). */
static int sr_staged(mc_ctx_t *ctx, mc_shm_t *sh, const mc_args_t *a, const mc_sr_job_t *job, mc_trial_t *tr,
                     int way, double t0, size_t s)
{
    mc_sr_job_t staged = *job;
    if (tr) staged.handover = way == SR_WAY_STREAM ? MC_SR_HO_STREAM : MC_SR_HO_TEMPORAL;
    int rc = mc_sr_ma(ctx, a, &staged, 0);
    sr_trial_took(sh, tr, way, t0, s);
    return rc;
}

int mc_sr_direct(mc_ctx_t *ctx, const mc_args_t *a, const mc_sr_job_t *job)
{
    mc_shm_t *sh;
    int rc = MPI_SUCCESS;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    int p = sh->p, r = sh->r;
    size_t ext = a->extent, total = input_count(a, job, p), s = total * ext;
    if (p == 1) {
        mc_shm_begin(sh);
        if (a->rbuf != a->sbuf && s) mc_copy_t(a->rbuf, a->sbuf, s);
        mc_shm_end(sh);
        return MPI_SUCCESS;
    }
    /* A staged way on buffers a posting round found ordinary (mc_shm_ordinary, the same on
     * every rank) skips the round, as the movers' pipes do, except on the calls that share
     * the trial's samples: the round exists to find zero copy or agree on CMA, neither of
     * which a staged call uses, and it cost a flag exchange and an op. Heap buffers posted
     * meanwhile are found by the next sharing call or when the verdict lapses. Measured at 2
     * ranks, malloc buffers, default, batches of 10, slow state, launches alternating:
     * allreduce 128 / 256 KiB 11.5-11.8 / 19.7-20.8 -> 10.2-10.75 / 19.2-19.8 us; reduce
     * 128 / 256 KiB 8.7-9.2 / 15.5-16.7 -> 7.2-8.0 / 13.9-15.0; reduce_scatter_block of 64 /
     * 256 KiB blocks 5.9-7.1 / 18.2-21.2 -> 5.3-6.2 / 17.3-20.4; 1 MiB within noise. */
    mc_trial_t *tr = sr_trial(sh, job, s);
    int nways = sh->cma ? 3 : 2, way = tr ? mc_trial_way(tr, nways) : -1;
    if (way >= 0 && way != SR_WAY_CMA && mc_shm_ordinary(sh, a->coll) && !mc_trial_shares(tr, nways))
        return sr_staged(ctx, sh, a, job, tr, way, mc_trial_clock(), s);
    mc_shm_begin(sh);
    size_t out = job->dest == MC_SR_RS                    ? blk_count(a, job, r) * ext
                 : job->dest == MC_SR_ALL || r == a->root ? s
                                                          : 0;
    mc_shm_quiesce(sh);
    mc_shm_post(sh, 0, a->sbuf, s);
    mc_shm_post(sh, 1, a->rbuf, out);
    mc_trial_publish(sh);
    /* The path on ordinary buffers. Through CMA every operand chunk costs a system call and a
     * trip through scratch; staged, every slice is handed from one core to another through the
     * region, with temporal stores (the next core finds it in the writer's cache) or streaming
     * ones (it reads memory). Which wins depends on the machine and its state (AMD EPYC VM, 2
     * ranks: staged temporal 1.2-2.1x ahead of CMA near, streamed ahead when far, except
     * allreduce from MC_SR_FAR_CMA; Intel Xeon VM: CMA ahead of both from 512 KiB, streamed
     * last; README "Measured"), so from MC_TRIAL_MIN the op times the three (sr_trial); below,
     * and with MCOLL_SHM_TRIAL=0, the rules of that AMD VM: every rank votes to stage, except
     * a far rank in allreduce from MC_SR_FAR_CMA. The op runs direct when every rank voted so
     * or every buffer is zero copy (MCOLL_SHM_PATH=cma forces CMA). */
    int cma = way >= 0 ? way == SR_WAY_CMA : job->dest == MC_SR_ALL && s >= MC_SR_FAR_CMA && mc_shm_far(sh);
    if (!cma) {
        mc_shm_vote(sh, 0, MC_VOTE_STAGE);
        mc_shm_vote(sh, 1, MC_VOTE_STAGE);
    }
    mc_shm_post_round(sh, a->coll);
    mc_trial_collect(sh);
    double t0 = tr ? mc_trial_clock() : 0;
    int results = job->dest != MC_SR_RS;
    if (!mc_shm_direct_agreed(sh, 0) || (results && !mc_shm_direct_agreed(sh, 1))) {
        mc_shm_continue(sh); /* nobody touched a posted buffer: the MA engine takes the op on */
        /* CMA refused (a post not reachable by it): the faster staged way */
        if (tr && way == SR_WAY_CMA) way = mc_trial_best(tr, 2, 3u);
        return sr_staged(ctx, sh, a, job, tr, way, t0, s);
    }
    if (tr && (mc_shm_all_zero_copy(sh, 0) && (!results || mc_shm_all_zero_copy(sh, 1))))
        tr = NULL; /* zero copy: no way to choose */
    direct_t d = {.sh = sh, .a = a};
    mc_red_init(&d.red, a);
    /* every input, every posted result buffer */
    size_t W = mc_shm_ws(s * (size_t)p + (job->dest == MC_SR_ALL ? s * (size_t)p : s), 0);
    size_t C = mc_cache_capacity(p);
    d.nt = W > C;
    /* Allreduce results, with pointers to every rbuf: push them with streaming stores (each
     * result is written once to every rbuf, never read back) instead of every rank reading
     * the others' chunks from their rbufs, which finds each line modified in its writer's
     * cache (mc_handover_nt). Measured at 2 ranks, heap buffers: on a VM whose hwloc gives
     * each core its own LLC (AMD EPYC family 26) pushing took 3.3-37 us from 32 KiB to 1 MiB
     * against 5.0-101 us pulling, 0.46-1.3 ms against 0.81-1.6 ms at 8-16 MiB; on one whose
     * hwloc reports an L3 shared by both cores (family 25), where a pull was expected to win
     * below the cache, the push still did (5 launches each alternating, same-run over native
     * Open MPI: 32-512 KiB 2.6-3.5x -> 4.1-4.9x, 1-2 MiB 2.6-2.9x -> 3.3-3.7x, 4-8 MiB
     * alike). On a later family-26 VM whose hwloc reports a shared L3 the pull won at every
     * size (3 launches each, `shm_direct` forced: 64 KiB 3.30-3.45 -> 2.77-2.86 us, 128 KiB
     * 6.23-6.27 -> 4.27-4.38, 1 MiB 40.8-41.3 -> 27.6-28.7, 4 MiB 130-158 -> 106-124). So the
     * op times both from MC_TRIAL_MIN (MC_TRIAL_ZC_ALLREDUCE; push first, the rule from it with
     * MCOLL_SHM_TRIAL=0). Below it the results stay in the caches and pulling them there beat
     * the streamed push (2 ranks, Zen 3 VM, heap buffers written before every call, `shm_direct`
     * over `shm_ma` forced in one launch, 3 launches each: 16 KiB 0.89-1.03 pulled against
     * 1.80-1.84 pushed, 8 KiB 0.95-1.04 against 1.76-1.91). The pull also serves CMA paths. */
    int push = job->dest == MC_SR_ALL && mc_shm_all_zero_copy(sh, 1) && s >= MC_TRIAL_MIN, zway = -1;
    if (push && !tr && mc_trials_on()) {
        mc_trial_t *zt = mc_trial_of(sh, MC_TRIAL_ZC_ALLREDUCE, s, MC_TRIAL_MIN);
        if (zt) tr = zt, zway = mc_trial_way(zt, 2), push = zway == ZC_RED_PUSH, t0 = mc_trial_clock();
    }
    size_t blk = max_sz(MC_SR_DIRECT_BLOCK / ext, 1);
    d.in = mc_malloc(sizeof(char *) * (size_t)p);
    d.scr[0] = mc_malloc(3 * blk * ext);
    char *tmp = NULL;
    if (!d.in || !d.scr[0]) rc = MPI_ERR_NO_MEM;
    d.scr[1] = d.scr[0] ? d.scr[0] + blk * ext : NULL;
    d.scr[2] = d.scr[0] ? d.scr[0] + 2 * blk * ext : NULL;
    for (int k = 0; k < p && d.in; k++) d.in[k] = mc_peer_ptr(sh, k, 0);
    if (push && rc == MPI_SUCCESS) {
        d.out = mc_malloc(sizeof(char *) * (size_t)p);
        d.tgt = mc_malloc(sizeof(void *) * (size_t)p);
        if (!d.out || !d.tgt) rc = MPI_ERR_NO_MEM;
        for (int k = 0; k < p && rc == MPI_SUCCESS; k++) d.out[k] = mc_peer_ptr(sh, k, 1);
    }
    size_t base = job->dest == MC_SR_RS ? blk_displ(a, job, r) : mc_part_start(a->count, p, r);
    size_t n = job->dest == MC_SR_RS ? blk_count(a, job, r) : mc_part_len(a->count, p, r);
    char *dst = NULL;
    if (job->dest == MC_SR_ALL)
        dst = (char *)a->rbuf + base * ext;
    else if (job->dest == MC_SR_RS) {
        dst = a->rbuf;
        /* In place with the result over other ranks' inputs: they may still read those. */
        char *lo = a->rbuf, *sb = (char *)a->sbuf;
        if (n && lo < sb + s && sb < lo + n * ext && lo != sb + base * ext) dst = tmp = mc_malloc(n * ext);
        if (n && !dst) rc = MPI_ERR_NO_MEM;
    } else if (r == a->root)
        dst = (char *)a->rbuf + base * ext;
    if (rc == MPI_SUCCESS) rc = direct_chunk(&d, job, base, n, dst);
    mc_shm_set(sh, MC_F_STEP, 2);
    if (tmp) {
        mc_shm_wait_all(sh, MC_F_STEP, 2);
        if (rc == MPI_SUCCESS) mc_copy_adaptive(a->rbuf, tmp, n * ext, 1, W, C);
    }
    if (push) mc_shm_wait_all(sh, MC_F_STEP, 2); /* every chunk is in my rbuf */
    for (int k = 0; k < p && job->dest == MC_SR_ALL && !push && rc == MPI_SUCCESS; k++) {
        if (k == r) continue;
        size_t o = mc_part_start(a->count, p, k) * ext;
        mc_shm_wait(sh, MC_F_STEP, k, 2);
        rc = mc_peer_read_nt(sh, k, 1, o, (char *)a->rbuf + o, mc_part_len(a->count, p, k) * ext, d.nt);
    }
    mc_shm_end(sh);
    mc_shm_wait_all(sh, MC_F_DONE, MC_STEP_END); /* peers used my posted buffers */
    sr_trial_took(sh, tr, zway >= 0 ? zway : SR_WAY_CMA, t0, s);
    mc_free(tmp);
    mc_free(d.scr[0]);
    mc_free(d.in);
    mc_free(d.out);
    mc_free(d.tgt);
    return rc;
}

double mc_sr_direct_dav(mc_sr_dest_t dest, const mc_cost_in_t *in)
{
    double p = in->p, s = in->m;
    if (in->p == 1) return 2 * s;
    return 3 * s * (p - 1) + (dest == MC_SR_ALL ? 2 * s * (p - 1) : 0);
}

/* With buffers outside the shared heap (in->xmap > 0: CMA) the direct path posts them, finds
 * them not zero copy and runs the movement-avoiding algorithm (MCOLL_SHM_PATH=auto): that
 * algorithm's cost after the posting round, which on an oversubscribed node costs a share of
 * it as a staged mover's does (mc_stage_round). Its trial's other ways (streamed slices, CMA)
 * are not counted: at 3-8 ranks on the 2 cores they won nothing there (the trial kept to
 * temporal slices, README "Node distance"; forced, 1-8 MiB, 3 launches in both orders,
 * shm_direct / shm_ma within 0-10 %, shm_ma ahead in most cells), and without load the share
 * is 0, so at 2 ranks, where the trial beat shm_ma's rule by 1.2-1.7x from 2 MiB, the direct
 * path stays within the tolerance and goes first for its zero copy (select/model.c). */
double mc_sr_direct_cost(mc_sr_dest_t dest, const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->xmap > 0) {
        double ma = mc_sr_ma_cost(dest, 0, h, in);
        return mc_stage_round(h, in, ma) + ma;
    }
    return (dest == MC_SR_ALL ? 3 : 2) * h->alpha + mc_sr_direct_dav(dest, in) / in->p * h->beta +
           in->m * (in->p - 1) / in->p * h->gamma;
}

/* ================================================================ scan, exscan
 *
 * Windows of the input (at most I_max bytes, a ring of buffers per slot): ranks 0..p-2 copy their
 * window into their slot and raise STEP w+1; rank r combines the inputs it needs right to
 * left, so its own input (possibly in rbuf, in place) is read before rbuf is written:
 * scan r >= 1: rbuf = x_{r-1} op x_r, then rbuf = x_k op rbuf for k = r-2 .. 0;
 * exscan r >= 2: rbuf = x_{r-2} op x_{r-1}, then k = r-3 .. 0; exscan r = 1 copies x_0.
 * MPI ops are associative, and the operand order (lower rank left) is kept. A reader raises
 * AUX w+1 when done with window w; a writer reuses a buffer after its readers (the higher
 * ranks) are done with it.
 * DAV (s bytes, p > 1): copy-in 2s(p-1); scan: + 2s (rank 0's copy) + 3s p(p-1)/2; exscan:
 * + 2s (rank 1's copy) + 3s (p-1)(p-2)/2. p = 1: scan 2s, exscan 0. */
/* A slot's windows go round a ring of buffers of up to I_max bytes (MC_BUF_RING per rank at
 * most, as the MA windows), not two halves: the writer reuses buffer w % nbuf once the
 * higher ranks are done with window w - nbuf. Measured at 2 ranks, malloc buffers, 5
 * launches each alternating, same-run ratio over native Open MPI, launches outside the slow
 * state: two halves -> ring, 512 KiB-4 MiB 0.83-1.81x -> 1.89-3.08x, 16-256 KiB alike
 * (1.0-1.6x); the slow state 0.46-0.94x either way. Returns the buffer size (the whole slot
 * when not even two elements fit). */
static size_t scan_half(const mc_ctx_t *ctx, size_t slot, size_t ext, int *nbuf)
{
    (void)ctx;
    size_t imax = slice_max();
    size_t half = slot / 2 / MC_LINE * MC_LINE;
    *nbuf = half >= ext ? 2 : 1;
    if (*nbuf == 1) return slot;
    size_t buf = max_sz(min_sz(half, imax) / MC_LINE * MC_LINE, ext);
    *nbuf = mc_ring_nbuf(slot, buf);
    return buf;
}

/* A scan hands every window over through another core's cache; in the VM's slow state
 * (latency.c: a far node) a temporal copy-in leaves the window in the writer's cache, and the
 * reader's fetch from there lost to the point-to-point chain at every size (2 ranks, malloc
 * buffers, flag exchange 0.39-0.48 us, same-run over native Open MPI: exscan 16 KiB-4 MiB
 * 0.14-0.56x, scan 0.47-0.95x, `linear` 0.98-1.0x and 0.85-0.90x). Streamed, the window goes
 * through memory and the region beats the chain in both states (MCOLL_SHM_FAR_NS=1, 16 KiB-16
 * MiB, 6 launches each: the chain 0.75-0.96x, streamed scan 1.7-3.4x near and 1.0-3.5x in the
 * slow state, exscan 1.0-3.3x near and 1.0-3.1x slow). So from SCAN_FAR_MIN bytes per rank a
 * call begins with the far votes (one flag exchange, whose wait is also the distance sample
 * the scan otherwise never takes) and every writer streams its windows when any rank finds
 * the node far: the state is the node's, and a scan's ranks reach the round in the same order
 * every call, so a rank whose neighbour comes later may yield before it and never take a
 * sample (3 ranks on 2 cores under MPICH: never streamed in 300 calls when every rank had to
 * vote). Every rank reads the same votes. */
#define SCAN_FAR_MIN ((size_t)8 << 10)
/* The direct way's trial from this input over the ranks (8 KiB per rank at 2 ranks). On the
 * Intel Xeon VM (2 ranks, malloc buffers, batches of 100, same-run over native Open MPI, 2
 * launches each, the windows against direct reads by CMA) 8 KiB per rank took scan 1.63-1.71x
 * against 2.26-2.31x, exscan 0.73-0.78x against 1.24-1.26x; 4 KiB went either way (scan
 * 1.90-2.03x against 1.94-1.98x, exscan 1.13-1.20x against 1.26-1.31x), 2 KiB to the windows
 * (1.23-1.45x against 0.84-0.96x). Starting the far votes at 8 KiB instead of 16 KiB cost
 * nothing measurable there (exscan 8 KiB 0.73-0.81x either way). */
#define SCAN_TRIAL_MIN ((size_t)16 << 10)

/* The direct way: every rank posts sbuf; rank r folds the inputs it needs right to left, in
 * blocks of MC_SR_DIRECT_BLOCK bytes, reading the peers' by CMA into scratch or in place
 * (shared heap): scan r: rbuf = x_{r-1} op x_r, then x_k op rbuf for k = r-2 .. 0; exscan r:
 * the same without x_r, rank 1 reading x_0 straight into rbuf. One copy of each input a rank
 * needs, where the windows hand every one through another core's cache (written by one core,
 * then read by the other). A rank whose input is also its rbuf (in place) would overwrite it
 * while higher ranks read it: it votes to stage. nt: the last fold streams (W > C). */
static int scan_direct(mc_shm_t *sh, const mc_args_t *a, int exclusive, int nt)
{
    int p = sh->p, r = sh->r, need = exclusive ? r : r + 1, rc = MPI_SUCCESS;
    size_t ext = a->extent, n = a->count, blk = max_sz(MC_SR_DIRECT_BLOCK / ext, 1);
    if (need == 0 || n == 0) return MPI_SUCCESS;
    if (need == 1) { /* x_0 itself (exscan's rank 1, scan's rank 0): one copy, no scratch, no blocks */
        if (exclusive) return mc_peer_read_nt(sh, 0, 0, 0, a->rbuf, n * ext, nt);
        if (a->rbuf != a->sbuf) (nt ? mc_copy_nt : mc_copy_t)(a->rbuf, a->sbuf, n * ext);
        return MPI_SUCCESS;
    }
    direct_t d = {.sh = sh, .a = a};
    mc_red_init(&d.red, a);
    d.in = mc_malloc(sizeof(char *) * (size_t)p);
    d.scr[0] = mc_malloc(2 * blk * ext);
    if (!d.in || !d.scr[0]) rc = MPI_ERR_NO_MEM;
    d.scr[1] = d.scr[0] ? d.scr[0] + blk * ext : NULL;
    for (int k = 0; k < p && d.in; k++) d.in[k] = k == r ? (char *)a->sbuf : mc_peer_ptr(sh, k, 0);
    for (size_t o = 0; o < n && rc == MPI_SUCCESS; o += blk) {
        size_t len = min_sz(blk, n - o);
        char *dst = (char *)a->rbuf + o * ext;
        const char *y = direct_operand(&d, need - 1, o, len, d.scr[1], &rc);
        const char *x = rc == MPI_SUCCESS ? direct_operand(&d, need - 2, o, len, d.scr[0], &rc) : NULL;
        if (rc != MPI_SUCCESS) break;
        rc = nt && need == 2 ? mc_red3_nt(&d.red, dst, x, y, len) : mc_red3(&d.red, dst, x, y, len);
        for (int k = need - 3; k >= 0 && rc == MPI_SUCCESS; k--) {
            x = direct_operand(&d, k, o, len, d.scr[0], &rc);
            if (rc != MPI_SUCCESS) break;
            rc = nt && k == 0 ? mc_red3_nt(&d.red, dst, x, dst, len) : mc_red2(&d.red, x, dst, len);
        }
    }
    mc_free(d.scr[0]);
    mc_free(d.in);
    return rc;
}

/* In the hand-over band the windows have a third way: written with temporal stores where the
 * rule streams them (SCAN_WAY_STAGE_T). On the Zen 3 VM near (2026-11-30, 2 ranks, malloc
 * buffers, 2 launches each, streamed against temporal windows): scan 16 KiB 2.63 / 1.64 us,
 * 64 KiB 6.57 / 5.12, 128 KiB 12.3-12.6 / 9.8; exscan 32 KiB 3.82 / 2.5, 128 KiB 11.8-12.1 /
 * 8.5 - where four days earlier streaming had won (README "Hand-overs stream between the L1s
 * and the L2s"); as the movers' pipes (allgatherv/shm_common.c, mv_nways). */
enum { SCAN_WAY_STAGE, SCAN_WAY_DIRECT, SCAN_WAY_STAGE_T };

int mc_sr_scan(mc_ctx_t *ctx, const mc_args_t *a, int exclusive)
{
    mc_shm_t *sh;
    int rc = MPI_SUCCESS, nbuf;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    int p = sh->p, r = sh->r;
    size_t ext = a->extent, n = a->count;
    size_t half = scan_half(ctx, mc_shm_slot(sh), ext, &nbuf);
    size_t imax = slice_max();
    size_t wn = max_sz(min_sz(half, imax) / ext, 1), nwin = (n + wn - 1) / wn;
    size_t W = mc_shm_ws(2 * n * ext * (size_t)p, (size_t)p * (size_t)nbuf * half), C = mc_cache_capacity(p);
    int writer = r < p - 1, need = exclusive ? r : r + 1; /* inputs 0..need-1 make my result */
    /* near, the windows handed over stream by the user buffers' bytes (mc_handover_nt: between
     * the L1s and the L2s, and beyond the cache; an exscan's rank 0 writes no result, its rank
     * p - 1 reads no input of its own). A scan's stay temporal beyond the cache, where its
     * writers stream their own results as well: streamed copy-ins lost there (2 ranks, near, 5
     * launches each, same-run over native Open MPI: scan 16-64 MiB 3.6-4.0x, 8.1-8.9x
     * temporal against 3.0-3.3x, 6.2-7.0x streamed; exscan 32-64 MiB 1.4-2.1x temporal against
     * 2.3-2.5x streamed). */
    size_t user = 2 * n * ext * (size_t)(exclusive ? p - 1 : p);
    int band = (exclusive || user <= C) && mc_handover_nt(user, SIZE_MAX, p);
    int handover_nt = band || (exclusive && user > C), nways = band ? 3 : 2;
    mc_red_t red;
    mc_red_init(&red, a);
    mc_shm_begin(sh);
    uint32_t base = 1; /* STEP of window 0 */
    mc_trial_t *tr = NULL;
    int way = SCAN_WAY_STAGE;
    double t0 = 0;
    size_t all = n * ext * (size_t)p; /* the trial's size: input over the ranks */
    if (p > 1 && n * ext >= SCAN_FAR_MIN) {
        /* direct (scan_direct): its trial against the windows from SCAN_TRIAL_MIN bytes of
         * input over the ranks; without trials, when MCOLL_SHM_PATH asks for CMA or zero copy */
        if (mc_trials_on() && sh->cma)
            tr = mc_trial_of(sh, exclusive ? MC_TRIAL_EXSCAN : MC_TRIAL_SCAN, all, SCAN_TRIAL_MIN);
        way = tr ? mc_trial_way(tr, nways)
                 : mc_shm_path() == MC_PATH_CMA || mc_shm_path() == MC_PATH_ZERO ? SCAN_WAY_DIRECT : SCAN_WAY_STAGE;
        if (way == SCAN_WAY_DIRECT) {
            mc_shm_post(sh, 0, a->sbuf, n * ext);
            if (a->sbuf == a->rbuf && writer) mc_shm_vote(sh, 0, MC_VOTE_STAGE);
        } else {
            mc_shm_post(sh, 0, NULL, 0); /* no buffer: the far votes only */
        }
        mc_trial_publish(sh);
        mc_shm_post_round(sh, a->coll);
        mc_trial_collect(sh);
        t0 = tr ? mc_trial_clock() : 0;
        if (mc_shm_voted(sh, 0, MC_VOTE_FAR) && !mc_host_oversubscribed()) handover_nt = 1;
        if (way == SCAN_WAY_STAGE_T) handover_nt = 0;
        base = 2;
        /* the in-place vote binds even where mc_shm_direct_agreed waives staging votes */
        if (way == SCAN_WAY_DIRECT && mc_shm_direct_agreed(sh, 0) && !mc_shm_voted(sh, 0, MC_VOTE_STAGE)) {
            rc = scan_direct(sh, a, exclusive, W > C);
            mc_shm_end(sh);
            if (writer) mc_shm_wait_all(sh, MC_F_DONE, MC_STEP_END); /* higher ranks read my post */
            if (tr) mc_trial_done(sh, tr, SCAN_WAY_DIRECT, mc_trial_clock() - t0, (double)all);
            return rc;
        }
        if (way == SCAN_WAY_DIRECT) way = SCAN_WAY_STAGE; /* refused (in place, or a post out of reach) */
    } else if (writer && nwin) {
        mc_shm_quiesce(sh);
    }
    for (size_t w = 0; w < nwin && rc == MPI_SUCCESS; w++) {
        size_t lo = w * wn, len = min_sz(wn, n - lo), b = w % (size_t)nbuf;
        const char *src = (const char *)a->sbuf + lo * ext;
        char *dst = (char *)a->rbuf + lo * ext;
        if (w && w % (MC_STEP_MAX - 1) == 0) { /* keep steps in range: continue in a new op */
            next_op(sh);
            base = 1;
        }
        uint32_t step = (uint32_t)(w % (MC_STEP_MAX - 1)) + base;
        if (writer) {
            if (step >= (uint32_t)nbuf + base)
                for (int x = r + 1; x < p; x++) mc_shm_wait(sh, MC_F_AUX, x, step - (uint32_t)nbuf);
            char *slot = mc_shm_slot_of(sh, r) + b * half;
            if (handover_nt && len * ext >= MC_FAR_NT_MIN) mc_copy_nt(slot, src, len * ext);
            else mc_copy_t(slot, src, len * ext);
            mc_shm_set(sh, MC_F_STEP, step);
        }
        if (!exclusive && r == 0) {
            if (dst != src) mc_copy_adaptive(dst, src, len * ext, 1, W, C);
            continue;
        }
        if (!r) continue;
        for (int x = 0; x < r; x++) mc_shm_wait(sh, MC_F_STEP, x, step);
#define SLOT(x) (mc_shm_slot_of(sh, (x)) + b * half)
        if (need == 1)
            mc_copy_adaptive(dst, SLOT(0), len * ext, 1, W, C);
        else {
            const char *last = exclusive ? SLOT(r - 1) : src;
            rc = mc_red3_adaptive(&red, dst, SLOT(need - 2), last, len, need == 2, W, C);
            for (int x = need - 3; x >= 0 && rc == MPI_SUCCESS; x--) rc = red2_last(&red, SLOT(x), dst, len, x == 0, W, C);
        }
#undef SLOT
        mc_shm_set(sh, MC_F_AUX, step);
    }
    mc_shm_end(sh);
    if (tr) mc_trial_done(sh, tr, way, mc_trial_clock() - t0, (double)all);
    return rc;
}

/* ================================================================ movement-avoiding scan, exscan
 *
 * The windows of the scan above go through the slots, but rank r folds r + 1 inputs: p^2/2
 * folds in all and a last rank p - 1 folds deep. Here the folds are split by columns, as the
 * MA reductions split theirs: window w (wn elements of every rank's input, buffer w % nbuf of
 * its slot) is copied in by every rank whose input counts (scan: all; exscan: 0..p-2), then
 * rank c takes column c of the window (a p-th of it, cut at cache lines) and turns the slots'
 * column into its prefixes in place, lower rank left: x_k = x_{k-1} op x_k for k = 1..last
 * (last = p - 1, exscan p - 2); then every rank copies its result out (scan: slot r, exscan:
 * slot r - 1; nothing for exscan's rank 0). Any op: the operand order is the scan's.
 * Flags (local window lw of the op): STEP 2lw + 1 copied in, 2lw + 2 column folded; AUX lw + 1
 * copied out. A writer refills buffer lw % nbuf after every rank copied window lw - nbuf out
 * (which came after every column of it was folded).
 * DAV (s bytes, p > 1): scan copy-in 2sp + folds 3s(p-1) + copy-out 2sp = s(7p - 3); exscan
 * 2s(p-1) + 3s(p-2) + 2s(p-1) = s(7p - 10). p = 1: scan 2s (a copy to rbuf), exscan 0. */
static size_t ma_col_lo(size_t n, size_t unit, int p, int c)
{
    size_t units = (n + unit - 1) / unit;
    return min_sz(mc_part_start(units, p, c) * unit, n);
}

int mc_sr_scan_ma(mc_ctx_t *ctx, const mc_args_t *a, int exclusive)
{
    mc_shm_t *sh;
    int rc = MPI_SUCCESS, nbuf;
    if (!mc_shm_enter(ctx, a, &sh, &rc)) return rc;
    int p = sh->p, r = sh->r, last = exclusive ? p - 2 : p - 1;
    size_t ext = a->extent, n = a->count;
    if (p == 1 || n == 0) {
        if (!exclusive && n && a->rbuf != a->sbuf) mc_copy_t(a->rbuf, a->sbuf, n * ext);
        return MPI_SUCCESS;
    }
    size_t half = scan_half(ctx, mc_shm_slot(sh), ext, &nbuf);
    size_t wn = max_sz(min_sz(half, slice_max()) / ext, 1), nwin = (n + wn - 1) / wn;
    size_t unit = ext <= MC_CL && MC_CL % ext == 0 ? MC_CL / ext : 1;   /* columns cut at lines */
    size_t W = mc_shm_ws(2 * n * ext * (size_t)p, (size_t)p * (size_t)nbuf * half), C = mc_cache_capacity(p);
    size_t per_op = (MC_STEP_MAX - 1) / 2 - 1;
    mc_red_t red;
    mc_red_init(&red, a);
    mc_shm_begin(sh);
    mc_shm_quiesce(sh);
    for (size_t w = 0, lw = 0; w < nwin && rc == MPI_SUCCESS; w++, lw++) {
        if (lw == per_op) { /* keep steps in range: continue in a new op */
            next_op(sh);
            lw = 0;
        }
        size_t lo = w * wn, len = min_sz(wn, n - lo), b = lw % (size_t)nbuf;
        if (r <= last) {
            if (lw >= (size_t)nbuf) mc_shm_wait_all(sh, MC_F_AUX, (uint32_t)(lw - (size_t)nbuf + 1));
            mc_copy_t(mc_shm_slot_of(sh, r) + b * half, (const char *)a->sbuf + lo * ext, len * ext);
        }
        mc_shm_set(sh, MC_F_STEP, (uint32_t)(2 * lw + 1));
        mc_shm_wait_all(sh, MC_F_STEP, (uint32_t)(2 * lw + 1));
        size_t c0 = ma_col_lo(len, unit, p, r), cn = ma_col_lo(len, unit, p, r + 1) - c0;
        for (int k = 1; k <= last && cn && rc == MPI_SUCCESS; k++)
            rc = mc_red2(&red, mc_shm_slot_of(sh, k - 1) + b * half + c0 * ext,
                         mc_shm_slot_of(sh, k) + b * half + c0 * ext, cn);
        mc_shm_set(sh, MC_F_STEP, (uint32_t)(2 * lw + 2));
        mc_shm_wait_all(sh, MC_F_STEP, (uint32_t)(2 * lw + 2));
        int from = exclusive ? r - 1 : r;
        if (from >= 0)
            mc_copy_adaptive((char *)a->rbuf + lo * ext, mc_shm_slot_of(sh, from) + b * half, len * ext, 1, W, C);
        mc_shm_set(sh, MC_F_AUX, (uint32_t)lw + 1);
    }
    mc_shm_end(sh);
    return rc;
}

double mc_sr_scan_ma_dav(int exclusive, const mc_cost_in_t *in)
{
    double p = in->p, s = in->m;
    if (in->p == 1) return exclusive ? 0 : 2 * s;
    return exclusive ? s * (7 * p - 10) : s * (7 * p - 3);
}

/* Every rank's path: per window four flag rounds (two waits for every rank, the copy-out's
 * flag that the next window's copy-in waits for, and one for the waits on all ranks, where the
 * windowed scan's rank waits for the lower ranks as they come: one window took that scan's
 * time plus 1.2-1.7 flag rounds at 4-8 ranks on the 2 cores, below), its copy-in (2 beta a
 * byte), its column's reads of the other p - 1 slots (a copy a byte each) and folds, and its
 * copy-out, whose (p - 1) / p of the window other cores folded last: with the phases apart
 * nothing overlaps those hand-overs, so each counts MC_XCORE copies within the caches (one
 * beyond them, as the windowed scan's). Below MC_SCAN_MA_MIN_P ranks it is not a candidate
 * (infinite cost; forced, it runs): there the columns' extra copy-out costs about what the
 * reads and folds they spread save, which the model does not resolve (it offered the columns
 * from 8-16 KiB at 2-5 ranks, where they won from 128-256 KiB at 4 ranks, 32-128 KiB at 5 and
 * nowhere at 2). Measured (Open MPI, malloc
 * buffers, 2 launches each, forced, `shm_ma` against `shm`, us): 2 ranks scan 256 KiB-4 MiB
 * 20-373 against 17-286 (copy-in and copy-out 4s a rank, folds s/2, where `shm`'s rank 0
 * copies 4s while rank 1 folds 3s), 8-128 KiB 0.97-9.3 against 1.0-10.1, 1-4 KiB 0.29-0.74
 * against 0.26-0.48 (one flag round more); 3 ranks on the 2 cores scan 128 KiB-4 MiB 30-1114
 * against 25-923; 4 ranks scan 256 KiB-4 MiB 53-1100 against 58-1711, 16-128 KiB 11.6-31
 * against 7.9-30; 5 ranks scan 256 KiB-1 MiB 85-370 against 106-489, 2-16 KiB 15-19 against
 * 8-20; 6 ranks scan 8 KiB-1 MiB 16-415 against 18-613, 2-4 KiB 15-21 against 9-12; 8 ranks
 * scan 8 KiB-4 MiB 31-2776 against 35-5928, exscan 2 MiB 1075-1101 against 2083-2509, 1-4 KiB
 * 29-36 against 16-26 (a flag round there: MC_YIELD_ROUND in shm/shm.h). At 6-8 ranks the
 * model keeps the windowed scan below 8 KiB per rank (its two flag rounds, no far votes
 * there), where `shm` measured 23-34 us against 32-36 at 8, 11-12.5 against 21 at 7. */
#define MC_SCAN_MA_MIN_P 6
double mc_sr_scan_ma_cost(int exclusive, const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->p > 1 && in->p < MC_SCAN_MA_MIN_P) return INFINITY;
    if (in->p < 2 || in->m <= 0) return exclusive ? 0 : 2 * h->beta * in->m;
    double p = in->p, I = in->m < (double)slice_max() ? in->m : (double)slice_max();
    double folds = exclusive ? p - 2 : p - 1, out = in->far ? 1 : ((p - 1) * MC_XCORE + 1) / p;
    double cols = (p - 1) / p * 2 * h->beta + folds / p * h->gamma; /* a byte: peers' columns read, folded */
    return 4 * ceil(in->m / I) * h->alpha + in->m * 2 * h->beta * (1 + out) + in->m * cols;
}

int mc_sr_scan_ok(const mc_ctx_t *ctx, const mc_args_t *a)
{
    size_t slot = data_len_of(ctx) / (size_t)ctx->size / MC_LINE * MC_LINE;
    return mc_shm_alg_ok(ctx, a) && a->extent > 0 && slot >= a->extent;
}

double mc_sr_scan_dav(int exclusive, const mc_cost_in_t *in)
{
    double p = in->p, s = in->m;
    if (in->p == 1) return exclusive ? 0 : 2 * s;
    if (exclusive) return 2 * s * (p - 1) + 2 * s + 1.5 * s * (p - 1) * (p - 2);
    return 2 * s * (p - 1) + 2 * s + 1.5 * s * p * (p - 1);
}

/* The last rank's path: windows of I = min(s, I_max) bytes; the first is copied in (2 beta a
 * byte), then combined from the slots while the writers copy in the next (a pipeline, one
 * flag round a window); from SCAN_FAR_MIN bytes the call opens with the far votes' posting
 * round. Its folds: scan p - 1 (red3 and red2s), exscan p - 2 (rank 1 of an exscan only
 * copies x_0), reading p - 1 slots other cores wrote: the first read is the hand-over (a
 * copy; the first window's, written by one core, then read by another, with nothing to
 * overlap, counts MC_XCORE copies within the caches), the other p - 2 a copy each, and gamma
 * the folds' arithmetic (the fold rate within the caches). Without the votes and those reads
 * the model had costed the windowed scan below the column-split one wherever the built-in fold
 * rate was raised from 4 GB/s (e.g. 6 ranks, exscan 8-16 KiB and scan 4 MiB, where `shm_ma`
 * measured 2-70 % ahead: at 8 KiB the windowed scan's time doubles from 4 KiB, its round
 * of votes). Measured at 2 ranks (malloc buffers, hot, Open MPI, `--alg linear,shm`,
 * exscan: no fold) against the built-in profile's 2 beta = 1/25 GB/s: with temporal copy-in,
 * 32 KiB 4.6 us (model 4.3), 64 KiB 9.4 (8.3), 128 KiB 16.8 (16.1), 256 KiB 20 (21.6), 1 MiB
 * 41 (54); with the hand-overs streamed below the L2s (mc_handover_nt) 4.1, 7.6, 13.3, 27
 * and 38 us, 4 MiB 158 (185). Charging every window's copy-out once, as before, gave 2.9 us
 * at 64 KiB and 10.9 at 128 KiB, and MC_XCORE for every window 91 us at 1 MiB. Exscan then
 * goes to `shm` at every size at 2 ranks with the built-in profile, which measured 1.1-1.6x
 * native at 16-64 KiB, 0.98-1.06x at 128-256 KiB (where `linear` ran 0.98-0.99x), 1.3-1.4x
 * at 512 KiB and 1.7-3.1x at 1-4 MiB; `linear` ran 0.95-1.0x throughout. */
double mc_sr_scan_cost(int exclusive, const mc_hockney_t *h, const mc_cost_in_t *in)
{
    if (in->p < 2 || in->m <= 0) return exclusive ? 0 : 2 * h->beta * in->m;
    double I = in->m < (double)slice_max() ? in->m : (double)slice_max();
    double n = ceil(in->m / I), folds = exclusive ? in->p - 2 : in->p - 1;
    /* on an oversubscribed node h->gamma and h->beta charge load times a rank's reads and
     * folds (shm_cost), as if every rank did what the last one does; in the chain rank r
     * folds r inputs, about half of that on average, so the shared cores take
     * max(1, load / 2) times the last's */
    double chain = fmax(1, in->load / 2) / fmax(1, in->load);
    double copy = 2 * h->beta, fold = ((in->p - 2) * copy + folds * h->gamma) * chain; /* a byte */
    double first = I * (copy * (in->far ? 1 : MC_XCORE) + fold), later = (in->m - I) * (copy + fold);
    double votes = in->m >= (double)SCAN_FAR_MIN ? mc_post_round(h, in) : 0; /* the far votes' round */
    return (n + 1) * h->alpha + votes + I * copy + first + later;
}
