/* Performance models (src/model): PLogP tables, the profile's validation and JSON round trip,
 * and every classic formula family against values computed by hand below (not by calling the
 * formulas). Parameters are in microseconds so the arithmetic stays readable:
 *   Hockney  alpha = 1, beta = 0.001 /B                       gamma = 0.002 /B
 *   LogGP    L = 3, o = 1, g = 2, G = 0.001 /B
 *   PLogP    L = 4, points m = 0: o_s 1, o_r 1, g 2;  m = 1000: o_s 2, o_r 5, g 5
 *            i.e. o_s(m) = 1 + 0.001m, o_r(m) = 1 + 0.004m, g(m) = 2 + 0.003m (also beyond
 *            1000: the last slope extrapolates). A step in which every rank sends and
 *            receives (an exchange) paces at x(m) = max(g(m), o_s(m) + o_r(m)) = 2 + 0.005m. */
#include "model/model.h"
#include "shm/shm.h"
#include "unit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static mc_profile_t prof;

static void setup(void)
{
    mc_profile_default(&prof);
    prof.gamma = 0.002;
    mc_net_t *n = &prof.net[MC_LEVEL_INTRA];
    n->hockney = (mc_hockney_t){.alpha = 1, .beta = 0.001};
    n->loggp = (mc_loggp_t){.L = 3, .o = 1, .g = 2, .G = 0.001};
    n->plogp = (mc_plogp_t){.L = 4, .n = 2, .m = {0, 1000}, .os = {1, 2}, .orr = {1, 5}, .g = {2, 5}};
}

static double ev(mc_coll_t c, const char *alg, mc_model_t model, int p, double m, double ms, int radix)
{
    const mc_alg_t *a = mc_alg_find(c, alg);
    if (!a) return NAN;
    mc_cost_in_t in = {.p = p, .m = m, .ms = ms > 0 ? ms : m, .radix = radix, .sockets = 1};
    return mc_cost_eval(a, model, &prof, MC_LEVEL_INTRA, &in);
}

#define NEAR(got, want) near_((got), (want), __LINE__)
static void near_(double got, double want, int line)
{
    CHECK(fabs(got - want) <= 1e-9 * (1 + fabs(want)), "line %d: got %.9g want %.9g", line, got, want);
}

static void test_plogp_table(void)
{
    const mc_plogp_t *t = &prof.net[MC_LEVEL_INTRA].plogp;
    NEAR(mc_plogp_at(t, t->g, 500), 3.5);   /* halfway between 2 and 5 */
    NEAR(mc_plogp_at(t, t->g, 2000), 8.0);  /* 5 + 1000 * 0.003 */
    NEAR(mc_plogp_at(t, t->orr, 250), 2.0); /* 1 + 250 * 0.004 */
    NEAR(mc_plogp_at(t, t->os, -5), 1.0);   /* clamped below the first point */
}

static void test_barrier(void)
{
    /* linear LogGP, p = 6: paper T_min = (P-2) g + 2 (L + 2o) = 4*2 + 2*5 = 18 */
    NEAR(ev(MC_BARRIER, "linear", MC_MODEL_LOGGP, 6, 0, 0, 0), 18);
    /* linear PLogP, p = 6: 2L + P g(0) = 8 + 12 = 20 */
    NEAR(ev(MC_BARRIER, "linear", MC_MODEL_PLOGP, 6, 0, 0, 0), 20);
    /* recursive doubling PLogP, p = 6: (floor(log2 6) + 2) (L + g) = 4 * 6 = 24 */
    NEAR(ev(MC_BARRIER, "recursive_doubling", MC_MODEL_PLOGP, 6, 0, 0, 0), 24);
    /* p = 8: log2 8 = 3 steps = 18 */
    NEAR(ev(MC_BARRIER, "recursive_doubling", MC_MODEL_PLOGP, 8, 0, 0, 0), 18);
    /* bruck PLogP, p = 6: ceil(log2 6) (L + g) = 3 * 6 = 18 */
    NEAR(ev(MC_BARRIER, "bruck", MC_MODEL_PLOGP, 6, 0, 0, 0), 18);
    /* double ring PLogP, p = 3: 2 P (L + g) = 6 * 6 = 36 */
    NEAR(ev(MC_BARRIER, "double_ring", MC_MODEL_PLOGP, 3, 0, 0, 0), 36);
    /* double ring Hockney, p = 3: 2 P alpha = 6 */
    NEAR(ev(MC_BARRIER, "double_ring", MC_MODEL_HOCKNEY, 3, 0, 0, 0), 6);
}

