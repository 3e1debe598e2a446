/* Open MPI 4.1 coll_tuned rules file and MPICH 4.0 selection JSON from an mcoll rules table.
 *
 * Both native formats are decision trees over (communicator size, message size). The rules
 * table is first-match over ranges, so it is flattened per collective into comm-size
 * intervals (breakpoints at every row's pmin and pmax + 1) and, within one, byte pieces
 * (breakpoints at bmin and bmax + 1), each owned by the first row covering it. Message-size
 * units differ: mcoll's are per-rank bytes (mcoll_stats), Open MPI and MPICH sometimes count
 * the whole buffer (x p); the conversion uses the interval's smallest comm size, exact when
 * the interval is one size. Applicability (commutative-only, ...) is not exported: the
 * native library checks its own. */
#include "export.h"
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- native names */
static const struct nat {
    mc_coll_t coll;
    const char *alg;
    int ompi;          /* coll_tuned algorithm id (ompi_info --param coll tuned), 0 = none */
    const char *mpich; /* MPICH 4.0 container, NULL = none */
} natives[] = {
    {MC_BARRIER, "linear", 1, NULL},
    {MC_BARRIER, "double_ring", 2, NULL},
    {MC_BARRIER, "recursive_doubling", 3, NULL},
    {MC_BARRIER, "bruck", 4, "MPIR_Barrier_intra_dissemination"},
    {MC_BCAST, "linear", 1, NULL},
    {MC_BCAST, "pipeline", 3, NULL},
    {MC_BCAST, "split_binary", 4, NULL},
    {MC_BCAST, "binary", 5, NULL},
    {MC_BCAST, "binomial", 6, "MPIR_Bcast_intra_binomial"},
    {MC_REDUCE, "linear", 1, NULL},
    {MC_REDUCE, "kchain", 2, NULL},
    {MC_REDUCE, "pipeline", 3, NULL},
    {MC_REDUCE, "binary", 4, NULL},
    {MC_REDUCE, "binomial", 5, "MPIR_Reduce_intra_binomial"},
    {MC_ALLREDUCE, "reduce_bcast", 2, NULL},
    {MC_ALLREDUCE, "recursive_doubling", 3, "MPIR_Allreduce_intra_recursive_doubling"},
    {MC_ALLREDUCE, "ring", 4, NULL},
    {MC_ALLREDUCE, "rabenseifner", 6, "MPIR_Allreduce_intra_reduce_scatter_allgather"},
    {MC_REDUCE_SCATTER, "recursive_halving", 2, "MPIR_Reduce_scatter_intra_recursive_halving"},
    {MC_REDUCE_SCATTER, "ring", 3, NULL},
    {MC_REDUCE_SCATTER_BLOCK, "recursive_halving", 3, "MPIR_Reduce_scatter_block_intra_recursive_halving"},
    {MC_ALLGATHER, "bruck", 2, "MPIR_Allgather_intra_brucks"},
    {MC_ALLGATHER, "recursive_doubling", 3, "MPIR_Allgather_intra_recursive_doubling"},
    {MC_ALLGATHER, "ring", 4, "MPIR_Allgather_intra_ring"},
    {MC_ALLGATHERV, "ring", 3, "MPIR_Allgatherv_intra_ring"},
    {MC_ALLGATHERV, "recursive_doubling", 0, "MPIR_Allgatherv_intra_recursive_doubling"},
    {MC_GATHER, "linear", 1, NULL},
    {MC_GATHER, "binomial", 2, "MPIR_Gather_intra_binomial"},
    {MC_GATHERV, "linear", 0, "MPIR_Gatherv_allcomm_linear"},
    {MC_SCATTER, "linear", 1, NULL},
    {MC_SCATTER, "binomial", 2, "MPIR_Scatter_intra_binomial"},
    {MC_SCATTERV, "linear", 0, "MPIR_Scatterv_allcomm_linear"},
    {MC_ALLTOALL, "linear", 1, "MPIR_Alltoall_intra_scattered"},
    {MC_ALLTOALL, "pairwise", 2, "MPIR_Alltoall_intra_pairwise"},
    {MC_ALLTOALL, "bruck", 3, "MPIR_Alltoall_intra_brucks"},
    {MC_ALLTOALLV, "linear", 1, "MPIR_Alltoallv_intra_scattered"},
    {MC_ALLTOALLV, "pairwise", 2, NULL},
    {MC_SCAN, "linear", 1, NULL},
    {MC_SCAN, "recursive_doubling", 2, "MPIR_Scan_intra_recursive_doubling"},
    {MC_EXSCAN, "linear", 1, NULL},
    {MC_EXSCAN, "recursive_doubling", 2, "MPIR_Exscan_intra_recursive_doubling"},
};
#define NNAT ((int)(sizeof natives / sizeof natives[0]))

