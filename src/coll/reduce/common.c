#include "common.h"
#include <math.h>

/* Result segments the real root may have posted ahead of rank 0 (non-commutative ops). The
 * result flows back around the cycle root -> ... -> rank 0 -> root: waiting for each one
 * before producing the next would serialize the cycle's hops per segment. */
#define FINAL_WINDOW 64

/* One node's state in the pipelined tree reduction. */
typedef struct red {
    mc_ctx_t *ctx;
    const mc_args_t *a;
    int parent;             /* receiver of this node's partial result; -1: it is the result */
    int final_src;          /* >= 0: the real root, fed the result by the tree's root */
    int nchild;
    int child[MC_TREE_MAX]; /* ascending vrank: the order the partials are folded in */
    size_t nseg, per;       /* segments, elements per segment */
    int nslot;              /* receive slots per child: 2 overlap segments, 1 if unsegmented */
    int direct;             /* result rank, not in place: the last child lands in rbuf */
    char *tmp;              /* [nchild][nslot] segments (the last child's not when direct) */
    MPI_Request rreq[MC_TREE_MAX][2], sreq, freq[FINAL_WINDOW];
} red_t;

static size_t seg_len(const red_t *r, size_t i)
{
    size_t off = i * r->per;
    return r->a->count - off < r->per ? r->a->count - off : r->per;
}

static char *slot(const red_t *r, int c, size_t i)
{
    size_t k = (size_t)c * (size_t)r->nslot + i % (size_t)r->nslot;
    return r->tmp + k * r->per * r->a->extent;
}

/* Where child c's segment i is received and then folded into. The last fold's result is
 * the node's partial, so at the result rank it can be produced in rbuf itself, saving a
 * copy; in place, rbuf still holds this rank's operand and the slot is used. */
static char *child_dst(const red_t *r, int c, size_t i)
{
    if (r->direct && c == r->nchild - 1) return mc_elem(r->a->rbuf, i * r->per, r->a);
    return slot(r, c, i);
}

static int post_children(red_t *r, size_t i)
{
    int rc = MPI_SUCCESS;
    for (int c = 0; c < r->nchild && rc == MPI_SUCCESS; c++)
        rc = mc_irecv_t(child_dst(r, c, i), seg_len(r, i), r->a, r->child[c], r->ctx,
                        &r->rreq[c][i & 1]);
    return rc;
}

/* acc = own op child0 op child1 ...: each fold writes into the child's slot (reduce_local
 * writes its right operand), so the accumulator moves from slot to slot and the send
 * buffer is left untouched. Returns where segment i's partial ended up. */
static int combine(red_t *r, size_t i, const char **acc)
{
    const mc_args_t *a = r->a;
    int rc = MPI_SUCCESS;
    *acc = mc_elem(a->sbuf, i * r->per, a);
    for (int c = 0; c < r->nchild && rc == MPI_SUCCESS; c++) {
        rc = mc_waitall(1, &r->rreq[c][i & 1]);
        if (rc == MPI_SUCCESS) rc = mc_reduce_local(*acc, child_dst(r, c, i), seg_len(r, i), a);
        *acc = child_dst(r, c, i);
    }
    return rc;
}

static int deliver(red_t *r, size_t i, const char *acc)
{
    const mc_args_t *a = r->a;
    if (r->parent >= 0) return mc_isend_t(acc, seg_len(r, i), a, r->parent, r->ctx, &r->sreq);
    mc_copy(mc_elem(a->rbuf, i * r->per, a), acc, seg_len(r, i) * a->extent);
    return MPI_SUCCESS;
}

/* Real root fed by rank 0: result segment i lands in rbuf directly. Posted only once this
 * rank's own send of segment i has completed, since in place the send may read those bytes. */
static int advance_final(red_t *r, size_t i)
{
    MPI_Request *q = &r->freq[i % FINAL_WINDOW];
    int rc = mc_waitall(1, q);
    if (rc != MPI_SUCCESS) return rc;
    return mc_irecv_t(mc_elem(r->a->rbuf, i * r->per, r->a), seg_len(r, i), r->a, r->final_src,
                      r->ctx, q);
}

/* Iteration i: finish send i-1 (its slot is the one segment i+1 lands in), post segment
 * i+1's receives, then fold segment i while they are in flight and pass it on. */
static int iterate(red_t *r, size_t i)
{
    const char *acc;
    int rc = mc_waitall(1, &r->sreq);
    if (rc == MPI_SUCCESS && r->final_src >= 0 && i > 0) rc = advance_final(r, i - 1);
    if (rc == MPI_SUCCESS && i + 1 < r->nseg) rc = post_children(r, i + 1);
    if (rc == MPI_SUCCESS) rc = combine(r, i, &acc);
    if (rc == MPI_SUCCESS) rc = deliver(r, i, acc);
    return rc;
}

