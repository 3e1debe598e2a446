/* Persistent neighborhood alltoallv (issue 5): plans built once at init, run per MPI_Start.
 *
 * A plan is a list of steps; a step is a set of point-to-point messages. Every message is
 * described as a list of memory blocks (absolute addresses), so one MPI datatype over
 * MPI_BOTTOM gathers or scatters it without a staging copy; the standard strategy instead
 * keeps the user's (count, datatype) per neighbor, so it works for any datatype.
 *
 * Steps (paper: Collom, Li, Bienz, SC-W 2023, Alg. 4-6):
 *   L  fully local messages (same region) and the standard strategy's messages
 *   S  initial redistribution to the region rank that owns a destination region
 *   G  one message per (source region, destination region) pair
 *   R  final redistribution from the receiving rank to the destination ranks
 * L, S and all receives start at MPI_Start; G sends start once the S receives are in, R sends
 * once the G receives are in. Local copies (self-loops, the receiving rank's own share,
 * duplicates of de-duplicated values) run at completion. */
#ifndef MC_NEIGHBOR_H
#define MC_NEIGHBOR_H
#include "../core/mc.h"
#include "../p2p/p2p.h"
#include "mcoll.h"

enum { MC_NB_L, MC_NB_S, MC_NB_G, MC_NB_R, MC_NB_NSTEP };

/* A memory block of a message: `len` bytes at `addr`. */
typedef struct mc_nb_blk {
    char *addr;
    size_t len;
} mc_nb_blk_t;

/* A growable list of blocks (one message's layout, or one side of a copy list). */
typedef struct mc_nb_blks {
    mc_nb_blk_t *b;
    size_t n, cap;
    size_t bytes;
} mc_nb_blks_t;

int mc_nb_blks_add(mc_nb_blks_t *l, const void *addr, size_t len);
void mc_nb_blks_free(mc_nb_blks_t *l);

/* One message of a plan: either blocks (absolute, built into an hindexed MPI_BYTE type) or
 * the user's (buf, count, type) for the standard strategy. */
typedef struct mc_nb_msg {
    int peer;          /* rank of the plan's communicator */
    int send;          /* 1 send, 0 receive */
    int step;          /* MC_NB_L.. */
    mc_nb_blks_t blks; /* used when utype == MPI_DATATYPE_NULL */
    void *ubuf;        /* standard: user buffer address of the block */
    int ucount;
    MPI_Datatype utype;
    size_t bytes; /* payload */
} mc_nb_msg_t;

/* Local copy: dst[i] <- src[i] (same lengths), run in list order at completion. */
typedef struct mc_nb_copy {
    mc_nb_blks_t src, dst;
} mc_nb_copy_t;

/* A plan under construction or ready: what the strategies produce. */
typedef struct mc_nb_plan {
    int alg; /* MCOLL_NEIGHBOR_* */
    mc_nb_msg_t *msg;
    int nmsg, capmsg;
    mc_nb_copy_t copy_self;  /* self-loops: sbuf -> rbuf */
    mc_nb_copy_t copy_g;     /* G staging -> rbuf (this rank receives its own region's share) */
    mc_nb_copy_t copy_dup;   /* rbuf -> rbuf (de-duplicated values to their other positions) */
    char *stage_s, *stage_g; /* staging of S receives and G receives (owned) */
    size_t stage_s_len, stage_g_len;
} mc_nb_plan_t;

mc_nb_msg_t *mc_nb_plan_msg(mc_nb_plan_t *p, int peer, int send, int step);
void mc_nb_plan_free(mc_nb_plan_t *p);
int mc_nb_copy_add(mc_nb_copy_t *c, const void *dst, const void *src, size_t len);

/* Everything the strategies need to know about the call. */
typedef struct mc_nb_in {
    mc_ctx_t *ctx;
    MPI_Comm comm; /* the request's communicator (rank numbering = user's; the set-up's
                    * collectives run on ctx->comm, the user's, by mcoll's own algorithms) */
    int tag0;      /* the request's tags (mc_nb_share_t) */
    int shared;    /* agreed: the request takes `slot` of the shared communicator */
    uint32_t slot;
    int size, rank;
    int indeg, outdeg;
    int *sources, *dests;
    const char *sbuf;
    char *rbuf;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype stype, rtype;
    MPI_Aint sext, rext;
    int ssize, rsize;
    int contig;                 /* both types: size == extent, lb == true_lb == 0 */
    const int64_t *sidx, *ridx; /* may be NULL */
    /* regions */
    int nregions, region;
    int *region_of;          /* [size] */
    int *rmembers;           /* ranks of this region, ascending */
    int rsize_local, rlocal; /* ranks in this region, this rank's index */
    int region_socket;
    /* agreed by every rank before the set-up (types and index arrays may differ per rank) */
    int agg_ok, dedup_ok;
} mc_nb_in_t;