static const struct nat *native(mc_coll_t c, const char *alg)
{
    for (int i = 0; alg && i < NNAT; i++)
        if (natives[i].coll == c && !strcmp(natives[i].alg, alg)) return &natives[i];
    return NULL;
}

int mc_export_ompi_id(mc_coll_t c, const char *alg)
{
    const struct nat *n = native(c, alg);
    return n ? n->ompi : 0;
}

const char *mc_export_mpich_name(mc_coll_t c, const char *alg)
{
    const struct nat *n = native(c, alg);
    return n ? n->mpich : NULL;
}

/* ---------------------------------------------------------------- flattening */
typedef struct piece {
    size_t b;              /* from this many mcoll bytes up to the next piece */
    const mc_frule_t *row; /* NULL: no row, the native default */
} piece_t;

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static int active(const mc_frule_t *r, mc_coll_t c, int p)
{
    return r->coll == c && r->pmin <= p && p <= r->pmax;
}

/* Sorted distinct comm-size starts of collective c (always 1 first); n returned. With
 * `scaled` (the native size measure is p x mcoll's) also every power of two up to 2^16, so the
 * conversion with an interval's smallest size is off by less than 2x. */
#define SCALED_POINTS 16
static int comm_points(const mc_rules_t *r, mc_coll_t c, int scaled, size_t *pts)
{
    int n = 0;
    pts[n++] = 1;
    for (int k = 1; scaled && k <= SCALED_POINTS; k++) pts[n++] = (size_t)1 << k;
    for (int i = 0; i < r->n; i++) {
        if (r->rows[i].coll != c) continue;
        if (r->rows[i].pmin > 1) pts[n++] = (size_t)r->rows[i].pmin;
        if (r->rows[i].pmax < INT_MAX) pts[n++] = (size_t)r->rows[i].pmax + 1;
    }
    qsort(pts, (size_t)n, sizeof *pts, cmp_size);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!k || pts[i] != pts[k - 1]) pts[k++] = pts[i];
    return k;
}

/* Byte pieces at comm size p, consecutive pieces of the same row merged. */
static int pieces_at(const mc_rules_t *r, mc_coll_t c, int p, size_t *tmp, piece_t *out)
{
    int n = 0, k = 0;
    tmp[n++] = 0;
    for (int i = 0; i < r->n; i++) {
        if (!active(&r->rows[i], c, p)) continue;
        tmp[n++] = r->rows[i].bmin;
        if (r->rows[i].bmax < SIZE_MAX) tmp[n++] = r->rows[i].bmax + 1;
    }
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_size);
    for (int i = 0; i < n; i++) {
        if (i && tmp[i] == tmp[i - 1]) continue;
        const mc_frule_t *own = NULL;
        for (int j = 0; j < r->n && !own; j++)
            if (active(&r->rows[j], c, p) && r->rows[j].bmin <= tmp[i] && tmp[i] <= r->rows[j].bmax)
                own = &r->rows[j];
        if (k && out[k - 1].row == own) continue;
        out[k++] = (piece_t){tmp[i], own};
    }
    return k;
}

