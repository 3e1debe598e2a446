/* Flags, waits and the node barrier. Publication is a release store of a sequence number
 * that only grows; waiting is an acquire load until the number is reached. */
#include "../core/config.h"
#include "../select/select.h"
#include "shm.h"
#include <assert.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* Spins before each yield: long enough to catch a peer running on another core, short
 * enough that an oversubscribed rank soon gives its core to the rank it waits for. On a node
 * with more of a communicator's ranks than online CPUs a waiter's peer is often not running
 * at all, and every spin delays it: measured on the 2-core VM (Open MPI, yield_when_idle,
 * same-run over native, 256 -> 4 spins) allreduce of 8 B 0.43x -> 1.23x at 3 ranks, 0.74x ->
 * 1.08x at 4; of 128 KiB 1.13x -> 2.52x at 4, 1.06x -> 2.69x at 8; barrier 0.39x -> 1.06x at
 * 8; scatter of 16 KiB 0.57x -> 3.39x at 4. Spins of 1, 4, 8 and 16 came out alike (4 ahead
 * at 8 ranks), 4096 took 380-630 us per call at 16-64 KiB where 256 took 30-50. */
#define SPIN_LIMIT 256
#define SPIN_OVERSUBSCRIBED 4
static _Atomic int host_ranks;   /* most ranks of one communicator seen on this node */
static _Atomic int spin_now;     /* the limit in force, 0 = not yet chosen */

static long online_cpus(void)
{
    static long cpus;
    if (!cpus) cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus;
}

int mc_host_oversubscribed(void)
{
    int forced = mc_cfg()->oversubscribed;
    if (forced >= 0) return forced;
    return atomic_load_explicit(&host_ranks, memory_order_relaxed) > online_cpus();
}

int mc_shm_crowded(const mc_shm_t *sh)
{
    int forced = mc_cfg()->oversubscribed;
    return forced >= 0 ? forced : sh->p > online_cpus();
}

double mc_host_load(void)
{
    double load = (double)atomic_load_explicit(&host_ranks, memory_order_relaxed) / (double)online_cpus();
    return !mc_host_oversubscribed() ? 0 : load > 1 ? load : 1;
}

static int choose_spin(void)
{
    long forced = mc_cfg()->shm_spin;
    int s = forced > 0 ? (int)(forced < INT_MAX ? forced : INT_MAX)
            : online_cpus() <= 1 ? 1
            : mc_host_oversubscribed() ? SPIN_OVERSUBSCRIBED
                                       : SPIN_LIMIT;
    atomic_store_explicit(&spin_now, s, memory_order_relaxed);
    return s;
}

void mc_shm_note_host_ranks(int n)
{
    int cur = atomic_load_explicit(&host_ranks, memory_order_relaxed);
    while (n > cur && !atomic_compare_exchange_weak(&host_ranks, &cur, n)) {
    }
    choose_spin();
}

static int spin_limit(void)
{
    int s = atomic_load_explicit(&spin_now, memory_order_relaxed);
    return s ? s : choose_spin();
}

int mc_shm_spin_limit(void) { return spin_limit(); }

/* Spins, then yields, until *f reaches target; `also` (if any) is loaded on every spin too.
 * No sleep after the yields: a futex sleep lost on an oversubscribed node unless busy
 * processes shared its cores (README "Synchronization"). */
static void spin_until(_Atomic uint64_t *f, uint64_t target, const volatile uint64_t *also)
{
    int spins = 0, limit = spin_limit();
    for (;;) {
        uint64_t v = atomic_load_explicit(f, memory_order_acquire);
        if (also) (void)*also;   /* the acquire load above orders the payload reads after it */
        if (mc_seq_reached(v, target)) return;
        if (++spins < limit) CPU_RELAX();
        else {
            sched_yield();
            spins = 0;
        }
    }
}

void mc_wait_flag(_Atomic uint64_t *f, uint64_t target) { spin_until(f, target, NULL); }

void mc_wait_inline(mc_flag_t *f, uint64_t target, size_t len)
{
    int second = len > MC_CL - sizeof f->v && len <= MC_INLINE;
    spin_until(&f->v, target, second ? (const volatile uint64_t *)(const void *)((const char *)f + MC_CL) : NULL);
}

