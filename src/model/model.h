/* Performance models of point-to-point communication and the machine profile that carries
 * their parameters (collective-models-decision §3).
 *
 *   Hockney  T(m) = alpha + beta * m
 *   LogGP    T(m) = L + 2o + (m - 1) G, a sender may start the next message after g
 *   PLogP    T(m) = L + g(m); o_s(m), o_r(m), g(m) are piecewise-linear tables over m,
 *            g(m) >= o_s(m), o_r(m)
 *   gamma    seconds per byte reduced (all models)
 *
 * Every parameter exists twice: within a node (intra) and between nodes (inter). Units are
 * seconds and bytes everywhere (bandwidths in bytes per second). */
#ifndef MC_MODEL_H
#define MC_MODEL_H
#include "../core/mc.h"
#include <stddef.h>

typedef enum { MC_MODEL_HOCKNEY, MC_MODEL_LOGGP, MC_MODEL_PLOGP, MC_NMODELS } mc_model_t;
typedef enum { MC_LEVEL_INTRA, MC_LEVEL_INTER, MC_NLEVELS } mc_level_t;

typedef struct mc_loggp {
    double L, o, g, G;
} mc_loggp_t;

#define MC_PLOGP_MAXPTS 32
/* Points sorted by strictly increasing m; between points values are interpolated linearly,
 * beyond the last one extrapolated with the last segment's slope (flat with one point). */
typedef struct mc_plogp {
    double L;
    int n;
    double m[MC_PLOGP_MAXPTS], os[MC_PLOGP_MAXPTS], orr[MC_PLOGP_MAXPTS], g[MC_PLOGP_MAXPTS];
} mc_plogp_t;

typedef struct mc_net {
    mc_hockney_t hockney; /* its gamma is ignored: the profile's gamma is the one */
    mc_loggp_t loggp;
    mc_plogp_t plogp;
} mc_net_t;

typedef struct mc_profile {
    char name[64];
    mc_net_t net[MC_NLEVELS];
    double gamma;           /* s/byte of a reduction (MPI_SUM of doubles within the caches) */
    double t_copy, nt_copy; /* temporal and non-temporal copy bandwidth, bytes/s (memory) */
    double c_copy;          /* copy bandwidth of cache-resident data last written by another
                             * core, bytes/s (JSON copy.c_copy, optional: absent = 0 = t_copy
                             * everywhere) */
    double l1, l2, l3;      /* cache sizes per core (l1, l2) and per socket (l3), bytes */
    /* Capacity C of the adaptive copy when the topology misleads (a virtual machine may report
     * its host's cache): the working set of all ranks beyond which results stream. Set by hand
     * (mcoll-tune params keeps it when it re-measures a profile). JSON cache.adaptive,
     * optional: absent = 0 = C from the topology (l3 + p l2 here, hwloc's in the engine). */
    double adapt_c;
    /* The node's network interface, shared by all ranks of a node (mc_cost_nodes): messages/s
     * and bytes/s it carries per direction; 0 = not limited. JSON "nic": {"rate", "bw"},
     * optional. */
    double nic_rate, nic_bw;
    /* Shared-memory algorithms (those with a DAV model): one flag round between the cores of
     * a node (their alpha), and the start-up of a single copy from another rank's address
     * space (CMA system call; in->xmap) and that copy's rate in bytes/s (in->xmap_b = 1 /
     * cma_bw). JSON "shm": {"sync", "xmap", "cma_bw"}, optional (absent: the built-in values). */
    double shm_sync, xmap, cma_bw;
} mc_profile_t;

const char *mc_model_name(mc_model_t m);
int mc_model_from_name(const char *name); /* -1 when unknown */

/* PLogP table lookup: ys is one of t->os, t->orr, t->g. */
double mc_plogp_at(const mc_plogp_t *t, const double *ys, double m);

/* Built-in profile: constants for this machine class (see profile.c), not measurements. */
void mc_profile_default(mc_profile_t *p);
/* 0 when usable; else -1 and a sentence naming the first bad field in err. */
int mc_profile_validate(const mc_profile_t *p, char *err, size_t errlen);
/* JSON (format "mcoll-profile", version 1; README "Tuning and models"). Load validates; on
 * error returns -1, leaves *p untouched and explains in err. */
int mc_profile_load(const char *path, mc_profile_t *p, char *err, size_t errlen);
int mc_profile_save(const char *path, const mc_profile_t *p, char *err, size_t errlen);
/* The process's profile: MCOLL_PROFILE when it loads, else the built-in one (a bad file is
 * ignored with one warning). Read once. */
const mc_profile_t *mc_profile_active(void);
/* Bytes of data p ranks may keep in the caches of `prof`: its adaptive-copy capacity when it
 * has one, else l3 + p l2. */