static int has_rows(const mc_rules_t *r, mc_coll_t c)
{
    for (int i = 0; i < r->n; i++)
        if (r->rows[i].coll == c) return 1;
    return 0;
}

static void note_unmapped(FILE *log, const char *mpi, const mc_frule_t *row)
{
    if (log && row && row->alg >= 0)
        fprintf(log, "%s: line %d: %s/%s has no native counterpart; the native default applies there\n", mpi,
                row->line, mc_coll_name(row->coll), mc_frule_alg_name(row));
}

/* ---------------------------------------------------------------- Open MPI */
/* COLLTYPE_T of Open MPI's coll/base (coll_base_functions.h); -1: coll_tuned has no rules. */
static const int ompi_coll_id[MC_NCOLL] = {
    [MC_ALLGATHER] = 0,
    [MC_ALLGATHERV] = 1,
    [MC_ALLREDUCE] = 2,
    [MC_ALLTOALL] = 3,
    [MC_ALLTOALLV] = 4,
    [MC_BARRIER] = 6,
    [MC_BCAST] = 7,
    [MC_EXSCAN] = 8,
    [MC_GATHER] = 9,
    [MC_GATHERV] = -1,
    [MC_REDUCE] = 11,
    [MC_REDUCE_SCATTER] = 12,
    [MC_REDUCE_SCATTER_BLOCK] = 13,
    [MC_SCAN] = 14,
    [MC_SCATTER] = 15,
    [MC_SCATTERV] = -1,
};

/* coll_tuned's message size is the whole buffer where mcoll counts one block. */
static size_t ompi_bytes(mc_coll_t c, size_t b, size_t p)
{
    int whole =
        c == MC_ALLGATHER || c == MC_ALLGATHERV || c == MC_ALLTOALL || c == MC_GATHER || c == MC_SCATTER;
    if (!whole) return b;
    return b > SIZE_MAX / p ? SIZE_MAX / 2 : b * p;
}

static void ompi_line(FILE *out, FILE *log, mc_coll_t c, size_t bytes, const mc_frule_t *row)
{
    int alg = row ? mc_export_ompi_id(c, mc_frule_alg_name(row)) : 0;
    if (!alg) note_unmapped(log, "openmpi", row);
    long seg = alg && row->segsize > 0 ? row->segsize : 0;
    int fan = alg && row->radix >= 2 ? row->radix : 0;
    fprintf(out, "%zu %d %d %ld\n", bytes, alg, fan, seg);
}

static int ompi_coll(const mc_rules_t *r, mc_coll_t c, FILE *out, FILE *log, size_t *pts, size_t *tmp,
                     piece_t *pc)
{
    int np = comm_points(r, c, ompi_bytes(c, 1, 2) == 2, pts);
    fprintf(out, "%d  # collective: %s\n%d  # comm sizes\n", ompi_coll_id[c], mc_coll_name(c), np);
    for (int i = 0; i < np; i++) {
        int n = pieces_at(r, c, (int)pts[i], tmp, pc);
        if (c == MC_BARRIER || c == MC_ALLTOALLV) n = 1; /* coll_tuned looks up message size 0 */
        fprintf(out, "%zu  # comm size\n%d  # message sizes: bytes algorithm fan-in/out segsize\n", pts[i],
                n);
        for (int k = 0; k < n; k++) ompi_line(out, log, c, ompi_bytes(c, pc[k].b, pts[i]), pc[k].row);
    }
    return 0;
}

/* Scratch big enough for any collective: 2 breakpoints per row + 1. */
typedef struct scratch {
    size_t *pts, *tmp;
    piece_t *pc;
} scratch_t;

static int scratch_new(const mc_rules_t *r, scratch_t *s)
{
    size_t n = 2 * (size_t)r->n + 2 + SCALED_POINTS;
    s->pts = malloc(n * sizeof *s->pts), s->tmp = malloc(n * sizeof *s->tmp),
    s->pc = malloc(n * sizeof *s->pc);
    return s->pts && s->tmp && s->pc ? 0 : -1;
}

