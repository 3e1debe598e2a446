/* Aggregated strategy (paper Alg. 4-6, three-step aggregation, without the red indices).
 *
 * Contiguous types only: every edge is a byte block. Edges inside the region go directly
 * (L, one message per peer, duplicated edges combined). An edge a -> b to another region
 * travels a -> x (S) -> y (G) -> b (R), where x owns the pair (R(a), R(b)) in a's region
 * and y in b's region (mc_nb_assign, the same table on every rank).
 *
 * Layouts, fixed by rules so that only the G step needs metadata:
 *  S message a -> x: a's edges whose pair x owns, in a's neighbor order; x learns the
 *    (b, bytes) list through a region exchange. x stages S messages by local index.
 *  G message x -> y: edges of the pair ordered by (a ascending, a's order); x sends y the
 *    (a, b, bytes) list once at init.
 *  R message y -> b: G messages in ascending source region, b's segments in G order. b
 *    derives the same order alone: its in-edges sorted by (R(a), a, position), because a's
 *    edges to b appear in a's order, which matches b's order of the occurrences of a. */
#include "neighbor.h"
#include <stdlib.h>
#include <string.h>

typedef struct agg {
    const mc_nb_in_t *in;
    mc_nb_plan_t *p;
    int R;
    int64_t *vol;
    int *sown, *rown; /* [R*R] owners */
    int *map;         /* [size] peer -> message, reset per use */
    int *lidx;        /* [size] region-local index of ranks of this region */
    /* entries x holds for G: (a, b, bytes, address) */
    int64_t *ent; /* 3 per entry */
    char **eaddr;
    size_t nent;
} agg_t;

static void map_reset(agg_t *g)
{
    for (int i = 0; i < g->in->size; i++) g->map[i] = -1;
}

static int local_edges(agg_t *g)
{
    const mc_nb_in_t *in = g->in;
    int rc = MPI_SUCCESS;
    map_reset(g);
    for (int i = 0; i < in->outdeg && rc == MPI_SUCCESS; i++) {
        int b = in->dests[i];
        if (b == in->rank || in->region_of[b] != in->region || !mc_nb_slen(in, i)) continue;
        mc_nb_msg_t *m = mc_nb_peer_msg(g->p, g->map, b, 1, MC_NB_L);
        rc = m ? mc_nb_blks_add(&m->blks, mc_nb_saddr(in, i), mc_nb_slen(in, i)) : MPI_ERR_NO_MEM;
    }
    map_reset(g);
    for (int j = 0; j < in->indeg && rc == MPI_SUCCESS; j++) {
        int a = in->sources[j];
        if (a == in->rank || in->region_of[a] != in->region || !mc_nb_rlen(in, j)) continue;
        mc_nb_msg_t *m = mc_nb_peer_msg(g->p, g->map, a, 0, MC_NB_L);
        rc = m ? mc_nb_blks_add(&m->blks, mc_nb_raddr(in, j), mc_nb_rlen(in, j)) : MPI_ERR_NO_MEM;
    }
    return rc;
}

static int volumes(agg_t *g)
{
    const mc_nb_in_t *in = g->in;
    size_t RR = (size_t)g->R * g->R;
    g->vol = calloc(RR, sizeof(int64_t));
    g->sown = malloc(sizeof(int) * RR);
    g->rown = malloc(sizeof(int) * RR);
    if (!g->vol || !g->sown || !g->rown) return MPI_ERR_NO_MEM;
    for (int i = 0; i < in->outdeg; i++) {
        int rb = in->region_of[in->dests[i]];
        if (rb != in->region) g->vol[(size_t)in->region * g->R + rb] += (int64_t)mc_nb_slen(in, i);
    }
    int rc = mc_nb_allreduce_i64(in, g->vol, (int)RR);
    return rc == MPI_SUCCESS ? mc_nb_assign(in, g->vol, g->sown, g->rown) : rc;
}

static int x_of(const agg_t *g, int b)
{
    return g->sown[(size_t)g->in->region * g->R + g->in->region_of[b]];
}

static int push_ent(agg_t *g, size_t *cap, int64_t a, int64_t b, int64_t len, char *addr)
{
    if (g->nent == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        int64_t *e = realloc(g->ent, sizeof(int64_t) * 3 * c);
        if (!e) return MPI_ERR_NO_MEM;
        g->ent = e;
        char **ea = realloc(g->eaddr, sizeof(char *) * c);
        if (!ea) return MPI_ERR_NO_MEM;
        g->eaddr = ea;
        *cap = c;
    }
    g->ent[3 * g->nent] = a, g->ent[3 * g->nent + 1] = b, g->ent[3 * g->nent + 2] = len;
    g->eaddr[g->nent++] = addr;
    return MPI_SUCCESS;
}

