/* Node-aware evaluation of cost models (model.h, mc_cost_nodes): N nodes x P ranks numbered
 * node by node (rank r on node r / P), the ranks of a node sharing its network interface.
 *
 * A classic algorithm run flat on N*P ranks is replayed round by round from its schedule
 * (the same one its file implements; only who talks to whom and how many bytes matter). In a
 * round every rank sends at most one message, all at once:
 *   message within a node   alpha_r + b * beta_r        (intra line)
 *   message between nodes   alpha_e + b * beta_e        (inter line: one process's start-up
 *                                                         and the link's time per byte)
 *   node n's interface      max(k_out / rate, B_out / bw, k_in / rate, B_in / bw)
 *                           for the k messages / B bytes its ranks send (receive) off-node
 *   round = max over all of these + the round's reduction (gamma * bytes reduced)
 * Rounds follow each other (each depends on the previous one's data). Approximations: no
 * overlap between rounds, memory bandwidth within a node not shared (intra messages of a round
 * do not slow each other), the fabric between nodes never congests (only the node interfaces
 * do). Algorithms without a schedule here: their flat .cost (optimistic at scale: no sharing
 * of the interface). */
#include "model.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct net {
    mc_hockney_t e, r;    /* inter and intra lines (gamma = the profile's) */
    double rate, bw;      /* per node; 0 = not limited */
    int N, P, p;
    int *kout, *kin;      /* [N] messages off / onto node n this round */
    double *bout, *bin;   /* [N] bytes */
    double slow;          /* slowest single message of the round */
} net_t;

static void round_begin(net_t *x)
{
    memset(x->kout, 0, sizeof(int) * (size_t)x->N);
    memset(x->kin, 0, sizeof(int) * (size_t)x->N);
    memset(x->bout, 0, sizeof(double) * (size_t)x->N);
    memset(x->bin, 0, sizeof(double) * (size_t)x->N);
    x->slow = 0;
}

static void msg(net_t *x, int src, int dst, double b)
{
    if (src == dst || src < 0 || dst < 0 || src >= x->p || dst >= x->p) return;
    int a = src / x->P, c = dst / x->P;
    double t;
    if (a == c) {
        t = x->r.alpha + b * x->r.beta;
    } else {
        t = x->e.alpha + b * x->e.beta;
        x->kout[a]++, x->kin[c]++;
        x->bout[a] += b, x->bin[c] += b;
    }
    if (t > x->slow) x->slow = t;
}

static double lim(double n, double per_s)
{
    return per_s > 0 ? n / per_s : 0;
}

/* Time of the round just described, plus `compute` seconds (its reduction). */
static double round_end(const net_t *x, double compute)
{
    double t = x->slow;
    for (int n = 0; n < x->N; n++) {
        double v = fmax(fmax(lim(x->kout[n], x->rate), lim(x->bout[n], x->bw)),
                        fmax(lim(x->kin[n], x->rate), lim(x->bin[n], x->bw)));
        if (v > t) t = v;
    }
    return t + compute;
}

static int clog2(int x)
{
    int k = 0;
    while ((1L << k) < x) k++;
    return k;
}
static int flog2(int x)
{
    int k = 0;
    while ((2L << k) <= x) k++;
    return k;
}

/* ---------------------------------------------------------------- schedules */
/* allgather/ring: p - 1 rounds, rank r sends one block to r + 1 (allgatherv/common.c). */
static double ag_ring(net_t *x, double m)
{
    round_begin(x);
    for (int r = 0; r < x->p; r++) msg(x, r, (r + 1) % x->p, m);
    return (x->p - 1) * round_end(x, 0);
}

/* allgather/bruck: distance d = 1, 2, 4, ...: rank r sends min(d, p - d) blocks to r - d. */
static double ag_bruck(net_t *x, double m)
{
    double t = 0;
    for (long d = 1; d < x->p; d *= 2) {
        round_begin(x);
        double b = (double)(d < x->p - d ? d : x->p - d) * m;
        for (int r = 0; r < x->p; r++) msg(x, r, (int)((r - d + x->p) % x->p), b);
        t += round_end(x, 0);
    }
    return t;
}

