/* Algorithm selection: forced (mcoll_set_alg / MCOLL_<COLL>_ALG) > rules file (MCOLL_RULES,
 * rules.h) > the model (model.c; unless MCOLL_SELECT=table) > default rule table >
 * first applicable registered algorithm > PMPI. */
#ifndef MC_SELECT_H
#define MC_SELECT_H
#include "../core/mc.h"

/* Chooses the algorithm for a call, its registry index in *index, and fills a->segsize and
 * a->radix. NULL: use PMPI. k (may be NULL): the call's raw arguments, when their handles can
 * never be freed and reused (predefined datatype and op); remembered with the choice for
 * mc_select_again. */
const mc_alg_t *mc_select(mc_ctx_t *ctx, mc_args_t *a, int *index, const mc_key_t *k);

/* A repeated call: for a call of collective c whose raw arguments equal those remembered with
 * one of its choices (mc_select's k; a few per collective, by root and receive buffer), the
 * same algorithm (its index in *index) and the arguments prepared then (*a), while nothing the
 * choice depends on changed; NULL otherwise. Such a call needs no argument checks, no
 * preparation and no selection: the same call was valid and prepared before. */
const mc_alg_t *mc_select_again(const mc_ctx_t *ctx, mc_coll_t c, const mc_key_t *k, const mc_args_t **a,
                                int *index);

/* A context's remembered choices (ctx->memo). */
struct mc_sel_memo;
void mc_sel_memo_free(struct mc_sel_memo *m);

/* Something a choice depends on changed (run-time parameters, a region created or failed):
 * every context's remembered choices are void. Thread safe. */
void mc_sel_changed(void);

/* Forces `alg` for collective c in this process: a registered name, "pmpi", or NULL/"auto"
 * for the default selection. Returns 0, or -1 for an unknown name. Thread safe. */
int mc_sel_force(mc_coll_t c, const char *alg);

/* The default rule table, for mcoll-info and the README. */
typedef struct mc_rule {
    mc_coll_t coll;
    size_t max_bytes;       /* applies to per-rank payloads up to this size */
    int max_p;              /* and communicators up to this size (0 = any) */
    const char *alg;
    long segsize;           /* bytes, 0 = unsegmented */
    int min_nodes;          /* only on communicators spanning at least this many nodes (0 = any) */
} mc_rule_t;
int mc_rule_count(void);
/* Model-built decisions (model.c). enabled: MCOLL_SELECT is not "table". pick: the first
 * applicable candidate in the order of mc_msel_ordinary, with its registry index in *index,
 * a->segsize/radix set and its predicted time in *t (with zero copy in the heap order;
 * gatherv, scatterv, alltoallv: its size-independent score); NULL when no candidate applies. */
int mc_msel_enabled(void);
const mc_alg_t *mc_msel_pick(mc_ctx_t *ctx, mc_args_t *a, int *index, double *t);
/* Which order decides the calls of c on ctx: 1 once a posting round found a buffer outside the
 * shared heap (for a while: mc_shm_ordinary), 0 while the buffers may be in the heap. */
int mc_msel_ordinary(const mc_ctx_t *ctx, mc_coll_t c);
/* The explain text of a model decision with value t (mc_msel_pick's *t) in order ord. */
void mc_msel_describe(mc_coll_t c, double t, int ord, char *buf, size_t n);
/* The profile and model (an mc_model_t) the default selection uses (MCOLL_PROFILE, MCOLL_MODEL):
 * the other cost models of the library (neighbor strategies) take their parameters from it. */
struct mc_profile;
const struct mc_profile *mc_msel_profile(int *model);
struct mc_msel;
void mc_msel_free(struct mc_msel *m);
/* ctx's node region is in place (mc_shm_create): decisions built before it assumed CMA; if its
 * probe refused CMA they are built again. */
void mc_msel_region(mc_ctx_t *ctx);
const mc_rule_t *mc_rule_at(int i);
#endif
