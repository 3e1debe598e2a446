/* mcoll-tune: tuning files and models.
 *   mcoll-tune export --rules FILE [--ompi OUT] [--mpich OUT]
 *       an mcoll rules file (MCOLL_RULES format) as native tuning files: Open MPI 4.1
 *       coll_tuned dynamic rules and MPICH 4.0 collective-selection JSON
 *   mcoll-tune profile --default OUT
 *       the built-in machine profile as JSON, a starting point to edit
 *   mpiexec -n 2 mcoll-tune params --out P.json [--level intra|inter] [--quick]
 *       measured machine profile (tune_params.c)
 *   mpiexec -n P mcoll-tune sweep --csv F [--rules R] ...
 *       every algorithm x sizes x segment sizes at P ranks; measured-best rules (tune_sweep.c)
 *   mcoll-tune rules --csv F --out R          measured-best rules of a sweep CSV
 *   mcoll-tune model --profile P --model M --out R [--csv F | grid options]
 *       model-built rules (tune_decide.c)
 *   mcoll-tune compare --csv F --profile P [--table T] [--png IMG] [--penalty-csv C]
 *       penalty of the model-built decisions over the measured best (paper Fig. 7)
 * Notes about rows without a native counterpart go to stderr. Only params and sweep need
 * mpiexec. scripts/tune.sh (make tune) runs the chain. */
#include "model/export.h"
#include "model/model.h"
#include "tune.h"
#include <stdio.h>
#include <string.h>

static int usage(void)
{
    fprintf(stderr, "usage: mcoll-tune export --rules FILE [--ompi OUT] [--mpich OUT]\n"
                    "       mcoll-tune profile --default OUT\n"
                    "       mpiexec -n 2 mcoll-tune params --out P.json [--level intra|inter] [--quick]\n"
                    "       mpiexec -n P mcoll-tune sweep --csv F [--rules R] [--coll L] [--min B] [--max B]\n"
                    "                 [--step K] [--segs a,b] [--time S]\n"
                    "       mcoll-tune rules --csv F --out R\n"
                    "       mcoll-tune model --profile P --model hockney|loggp|plogp --out R [--csv F]\n"
                    "       mcoll-tune compare --csv F --profile P [--table T] [--png IMG] [--penalty-csv C]\n");
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
    if (!strcmp(argv[1], "params")) return tune_params_main(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sweep")) return tune_sweep_main(argc - 2, argv + 2);
    if (!strcmp(argv[1], "rules")) return tune_rules_main(argc - 2, argv + 2);
    if (!strcmp(argv[1], "model")) return tune_model_main(argc - 2, argv + 2);
    if (!strcmp(argv[1], "compare")) return tune_compare_main(argc - 2, argv + 2);
    return usage();
}
