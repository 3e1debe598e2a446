/* Rules-file parser (src/select/rules.c): known good and bad inputs, then thousands of
 * mutated and random inputs. Every input must either parse into consistent rows or be
 * rejected with a message; under ASan (make check-asan) any out-of-bounds access fails. */
#include "select/rules.h"
#include "unit.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const good = "# mcoll rules\n"
                                "bcast      2-8   0-16k     binomial      0    -\n"
                                "bcast      *     16k-*     pipeline      64K\n"
                                "reduce     3-*   *         kchain        8k   3   # comment\n"
                                "allreduce  4     1M-1M     ring\n"
                                "\n"
                                "   \t\n"
                                "alltoall   1-*   0-256     pmpi   -  -\r\n"
                                "barrier    *     *         bruck";

static void test_good(void)
{
    mc_rules_t r;
    char err[256] = "";
    CHECK(mc_rules_parse(good, strlen(good), &r, err, sizeof err) == 0, "good file: %s", err);
    CHECK(r.n == 6, "rows %d", r.n);
    if (r.n != 6) return;
    CHECK(r.rows[0].coll == MC_BCAST && r.rows[0].pmin == 2 && r.rows[0].pmax == 8 && r.rows[0].bmin == 0 &&
              r.rows[0].bmax == 16384 && r.rows[0].segsize == 0 && r.rows[0].radix == -1 &&
              r.rows[0].line == 2,
          "row 0");
    CHECK(!strcmp(mc_frule_alg_name(&r.rows[0]), "binomial"), "row 0 alg %s", mc_frule_alg_name(&r.rows[0]));
    CHECK(r.rows[1].pmin == 0 && r.rows[1].pmax == INT_MAX && r.rows[1].bmin == 16384 &&
              r.rows[1].bmax == SIZE_MAX && r.rows[1].segsize == 65536,
          "row 1");
    CHECK(r.rows[2].radix == 3 && r.rows[2].segsize == 8192 &&
              !strcmp(mc_frule_alg_name(&r.rows[2]), "kchain"),
          "row 2");
    CHECK(r.rows[3].pmin == 4 && r.rows[3].pmax == 4 && r.rows[3].bmin == 1 << 20 &&
              r.rows[3].bmax == 1 << 20,
          "row 3");
    CHECK(r.rows[4].alg == -1 && !strcmp(mc_frule_alg_name(&r.rows[4]), "pmpi") && r.rows[4].line == 8,
          "row 4");
    CHECK(r.rows[5].coll == MC_BARRIER && r.rows[5].line == 9, "row 5 (no final newline)");
    mc_rules_free(&r);
}

static void expect_bad(const char *text, const char *needle)
{
    mc_rules_t r;
    char err[256] = "";
    int rc = mc_rules_parse(text, strlen(text), &r, err, sizeof err);
    CHECK(rc == -1 && r.n == 0 && r.rows == NULL && strstr(err, needle), "'%s': rc %d err '%s' (want '%s')",
          text, rc, err, needle);
    if (!rc) mc_rules_free(&r);
}

static void test_bad(void)
{
    expect_bad("bcst * * binomial", "line 1: unknown collective 'bcst'");
    expect_bad("\n\nbcast * * nosuch", "line 3: bcast has no algorithm 'nosuch'");
    expect_bad("bcast 8-2 * binomial", "bad rank range");
    expect_bad("bcast 0 * binomial", "bad rank range");
    expect_bad("bcast * 64k-1k binomial", "bad byte range");
    expect_bad("bcast * 99999999999999999999 binomial", "bad byte range");
    expect_bad("bcast * 1x binomial", "bad byte range");
    expect_bad("bcast * * binomial 12q", "bad segment size");
    expect_bad("reduce * * kchain 0 1", "bad radix");
    expect_bad("bcast * *", "got 3 fields");
    expect_bad("bcast * * binomial 0 2 extra", "got 7 fields");
    expect_bad("bcast -5 * binomial", "bad rank range");
    char longline[MC_RULES_MAX_LINE + 16];
    memset(longline, ' ', sizeof longline - 1);
    longline[sizeof longline - 1] = 0;
    expect_bad(longline, "longer than");
    char nul[] = "bcast * * binomial\nbarrier * \0 bruck\n";
    mc_rules_t r;
    char err[128] = "";
    CHECK(mc_rules_parse(nul, sizeof nul - 1, &r, err, sizeof err) == -1 && strstr(err, "line 2: NUL"),
          "NUL: %s", err);
    CHECK(mc_rules_load("/nonexistent/rules", &r, err, sizeof err) == -1 && strstr(err, "/nonexistent/rules"),
          "missing file: %s", err);
}

