#include "select.h"
#include "rules.h"
#include "../core/config.h"
#include "../core/log.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ANY ((size_t)-1)
#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* The measured rule table: the default with MCOLL_SELECT=table, and the fallback of the model
 * (collectives whose bytes differ between ranks; calls no costed candidate applies to). The
 * first row of the
 * collective whose limits cover the call and whose algorithm applies wins. The shm_* rows
 * apply only when the communicator is one node; their switch points come from
 * `mcoll-bench --alg ...` at 2 ranks on this machine (README, "Shared-memory engine"). The
 * allreduce and reduce-scatter switch points of the point-to-point rows are measured the same
 * way; the other point-to-point rows are the classic latency-vs-bandwidth choices, not yet
 * measured at more ranks. */
static const mc_rule_t rules[] = {
    {MC_BARRIER, ANY, 0, "shm", 0, 0},
    {MC_BARRIER, ANY, 0, "hier", 0, 0},   /* hier* / mo*: two or more nodes only */
    {MC_BARRIER, ANY, 0, "recursive_doubling", 0, 0},
    /* shm rows: malloc'd buffers (CMA). Buffers in the shared heap make shm_direct the
     * faster one from 4-16 KiB up (README): force it there. */
    {MC_BCAST, 16 * KiB, 0, "shm_pipe", 0, 0},   /* 32-64 KiB: pipe 0.8-1.1x, direct 1.3-1.5x */
    {MC_BCAST, ANY, 0, "shm_direct", 0, 0},
    {MC_BCAST, ANY, 0, "hier", 0, 0},
    {MC_BCAST, ANY, 2, "binomial", 0, 0},
    {MC_BCAST, 16 * KiB, 0, "binomial", 0, 0},
    {MC_BCAST, 1 * MiB, 0, "split_binary", 32 * KiB, 0},
    {MC_BCAST, ANY, 0, "pipeline", 128 * KiB, 0},
    {MC_REDUCE, 16 * KiB, 0, "shm_dpml", 0, 0},
    /* shm_direct of the reductions: zero copy when every buffer is in the shared heap, else
     * (malloc'd buffers) it runs shm_ma, the faster one on CMA */
    {MC_REDUCE, ANY, 0, "shm_direct", 0, 0},
    {MC_REDUCE, ANY, 0, "hier", 0, 0},           /* commutative ops */
    {MC_REDUCE, 64 * KiB, 0, "binomial", 0, 0},
    {MC_REDUCE, ANY, 2, "binomial", 0, 0},
    {MC_REDUCE, ANY, 0, "pipeline", 64 * KiB, 0},
    {MC_REDUCE, ANY, 0, "binomial", 64 * KiB, 0},
    {MC_ALLREDUCE, 32 * KiB, 0, "shm_dpml", 0, 0},  /* one sync (the symmetric exchange) */
    {MC_ALLREDUCE, ANY, 0, "shm_direct", 0, 0},     /* commutative ops */
    {MC_ALLREDUCE, ANY, 0, "shm_dpml", 0, 0},       /* non-commutative, up to MCOLL_SHM_SMALL */
    /* across nodes (last field: at least 2 nodes), switch points from mcoll-sim with the
     * pip-mcoll profile at 4 x 8, 16 x 4 and 128 x 18: mo_bruck wins up to 128-256 B (it
     * declines floating-point SUM/PROD: node-dependent rounding), recursive doubling up to
     * 1-2 KiB, then Rabenseifner (ahead of hier_ma_ring and mo_rsag at every shape; within 10 %
     * of ring above 512 KiB) */
    {MC_ALLREDUCE, 128, 0, "mo_bruck", 0, 2},
    {MC_ALLREDUCE, 2 * KiB, 0, "recursive_doubling", 0, 2},
    {MC_ALLREDUCE, ANY, 0, "rabenseifner", 0, 2},
    {MC_ALLREDUCE, 8 * KiB, 0, "recursive_doubling", 0, 0},
    {MC_ALLREDUCE, ANY, 0, "ring", 0, 0},           /* commutative ops */
    {MC_ALLREDUCE, ANY, 0, "rabenseifner", 0, 0},   /* keeps rank order */
    {MC_ALLREDUCE, ANY, 0, "recursive_doubling", 0, 0},
    {MC_REDUCE_SCATTER, 16 * KiB, 0, "shm_dpml", 0, 0},
    {MC_REDUCE_SCATTER, 32 * KiB, 0, "shm_ma", 0, 0},
    {MC_REDUCE_SCATTER, ANY, 0, "shm_direct", 0, 0},
    {MC_REDUCE_SCATTER, ANY, 0, "shm_dpml", 0, 0},
    {MC_REDUCE_SCATTER, 2 * KiB, 0, "recursive_halving", 0, 0},
    {MC_REDUCE_SCATTER, ANY, 0, "ring", 0, 0},
    {MC_REDUCE_SCATTER_BLOCK, 16 * KiB, 0, "shm_dpml", 0, 0},
    {MC_REDUCE_SCATTER_BLOCK, 32 * KiB, 0, "shm_ma", 0, 0},
    {MC_REDUCE_SCATTER_BLOCK, ANY, 0, "shm_direct", 0, 0},
    {MC_REDUCE_SCATTER_BLOCK, ANY, 0, "shm_dpml", 0, 0},
    {MC_REDUCE_SCATTER_BLOCK, 2 * KiB, 0, "recursive_halving", 0, 0},
    {MC_REDUCE_SCATTER_BLOCK, ANY, 0, "ring", 0, 0},
    {MC_ALLGATHER, 32 * KiB, 0, "shm_pipe", 0, 0},
    {MC_ALLGATHER, ANY, 0, "shm_direct", 0, 0},
    /* mcoll-sim, 128 x 18: mo_bruck 5.7x bruck at 256 B, mo_ring ahead from 512 B */
    {MC_ALLGATHER, 256, 0, "mo_bruck", 0, 0},   /* uniform ranks per node */
    {MC_ALLGATHER, ANY, 0, "mo_ring", 0, 0},
    {MC_ALLGATHER, 16 * KiB, 0, "recursive_doubling", 0, 0},
    {MC_ALLGATHER, ANY, 0, "ring", 0, 0},
    {MC_ALLGATHERV, 32 * KiB, 0, "shm_pipe", 0, 0},
    {MC_ALLGATHERV, ANY, 0, "shm_direct", 0, 0},
    {MC_ALLGATHERV, 16 * KiB, 0, "recursive_doubling", 0, 0},
    {MC_ALLGATHERV, ANY, 0, "ring", 0, 0},
    {MC_GATHER, 4 * MiB, 0, "shm_pipe", 0, 0},   /* CMA writes into the root cost more */
    {MC_GATHER, ANY, 0, "shm_direct", 0, 0},
    {MC_GATHER, ANY, 0, "hier", 0, 0},
    {MC_GATHER, 8 * KiB, 0, "binomial", 0, 0},
    {MC_GATHER, ANY, 0, "linear", 0, 0},
    /* gatherv, scatterv, alltoallv: a->bytes differs between ranks (only the root, or only
     * the sender, knows the sizes), so their rows must not depend on it: shm_hybrid picks
     * pipe or direct per block */
    {MC_GATHERV, ANY, 0, "shm_hybrid", 0, 0},
    {MC_GATHERV, ANY, 0, "shm_direct", 0, 0},
    {MC_GATHERV, ANY, 0, "linear", 0, 0},
    {MC_SCATTER, 64 * KiB, 0, "shm_pipe", 0, 0},
    {MC_SCATTER, ANY, 0, "shm_direct", 0, 0},
    {MC_SCATTER, 256, 0, "mo", 0, 0},   /* mcoll-sim, 128 x 18: 2.2x binomial at 16 B, 0.96x at 512 B */
    {MC_SCATTER, 8 * KiB, 0, "binomial", 0, 0},
    {MC_SCATTER, ANY, 0, "linear", 0, 0},
    {MC_SCATTERV, ANY, 0, "shm_hybrid", 0, 0},
    {MC_SCATTERV, ANY, 0, "shm_direct", 0, 0},
    {MC_SCATTERV, ANY, 0, "linear", 0, 0},
    {MC_ALLTOALL, 32 * KiB, 0, "shm_pipe", 0, 0},
    {MC_ALLTOALL, ANY, 0, "shm_direct", 0, 0},
    {MC_ALLTOALL, 256, 0, "bruck", 0, 0},
    {MC_ALLTOALL, 64 * KiB, 0, "linear", 0, 0},
    {MC_ALLTOALL, ANY, 0, "pairwise", 0, 0},
    {MC_ALLTOALLV, ANY, 0, "shm_hybrid", 0, 0},
    {MC_ALLTOALLV, ANY, 0, "shm_direct", 0, 0},
    {MC_ALLTOALLV, ANY, 0, "linear", 0, 0},
    {MC_SCAN, ANY, 0, "shm", 0, 0},
    {MC_SCAN, 16 * KiB, 0, "recursive_doubling", 0, 0},
    {MC_SCAN, ANY, 0, "linear", 0, 0},
    {MC_EXSCAN, ANY, 0, "shm", 0, 0},
    {MC_EXSCAN, 16 * KiB, 0, "recursive_doubling", 0, 0},
    {MC_EXSCAN, ANY, 0, "linear", 0, 0},
};
#define NRULES ((int)(sizeof rules / sizeof rules[0]))