/* The spin of mc_wait_flag with every load timed: the one that sees the target brought the
 * line over from its writer's cache (when the first load already sees it, the writer wrote
 * it before this rank looked; the fetch is the same). A wait that has to yield takes no
 * sample: the load that follows a yield is not timed alone. */
void mc_shm_wait_probe(mc_shm_t *sh, _Atomic uint64_t *f, uint64_t target)
{
    uint64_t v;
    for (int spins = 0, limit = spin_limit(); spins < limit; spins++) {
        uint32_t ns = mc_timed_load(f, &v);
        if (mc_seq_reached(v, target)) {
            mc_shm_xlat_add(sh, ns);
            return;
        }
        CPU_RELAX();
    }
    mc_wait_flag(f, target);
}

/* What this op's posting round showed about coll's buffers (see mc_shm_ordinary): a change
 * voids the remembered choices, whose order it moves. */
static void learn_buffers(mc_shm_t *sh, mc_coll_t coll)
{
    int zc = mc_shm_posts_zero_copy(sh);
    if (zc < 0) return;
    if (sh->ordinary[coll] != !zc) {
        sh->ordinary[coll] = (unsigned char)!zc;
        mc_sel_changed();
    }
    if (!zc && !sh->ordinary_until) sh->ordinary_until = mc_shm_calls(sh) + MC_ORDINARY_LAPSE;
}

/* The verdicts of ordinary buffers lapse (at the same call on every rank). */
void mc_shm_lapse(mc_shm_t *sh)
{
    memset(sh->ordinary, 0, sizeof sh->ordinary);
    sh->ordinary_until = 0;
    mc_sel_changed();
}

void mc_shm_post_round(mc_shm_t *sh, mc_coll_t coll)
{
    assert(!sh->step0);
    if (mc_shm_far(sh)) mc_shm_vote(sh, 0, MC_VOTE_FAR);
    mc_shm_set(sh, MC_F_STEP, MC_POST_STEP);
    mc_shm_wait_probe(sh, &mc_flag(sh, MC_F_STEP, (sh->r + 1) % sh->p)->v, mc_seq(sh->op, MC_POST_STEP));
    mc_shm_wait_all(sh, MC_F_STEP, MC_POST_STEP);
    sh->far_all = mc_shm_all_voted(sh, 0, MC_VOTE_FAR);
    sh->far_others = 0;
    for (int k = 0; k < sh->p; k++)
        if (k != sh->r && (mc_post(sh, k, 0)->votes & MC_VOTE_FAR)) sh->far_others = 1;
    learn_buffers(sh, coll);
}

uint64_t mc_shm_begin(mc_shm_t *sh)
{
    if (sh->cont) {
        sh->cont = 0;
        sh->step0 = MC_POST_STEP;
        return sh->op;
    }
    sh->step0 = 0;
    sh->posted = 0;
    ++sh->op;
    mc_shm_tick(sh);
    return sh->op;
}

void mc_shm_continue(mc_shm_t *sh) { sh->cont = 1; }

/* The flag value of an algorithm's step: STEP values count from sh->step0. */
static uint64_t seq_of(const mc_shm_t *sh, int kind, uint32_t step)
{
    return mc_seq(sh->op, kind == MC_F_STEP ? step + sh->step0 : step);
}

/* Every rank finished op `done` (DONE flags); what was read before is remembered, so a rank
 * far enough ahead is not read again (its DONE line keeps being written). */
static void wait_done(mc_shm_t *sh, uint64_t done)
{
    uint64_t target = mc_seq(done, MC_STEP_END);
    for (int i = 0; i < sh->p; i++) {
        if (i == sh->r || mc_seq_reached(sh->seen_done[i], target)) continue;
        _Atomic uint64_t *f = &mc_flag(sh, MC_F_DONE, i)->v;
        mc_wait_flag(f, target);
        sh->seen_done[i] = atomic_load_explicit(f, memory_order_relaxed);
    }
}

