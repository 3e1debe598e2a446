/* Shared heap: private declarations (the public part is in shm.h and include/mcoll.h).
 *
 * A heap_id names one memfd segment of its owner process:
 *   bit 63 always set (so an id is never 0 = "none"), bits 32..62 the low 31 bits of the
 *   segment's inode number (a peer checks them after opening /proc/<pid>/fd/<fd>, so a
 *   reused pid or descriptor can never be mistaken for the segment), bits 0..31 the fd. */
#ifndef MC_HEAP_H
#define MC_HEAP_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MC_HEAP_ID_BIT (1ull << 63)
#define MC_ADOPT_ID_BIT (1ull << 62)
#define MC_HEAP_ALIGN 64          /* every block */
#define MC_HEAP_MAX_ALIGN (2u << 20)

/* size bytes aligned to align (a power of two, MC_HEAP_ALIGN..MC_HEAP_MAX_ALIGN; smaller
 * values mean MC_HEAP_ALIGN). NULL when the heap cannot serve it. size 0 yields a unique
 * block. */
void *mc_heap_alloc(size_t size, size_t align);
/* 0 when p started a block (now free), -1 otherwise (nothing changed). */
int mc_heap_free(void *p);
/* Smallest malloc that libmcoll-malloc.so serves from the heap (MCOLL_MALLOC_MIN), 0 = none
 * (also when the heap or shared memory is disabled). */
size_t mc_heap_malloc_min(void);
/* [p, p + len) lies inside one of my (shareable) segments (len 0: p itself does). */
int mc_heap_lookup_range(const void *p, size_t len, uint64_t *heap_id, int64_t *off);

/* Whether this process publishes heap references in its posts. Cleared for good by a node
 * probe (mc_cma_probe) in which some rank could not open some peer's memfd through /proc:
 * peers then read its buffers by CMA or through the region instead. Because readers decide
 * from the post alone, every rank agrees on the path without further communication. */
int mc_heap_shareable(void);
void mc_heap_forbid_sharing(void);

/* Adoption (adopt.c, MCOLL_SHM_ADOPT): an ordinary buffer posted again and again moves into
 * a memfd at the same address. mc_adopt_lookup is the owner's side of a post of [buf, buf +
 * len) that no heap segment holds: 1 with its id and offset when the range is (now) adopted.
 * mc_adopt_translate maps a peer's adopted range (pid == own pid: this process's own);
 * mc_adopt_tick counts posts, which bound how long a translated pointer may be in use. */
#define MC_ADOPT_MIN ((size_t)128 << 10)
uint64_t mc_adopt_id(int fd, uint64_t ino);
int mc_adopt_lookup(const void *buf, size_t len, uint64_t *id, int64_t *off);
void *mc_adopt_translate(pid_t pid, uint64_t id, int64_t off, size_t len);
void mc_adopt_tick(void);
/* Maps len bytes (0: all, *size gets it) of the memfd (pid, id) names (heap or adopted). */
char *mc_heap_map_id(pid_t pid, uint64_t id, size_t len, size_t *size);
/* For tests: adoptions this process holds, peers' adopted ranges it maps, adoptions it made
 * since it started (dropped ones included). */
void mc_adopt_counts(int *owned, int *peers, unsigned long *made);

/* For tests: segments, live blocks and free extents; 0 when every internal invariant holds
 * (extents sorted, disjoint, coalesced; blocks and extents tile each segment exactly). */
typedef struct mc_heap_stats {
    int nseg;
    size_t blocks, used;      /* live blocks and their bytes (rounded sizes) */
    size_t extents, free;     /* free extents and their bytes */
} mc_heap_stats_t;
int mc_heap_check(mc_heap_stats_t *st);

#endif