/* Rules resolved to registry entries once, so a call costs no string compares; each
 * collective scans only its own rows [first, last). */
static int rule_idx[NRULES];           /* registry index, -1 when not built */
static int first_rule[MC_NCOLL], last_rule[MC_NCOLL];

/* Forced algorithm per collective: an index into the registry, or one of these. */
enum { FORCE_AUTO = -2, FORCE_PMPI = -1 };
static _Atomic int forced_idx[MC_NCOLL];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int ready;       /* fast path past pthread_once once init ran */

/* MCOLL_RULES rows, grouped by collective (stable, so file order is kept within one). */
static mc_rules_t file;
static int file_first[MC_NCOLL], file_last[MC_NCOLL];

static void load_file(const char *path)
{
    char err[512];
    if (!*path) return;
    if (mc_rules_load(path, &file, err, sizeof err)) {
        mc_warn("MCOLL_RULES=%s ignored, using the built-in rules: %s", path, err);
        return;
    }
    mc_frule_t *sorted = file.n ? mc_malloc((size_t)file.n * sizeof *sorted) : NULL;
    if (file.n && !sorted) {
        mc_warn("MCOLL_RULES=%s ignored: out of memory", path);
        mc_rules_free(&file);
        return;
    }
    int k = 0;
    for (int c = 0; c < MC_NCOLL; c++) {
        file_first[c] = k;
        for (int i = 0; i < file.n; i++)
            if (file.rows[i].coll == (mc_coll_t)c) sorted[k++] = file.rows[i];
        file_last[c] = k;
    }
    if (file.n) memcpy(file.rows, sorted, (size_t)file.n * sizeof *sorted);
    mc_free(sorted);
}

