/* De-duplicating strategy (paper §3.3, the red indices of Alg. 4).
 *
 * A value is named by (source rank, global id); one element of the datatype each (send and
 * receive types of equal size, contiguous). The aggregated path of plan_aggregated.c, but:
 *  L  a -> b in the region: each distinct id once (first occurrence in a's order; b derives
 *     the same sequence from its receive ids, and copies duplicates locally);
 *  S  a -> x: D(a, RB) = the distinct ids a sends to region RB, once, with the id lists
 *     (region exchange) so x knows what it holds;
 *  G  x -> y: the D(a, RB) of every a of the region (a ascending), with the (a, id) list;
 *  R  y -> b: exactly the (a, id) b asked for: every b tells each y its distinct needs
 *     (region exchange), in the order of first occurrence in its receive positions; b
 *     receives them into those first positions and copies the duplicates.
 * Self-loops are position-to-position copies (no ids needed). */
#include "neighbor.h"
#include <stdlib.h>
#include <string.h>

typedef struct dd {
    const mc_nb_in_t *in;
    mc_nb_plan_t *p;
    int R, e;
    int *lidx, *map;
    int64_t *vol;
    int *sown, *rown;
    /* distinct inter-region send values of this rank: per destination region, in order */
    int64_t **did;
    char ***daddr;
    int *dn, *dcap;
    /* values x holds for G: (a, id, address), by destination region */
    int64_t **gid;
    char ***gaddr;
    int *gn, *gcap;
    mc_nb_map_t gmap; /* y: (a, id) -> offset in the G staging */
    int64_t **need;   /* b: per region-local y, (a, id) pairs */
    int *nneed;
    char **own_need; /* b: first positions of the values y == b provides */
    int nown;
    mc_nb_map_t lmap; /* scratch map of the current walk */
} dd_t;

static int grow_list(int64_t **ids, char ***addrs, int *n, int *cap, int pairs)
{
    if (*n < *cap) return MPI_SUCCESS;
    int c = *cap ? 2 * *cap : 16;
    int64_t *ni = realloc(*ids, sizeof(int64_t) * (size_t)c * (size_t)pairs);
    if (!ni) return MPI_ERR_NO_MEM;
    *ids = ni;
    if (addrs) {
        char **na = realloc(*addrs, sizeof(char *) * (size_t)c);
        if (!na) return MPI_ERR_NO_MEM;
        *addrs = na;
    }
    *cap = c;
    return MPI_SUCCESS;
}

static int push64(int64_t **l, int *n, int64_t v)
{
    int64_t *nl = realloc(*l, sizeof(int64_t) * (size_t)(*n + 1));
    if (!nl) return MPI_ERR_NO_MEM;
    nl[(*n)++] = v;
    *l = nl;
    return MPI_SUCCESS;
}

/* Walks send (recv) positions: f(dd, edge, position index, address, peer, id). */
typedef int (*pos_fn)(dd_t *d, int peer, int64_t id, char *addr);
static int walk(dd_t *d, int send, pos_fn f)
{
    const mc_nb_in_t *in = d->in;
    int n = send ? in->outdeg : in->indeg, rc = MPI_SUCCESS;
    int64_t k = 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        int cnt = send ? in->scounts[i] : in->rcounts[i];
        int peer = send ? in->dests[i] : in->sources[i];
        char *base = send ? mc_nb_saddr(in, i) : mc_nb_raddr(in, i);
        for (int j = 0; j < cnt && rc == MPI_SUCCESS; j++, k++)
            if (peer != in->rank && d->e > 0)
                rc = f(d, peer, send ? in->sidx[k] : in->ridx[k], base + (size_t)j * (size_t)d->e);
    }
    return rc;
}

/* ---------------------------------------------------------------- L */
static int l_send(dd_t *d, int b, int64_t id, char *addr)
{
    const mc_nb_in_t *in = d->in;
    size_t v = 0;
    if (in->region_of[b] != in->region) return MPI_SUCCESS;
    int r = mc_nb_map_get(&d->lmap, b, id, &v, 1);
    if (r < 0) return MPI_ERR_NO_MEM;
    if (r == 1) return MPI_SUCCESS;
    mc_nb_msg_t *m = mc_nb_peer_msg(d->p, d->map, b, 1, MC_NB_L);
    return m ? mc_nb_blks_add(&m->blks, addr, (size_t)d->e) : MPI_ERR_NO_MEM;
}