static void test_bcast(void)
{
    /* pipeline PLogP p = 4, m = 1000, m_s = 250 (n_s = 4, g(250) = 2.75):
     * (P-1)(L + g) + (n_s-1) g = 3 * 6.75 + 3 * 2.75 = 28.5 */
    NEAR(ev(MC_BCAST, "pipeline", MC_MODEL_PLOGP, 4, 1000, 250, 0), 28.5);
    /* same in LogGP, paper Table 2: (P-1)(L + 2o + (m_s-1)G) + (n_s-1)(g + (m_s-1)G)
     * = 3 * 5.249 + 3 * 2.249 = 22.494 */
    NEAR(ev(MC_BCAST, "pipeline", MC_MODEL_LOGGP, 4, 1000, 250, 0), 22.494);
    /* same in Hockney: (P + n_s - 2)(alpha + m_s beta) = 6 * 1.25 = 7.5 */
    NEAR(ev(MC_BCAST, "pipeline", MC_MODEL_HOCKNEY, 4, 1000, 250, 0), 7.5);
    /* linear LogGP p = 5, m = 100: L + 2o - g + n_s (P-1)((m-1)G + g) = 3 + 4 * 2.099 = 11.396 */
    NEAR(ev(MC_BCAST, "linear", MC_MODEL_LOGGP, 5, 100, 0, 0), 11.396);
    /* linear PLogP: L + n_s (P-1) g(100) = 4 + 4 * 2.3 = 13.2 */
    NEAR(ev(MC_BCAST, "linear", MC_MODEL_PLOGP, 5, 100, 0, 0), 13.2);
    /* binomial PLogP p = 5, m = 2000, m_s = 1000: ceil(log2 5)(L + n_s g(1000)) = 3 * 14 = 42 */
    NEAR(ev(MC_BCAST, "binomial", MC_MODEL_PLOGP, 5, 2000, 1000, 0), 42);
    /* binomial LogGP: 3 (L + 2o + (m_s-1)G + (n_s-1)(g + (m_s-1)G)) = 3 * (5.999 + 2.999) = 26.994 */
    NEAR(ev(MC_BCAST, "binomial", MC_MODEL_LOGGP, 5, 2000, 1000, 0), 26.994);
    /* binary PLogP p = 7, m = 3000, m_s = 500 (n_s = 6; g = 3.5, o_s = 1.5, o_r = 3):
     * (ceil(log2 8) - 1)(L + 2g) + (n_s-1) max{2g, o_r + g + o_s} = 2 * 11 + 5 * max{7, 8} = 62 */
    NEAR(ev(MC_BCAST, "binary", MC_MODEL_PLOGP, 7, 3000, 500, 0), 62);
    /* split-binary PLogP p = 6, m = 2000, m_s = 500: halves of 1000 in 2 segments of 500, the
     * larger subtree has depth floor(log2 3) + 1 = 2: 2 (L + 2 g(500)) + 1 * max{7, 8} +
     * swap L + g(1000) = 22 + 8 + 9 = 39 */
    NEAR(ev(MC_BCAST, "split_binary", MC_MODEL_PLOGP, 6, 2000, 500, 0), 39);
}

static void test_reduce(void)
{
    /* pipeline PLogP p = 4, m = 1000, m_s = 500: r = max{g(500), o_r(500) + gamma 500}
     * = max{3.5, 3 + 1} = 4; (P-1)(L + r) + (n_s-1)(r + o_s(500)) = 3 * 8 + 1 * 5.5 = 29.5 */
    NEAR(ev(MC_REDUCE, "pipeline", MC_MODEL_PLOGP, 4, 1000, 500, 0), 29.5);
    /* binomial PLogP p = 8, m = 1000: ceil(log2 8)(L + max{g, o_r + gamma m + o_s})
     * = 3 * (4 + max{5, 5 + 2 + 2}) = 39 */
    NEAR(ev(MC_REDUCE, "binomial", MC_MODEL_PLOGP, 8, 1000, 0, 0), 39);
    /* linear LogGP p = 4, m = 100: the first partial lands after L + 2o + 99G = 5.099, the
     * others max{g + 99G, o + gamma m} = max{2.099, 1.2} apart: 5.099 + 2 * 2.099 = 9.297 */
    NEAR(ev(MC_REDUCE, "linear", MC_MODEL_LOGGP, 4, 100, 0, 0), 9.297);
    /* linear Hockney: n_s (P-1)(alpha + m beta + m gamma) = 3 * 1.3 = 3.9 */
    NEAR(ev(MC_REDUCE, "linear", MC_MODEL_HOCKNEY, 4, 100, 0, 0), 3.9);
    /* k-chain PLogP p = 7, radix 3, m = 1000: 3 chains of 2, r(1000) = max{5, 5 + 2} = 7:
     * one link (L + r) + the hop to the root L + 3 partials * r = 11 + 4 + 21 = 36 */
    NEAR(ev(MC_REDUCE, "kchain", MC_MODEL_PLOGP, 7, 1000, 0, 3), 36);
}

static void test_allreduce_rs(void)
{
    /* recursive doubling PLogP p = 6, m = 1000: q = 4, k = 2 exchanges, one fold (a message
     * in, a message out): k (L + x(1000)) + 2 (L + g(1000)) + (k + 1) gamma m
     * = 2 * 11 + 2 * 9 + 3 * 2 = 46 */
    NEAR(ev(MC_ALLREDUCE, "recursive_doubling", MC_MODEL_PLOGP, 6, 1000, 0, 0), 46);
    /* ring PLogP p = 4, m = 4000, blocks of 1000: reduce-scatter 3 (L + x(1000) + gamma 1000)
     * = 39, allgather 3 (L + x(1000)) = 33: 72 */
    NEAR(ev(MC_ALLREDUCE, "ring", MC_MODEL_PLOGP, 4, 4000, 0, 0), 72);
    /* segmented at 500: reduce-scatter steps L + 2 x(500) + 2 = 15, 3 * 15 + 33 = 78 */
    NEAR(ev(MC_ALLREDUCE, "ring", MC_MODEL_PLOGP, 4, 4000, 500, 0), 78);
    /* Rabenseifner PLogP p = 4, m = 4000: halving 2000 (4 + x(2000) = 12, + 4) = 20 and 1000
     * (4 + 7 + 2) = 13; doubling 1000 (11) and 2000 (16): 33 + 27 = 60 */
    NEAR(ev(MC_ALLREDUCE, "rabenseifner", MC_MODEL_PLOGP, 4, 4000, 0, 0), 60);
    /* reduce-scatter ring PLogP p = 4, m = 4000: 39 (as above) */
    NEAR(ev(MC_REDUCE_SCATTER, "ring", MC_MODEL_PLOGP, 4, 4000, 0, 0), 39);
    /* recursive halving PLogP p = 4, m = 4000: 33 (the halving above) */
    NEAR(ev(MC_REDUCE_SCATTER_BLOCK, "recursive_halving", MC_MODEL_PLOGP, 4, 4000, 0, 0), 33);
    /* LogGP: an exchange paces at max(g + (m-1)G, 2o); with o = 3 (2o = 6 > g + 99 G = 2.099)
     * a ring allgather of p = 3, m = 100 costs 2 (L + 2o - g + 6) = 2 * 13 = 26 */
    mc_profile_t q = prof;
    q.net[MC_LEVEL_INTRA].loggp.o = 3;
    mc_cost_in_t in = {.p = 3, .m = 100, .ms = 100, .radix = 2, .sockets = 1};
    NEAR(mc_cost_eval(mc_alg_find(MC_ALLGATHER, "ring"), MC_MODEL_LOGGP, &q, MC_LEVEL_INTRA, &in), 26);
}

