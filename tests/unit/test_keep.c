/* mc_malloc / mc_free keep the last large temporaries (1 MiB or more) for the next request of
 * at least their size and at most twice it; smaller blocks, and everything under ASan, go
 * straight back to the allocator. */
#include "core/mc.h"
#include "unit.h"
#include <string.h>

#define MiB ((size_t)1 << 20)

static void *take(size_t n)
{
    char *p = mc_malloc(n);
    if (p) memset(p, 7, n);   /* writable over the whole request */
    return p;
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__)
    void *a = take(2 * MiB);
    CHECK(a != NULL, "2 MiB");
    mc_free(a);
    CHECK(mc_malloc(0) == NULL, "0 bytes");
    mc_keep_release();
    return unit_summary("unit_keep (ASan: nothing kept)");
#else
    void *a = take(2 * MiB);
    mc_free(a);
    void *b = take(2 * MiB);
    CHECK(b == a, "the same size again: %p, kept %p", b, a);
    void *c = take(8 * MiB);   /* larger than the one kept (none: b is live) */
    CHECK(c != b, "a new block while the kept one is in use");
    mc_free(b);
    mc_free(c);
    void *d = take(5 * MiB);   /* the 8 MiB one: at most twice the request */
    CHECK(d == c, "5 MiB from the kept 8 MiB: %p, expected %p", d, c);
    void *e = take(1 * MiB);   /* the 2 MiB one */
    CHECK(e == b, "1 MiB from the kept 2 MiB: %p, expected %p", e, b);
    mc_free(d);
    mc_free(e);
    void *f = take(3 * MiB);   /* neither: 2 MiB too small, 8 MiB more than twice */
    CHECK(f != b && f != c, "3 MiB took a kept block (%p)", f);
    mc_free(f);                /* kept in place of the smallest (2 MiB) */
    void *g = take(3 * MiB);
    CHECK(g == f, "3 MiB again: %p, expected %p", g, f);
    mc_free(g);
    /* small blocks are never kept: freeing one must not disturb the kept ones */
    void *s = take(4096);
    mc_free(s);
    void *h = take(8 * MiB);
    CHECK(h == c, "8 MiB after a small free: %p, expected %p", h, c);
    mc_free(h);
    /* more live large blocks than the table holds: the extra ones are plain */
    void *many[40];
    for (int i = 0; i < 40; i++) many[i] = take(MiB + (size_t)i * 4096);
    for (int i = 0; i < 40; i++) CHECK(many[i] != NULL, "block %d", i);
    for (int i = 0; i < 40; i++) mc_free(many[i]);
    mc_keep_release();
    void *k = take(8 * MiB);   /* released: a fresh block (the address may repeat) */
    CHECK(k != NULL, "after release");
    mc_free(k);
    mc_keep_release();
    return unit_summary("unit_keep");
#endif
}
