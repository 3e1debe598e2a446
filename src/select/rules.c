/* Rules-file parser (format in rules.h). Strict: any malformed line rejects the whole file,
 * because a half-applied table would silently differ from what the user wrote. */
#include "rules.h"
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXTOK 8

#define fail mc_errmsg

/* Unsigned decimal with an optional k/M/G suffix (and optional trailing b/B); no sign, no
 * overflow beyond max. */
static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
    unsigned long long v = 0;
    int digits = 0, shift = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (v > (max - (unsigned)(*s - '0')) / 10) return -1;
        v = v * 10 + (unsigned)(*s - '0');
    }
    if (!digits) return -1;
    switch (*s) {
    case 'k':
    case 'K':
        shift = 10, s++;
        break;
    case 'm':
    case 'M':
        shift = 20, s++;
        break;
    case 'g':
    case 'G':
        shift = 30, s++;
        break;
    default:
        break;
    }
    if (shift && (*s == 'b' || *s == 'B')) s++;
    if (*s || (shift && v > (max >> shift))) return -1;
    *out = v << shift;
    return 0;
}

/* "*", "N", "A-B", "A-*" into [lo, hi]; hi = max for '*'. */
static int parse_range(const char *s, unsigned long long max, unsigned long long *lo, unsigned long long *hi)
{
    char a[64];
    const char *dash = strchr(s, '-');
    if (!strcmp(s, "*")) {
        *lo = 0, *hi = max;
        return 0;
    }
    if (!dash) {
        if (parse_num(s, max, lo)) return -1;
        *hi = *lo;
        return 0;
    }
    size_t k = (size_t)(dash - s);
    if (k == 0 || k >= sizeof a) return -1;
    memcpy(a, s, k);
    a[k] = 0;
    if (parse_num(a, max, lo)) return -1;
    if (!strcmp(dash + 1, "*"))
        *hi = max;
    else if (parse_num(dash + 1, max, hi))
        return -1;
    return *lo <= *hi ? 0 : -1;
}

static int split(char *line, char **tok)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r\v\f", &save); t; t = strtok_r(NULL, " \t\r\v\f", &save)) {
        if (n == MAXTOK) return MAXTOK + 1;
        tok[n++] = t;
    }
    return n;
}

static int parse_alg(mc_coll_t c, const char *name, int *alg)
{
    if (!strcmp(name, "pmpi")) {
        *alg = -1;
        return 0;
    }
    const mc_alg_t *a = mc_alg_find(c, name);
    if (!a) return -1;
    *alg = mc_alg_index(a);
    return 0;
}

static int parse_row(char **tok, int ntok, mc_frule_t *r, char *err, size_t n)
{
    unsigned long long lo, hi;
    if (ntok < 4 || ntok > 6)
        return fail(err, n, "expected 'collective ranks bytes algorithm [segsize [radix]]', got %d fields",
                    ntok);
    int c = mc_coll_from_name(tok[0]);
    if (c < 0) return fail(err, n, "unknown collective '%s'", tok[0]);
    r->coll = (mc_coll_t)c;
    if (parse_range(tok[1], INT_MAX, &lo, &hi) || hi < 1)
        return fail(err, n, "bad rank range '%s' (N, A-B, A-* or *; A <= B)", tok[1]);
    r->pmin = (int)lo, r->pmax = (int)hi;
    if (parse_range(tok[2], SIZE_MAX, &lo, &hi))
        return fail(err, n, "bad byte range '%s' (e.g. 0-64k, 1M-*, *)", tok[2]);
    r->bmin = (size_t)lo, r->bmax = (size_t)hi;
    if (parse_alg(r->coll, tok[3], &r->alg)) return fail(err, n, "%s has no algorithm '%s'", tok[0], tok[3]);
    r->segsize = -1, r->radix = -1;
    if (ntok > 4 && strcmp(tok[4], "-")) {
        if (parse_num(tok[4], LONG_MAX, &lo))
            return fail(err, n, "bad segment size '%s' (bytes, k/M/G, or -)", tok[4]);
        r->segsize = (long)lo;
    }
    if (ntok > 5 && strcmp(tok[5], "-")) {
        if (parse_num(tok[5], 1 << 20, &lo) || lo < 2)
            return fail(err, n, "bad radix '%s' (2..1048576 or -)", tok[5]);
        r->radix = (int)lo;
    }
    return 0;
}

static int add_row(mc_rules_t *out, const mc_frule_t *r, int *cap)
{
    if (out->n == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        mc_frule_t *rows = realloc(out->rows, (size_t)nc * sizeof *rows);
        if (!rows) return -1;
        out->rows = rows, *cap = nc;
    }
    out->rows[out->n++] = *r;
    return 0;
}

/* One line (already copied out and NUL-terminated): comment stripped, empty lines skipped. */
static int parse_line(char *line, int lineno, mc_rules_t *out, int *cap, char *err, size_t n)
{
    char *tok[MAXTOK + 1], why[200];
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    int ntok = split(line, tok);
    if (ntok == 0) return 0;
    mc_frule_t r = {.line = lineno};
    if (parse_row(tok, ntok, &r, why, sizeof why)) return fail(err, n, "line %d: %s", lineno, why);
    if (out->n >= MC_RULES_MAX_ROWS)
        return fail(err, n, "line %d: more than %d rules", lineno, MC_RULES_MAX_ROWS);
    if (add_row(out, &r, cap)) return fail(err, n, "line %d: out of memory", lineno);
    return 0;
}

int mc_rules_parse(const char *text, size_t len, mc_rules_t *out, char *err, size_t n)
{
    char line[MC_RULES_MAX_LINE + 1];
    int cap = 0, lineno = 0, rc = 0;
    out->n = 0, out->rows = NULL;
    for (size_t pos = 0; pos < len && !rc;) {
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        lineno++;
        if (end - pos > MC_RULES_MAX_LINE)
            rc = fail(err, n, "line %d: longer than %d bytes", lineno, MC_RULES_MAX_LINE);
        else if (memchr(text + pos, 0, end - pos))
            rc = fail(err, n, "line %d: NUL byte", lineno);
        else {
            memcpy(line, text + pos, end - pos);
            line[end - pos] = 0;
            rc = parse_line(line, lineno, out, &cap, err, n);
        }
        pos = end + 1;
    }
    if (rc) mc_rules_free(out);
    return rc;
}

int mc_rules_load(const char *path, mc_rules_t *out, char *err, size_t n)
{
    out->n = 0, out->rows = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, n, "%s: %s", path, strerror(errno));
    char *buf = malloc(MC_RULES_MAX_BYTES + 1);
    size_t len = buf ? fread(buf, 1, MC_RULES_MAX_BYTES + 1, f) : 0;
    int rd_err = ferror(f);
    fclose(f);
    char why[256];
    int rc;
    if (!buf)
        rc = fail(err, n, "%s: out of memory", path);
    else if (rd_err)
        rc = fail(err, n, "%s: read error", path);
    else if (len > MC_RULES_MAX_BYTES)
        rc = fail(err, n, "%s: larger than %d bytes", path, MC_RULES_MAX_BYTES);
    else if ((rc = mc_rules_parse(buf, len, out, why, sizeof why)))
        fail(err, n, "%s: %s", path, why);
    free(buf);
    return rc;
}

void mc_rules_free(mc_rules_t *r)
{
    free(r->rows);
    r->rows = NULL;
    r->n = 0;
}

const char *mc_frule_alg_name(const mc_frule_t *r)
{
    const mc_alg_t *a = r->alg >= 0 ? mc_alg_at(r->coll, r->alg) : NULL;
    return a ? a->name : "pmpi";
}