static void test_gather_alltoall_scan(void)
{
    /* pairwise alltoall PLogP p = 4, m = 1000: the paper's (P-1)(L + g(m)) = 27 assumes full
     * duplex; every rank also sends and receives: (P-1)(L + x(m)) = 3 * 11 = 33 */
    NEAR(ev(MC_ALLTOALL, "pairwise", MC_MODEL_PLOGP, 4, 1000, 0, 0), 33);
    /* linear alltoall PLogP p = 4, m = 1000: all posted at once, L + (P-1) x(m) = 4 + 21 = 25 */
    NEAR(ev(MC_ALLTOALL, "linear", MC_MODEL_PLOGP, 4, 1000, 0, 0), 25);
    /* binomial gather PLogP p = 5, m = 100: subtrees 1, 2, 1 blocks:
     * (4 + 2.3) + (4 + 2.6) + (4 + 2.3) = 19.2 */
    NEAR(ev(MC_GATHER, "binomial", MC_MODEL_PLOGP, 5, 100, 0, 0), 19.2);
    /* linear scatter LogGP p = 5, m = 100: L + 2o - g + 4 (g + 99 G) = 3 + 8.396 = 11.396 */
    NEAR(ev(MC_SCATTER, "linear", MC_MODEL_LOGGP, 5, 100, 0, 0), 11.396);
    /* ring allgather LogGP p = 3, m = 1000: 2 (L + 2o + 999 G) = 2 * 5.999 = 11.998 */
    NEAR(ev(MC_ALLGATHER, "ring", MC_MODEL_LOGGP, 3, 1000, 0, 0), 11.998);
    /* linear scan PLogP p = 3, m = 1000, m_s = 500: 2 hops of 7.5, one more gap 3.5, and
     * p + n_s - 2 = 3 reductions of 500 bytes (1 each): 15 + 3.5 + 3 = 21.5 */
    NEAR(ev(MC_SCAN, "linear", MC_MODEL_PLOGP, 3, 1000, 500, 0), 21.5);
}

/* The classic formulas under the Hockney mapping equal each algorithm's own .cost (same
 * schedule), except linear alltoall(v), whose .cost overlaps all latencies. */
static void test_hockney_consistency(void)
{
    mc_hockney_t h = prof.net[MC_LEVEL_INTRA].hockney;
    h.gamma = prof.gamma;
    static const int ps[] = {2, 3, 4, 5, 7, 8, 9};
    static const double ms[][2] = {{1000, 1000}, {4096, 512}, {777, 100}};
    int compared = 0;
    for (int c = 0; c < MC_NCOLL; c++)
        for (int i = 0; i < mc_alg_count(c); i++) {
            const mc_alg_t *a = mc_alg_at(c, i);
            if ((c == MC_ALLTOALL || c == MC_ALLTOALLV) && !strcmp(a->name, "linear")) continue;
            for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
                for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++) {
                    mc_cost_in_t in = {.p = ps[k], .m = ms[j][0], .ms = ms[j][1], .radix = 3, .sockets = 1};
                    double f = mc_cost_formula(a, MC_MODEL_HOCKNEY, &prof, MC_LEVEL_INTRA, &in);
                    if (isnan(f)) continue;
                    double own = a->cost(&h, &in);
                    compared++;
                    CHECK(fabs(f - own) <= 1e-9 * (1 + fabs(own)),
                          "%s/%s p=%d m=%g ms=%g: formula %.9g, .cost %.9g", mc_coll_name(c), a->name, in.p,
                          in.m, in.ms, f, own);
                }
        }
    CHECK(compared >= 38 * 21, "only %d comparisons: classic rows missing", compared);
}

/* Every registered algorithm gets a finite cost under every model (fallback included). */
static void test_every_alg(void)
{
    for (int c = 0; c < MC_NCOLL; c++)
        for (int i = 0; i < mc_alg_count(c); i++)
            for (int model = 0; model < MC_NMODELS; model++) {
                const mc_alg_t *a = mc_alg_at(c, i);
                mc_cost_in_t in = {.p = 8, .m = 65536, .ms = 8192, .radix = 4, .sockets = 2};
                double t = mc_cost_eval(a, model, &prof, MC_LEVEL_INTER, &in);
                CHECK(isfinite(t) && t >= 0, "%s/%s under %s: %g", mc_coll_name(c), a->name,
                      mc_model_name(model), t);
            }
}

static void expect_load_error(const char *json, const char *needle)
{
    char path[] = "/tmp/mcoll-test-profile-XXXXXX", err[256] = "";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    fputs(json, f);
    fclose(f);
    mc_profile_t p;
    int rc = mc_profile_load(path, &p, err, sizeof err);
    CHECK(rc == -1 && strstr(err, needle), "load of bad profile: rc %d, error '%s' lacks '%s'", rc, err,
          needle);
    unlink(path);
}

/* Shared-memory algorithms under mc_cost_eval: alpha = shm sync, beta = 1 / (2 copy rate)
 * per byte of access volume (c_copy while the working set fits LLC + p L2), xmap per
 * CMA copy; the same under every model. Hand-computed for bcast shm_pipe and shm_direct
 * and scatterv shm_direct (scatter's stages from 1 MiB: the pipe's cost). */