static int force_index(mc_coll_t c, const char *alg)
{
    if (!alg || !*alg || !strcmp(alg, "auto")) return FORCE_AUTO;
    if (!strcmp(alg, "pmpi")) return FORCE_PMPI;
    const mc_alg_t *a = mc_alg_find(c, alg);
    return a ? mc_alg_index(a) : -3;
}

static void init(void)
{
    for (int c = 0; c < MC_NCOLL; c++) first_rule[c] = last_rule[c] = 0;
    load_file(mc_cfg()->rules);
    for (int i = NRULES - 1; i >= 0; i--) {
        const mc_alg_t *alg = mc_alg_find(rules[i].coll, rules[i].alg);
        rule_idx[i] = alg ? mc_alg_index(alg) : -1;
        if (!last_rule[rules[i].coll]) last_rule[rules[i].coll] = i + 1;
        first_rule[rules[i].coll] = i;
    }
    for (int c = 0; c < MC_NCOLL; c++) {
        int idx = force_index(c, mc_cfg()->alg[c]);
        if (idx == -3) mc_warn("MCOLL_%s_ALG=%s: no such algorithm, using the default", mc_coll_name(c), mc_cfg()->alg[c]);
        forced_idx[c] = idx == -3 ? FORCE_AUTO : idx;
    }
    atomic_store_explicit(&ready, 1, memory_order_release);
}