/* S sends and the (b, bytes) lists for each owner x of this region. */
static int s_send(agg_t *g, int64_t **sendl, int *scnt)
{
    const mc_nb_in_t *in = g->in;
    int rc = MPI_SUCCESS;
    map_reset(g);
    for (int i = 0; i < in->outdeg && rc == MPI_SUCCESS; i++) {
        int b = in->dests[i];
        if (in->region_of[b] == in->region || !mc_nb_slen(in, i)) continue;
        int x = x_of(g, b), k = g->lidx[x];
        int64_t *l = realloc(sendl[k], sizeof(int64_t) * (size_t)(scnt[k] + 2));
        if (!l) return MPI_ERR_NO_MEM;
        sendl[k] = l;
        l[scnt[k]++] = b;
        l[scnt[k]++] = (int64_t)mc_nb_slen(in, i);
        if (x == in->rank) continue;
        mc_nb_msg_t *m = mc_nb_peer_msg(g->p, g->map, x, 1, MC_NB_S);
        rc = m ? mc_nb_blks_add(&m->blks, mc_nb_saddr(in, i), mc_nb_slen(in, i)) : MPI_ERR_NO_MEM;
    }
    return rc;
}

/* x: the next own edge (in neighbor order) whose pair this rank owns. */
static int next_own(const agg_t *g, int i)
{
    const mc_nb_in_t *in = g->in;
    while (i < in->outdeg && (in->region_of[in->dests[i]] == in->region || !mc_nb_slen(in, i) ||
                              x_of(g, in->dests[i]) != in->rank))
        i++;
    return i;
}

/* x: stage the S messages by local index; entries in (a ascending, a's order). Its own
 * edges stay in the user's buffer. */
static int s_recv(agg_t *g, const int64_t *meta, const int *rcnt)
{
    const mc_nb_in_t *in = g->in;
    size_t total = 0, cap = 0, off = 0;
    long pos = 0;
    for (int k = 0; k < in->rsize_local; pos += rcnt[k++])
        for (int e = 0; in->rmembers[k] != in->rank && e < rcnt[k]; e += 2)
            total += (size_t)meta[pos + e + 1];
    g->p->stage_s = malloc(total ? total : 1);
    g->p->stage_s_len = total;
    if (!g->p->stage_s) return MPI_ERR_NO_MEM;
    int own = 0, rc = MPI_SUCCESS;
    pos = 0;
    for (int k = 0; k < in->rsize_local && rc == MPI_SUCCESS; pos += rcnt[k++]) {
        int a = in->rmembers[k];
        size_t start = off;
        for (int e = 0; e < rcnt[k] && rc == MPI_SUCCESS; e += 2) {
            int64_t b = meta[pos + e], len = meta[pos + e + 1];
            char *addr;
            if (a != in->rank) {
                addr = g->p->stage_s + off;
                off += (size_t)len;
            } else {
                own = next_own(g, own);
                if (own == in->outdeg) return MPI_ERR_INTERN;
                addr = mc_nb_saddr(in, own++);
            }
            rc = push_ent(g, &cap, a, b, len, addr);
        }
        if (rc == MPI_SUCCESS && a != in->rank && off > start) {
            mc_nb_msg_t *m = mc_nb_plan_msg(g->p, a, 0, MC_NB_S);
            rc = m ? mc_nb_blks_add(&m->blks, g->p->stage_s + start, off - start) : MPI_ERR_NO_MEM;
        }
    }
    return rc;
}

