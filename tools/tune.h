/* mcoll-tune internals (issue 6): parameter measurement, the measured sweep, model-built and
 * measured decision functions as rules files, and the penalty of the model's choices.
 *   tune_params.c  Hockney / LogGP / PLogP / gamma / copy / caches -> machine profile (MPI)
 *   tune_sweep.c   every registered algorithm x sizes x segment sizes at this run's size,
 *                  timed by mcoll-bench's runner (bench_run_size); appends to a CSV (MPI)
 *   tune_decide.c  the CSV, the decision functions (measured best, model), rules files,
 *                  the penalty table and its heat map (no MPI) */
#ifndef TUNE_H
#define TUNE_H
#include "model/model.h"
#include <stddef.h>

#define TUNE_NAME 32

int tune_params_main(int argc, char **argv);
int tune_sweep_main(int argc, char **argv);
int tune_model_main(int argc, char **argv);
int tune_compare_main(int argc, char **argv);
int tune_rules_main(int argc, char **argv);

/* One measured point of the sweep CSV:
 *   coll,p,bytes,alg,segsize,med_us,min_us,iters,used
 * alg "native" is the MPI library itself, "default" mcoll's built-in choice (used names what
 * ran); segsize -1 for algorithms that are not segmented, 0 unsegmented. */
typedef struct tune_pt {
    char coll[TUNE_NAME], alg[TUNE_NAME], used[TUNE_NAME];
    int p;
    double bytes;
    long seg;
    double med, min; /* microseconds */
    long iters;
} tune_pt_t;

typedef struct tune_csv {
    tune_pt_t *pt;
    int n, cap;
} tune_csv_t;

int tune_csv_read(const char *path, tune_csv_t *out);
int tune_csv_add(tune_csv_t *c, const tune_pt_t *p);
void tune_csv_free(tune_csv_t *c);
/* Writes the measured-best rules of every (collective, ranks) in the CSV. */
int tune_write_measured_rules(const tune_csv_t *c, const char *path);
/* "8k" / "4M" / "123": bytes, -1 when malformed. */
long tune_parse_size(const char *s);
/* Comma list of sizes into out (at most max); count or -1. */
int tune_parse_list(const char *s, long *out, int max);
#endif