static void scratch_free(scratch_t *s)
{
    free(s->pts), free(s->tmp), free(s->pc);
}

int mc_export_ompi(const mc_rules_t *r, FILE *out, FILE *log)
{
    scratch_t s;
    int ncoll = 0;
    if (scratch_new(r, &s)) return scratch_free(&s), -1;
    for (int c = 0; c < MC_NCOLL; c++) ncoll += has_rows(r, c) && ompi_coll_id[c] >= 0;
    fprintf(out,
            "# Open MPI 4.1 coll_tuned dynamic rules, written by mcoll-tune export.\n"
            "# Use: --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE\n"
            "%d  # collectives\n",
            ncoll);
    for (int c = 0; c < MC_NCOLL; c++) {
        if (!has_rows(r, c)) continue;
        if (ompi_coll_id[c] < 0) {
            if (log)
                fprintf(log, "openmpi: coll_tuned has no rules for %s; its rows are not exported\n",
                        mc_coll_name(c));
            continue;
        }
        ompi_coll(r, c, out, log, s.pts, s.tmp, s.pc);
    }
    scratch_free(&s);
    return ferror(out) ? -1 : 0;
}

/* ---------------------------------------------------------------- MPICH */
/* Per collective: the JSON name, a general algorithm (any input: used where the rules name
 * none), the in-place alternative when the general one cannot run in place, and the
 * intercommunicator algorithm. The file replaces MPICH's built-in tree entirely, so the
 * collectives mcoll does not implement are listed too. */
typedef struct mpich_coll {
    const char *name, *general, *inplace, *inter;
    int mc; /* mc_coll_t, -1 for the ones mcoll does not implement */
} mpich_coll_t;