static int run(red_t *r)
{
    int rc = post_children(r, 0);
    for (size_t i = 0; i < r->nseg && rc == MPI_SUCCESS; i++) rc = iterate(r, i);
    if (rc == MPI_SUCCESS) rc = mc_waitall(1, &r->sreq);
    if (rc == MPI_SUCCESS && r->final_src >= 0) rc = advance_final(r, r->nseg - 1);
    if (rc == MPI_SUCCESS) rc = mc_waitall(FINAL_WINDOW, r->freq);
    if (rc == MPI_SUCCESS) return rc;
    for (int c = 0; c < r->nchild; c++) {
        mc_request_drop(&r->rreq[c][0]);
        mc_request_drop(&r->rreq[c][1]);
    }
    for (int i = 0; i < FINAL_WINDOW; i++) mc_request_drop(&r->freq[i]);
    mc_waitall(1, &r->sreq);    /* never free a buffer under a pending send */
    return rc;
}

/* Children in ascending vrank relative to the tree's root (trees list them largest first). */
static void sort_children(red_t *r, const mc_tree_t *t, int troot)
{
    int p = r->ctx->size;
    r->nchild = t->nchild;
    for (int i = 0; i < t->nchild; i++) {
        int c = t->child[i], j = i;
        for (; j > 0 && mc_vrank(r->child[j - 1], troot, p) > mc_vrank(c, troot, p); j--)
            r->child[j] = r->child[j - 1];
        r->child[j] = c;
    }
}

/* Non-commutative ops run on a tree rooted at rank 0, whose root then feeds the real root. */
static void setup(red_t *r, mc_red_tree_fn build, int k)
{
    const mc_args_t *a = r->a;
    int rank = r->ctx->rank, troot = a->commute ? a->root : 0;
    mc_tree_t t;
    build(&t, rank, r->ctx->size, troot, k);
    sort_children(r, &t, troot);
    r->parent = rank == troot && troot != a->root ? a->root : t.parent;
    r->final_src = rank == a->root && troot != a->root ? troot : -1;
    r->nseg = mc_segments(a->count, a->extent, a->segsize, &r->per);
    r->nslot = r->nseg > 1 ? 2 : 1;
    r->direct = r->parent < 0 && a->rbuf != a->sbuf;
    r->sreq = MPI_REQUEST_NULL;
    for (int i = 0; i < FINAL_WINDOW; i++) r->freq[i] = MPI_REQUEST_NULL;
    for (int c = 0; c < MC_TREE_MAX; c++) r->rreq[c][0] = r->rreq[c][1] = MPI_REQUEST_NULL;
}

int mc_red_tree(mc_ctx_t *ctx, const mc_args_t *a, mc_red_tree_fn build, int k)
{
    if (!a->count) return MPI_SUCCESS;
    if (ctx->size == 1) {
        mc_copy(a->rbuf, a->sbuf, a->count * a->extent);
        return MPI_SUCCESS;
    }
    red_t r = {.ctx = ctx, .a = a, .tmp = NULL};
    setup(&r, build, k);
    size_t nbuf = (size_t)(r.nchild - (r.direct && r.nchild)) * (size_t)r.nslot;
    if (nbuf && !(r.tmp = mc_tmp_elems(nbuf * r.per, a))) return MPI_ERR_NO_MEM;
    int rc = run(&r);
    mc_free(r.tmp);
    return rc;
}

void mc_red_tree_preorder(mc_tree_t *t, int rank, int size, int root, int k)
{
    int target = mc_vrank(rank, root, size), v = 0, n = size, parent = -1;
    if (k < 1) k = 1;
    if (k > MC_TREE_MAX) k = MC_TREE_MAX;
    /* descend from the root into the child range that holds `target` */
    while (v != target) {
        int j = k - 1;
        while (j > 0 && target < v + 1 + (int)mc_part_start((size_t)n - 1, k, j)) j--;
        parent = v;
        v += 1 + (int)mc_part_start((size_t)n - 1, k, j);
        n = (int)mc_part_len((size_t)n - 1, k, j);
    }
    t->parent = parent < 0 ? -1 : mc_rrank(parent, root, size);
    t->nchild = 0;
    for (int j = 0; j < k; j++)
        if (mc_part_len((size_t)n - 1, k, j))
            t->child[t->nchild++] = mc_rrank(v + 1 + (int)mc_part_start((size_t)n - 1, k, j), root, size);
}

double mc_red_nseg(const mc_cost_in_t *in)
{
    if (in->ms <= 0 || in->m <= in->ms) return 1.0;
    return ceil(in->m / in->ms);
}

double mc_red_step(const mc_hockney_t *h, double bytes)
{
    return h->alpha + bytes * (h->beta + h->gamma);
}
