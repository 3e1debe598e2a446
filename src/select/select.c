#include "select.h"
#include "../core/config.h"
#include "../core/log.h"
#include <stdio.h>
#include <string.h>

#define ANY ((size_t)-1)
#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* Default decisions until the model-built rules replace them: the first row of the
 * collective whose limits cover the call and whose algorithm applies wins. Thresholds are
 * from measurements at 2..8 ranks on the development machine (see README). */
static const mc_rule_t rules[] = {
    {MC_BARRIER, ANY, 0, "recursive_doubling", 0},
    {MC_BCAST, ANY, 2, "binomial", 0},
    {MC_BCAST, 16 * KiB, 0, "binomial", 0},
    {MC_BCAST, 1 * MiB, 0, "split_binary", 32 * KiB},
    {MC_BCAST, ANY, 0, "pipeline", 128 * KiB},
    {MC_REDUCE, 64 * KiB, 0, "binomial", 0},
    {MC_REDUCE, ANY, 2, "binomial", 0},
    {MC_REDUCE, ANY, 0, "pipeline", 64 * KiB},
    {MC_REDUCE, ANY, 0, "binomial", 64 * KiB},
    {MC_ALLREDUCE, 16 * KiB, 0, "recursive_doubling", 0},
    {MC_ALLREDUCE, ANY, 0, "rabenseifner", 0},
    {MC_ALLREDUCE, ANY, 0, "ring", 0},
    {MC_ALLREDUCE, ANY, 0, "recursive_doubling", 0},
    {MC_REDUCE_SCATTER, 16 * KiB, 0, "recursive_halving", 0},
    {MC_REDUCE_SCATTER, ANY, 0, "ring", 0},
    {MC_REDUCE_SCATTER_BLOCK, 16 * KiB, 0, "recursive_halving", 0},
    {MC_REDUCE_SCATTER_BLOCK, ANY, 0, "ring", 0},
    {MC_ALLGATHER, 16 * KiB, 0, "recursive_doubling", 0},
    {MC_ALLGATHER, ANY, 0, "ring", 0},
    {MC_ALLGATHERV, 16 * KiB, 0, "recursive_doubling", 0},
    {MC_ALLGATHERV, ANY, 0, "ring", 0},
    {MC_GATHER, 8 * KiB, 0, "binomial", 0},
    {MC_GATHER, ANY, 0, "linear", 0},
    {MC_GATHERV, ANY, 0, "linear", 0},
    {MC_SCATTER, 8 * KiB, 0, "binomial", 0},
    {MC_SCATTER, ANY, 0, "linear", 0},
    {MC_SCATTERV, ANY, 0, "linear", 0},
    {MC_ALLTOALL, 256, 0, "bruck", 0},
    {MC_ALLTOALL, 64 * KiB, 0, "linear", 0},
    {MC_ALLTOALL, ANY, 0, "pairwise", 0},
    {MC_ALLTOALLV, ANY, 0, "linear", 0},
    {MC_SCAN, 16 * KiB, 0, "recursive_doubling", 0},
    {MC_SCAN, ANY, 0, "linear", 0},
    {MC_EXSCAN, 16 * KiB, 0, "recursive_doubling", 0},
    {MC_EXSCAN, ANY, 0, "linear", 0},
};
#define NRULES ((int)(sizeof rules / sizeof rules[0]))

int mc_rule_count(void) { return NRULES; }
const mc_rule_t *mc_rule_at(int i) { return i >= 0 && i < NRULES ? &rules[i] : NULL; }

/* Segment size and radix: run-time override > environment > the rule's (or 0 / 4). */
static void set_params(mc_args_t *a, const mc_rule_t *r)
{
    a->segsize = mc_cfg_segsize(a->coll, r ? r->segsize : 0);
    a->radix = mc_cfg_radix(a->coll, 4);
}

static int size_class(size_t bytes) { return bytes ? mc_floor_log2((int)(bytes > (1u << 30) ? 1u << 30 : bytes)) + 1 : 0; }

static void explain(mc_ctx_t *ctx, const mc_args_t *a, const mc_alg_t *alg, const char *why)
{
    if (!mc_cfg()->verbose || ctx->rank != 0) return;
    uint64_t bit = (uint64_t)1 << size_class(a->bytes);
    if (ctx->explained[a->coll] & bit) return;
    ctx->explained[a->coll] |= bit;
    mc_info("%s: %zu bytes/rank, p=%d%s -> %s (%s; segsize %ld, radix %d)", mc_coll_name(a->coll),
            a->bytes, ctx->size, a->op != MPI_OP_NULL && !a->commute ? ", non-commutative" : "",
            alg ? alg->name : "pmpi", why, a->segsize, a->radix);
}

static const mc_alg_t *forced(mc_ctx_t *ctx, mc_args_t *a, int *declined)
{
    const char *name = mc_cfg_forced_alg(a->coll);
    *declined = 0;
    if (!name) return NULL;
    const mc_alg_t *alg = mc_alg_find(a->coll, name);
    set_params(a, NULL);
    if (alg && mc_alg_applicable(alg, ctx, a)) return alg;
    *declined = 1;
    return NULL;
}

const mc_alg_t *mc_select(mc_ctx_t *ctx, mc_args_t *a)
{
    int declined;
    const char *name = mc_cfg_forced_alg(a->coll);
    if (name && !strcmp(name, "pmpi")) {
        explain(ctx, a, NULL, "forced");
        return NULL;
    }
    const mc_alg_t *alg = forced(ctx, a, &declined);
    if (alg) {
        explain(ctx, a, alg, "forced");
        return alg;
    }
    for (int i = 0; i < NRULES; i++) {
        const mc_rule_t *r = &rules[i];
        if (r->coll != a->coll || a->bytes > r->max_bytes || (r->max_p && ctx->size > r->max_p)) continue;
        alg = mc_alg_find(a->coll, r->alg);
        set_params(a, r);
        if (alg && mc_alg_applicable(alg, ctx, a)) {
            explain(ctx, a, alg, declined ? "forced algorithm not applicable; default rule" : "default rule");
            return alg;
        }
    }
    set_params(a, NULL);
    for (int i = 0; i < mc_alg_count(a->coll); i++) {
        alg = mc_alg_at(a->coll, i);
        if (mc_alg_applicable(alg, ctx, a)) {
            explain(ctx, a, alg, "first applicable");
            return alg;
        }
    }
    explain(ctx, a, NULL, "no applicable algorithm");
    return NULL;
}