static void test_shm_mapping(const mc_profile_t *d)
{
    mc_profile_t p = *d;
    p.shm_sync = 1e-6, p.xmap = 3e-6, p.t_copy = 1e9, p.c_copy = 4e9, p.l2 = 1 << 20, p.l3 = 8 << 20;
    p.cma_bw = 5e9;
    const mc_alg_t *pipe = mc_alg_find(MC_BCAST, "shm_pipe"), *direct = mc_alg_find(MC_BCAST, "shm_direct");
    const mc_alg_t *sdirect = mc_alg_find(MC_SCATTERV, "shm_direct");
    CHECK(pipe && direct && sdirect, "bcast and scatter shm algorithms registered");
    if (!pipe || !direct || !sdirect) return;
    mc_cost_in_t small = {.p = 4, .m = 1024, .ms = 1024, .radix = 4, .sockets = 1};
    mc_cost_in_t big = small;
    big.m = big.ms = 64 << 20;
    for (int m = 0; m < MC_NMODELS; m++) {
        /* pipe: 2 syncs + 2 beta * 1.25 m, the readers' copies of lines the root just wrote
         * counted twice (MC_XCORE); working set (DAV 2pm) / 2 = 4 KiB: in the caches */
        NEAR(mc_cost_eval(pipe, (mc_model_t)m, &p, MC_LEVEL_INTRA, &small), 2e-6 + 2 * 2.5 * 1024 / 8e9);
        /* scatterv direct: 2 syncs + one CMA read per rank: xmap + m / cma_bw (p = 4: two readers
         * per root buffer, 2m); the call's 256 MiB exceed the caches (8 MiB + 4 x 1 MiB): CMA
         * c_copy / t_copy = 4 times slower */
        NEAR(mc_cost_eval(sdirect, (mc_model_t)m, &p, MC_LEVEL_INTRA, &big),
             2e-6 + 3e-6 + (64.0 * 1048576) * 2 * 4 / 5e9);
        /* bcast direct in the caches: 3 syncs + (p-1) CMA copies: (p-1) xmap + m (p-1)/p / cma_bw */
        NEAR(mc_cost_eval(direct, (mc_model_t)m, &p, MC_LEVEL_INTRA, &small), 3e-6 + 1024 * 0.75 / 5e9 + 3 * 3e-6);
        /* beyond them the ranks vote to stage: the posting round (2 syncs, MC_POST_ROUND: the
         * flag line and the post's) + the pipe (2 syncs) at t_copy; with trials (the default)
         * the faster of that and CMA (3 syncs, 3 start-ups, 3/4 of the message at cma_bw 4 times
         * slower beyond the caches) plus the bursts that try the other, here 1.5 times slower:
         * 3 calls of every 64 on every 16th turn */
        double stage = 4e-6 + 2.5 * (64.0 * 1048576) / 2e9, cma = 12e-6 + 0.75 * (64.0 * 1048576) * 4 / 5e9;
        NEAR(mc_cost_eval(direct, (mc_model_t)m, &p, MC_LEVEL_INTRA, &big),
             mc_trials_on() ? cma + 3.0 / 64 / 16 * (stage - cma) : stage);
        /* zero copy (xmap < 0): 3 syncs + every rank copying (p-1)/p of the message */
        mc_cost_in_t zc = big;
        zc.xmap = -1;
        NEAR(mc_cost_eval(direct, (mc_model_t)m, &p, MC_LEVEL_INTRA, &zc), 3e-6 + 0.75 * (64.0 * 1048576) / 1e9);
        /* a point-to-point algorithm beyond the caches: the intra byte parameters 4 times slower */
        const mc_alg_t *lin = mc_alg_find(MC_BCAST, "linear");
        mc_profile_t q = p;
        q.c_copy = 0; /* no slowdown: the parameters scaled by hand instead */
        q.net[MC_LEVEL_INTRA].hockney.beta *= 4;
        q.net[MC_LEVEL_INTRA].loggp.G *= 4;
        for (int i = 0; i < q.net[MC_LEVEL_INTRA].plogp.n; i++) {
            q.net[MC_LEVEL_INTRA].plogp.os[i] *= 4;
            q.net[MC_LEVEL_INTRA].plogp.orr[i] *= 4;
            q.net[MC_LEVEL_INTRA].plogp.g[i] *= 4;
        }
        if (lin) NEAR(mc_cost_eval(lin, (mc_model_t)m, &p, MC_LEVEL_INTRA, &big),
                      mc_cost_eval(lin, (mc_model_t)m, &q, MC_LEVEL_INTRA, &big));
        /* a reduction's folds too: gamma is their rate within the caches (mutation: the fold
         * rate kept beyond them) */
        const mc_alg_t *rbin = mc_alg_find(MC_REDUCE, "binomial");
        q.gamma *= 4;
        if (rbin)
            NEAR(mc_cost_eval(rbin, (mc_model_t)m, &p, MC_LEVEL_INTRA, &big),
                 mc_cost_eval(rbin, (mc_model_t)m, &q, MC_LEVEL_INTRA, &big));
        CHECK(rbin != NULL, "reduce binomial registered");
        /* within the caches nothing is scaled */
        mc_profile_t r = p;
        r.c_copy = 0;
        if (lin) NEAR(mc_cost_eval(lin, (mc_model_t)m, &p, MC_LEVEL_INTRA, &small),
                      mc_cost_eval(lin, (mc_model_t)m, &r, MC_LEVEL_INTRA, &small));
    }
    /* scan / exscan shm, p = 2, 256 KiB: windows of I_max = 128 KiB, 2 beta a byte = 1 / c_copy
     * (working set 2pm = 1 MiB: in the caches); (n + 1) syncs and, from 8 KiB, the far votes'
     * posting round (MC_POST_ROUND syncs), the first window copied in, its copy-out MC_XCORE =
     * 2 times a copy plus the folds (scan 1, exscan none: rank 1 copies x_0), then the second
     * window's (one copy + folds). From 3 ranks the last rank reads p - 2 more slots a byte, a
     * copy each. gamma: the built-in one. */
    const mc_alg_t *scan = mc_alg_find(MC_SCAN, "shm"), *exscan = mc_alg_find(MC_EXSCAN, "shm");
    CHECK(scan && exscan, "scan and exscan shm registered");
    if (scan && exscan) {
        double I = 128 * 1024, c = I / 4e9, g = I * p.gamma, v = MC_POST_ROUND * 1e-6;
        mc_cost_in_t s2 = {.p = 2, .m = 2 * I, .ms = 2 * I, .radix = 4, .sockets = 1};
        NEAR(mc_cost_eval(exscan, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &s2), 3e-6 + v + c + 2 * c + c);
        NEAR(mc_cost_eval(scan, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &s2),
             3e-6 + v + c + (2 * c + g) + (c + g));
        /* 192 KiB: the second window holds half as much */
        s2.m = s2.ms = 1.5 * I;
        NEAR(mc_cost_eval(exscan, MC_MODEL_LOGGP, &p, MC_LEVEL_INTRA, &s2), 3e-6 + v + c + 2 * c + c / 2);
        /* 4 KiB: no far votes */
        s2.m = s2.ms = 4096;
        NEAR(mc_cost_eval(exscan, MC_MODEL_LOGGP, &p, MC_LEVEL_INTRA, &s2), 2e-6 + 3 * c / 32);
        /* one window of 64 KiB at p = 3: exscan folds once, scan twice; one more slot read */
        mc_cost_in_t s3 = {.p = 3, .m = I / 2, .ms = I / 2, .radix = 4, .sockets = 1};
        NEAR(mc_cost_eval(exscan, MC_MODEL_HOCKNEY, &p, MC_LEVEL_INTRA, &s3),
             2e-6 + v + c / 2 + (c + c / 2 + g / 2));
        NEAR(mc_cost_eval(scan, MC_MODEL_HOCKNEY, &p, MC_LEVEL_INTRA, &s3),
             2e-6 + v + c / 2 + (c + c / 2 + g));
        /* an oversubscribed node of load 4: each flag round MC_YIELD_ROUND x 3 more (the
         * other ranks of the waiter's core run first; the votes' round one), every copy 4
         * times (the ranks' shares add up on the cores), the chain's reads and folds twice
         * (its ranks fold half the last one's on average) */
        s3.load = 4;
        NEAR(mc_cost_eval(scan, MC_MODEL_HOCKNEY, &p, MC_LEVEL_INTRA, &s3),
             2 * (1e-6 + 3 * MC_YIELD_ROUND) + v + 3 * MC_YIELD_ROUND + 4 * (c / 2 + c) + 2 * (c / 2) +
                 2 * g);
        /* a balanced algorithm at load 2.5 (allreduce shm_ma, 5 ranks, 64 KiB: one window of
         * 5 flag rounds, and the copy-out's round, a flag hand-over without its scheduling
         * share): rounds MC_YIELD_ROUND x 1.5 more, the rest (bytes, folds) x 2.5; its
         * direct algorithm on ordinary buffers: one posting round more, MC_POST_ROUND line
         * hand-overs and one scheduling round, and the share of the staged call it loses to
         * the round (MC_STAGE_LOAD of shm_ma's cost); without load the round alone */
        const mc_alg_t *ama = mc_alg_find(MC_ALLREDUCE, "shm_ma");
        mc_cost_in_t l0 = {.p = 5, .m = 65536, .ms = 65536, .radix = 4, .sockets = 1, .xmap = -1}, l1 = l0;
        l1.load = 2.5;
        double t0 = mc_cost_eval(ama, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &l0), a = p.shm_sync;
        NEAR(mc_cost_eval(ama, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &l1),
             5 * (a + 1.5 * MC_YIELD_ROUND) + a + 2.5 * (t0 - 6 * a));
        const mc_alg_t *adir = mc_alg_find(MC_ALLREDUCE, "shm_direct");
        l1.xmap = 0; /* ordinary buffers: the profile's CMA start-up, so it stages */
        double tma = mc_cost_eval(ama, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &l1);
        NEAR(mc_cost_eval(adir, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &l1),
             (1 + MC_STAGE_LOAD) * tma + MC_POST_ROUND * a + 1.5 * MC_YIELD_ROUND);
        l0.xmap = 0;
        NEAR(mc_cost_eval(adir, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &l0),
             mc_cost_eval(ama, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &l0) + MC_POST_ROUND * a);
    }
    /* allreduce at 2 ranks, 24 KiB (in the caches, 2 beta a byte = 1 / c_copy): shm_dpml's
     * symmetric exchange (up to MC_SYM_MAX), one flag round and DAV 10s; shm_ma two step rounds
     * and the copy-out's, DAV 9s; both fold s/2 a rank. Mutations: the copy-out round left out
     * of shm_ma's cost, or the symmetric path's cost only up to 16 KiB, fail it. */
    const mc_alg_t *ard = mc_alg_find(MC_ALLREDUCE, "shm_dpml"), *arm = mc_alg_find(MC_ALLREDUCE, "shm_ma");
    CHECK(ard && arm, "allreduce shm_dpml and shm_ma registered");
    if (ard && arm) {
        mc_cost_in_t q = {.p = 2, .m = 24576, .ms = 24576, .radix = 4, .sockets = 1};
        double b = 1 / (2 * 4e9), g = q.m / 2 * p.gamma;
        NEAR(mc_cost_eval(ard, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &q), 1e-6 + 10 * q.m / 2 * b + g);
        NEAR(mc_cost_eval(arm, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &q), 3e-6 + 9 * q.m / 2 * b + g);
        /* 2 ranks, 128 KiB: still the symmetric exchange (mc_sym_max: DAV 10s, below the
         * two-sync path's 11s); 3 ranks, 48 KiB: the two-sync path, two flag rounds and DAV
         * s(7p-3) = 18s. Mutations: one limit for every p (either), fail it. */
        q.m = q.ms = 131072, g = q.m / 2 * p.gamma;
        NEAR(mc_cost_eval(ard, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &q), 1e-6 + 10 * q.m / 2 * b + g);
        mc_cost_in_t t = {.p = 3, .m = 49152, .ms = 49152, .radix = 4, .sockets = 1};
        NEAR(mc_cost_eval(ard, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &t),
             2e-6 + 18 * t.m / 3 * b + t.m * 2 / 3 * p.gamma);
    }
    /* the column-split scan: no candidate below 6 ranks; at 8, 256 KiB (two windows): four
     * flag rounds a window, copy-in, the copy-out (7/8 of it MC_XCORE times a copy), the
     * column's reads of the 7 other slots (7/8 of a copy a byte) and 7/8 of a fold a byte;
     * exscan folds 6/8 */
    const mc_alg_t *ma = mc_alg_find(MC_SCAN, "shm_ma"), *exma = mc_alg_find(MC_EXSCAN, "shm_ma");
    CHECK(ma && exma, "scan and exscan shm_ma registered");
    if (ma && exma && scan) {
        double I = 128 * 1024, c = I / 4e9, g = I * p.gamma, out = (7 * MC_XCORE + 1) / 8;
        mc_cost_in_t s8 = {.p = 5, .m = 2 * I, .ms = 2 * I, .radix = 4, .sockets = 1};
        CHECK(isinf(mc_cost_eval(ma, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &s8)), "shm_ma: no candidate at 5 ranks");
        s8.p = 8;
        NEAR(mc_cost_eval(ma, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &s8),
             8e-6 + 2 * c * (1 + out) + 2 * c * 7 / 8 + 2 * g * 7 / 8);
        NEAR(mc_cost_eval(exma, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &s8),
             8e-6 + 2 * c * (1 + out) + 2 * c * 7 / 8 + 2 * g * 6 / 8);
        /* beyond the caches (a capacity of 1 MiB) the copy-out's hand-overs count one copy
         * each, at t_copy: four times c */
        mc_profile_t q = p;
        q.adapt_c = 1 << 20;
        NEAR(mc_cost_eval(ma, MC_MODEL_PLOGP, &q, MC_LEVEL_INTRA, &s8),
             8e-6 + 4 * (2 * c * 2 + 2 * c * 7 / 8) + 2 * g * 7 / 8);
        /* at load 4: the windowed scan's fewer rounds win at 4 KiB (its far votes start at 8
         * KiB), and the columns win a large scan */
        s8.load = 4;
        s8.m = s8.ms = 4096;
        CHECK(mc_cost_eval(scan, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &s8) <
                  mc_cost_eval(ma, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &s8),
              "scan of 4 KiB at 8 ranks, load 4: shm");
        s8.m = s8.ms = 65536;
        CHECK(mc_cost_eval(scan, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &s8) >
                  mc_cost_eval(ma, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &s8), "scan of 64 KiB at 8 ranks, load 4: shm_ma");
    }
    small.xmap = -1; /* buffers in the shared heap: no CMA, a plain copy at the cache rate */
    NEAR(mc_cost_eval(direct, MC_MODEL_LOGGP, &p, MC_LEVEL_INTRA, &small), 3e-6 + 2 * 1024 * 0.75 / 8e9);
}

