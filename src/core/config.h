/* MCOLL_* variables: one declarative table (config.c) is the only place a variable is
 * defined; mcoll-info prints it, the README lists it. Values are read once (first use). */
#ifndef MC_CONFIG_H
#define MC_CONFIG_H
#include "mc.h"
#include <stdatomic.h>

typedef enum { MC_CFG_BOOL, MC_CFG_INT, MC_CFG_SIZE, MC_CFG_STR } mc_cfg_type_t;

typedef struct mc_cfg_var {
    const char *name;       /* environment variable */
    mc_cfg_type_t type;
    const char *defval;     /* textual default ("" = unset) */
    const char *doc;
} mc_cfg_var_t;

typedef struct mc_config {
    int verbose, stats, vnode_size;
    char rules[1024];           /* MCOLL_RULES: rules file path, "" = built-in table only */
    char select[8];             /* MCOLL_SELECT: model | table */
    char model[8];              /* MCOLL_MODEL: hockney | loggp | plogp */
    char profile[1024];         /* MCOLL_PROFILE: machine profile JSON, "" = built-in */
    char alg[MC_NCOLL][32];     /* forced algorithm, "" = automatic */
    long segsize[MC_NCOLL];     /* -1 = algorithm's default */
    int radix[MC_NCOLL];        /* -1 = algorithm's default */
    /* shared-memory engine */
    int shm;                    /* 0: never create node regions (shm algorithms decline) */
    long shm_size;              /* data area of a node region, bytes */
    int shm_pool;               /* idle regions kept for reuse per process (region.c) */
    char shm_path[8];           /* auto | copy | cma | zero */
    int shm_ptracer;            /* 1: under Yama scope 1 let peers attach (CMA; shm/cma.c) */
    char shm_cma_fast[8];       /* auto | 1 | 0: posted ordinary buffers fast by CMA (huge pages) */
    char shm_cma_bounce[8];     /* auto | 1 | 0: skewed CMA transfers through a bounce buffer */
    long shm_cache;             /* cache capacity C for adaptive copies, 0 = from hwloc */
    char shm_nt[8];             /* nt-copy kernel: auto | avx512 | avx2 | sse2 | scalar */
    long shm_slice;             /* I_max of the movement-avoiding reductions, bytes */
    long shm_small;             /* DPML-like small-message reductions up to this size */
    long shm_far_ns;            /* line-fetch latency above which the node is far, 0 = never */
    int shm_trial;              /* 1: the direct algorithms time their ways (shm/trial.c) */
    long shm_adopt;             /* adopt a malloc block at its k-th post (adopt.c), 0 = never */
    long shm_spin;              /* spins before a wait yields, 0 = by oversubscription (sync.c) */
    int oversubscribed;         /* -1 auto | 1 | 0: the node holds more ranks than CPUs (sync.c) */
    int p2p_poll;               /* -1 auto | 1 | 0: blocking point-to-point steps poll (p2p.c) */
    int vsocket_size;           /* local ranks per virtual socket, 0 = hwloc packages */
    long heap_size;             /* address space reserved per shared-heap segment */
    long heap_retain;           /* freed heap bytes kept backed before frees punch holes */
    long malloc_min;            /* libmcoll-malloc.so: smallest malloc from the heap (0 = none) */
    long int_max;               /* largest int count passed to one MPI call, 0 = INT_MAX */
} mc_config_t;

/* The configuration, read on first use. Every collective call reads it: the fast path is
 * one acquire load of a pointer published after loading. */
const mc_config_t *mc_cfg_load(void);
extern const mc_config_t *_Atomic mc_cfg_ready;
static inline const mc_config_t *mc_cfg(void)
{
    const mc_config_t *c = atomic_load_explicit(&mc_cfg_ready, memory_order_acquire);
    return c ? c : mc_cfg_load();
}
/* The largest count mcoll passes in one MPI call's int argument (MCOLL_INT_MAX, default
 * INT_MAX): packing and local reductions go in pieces of it, a longer point-to-point message
 * as one derived-datatype element. Smaller values exercise those paths at test sizes. */
static inline size_t mc_int_max(void)
{
    long v = mc_cfg()->int_max;
    return v > 0 && v < INT_MAX ? (size_t)v : (size_t)INT_MAX;
}
int mc_cfg_var_count(void);
const mc_cfg_var_t *mc_cfg_var_at(int i);
const char *mc_cfg_value(const mc_cfg_var_t *v);   /* current text value (env or default) */

/* Parses "64k", "1M", "4096" into bytes; returns -1 on a malformed value. */
long mc_parse_size(const char *s);
/* An auto | 1 | 0 variable's value: -1, 1, 0; anything else warns and counts as auto. */
int mc_cfg_auto_or_bool(const char *name, const char *v);

/* Segment size and radix: run-time override (mcoll_set_*) > environment > dflt. */
long mc_cfg_segsize(mc_coll_t c, long dflt);
int mc_cfg_radix(mc_coll_t c, int dflt);
void mc_cfg_set_segsize(mc_coll_t c, long v);
void mc_cfg_set_radix(mc_coll_t c, int v);

#endif