static const mpich_coll_t mpich_colls[] = {
    {"barrier", "MPIR_Barrier_intra_dissemination", NULL, "MPIR_Barrier_inter_bcast", MC_BARRIER},
    {"bcast", "MPIR_Bcast_intra_binomial", NULL, "MPIR_Bcast_inter_remote_send_local_bcast", MC_BCAST},
    {"reduce", "MPIR_Reduce_intra_binomial", NULL, "MPIR_Reduce_inter_local_reduce_remote_send", MC_REDUCE},
    {"allreduce", "MPIR_Allreduce_intra_recursive_doubling", NULL,
     "MPIR_Allreduce_inter_reduce_exchange_bcast", MC_ALLREDUCE},
    {"reduce_scatter", "MPIR_Reduce_scatter_intra_recursive_doubling", NULL,
     "MPIR_Reduce_scatter_inter_remote_reduce_local_scatter", MC_REDUCE_SCATTER},
    {"reduce_scatter_block", "MPIR_Reduce_scatter_block_intra_recursive_doubling", NULL,
     "MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter", MC_REDUCE_SCATTER_BLOCK},
    {"allgather", "MPIR_Allgather_intra_ring", NULL, "MPIR_Allgather_inter_local_gather_remote_bcast",
     MC_ALLGATHER},
    {"allgatherv", "MPIR_Allgatherv_intra_ring", NULL, "MPIR_Allgatherv_inter_remote_gather_local_bcast",
     MC_ALLGATHERV},
    {"gather", "MPIR_Gather_intra_binomial", NULL, "MPIR_Gather_inter_linear", MC_GATHER},
    {"gatherv", "MPIR_Gatherv_allcomm_linear", NULL, NULL, MC_GATHERV},
    {"scatter", "MPIR_Scatter_intra_binomial", NULL, "MPIR_Scatter_inter_linear", MC_SCATTER},
    {"scatterv", "MPIR_Scatterv_allcomm_linear", NULL, NULL, MC_SCATTERV},
    {"alltoall", "MPIR_Alltoall_intra_pairwise", "MPIR_Alltoall_intra_pairwise_sendrecv_replace",
     "MPIR_Alltoall_inter_pairwise_exchange", MC_ALLTOALL},
    {"alltoallv", "MPIR_Alltoallv_intra_scattered", "MPIR_Alltoallv_intra_pairwise_sendrecv_replace",
     "MPIR_Alltoallv_inter_pairwise_exchange", MC_ALLTOALLV},
    {"scan", "MPIR_Scan_intra_recursive_doubling", NULL, NULL, MC_SCAN},
    {"exscan", "MPIR_Exscan_intra_recursive_doubling", NULL, NULL, MC_EXSCAN},
    {"alltoallw", "MPIR_Alltoallw_intra_scattered", "MPIR_Alltoallw_intra_pairwise_sendrecv_replace",
     "MPIR_Alltoallw_inter_pairwise_exchange", -1},
    {"neighbor_allgather", "MPIR_Neighbor_allgather_allcomm_nb", NULL, NULL, -1},
    {"neighbor_allgatherv", "MPIR_Neighbor_allgatherv_allcomm_nb", NULL, NULL, -1},
    {"neighbor_alltoall", "MPIR_Neighbor_alltoall_allcomm_nb", NULL, NULL, -1},
    {"neighbor_alltoallv", "MPIR_Neighbor_alltoallv_allcomm_nb", NULL, NULL, -1},
    {"neighbor_alltoallw", "MPIR_Neighbor_alltoallw_allcomm_nb", NULL, NULL, -1},
    {"ibarrier", "MPIR_Ibarrier_intra_sched_recursive_doubling", NULL, "MPIR_Ibarrier_inter_sched_bcast", -1},
    {"ibcast", "MPIR_Ibcast_intra_sched_binomial", NULL, "MPIR_Ibcast_inter_sched_flat", -1},
    {"ireduce", "MPIR_Ireduce_intra_sched_binomial", NULL,
     "MPIR_Ireduce_inter_sched_local_reduce_remote_send", -1},
    {"iallreduce", "MPIR_Iallreduce_intra_sched_recursive_doubling", NULL,
     "MPIR_Iallreduce_inter_sched_remote_reduce_local_bcast", -1},
    {"ireduce_scatter", "MPIR_Ireduce_scatter_intra_sched_recursive_doubling", NULL,
     "MPIR_Ireduce_scatter_inter_sched_remote_reduce_local_scatterv", -1},
    {"ireduce_scatter_block", "MPIR_Ireduce_scatter_block_intra_sched_recursive_doubling", NULL,
     "MPIR_Ireduce_scatter_block_inter_sched_remote_reduce_local_scatterv", -1},
    {"iallgather", "MPIR_Iallgather_intra_sched_ring", NULL,
     "MPIR_Iallgather_inter_sched_local_gather_remote_bcast", -1},
    {"iallgatherv", "MPIR_Iallgatherv_intra_sched_ring", NULL,
     "MPIR_Iallgatherv_inter_sched_remote_gather_local_bcast", -1},
    {"igather", "MPIR_Igather_intra_sched_binomial", NULL, "MPIR_Igather_inter_sched_long", -1},
    {"igatherv", "MPIR_Igatherv_allcomm_sched_linear", NULL, NULL, -1},
    {"iscatter", "MPIR_Iscatter_intra_sched_binomial", NULL, "MPIR_Iscatter_inter_sched_linear", -1},
    {"iscatterv", "MPIR_Iscatterv_allcomm_sched_linear", NULL, NULL, -1},
    {"ialltoall", "MPIR_Ialltoall_intra_sched_pairwise", "MPIR_Ialltoall_intra_sched_inplace",
     "MPIR_Ialltoall_inter_sched_pairwise_exchange", -1},
    {"ialltoallv", "MPIR_Ialltoallv_intra_sched_blocked", "MPIR_Ialltoallv_intra_sched_inplace",
     "MPIR_Ialltoallv_inter_sched_pairwise_exchange", -1},
    {"ialltoallw", "MPIR_Ialltoallw_intra_sched_blocked", "MPIR_Ialltoallw_intra_sched_inplace",
     "MPIR_Ialltoallw_inter_sched_pairwise_exchange", -1},
    {"iscan", "MPIR_Iscan_intra_sched_recursive_doubling", NULL, NULL, -1},
    {"iexscan", "MPIR_Iexscan_intra_sched_recursive_doubling", NULL, NULL, -1},
    {"ineighbor_allgather", "MPIR_Ineighbor_allgather_allcomm_sched_linear", NULL, NULL, -1},
    {"ineighbor_allgatherv", "MPIR_Ineighbor_allgatherv_allcomm_sched_linear", NULL, NULL, -1},
    {"ineighbor_alltoall", "MPIR_Ineighbor_alltoall_allcomm_sched_linear", NULL, NULL, -1},
    {"ineighbor_alltoallv", "MPIR_Ineighbor_alltoallv_allcomm_sched_linear", NULL, NULL, -1},
    {"ineighbor_alltoallw", "MPIR_Ineighbor_alltoallw_allcomm_sched_linear", NULL, NULL, -1},
};
#define NMPICH ((int)(sizeof mpich_colls / sizeof mpich_colls[0]))

