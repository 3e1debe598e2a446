/* mc_parse_size: sizes with k/M/G suffixes (optional trailing B), -1 when malformed. */
#include "core/config.h"
#include "unit.h"

int main(void)
{
    static const struct { const char *s; long v; } ok[] = {
        {"0", 0}, {"1", 1}, {"4096", 4096}, {"64k", 65536}, {"64K", 65536}, {"8kb", 8192},
        {"8KB", 8192}, {"1M", 1 << 20}, {"1m", 1 << 20}, {"3MB", 3L << 20}, {"2G", 2L << 30},
        {"1g", 1L << 30}, {"0k", 0}, {"1000003", 1000003},
    };
    static const char *const bad[] = {"", "abc", "-1", "-4k", "12x", "k", "1.5M", "64kk", "1MBB",
                                      "10 ", "4 k", "M1"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        CHECK(mc_parse_size(ok[i].s) == ok[i].v, "\"%s\" -> %ld, expected %ld", ok[i].s, mc_parse_size(ok[i].s), ok[i].v);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(mc_parse_size(bad[i]) == -1, "\"%s\" -> %ld, expected -1", bad[i], mc_parse_size(bad[i]));
    CHECK(mc_parse_size(NULL) == -1, "NULL -> %ld", mc_parse_size(NULL));
    return unit_summary("unit_parse_size");
}