static int l_recv(dd_t *d, int a, int64_t id, char *addr)
{
    const mc_nb_in_t *in = d->in;
    size_t v = (size_t)addr;
    if (in->region_of[a] != in->region) return MPI_SUCCESS;
    int r = mc_nb_map_get(&d->lmap, a, id, &v, 1);
    if (r < 0) return MPI_ERR_NO_MEM;
    if (r == 1) return mc_nb_copy_add(&d->p->copy_dup, addr, (char *)v, (size_t)d->e);
    mc_nb_msg_t *m = mc_nb_peer_msg(d->p, d->map, a, 0, MC_NB_L);
    return m ? mc_nb_blks_add(&m->blks, addr, (size_t)d->e) : MPI_ERR_NO_MEM;
}

static int local_step(dd_t *d, int send)
{
    int rc = mc_nb_map_init(&d->lmap, 64);
    for (int i = 0; i < d->in->size; i++) d->map[i] = -1;
    if (rc == MPI_SUCCESS) rc = walk(d, send, send ? l_send : l_recv);
    mc_nb_map_free(&d->lmap);
    return rc;
}

/* ---------------------------------------------------------------- D(a, RB) */
static int d_collect(dd_t *d, int b, int64_t id, char *addr)
{
    int rb = d->in->region_of[b];
    size_t v = 0;
    if (rb == d->in->region) return MPI_SUCCESS;
    int r = mc_nb_map_get(&d->lmap, rb, id, &v, 1);
    if (r != 0) return r < 0 ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    int rc = grow_list(&d->did[rb], &d->daddr[rb], &d->dn[rb], &d->dcap[rb], 1);
    if (rc != MPI_SUCCESS) return rc;
    d->did[rb][d->dn[rb]] = id;
    d->daddr[rb][d->dn[rb]++] = addr;
    return MPI_SUCCESS;
}

static int distinct_sends(dd_t *d)
{
    const mc_nb_in_t *in = d->in;
    int R = d->R, rc = mc_nb_map_init(&d->lmap, 64);
    size_t RR = (size_t)R * R;
    if (rc == MPI_SUCCESS) rc = walk(d, 1, d_collect);
    mc_nb_map_free(&d->lmap);
    if (rc != MPI_SUCCESS) return rc;
    d->vol = calloc(RR, sizeof(int64_t));
    d->sown = malloc(sizeof(int) * RR);
    d->rown = malloc(sizeof(int) * RR);
    if (!d->vol || !d->sown || !d->rown) return MPI_ERR_NO_MEM;
    for (int rb = 0; rb < R; rb++) d->vol[(size_t)in->region * R + rb] = (int64_t)d->dn[rb] * d->e;
    rc = mc_nb_allreduce_i64(in, d->vol, (int)RR);
    return rc == MPI_SUCCESS ? mc_nb_assign(in, d->vol, d->sown, d->rown) : rc;
}

/* ---------------------------------------------------------------- S */
static int s_send(dd_t *d, int64_t **sendl, int *scnt)
{
    const mc_nb_in_t *in = d->in;
    int R = d->R, rc = MPI_SUCCESS;
    for (int i = 0; i < in->size; i++) d->map[i] = -1;
    for (int rb = 0; rb < R && rc == MPI_SUCCESS; rb++) {
        if (!d->dn[rb]) continue;
        int x = d->sown[(size_t)in->region * R + rb], k = d->lidx[x];
        rc = push64(&sendl[k], &scnt[k], rb);
        if (rc == MPI_SUCCESS) rc = push64(&sendl[k], &scnt[k], d->dn[rb]);
        for (int v = 0; v < d->dn[rb] && rc == MPI_SUCCESS; v++)
            rc = push64(&sendl[k], &scnt[k], d->did[rb][v]);
        if (x == in->rank || rc != MPI_SUCCESS) continue;
        mc_nb_msg_t *m = mc_nb_peer_msg(d->p, d->map, x, 1, MC_NB_S);
        for (int v = 0; m && v < d->dn[rb] && rc == MPI_SUCCESS; v++)
            rc = mc_nb_blks_add(&m->blks, d->daddr[rb][v], (size_t)d->e);
        if (!m) rc = MPI_ERR_NO_MEM;
    }
    return rc;
}