/* The generation of everything a choice depends on besides the call's arguments and the
 * context's fixed topology: forced algorithms, run-time parameters, region state. */
static _Atomic unsigned sel_gen = 1;

void mc_sel_changed(void) { atomic_fetch_add_explicit(&sel_gen, 1, memory_order_acq_rel); }

int mc_sel_force(mc_coll_t c, const char *alg)
{
    pthread_once(&once, init);
    int idx = force_index(c, alg);
    if (idx == -3) return -1;
    /* setting what is set already keeps the remembered choices (mcoll-bench sets its
     * column's algorithm before every call: each single call had paid a full selection) */
    if (atomic_exchange(&forced_idx[c], idx) != idx) mc_sel_changed();
    return 0;
}

int mc_rule_count(void) { return NRULES; }
const mc_rule_t *mc_rule_at(int i) { return i >= 0 && i < NRULES ? &rules[i] : NULL; }

/* Segment size and radix: run-time override > environment > the rule's (or 0 / 4). */
static void set_params(mc_args_t *a, const mc_rule_t *r)
{
    a->segsize = mc_cfg_segsize(a->coll, r ? r->segsize : 0);
    a->radix = mc_cfg_radix(a->coll, 4);
}

static void set_file_params(mc_args_t *a, const mc_frule_t *r)
{
    a->segsize = mc_cfg_segsize(a->coll, r->segsize >= 0 ? r->segsize : 0);
    a->radix = mc_cfg_radix(a->coll, r->radix >= 2 ? r->radix : 4);
}

/* Only segmented / radix algorithms read the parameters (and the explain line shows them). */
static inline void params_for(mc_args_t *a, const mc_alg_t *alg, const mc_rule_t *r)
{
    if (!alg || (alg->flags & (MC_ALG_SEGMENTED | MC_ALG_RADIX)) || mc_cfg()->verbose) set_params(a, r);
}

/* Once per size class and order of the model's candidates (variant: mc_msel_ordinary; the
 * bits above 32 of ctx->explained): a decision taken again once the buffers' kind is known is
 * explained too. */
static void explain_once(mc_ctx_t *ctx, const mc_args_t *a, const mc_alg_t *alg, const char *why, int variant)
{
    if (ctx->rank != 0) return;
    uint64_t bit = (uint64_t)1 << (mc_size_class(a->bytes) + 32 * variant);
    if (ctx->explained[a->coll] & bit) return;
    ctx->explained[a->coll] |= bit;
    mc_info("%s: %zu bytes/rank, p=%d%s -> %s (%s; segsize %ld, radix %d)", mc_coll_name(a->coll),
            a->bytes, ctx->size, a->op != MPI_OP_NULL && !a->commute ? ", non-commutative" : "",
            alg ? alg->name : "pmpi", why, a->segsize, a->radix);
}

static inline void explain(mc_ctx_t *ctx, const mc_args_t *a, const mc_alg_t *alg, const char *why)
{
    if (mc_cfg()->verbose) explain_once(ctx, a, alg, why, 0);
}

/* The first MCOLL_RULES row covering the call whose algorithm applies: 1 with *out set
 * (NULL = pmpi), else 0 (fall through to the built-in table). */
static int file_rule(mc_ctx_t *ctx, mc_args_t *a, int *index, int declined, const mc_alg_t **out)
{
    char why[64];
    for (int i = file_first[a->coll]; i < file_last[a->coll]; i++) {
        const mc_frule_t *r = &file.rows[i];
        if (ctx->size < r->pmin || ctx->size > r->pmax || a->bytes < r->bmin || a->bytes > r->bmax) continue;
        const mc_alg_t *alg = r->alg >= 0 ? mc_alg_at(a->coll, r->alg) : NULL;
        set_file_params(a, r);
        if (alg && !mc_alg_applicable(alg, ctx, a)) continue;
        snprintf(why, sizeof why, "%srules file line %d", declined ? "forced algorithm not applicable; " : "",
                 r->line);
        explain(ctx, a, alg, why);
        if (alg) *index = r->alg;
        *out = alg;
        return 1;
    }
    return 0;
}

