/* The communicator the persistent requests of one user communicator share (neighbor.h,
 * "Shared communicator"). A duplicate per request cost every init an agreement on a context id
 * (a collective of the native MPI: at 3 ranks on the 2 cores of the development machine,
 * MPICH polls a time slice away in each) and one of the MPI's context ids for the request's
 * life (MPICH 4.0 has about 2048). */
#include "neighbor_req.h"
#include <pthread.h>
#include <stdlib.h>

struct mc_nb_share {
    MPI_Comm comm;
    int refs;        /* the context's, and one per request holding a slot */
    uint32_t next;   /* the slot the next init proposes */
    uint32_t nslots; /* by the communicator's MPI_TAG_UB */
    uint32_t *live;  /* slots of this rank's requests not yet destroyed */
    int nlive, cap;
};

/* Requests are destroyed on whichever thread completes them; inits and destructions are rare. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t slots_of(MPI_Comm comm)
{
    int *ub = NULL, flag = 0;
    long top = 32767; /* the least MPI_TAG_UB the standard allows */
    if (PMPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag && ub) top = *ub;
    long n = (top + 1) / MC_NB_NTAG, cap = atol(mc_nb_cfg("MCOLL_NEIGHBOR_SLOTS"));
    if (cap > 0 && cap < n) n = cap;
    return n < 1 ? 1 : n > (1L << 20) ? (1u << 20) : (uint32_t)n;
}

/* Marks a context whose duplicate could not be made or kept (never retried: the duplicate is
 * collective, and every rank must make the same calls). */
static mc_nb_share_t none = {.comm = MPI_COMM_NULL};

/* Collective on ctx's communicator the first time (every rank's first init on it). */
static mc_nb_share_t *share_of(mc_ctx_t *ctx)
{
    if (ctx->nb) return ctx->nb;
    MPI_Comm comm;
    mc_nb_share_t *s = NULL;
    if (PMPI_Comm_dup(ctx->pcomm, &comm) == MPI_SUCCESS) {
        s = calloc(1, sizeof *s);
        if (s)
            s->refs = 1, s->comm = comm, s->nslots = slots_of(comm);
        else
            PMPI_Comm_free(&comm);
    }
    ctx->nb = s ? s : &none;
    return ctx->nb;
}

static int is_live(const mc_nb_share_t *s, uint32_t slot)
{
    for (int i = 0; i < s->nlive; i++)
        if (s->live[i] == slot) return 1;
    return 0;
}

int mc_nb_share_propose(mc_ctx_t *ctx, uint32_t *slot)
{
    mc_nb_share_t *s = share_of(ctx);
    if (s == &none) return 0;
    pthread_mutex_lock(&lock);
    *slot = s->next;
    s->next = (s->next + 1) % s->nslots;
    int free_here = !is_live(s, *slot);
    if (free_here && s->nlive == s->cap) { /* room for mc_nb_share_take, which cannot fail */
        int cap = s->cap ? 2 * s->cap : 8;
        uint32_t *l = realloc(s->live, sizeof *l * (size_t)cap);
        if (l)
            s->live = l, s->cap = cap;
        else
            free_here = 0;
    }
    pthread_mutex_unlock(&lock);
    return free_here;
}

mc_nb_share_t *mc_nb_share_take(mc_ctx_t *ctx, uint32_t slot)
{
    mc_nb_share_t *s = ctx->nb;
    pthread_mutex_lock(&lock);
    s->live[s->nlive++] = slot;
    s->refs++;
    pthread_mutex_unlock(&lock);
    return s;
}

MPI_Comm mc_nb_share_comm(const mc_nb_share_t *s)
{
    return s->comm;
}

/* The last reference frees the duplicate (not after MPI_Finalize: the MPI freed it then). */
static void unref(mc_nb_share_t *s)
{
    if (--s->refs > 0) return;
    int fin = 0;
    PMPI_Finalized(&fin);
    if (!fin) PMPI_Comm_free(&s->comm);
    free(s->live);
    free(s);
}

void mc_nb_share_drop(mc_nb_share_t *s, uint32_t slot)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < s->nlive; i++)
        if (s->live[i] == slot) {
            s->live[i] = s->live[--s->nlive];
            break;
        }
    unref(s);
    pthread_mutex_unlock(&lock);
}

void mc_nb_share_release(mc_nb_share_t *s)
{
    if (!s || s == &none) return;
    pthread_mutex_lock(&lock);
    unref(s);
    pthread_mutex_unlock(&lock);
}
