/* Cost formulas of the classic point-to-point algorithms under any of the three models
 * (collective-models-decision Tables 1-4, re-derived per READING-NOTES).
 *
 * One formula per algorithm, written in PLogP form over four primitives of a message of m
 * bytes: L, g(m), o_s(m), o_r(m) (+ gamma). The other models enter through the paper's own
 * equivalences (§3.1):
 *   PLogP    the profile's table
 *   LogGP    g(m) = g + (m-1)G (m >= 1), o_s = o_r = o, L_PLogP = L + 2o - g, so that
 *            L_PLogP + g(m) = L + 2o + (m-1)G is LogGP's end-to-end time
 *   Hockney  L = 0, g(m) = alpha + beta m, o_s = 0, o_r(m) = alpha + beta m (the receiver is
 *            busy for the whole transfer: a reduction cannot overlap it)
 * Under the Hockney mapping most formulas reduce to the algorithm's own .cost (the unit test
 * checks that), so the three models share one schedule per algorithm.
 *
 * Layout: one table keyed by (collective, algorithm name) here rather than a field in every
 * algorithm file. An algorithm is still two hops away (registry -> its file for the code and
 * its Hockney cost; src/model -> this table for LogGP/PLogP); the formulas share the
 * primitives and are reviewed against the paper's tables side by side; algorithm files stay
 * untouched, and one without a row here (shm_*, hier*, mo*) still gets a cost through the
 * equivalent-Hockney fallback of mc_cost_eval. Adding a row is all a new p2p algorithm needs. */
#include "model.h"
#include "../shm/shm.h"
#include <math.h>
#include <string.h>

typedef struct env {
    mc_model_t model;
    const mc_net_t *net;
    double gamma;
} env_t;

/* ---------------------------------------------------------------- primitives */
static double Lat(const env_t *e)
{
    const mc_loggp_t *l = &e->net->loggp;
    switch (e->model) {
    case MC_MODEL_PLOGP:
        return e->net->plogp.L;
    case MC_MODEL_LOGGP:
        return l->L + 2 * l->o - l->g;
    default:
        return 0.0;
    }
}

static double gap(const env_t *e, double m)
{
    const mc_loggp_t *l = &e->net->loggp;
    switch (e->model) {
    case MC_MODEL_PLOGP:
        return mc_plogp_at(&e->net->plogp, e->net->plogp.g, m);
    case MC_MODEL_LOGGP:
        return l->g + (m > 1 ? m - 1 : 0) * l->G;
    default:
        return e->net->hockney.alpha + m * e->net->hockney.beta;
    }
}

static double o_s(const env_t *e, double m)
{
    switch (e->model) {
    case MC_MODEL_PLOGP:
        return mc_plogp_at(&e->net->plogp, e->net->plogp.os, m);
    case MC_MODEL_LOGGP:
        return e->net->loggp.o;
    default:
        return 0.0;
    }
}

static double o_r(const env_t *e, double m)
{
    switch (e->model) {
    case MC_MODEL_PLOGP:
        return mc_plogp_at(&e->net->plogp, e->net->plogp.orr, m);
    case MC_MODEL_LOGGP:
        return e->net->loggp.o;
    default:
        return gap(e, m);
    }
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}
/* One message end to end. */
static double hop(const env_t *e, double m)
{
    return Lat(e) + gap(e, m);
}
/* Pace of a step in which every rank sends m bytes and receives m bytes. The paper assumes a
 * full-duplex network, so that an exchange costs what a single receive does (L + g(m)); but
 * each processor still spends o_s(m) on its send and o_r(m) on its receive, one after the
 * other, and within a node the processors move the bytes themselves. A profile measured on a
 * 2-core VM had o_s + o_r = 56 us at 512 KiB against g = 29 us: L + g predicted a 2-rank ring
 * allreduce of 1 MiB at 72 us, it took 106-180 us, and the model preferred it to the shared-
 * memory algorithms. Hockney (o_s = 0, o_r = g) is unchanged; LogGP gets max(g + (m-1)G, 2o). */
