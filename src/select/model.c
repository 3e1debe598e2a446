/* Model-built selection, the default (MCOLL_SELECT=model; collective-models-decision §6: a
 * decision function built from a performance model and a machine profile).
 *
 * For a call of collective c with b bytes per rank on a communicator of p ranks over N nodes,
 * every registered algorithm (segmented ones also at MC_MSEL_SEGS segment sizes below b) is
 * costed under MCOLL_MODEL with the profile MCOLL_PROFILE (or the built-in one): on one node
 * mc_cost_eval at the intra level, across nodes mc_cost_nodes (N x ceil(p / N)). The
 * candidates are sorted by cost once per (context, collective, size class), at the class's
 * geometric middle; a call takes the first candidate that applies to it. So a call costs what
 * the rule table costs (a short scan with the applicability checks), and the decision is the
 * same on every rank: it depends only on p, the node layout, the class of b and the profile.
 *
 * Collectives whose bytes differ between ranks (gatherv, scatterv, alltoallv) get one list per
 * context that does not depend on the size: candidates sorted by the sum over the size classes
 * 2 B..4 MiB of their cost over the class's cheapest (the byte-independent decision of
 * mcoll-tune's measured rules), so all ranks agree. */
#include "select.h"
#include "../core/config.h"
#include "../core/log.h"
#include "../model/model.h"
#include "../shm/shm.h"
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCLASS 32       /* mc_size_class: 0 bytes, then [2^(k-1), 2^k); 1 GiB and more in the last */
#define MAXCAND 48
static const long MC_MSEL_SEGS[] = {8192, 65536};

typedef struct cand {
    const mc_alg_t *ptr; /* the registry entry (the call path does not look it up again) */
    short alg;          /* registry index */
    long seg;           /* segment size (0 = unsegmented) */
    double t;           /* predicted seconds (size-independent lists: the score) */
    double t0;          /* predicted seconds with every buffer in the shared heap */
    int near;           /* t within the list's tolerance of its cheapest (of its class, pref) */
    int zfirst;         /* the ordinary order: near, t0 within MC_MSEL_TOL of the least near t0 */
    int pref;           /* an oversubscribed node's preferred class (prefer) */
} cand_t;

typedef struct list {
    int n;
    cand_t c[];
} list_t;

struct mc_msel {
    list_t *l[MC_NCOLL][NCLASS][2]; /* built on first use; [1]: ordered for ordinary buffers */
    list_t *any[MC_NCOLL];         /* size-independent lists (mc_coll_bytes_vary) */
};

static const mc_profile_t *prof;  /* mc_profile_active() */
static mc_model_t model = MC_MODEL_PLOGP;
static int use_model;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int ready;     /* init ran: the call path skips pthread_once */

static void init(void)
{
    const mc_config_t *cfg = mc_cfg();
    prof = mc_profile_active();
    use_model = strcmp(cfg->select, "table") != 0;
    if (strcmp(cfg->select, "table") && strcmp(cfg->select, "model"))
        mc_warn("MCOLL_SELECT=%s: not 'model' or 'table', using the model", cfg->select);
    int m = mc_model_from_name(cfg->model);
    if (m < 0) mc_warn("MCOLL_MODEL=%s: unknown model, using plogp", cfg->model);
    else model = (mc_model_t)m;
    atomic_store_explicit(&ready, 1, memory_order_release);
}

int mc_msel_enabled(void)
{
    if (!atomic_load_explicit(&ready, memory_order_acquire)) pthread_once(&once, init);
    return use_model;
}

int mc_msel_ordinary(const mc_ctx_t *ctx, mc_coll_t c)
{
    return ctx->shm && mc_shm_ordinary(ctx->shm, c);
}