void mc_shm_quiesce(mc_shm_t *sh)
{
    if (sh->op <= 1 || sh->quiesced == sh->op) return;   /* flags start at zero before op 1 */
    sh->quiesced = sh->op;
    wait_done(sh, sh->op - 1);
}

char *mc_shm_half(mc_shm_t *sh, size_t *len)
{
    *len = sh->data_len / 2 / MC_LINE * MC_LINE;
    if (sh->half_op != sh->op) sh->half_prev = sh->half_op, sh->half_op = sh->op;
    return sh->data + (sh->op % 2) * *len;
}

/* Op - 1 kept to the other half: its readers may still read there. */
void mc_shm_quiesce_half(mc_shm_t *sh)
{
    uint64_t back = sh->half_op == sh->op && sh->half_prev + 1 == sh->op ? 2 : 1;
    if (sh->op <= back || sh->quiesced == sh->op) return;
    sh->quiesced = sh->op;
    wait_done(sh, sh->op - back);
}

void mc_shm_quiesce_inline(mc_shm_t *sh)
{
    if (sh->op > MC_RING) wait_done(sh, sh->op - MC_RING);
}

/* Also claims the payload after this rank's STEP line of the next op, as much as it last
 * wrote, if it wrote one in the last p ops (roots that rotate write every p-th op: the claim
 * is made at the end of the op before; mc_claim). Not the line itself: a reader polls it,
 * maybe before this rank writes it, and then the claim costs the writer one more round trip
 * (bcast in batches of 100, roots rotating, 8-256 B: 1.77-2.53x over native Open MPI without
 * claims, 1.65-2.26x with the line claimed too: the next op's root claimed its line while
 * that op's reader, done early, polled it). A small bcast's root claims its own next line
 * (bcast_inline): at that op it is no reader's, unless the root stays the same. */
void mc_shm_end(mc_shm_t *sh)
{
    mc_shm_set(sh, MC_F_DONE, MC_STEP_END);
    if (sh->step_len && sh->op - sh->step_op < (uint64_t)sh->p)
        mc_claim((char *)mc_step_line(sh, sh->r, sh->op + 1) + MC_LINE, sh->step_len);
}

void mc_shm_set(mc_shm_t *sh, int kind, uint32_t step)
{
    atomic_store_explicit(&mc_flag(sh, kind, sh->r)->v, seq_of(sh, kind, step), memory_order_release);
    mc_sync_events++;
}

void mc_shm_wait(mc_shm_t *sh, int kind, int rank, uint32_t step)
{
    mc_wait_flag(&mc_flag(sh, kind, rank)->v, seq_of(sh, kind, step));
}

void mc_shm_wait_step(mc_shm_t *sh, int rank, uint32_t step, size_t len)
{
    mc_wait_inline(mc_flag(sh, MC_F_STEP, rank), seq_of(sh, MC_F_STEP, step), len);
}

int mc_shm_test(mc_shm_t *sh, int kind, int rank, uint32_t step)
{
    uint64_t v = atomic_load_explicit(&mc_flag(sh, kind, rank)->v, memory_order_acquire);
    return mc_seq_reached(v, seq_of(sh, kind, step));
}

void mc_shm_wait_all(mc_shm_t *sh, int kind, uint32_t step)
{
    for (int i = 0; i < sh->p; i++)
        if (i != sh->r) mc_shm_wait(sh, kind, i, step);
}

/* Dissemination: in round k a rank announces it reached round k and waits until the rank
 * 2^k below it did too; after ceil(log2 p) rounds every rank knows all arrived. */
void mc_shm_barrier(mc_shm_t *sh)
{
    uint64_t b = ++sh->bar;
    int kind = b % 2 ? MC_F_BAR2 : MC_F_BAR;
    _Atomic uint64_t *mine = &mc_flag(sh, kind, sh->r)->v;
    for (int k = 0, d = 1; d < sh->p; k++, d <<= 1) {
        atomic_store_explicit(mine, mc_seq(b, (uint32_t)k + 1), memory_order_release);
        mc_sync_events++;
        int from = (sh->r - d + sh->p) % sh->p;
        mc_wait_flag(&mc_flag(sh, kind, from)->v, mc_seq(b, (uint32_t)k + 1));
    }
    mc_claim(mc_flag(sh, b % 2 ? MC_F_BAR : MC_F_BAR2, sh->r), MC_LINE); /* barrier b + 1's */
}