static int g_push(dd_t *d, int rb, int64_t a, int64_t id, char *addr)
{
    int rc = grow_list(&d->gid[rb], &d->gaddr[rb], &d->gn[rb], &d->gcap[rb], 2);
    if (rc != MPI_SUCCESS) return rc;
    d->gid[rb][2 * d->gn[rb]] = a, d->gid[rb][2 * d->gn[rb] + 1] = id;
    d->gaddr[rb][d->gn[rb]++] = addr;
    return MPI_SUCCESS;
}

/* x: stage S messages (local index order); G values per destination region. */
static int s_recv(dd_t *d, const int64_t *meta, const int *rcnt)
{
    const mc_nb_in_t *in = d->in;
    size_t total = 0, off = 0;
    long pos = 0;
    for (int k = 0; k < in->rsize_local; pos += rcnt[k++])
        for (long e = pos; in->rmembers[k] != in->rank && e < pos + rcnt[k]; e += 2 + meta[e + 1])
            total += (size_t)meta[e + 1] * (size_t)d->e;
    d->p->stage_s = malloc(total ? total : 1);
    d->p->stage_s_len = total;
    if (!d->p->stage_s) return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    pos = 0;
    for (int k = 0; k < in->rsize_local && rc == MPI_SUCCESS; pos += rcnt[k++]) {
        int a = in->rmembers[k];
        size_t start = off;
        for (long e = pos; e < pos + rcnt[k] && rc == MPI_SUCCESS; e += 2 + meta[e + 1]) {
            int rb = (int)meta[e];
            for (int64_t v = 0; v < meta[e + 1] && rc == MPI_SUCCESS; v++) {
                char *addr = a == in->rank ? d->daddr[rb][v] : d->p->stage_s + off;
                if (a != in->rank) off += (size_t)d->e;
                rc = g_push(d, rb, a, meta[e + 2 + v], addr);
            }
        }
        if (rc == MPI_SUCCESS && a != in->rank && off > start) {
            mc_nb_msg_t *m = mc_nb_plan_msg(d->p, a, 0, MC_NB_S);
            rc = m ? mc_nb_blks_add(&m->blks, d->p->stage_s + start, off - start) : MPI_ERR_NO_MEM;
        }
    }
    return rc;
}

/* ---------------------------------------------------------------- G */
static int g_send(dd_t *d, MPI_Request *mreq, int *nmreq)
{
    const mc_nb_in_t *in = d->in;
    int R = d->R, rc = MPI_SUCCESS;
    *nmreq = 0;
    for (int rb = 0; rb < R && rc == MPI_SUCCESS; rb++) {
        if (rb == in->region || !d->gn[rb]) continue;
        int y = d->rown[(size_t)in->region * R + rb];
        mc_nb_msg_t *m = mc_nb_plan_msg(d->p, y, 1, MC_NB_G);
        if (!m) return MPI_ERR_NO_MEM;
        for (int v = 0; v < d->gn[rb] && rc == MPI_SUCCESS; v++)
            rc = mc_nb_blks_add(&m->blks, d->gaddr[rb][v], (size_t)d->e);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Isend(d->gid[rb], 2 * d->gn[rb], MPI_INT64_T, y, in->tag0 + MC_NB_TAG_META, in->comm,
                            &mreq[(*nmreq)++]);
    }
    return rc;
}