double mc_profile_capacity(const mc_profile_t *prof, int p);

/* Whether a rank's buffers are in the shared heap is known only at the call, by that rank,
 * and every rank must choose alike; so a decision costs each candidate both ways and orders
 * them by the cost with ordinary buffers (CMA single copies), except that among the candidates
 * within a tolerance of the cheapest one the cheapest with zero copy goes first. Ordinary
 * buffers then lose at most that much (in the model) and buffers in the shared heap get the
 * zero-copy algorithm. The model-built rules files (mcoll-tune model) decide so with
 * MC_MSEL_TOL; the run-time model selection (src/select/model.c) with MC_MSEL_TOL once a
 * direct algorithm's posting round showed a buffer outside the heap, and with MC_MSEL_ZTOL
 * until then. In the run-time order for ordinary buffers the zero-copy costs within
 * MC_MSEL_TOL of the cheapest near one count as equal (the ordinary cost orders them): the
 * data movers' pipes reach zero copy through their trials, a little above the direct
 * algorithm's, which would otherwise go first and pay its posting round on every call. */
#define MC_MSEL_TOL 0.03
/* Whether a candidate costing t (ordinary buffers) is within tol of the cheapest, best. */
static inline int mc_msel_within(double t, double best, double tol)
{
    return t <= best * (1 + tol);
}
/* The same with MC_MSEL_TOL (the rules files; ordinary buffers at run time). */
static inline int mc_msel_near(double t, double best)
{
    return mc_msel_within(t, best, MC_MSEL_TOL);
}
/* The direct algorithms cost ordinary buffers their posting round more than the algorithm they
 * then run, and that round weighs 10-20 % of the cost where their zero-copy path already gains
 * on the heap: at 2 ranks allreduce, reduce and reduce_scatter_block of 16-32 KiB (the round
 * 13-19 % of shm_ma's cost; zero copy measured 3-40 % faster, heap buffers written before
 * every call), at 4 ranks on 2 cores of 64-256 KiB (7-15 %; 10-20 % faster). Within
 * MC_MSEL_TOL, with the fold rate of profile.c, the direct algorithms come first from 128 KiB
 * at 2 ranks and 256-512 KiB at 3-8. */
#define MC_MSEL_ZTOL 0.20

/* Time in seconds of `alg` for the cost input under `model` with the profile's parameters of
 * `level`. Shared-memory algorithms (alg->dav set): their .cost with alpha = shm_sync,
 * beta = 1 / (2 t_copy) per byte of data-access volume (a copied byte is a load and a store),
 * the profile's gamma, and in->xmap = the profile's xmap unless the caller set it (< 0 asks
 * for 0: buffers in the shared heap); the same under every model, whose differences are in
 * point-to-point messages. Hockney: the algorithm's own .cost (in its file). LogGP and PLogP: the formula
 * of src/model/classic.c; algorithms without one there (shm_*, hier*, mo*) evaluate their
 * Hockney .cost with the model's equivalent Hockney line (alpha = T(0), beta = slope). At the inter level the node steps of the
 * algorithms across nodes (in->intra NULL) take the intra level's line. */
double mc_cost_eval(const mc_alg_t *alg, mc_model_t model, const mc_profile_t *prof, mc_level_t level,
                    const mc_cost_in_t *in);
/* The model's equivalent Hockney line of `level` (alpha = T(0), beta = slope; gamma = the
 * profile's): what the Hockney .cost functions are evaluated with. */
mc_hockney_t mc_cost_line(mc_model_t model, const mc_profile_t *prof, mc_level_t level);
/* Node-aware time of `alg` on N nodes x P ranks (ranks numbered node by node), m = in->m
 * (src/model/nodes.c). Classic algorithms with a round schedule there are costed round by
 * round: a message between two ranks of a node takes the intra line, one between nodes the
 * inter line, and a round in which a node's ranks send k messages of B bytes in all off the
 * node takes at least max(k / nic_rate, B / nic_bw) (the same for what it receives); a round
 * lasts as long as its slowest part. Algorithms across nodes (hier*, mo*) take their .cost
 * with in->nodes = N (inter line, node steps on the intra line). Other algorithms: their
 * flat .cost on N*P ranks at the inter level. *how (may be NULL): 0 flat, 1 rounds,
 * 2 across nodes. N = 1: the intra level, as mc_cost_eval. */
double mc_cost_nodes(const mc_alg_t *alg, mc_model_t model, const mc_profile_t *prof, int N, int P,
                     const mc_cost_in_t *in, int *how);
/* The classic.c formula alone under any model (Hockney included): NAN when it has none. */
double mc_cost_formula(const mc_alg_t *alg, mc_model_t model, const mc_profile_t *prof, mc_level_t level,
                       const mc_cost_in_t *in);
#endif
