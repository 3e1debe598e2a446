#include "topo.h"
#include <hwloc.h>
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static mc_topo_t cached;
static int cached_rc;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int count_of(hwloc_topology_t h, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(h, type);
    return n > 0 ? n : 1;   /* a machine without the object still has one of it */
}

static size_t cache_size(hwloc_topology_t h, hwloc_obj_type_t type)
{
    hwloc_obj_t o = hwloc_get_obj_by_type(h, type, 0);
    return o && o->attr ? (size_t)o->attr->cache.size : 0;
}

/* hwloc reports "Inclusive" (x86 cpuid leaf 4) as an info string; other platforms omit it. */
static int inclusive_of(hwloc_obj_t o)
{
    const char *v = hwloc_obj_get_info_by_name(o, "Inclusive");
    if (!v) return -1;
    return atoi(v) != 0;
}

/* The last level is the deepest cache level present, whichever type hwloc uses for it. */
static void fill_llc(hwloc_topology_t h, mc_topo_t *t)
{
    static const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE,
                                              HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
                                              HWLOC_OBJ_L1CACHE};
    t->llc_inclusive = -1;
    for (int i = 0; i < 5; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(h, levels[i], 0);
        if (!o || !o->attr) continue;
        t->llc_level = 5 - i;
        t->llc = (size_t)o->attr->cache.size;
        t->llc_count = hwloc_get_nbobjs_by_type(h, levels[i]);
        t->llc_pus = o->cpuset ? hwloc_bitmap_weight(o->cpuset) : 0;
        t->llc_inclusive = inclusive_of(o);
        return;
    }
}

/* Package of every PU by OS index: which socket a rank runs on (socket-aware algorithms). */
#define MAX_PU 4096
static void detect(void);
static short pkg_of_pu[MAX_PU];

static void fill_packages(hwloc_topology_t h)
{
    int n = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, (unsigned)i);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, pu);
        if (pu && pu->os_index < MAX_PU) pkg_of_pu[pu->os_index] = pkg ? (short)pkg->logical_index : 0;
    }
}

int mc_topo_package_of_cpu(int cpu)
{
    pthread_once(&once, detect);
    return cpu >= 0 && cpu < MAX_PU ? pkg_of_pu[cpu] : 0;
}

static void fill(hwloc_topology_t h, mc_topo_t *t)
{
    fill_packages(h);
    t->packages = count_of(h, HWLOC_OBJ_PACKAGE);
    t->numa_nodes = count_of(h, HWLOC_OBJ_NUMANODE);
    t->cores = count_of(h, HWLOC_OBJ_CORE);
    t->pus = count_of(h, HWLOC_OBJ_PU);
    t->l1d = cache_size(h, HWLOC_OBJ_L1CACHE);
    t->l2 = cache_size(h, HWLOC_OBJ_L2CACHE);
    t->l3 = cache_size(h, HWLOC_OBJ_L3CACHE);
    fill_llc(h, t);
}

static void detect(void)
{
    hwloc_topology_t h;
    memset(&cached, 0, sizeof cached);
    cached.packages = cached.numa_nodes = cached.cores = cached.pus = 1;
    cached.llc_inclusive = -1;
    cached_rc = MPI_ERR_OTHER;
    if (hwloc_topology_init(&h) != 0) return;
    if (hwloc_topology_load(h) == 0) {
        fill(h, &cached);
        cached_rc = MPI_SUCCESS;
    }
    hwloc_topology_destroy(h);
}

int mc_topo_get(mc_topo_t *t)
{
    pthread_once(&once, detect);
    if (t) *t = cached;
    return cached_rc;
}
