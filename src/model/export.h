/* Writers of native MPI tuning files from an mcoll rules table (src/select/rules.h):
 *  - Open MPI 4.1 coll_tuned dynamic rules (coll_tuned_use_dynamic_rules 1,
 *    coll_tuned_dynamic_rules_filename FILE)
 *  - MPICH 4.0 collective selection JSON (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=FILE;
 *    with the ch4 device also MPIR_CVAR_DEVICE_COLLECTIVES=none, or ch4's own composition
 *    layer chooses before this file is consulted)
 * Rows whose mcoll algorithm has no native counterpart (mc_export_native) keep the native
 * library's own choice: algorithm 0 (Open MPI's fixed decision) or, for MPICH, a general
 * algorithm of that collective. Notes about such rows go to `log` (may be NULL). */
#ifndef MC_EXPORT_H
#define MC_EXPORT_H
#include "../select/rules.h"
#include <stdio.h>

int mc_export_ompi(const mc_rules_t *r, FILE *out, FILE *log);
int mc_export_mpich(const mc_rules_t *r, FILE *out, FILE *log);

/* Native counterpart of an mcoll algorithm: Open MPI coll_tuned id (0 = none) and MPICH
 * container name (NULL = none). */
int mc_export_ompi_id(mc_coll_t c, const char *alg);
const char *mc_export_mpich_name(mc_coll_t c, const char *alg);
#endif