static const mc_alg_t *choose(mc_ctx_t *ctx, mc_args_t *a, int *index)
{
    int idx = forced_idx[a->coll], declined = 0;
    const mc_alg_t *alg;
    double t;
    if (idx == FORCE_PMPI) {
        explain(ctx, a, NULL, "forced");
        return NULL;
    }
    if (idx >= 0) {
        alg = mc_alg_at(a->coll, idx);
        params_for(a, alg, NULL);
        if (mc_alg_applicable(alg, ctx, a)) {
            explain(ctx, a, alg, "forced");
            *index = idx;
            return alg;
        }
        declined = 1;
    }
    if (file_rule(ctx, a, index, declined, &alg)) return alg;
    if (mc_msel_enabled() && (alg = mc_msel_pick(ctx, a, index, &t))) {
        if (mc_cfg()->verbose) {
            char why[224], what[160];
            int ord = mc_msel_ordinary(ctx, a->coll);
            mc_msel_describe(a->coll, t, ord, what, sizeof what);
            snprintf(why, sizeof why, "%s%s", declined ? "forced algorithm not applicable; " : "", what);
            explain_once(ctx, a, alg, why, ord);
        }
        return alg;
    }
    for (int i = first_rule[a->coll]; i < last_rule[a->coll]; i++) {
        const mc_rule_t *r = &rules[i];
        if (a->bytes > r->max_bytes || (r->max_p && ctx->size > r->max_p) || ctx->nnodes < r->min_nodes) continue;
        alg = mc_alg_at(a->coll, rule_idx[i]);
        params_for(a, alg, r);
        if (alg && mc_alg_applicable(alg, ctx, a)) {
            explain(ctx, a, alg, declined ? "forced algorithm not applicable; default rule" : "default rule");
            *index = rule_idx[i];
            return alg;
        }
    }
    set_params(a, NULL);
    for (int i = 0; i < mc_alg_count(a->coll); i++) {
        alg = mc_alg_at(a->coll, i);
        if (mc_alg_applicable(alg, ctx, a)) {
            explain(ctx, a, alg, "first applicable");
            *index = i;
            return alg;
        }
    }
    explain(ctx, a, NULL, "no applicable algorithm");
    return NULL;
}

/* The last choice per collective of a context, with the arguments it was made for. */
typedef struct mc_sel_entry {
    unsigned gen;           /* sel_gen when made; 0 = empty */
    int idx;
    const mc_alg_t *alg;    /* NULL: PMPI */
    mc_args_t a;            /* after the choice (segsize, radix set) */
    int keyed;              /* k holds the raw arguments of a call that led to a */
    mc_key_t k;
} mc_sel_entry_t;

/* Per collective, a power of two of choices (at least 8, at least the communicator's size up
 * to 64), direct-mapped by root XOR receive buffer: with one rbuf, distinct roots take
 * distinct ways, so a loop whose roots rotate over the whole communicator (up to 64 ranks), or
 * that alternates between a few buffers, finds each of its calls remembered (a block per
 * collective, allocated at its first call). */
#define MC_MEMO_WAYS_MIN 8
#define MC_MEMO_WAYS_MAX 64
struct mc_sel_memo {
    unsigned mask;          /* ways - 1 */
    mc_sel_entry_t *way[MC_NCOLL];
};

/* The slot is found by the raw receive buffer the application passed (k's) when the call has
 * a key, else by the prepared one: the two differ where the prepared arguments drop a buffer
 * that is not significant (a reduce's non-root passes NULL on), and a keyed call is looked up
 * again by its raw arguments (mc_select_again). */
static inline const void *slot_rbuf(const mc_args_t *a, const mc_key_t *k) { return k ? k->rbuf : a->rbuf; }