void mc_msel_describe(mc_coll_t c, double t, int ord, char *buf, size_t n)
{
    pthread_once(&once, init);
    if (mc_coll_bytes_vary(c))
        snprintf(buf, n, "model %s, profile %s: score %.3g over the sizes", mc_model_name(model), prof->name, t);
    else
        snprintf(buf, n, "model %s, profile %s: %.3g us, %s", mc_model_name(model), prof->name, t * 1e6,
                 ord ? "ordered for ordinary buffers" : "ordered for buffers in the shared heap");
}

static double class_bytes(int k)
{
    return k == 0 ? 0 : ldexp(M_SQRT2, k - 1);
}

static int cmp_cand(const void *x, const void *y)
{
    const cand_t *a = x, *b = y;
    if (a->pref != b->pref) return b->pref - a->pref;
    if (a->near != b->near) return b->near - a->near;
    if (a->zfirst != b->zfirst) return b->zfirst - a->zfirst;
    if (a->near && !a->zfirst && a->t0 != b->t0) return a->t0 < b->t0 ? -1 : 1;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->alg != b->alg ? a->alg - b->alg : (a->seg > b->seg) - (a->seg < b->seg);
}

/* On a node with more ranks than online CPUs (ctx->load) the node region's algorithms (those
 * with a DAV model) go before the point-to-point ones, whatever their costs: the model gives
 * every rank a core, so it costs a pipeline's or a butterfly's steps as if their ranks ran
 * at once, where here each message waits for its receiver to be scheduled and the ranks'
 * work adds up on the cores. On one node only scan and exscan chose point-to-point
 * algorithms (3-8 ranks on 2 cores, Open MPI, same-run over native: the chosen `linear`
 * segmented 0.4-0.9x, `recursive_doubling` 0.2-0.9x, where `shm` ran 1.3-3.3x; README
 * "Default selection"). Returns whether any candidate is of the preferred class. */
static int prefer(const mc_ctx_t *ctx, list_t *l)
{
    int any = 0;
    for (int j = 0; j < l->n; j++) any |= l->c[j].pref = ctx->load > 0 && l->c[j].ptr->dav != NULL;
    return any;
}

/* Round-by-round replay (mc_cost_nodes) costs O(rounds x ranks) per algorithm, up to p^2 for
 * the ring: beyond this many ranks the flat formulas at the inter level decide instead. */
enum { REPLAY_MAX = 4096 };

/* Whether the node's ranks cannot copy from each other's address spaces (CMA): by
 * MCOLL_SHM_PATH (the same on every rank), or by the probe of ctx's region (one node: its
 * ranks agreed on it when they mapped it; mc_msel_region). Before ctx has a region the costs
 * assume CMA, as most nodes allow it. */
static int no_cma(const mc_ctx_t *ctx)
{
    mc_path_t m = mc_shm_path();
    if (m == MC_PATH_COPY || m == MC_PATH_ZERO) return 1;
    return ctx->nnodes <= 1 && ctx->shm && !mc_shm_cma_ok(ctx->shm);
}

/* xmap: 0 = the profile's single-copy start-up (buffers outside the shared heap), -1 = zero copy. */
static double cost_of(const mc_ctx_t *ctx, const mc_alg_t *alg, double m, long seg, double xmap)
{
    mc_cost_in_t in = {.p = ctx->size, .m = m, .ms = seg > 0 && seg < m ? (double)seg : m, .radix = 4,
                       .sockets = 1, .nodes = ctx->nnodes, .xmap = xmap, .load = ctx->load};
    in.nocma = no_cma(ctx);
    if (ctx->nnodes <= 1) return mc_cost_eval(alg, model, prof, MC_LEVEL_INTRA, &in);
    if (ctx->size > REPLAY_MAX) return mc_cost_eval(alg, model, prof, MC_LEVEL_INTER, &in);
    int P = (ctx->size + ctx->nnodes - 1) / ctx->nnodes;
    return mc_cost_nodes(alg, model, prof, ctx->nnodes, P, &in, NULL);
}