/* The uniform data movers with trials (MCOLL_SHM_TRIAL, allgatherv/shm_common.c): from 32 KiB
 * of user buffers a call costs its trial's faster way; a pipe's calls take the direct
 * algorithm's posting round only on the calls that share samples (7 of 64). And on an
 * oversubscribed node the direct algorithm's waits for every rank: two scheduling rounds each
 * where alpha counts one. Run twice by ctest: unit_models_notrial sets MCOLL_SHM_TRIAL=0. */
static void test_mover_trials(const mc_profile_t *d)
{
    mc_profile_t p = *d;
    p.shm_sync = 1e-6, p.xmap = 3e-6, p.t_copy = 1e9, p.c_copy = 4e9, p.l2 = 1 << 20, p.l3 = 8 << 20;
    p.cma_bw = 5e9;
    const mc_alg_t *pipe = mc_alg_find(MC_BCAST, "shm_pipe"), *direct = mc_alg_find(MC_BCAST, "shm_direct");
    const mc_alg_t *agd = mc_alg_find(MC_ALLGATHER, "shm_direct"),
                   *agvd = mc_alg_find(MC_ALLGATHERV, "shm_direct");
    CHECK(pipe && direct && agd && agvd, "bcast and allgather(v) shm algorithms registered");
    if (!pipe || !direct || !agd || !agvd) return;
    /* bcast of 64 KiB at 4 ranks (user bytes 256 KiB, in the caches: beta = 1 / 8e9): the pipe
     * 2 syncs + 2 beta 1.25 MC_XCORE m; CMA 3 syncs + 3 start-ups + 3/4 m / cma_bw, which is
     * more than 1.5 times faster, so the pipe's way is tried on every 16th turn only */
    mc_cost_in_t in = {.p = 4, .m = 65536, .ms = 65536, .radix = 4, .sockets = 1};
    double own = 2e-6 + 2 * 1.25 * MC_XCORE * 65536 / 8e9, cma = 12e-6 + 0.75 * 65536 / 5e9, round = 2e-6;
    double share = 3.0 / 64 / 16, tried = mc_trials_on();
    NEAR(mc_cost_eval(pipe, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in),
         tried ? cma + share * (own + 7.0 / 64 * round - cma) : own);
    /* the direct algorithm: its rule (blocks below 2 MiB take CMA), or its trial between
     * staging after the posting round and CMA */
    NEAR(mc_cost_eval(direct, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in),
         tried ? cma + share * (round + own - cma) : cma);
    /* below 32 KiB of user buffers no trial: 4 KiB at 4 ranks */
    in.m = in.ms = 4096;
    NEAR(mc_cost_eval(pipe, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in),
         2e-6 + 2 * 1.25 * MC_XCORE * 4096 / 8e9);
    /* allgather with zero copy, 1 KiB at 4 ranks on 2 CPUs (load 2): alpha = sync + one
     * scheduling round, bytes twice as slow (beta 2 / 8e9), and the direct algorithm's two
     * waits for every rank one scheduling round more each; its own block and the p - 1 it
     * reads: 2 beta p m */
    mc_cost_in_t zc = {.p = 4, .m = 1024, .ms = 1024, .radix = 4, .sockets = 1, .xmap = -1, .load = 2};
    double y = mc_sched_round(2), a = 1e-6 + y;
    NEAR(mc_cost_eval(agd, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &zc),
         2 * a + 2 * y + 2 * (2 / 8e9) * 4 * 1024);
    /* allgatherv has no trial: its rule at 64 KiB blocks (CMA) */
    in.m = in.ms = 65536;
    NEAR(mc_cost_eval(agvd, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in),
         2e-6 + 2 * 65536 / 8e9 + 3 * 3e-6 + 3 * 65536 / 5e9);
}

