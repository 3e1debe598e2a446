/* Registry completeness: every algorithm the registry expects (mc_alg_expected) is linked in,
 * registered under its collective, and has a function, a doc line and a sane cost model (a
 * number >= 0, its finite values not decreasing with m; +inf where the model must not pick it,
 * mc_cost_fn, e.g. below a size). */
#include "core/mc.h"
#include "mcoll.h"
#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void check_cost(const mc_alg_t *a, const char *full)
{
    const mc_hockney_t h = {.alpha = 2e-6, .beta = 1e-9, .gamma = 5e-10};
    static const double ms[] = {0, 1, 1000, 65536, 1e6, 1.6e7};
    for (int p = 1; p <= 64; p += p < 9 ? 1 : 7)
        for (int radix = 2; radix <= 4; radix++) {
            double prev = -1;
            for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
                mc_cost_in_t in = {.p = p, .m = ms[i], .ms = ms[i], .radix = radix};
                double t = a->cost(&h, &in);
                CHECK(!isnan(t) && t >= 0, "%s: cost(p=%d, m=%g) = %g", full, p, ms[i], t);
                if (!isinf(t)) {
                    CHECK(t >= prev * (1 - 1e-9), "%s: cost(p=%d) decreases from %g to %g at m=%g", full, p,
                          prev, t, ms[i]);
                    prev = t;
                }
                in.ms = ms[i] < 8192 ? ms[i] : 8192;   /* segmented */
                t = a->cost(&h, &in);
                CHECK(!isnan(t) && t >= 0, "%s: cost(p=%d, m=%g, ms=8192) = %g", full, p, ms[i], t);
            }
        }
}

static void check_expected(const char *full, int *per_coll)
{
    char coll[64];
    const char *slash = strchr(full, '/');
    CHECK(slash != NULL, "expected name \"%s\" has no '/'", full);
    if (!slash) return;
    snprintf(coll, sizeof coll, "%.*s", (int)(slash - full), full);
    int c = mc_coll_from_name(coll);
    CHECK(c >= 0, "%s: unknown collective", full);
    if (c < 0) return;
    per_coll[c]++;
    const mc_alg_t *a = mc_alg_find((mc_coll_t)c, slash + 1);
    CHECK(a != NULL, "%s is expected but not registered (missing src/coll/%s/%s.c?)", full, coll, slash + 1);
    if (!a) return;
    CHECK((int)a->coll == c, "%s: registered with .coll = %d", full, (int)a->coll);
    CHECK(!strcmp(a->name, slash + 1), "%s: .name = \"%s\"", full, a->name);
    CHECK(a->fn != NULL, "%s: no .fn", full);
    CHECK(a->doc && *a->doc, "%s: no .doc", full);
    CHECK(a->cost != NULL, "%s: no .cost", full);
    CHECK(mc_alg_at((mc_coll_t)c, mc_alg_index(a)) == a, "%s: mc_alg_index/mc_alg_at disagree", full);
    if (a->cost) check_cost(a, full);
}

int main(void)
{
    int per_coll[MC_NCOLL] = {0};
    int n = 0;
    for (; mc_alg_expected(n); n++) check_expected(mc_alg_expected(n), per_coll);
    CHECK(n > 0, "mc_alg_expected lists nothing");
    for (int c = 0; c < MC_NCOLL; c++) {
        const char *name = mc_coll_name((mc_coll_t)c);
        CHECK(per_coll[c] > 0, "no algorithm expected for %s", name);
        CHECK(mc_alg_count((mc_coll_t)c) == per_coll[c], "%s: %d registered, %d expected", name, mc_alg_count((mc_coll_t)c), per_coll[c]);
        CHECK(mcoll_alg_count(name) == mc_alg_count((mc_coll_t)c), "%s: public and internal counts differ", name);
        for (int i = 0; i < mc_alg_count((mc_coll_t)c); i++)
            for (int j = 0; j < i; j++)
                CHECK(strcmp(mc_alg_at((mc_coll_t)c, i)->name, mc_alg_at((mc_coll_t)c, j)->name),
                      "%s: algorithm name %s registered twice", name, mc_alg_at((mc_coll_t)c, i)->name);
    }
    return unit_summary("unit_registry");
}
