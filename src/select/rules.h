/* Rules files (MCOLL_RULES=file): rows that take precedence over the built-in table.
 *
 * Text, one rule per line, whitespace-separated columns, '#' starts a comment:
 *   collective  ranks  bytes  algorithm  [segsize  [radix]]
 *     collective  barrier, bcast, ..., exscan (mcoll-info lists them)
 *     ranks       communicator sizes: N, A-B, A-* or *  (inclusive)
 *     bytes       per-rank payload as in mcoll_stats (k/M/G suffixes): N, A-B, A-* or *
 *     algorithm   a registered name of that collective, or pmpi (the native MPI)
 *     segsize     bytes (0 = unsegmented) or - (the algorithm's default)
 *     radix       integer >= 2 or - (default)
 * The first row of the collective that covers the call and whose algorithm applies wins;
 * when none does, the built-in table decides. Every rank must read the same file. */
#ifndef MC_RULES_H
#define MC_RULES_H
#include "../core/mc.h"

#define MC_RULES_MAX_ROWS 4096
#define MC_RULES_MAX_LINE 1024
#define MC_RULES_MAX_BYTES (1 << 20)

typedef struct mc_frule {
    mc_coll_t coll;
    int pmin, pmax;    /* pmax INT_MAX for '*' */
    size_t bmin, bmax; /* bmax SIZE_MAX for '*' */
    int alg;           /* registry index; -1 = pmpi */
    long segsize;      /* -1 = default */
    int radix;         /* -1 = default */
    int line;          /* 1-based, for explanations */
} mc_frule_t;

typedef struct mc_rules {
    int n;
    mc_frule_t *rows;
} mc_rules_t;

/* Parses len bytes of text (need not be NUL-terminated). 0 on success; on error -1 with
 * "line N: why" in err and *out empty. Never reads outside text[0..len). */
int mc_rules_parse(const char *text, size_t len, mc_rules_t *out, char *err, size_t errlen);
/* Reads and parses a file (at most MC_RULES_MAX_BYTES); errors name the path. */
int mc_rules_load(const char *path, mc_rules_t *out, char *err, size_t errlen);
void mc_rules_free(mc_rules_t *r);
/* Name of a row's algorithm ("pmpi" for -1). */
const char *mc_frule_alg_name(const mc_frule_t *r);
#endif
