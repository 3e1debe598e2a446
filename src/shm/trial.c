/* Trials: an op that has several ways to run, none of which wins on every machine, times its
 * own calls and keeps to the fastest, trying the others now and then.
 *
 * Why: the shared-memory paths on ordinary buffers (the reductions: staged through the region
 * with temporal or streaming stores, or CMA; the data movers: staged through their pipes, or
 * CMA) were ranked by rules measured on AMD EPYC VMs (2 ranks: staged temporal near, streamed
 * or CMA when the line-fetch latency says far). On an Intel Xeon VM (family 6 model 207; line
 * fetch 280-320 ns, so always "far") the streamed slices were the slowest way to reduce
 * (reduce 512 KiB-8 MiB 0.43-0.85x native, temporal 0.72-1.19x, CMA 0.94-1.54x) and CMA beat
 * every staged mover: the latency says how far the other core is, not which way pays. And
 * the movers' pipes stream their copy-ins in the hand-over band by rule, which won on the Zen 3
 * VM one day and lost by 1.2-1.9x four days later in the same near state: there their trial
 * times the pipe with temporal copy-ins as a third way (allgatherv/shm_common.c, mv_nways).
 *
 * Every rank of the region makes the same choice on the same call: a call's sample is the
 * largest of the ranks' times (the op's time; one rank's alone misleads: a reduce's non-root
 * that stages leaves before the root has the result), shared through the posting round of
 * the next timed op (an op with none, through an exchange of its own: mc_trial_share).
 * Schedule: MC_TRIAL_BURST calls of each way in turn (the opening); after that, every
 * MC_TRIAL_EVERY calls a burst of MC_TRIAL_BURST runs the next way in turn, way 0 first,
 * unless that way is more than MC_TRIAL_BEHIND times slower than the fastest: then only in
 * every MC_TRIAL_FAR_OFF-th round of turns, and in the first, since the opening's samples do
 * not tell. Its calls find pages and lines cold and, after a quiet spell, slowed cores:
 * calls of one way in a row after a second of sleep took 250-400 us at first and
 * 100-170 after 40 calls (allgather of 1 MiB blocks staged, 2 ranks, the Zen 3 VM; the same
 * without the sleep after other collectives, and with the region's pages touched 20 times
 * beforehand). At 2 ranks on the firecracker VM, allgather of 1 MiB blocks, the staged way's
 * two opening samples of 186-209 us against CMA's 120 had kept a launch on CMA for all its
 * calls (0.98x native against 1.26-1.42x in the launches that staged), when a way far behind
 * waited for its turn of round 16; way 0, whose samples come first, suffers most, so it has
 * the first turn: on the Zen 3 VM (same program, 6 launches each, mean per 16 calls) the
 * launches that opened on CMA staged from call 64 instead of 128: calls 16-127 took 94-158
 * us per launch (mean) against 120-243. The other calls run the fastest. Bursts of a way
 * 3x slower every 128 calls (bcast and gather of 32-128 KiB at 2 ranks, staged against CMA on
 * that Intel VM) cost mcoll-bench's median 25-40 % (1.22-1.47x native -> 0.82-1.00x; why a
 * few calls move the median of the others was not found): hence the rarer tries of ways far
 * behind. A call right after one of another way gives no sample (the first CMA call after
 * staged ones ran 1.4-1.9x slower than CMA calls in a row). A way's estimate is the least
 * time per byte of its last MC_TRIAL_KEEP samples: interruptions and preemption only ever add
 * time. A lasting change of the machine's state is taken up within MC_TRIAL_KEEP / 2 turns of
 * each way: MC_TRIAL_KEEP * MC_TRIAL_EVERY * nways / 2 calls, times MC_TRIAL_FAR_OFF for a way
 * that was far behind. */
#include "shm.h"
#include "../core/config.h"
#include <math.h>
#include <string.h>
#include <time.h>

static double (*measure_hook)(int way, double ns);

double mc_trial_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

void mc_trial_measure_set(double (*fn)(int way, double ns)) { measure_hook = fn; }

static double estimate(const mc_trial_t *t, int way)
{
    double best = HUGE_VAL;
    int n = t->n[way] < MC_TRIAL_KEEP ? (int)t->n[way] : MC_TRIAL_KEEP;
    for (int i = 0; i < n; i++)
        if (t->ns_per_b[way][i] < best) best = t->ns_per_b[way][i];
    return best;
}