static double xgap(const env_t *e, double m)
{
    return max2(gap(e, m), o_s(e, m) + o_r(e, m));
}
static double xhop(const env_t *e, double m)
{
    return Lat(e) + xgap(e, m);
}
/* Pace of a parent that receives a segment and folds it in. */
static double rr(const env_t *e, double m)
{
    return max2(gap(e, m), o_r(e, m) + e->gamma * m);
}
/* Pace of a node that receives a segment and forwards it to f children. */
static double fwd(const env_t *e, double m, int f)
{
    return max2(f * gap(e, m), o_r(e, m) + (f - 1) * gap(e, m) + o_s(e, m));
}

/* Segments: n_s of m_s bytes (segment size 0 or >= m: one segment of m). */
typedef struct seg {
    double ns, ms;
} seg_t;
static seg_t segs(double m, double ms)
{
    if (ms <= 0 || ms >= m) return (seg_t){1, m};
    return (seg_t){ceil(m / ms), ms};
}

static int clog2(int p)
{
    return mc_ceil_log2(p);
}
static int flog2(int p)
{
    return mc_floor_log2(p);
}

/* ---------------------------------------------------------------- barrier (Table 1) */
/* Best case of the paper: the p-1 reports arrive together in ~one message time, then the
 * root sends p-1 releases: 2L + p g(0). */
static double barrier_linear(const env_t *e, const mc_cost_in_t *in)
{
    return in->p > 1 ? 2 * Lat(e) + in->p * gap(e, 0) : 0;
}
static double barrier_double_ring(const env_t *e, const mc_cost_in_t *in)
{
    return in->p > 1 ? 2.0 * in->p * hop(e, 0) : 0;
}
static double barrier_recdbl(const env_t *e, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0;
    int steps = mc_is_pof2(in->p) ? flog2(in->p) : flog2(in->p) + 2;
    return steps * xhop(e, 0);
}
static double barrier_bruck(const env_t *e, const mc_cost_in_t *in)
{
    return clog2(in->p) * xhop(e, 0);
}

/* ---------------------------------------------------------------- bcast (Table 2) */
static double bcast_linear(const env_t *e, const mc_cost_in_t *in)
{
    seg_t s = segs(in->m, in->ms);
    return in->p > 1 ? Lat(e) + s.ns * (in->p - 1) * gap(e, s.ms) : 0;
}
static double bcast_pipeline(const env_t *e, const mc_cost_in_t *in)
{
    seg_t s = segs(in->m, in->ms);
    return in->p > 1 ? (in->p - 1) * hop(e, s.ms) + (s.ns - 1) * gap(e, s.ms) : 0;
}
static double bcast_binomial(const env_t *e, const mc_cost_in_t *in)
{
    seg_t s = segs(in->m, in->ms);
    return clog2(in->p) * (Lat(e) + s.ns * gap(e, s.ms));
}
/* Depth floor(log2 p) = ceil(log2(p+1)) - 1; every level costs L + f g (the second child
 * gets the segment one gap later), then each further segment one forwarding pace. */
static double binary_tree(const env_t *e, int p, seg_t s)
{
    if (p < 2) return 0;
    int f = p - 1 < 2 ? p - 1 : 2;
    return flog2(p) * (Lat(e) + f * gap(e, s.ms)) + (s.ns - 1) * fwd(e, s.ms, f);
}
static double bcast_binary(const env_t *e, const mc_cost_in_t *in)
{
    return binary_tree(e, in->p, segs(in->m, in->ms));
}
/* Halves of m/2 down the two subtrees (the larger has depth floor(log2(p/2)) + 1), then one
 * full-duplex swap of a half with the mirror node. */