/* Folding of a non-power-of-two p (reduce_scatter/common.c mc_fold_init, allgatherv
 * recdbl_folded): q = 2^floor(log2 p), rem = p - q; even ranks below 2 rem fold into their
 * odd neighbour; virtual rank u is real rank 2u + 1 (u < rem) or u + rem. */
static int real_of(int u, int rem)
{
    return u < rem ? 2 * u + 1 : u + rem;
}
static double fold_round(net_t *x, int rem, double b, int in, double compute)
{
    if (!rem) return 0;
    round_begin(x);
    for (int r = 0; r < 2 * rem; r += 2) in ? msg(x, r, r + 1, b) : msg(x, r + 1, r, b);
    return round_end(x, compute);
}

/* allgather/recursive_doubling: fold in (one block), log2 q exchanges with v ^ 2^i of the
 * blocks gathered so far (2^i ranks' worth, folded ones counting twice), the whole result
 * back to the folded ranks. */
static double ag_recdbl(net_t *x, double m)
{
    int k = flog2(x->p), q = 1 << k, rem = x->p - q;
    double t = fold_round(x, rem, m, 1, 0);
    for (int i = 0; i < k; i++) {
        round_begin(x);
        for (int v = 0; v < q; v++) {
            int g = v >> i << i, two = rem - g < 0 ? 0 : rem - g > (1 << i) ? (1 << i) : rem - g;
            msg(x, real_of(v, rem), real_of(v ^ (1 << i), rem), ((1 << i) + two) * m);
        }
        t += round_end(x, 0);
    }
    return t + fold_round(x, rem, x->p * m, 0, 0);
}

/* scatter/binomial, root 0: distance d = 2^(L-1) .. 1, every rank v = 0 mod 2d that has
 * data sends the blocks of [v + d, min(v + 2d, p)) to v + d. */
static double sc_binomial(net_t *x, double m)
{
    double t = 0;
    for (int i = clog2(x->p) - 1; i >= 0; i--) {
        long d = 1L << i;
        round_begin(x);
        for (long v = 0; v + d < x->p; v += 2 * d) msg(x, (int)v, (int)(v + d), (double)(v + 2 * d < x->p ? d : x->p - v - d) * m);
        t += round_end(x, 0);
    }
    return t;
}

/* scatter/linear, root 0: p - 1 messages one after the other (its .cost's assumption). */
static double sc_linear(net_t *x, double m)
{
    double t = 0;
    for (int r = 1; r < x->p; r++) {
        round_begin(x);
        msg(x, 0, r, m);
        t += round_end(x, 0);
    }
    return t;
}

/* allreduce/recursive_doubling: fold in (reduce), log2 q whole-vector exchanges (reduce),
 * fold out. */
static double ar_recdbl(net_t *x, double m)
{
    int k = flog2(x->p), q = 1 << k, rem = x->p - q;
    double g = m * x->e.gamma, t = fold_round(x, rem, m, 1, g);
    for (int i = 0; i < k; i++) {
        round_begin(x);
        for (int v = 0; v < q; v++) msg(x, real_of(v, rem), real_of(v ^ (1 << i), rem), m);
        t += round_end(x, g);
    }
    return t + fold_round(x, rem, m, 0, 0);
}

/* allreduce/rabenseifner: fold in; halving i = 0 .. k-1 with v ^ 2^i, m / 2^(i+1) bytes
 * (reduced); doubling i = k-1 .. 0 with v ^ 2^i, m / 2^(i+1) bytes; fold out. */
static double ar_rabenseifner(net_t *x, double m)
{
    int k = flog2(x->p), q = 1 << k, rem = x->p - q;
    double t = fold_round(x, rem, m, 1, m * x->e.gamma);
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < k; j++) {
            int i = pass ? k - 1 - j : j;
            double b = m / (double)(2L << i);
            round_begin(x);
            for (int v = 0; v < q; v++) msg(x, real_of(v, rem), real_of(v ^ (1 << i), rem), b);
            t += round_end(x, pass ? 0 : b * x->e.gamma);
        }
    return t + fold_round(x, rem, m, 0, 0);
}

