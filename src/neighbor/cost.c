/* Cost model of the strategies: Hockney per message, intra- vs inter-region parameters.
 *
 * For each step and rank: cost = sum over its messages of alpha + beta * bytes, taken on
 * the send side and on the receive side separately, the larger of the two (a rank injects
 * and drains its messages one after another). Steps are synchronous across ranks, so a
 * step costs its slowest rank (max over ranks). The standard strategy is one step; the
 * aggregated ones run L in parallel with S, G, R in sequence:
 *   T_standard = max_ranks C(all)
 *   T_aggr     = max(max_ranks C(L), max_ranks C(S) + max_ranks C(G) + max_ranks C(R))
 *                + gamma * max_ranks(local copy bytes)
 * The parameters come from the profile and model of the default selection (MCOLL_PROFILE,
 * MCOLL_MODEL): each model's equivalent Hockney line, intra-node within a region and inter-node
 * between regions when regions are nodes; with socket regions both are the intra-node line
 * (the profile has no per-socket parameters). Local copies at the memory copy rate. */
#include "neighbor.h"
#include "../model/model.h"
#include "../select/select.h"
#include <pthread.h>
#include <string.h>

typedef struct {
    double alpha_intra, beta_intra; /* s per message, s per byte, same region */
    double alpha_inter, beta_inter; /* other region */
    double gamma_copy;              /* s per byte of local copies (memcpy) */
} k_t;

static k_t K_node, K_socket;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Thread_local const k_t *K = &K_node; /* the set of the init being costed */

static void init(void)
{
    int m;
    const mc_profile_t *p = mc_msel_profile(&m);
    mc_hockney_t a = mc_cost_line((mc_model_t)m, p, MC_LEVEL_INTRA), e = mc_cost_line((mc_model_t)m, p, MC_LEVEL_INTER);
    double g = p->t_copy > 0 ? 1.0 / p->t_copy : a.beta;
    K_node = (k_t){a.alpha, a.beta, e.alpha, e.beta, g};
    K_socket = (k_t){a.alpha, a.beta, a.alpha, a.beta, g};
}

void mc_nb_cost_params(int region_socket)
{
    pthread_once(&once, init);
    K = region_socket ? &K_socket : &K_node;
}

double mc_nb_pair_weight(int64_t bytes)
{
    return K->alpha_inter + K->beta_inter * (double)bytes;
}

static double side(const mc_nb_counts_t *c, int step, int dir)
{
    return K->alpha_intra * (double)c->msgs[step][0][dir] + K->beta_intra * (double)c->bytes[step][0][dir] +
           K->alpha_inter * (double)c->msgs[step][1][dir] + K->beta_inter * (double)c->bytes[step][1][dir];
}

static double step_cost(const mc_nb_counts_t *c, int step)
{
    double s = side(c, step, 0), r = side(c, step, 1);
    return s > r ? s : r;
}

/* v[0] all steps as one, v[1..4] L S G R, v[5] copy bytes. */
enum { NV = 6 };

static void local_vector(const mc_nb_in_t *in, const mc_nb_plan_t *p, double *v)
{
    mc_nb_counts_t c;
    mc_nb_plan_count(in, p, &c);
    double snd = 0, rcv = 0;
    for (int s = 0; s < MC_NB_NSTEP; s++) {
        snd += side(&c, s, 0);
        rcv += side(&c, s, 1);
        v[1 + s] = step_cost(&c, s);
    }
    v[0] = snd > rcv ? snd : rcv;
    v[5] = (double)c.copy_bytes;
}

int mc_nb_costs(const mc_nb_in_t *in, mc_nb_plan_t *const *plans, int n, double *cost, int *rc)
{
    double v[MCOLL_NEIGHBOR_NALG * NV + 1];
    memset(v, 0, sizeof v);
    for (int i = 0; i < n; i++)
        if (plans[i]) local_vector(in, plans[i], v + i * NV);
    v[n * NV] = *rc != MPI_SUCCESS ? 1.0 : 0.0; /* error agreement rides along */
    int r = mc_inner_allreduce(v, n * NV + 1, MPI_DOUBLE, MPI_MAX, in->ctx->comm);
    if (r != MPI_SUCCESS) return r;
    if (v[n * NV] > 0 && *rc == MPI_SUCCESS) *rc = MPI_ERR_OTHER; /* another rank failed */
    for (int i = 0; i < n; i++) {
        const double *w = v + i * NV;
        if (!plans[i]) {
            cost[i] = -1;
        } else if (plans[i]->alg == MCOLL_NEIGHBOR_STANDARD) {
            cost[i] = w[0] + K->gamma_copy * w[5];
        } else {
            double chain = w[1 + MC_NB_S] + w[1 + MC_NB_G] + w[1 + MC_NB_R];
            cost[i] = (w[1 + MC_NB_L] > chain ? w[1 + MC_NB_L] : chain) + K->gamma_copy * w[5];
        }
    }
    return MPI_SUCCESS;
}