static double bcast_split_binary(const env_t *e, const mc_cost_in_t *in)
{
    if (in->p < 3 || in->m < 2) return bcast_binary(e, in);
    double half = in->m / 2;
    seg_t s = segs(half, in->ms);
    int depth = flog2(in->p / 2) + 1;
    return depth * (Lat(e) + 2 * gap(e, s.ms)) + (s.ns - 1) * fwd(e, s.ms, 2) + hop(e, half);
}

/* ---------------------------------------------------------------- reduce (Table 3) */
static double reduce_linear(const env_t *e, const mc_cost_in_t *in)
{
    seg_t s = segs(in->m, in->ms);
    return in->p > 1 ? Lat(e) + s.ns * (in->p - 1) * rr(e, s.ms) : 0;
}
static double reduce_pipeline(const env_t *e, const mc_cost_in_t *in)
{
    seg_t s = segs(in->m, in->ms);
    if (in->p < 2) return 0;
    return (in->p - 1) * (Lat(e) + rr(e, s.ms)) + (s.ns - 1) * (rr(e, s.ms) + o_s(e, s.ms));
}
static double reduce_binomial(const env_t *e, const mc_cost_in_t *in)
{
    seg_t s = segs(in->m, in->ms);
    double pace = max2(gap(e, s.ms), o_r(e, s.ms) + e->gamma * s.ms + o_s(e, s.ms));
    return clog2(in->p) * (Lat(e) + s.ns * pace);
}
static double reduce_binary(const env_t *e, const mc_cost_in_t *in)
{
    seg_t s = segs(in->m, in->ms);
    if (in->p < 2) return 0;
    int f = in->p - 1 < 2 ? in->p - 1 : 2;
    return flog2(in->p) * (Lat(e) + f * rr(e, s.ms)) + (s.ns - 1) * (f * rr(e, s.ms) + o_s(e, s.ms));
}
/* k = min(radix, p-1) chains of len = ceil((p-1)/k): the first segment climbs len-1 links,
 * crosses to the root, which then folds k partials per segment. */
static double reduce_kchain(const env_t *e, const mc_cost_in_t *in)
{
    seg_t s = segs(in->m, in->ms);
    if (in->p < 2) return 0;
    int k = in->radix < 1 ? 1 : in->radix;
    if (k > in->p - 1) k = in->p - 1;
    int len = (in->p - 1 + k - 1) / k;
    return (len - 1) * (Lat(e) + rr(e, s.ms)) + Lat(e) + k * s.ns * rr(e, s.ms);
}

/* ---------------------------------------------------------------- allreduce, reduce_scatter */
/* Dependent exchange of m bytes followed by folding them. */
static double xchg_red(const env_t *e, double m)
{
    return xhop(e, m) + e->gamma * m;
}

/* k = log2 q exchanges of m, plus the fold of a non-power-of-two p: one message in (folded)
 * and one out. */