/* Without CMA (in->nocma: the node's probe refused it, or MCOLL_SHM_PATH=copy|zero) nothing
 * tries single copies: on ordinary buffers a direct algorithm costs its posting round and its
 * pipe (it always stages), a pipe its own copies, a hybrid its pipe; with heap buffers the
 * direct algorithm keeps zero copy, and the pipe, whose trial would reach it through CMA's
 * reachability, stays a pipe. */
static void test_mover_nocma(const mc_profile_t *d)
{
    mc_profile_t p = *d;
    p.shm_sync = 1e-6, p.xmap = 3e-6, p.t_copy = 1e9, p.c_copy = 4e9, p.l2 = 1 << 20, p.l3 = 8 << 20;
    p.cma_bw = 5e9;
    const mc_alg_t *pipe = mc_alg_find(MC_BCAST, "shm_pipe"), *direct = mc_alg_find(MC_BCAST, "shm_direct");
    const mc_alg_t *svd = mc_alg_find(MC_SCATTERV, "shm_direct"), *svp = mc_alg_find(MC_SCATTERV, "shm_pipe"),
                   *svh = mc_alg_find(MC_SCATTERV, "shm_hybrid");
    CHECK(pipe && direct && svd && svp && svh, "bcast and scatterv shm algorithms registered");
    if (!pipe || !direct || !svd || !svp || !svh) return;
    /* bcast of 64 KiB at 4 ranks (as test_mover_trials): the pipe 2 syncs + 2 beta 1.25
     * MC_XCORE m, the posting round 2 syncs */
    mc_cost_in_t in = {.p = 4, .m = 65536, .ms = 65536, .radix = 4, .sockets = 1, .nocma = 1};
    double own = 2e-6 + 2 * 1.25 * MC_XCORE * 65536 / 8e9, round = 2e-6;
    NEAR(mc_cost_eval(pipe, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in), own);
    NEAR(mc_cost_eval(direct, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in), round + own);
    /* zero copy: the direct algorithm's single copies (3 syncs + 3/4 m at 2 beta), the pipe
     * untried */
    in.xmap = -1;
    NEAR(mc_cost_eval(pipe, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in), own);
    NEAR(mc_cost_eval(direct, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in), 3e-6 + 2 * 0.75 * 65536 / 8e9);
    /* ordinary buffers at 4 ranks on 2 CPUs (load 2: alpha = sync + a scheduling round y,
     * bytes twice as slow): the round (2 syncs + y) and its wait for every rank (y), and the
     * staged call's share of its pipe lost to the round (MC_STAGE_LOAD, 0.1) */
    in.xmap = 0, in.load = 2;
    double y = mc_sched_round(2), lpipe = 2 * (1e-6 + y) + 2 * (2 / 8e9) * 1.25 * MC_XCORE * 65536;
    NEAR(mc_cost_eval(pipe, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in), lpipe);
    NEAR(mc_cost_eval(direct, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &in), 2e-6 + 2 * y + 1.1 * lpipe);
    /* scatterv of 128 KiB blocks at 4 ranks (user bytes 1 MiB: in the caches), ordinary
     * buffers: the direct algorithm stages after its round, the hybrid is its pipe (CMA
     * would have sent such blocks straight: MV_HYBRID_MIN) */
    mc_cost_in_t v = {.p = 4, .m = 131072, .ms = 131072, .radix = 4, .sockets = 1, .nocma = 1};
    double vpipe = mc_cost_eval(svp, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &v);
    NEAR(vpipe, 2e-6 + 2 * 131072.0 * 4 / 8e9);
    NEAR(mc_cost_eval(svd, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &v), round + vpipe);
    NEAR(mc_cost_eval(svh, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &v), vpipe);
    v.nocma = 0;
    CHECK(mc_cost_eval(svh, MC_MODEL_PLOGP, &p, MC_LEVEL_INTRA, &v) != vpipe,
          "with CMA a 128 KiB block of the hybrid goes straight");
}