void mc_shm_x_publish(mc_shm_t *sh, mc_xchg_t *x)
{
    atomic_store_explicit(&mc_shm_xslot(sh, x, sh->r)->v, x->k, memory_order_release);
    mc_sync_events++;
}

const unsigned char *mc_shm_x_wait(mc_shm_t *sh, const mc_xchg_t *x, int rank, size_t len)
{
    mc_flag_t *f = mc_shm_xslot(sh, x, rank);
    /* every MC_X_PROBE-th exchange, the next rank's publication is timed (two timestamps
     * cost about as much as a fetch: sampling every call would slow the small calls); the fan
     * exchanges wait on the flag line alone (shm.h, mc_wait_inline) */
    if (rank == (sh->r + 1) % sh->p && x->k % MC_X_PROBE == 0) mc_shm_wait_probe(sh, &f->v, x->k);
    else if (x == &sh->fan)
        mc_wait_flag(&f->v, x->k);
    else mc_wait_inline(f, x->k, len);
    if (x->seen) x->seen[rank] = x->k;
    return mc_shm_slot_payload(f, len);
}

void mc_shm_sym_fill(mc_shm_t *sh, unsigned char *dst, const void *src, size_t len)
{
    if (len >= MC_FAR_NT_MIN && mc_shm_far_stream(sh)) mc_copy_nt(dst, src, len);
    else mc_copy_t(dst, src, len);
}

/* Rank q has published fan exchange `need` or later: first what this rank knows, then
 * q's slot of exchange x->k - 1 (one line read, and what it shows is remembered), then, if
 * `wait`, a wait for the slot of exchange `need` itself. Not the slot of x->k: q may be
 * writing it right now, and taking that line from under its store costs q a round trip and
 * this rank a miss again at the next read. */
static void fan_published(mc_shm_t *sh, int q, uint64_t need, int wait)
{
    mc_xchg_t *x = &sh->fan;
    if (mc_seq_reached(x->seen[q], need)) return;
    uint64_t v = atomic_load_explicit(&mc_shm_xslot_at(sh, x, x->k - 1, q)->v, memory_order_acquire);
    if (wait && !mc_seq_reached(v, need)) {
        mc_wait_flag(&mc_shm_xslot_at(sh, x, need, q)->v, need);
        v = need;
    }
    if (mc_seq_reached(v, x->seen[q])) x->seen[q] = v;
}

/* Rank q may write its slot of exchange k again: the readers of its slot of exchange
 * k - MC_FAN_RING are done with it. A fan-in's root reads every slot and publishes the next
 * exchange after it; a fan-out's readers read the root's slot only and publish after it. */
static void fan_reusable(mc_shm_t *sh, uint64_t k, int wait)
{
    int i = (int)(k % MC_FAN_RING), prev = sh->fan_root[i];
    if (prev < 0) return;
    if (!sh->fan_out[i]) {
        if (prev != sh->r) fan_published(sh, prev, k - MC_FAN_RING + 1, wait);
    } else if (prev == sh->r) {
        for (int q = 0; q < sh->p; q++)
            if (q != sh->r) fan_published(sh, q, k - MC_FAN_RING, wait);
    }
}

/* The check of the next exchange's begin, made now without waiting (shm.h). */
void mc_shm_fan_end(mc_shm_t *sh)
{
    fan_reusable(sh, sh->fan.k + 1, 0);
}

unsigned char *mc_shm_fan_begin(mc_shm_t *sh, int root, int out, size_t len)
{
    uint64_t k = ++sh->fan.k;
    mc_shm_tick(sh);
    fan_reusable(sh, k, 1);
    sh->fan_root[k % MC_FAN_RING] = root;
    sh->fan_out[k % MC_FAN_RING] = (unsigned char)out;
    return mc_shm_slot_payload(mc_shm_xslot(sh, &sh->fan, sh->r), len);
}