static double allreduce_recdbl(const env_t *e, const mc_cost_in_t *in)
{
    int q = 1 << flog2(in->p), k = flog2(in->p), f = q != in->p;
    if (in->p < 2) return 0;
    return k * xhop(e, in->m) + 2 * f * hop(e, in->m) + (k + f) * e->gamma * in->m;
}
/* Ring reduce-scatter: p-1 steps of one block b = m/p in n_s segments, folded on arrival. */
static double rs_ring(const env_t *e, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0;
    double b = in->m / in->p;
    seg_t s = segs(b, in->ms);
    return (in->p - 1) * (Lat(e) + s.ns * xgap(e, b / s.ns) + e->gamma * b);
}
static double allreduce_ring(const env_t *e, const mc_cost_in_t *in)
{
    return in->p < 2 ? 0 : rs_ring(e, in) + (in->p - 1) * xhop(e, in->m / in->p);
}
/* Recursive halving over q = 2^floor(log2 p): steps of m/2, m/4, ... folded. */
static double halving(const env_t *e, int q, double m)
{
    double t = 0;
    for (int b = q / 2; b >= 1; b /= 2) t += xchg_red(e, m * b / q);
    return t;
}
static double doubling(const env_t *e, int q, double m)
{
    double t = 0;
    for (int b = 1; b < q; b *= 2) t += xhop(e, m * b / q);
    return t;
}
static double allreduce_rabenseifner(const env_t *e, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0;
    int q = 1 << flog2(in->p);
    double t = halving(e, q, in->m) + doubling(e, q, in->m);
    return q != in->p ? t + 2 * hop(e, in->m) + e->gamma * in->m : t;
}
static double allreduce_reduce_bcast(const env_t *e, const mc_cost_in_t *in)
{
    return clog2(in->p) * (2 * hop(e, in->m) + e->gamma * in->m);
}
static double rs_halving(const env_t *e, const mc_cost_in_t *in)
{
    if (in->p < 2) return 0;
    int q = 1 << flog2(in->p);
    double t = halving(e, q, in->m);
    return q != in->p ? t + xchg_red(e, in->m) + hop(e, in->m / in->p) : t;
}

/* ---------------------------------------------------------------- allgather(v) (m = block) */
static double ag_ring(const env_t *e, const mc_cost_in_t *in)
{
    return (in->p - 1) * xhop(e, in->m);
}
/* Step with distance b exchanges the blocks of b ranks, min(b, rem) of them doubled by the
 * fold; a non-power-of-two p adds the fold and the return of the whole result. */
static double ag_recdbl(const env_t *e, const mc_cost_in_t *in)
{
    int q = 1 << flog2(in->p), rem = in->p - q;
    double t = 0;
    if (in->p < 2) return 0;
    for (int b = 1; b < q; b <<= 1) t += xhop(e, (b + (b < rem ? b : rem)) * in->m);
    return rem ? t + hop(e, in->m) + hop(e, in->p * in->m) : t;
}
/* Step i sends min(2^i, p - 2^i) blocks. */
static double ag_bruck(const env_t *e, const mc_cost_in_t *in)
{
    double t = 0;
    for (int b = 1; b < in->p; b <<= 1) t += xhop(e, (b < in->p - b ? b : in->p - b) * in->m);
    return t;
}

/* ---------------------------------------------------------------- rooted (m = block) */
/* The root posts p-1 transfers; its port takes them one gap apart. */
static double rooted_linear(const env_t *e, const mc_cost_in_t *in)
{
    return in->p > 1 ? Lat(e) + (in->p - 1) * gap(e, in->m) : 0;
}
/* The root's children hold subtrees of 1, 2, 4, ... ranks (the last cut to what remains):
 * one message of each subtree's blocks, one after another. */
static double rooted_binomial(const env_t *e, const mc_cost_in_t *in)
{
    double t = 0;
    for (int b = 1; b < in->p; b <<= 1) t += hop(e, (b < in->p - b ? b : in->p - b) * in->m);
    return t;
}

/* ---------------------------------------------------------------- alltoall(v) (Table 4) */
/* Every rank posts its p-1 sends and p-1 receives at once: the port paces them one gap apart
 * and the processor pays both overheads of each pair (as in an exchange). */
static double a2a_linear(const env_t *e, const mc_cost_in_t *in)
{
    return in->p > 1 ? Lat(e) + (in->p - 1) * xgap(e, in->m) : 0;
}
static double a2a_pairwise(const env_t *e, const mc_cost_in_t *in)
{
    return (in->p - 1) * xhop(e, in->m);
}
/* Every step ships the slots with one index bit set, about p/2 blocks. */
static double a2a_bruck(const env_t *e, const mc_cost_in_t *in)
{
    return clog2(in->p) * xhop(e, in->p / 2.0 * in->m);
}

/* ---------------------------------------------------------------- scan, exscan */
/* Chain: p-1 hops of a segment, the other n_s-1 follow one gap apart; the reductions on the
 * critical path as in the algorithm's Hockney cost (exscan: one fewer, none at p = 2). */