/* A measured adaptive-copy capacity decides what lies beyond the caches, not l3 + p l2: a
 * point-to-point algorithm whose footprint (2 p m) exceeds it pays the memory slowdown. */
static void test_measured_capacity(const mc_profile_t *d)
{
    const mc_alg_t *lin = mc_alg_find(MC_BCAST, "linear");
    if (!lin) return;
    mc_profile_t p = *d;
    p.t_copy = 1e9, p.c_copy = 4e9, p.l2 = 1 << 20, p.l3 = 512 << 20; /* a VM's claim */
    mc_cost_in_t in = {.p = 2, .m = 16 << 20, .ms = 16 << 20, .radix = 4, .sockets = 1}; /* 32 MiB */
    mc_profile_t fast = p;
    fast.c_copy = 0; /* never slowed down */
    double t_in = mc_cost_eval(lin, MC_MODEL_HOCKNEY, &fast, MC_LEVEL_INTRA, &in);
    NEAR(mc_cost_eval(lin, MC_MODEL_HOCKNEY, &p, MC_LEVEL_INTRA, &in), t_in); /* 32 MiB < 514 MiB */
    p.adapt_c = 16 << 20;
    CHECK(mc_cost_eval(lin, MC_MODEL_HOCKNEY, &p, MC_LEVEL_INTRA, &in) > 1.5 * t_in,
          "32 MiB beyond a measured 16 MiB capacity costs no more than within the caches");
}