/* x: one G message per owned destination region, with its (a, b, bytes) list to y. */
static int g_send(agg_t *g, MPI_Request **mreq, int *nmreq, int64_t **mbuf)
{
    const mc_nb_in_t *in = g->in;
    int R = g->R, n = 0, rc = MPI_SUCCESS;
    *mreq = malloc(sizeof(MPI_Request) * (size_t)R);
    *mbuf = malloc(sizeof(int64_t) * 3 * (g->nent ? g->nent : 1));
    if (!*mreq || !*mbuf) return MPI_ERR_NO_MEM;
    size_t used = 0;
    for (int rb = 0; rb < R && rc == MPI_SUCCESS; rb++) {
        if (rb == in->region || g->sown[(size_t)in->region * R + rb] != in->rank) continue;
        int y = g->rown[(size_t)in->region * R + rb];
        mc_nb_msg_t *m = mc_nb_plan_msg(g->p, y, 1, MC_NB_G);
        if (!m) return MPI_ERR_NO_MEM;
        size_t first = used;
        for (size_t e = 0; e < g->nent && rc == MPI_SUCCESS; e++) {
            if (in->region_of[g->ent[3 * e + 1]] != rb) continue;
            memcpy(*mbuf + 3 * used++, g->ent + 3 * e, 3 * sizeof(int64_t));
            rc = mc_nb_blks_add(&m->blks, g->eaddr[e], (size_t)g->ent[3 * e + 2]);
        }
        if (rc == MPI_SUCCESS)
            rc = PMPI_Isend(*mbuf + 3 * first, (int)(3 * (used - first)), MPI_INT64_T, y,
                            in->tag0 + MC_NB_TAG_META, in->comm, &(*mreq)[n++]);
    }
    *nmreq = n;
    return rc;
}

static int recv_meta(const mc_nb_in_t *in, int src, int64_t **buf, int *n)
{
    MPI_Status st;
    int rc = mc_probe(src, in->tag0 + MC_NB_TAG_META, in->comm, &st);
    if (rc == MPI_SUCCESS) rc = PMPI_Get_count(&st, MPI_INT64_T, n);
    if (rc != MPI_SUCCESS) return rc;
    *buf = malloc(sizeof(int64_t) * (size_t)(*n ? *n : 1));
    if (!*buf) return MPI_ERR_NO_MEM;
    return PMPI_Recv(*buf, *n, MPI_INT64_T, src, in->tag0 + MC_NB_TAG_META, in->comm, MPI_STATUS_IGNORE);
}

/* b: this rank's inter-region in-edges sorted by (R(a), a, position): the R order. */
static int *r_order(const agg_t *g, int *n);

/* y: stage the G messages (ascending source region), then one R message per destination;
 * its own share becomes copies from the staging. `mine` is this rank's R order. */
static int g_recv(agg_t *g, const int *mine, int nmine)
{
    const mc_nb_in_t *in = g->in;
    int R = g->R, rc = MPI_SUCCESS, my = 0;
    int64_t **meta = calloc((size_t)R, sizeof(int64_t *));
    int *mn = calloc((size_t)R, sizeof(int));
    if (!meta || !mn) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    size_t total = 0;
    for (int ra = 0; ra < R && rc == MPI_SUCCESS; ra++) {
        if (ra == in->region || g->rown[(size_t)ra * R + in->region] != in->rank) continue;
        rc = recv_meta(in, g->sown[(size_t)ra * R + in->region], &meta[ra], &mn[ra]);
        for (int e = 0; rc == MPI_SUCCESS && e < mn[ra]; e += 3) total += (size_t)meta[ra][e + 2];
    }
    if (rc != MPI_SUCCESS) goto out;
    g->p->stage_g = malloc(total ? total : 1);
    g->p->stage_g_len = total;
    if (!g->p->stage_g) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    map_reset(g);
    size_t off = 0;
    for (int ra = 0; ra < R && rc == MPI_SUCCESS; ra++) {
        if (!meta[ra]) continue;
        mc_nb_msg_t *gm = mc_nb_plan_msg(g->p, g->sown[(size_t)ra * R + in->region], 0, MC_NB_G);
        if (!gm) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        size_t start = off;
        for (int e = 0; e < mn[ra] && rc == MPI_SUCCESS; e += 3, off += (size_t)meta[ra][e - 1]) {
            int b = (int)meta[ra][e + 1];
            size_t len = (size_t)meta[ra][e + 2];
            if (b != in->rank) {
                mc_nb_msg_t *m = mc_nb_peer_msg(g->p, g->map, b, 1, MC_NB_R);
                rc = m ? mc_nb_blks_add(&m->blks, g->p->stage_g + off, len) : MPI_ERR_NO_MEM;
                continue;
            }
            /* own share: the next edge of this rank's R order whose source region is ra */
            while (my < nmine && in->region_of[in->sources[mine[my]]] < ra) my++;
            if (my == nmine || mc_nb_rlen(in, mine[my]) != len || in->sources[mine[my]] != (int)meta[ra][e]) {
                rc = MPI_ERR_TRUNCATE;
                break;
            }
            rc = mc_nb_copy_add(&g->p->copy_g, mc_nb_raddr(in, mine[my]), g->p->stage_g + off, len);
            my++;
        }
        if (rc == MPI_SUCCESS) rc = mc_nb_blks_add(&gm->blks, g->p->stage_g + start, off - start);
    }
out:
    for (int ra = 0; meta && ra < R; ra++) free(meta[ra]);
    free(meta), free(mn);
    return rc;
}

