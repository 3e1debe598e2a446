/* Plan building blocks: block lists, messages, copy lists, per-rank counts. */
#include "neighbor.h"
#include <stdlib.h>
#include <string.h>

/* A new block at the end of l (no merging; bytes not counted). */
static int append(mc_nb_blks_t *l, const void *addr, size_t len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        mc_nb_blk_t *nb = realloc(l->b, cap * sizeof *nb);
        if (!nb) return MPI_ERR_NO_MEM;
        l->b = nb;
        l->cap = cap;
    }
    l->b[l->n++] = (mc_nb_blk_t){(char *)addr, len};
    return MPI_SUCCESS;
}

int mc_nb_blks_add(mc_nb_blks_t *l, const void *addr, size_t len)
{
    if (len == 0) return MPI_SUCCESS;
    l->bytes += len;
    /* adjacent blocks merge: fewer datatype entries, same bytes */
    if (l->n && l->b[l->n - 1].addr + l->b[l->n - 1].len == (const char *)addr) {
        l->b[l->n - 1].len += len;
        return MPI_SUCCESS;
    }
    return append(l, addr, len);
}

void mc_nb_blks_free(mc_nb_blks_t *l)
{
    free(l->b);
    memset(l, 0, sizeof *l);
}

mc_nb_msg_t *mc_nb_plan_msg(mc_nb_plan_t *p, int peer, int send, int step)
{
    if (p->nmsg == p->capmsg) {
        int cap = p->capmsg ? 2 * p->capmsg : 16;
        mc_nb_msg_t *nm = realloc(p->msg, (size_t)cap * sizeof *nm);
        if (!nm) return NULL;
        p->msg = nm;
        p->capmsg = cap;
    }
    mc_nb_msg_t *m = &p->msg[p->nmsg++];
    memset(m, 0, sizeof *m);
    m->peer = peer;
    m->send = send;
    m->step = step;
    m->utype = MPI_DATATYPE_NULL;
    return m;
}

/* Copies are recorded block by block; the two sides stay aligned because each add appends
 * one block of the same length to both (adjacent merges happen only when both merge). */
int mc_nb_copy_add(mc_nb_copy_t *c, const void *dst, const void *src, size_t len)
{
    if (len == 0) return MPI_SUCCESS;
    int merge_d = c->dst.n && c->dst.b[c->dst.n - 1].addr + c->dst.b[c->dst.n - 1].len == (const char *)dst;
    int merge_s = c->src.n && c->src.b[c->src.n - 1].addr + c->src.b[c->src.n - 1].len == (const char *)src;
    if (merge_d && merge_s && c->dst.b[c->dst.n - 1].len == c->src.b[c->src.n - 1].len) {
        c->dst.b[c->dst.n - 1].len += len;
        c->src.b[c->src.n - 1].len += len;
        c->dst.bytes += len;
        c->src.bytes += len;
        return MPI_SUCCESS;
    }
    /* append without merging so block i of src pairs with block i of dst */
    mc_nb_blks_t *sides[2] = {&c->dst, &c->src};
    const void *addrs[2] = {dst, src};
    for (int k = 0; k < 2; k++) {
        if (append(sides[k], addrs[k], len) != MPI_SUCCESS) return MPI_ERR_NO_MEM;
        sides[k]->bytes += len;
    }
    return MPI_SUCCESS;
}

static void copy_free(mc_nb_copy_t *c)
{
    mc_nb_blks_free(&c->src);
    mc_nb_blks_free(&c->dst);
}

void mc_nb_plan_free(mc_nb_plan_t *p)
{
    for (int i = 0; i < p->nmsg; i++) mc_nb_blks_free(&p->msg[i].blks);
    free(p->msg);
    copy_free(&p->copy_self);
    copy_free(&p->copy_g);
    copy_free(&p->copy_dup);
    free(p->stage_s);
    free(p->stage_g);
    memset(p, 0, sizeof *p);
}

void mc_nb_plan_count(const mc_nb_in_t *in, const mc_nb_plan_t *p, mc_nb_counts_t *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < p->nmsg; i++) {
        const mc_nb_msg_t *m = &p->msg[i];
        size_t bytes = m->utype == MPI_DATATYPE_NULL ? m->blks.bytes : m->bytes;
        if (m->peer == in->rank) {
            if (m->send) c->self_bytes += bytes;
            continue;
        }
        int inter = in->region_of[m->peer] != in->region;
        int dir = m->send ? 0 : 1;
        c->msgs[m->step][inter][dir]++;
        c->bytes[m->step][inter][dir] += bytes;
    }
    c->self_bytes += p->copy_self.dst.bytes;
    c->copy_bytes = p->copy_self.dst.bytes + p->copy_g.dst.bytes + p->copy_dup.dst.bytes;
}

mc_nb_msg_t *mc_nb_peer_msg(mc_nb_plan_t *p, int *map, int peer, int send, int step)
{
    if (map[peer] >= 0) return &p->msg[map[peer]];
    mc_nb_msg_t *m = mc_nb_plan_msg(p, peer, send, step);
    if (m) map[peer] = p->nmsg - 1;
    return m;
}

int *mc_nb_map_new(int n)
{
    int *m = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (m)
        for (int i = 0; i < n; i++) m[i] = -1;
    return m;
}

int mc_nb_self_copies(const mc_nb_in_t *in, mc_nb_plan_t *p)
{
    int j = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < in->outdeg && rc == MPI_SUCCESS; i++) {
        if (in->dests[i] != in->rank || mc_nb_slen(in, i) == 0) continue;
        while (j < in->indeg && (in->sources[j] != in->rank || mc_nb_rlen(in, j) == 0)) j++;
        if (j == in->indeg || mc_nb_rlen(in, j) != mc_nb_slen(in, i)) return MPI_ERR_TRUNCATE;
        rc = mc_nb_copy_add(&p->copy_self, mc_nb_raddr(in, j), mc_nb_saddr(in, i), mc_nb_slen(in, i));
        j++;
    }
    return rc;
}