/* Per rank counts of a plan (what this rank sends/receives per iteration). */
typedef struct mc_nb_counts {
    uint64_t msgs[MC_NB_NSTEP][2][2]; /* [step][0 intra / 1 inter][0 send / 1 recv] */
    uint64_t bytes[MC_NB_NSTEP][2][2];
    uint64_t self_bytes, copy_bytes;
} mc_nb_counts_t;

/* The message of (step, direction) to/from peer, created on first use; map[peer] holds its
 * index (size ranks, initialised to -1 by the caller, one map per step and direction). */
mc_nb_msg_t *mc_nb_peer_msg(mc_nb_plan_t *p, int *map, int peer, int send, int step);
/* Self-loops: the k-th out-edge to this rank feeds the k-th in-edge from it (byte copies;
 * contiguous types). MPI_ERR_TRUNCATE when the sizes disagree. */
int mc_nb_self_copies(const mc_nb_in_t *in, mc_nb_plan_t *p);
/* Address and bytes of send edge i / receive edge i (contiguous types). */
static inline char *mc_nb_saddr(const mc_nb_in_t *in, int i)
{
    return (char *)in->sbuf + (MPI_Aint)in->sdispls[i] * in->sext;
}
static inline char *mc_nb_raddr(const mc_nb_in_t *in, int i)
{
    return in->rbuf + (MPI_Aint)in->rdispls[i] * in->rext;
}
static inline size_t mc_nb_slen(const mc_nb_in_t *in, int i)
{
    return (size_t)in->scounts[i] * (size_t)in->ssize;
}
static inline size_t mc_nb_rlen(const mc_nb_in_t *in, int i)
{
    return (size_t)in->rcounts[i] * (size_t)in->rsize;
}
/* int map of `n` entries set to -1 (malloc'ed). */
int *mc_nb_map_new(int n);
/* A request's tags, from its tag0: tag0 + step for its messages (MC_NB_L..MC_NB_R), tag0 +
 * MC_NB_TAG_META for the G step's metadata (a list to each peer, one from it, int64) and tag0
 * + MC_NB_TAG_REGION for the lists exchanged inside a region (mc_nb_region_exchange). */
#define MC_NB_TAG_META 4
#define MC_NB_TAG_REGION 5
#define MC_NB_NTAG 8

void mc_nb_plan_count(const mc_nb_in_t *in, const mc_nb_plan_t *p, mc_nb_counts_t *c);

/* Strategies: fill `p` (collective over in->comm). */
int mc_nb_plan_standard(const mc_nb_in_t *in, mc_nb_plan_t *p);
int mc_nb_plan_aggregated(const mc_nb_in_t *in, mc_nb_plan_t *p);
int mc_nb_plan_dedup(const mc_nb_in_t *in, mc_nb_plan_t *p);

/* Region helpers (region.c). */
int mc_nb_regions(mc_nb_in_t *in);
void mc_nb_regions_free(mc_nb_in_t *in);
/* Owners of the inter-region pairs, load-balanced inside each region (LPT over the pair
 * weights). vol[ra * R + rb] = bytes from region ra to region rb (same on all ranks).
 * send_owner[ra * R + rb] = comm rank in ra that sends the G message of the pair,
 * recv_owner[ra * R + rb] = comm rank in rb that receives it (-1: no traffic). */
int mc_nb_assign(const mc_nb_in_t *in, const int64_t *vol, int *send_owner, int *recv_owner);
/* Sums every rank's row contributions: vol is R*R, in/out. */
int mc_nb_allreduce_i64(const mc_nb_in_t *in, int64_t *v, int n);
/* Exchange of variable-length int64 lists inside the region (point-to-point on in->comm):
 * sendl[k] goes to region index k. Results malloc'ed: *recv (concatenated), rcnt[k]. */
int mc_nb_region_exchange(const mc_nb_in_t *in, int64_t **sendl, const int *scnt, int64_t **recv, int *rcnt);

/* Cost model (cost.c): predicted seconds per iteration of plans[i] (NULL: cost -1), the
 * same on every rank (collective over in->comm). *rc is agreed on too: it becomes an error
 * on every rank when it is one on any. */
