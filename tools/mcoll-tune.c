/* mcoll-tune: tuning files and models.
 *   mcoll-tune export --rules FILE [--ompi OUT] [--mpich OUT]
 *       an mcoll rules file (MCOLL_RULES format) as native tuning files: Open MPI 4.1
 *       coll_tuned dynamic rules and MPICH 4.0 collective-selection JSON
 *   mcoll-tune profile --default OUT
 *       the built-in machine profile as JSON, a starting point to edit
 * Notes about rows without a native counterpart go to stderr. No MPI needed. */
#include "model/export.h"
#include "model/model.h"
#include <stdio.h>
#include <string.h>

static int usage(void)
{
    fprintf(stderr, "usage: mcoll-tune export --rules FILE [--ompi OUT] [--mpich OUT]\n"
                    "       mcoll-tune profile --default OUT\n");
    return 2;
}

typedef int (*writer_fn)(const mc_rules_t *r, FILE *out, FILE *log);

static int write_to(const char *path, writer_fn w, const mc_rules_t *r)
{
    FILE *f = fopen(path, "w");
    if (!f) return perror(path), 1;
    int rc = w(r, f, stderr);
    if (fclose(f) || rc) return fprintf(stderr, "mcoll-tune: writing %s failed\n", path), 1;
    printf("wrote %s\n", path);
    return 0;
}

static int cmd_export(int argc, char **argv)
{
    const char *rules = NULL, *ompi = NULL, *mpich = NULL;
    for (int i = 0; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rules"))
            rules = argv[i + 1];
        else if (!strcmp(argv[i], "--ompi"))
            ompi = argv[i + 1];
        else if (!strcmp(argv[i], "--mpich"))
            mpich = argv[i + 1];
        else
            return usage();
    }
    if (argc % 2 || !rules || (!ompi && !mpich)) return usage();
    mc_rules_t r;
    char err[512];
    if (mc_rules_load(rules, &r, err, sizeof err)) return fprintf(stderr, "mcoll-tune: %s\n", err), 1;
    int rc = 0;
    if (ompi) rc |= write_to(ompi, mc_export_ompi, &r);
    if (mpich) rc |= write_to(mpich, mc_export_mpich, &r);
    mc_rules_free(&r);
    return rc;
}

static int cmd_profile(int argc, char **argv)
{
    mc_profile_t p;
    char err[256];
    if (argc != 2 || strcmp(argv[0], "--default")) return usage();
    mc_profile_default(&p);
    if (mc_profile_save(argv[1], &p, err, sizeof err)) return fprintf(stderr, "mcoll-tune: %s\n", err), 1;
    printf("wrote %s\n", argv[1]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    if (!strcmp(argv[1], "export")) return cmd_export(argc - 2, argv + 2);
    if (!strcmp(argv[1], "profile")) return cmd_profile(argc - 2, argv + 2);
    return usage();
}