static double prefix_linear(const env_t *e, const mc_cost_in_t *in, int excl)
{
    seg_t s = segs(in->m, in->ms);
    if (in->p < 2 || in->m <= 0) return 0;
    double stages = in->p + s.ns - 2, red = !excl ? stages : in->p > 2 ? stages - 1 : 0;
    return (in->p - 1) * hop(e, s.ms) + (s.ns - 1) * gap(e, s.ms) + red * e->gamma * s.ms;
}
static double prefix_rd(const env_t *e, const mc_cost_in_t *in, int excl)
{
    int L = clog2(in->p), red = 2 * L - 1 - excl;
    if (L == 0 || in->m <= 0) return 0;
    return L * xhop(e, in->m) + (red > 0 ? red : 0) * e->gamma * in->m;
}
static double scan_linear(const env_t *e, const mc_cost_in_t *in)
{
    return prefix_linear(e, in, 0);
}
static double exscan_linear(const env_t *e, const mc_cost_in_t *in)
{
    return prefix_linear(e, in, 1);
}
static double scan_rd(const env_t *e, const mc_cost_in_t *in)
{
    return prefix_rd(e, in, 0);
}
static double exscan_rd(const env_t *e, const mc_cost_in_t *in)
{
    return prefix_rd(e, in, 1);
}

