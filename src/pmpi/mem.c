/* MPI_Alloc_mem / MPI_Free_mem: memory from the node-shared heap, so collectives on it run
 * zero copy. Whatever the heap cannot serve (heap disabled or exhausted, an alignment above
 * MC_HEAP_MAX_ALIGN, an Open MPI memory-pool hint, invalid arguments) goes to the native
 * MPI, which also raises its own errors. */
#include "../core/config.h"
#include "../shm/heap.h"
#include "../shm/shm.h"
#include <stdlib.h>
#include <string.h>

static int running(void)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    return init && !fin;
}

/* The alignment the info asks for (MPI 4.1 "mpi_minimum_memory_alignment"), 0 when the
 * allocation must be left to the native MPI. */
static size_t heap_align(MPI_Info info)
{
    char v[64];
    int flag = 0;
    if (info == MPI_INFO_NULL) return MC_HEAP_ALIGN;
    if (PMPI_Info_get(info, "mpool_hints", (int)sizeof v - 1, v, &flag) != MPI_SUCCESS || flag) return 0;
    if (PMPI_Info_get(info, "mpi_minimum_memory_alignment", (int)sizeof v - 1, v, &flag) != MPI_SUCCESS)
        return 0;
    if (!flag) return MC_HEAP_ALIGN;
    char *end;
    unsigned long a = strtoul(v, &end, 10);
    if (end == v || *end || (a & (a - 1)) || a > MC_HEAP_MAX_ALIGN) return 0;
    return a < MC_HEAP_ALIGN ? MC_HEAP_ALIGN : a;
}

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    size_t align;
    if (size < 0 || !baseptr || !mc_cfg()->shm || !running() || !(align = heap_align(info)))
        return PMPI_Alloc_mem(size, info, baseptr);
    /* size 0: a unique block, as malloc-like allocators give */
    void *p = mc_heap_alloc((size_t)size, align);
    if (!p) return PMPI_Alloc_mem(size, info, baseptr);
    memcpy(baseptr, &p, sizeof p);
    return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
    uint64_t id;
    int64_t off;
    if (!base || !mc_heap_lookup(base, &id, &off)) return PMPI_Free_mem(base);
    if (mc_heap_free(base) == 0) return MPI_SUCCESS;
    /* inside the heap but not a block start: what Open MPI raises for an unknown base */
    return mc_raise_no_comm(MPI_ERR_NO_MEM);
}