/* allreduce/ring (unsegmented): 2 (p - 1) rounds of m / p bytes to r + 1, the first p - 1
 * reduced. */
static double ar_ring(net_t *x, double m)
{
    double b = m / x->p;
    round_begin(x);
    for (int r = 0; r < x->p; r++) msg(x, r, (r + 1) % x->p, b);
    return (x->p - 1) * (2 * round_end(x, 0) + b * x->e.gamma);
}

/* allreduce/reduce_bcast: binomial reduce to 0 (d = 1, 2, ...: v = d mod 2d sends m to v - d,
 * reduced), binomial broadcast back (d = 2^(L-1) .. 1). */
static double ar_reduce_bcast(net_t *x, double m)
{
    int L = clog2(x->p);
    double t = 0;
    for (int i = 0; i < L; i++) {
        long d = 1L << i;
        round_begin(x);
        for (long v = d; v < x->p; v += 2 * d) msg(x, (int)v, (int)(v - d), m);
        t += round_end(x, m * x->e.gamma);
    }
    for (int i = L - 1; i >= 0; i--) {
        long d = 1L << i;
        round_begin(x);
        for (long v = 0; v + d < x->p; v += 2 * d) msg(x, (int)v, (int)(v + d), m);
        t += round_end(x, 0);
    }
    return t;
}

typedef double (*sched_fn)(net_t *x, double m);
static const struct {
    mc_coll_t coll;
    const char *name;
    sched_fn fn;
} scheds[] = {
    {MC_ALLGATHER, "ring", ag_ring},
    {MC_ALLGATHER, "bruck", ag_bruck},
    {MC_ALLGATHER, "recursive_doubling", ag_recdbl},
    {MC_SCATTER, "binomial", sc_binomial},
    {MC_SCATTER, "linear", sc_linear},
    {MC_ALLREDUCE, "recursive_doubling", ar_recdbl},
    {MC_ALLREDUCE, "rabenseifner", ar_rabenseifner},
    {MC_ALLREDUCE, "ring", ar_ring},
    {MC_ALLREDUCE, "reduce_bcast", ar_reduce_bcast},
};

static int across_nodes(const mc_alg_t *a)
{
    return !strncmp(a->name, "hier", 4) || !strncmp(a->name, "mo", 2);
}

double mc_cost_nodes(const mc_alg_t *alg, mc_model_t model, const mc_profile_t *prof, int N, int P,
                     const mc_cost_in_t *in, int *how)
{
    int dummy;
    if (!how) how = &dummy;
    *how = 0;
    if (!alg || N < 1 || P < 1) return NAN;
    mc_cost_in_t c = *in;
    c.p = N * P;
    c.nodes = N;
    if (N == 1) return mc_cost_eval(alg, model, prof, MC_LEVEL_INTRA, &c);
    if (across_nodes(alg)) {
        *how = 2;
        return mc_cost_eval(alg, model, prof, MC_LEVEL_INTER, &c);
    }
    for (size_t i = 0; i < sizeof scheds / sizeof scheds[0]; i++) {
        if (scheds[i].coll != alg->coll || strcmp(scheds[i].name, alg->name)) continue;
        net_t x = {.e = mc_cost_line(model, prof, MC_LEVEL_INTER), .r = mc_cost_line(model, prof, MC_LEVEL_INTRA),
                   .rate = prof->nic_rate, .bw = prof->nic_bw, .N = N, .P = P, .p = N * P};
        x.kout = calloc((size_t)N * 2, sizeof(int));
        x.bout = calloc((size_t)N * 2, sizeof(double));
        if (!x.kout || !x.bout) {
            free(x.kout), free(x.bout);
            break;
        }
        x.kin = x.kout + N, x.bin = x.bout + N;
        double t = scheds[i].fn(&x, in->m);
        free(x.kout), free(x.bout);
        *how = 1;
        return t;
    }
    return mc_cost_eval(alg, model, prof, MC_LEVEL_INTER, &c);
}