static void add(list_t *l, const mc_ctx_t *ctx, const mc_alg_t *alg, int idx, double m, long seg)
{
    /* zero copy is costed on one node only: across nodes the replay (mc_cost_nodes) is the
     * expensive part of a list and the two costs were not compared there */
    double t = cost_of(ctx, alg, m, seg, 0), t0 = ctx->nnodes <= 1 ? cost_of(ctx, alg, m, seg, -1) : t;
    if (l->n < MAXCAND && isfinite(t) && t >= 0)
        l->c[l->n++] = (cand_t){alg, (short)idx, seg, t, isfinite(t0) && t0 >= 0 ? t0 : t, 0, 0, 0};
}

/* Both costs of every candidate, ordered by the cost with ordinary buffers (t), except that
 * among the candidates within a tolerance of the cheapest one the cheapest with zero copy (t0)
 * goes first (model.h). Whether the buffers are in the shared heap is known only at the call,
 * by each rank, and every rank must choose alike; but a direct algorithm's posting round
 * shows every rank the same answer for all (mc_shm_post_round), which the region keeps per
 * collective (mc_shm_ordinary). Until a round found an ordinary buffer the tolerance is
 * MC_MSEL_ZTOL, so heap buffers keep the zero-copy path where its posting round weighs on
 * ordinary ones; after that, for MC_ORDINARY_LAPSE ops of the region (then a call finds out
 * again), MC_MSEL_TOL. A wrong guess of heap buffers costs a call the round: the reductions'
 * shm_direct on ordinary buffers runs shm_ma after it, the data movers' stage or copy by CMA.
 * (Before, MC_MSEL_TOL served both kinds, and heap buffers lost zero copy where the round
 * cost ordinary ones more than that.) Ordered for ordinary buffers, the near ones whose zero-
 * copy costs are within MC_MSEL_TOL of the cheapest such go first, by the ordinary cost
 * (zfirst; model.h). */
static list_t *build(const mc_ctx_t *ctx, mc_coll_t c, int k, int ordinary)
{
    double m = class_bytes(k), best = INFINITY;
    list_t *l = malloc(sizeof *l + MAXCAND * sizeof(cand_t));
    if (!l) return NULL;
    l->n = 0;
    for (int i = 0; i < mc_alg_count(c); i++) {
        const mc_alg_t *alg = mc_alg_at(c, i);
        if (!alg) continue;
        add(l, ctx, alg, i, m, 0);
        for (size_t s = 0; (alg->flags & MC_ALG_SEGMENTED) && s < sizeof MC_MSEL_SEGS / sizeof *MC_MSEL_SEGS; s++)
            if (MC_MSEL_SEGS[s] < m) add(l, ctx, alg, i, m, MC_MSEL_SEGS[s]);
    }
    int pref = prefer(ctx, l);
    /* on an oversubscribed node the round that a direct algorithm's ordinary cost counts
     * comes with its share of the staged call (mc_stage_round): the heap order tolerates both */
    double tol = ordinary ? MC_MSEL_TOL : MC_MSEL_ZTOL + (ctx->load > 1 ? MC_STAGE_LOAD : 0);
    for (int j = 0; j < l->n; j++)
        if (l->c[j].pref == pref) best = fmin(best, l->c[j].t);
    for (int j = 0; j < l->n; j++)
        l->c[j].near = l->c[j].pref == pref && mc_msel_within(l->c[j].t, best, tol);
    double z = INFINITY;
    for (int j = 0; j < l->n; j++)
        if (l->c[j].near) z = fmin(z, l->c[j].t0);
    for (int j = 0; j < l->n; j++) l->c[j].zfirst = ordinary && l->c[j].near && mc_msel_near(l->c[j].t0, z);
    qsort(l->c, (size_t)l->n, sizeof *l->c, cmp_cand);
    return l;
}

/* The size-independent list: score = sum over classes 2..23 (2 B..4 MiB) of cost / the class's
 * cheapest; unsegmented candidates only (no v-collective is segmented). */
