/* Public control API (include/mcoll.h) and MPI_Finalize. */
#include "../core/config.h"
#include "../core/stats.h"
#include "../select/select.h"
#include "../shm/shm.h"
#include "mcoll.h"
#include <string.h>

int mcoll_set_alg(const char *coll, const char *alg)
{
    int c = mc_coll_from_name(coll);
    if (c < 0 || mc_sel_force(c, alg) != 0) return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

int mcoll_set_segsize(const char *coll, long segsize)
{
    int c = mc_coll_from_name(coll);
    if (c < 0) return MPI_ERR_ARG;
    mc_cfg_set_segsize(c, segsize);
    mc_sel_changed();
    return MPI_SUCCESS;
}

int mcoll_set_radix(const char *coll, int radix)
{
    int c = mc_coll_from_name(coll);
    if (c < 0) return MPI_ERR_ARG;
    mc_cfg_set_radix(c, radix);
    mc_sel_changed();
    return MPI_SUCCESS;
}

int mcoll_coll_count(void) { return MC_NCOLL; }
const char *mcoll_coll_name(int i) { return i >= 0 && i < MC_NCOLL ? mc_coll_name(i) : NULL; }

int mcoll_alg_count(const char *coll)
{
    int c = mc_coll_from_name(coll);
    return c < 0 ? -1 : mc_alg_count(c);
}

const char *mcoll_alg_name(const char *coll, int i)
{
    int c = mc_coll_from_name(coll);
    const mc_alg_t *a = c < 0 ? NULL : mc_alg_at(c, i);
    return a ? a->name : NULL;
}

const char *mcoll_alg_doc(const char *coll, int i)
{
    int c = mc_coll_from_name(coll);
    const mc_alg_t *a = c < 0 ? NULL : mc_alg_at(c, i);
    return a ? a->doc : NULL;
}

void mcoll_setup_stats(mcoll_setup_stats_t *out)
{
    if (!out) return;
    *out = (mcoll_setup_stats_t){0};
    mc_ctx_counts(&out->contexts, &out->contexts_by_table);
    mc_shm_region_counts(&out->regions_created, &out->regions_reused);
}

int MPI_Finalize(void)
{
    if (mc_cfg()->stats) mc_stats_report();
    mc_ctx_release_predefined();
    mc_shm_pool_close();
    return PMPI_Finalize();
}
