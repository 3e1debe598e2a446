/* mcoll-info: what this build of mcoll contains and what it sees.
 *   mcoll-info [--algs] [--vars] [--topo] [--markdown]
 * Without a section option every section is printed. --markdown prints the algorithm and
 * variable tables in the form the README embeds. Needs no MPI launch: nothing here calls
 * MPI_Init (MPI_Get_library_version is allowed before it). */
#include "mcoll.h"
#include "core/config.h"
#include "core/mc.h"
#include "core/topo.h"
#include "model/model.h"
#include "shm/shm.h"
#include <hwloc.h>
#include <stdio.h>
#include <string.h>

enum { SEC_ALGS = 1, SEC_VARS = 2, SEC_TOPO = 4, SEC_ALL = 7 };

typedef struct info_opts {
    unsigned sections;
    int markdown;
} info_opts_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: mcoll-info [--algs] [--vars] [--topo] [--markdown]\n"
               "  --algs      algorithms registered per collective\n"
               "  --vars      MCOLL_* configuration variables (default, current value, meaning)\n"
               "  --topo      hardware topology detected by hwloc\n"
               "  --markdown  print algorithms and variables as Markdown tables\n"
               "  (no section option: all sections)\n");
}

/* Returns 0 on success, 1 on --help, -1 on a bad option. */
static int parse_args(int argc, char **argv, info_opts_t *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--algs")) o->sections |= SEC_ALGS;
        else if (!strcmp(argv[i], "--vars")) o->sections |= SEC_VARS;
        else if (!strcmp(argv[i], "--topo")) o->sections |= SEC_TOPO;
        else if (!strcmp(argv[i], "--markdown")) o->markdown = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
        else {
            fprintf(stderr, "mcoll-info: unknown option '%s'\n", argv[i]);
            return -1;
        }
    }
    /* The topology is machine specific: a Markdown document wants only the tables. */
    if (!o->sections) o->sections = o->markdown ? SEC_ALGS | SEC_VARS : SEC_ALL;
    return 0;
}

/* ---------------------------------------------------------------- helpers */
/* Markdown cells: a '|' inside a cell would split it. */
static void md_cell(const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|') fputc('\\', stdout);
        fputc(*s, stdout);
    }
}

static const char *type_name(mc_cfg_type_t t)
{
    switch (t) {
    case MC_CFG_BOOL: return "bool";
    case MC_CFG_INT: return "int";
    case MC_CFG_SIZE: return "size";
    case MC_CFG_STR: return "string";
    }
    return "?";
}

/* Flags as words ("segmented, radix, commutative only"), from the internal registry. */
static const char *flag_words(const char *coll, const char *alg, char *buf, size_t n)
{
    const mc_alg_t *a = mc_alg_find(mc_coll_from_name(coll), alg);
    buf[0] = 0;
    if (!a) return buf;
    snprintf(buf, n, "%s%s%s%s", (a->flags & MC_ALG_SEGMENTED) ? "segmented " : "",
             (a->flags & MC_ALG_RADIX) ? "radix " : "",
             (a->flags & MC_ALG_COMMUTATIVE_ONLY) ? "commutative-only " : "",
             a->dav ? "shared-memory (one node) " : "");
    size_t len = strlen(buf);
    if (len) buf[len - 1] = 0;
    return buf;
}

static void human_size(size_t b, char *buf, size_t n)
{
    if (!b) snprintf(buf, n, "unknown");
    else if (b % (1u << 20) == 0) snprintf(buf, n, "%zu MiB", b >> 20);
    else if (b % 1024 == 0) snprintf(buf, n, "%zu KiB", b >> 10);
    else snprintf(buf, n, "%zu B", b);
}

/* ---------------------------------------------------------------- algorithms */
/* Algorithms the registry names but this build lacks (an algorithm file not yet written). */
static void print_missing(const char *coll)
{
    size_t n = strlen(coll);
    int first = 1;
    for (int i = 0; mc_alg_expected(i); i++) {
        const char *e = mc_alg_expected(i);
        if (strncmp(e, coll, n) || e[n] != '/') continue;
        if (mc_alg_find(mc_coll_from_name(coll), e + n + 1)) continue;
        printf("%s%s", first ? "    missing from this build: " : ", ", e + n + 1);
        first = 0;
    }
    if (!first) printf("\n");
}

static void print_algs_text(void)
{
    char fl[64];
    printf("Algorithms (force one with MCOLL_<COLL>_ALG=name or mcoll_set_alg):\n");
    for (int c = 0; c < mcoll_coll_count(); c++) {
        const char *coll = mcoll_coll_name(c);
        printf("  %s (%d)\n", coll, mcoll_alg_count(coll));
        for (int i = 0; i < mcoll_alg_count(coll); i++) {
            const char *name = mcoll_alg_name(coll, i);
            flag_words(coll, name, fl, sizeof fl);
            printf("    %-20s %s%s%s%s\n", name, mcoll_alg_doc(coll, i), *fl ? " [" : "", fl,
                   *fl ? "]" : "");
        }
        print_missing(coll);
    }
    printf("\n");
}

