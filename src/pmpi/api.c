/* Public control API (include/mcoll.h), MPI_Finalize and MPI_Session_init/finalize. */
#include "../core/config.h"
#include "../core/stats.h"
#include "../select/select.h"
#include "../shm/shm.h"
#include "mcoll.h"
#include <stdatomic.h>
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
    mc_keep_release();
    return PMPI_Finalize();
}

#if MPI_VERSION >= 4
/* The program's open sessions (mcoll's own, made through PMPI, are not counted): where a
 * program of sessions alone (no MPI_Init) finalizes its last one, MCOLL_STATS prints as
 * MPI_Finalize would, the counts of world rank 0 alone (mc_stats_report_own). Each time the
 * count falls to 0: a program may open sessions again, and the counts go on adding up. */
static atomic_int user_sessions;

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    int rc = PMPI_Session_init(info, errhandler, session);
    if (rc == MPI_SUCCESS) atomic_fetch_add(&user_sessions, 1);
    return rc;
}

int MPI_Session_finalize(MPI_Session *session)
{
    int init = 0, valid = session && *session != MPI_SESSION_NULL;
    PMPI_Initialized(&init);
    /* counted down first, so that of two threads finalizing the last two sessions one reports;
     * the report before the finalize: mc_world_rank's session of its own must not be the one
     * that makes the MPI library start again */
    int last = valid && atomic_fetch_sub(&user_sessions, 1) == 1;
    if (mc_cfg()->stats && !init && last) mc_stats_report_own(mc_world_rank());
    int rc = PMPI_Session_finalize(session);
    if (valid && rc != MPI_SUCCESS) atomic_fetch_add(&user_sessions, 1);
    return rc;
}
#endif