static inline mc_sel_entry_t *memo_at(const mc_ctx_t *ctx, mc_coll_t c, int root, const void *rbuf)
{
    const struct mc_sel_memo *m = ctx->memo;
    mc_sel_entry_t *w = m ? m->way[c] : NULL;
    return w ? &w[((unsigned)root ^ (unsigned)((uintptr_t)rbuf >> 3)) & m->mask] : NULL;
}

static struct mc_sel_memo *memo_new(int size)
{
    struct mc_sel_memo *m = calloc(1, sizeof *m);
    unsigned ways = MC_MEMO_WAYS_MIN;
    while (ways < (unsigned)size && ways < MC_MEMO_WAYS_MAX) ways <<= 1;
    if (m) m->mask = ways - 1;
    return m;
}

void mc_sel_memo_free(struct mc_sel_memo *m)
{
    for (int c = 0; m && c < MC_NCOLL; c++) free(m->way[c]);
    free(m);
}

/* Every applicability test reads only the arguments compared here (handles by value: a freed
 * and reused handle answers the same tests), the context's topology, its region state and
 * the configuration; the last two bump sel_gen. Per-rank arrays (v-collectives,
 * reduce_scatter) may change between calls at the same address: those calls choose anew. */
static inline int same_call(const mc_args_t *m, const mc_args_t *a)
{
    return m->bytes == a->bytes && m->sbuf == a->sbuf && m->rbuf == a->rbuf && m->count == a->count &&
           m->dtype == a->dtype && m->op == a->op && m->root == a->root && m->extent == a->extent &&
           m->commute == a->commute && !a->counts && !a->scounts;
}

/* The ordered search, remembered for the next call (out of line: a remembered choice then
 * needs no stack frame). */
__attribute__((noinline)) static const mc_alg_t *search(mc_ctx_t *ctx, mc_args_t *a, int *index, unsigned gen,
                                                         const mc_key_t *k)
{
    int idx = -1;
    const mc_alg_t *alg = choose(ctx, a, &idx);
    *index = idx;
    if (a->counts || a->scounts) return alg;
    if (!ctx->memo && !(ctx->memo = memo_new(ctx->size))) return alg;
    if (!ctx->memo->way[a->coll] && !(ctx->memo->way[a->coll] = calloc(ctx->memo->mask + 1, sizeof(mc_sel_entry_t))))
        return alg;
    mc_sel_entry_t *m = memo_at(ctx, a->coll, a->root, slot_rbuf(a, k));
    m->gen = gen, m->idx = idx, m->alg = alg, m->a = *a;
    if ((m->keyed = k && alg)) m->k = *k;
    return alg;
}

const mc_alg_t *mc_select_again(const mc_ctx_t *ctx, mc_coll_t c, const mc_key_t *k, const mc_args_t **a, int *index)
{
    const mc_sel_entry_t *m = memo_at(ctx, c, k->root, k->rbuf);
    if (!m || !m->keyed || m->k.sbuf != k->sbuf || m->k.rbuf != k->rbuf || m->k.count != k->count ||
        m->k.root != k->root || m->k.dt != k->dt || m->k.op != k->op ||
        m->gen != atomic_load_explicit(&sel_gen, memory_order_acquire))
        return NULL;
    *a = &m->a;
    *index = m->idx;
    return m->alg;
}

/* A call identical to a remembered one (the common case: a loop over one collective) reuses
 * its choice: the selection of an 8-byte allreduce at 2 ranks costs 72 instructions instead of
 * 185 (callgrind). */
const mc_alg_t *mc_select(mc_ctx_t *ctx, mc_args_t *a, int *index, const mc_key_t *k)
{
    if (!atomic_load_explicit(&ready, memory_order_acquire)) pthread_once(&once, init);
    unsigned gen = atomic_load_explicit(&sel_gen, memory_order_acquire);
    mc_sel_entry_t *m = memo_at(ctx, a->coll, a->root, slot_rbuf(a, k));
    if (m && m->gen == gen && same_call(&m->a, a)) {
        a->segsize = m->a.segsize;
        a->radix = m->a.radix;
        *index = m->idx;
        if (k && m->alg) m->k = *k, m->keyed = 1; /* the same arguments, reached by other raw ones */
        return m->alg;
    }
    return search(ctx, a, index, gen, k);
}