static json_t *leaf(const char *alg)
{
    char key[160];
    snprintf(key, sizeof key, "algorithm=%s", alg);
    return json_pack("{s:{}}", key);
}

static void add(json_t *o, const char *fmt, size_t v, json_t *child)
{
    char key[96];
    snprintf(key, sizeof key, fmt, v);
    json_object_set_new(o, key, child);
}

/* MPICH's message measure for c: avg_msg_size (mcoll's bytes) where csel defines it,
 * total_msg_size (x p where mcoll counts one block) elsewhere, none for the rest. */
static const char *mpich_key(mc_coll_t c, size_t *factor, size_t p)
{
    *factor = 1;
    switch (c) {
    case MC_BCAST:
    case MC_REDUCE:
    case MC_ALLREDUCE:
    case MC_ALLTOALL:
        return "avg_msg_size";
    case MC_REDUCE_SCATTER:
    case MC_REDUCE_SCATTER_BLOCK:
        return "total_msg_size";
    case MC_ALLGATHER:
    case MC_ALLGATHERV:
    case MC_GATHER:
    case MC_SCATTER:
        *factor = p;
        return "total_msg_size";
    default:
        return NULL; /* barrier, scan, exscan; v-collectives: sizes differ between ranks */
    }
}

/* The pieces of one comm-size interval as a chain of "<key><=last byte" branches ending in
 * "<key>=any". */
static json_t *mpich_sizes(const mpich_coll_t *mc, const piece_t *pc, int n, size_t p, FILE *log)
{
    size_t factor;
    const char *key = mpich_key((mc_coll_t)mc->mc, &factor, p);
    json_t *o = json_object();
    if (!key) n = 1; /* no size measure: the piece of the smallest messages decides */
    for (int k = 0; k < n; k++) {
        const char *alg =
            pc[k].row ? mc_export_mpich_name((mc_coll_t)mc->mc, mc_frule_alg_name(pc[k].row)) : NULL;
        if (!alg) note_unmapped(log, "mpich", pc[k].row);
        json_t *l = leaf(alg ? alg : mc->general);
        if (k == n - 1) {
            if (!key) return json_decref(o), l;
            char any[64];
            snprintf(any, sizeof any, "%s=any", key);
            json_object_set_new(o, any, l);
        } else {
            size_t last = pc[k + 1].b - 1, v = last > SIZE_MAX / factor ? SIZE_MAX / 2 : last * factor;
            char fmt[64];
            snprintf(fmt, sizeof fmt, "%s<=%%zu", key);
            add(o, fmt, v, l);
        }
    }
    return o;
}