/* ---------------------------------------------------------------- the table */
typedef double (*formula_fn)(const env_t *e, const mc_cost_in_t *in);
static const struct row {
    mc_coll_t coll;
    const char *name;
    formula_fn fn;
} rows[] = {
    {MC_BARRIER, "linear", barrier_linear},
    {MC_BARRIER, "double_ring", barrier_double_ring},
    {MC_BARRIER, "recursive_doubling", barrier_recdbl},
    {MC_BARRIER, "bruck", barrier_bruck},
    {MC_BCAST, "linear", bcast_linear},
    {MC_BCAST, "pipeline", bcast_pipeline},
    {MC_BCAST, "binomial", bcast_binomial},
    {MC_BCAST, "binary", bcast_binary},
    {MC_BCAST, "split_binary", bcast_split_binary},
    {MC_REDUCE, "linear", reduce_linear},
    {MC_REDUCE, "pipeline", reduce_pipeline},
    {MC_REDUCE, "binomial", reduce_binomial},
    {MC_REDUCE, "binary", reduce_binary},
    {MC_REDUCE, "kchain", reduce_kchain},
    {MC_ALLREDUCE, "recursive_doubling", allreduce_recdbl},
    {MC_ALLREDUCE, "ring", allreduce_ring},
    {MC_ALLREDUCE, "rabenseifner", allreduce_rabenseifner},
    {MC_ALLREDUCE, "reduce_bcast", allreduce_reduce_bcast},
    {MC_REDUCE_SCATTER, "ring", rs_ring},
    {MC_REDUCE_SCATTER, "recursive_halving", rs_halving},
    {MC_REDUCE_SCATTER_BLOCK, "ring", rs_ring},
    {MC_REDUCE_SCATTER_BLOCK, "recursive_halving", rs_halving},
    {MC_ALLGATHER, "ring", ag_ring},
    {MC_ALLGATHER, "recursive_doubling", ag_recdbl},
    {MC_ALLGATHER, "bruck", ag_bruck},
    {MC_ALLGATHERV, "ring", ag_ring},
    {MC_ALLGATHERV, "recursive_doubling", ag_recdbl},
    {MC_GATHER, "linear", rooted_linear},
    {MC_GATHER, "binomial", rooted_binomial},
    {MC_GATHERV, "linear", rooted_linear},
    {MC_SCATTER, "linear", rooted_linear},
    {MC_SCATTER, "binomial", rooted_binomial},
    {MC_SCATTERV, "linear", rooted_linear},
    {MC_ALLTOALL, "linear", a2a_linear},
    {MC_ALLTOALL, "pairwise", a2a_pairwise},
    {MC_ALLTOALL, "bruck", a2a_bruck},
    {MC_ALLTOALLV, "linear", a2a_linear},
    {MC_ALLTOALLV, "pairwise", a2a_pairwise},
    {MC_SCAN, "linear", scan_linear},
    {MC_SCAN, "recursive_doubling", scan_rd},
    {MC_EXSCAN, "linear", exscan_linear},
    {MC_EXSCAN, "recursive_doubling", exscan_rd},
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

static const struct row *find(const mc_alg_t *alg)
{
    for (int i = 0; alg && i < NROWS; i++)
        if (rows[i].coll == alg->coll && !strcmp(rows[i].name, alg->name)) return &rows[i];
    return NULL;
}

static env_t env_of(mc_model_t model, const mc_profile_t *prof, mc_level_t level)
{
    return (env_t){model, &prof->net[(unsigned)level < MC_NLEVELS ? level : MC_LEVEL_INTRA], prof->gamma};
}

double mc_cost_formula(const mc_alg_t *alg, mc_model_t model, const mc_profile_t *prof, mc_level_t level,
                       const mc_cost_in_t *in)
{
    const struct row *r = find(alg);
    if (!r || (unsigned)model >= MC_NMODELS) return NAN;
    env_t e = env_of(model, prof, level);
    return r->fn(&e, in);
}

/* The straight line through the model's end-to-end time: T(0) and the slope of T(m). */
static mc_hockney_t equivalent_hockney(const env_t *e)
{
    const mc_plogp_t *t = &e->net->plogp;
    mc_hockney_t h = e->net->hockney;
    if (e->model == MC_MODEL_LOGGP) {
        h.alpha = hop(e, 1), h.beta = e->net->loggp.G;
    } else if (e->model == MC_MODEL_PLOGP) {
        h.alpha = hop(e, 0);
        h.beta = t->n > 1 ? (t->g[t->n - 1] - t->g[0]) / (t->m[t->n - 1] - t->m[0]) : 0;
    }
    h.gamma = e->gamma;
    return h;
}

mc_hockney_t mc_cost_line(mc_model_t model, const mc_profile_t *prof, mc_level_t level)
{
    env_t e = env_of(model, prof, level);
    return equivalent_hockney(&e);
}

/* Bytes of all ranks' buffers in one call (send and receive sides), whatever the algorithm,
 * with m as in mc_cost_in_t. A call whose buffers exceed the caches (mc_profile_capacity: the
 * profile's adaptive-copy capacity, else LLC + p L2) moves every byte at memory speed: the
 * shared-memory copies at t_copy instead of c_copy, and the point-to-point parameters,
 * measured in cache by the ping-pong, c_copy / t_copy times slower. */
static double footprint(mc_coll_t c, const mc_cost_in_t *in)
{
    double p = in->p > 0 ? in->p : 1, m = in->m;
    switch (c) {
    case MC_BARRIER: return 0;
    case MC_BCAST: return p * m;
    case MC_ALLGATHER:
    case MC_ALLGATHERV: return p * (p + 1) * m;
    case MC_ALLTOALL: return 2 * p * p * m;
    case MC_REDUCE_SCATTER:
    case MC_REDUCE_SCATTER_BLOCK: return p * m + m;
    default: return 2 * p * m; /* reduce, allreduce, gather(v), scatter(v), alltoallv, scans */
    }
}

static int beyond_caches(const mc_profile_t *prof, const mc_alg_t *alg, const mc_cost_in_t *in)
{
    return (prof->l3 > 0 || prof->adapt_c > 0) && footprint(alg->coll, in) > mc_profile_capacity(prof, in->p);
}

/* How much slower a byte moves beyond the caches than within them (1 when not known). */
static double mem_slowdown(const mc_profile_t *prof)
{
    return prof->c_copy > prof->t_copy && prof->t_copy > 0 ? prof->c_copy / prof->t_copy : 1;
}

/* The intra-node byte parameters of every model, s times slower; the folds too (gamma is a
 * rate within the caches: beyond them a fold streams its operands like a copy). */
static void slow_intra(mc_profile_t *p, double s)
{
    mc_net_t *x = &p->net[MC_LEVEL_INTRA];
    p->gamma *= s;
    x->hockney.beta *= s;
    x->loggp.G *= s;
    for (int i = 0; i < x->plogp.n; i++) x->plogp.os[i] *= s, x->plogp.orr[i] *= s, x->plogp.g[i] *= s;
}

/* Shared-memory algorithms: their .cost charges alpha per flag round and beta per byte of
 * data-access volume (loads + stores); fed with a point-to-point line they would pay the p2p
 * path's start-up per flag and two copies per byte, and lose everywhere (100-300 % penalties
 * measured before this mapping). Bytes move between the cores' caches at c_copy while the
 * call fits the caches, else at t_copy (CMA copies slow down by the same ratio). The folds
 * keep the in-cache gamma either way: their loads and stores are in the data-access volume,
 * which the memory rate already charges.
 * On an oversubscribed node (in->load ranks per CPU) the costs charge a rank's share of the
 * work (bytes, folds, system calls) but the ranks' shares add up on the cores: each costs
 * load times more; and a flag round waits for its peers to be scheduled (mc_sched_round:
 * load - 1 yields, in alpha). */
static double shm_cost(const mc_alg_t *alg, const mc_profile_t *prof, const mc_cost_in_t *in)
{
    double w = in->load > 1 ? in->load : 1;
    mc_hockney_t h = {.alpha = prof->shm_sync + mc_sched_round(in->load), .gamma = prof->gamma * w};
    int far = beyond_caches(prof, alg, in);
    double s = far ? mem_slowdown(prof) : 1, bw = far || prof->c_copy <= 0 ? prof->t_copy : prof->c_copy;
    h.beta = w * (bw > 0 ? 1.0 / (2 * bw) : prof->net[MC_LEVEL_INTRA].hockney.beta / 2);
    mc_cost_in_t c = *in;
    c.xmap = w * (in->xmap < 0 ? 0 : in->xmap > 0 ? in->xmap : prof->xmap);
    c.xmap_b = c.xmap > 0 && prof->cma_bw > 0 ? w * s / prof->cma_bw : 0;
    c.far = far;
    return alg->cost(&h, &c);
}

double mc_cost_eval(const mc_alg_t *alg, mc_model_t model, const mc_profile_t *prof, mc_level_t level,
                    const mc_cost_in_t *in)
{
    if (alg && alg->dav && alg->cost) return shm_cost(alg, prof, in);
    mc_profile_t slow;
    double s = alg && level == MC_LEVEL_INTRA && beyond_caches(prof, alg, in) ? mem_slowdown(prof) : 1;
    if (s > 1) {
        slow = *prof;
        slow_intra(&slow, s);
        prof = &slow;
    }
    env_t e = env_of(model, prof, level);
    if (model != MC_MODEL_HOCKNEY) {
        double t = mc_cost_formula(alg, model, prof, level, in);
        if (!isnan(t)) return t;
    }
    if (!alg || !alg->cost) return NAN;
    mc_hockney_t h = equivalent_hockney(&e);
    /* algorithms across nodes: their node steps run on shared memory, at the intra level */
    if (level == MC_LEVEL_INTER && !in->intra) {
        env_t ei = env_of(model, prof, MC_LEVEL_INTRA);
        mc_hockney_t hi = equivalent_hockney(&ei);
        mc_cost_in_t two = *in;
        two.intra = &hi;
        return alg->cost(&h, &two);
    }
    return alg->cost(&h, in);
}