static int g_recv(dd_t *d)
{
    const mc_nb_in_t *in = d->in;
    int R = d->R, rc = mc_nb_map_init(&d->gmap, 64);
    int64_t **meta = calloc((size_t)R, sizeof(int64_t *));
    int *mn = calloc((size_t)R, sizeof(int));
    size_t total = 0;
    if (!meta || !mn) rc = MPI_ERR_NO_MEM;
    for (int ra = 0; ra < R && rc == MPI_SUCCESS; ra++) {
        if (ra == in->region || d->rown[(size_t)ra * R + in->region] != in->rank) continue;
        int x = d->sown[(size_t)ra * R + in->region];
        MPI_Status st;
        rc = mc_probe(x, in->tag0 + MC_NB_TAG_META, in->comm, &st);
        if (rc == MPI_SUCCESS) rc = PMPI_Get_count(&st, MPI_INT64_T, &mn[ra]);
        if (rc == MPI_SUCCESS && !(meta[ra] = malloc(sizeof(int64_t) * (size_t)(mn[ra] + 1))))
            rc = MPI_ERR_NO_MEM;
        if (rc == MPI_SUCCESS)
            rc = PMPI_Recv(meta[ra], mn[ra], MPI_INT64_T, x, in->tag0 + MC_NB_TAG_META, in->comm,
                           MPI_STATUS_IGNORE);
        total += (size_t)(mn[ra] / 2) * (size_t)d->e;
    }
    if (rc == MPI_SUCCESS && !(d->p->stage_g = malloc(total ? total : 1))) rc = MPI_ERR_NO_MEM;
    d->p->stage_g_len = total;
    size_t off = 0;
    for (int ra = 0; ra < R && rc == MPI_SUCCESS; ra++) {
        if (!meta[ra]) continue;
        mc_nb_msg_t *m = mc_nb_plan_msg(d->p, d->sown[(size_t)ra * R + in->region], 0, MC_NB_G);
        if (!m) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        rc = mc_nb_blks_add(&m->blks, d->p->stage_g + off, (size_t)(mn[ra] / 2) * (size_t)d->e);
        for (int v = 0; v < mn[ra] && rc == MPI_SUCCESS; v += 2, off += (size_t)d->e) {
            size_t o = off;
            if (mc_nb_map_get(&d->gmap, (int)meta[ra][v], meta[ra][v + 1], &o, 1) < 0) rc = MPI_ERR_NO_MEM;
        }
    }
    for (int ra = 0; meta && ra < R; ra++) free(meta[ra]);
    free(meta), free(mn);
    return rc;
}

/* ---------------------------------------------------------------- R */
/* b: distinct (a, id) per y, first position receives, later positions copy. */
static int r_need(dd_t *d, int a, int64_t id, char *addr)
{
    const mc_nb_in_t *in = d->in;
    size_t v = (size_t)addr;
    if (in->region_of[a] == in->region) return MPI_SUCCESS;
    int r = mc_nb_map_get(&d->lmap, a, id, &v, 1);
    if (r < 0) return MPI_ERR_NO_MEM;
    if (r == 1) return mc_nb_copy_add(&d->p->copy_dup, addr, (char *)v, (size_t)d->e);
    int y = d->rown[(size_t)in->region_of[a] * d->R + in->region], k = d->lidx[y];
    int rc = push64(&d->need[k], &d->nneed[k], a);
    if (rc == MPI_SUCCESS) rc = push64(&d->need[k], &d->nneed[k], id);
    if (rc != MPI_SUCCESS || y != in->rank) {
        mc_nb_msg_t *m = rc == MPI_SUCCESS ? mc_nb_peer_msg(d->p, d->map, y, 0, MC_NB_R) : NULL;
        return m ? mc_nb_blks_add(&m->blks, addr, (size_t)d->e) : (rc ? rc : MPI_ERR_NO_MEM);
    }
    char **na = realloc(d->own_need, sizeof(char *) * (size_t)(d->nown + 1));
    if (!na) return MPI_ERR_NO_MEM;
    d->own_need = na;
    d->own_need[d->nown++] = addr;
    return MPI_SUCCESS;
}

/* y: R sends of what each b asked for; its own needs become copies from the G staging. */
static int r_send(dd_t *d, const int64_t *req, const int *rcnt)
{
    const mc_nb_in_t *in = d->in;
    int rc = MPI_SUCCESS, own = 0;
    long pos = 0;
    for (int k = 0; k < in->rsize_local && rc == MPI_SUCCESS; pos += rcnt[k++]) {
        int b = in->rmembers[k];
        mc_nb_msg_t *m = NULL;
        if (b != in->rank && rcnt[k] && !(m = mc_nb_plan_msg(d->p, b, 1, MC_NB_R))) return MPI_ERR_NO_MEM;
        for (int v = 0; v < rcnt[k] && rc == MPI_SUCCESS; v += 2) {
            size_t o;
            if (mc_nb_map_get(&d->gmap, (int)req[pos + v], req[pos + v + 1], &o, 0) != 1) {
                rc = MPI_ERR_ARG; /* a receive id no sender provides: inconsistent indices */
                break;
            }
            if (m)
                rc = mc_nb_blks_add(&m->blks, d->p->stage_g + o, (size_t)d->e);
            else
                rc = mc_nb_copy_add(&d->p->copy_g, d->own_need[own++], d->p->stage_g + o, (size_t)d->e);
        }
    }
    return rc;
}