static void test_profile_io(void)
{
    mc_profile_t d, back;
    char err[256] = "", path[] = "/tmp/mcoll-test-profile-XXXXXX";
    mc_profile_default(&d);
    CHECK(mc_profile_validate(&d, err, sizeof err) == 0, "default profile invalid: %s", err);
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    CHECK(mc_profile_save(path, &d, err, sizeof err) == 0, "save: %s", err);
    CHECK(mc_profile_load(path, &back, err, sizeof err) == 0, "load: %s", err);
    CHECK(!strcmp(back.name, d.name), "name %s", back.name);
    for (int l = 0; l < MC_NLEVELS; l++) {
        NEAR(back.net[l].hockney.alpha, d.net[l].hockney.alpha);
        NEAR(back.net[l].loggp.G, d.net[l].loggp.G);
        CHECK(back.net[l].plogp.n == d.net[l].plogp.n, "points %d", back.net[l].plogp.n);
        NEAR(back.net[l].plogp.g[2], d.net[l].plogp.g[2]);
    }
    NEAR(back.gamma, d.gamma);
    NEAR(back.l3, d.l3);
    NEAR(back.c_copy, d.c_copy);
    NEAR(back.shm_sync, d.shm_sync);
    NEAR(back.xmap, d.xmap);
    NEAR(back.cma_bw, d.cma_bw);
    /* the bad cases: syntax, missing field, wrong type, physics */
    FILE *f = fopen(path, "r");
    char good[8192] = "";
    size_t n = f ? fread(good, 1, sizeof good - 1, f) : 0;
    if (f) fclose(f);
    good[n] = 0;
    expect_load_error("{\"format\": \"mcoll-profile\",", "");
    expect_load_error("[1, 2]", "top level");
    expect_load_error("{\"format\": \"other\"}", "format");
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", good);
    char *g = strstr(buf, "\"gamma\"");
    if (g) memcpy(g, "\"gamme\"", 7);
    expect_load_error(buf, "gamma: missing");
    snprintf(buf, sizeof buf, "%s", good);
    char *alpha = strstr(buf, "\"alpha\": ");
    if (alpha) memcpy(alpha + 9, "\"x", 2); /* breaks the number: a syntax error or a string */
    expect_load_error(buf, "");
    mc_profile_t bad = d;
    bad.net[MC_LEVEL_INTER].plogp.g[1] = 0; /* below o_s */
    CHECK(mc_profile_validate(&bad, err, sizeof err) == -1 && strstr(err, "inter.plogp.points[1]"), "%s",
          err);
    bad = d;
    bad.net[MC_LEVEL_INTRA].plogp.m[2] = bad.net[MC_LEVEL_INTRA].plogp.m[1];
    CHECK(mc_profile_validate(&bad, err, sizeof err) == -1 && strstr(err, "increase"), "%s", err);
    bad = d;
    bad.net[MC_LEVEL_INTRA].loggp.G = NAN;
    CHECK(mc_profile_validate(&bad, err, sizeof err) == -1 && strstr(err, "intra.loggp"), "%s", err);
    CHECK(mc_profile_save(path, &bad, err, sizeof err) == -1, "saved an invalid profile");
    bad = d;
    bad.shm_sync = -1;
    CHECK(mc_profile_validate(&bad, err, sizeof err) == -1 && strstr(err, "shm"), "%s", err);
    snprintf(buf, sizeof buf, "%s", good);
    char *x = strstr(buf, "\"xmap\"");
    if (x) memcpy(x, "\"xmaq\"", 6);
    expect_load_error(buf, "shm.xmap: missing");
    /* cache.adaptive: optional (absent above: 0), written when measured, read back, checked */
    CHECK(d.adapt_c == 0 && !strstr(good, "adaptive"), "the built-in profile has no measured capacity");
    mc_profile_t m = d;
    m.adapt_c = 48 << 20;
    CHECK(mc_profile_save(path, &m, err, sizeof err) == 0, "save: %s", err);
    CHECK(mc_profile_load(path, &back, err, sizeof err) == 0, "load: %s", err);
    NEAR(back.adapt_c, 48 << 20);
    NEAR(mc_profile_capacity(&back, 4), 48 << 20);
    NEAR(mc_profile_capacity(&d, 4), d.l3 + 4 * d.l2);
    bad = d;
    bad.adapt_c = -1;
    CHECK(mc_profile_validate(&bad, err, sizeof err) == -1 && strstr(err, "cache"), "%s", err);
    unlink(path);
    test_shm_mapping(&d);
    test_mover_trials(&d);
    test_mover_nocma(&d);
    test_measured_capacity(&d);
}

int main(void)
{
    setup();
    test_plogp_table();
    test_barrier();
    test_bcast();
    test_reduce();
    test_allreduce_rs();
    test_gather_alltoall_scan();
    test_hockney_consistency();
    test_every_alg();
    test_profile_io();
    return unit_summary("unit_models");
}