/* ---------------------------------------------------------------- fuzzing */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}
static size_t pick(size_t n)
{
    return n ? (size_t)(next() % n) : 0;
}

static const char *const words[] = {"bcast",
                                    "reduce",
                                    "allreduce",
                                    "alltoall",
                                    "barrier",
                                    "scan",
                                    "exscan",
                                    "gatherv",
                                    "*",
                                    "-",
                                    "0",
                                    "1",
                                    "2-8",
                                    "1-*",
                                    "0-16k",
                                    "64K",
                                    "1M-*",
                                    "4G",
                                    "binomial",
                                    "pipeline",
                                    "ring",
                                    "pmpi",
                                    "kchain",
                                    "bruck",
                                    "#",
                                    "\n",
                                    "\t",
                                    " ",
                                    "-1",
                                    "18446744073709551616",
                                    "9223372036854775807",
                                    "k",
                                    "1-",
                                    "-*",
                                    "**",
                                    "2147483648",
                                    "\r\n"};

static size_t mutate(char *buf, size_t len, size_t cap)
{
    switch (pick(6)) {
    case 0: /* flip a byte */
        if (len) buf[pick(len)] ^= (char)(1u << pick(8));
        break;
    case 1: /* random byte anywhere */
        if (len < cap) {
            size_t at = pick(len + 1);
            memmove(buf + at + 1, buf + at, len - at);
            buf[at] = (char)next(), len++;
        }
        break;
    case 2: /* delete a span */
        if (len) {
            size_t at = pick(len), n = 1 + pick(len - at);
            memmove(buf + at, buf + at + n, len - at - n), len -= n;
        }
        break;
    case 3: /* insert a token */
    {
        const char *w = words[pick(sizeof words / sizeof words[0])];
        size_t n = strlen(w), at = pick(len + 1);
        if (len + n <= cap) memmove(buf + at + n, buf + at, len - at), memcpy(buf + at, w, n), len += n;
        break;
    }
    case 4: /* duplicate a span */
        if (len && len < cap) {
            size_t at = pick(len), n = 1 + pick(len - at);
            if (n > cap - len) n = cap - len;
            memmove(buf + at + n, buf + at, len - at), len += n;
        }
        break;
    default: /* truncate */
        len = pick(len + 1);
        break;
    }
    return len;
}

static void check_result(int rc, const mc_rules_t *r, const char *err)
{
    if (rc) {
        CHECK(rc == -1 && r->n == 0 && r->rows == NULL && err[0], "rejected input left rows or no message");
        return;
    }
    for (int i = 0; i < r->n; i++) {
        const mc_frule_t *x = &r->rows[i];
        CHECK((unsigned)x->coll < MC_NCOLL && x->pmin <= x->pmax && x->pmax >= 1 && x->bmin <= x->bmax &&
                  (x->alg == -1 || mc_alg_at(x->coll, x->alg) != NULL) && (x->radix == -1 || x->radix >= 2) &&
                  x->segsize >= -1 && x->line >= 1,
              "inconsistent row %d", i);
    }
}

static void fuzz(int iterations)
{
    enum { CAP = 4096 };
    char *buf = malloc(CAP), err[256];
    int accepted = 0;
    for (int it = 0; it < iterations; it++) {
        size_t len;
        if (it % 10 == 9) { /* pure noise */
            len = pick(CAP);
            for (size_t i = 0; i < len; i++) buf[i] = (char)next();
        } else {
            len = strlen(good);
            memcpy(buf, good, len);
            for (int k = 1 + (int)pick(8); k > 0; k--) len = mutate(buf, len, CAP);
        }
        /* an exact-size heap copy so ASan catches any read past len */
        char *exact = malloc(len ? len : 1);
        memcpy(exact, buf, len);
        mc_rules_t r;
        err[0] = 0;
        int rc = mc_rules_parse(exact, len, &r, err, sizeof err);
        check_result(rc, &r, err);
        accepted += rc == 0;
        mc_rules_free(&r);
        free(exact);
    }
    printf("fuzz: %d inputs, %d accepted\n", iterations, accepted);
    CHECK(accepted > iterations / 50 && accepted < iterations, "accepted %d of %d: mutations too weak/strong",
          accepted, iterations);
    free(buf);
}

int main(void)
{
    test_good();
    test_bad();
    fuzz(20000);
    return unit_summary("unit_rules_fuzz");
}