static int remote_steps(dd_t *d)
{
    const mc_nb_in_t *in = d->in;
    int n = in->rsize_local, rc, nmreq = 0;
    int64_t **sendl = calloc((size_t)n, sizeof(int64_t *)), *meta = NULL, *req = NULL;
    int *scnt = calloc((size_t)n, sizeof(int)), *rcnt = calloc((size_t)n, sizeof(int));
    MPI_Request *mreq = malloc(sizeof(MPI_Request) * (size_t)d->R);
    if (!sendl || !scnt || !rcnt || !mreq) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    rc = s_send(d, sendl, scnt);
    if (rc == MPI_SUCCESS) rc = mc_nb_region_exchange(in, sendl, scnt, &meta, rcnt);
    if (rc == MPI_SUCCESS) rc = s_recv(d, meta, rcnt);
    if (rc == MPI_SUCCESS) rc = g_send(d, mreq, &nmreq);
    if (rc == MPI_SUCCESS) rc = g_recv(d);
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < in->size; i++) d->map[i] = -1;
        rc = mc_nb_map_init(&d->lmap, 64);
        if (rc == MPI_SUCCESS) rc = walk(d, 0, r_need);
        mc_nb_map_free(&d->lmap);
    }
    if (rc == MPI_SUCCESS) rc = mc_nb_region_exchange(in, d->need, d->nneed, &req, rcnt);
    if (rc == MPI_SUCCESS) rc = r_send(d, req, rcnt);
    if (nmreq) {
        int e = mc_waitall(nmreq, mreq);
        if (rc == MPI_SUCCESS) rc = e;
    }
out:
    for (int k = 0; sendl && k < n; k++) free(sendl[k]);
    free(sendl), free(scnt), free(rcnt), free(meta), free(req), free(mreq);
    return rc;
}

static int alloc_lists(dd_t *d)
{
    size_t R = (size_t)d->R, n = (size_t)d->in->rsize_local;
    d->did = calloc(R, sizeof *d->did), d->daddr = calloc(R, sizeof *d->daddr);
    d->dn = calloc(R, sizeof(int)), d->dcap = calloc(R, sizeof(int));
    d->gid = calloc(R, sizeof *d->gid), d->gaddr = calloc(R, sizeof *d->gaddr);
    d->gn = calloc(R, sizeof(int)), d->gcap = calloc(R, sizeof(int));
    d->need = calloc(n, sizeof *d->need), d->nneed = calloc(n, sizeof(int));
    d->map = mc_nb_map_new(d->in->size), d->lidx = mc_nb_map_new(d->in->size);
    if (!d->did || !d->daddr || !d->dn || !d->dcap || !d->gid || !d->gaddr || !d->gn || !d->gcap ||
        !d->need || !d->nneed || !d->map || !d->lidx)
        return MPI_ERR_NO_MEM;
    for (size_t k = 0; k < n; k++) d->lidx[d->in->rmembers[k]] = (int)k;
    return MPI_SUCCESS;
}

static void free_lists(dd_t *d)
{
    for (int r = 0; r < d->R; r++) {
        if (d->did) free(d->did[r]);
        if (d->daddr) free(d->daddr[r]);
        if (d->gid) free(d->gid[r]);
        if (d->gaddr) free(d->gaddr[r]);
    }
    for (int k = 0; d->need && k < d->in->rsize_local; k++) free(d->need[k]);
    free(d->did), free(d->daddr), free(d->dn), free(d->dcap);
    free(d->gid), free(d->gaddr), free(d->gn), free(d->gcap);
    free(d->need), free(d->nneed), free(d->map), free(d->lidx);
    free(d->vol), free(d->sown), free(d->rown), free(d->own_need);
    mc_nb_map_free(&d->gmap);
}

int mc_nb_plan_dedup(const mc_nb_in_t *in, mc_nb_plan_t *p)
{
    dd_t d = {.in = in, .p = p, .R = in->nregions, .e = in->ssize};
    p->alg = MCOLL_NEIGHBOR_DEDUP;
    int rc = alloc_lists(&d);
    if (rc == MPI_SUCCESS) rc = mc_nb_self_copies(in, p);
    if (rc == MPI_SUCCESS) rc = local_step(&d, 1);
    if (rc == MPI_SUCCESS) rc = local_step(&d, 0);
    if (rc == MPI_SUCCESS) rc = distinct_sends(&d);
    if (rc == MPI_SUCCESS) rc = remote_steps(&d);
    free_lists(&d);
    return rc;
}