int mc_trial_best(const mc_trial_t *t, int nways, unsigned allowed)
{
    int best = -1;
    double e = HUGE_VAL;
    for (int w = 0; w < nways; w++) {
        if (!(allowed & (1u << w))) continue;
        double x = estimate(t, w);
        if (best < 0 || x < e) best = w, e = x;
    }
    return best;
}

int mc_trial_way(mc_trial_t *t, int nways)
{
    _Static_assert(MC_TRIAL_BURST * MC_TRIAL_WAYS <= MC_TRIAL_EVERY, "the opening ends before turn 0");
    uint64_t c = t->calls++, n = (uint64_t)nways;
    if (c < MC_TRIAL_BURST * n) return (int)(c / MC_TRIAL_BURST);
    int best = mc_trial_best(t, nways, ~0u);
    if (c % MC_TRIAL_EVERY < MC_TRIAL_BURST) {
        /* turns count from the first after the opening (c = MC_TRIAL_EVERY: the opening
         * takes at most 3 bursts), way 0 first; a way far behind only in every
         * MC_TRIAL_FAR_OFF-th round of turns, and in the first, as the opening's samples
         * alone do not tell (above) */
        uint64_t turn = c / MC_TRIAL_EVERY - 1;
        int w = (int)(turn % n);
        if (estimate(t, w) <= MC_TRIAL_BEHIND * estimate(t, best) || turn / n % MC_TRIAL_FAR_OFF == 0)
            return w;
    }
    return best;
}

int mc_trial_shares(const mc_trial_t *t, int nways)
{
    uint64_t c = t->calls - 1;
    return c < MC_TRIAL_BURST * (uint64_t)nways || c % MC_TRIAL_EVERY < MC_TRIAL_BURST + MC_TRIAL_KEEP;
}

void mc_trial_done(mc_shm_t *sh, mc_trial_t *t, int way, double ns, double bytes)
{
    if (!t || way < 0 || way >= MC_TRIAL_WAYS || bytes <= 0) return;
    sh->trial_last = way;
    int after = t->last == way + 1;   /* a call right after another way's is no sample */
    t->last = way + 1;
    if (!after) return;
    if (measure_hook) ns = measure_hook(way, ns);
    sh->trial_pend.t = t;
    sh->trial_pend.way = way;
    sh->trial_pend.ns = ns < 1 ? 1 : ns;
    sh->trial_pend.bytes = bytes;
}

void mc_trial_publish(mc_shm_t *sh)
{
    mc_post(sh, sh->r, 0)->took = sh->trial_pend.t ? (uint64_t)sh->trial_pend.ns : 0;
}

/* The pending sample, its time the largest of the ranks' (most) */
static void record(mc_shm_t *sh, uint64_t most)
{
    mc_trial_t *t = sh->trial_pend.t;
    int w = sh->trial_pend.way;
    sh->trial_pend.t = NULL;
    t->ns_per_b[w][t->n[w]++ % MC_TRIAL_KEEP] = (double)most / sh->trial_pend.bytes;
}

void mc_trial_collect(mc_shm_t *sh)
{
    if (!sh->trial_pend.t) return;
    uint64_t most = 0;
    for (int k = 0; k < sh->p; k++) {
        uint64_t x = mc_post(sh, k, 0)->took;
        if (x > most) most = x;
    }
    record(sh, most);
}

void mc_trial_share(mc_shm_t *sh, const mc_trial_t *t, int nways)
{
    if (!sh->trial_pend.t || !mc_trial_shares(t, nways)) return;
    uint64_t most = (uint64_t)sh->trial_pend.ns, x;
    memcpy(mc_shm_sym_begin(sh, sizeof most), &most, sizeof most);
    mc_shm_x_publish(sh, &sh->sym);
    for (int k = 0; k < sh->p; k++) {
        if (k == sh->r) continue;
        memcpy(&x, mc_shm_x_wait(sh, &sh->sym, k, sizeof x), sizeof x);
        if (x > most) most = x;
    }
    record(sh, most);
}

int mc_trials_on(void) { return mc_cfg()->shm_trial && mc_shm_path() == MC_PATH_AUTO; }

mc_trial_t *mc_trial_of(mc_shm_t *sh, int site, size_t bytes, size_t from)
{
    if (site < 0 || site >= MC_TRIAL_SITES || bytes < from || bytes < MC_TRIAL_LOW) return NULL;
    int cls = 0;
    for (size_t b = bytes / MC_TRIAL_LOW; b > 1 && cls < MC_TRIAL_CLASSES - 1; b >>= 1) cls++;
    return &sh->trial[site][cls];
}