static const mc_nb_in_t *sort_in;
static int by_region_rank(const void *x, const void *y)
{
    int i = *(const int *)x, j = *(const int *)y;
    int ai = sort_in->sources[i], aj = sort_in->sources[j];
    int ri = sort_in->region_of[ai], rj = sort_in->region_of[aj];
    if (ri != rj) return ri - rj;
    if (ai != aj) return ai - aj;
    return i - j;
}

static int *r_order(const agg_t *g, int *n)
{
    const mc_nb_in_t *in = g->in;
    int *o = malloc(sizeof(int) * (size_t)(in->indeg ? in->indeg : 1));
    *n = 0;
    if (!o) return NULL;
    for (int j = 0; j < in->indeg; j++)
        if (in->region_of[in->sources[j]] != in->region && mc_nb_rlen(in, j)) o[(*n)++] = j;
    sort_in = in; /* init runs on one thread at a time per process (MPI collective) */
    qsort(o, (size_t)*n, sizeof(int), by_region_rank);
    return o;
}

/* b: R receives, one per y other than itself, blocks in the R order. */
static int r_recv(agg_t *g, const int *mine, int nmine)
{
    const mc_nb_in_t *in = g->in;
    int rc = MPI_SUCCESS;
    map_reset(g);
    for (int k = 0; k < nmine && rc == MPI_SUCCESS; k++) {
        int j = mine[k];
        int y = g->rown[(size_t)in->region_of[in->sources[j]] * g->R + in->region];
        if (y == in->rank) continue;
        mc_nb_msg_t *m = mc_nb_peer_msg(g->p, g->map, y, 0, MC_NB_R);
        rc = m ? mc_nb_blks_add(&m->blks, mc_nb_raddr(in, j), mc_nb_rlen(in, j)) : MPI_ERR_NO_MEM;
    }
    return rc;
}

static int build(agg_t *g)
{
    const mc_nb_in_t *in = g->in;
    int n = in->rsize_local, rc, nmreq = 0, nmine = 0;
    int64_t **sendl = calloc((size_t)n, sizeof(int64_t *)), *meta = NULL, *mbuf = NULL;
    int *scnt = calloc((size_t)n, sizeof(int)), *rcnt = calloc((size_t)n, sizeof(int));
    MPI_Request *mreq = NULL;
    int *mine = r_order(g, &nmine);
    if (!sendl || !scnt || !rcnt || !mine) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    rc = mc_nb_self_copies(in, g->p);
    if (rc == MPI_SUCCESS) rc = local_edges(g);
    if (rc == MPI_SUCCESS) rc = volumes(g);
    if (rc == MPI_SUCCESS) rc = s_send(g, sendl, scnt);
    if (rc == MPI_SUCCESS) rc = mc_nb_region_exchange(in, sendl, scnt, &meta, rcnt);
    if (rc == MPI_SUCCESS) rc = s_recv(g, meta, rcnt);
    if (rc == MPI_SUCCESS) rc = g_send(g, &mreq, &nmreq, &mbuf);
    if (rc == MPI_SUCCESS) rc = g_recv(g, mine, nmine);
    if (nmreq) {
        int rc2 = mc_waitall(nmreq, mreq);
        if (rc == MPI_SUCCESS) rc = rc2;
    }
    if (rc == MPI_SUCCESS) rc = r_recv(g, mine, nmine);
out:
    for (int k = 0; sendl && k < n; k++) free(sendl[k]);
    free(sendl), free(scnt), free(rcnt), free(meta), free(mbuf), free(mreq), free(mine);
    return rc;
}

int mc_nb_plan_aggregated(const mc_nb_in_t *in, mc_nb_plan_t *p)
{
    agg_t g = {.in = in, .p = p, .R = in->nregions};
    int rc = MPI_SUCCESS;
    p->alg = MCOLL_NEIGHBOR_AGGREGATED;
    g.map = mc_nb_map_new(in->size);
    g.lidx = mc_nb_map_new(in->size);
    if (!g.map || !g.lidx) rc = MPI_ERR_NO_MEM;
    for (int k = 0; rc == MPI_SUCCESS && k < in->rsize_local; k++) g.lidx[in->rmembers[k]] = k;
    if (rc == MPI_SUCCESS) rc = build(&g);
    free(g.vol), free(g.sown), free(g.rown), free(g.map), free(g.lidx), free(g.ent), free(g.eaddr);
    return rc;
}
