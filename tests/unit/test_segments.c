/* Segmentation (mc_segments) and balanced splits (mc_part_start / mc_part_len). */
#include "p2p/p2p.h"
#include "unit.h"

static void check_segments(size_t count, size_t elsize, long segsize)
{
    size_t per = 12345, n = mc_segments(count, elsize, segsize, &per);
    if (count == 0) {
        CHECK(n == 0 && per == 0, "count 0: %zu segments of %zu", n, per);
        return;
    }
    CHECK(per >= 1 && per <= count, "count=%zu elsize=%zu seg=%ld: %zu elements per segment", count, elsize, segsize, per);
    if (per < 1) return;
    CHECK(n == (count + per - 1) / per, "count=%zu per=%zu: %zu segments", count, per, n);
    if (segsize <= 0) CHECK(n == 1, "unsegmented (seg=%ld) count=%zu: %zu segments", segsize, count, n);
    else if ((size_t)segsize >= elsize) {
        CHECK(per * elsize <= (size_t)segsize, "seg=%ld elsize=%zu: segment of %zu elements is too big", segsize, elsize, per);
        CHECK(per == count || (per + 1) * elsize > (size_t)segsize,
              "seg=%ld elsize=%zu: only %zu elements per segment", segsize, elsize, per);
    } else {
        CHECK(per == 1, "seg=%ld < elsize=%zu: %zu elements per segment (want 1)", segsize, elsize, per);
    }
}

static void check_parts(size_t n, int p)
{
    size_t sum = 0, lo = (size_t)-1, hi = 0;
    CHECK(mc_part_start(n, p, 0) == 0, "n=%zu p=%d: part 0 starts at %zu", n, p, mc_part_start(n, p, 0));
    for (int i = 0; i < p; i++) {
        size_t s = mc_part_start(n, p, i), l = mc_part_len(n, p, i);
        CHECK(s == sum, "n=%zu p=%d: part %d starts at %zu, expected %zu", n, p, i, s, sum);
        CHECK(i == 0 || l <= mc_part_len(n, p, i - 1), "n=%zu p=%d: part %d longer than part %d", n, p, i, i - 1);
        sum += l;
        lo = l < lo ? l : lo;
        hi = l > hi ? l : hi;
    }
    CHECK(sum == n, "n=%zu p=%d: parts cover %zu", n, p, sum);
    CHECK(hi - lo <= 1, "n=%zu p=%d: part lengths %zu..%zu", n, p, lo, hi);
    CHECK(mc_part_start(n, p, p) == n, "n=%zu p=%d: end %zu", n, p, mc_part_start(n, p, p));
}

int main(void)
{
    static const size_t elsizes[] = {1, 2, 4, 8, 12, 16, 24};
    static const long segs[] = {-1, 0, 1, 3, 7, 8, 13, 64, 1000, 1001, 8192, 65536};
    for (size_t count = 0; count <= 300; count++)
        for (size_t e = 0; e < sizeof elsizes / sizeof elsizes[0]; e++)
            for (size_t s = 0; s < sizeof segs / sizeof segs[0]; s++) check_segments(count, elsizes[e], segs[s]);
    check_segments((size_t)1 << 31, 8, 8192);
    check_segments(((size_t)1 << 31) + 5, 1, 1 << 20);
    check_segments(1000003, 16, 3);
    for (size_t n = 0; n <= 200; n++)
        for (int p = 1; p <= 70; p++) check_parts(n, p);
    check_parts(((size_t)1 << 33) + 7, 7);
    return unit_summary("unit_segments");
}