int mc_nb_costs(const mc_nb_in_t *in, mc_nb_plan_t *const *plans, int n, double *cost, int *rc);
/* Selects the cost parameters of this thread's init: node regions (intra / inter lines of the
 * profile) or socket regions (the intra line for both). Before mc_nb_regions. */
void mc_nb_cost_params(int region_socket);
/* LPT weight of an inter-region pair of `bytes`. */
double mc_nb_pair_weight(int64_t bytes);

/* Small hash map (source rank, id) -> value index, open addressing. */
typedef struct mc_nb_map {
    int64_t *key_id;
    int *key_rank;
    size_t *val;
    size_t cap, n;
} mc_nb_map_t;
int mc_nb_map_init(mc_nb_map_t *m, size_t expect);
/* Returns 1 and *val when present; else inserts val (when insert) and returns 0. -1: no memory. */
int mc_nb_map_get(mc_nb_map_t *m, int rank, int64_t id, size_t *val, int insert);
void mc_nb_map_free(mc_nb_map_t *m);

/* MCOLL_NEIGHBOR_* variables are read straight from the config table (init-time only). */
const char *mc_nb_cfg(const char *name);

/* ---------------------------------------------------------------- shared communicator */
/* The persistent requests of a user communicator send on one duplicate of it, made at its
 * first init and held by its context and by every request made on it (share.c). Inits are
 * collective, so every rank numbers them alike: init k proposes slot k mod nslots (nslots =
 * (MPI_TAG_UB + 1) / MC_NB_NTAG, capped at 2^20), whose tags are slot * MC_NB_NTAG + kind; the
 * set-up's first allreduce agrees whether it is free on every rank (a request of slot k -
 * nslots still alive somewhere). If not, the request makes a duplicate of its own, as it
 * would if the shared one could not be made. */
typedef struct mc_nb_share mc_nb_share_t;
/* The next slot of ctx's shared communicator (made here at the first call: collective on
 * ctx's communicator); 1 when it is free on this rank. */
int mc_nb_share_propose(mc_ctx_t *ctx, uint32_t *slot);
/* Takes an agreed free slot for a new request (cannot fail after a proposal said free). */
mc_nb_share_t *mc_nb_share_take(mc_ctx_t *ctx, uint32_t slot);
MPI_Comm mc_nb_share_comm(const mc_nb_share_t *s);
/* A destroyed request's slot: free again, its reference dropped. */
void mc_nb_share_drop(mc_nb_share_t *s, uint32_t slot);

/* ---------------------------------------------------------------- requests */
typedef struct mc_nb_req mc_nb_req_t;

/* Builds a persistent request for the call (collective over comm). alg: forced strategy
 * or -1 for automatic; region_socket 0/1. */
int mc_nb_init(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
               const int *rcounts, const int *rdispls, MPI_Datatype rtype, const int64_t *sidx,
               const int64_t *ridx, MPI_Comm comm, MPI_Info info, MPI_Request *request);

/* Handle table: the mcoll request behind a handle, or NULL (fast when none exist). */
mc_nb_req_t *mc_nb_lookup(MPI_Request h);
int mc_nb_any(void); /* some mcoll neighbor request exists */
int mc_nb_start(mc_nb_req_t *r);
/* Progress every active request once; returns 1 if r (may be NULL) is complete/inactive. */
int mc_nb_test(mc_nb_req_t *r, int *flag);
int mc_nb_wait(mc_nb_req_t *r);
/* MPI_Request_free: completes an active request, then frees it; *h becomes MPI_REQUEST_NULL. */
int mc_nb_free(mc_nb_req_t *r, MPI_Request *h);
/* Active as MPI sees it: started and not yet completed by a wait or test call. */
int mc_nb_active(const mc_nb_req_t *r);
/* The current iteration has finished (the request may still be user-active). */
int mc_nb_done(const mc_nb_req_t *r);
/* A wait/test call reports the completion: the request becomes inactive. */
void mc_nb_complete(mc_nb_req_t *r);
MPI_Comm mc_nb_user_comm(const mc_nb_req_t *r);
/* Empty status of a completed persistent collective. */
void mc_nb_status_empty(MPI_Status *st);

/* Blocking MPI_Neighbor_alltoallv on a dist-graph communicator. Returns 1 when handled. */
int mc_nb_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
                    const int *rcounts, const int *rdispls, MPI_Datatype rtype, MPI_Comm comm, int *rc);
#endif