static void print_algs_md(void)
{
    char fl[64];
    printf("| Collective | Algorithm | Description | Properties |\n");
    printf("|---|---|---|---|\n");
    for (int c = 0; c < mcoll_coll_count(); c++) {
        const char *coll = mcoll_coll_name(c);
        for (int i = 0; i < mcoll_alg_count(coll); i++) {
            const char *name = mcoll_alg_name(coll, i);
            printf("| %s | `%s` | ", coll, name);
            md_cell(mcoll_alg_doc(coll, i));
            printf(" | %s |\n", flag_words(coll, name, fl, sizeof fl));
        }
    }
    printf("\n");
}

/* ---------------------------------------------------------------- variables */
static void print_vars_text(void)
{
    printf("Configuration variables (read once, at first use):\n");
    printf("  %-34s %-6s %-8s %-10s %s\n", "variable", "type", "default", "current", "meaning");
    for (int i = 0; i < mc_cfg_var_count(); i++) {
        const mc_cfg_var_t *v = mc_cfg_var_at(i);
        const char *cur = mc_cfg_value(v);
        printf("  %-34s %-6s %-8s %-10s %s\n", v->name, type_name(v->type),
               *v->defval ? v->defval : "-", *cur ? cur : "-", v->doc);
    }
    printf("\n");
}

static void print_vars_md(void)
{
    printf("| Variable | Type | Default | Description |\n");
    printf("|---|---|---|---|\n");
    for (int i = 0; i < mc_cfg_var_count(); i++) {
        const mc_cfg_var_t *v = mc_cfg_var_at(i);
        printf("| `%s` | %s | %s | ", v->name, type_name(v->type), *v->defval ? v->defval : "(unset)");
        md_cell(v->doc);
        printf(" |\n");
    }
    printf("\n");
}

/* ---------------------------------------------------------------- topology */
static void print_topo(int markdown)
{
    mc_topo_t t;
    char l1[32], l2[32], l3[32], llc[32];
    const char *incl[] = {"unknown", "no", "yes"};
    int rc = mc_topo_get(&t);
    const char *b = markdown ? "- " : "  ";
    human_size(t.l1d, l1, sizeof l1);
    human_size(t.l2, l2, sizeof l2);
    human_size(t.l3, l3, sizeof l3);
    human_size(t.llc, llc, sizeof llc);
    printf("Topology (hwloc %s)%s:\n", HWLOC_VERSION, rc ? " [detection FAILED: defaults]" : "");
    printf("%spackages %d, NUMA nodes %d, cores %d, PUs %d\n", b, t.packages, t.numa_nodes, t.cores,
           t.pus);
    printf("%sL1d %s, L2 %s, L3 %s (one instance each)\n", b, l1, l2, l3);
    printf("%slast level: L%d, %s x %d, shared by %d PUs, inclusive: %s\n", b, t.llc_level, llc,
           t.llc_count, t.llc_pus, incl[t.llc_inclusive + 1]);
    /* the shared-memory engine's view of it */
    char c2[32], cp[32];
    human_size(mc_cache_capacity(2), c2, sizeof c2);
    human_size(mc_cache_capacity(t.pus), cp, sizeof cp);
    const char *from = mc_cfg()->shm_cache > 0                 ? "MCOLL_SHM_CACHE"
                       : mc_profile_active()->adapt_c > 0    ? "MCOLL_PROFILE cache.adaptive"
                       : mc_llc_credible(t.llc, t.llc_pus) ? "hwloc"
                       : t.llc ? "hwloc's LLC per PU is not credible: the 32 MiB default"
                               : "no LLC found: the 32 MiB default";
    printf("%sadaptive copy: cache capacity C = %s at 2 ranks, %s at %d (%s); nt-copy kernel %s\n", b, c2,
           cp, t.pus, from, mc_copy_nt_kind());
    printf("\n");
}

/* ---------------------------------------------------------------- main */
static void print_version(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0;
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS) len = 0;
    lib[len] = 0;
    lib[strcspn(lib, "\n")] = 0;   /* first line is enough */
    for (char *c = lib; *c; c++)
        if (*c == '\t') *c = ' ';
    printf("mcoll %s\nMPI: %s\n\n", MCOLL_VERSION, len ? lib : "unknown");
}

int main(int argc, char **argv)
{
    info_opts_t o;
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        usage(rc > 0 ? stdout : stderr);
        return rc > 0 ? 0 : 2;
    }
    if (!o.markdown) print_version();
    if (o.sections & SEC_ALGS) o.markdown ? print_algs_md() : print_algs_text();
    if (o.sections & SEC_VARS) o.markdown ? print_vars_md() : print_vars_text();
    if (o.sections & SEC_TOPO) print_topo(o.markdown);
    return 0;
}
