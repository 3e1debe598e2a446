/* Virtual trees (src/p2p): for p = 1..70 and every root, every rank's parent and children
 * agree with each other, the tree spans all ranks exactly once, and each shape holds its
 * definition (binomial masks, k-ary heap order, k nearly equal chains). */
#include "p2p/p2p.h"
#include "unit.h"
#include <stdlib.h>
#include <string.h>

#define PMAX 70

typedef void (*build_fn)(mc_tree_t *t, int rank, int size, int root, int k);

static void binomial(mc_tree_t *t, int rank, int size, int root, int k)
{
    (void)k;
    mc_tree_binomial(t, rank, size, root);
}

static mc_tree_t tree[PMAX];

/* Structural checks every tree must pass; returns the depth (or -1 when broken). */
static int check_spanning(const char *kind, int p, int root, int k)
{
    int seen[PMAX] = {0}, depth[PMAX] = {0}, queue[PMAX], qh = 0, qt = 0, maxd = 0;
    for (int r = 0; r < p; r++) {
        const mc_tree_t *t = &tree[r];
        CHECK(t->nchild >= 0 && t->nchild <= MC_TREE_MAX, "%s p=%d root=%d k=%d rank=%d nchild=%d", kind, p, root, k, r, t->nchild);
        CHECK((r == root) == (t->parent == -1), "%s p=%d root=%d k=%d rank=%d parent=%d", kind, p, root, k, r, t->parent);
        if (t->parent != -1) {
            CHECK(t->parent >= 0 && t->parent < p && t->parent != r, "%s p=%d root=%d rank=%d parent=%d", kind, p, root, r, t->parent);
            if (t->parent < 0 || t->parent >= p) return -1;
            const mc_tree_t *pt = &tree[t->parent];
            int found = 0;
            for (int i = 0; i < pt->nchild; i++) found += pt->child[i] == r;
            CHECK(found == 1, "%s p=%d root=%d k=%d: rank %d listed %d times by its parent %d", kind, p, root, k, r, found, t->parent);
        }
        for (int i = 0; i < t->nchild; i++) {
            int c = t->child[i];
            CHECK(c >= 0 && c < p, "%s p=%d root=%d rank=%d child=%d", kind, p, root, r, c);
            if (c < 0 || c >= p) return -1;
            CHECK(tree[c].parent == r, "%s p=%d root=%d k=%d: child %d of %d has parent %d", kind, p, root, k, c, r, tree[c].parent);
        }
    }
    queue[qt++] = root;
    seen[root] = 1;
    while (qh < qt) {
        int r = queue[qh++];
        for (int i = 0; i < tree[r].nchild; i++) {
            int c = tree[r].child[i];
            CHECK(!seen[c], "%s p=%d root=%d k=%d: rank %d reached twice", kind, p, root, k, c);
            if (seen[c]) return -1;
            seen[c] = 1;
            depth[c] = depth[r] + 1;
            maxd = depth[c] > maxd ? depth[c] : maxd;
            queue[qt++] = c;
        }
    }
    CHECK(qt == p, "%s p=%d root=%d k=%d: tree reaches %d of %d ranks", kind, p, root, k, qt, p);
    return qt == p ? maxd : -1;
}

static void build(build_fn f, int p, int root, int k)
{
    for (int r = 0; r < p; r++) {
        memset(&tree[r], 0x7f, sizeof tree[r]);
        f(&tree[r], r, p, root, k);
    }
}

static int subtree_size(int r)
{
    int n = 1;
    for (int i = 0; i < tree[r].nchild; i++) n += subtree_size(tree[r].child[i]);
    return n;
}

static void check_binomial(int p, int root)
{
    build(binomial, p, root, 0);
    int d = check_spanning("binomial", p, root, 0);
    CHECK(d <= mc_ceil_log2(p), "binomial p=%d: depth %d > ceil(log2 p)", p, d);
    for (int r = 0; d >= 0 && r < p; r++) {
        int v = mc_vrank(r, root, p);
        if (v) {
            int pv = mc_vrank(tree[r].parent, root, p);
            CHECK(pv == (v & (v - 1)), "binomial p=%d root=%d: vrank %d has parent vrank %d", p, root, v, pv);
        }
        CHECK(mc_binomial_span(v, p) == subtree_size(r), "binomial p=%d root=%d: vrank %d span %d, subtree %d",
              p, root, v, mc_binomial_span(v, p), subtree_size(r));
        /* largest mask first (the full binomial subtree; when p is not a power of two the
         * truncated subtree sizes may not decrease: p=10 gives children 8 (2 ranks), 4 (4)) */
        for (int i = 1; i < tree[r].nchild; i++)
            CHECK(mc_vrank(tree[r].child[i - 1], root, p) > mc_vrank(tree[r].child[i], root, p),
                  "binomial p=%d root=%d rank=%d: children not in decreasing mask order", p, root, r);
    }
}

static void check_kary(int p, int root, int k)
{
    build(mc_tree_kary, p, root, k);
    if (check_spanning("kary", p, root, k) < 0) return;
    for (int r = 0; r < p; r++) {
        int v = mc_vrank(r, root, p), n = 0;
        for (int i = 1; i <= k && (long)k * v + i < p; i++, n++)
            CHECK(n < tree[r].nchild && mc_vrank(tree[r].child[n], root, p) == k * v + i,
                  "kary p=%d root=%d k=%d: vrank %d child %d should be vrank %d", p, root, k, v, n, k * v + i);
        CHECK(tree[r].nchild == n, "kary p=%d root=%d k=%d: vrank %d has %d children, expected %d", p, root, k, v, tree[r].nchild, n);
    }
}

static void check_chain(int p, int root, int k)
{
    build(mc_tree_chain, p, root, k);
    int d = check_spanning("chain", p, root, k);
    if (d < 0) return;
    int chains = p - 1 < k ? p - 1 : k;
    CHECK(tree[root].nchild == chains, "chain p=%d root=%d k=%d: root has %d chains, expected %d", p, root, k, tree[root].nchild, chains);
    int minlen = p, maxlen = 0;
    for (int i = 0; i < tree[root].nchild; i++) {
        int len = subtree_size(tree[root].child[i]);
        minlen = len < minlen ? len : minlen;
        maxlen = len > maxlen ? len : maxlen;
    }
    CHECK(p == 1 || maxlen - minlen <= 1, "chain p=%d k=%d: chain lengths %d..%d", p, k, minlen, maxlen);
    CHECK(d == maxlen || p == 1, "chain p=%d k=%d: depth %d != longest chain %d", p, k, d, maxlen);
    for (int r = 0; r < p; r++) {
        if (r == root) continue;
        CHECK(tree[r].nchild <= 1, "chain p=%d k=%d: rank %d has %d children", p, k, r, tree[r].nchild);
        if (tree[r].nchild == 1)
            CHECK(mc_vrank(tree[r].child[0], root, p) == mc_vrank(r, root, p) + 1,
                  "chain p=%d root=%d k=%d: vrank %d is followed by a non-consecutive vrank", p, root, k, mc_vrank(r, root, p));
    }
}

int main(void)
{
    static const int ks[] = {1, 2, 3, 4, 7};
    for (int p = 1; p <= PMAX; p++)
        for (int root = 0; root < p; root++) {
            check_binomial(p, root);
            for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
                check_kary(p, root, ks[i]);
                check_chain(p, root, ks[i]);
            }
        }
    return unit_summary("unit_trees");
}