static list_t *build_any(const mc_ctx_t *ctx, mc_coll_t c)
{
    enum { K0 = 2, K1 = 23 };
    list_t *l = malloc(sizeof *l + MAXCAND * sizeof(cand_t));
    double t[MAXCAND][K1 - K0 + 1], best[K1 - K0 + 1];
    if (!l) return NULL;
    l->n = 0;
    for (int k = K0; k <= K1; k++) best[k - K0] = INFINITY;
    for (int i = 0; i < mc_alg_count(c) && l->n < MAXCAND; i++) {
        const mc_alg_t *alg = mc_alg_at(c, i);
        int ok = alg != NULL;
        for (int k = K0; ok && k <= K1; k++) {
            double v = t[l->n][k - K0] = cost_of(ctx, alg, class_bytes(k), 0, 0);
            ok = isfinite(v) && v >= 0;
        }
        if (!ok) continue;
        for (int k = K0; k <= K1; k++) best[k - K0] = fmin(best[k - K0], t[l->n][k - K0]);
        l->c[l->n++] = (cand_t){alg, (short)i, 0, 0, 0, 0, 0, 0};
    }
    for (int j = 0; j < l->n; j++)
        for (int k = K0; k <= K1; k++) l->c[j].t += t[j][k - K0] / fmax(best[k - K0], 1e-300);
    prefer(ctx, l);
    qsort(l->c, (size_t)l->n, sizeof *l->c, cmp_cand);
    return l;
}

/* The call path: the list of (context, collective, class) is built once; then a scan over
 * stored registry pointers with each candidate's applicability check. */
const mc_alg_t *mc_msel_pick(mc_ctx_t *ctx, mc_args_t *a, int *index, double *t)
{
    if (!ctx->msel && !(ctx->msel = calloc(1, sizeof *ctx->msel))) return NULL;
    list_t **lp, *l;
    int ord = 1; /* *t: the cost of the list's order (a size-independent list: its score) */
    if (mc_coll_bytes_vary(a->coll)) {
        lp = &ctx->msel->any[a->coll];
        if (!(l = *lp) && !(l = *lp = build_any(ctx, a->coll))) return NULL;
    } else {
        int k = mc_size_class(a->bytes);
        ord = mc_msel_ordinary(ctx, a->coll);
        lp = &ctx->msel->l[a->coll][k][ord];
        if (!(l = *lp) && !(l = *lp = build(ctx, a->coll, k, ord))) return NULL;
    }
    int verbose = mc_cfg()->verbose;
    for (int i = 0; i < l->n; i++) {
        const cand_t *c = &l->c[i];
        if ((c->ptr->flags & (MC_ALG_SEGMENTED | MC_ALG_RADIX)) || verbose) {
            a->segsize = mc_cfg_segsize(a->coll, c->seg);
            a->radix = mc_cfg_radix(a->coll, 4);
        }
        if (mc_alg_applicable(c->ptr, ctx, a)) {
            *index = c->alg;
            *t = ord ? c->t : c->t0;
            return c->ptr;
        }
    }
    return NULL;
}

const mc_profile_t *mc_msel_profile(int *m)
{
    pthread_once(&once, init);
    *m = (int)model;
    return prof;
}

/* ctx's region was just mapped or taken over: if its probe refused CMA, lists built before
 * (which assumed it) are dropped, to be built again with the probe's answer. Every local rank
 * maps the region in the same call and learns the same answer, so the ranks still agree. */
void mc_msel_region(mc_ctx_t *ctx)
{
    if (!ctx->msel || ctx->nnodes > 1 || !ctx->shm || ctx->shm->cma) return;
    mc_msel_free(ctx->msel);
    ctx->msel = NULL;
    mc_sel_changed();
}

void mc_msel_free(struct mc_msel *m)
{
    for (int c = 0; m && c < MC_NCOLL; c++) {
        for (int k = 0; k < NCLASS; k++) free(m->l[c][k][0]), free(m->l[c][k][1]);
        free(m->any[c]);
    }
    free(m);
}