static json_t *mpich_intra(const mc_rules_t *r, const mpich_coll_t *mc, scratch_t *s, FILE *log)
{
    if (mc->mc < 0 || !has_rows(r, (mc_coll_t)mc->mc)) return leaf(mc->general);
    size_t factor;
    mpich_key((mc_coll_t)mc->mc, &factor, 2);
    int np = comm_points(r, (mc_coll_t)mc->mc, factor == 2, s->pts);
    json_t *o = json_object();
    for (int i = 0; i < np; i++) {
        int n = pieces_at(r, (mc_coll_t)mc->mc, (int)s->pts[i], s->tmp, s->pc);
        json_t *sz = mpich_sizes(mc, s->pc, n, s->pts[i], log);
        if (i == np - 1)
            json_object_set_new(o, "comm_size=any", sz);
        else
            add(o, "comm_size<=%zu", s->pts[i + 1] - 1, sz);
    }
    return o;
}

/* Does a row of c name the MPICH algorithm `alg`? */
static int uses(const mc_rules_t *r, mc_coll_t c, const char *alg)
{
    for (int i = 0; i < r->n; i++) {
        const char *m = r->rows[i].coll == c ? mc_export_mpich_name(c, mc_frule_alg_name(&r->rows[i])) : NULL;
        if (m && !strcmp(m, alg)) return 1;
    }
    return 0;
}

/* Guards in front of the exported choice, for inputs some native algorithms cannot take
 * (MPICH's own tree has the same ones); the last key, the guards' negation, holds the tree. */
static json_t *guarded(const mc_rules_t *r, const mpich_coll_t *mc, json_t *tree)
{
    json_t *o = json_object();
    const char *neg = NULL;
    if (mc->inplace) {
        json_object_set_new(o, "is_sendbuf_inplace=yes", leaf(mc->inplace));
        neg = "is_sendbuf_inplace=no";
    } else if (mc->mc == MC_ALLREDUCE &&
               uses(r, MC_ALLREDUCE, "MPIR_Allreduce_intra_reduce_scatter_allgather")) {
        json_object_set_new(o, "count<pow2", leaf(mc->general));
        json_object_set_new(o, "is_op_built_in=no", leaf(mc->general));
        neg = "is_op_built_in=yes";
    } else if ((mc->mc == MC_REDUCE_SCATTER &&
                uses(r, MC_REDUCE_SCATTER, "MPIR_Reduce_scatter_intra_recursive_halving")) ||
               (mc->mc == MC_REDUCE_SCATTER_BLOCK &&
                uses(r, MC_REDUCE_SCATTER_BLOCK, "MPIR_Reduce_scatter_block_intra_recursive_halving"))) {
        json_object_set_new(o, "is_commutative=no", leaf(mc->general));
        neg = "is_commutative=yes";
    }
    if (!neg) return json_decref(o), tree;
    json_object_set_new(o, neg, tree);
    return o;
}

int mc_export_mpich(const mc_rules_t *r, FILE *out, FILE *log)
{
    scratch_t s;
    if (scratch_new(r, &s)) return scratch_free(&s), -1;
    json_t *root = json_object();
    for (int i = 0; i < NMPICH; i++) {
        const mpich_coll_t *mc = &mpich_colls[i];
        if (mc->mc >= 0 && has_rows(r, (mc_coll_t)mc->mc) && mc->mc != MC_BARRIER && mc->mc != MC_SCAN &&
            mc->mc != MC_EXSCAN && mpich_key((mc_coll_t)mc->mc, &(size_t){0}, 1) == NULL && log)
            fprintf(log,
                    "mpich: %s has no size measure in MPICH's selection; the rows for its smallest messages "
                    "decide\n",
                    mc->name);
        json_t *intra = guarded(r, mc, mpich_intra(r, mc, &s, log)), *body;
        if (mc->inter)
            body = json_pack("{s:o,s:o}", "comm_type=intra", intra, "comm_type=inter", leaf(mc->inter));
        else
            body = intra;
        char key[64];
        snprintf(key, sizeof key, "collective=%s", mc->name);
        json_object_set_new(root, key, body);
    }
    scratch_free(&s);
    int rc = json_dumpf(root, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(root);
    return rc || ferror(out) ? -1 : 0;
}
