/* Data paths between the ranks of a node (src/shm/path.c) under MCOLL_SHM_PATH and
 * MCOLL_HEAP_SIZE: every rank posts a buffer from MPI_Alloc_mem (the shared heap) in slot 0
 * and a malloc buffer in slot 1; every rank then checks the path it gets to every peer's
 * posts against what the mode promises, reads them, and writes into them.
 * Prints "ALL PASSED" on rank 0 when every rank passed. */
#include "mcoll.h"
#include "shm/heap.h"
#include "shm/shm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

static long fails;
static int wrank;
#include "expect.h"

static unsigned char pat(int rank, int slot, size_t i)
{
    return (unsigned char)(rank * 31 + slot * 101 + i * 7 + (i >> 9));
}
static size_t len_of(int rank)
{
    return (1 << 20) + (size_t)rank * 4160 + 17;
}

static void fill(char *p, int rank, int slot)
{
    for (size_t i = 0; i < len_of(rank); i++) p[i] = (char)pat(rank, slot, i);
}

static size_t bad(const char *p, int rank, int slot, size_t from, size_t n)
{
    size_t b = 0;
    for (size_t i = from; i < from + n; i++) b += (unsigned char)p[i - from] != pat(rank, slot, i);
    return b;
}

/* The path a mode promises to a post of a peer. */
static mc_path_t expected(mc_path_t mode, int heap_ref, int cma)
{
    int zero = heap_ref && (mode == MC_PATH_AUTO || mode == MC_PATH_ZERO);
    int c = cma && (mode == MC_PATH_AUTO || mode == MC_PATH_CMA);
    return zero ? MC_PATH_ZERO : c ? MC_PATH_CMA : MC_PATH_COPY;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    /* SHM_PATHS_UNDUMPABLE=1 (run without CAP_SYS_PTRACE): peers can neither CMA into the
     * last rank nor open its descriptors, so the probe must turn CMA and heap sharing off
     * on every rank and every path must degrade to COPY. (Rank 0 stays reachable: it
     * creates the region the others open.) */
    const char *und = getenv("SHM_PATHS_UNDUMPABLE");
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (und && !strcmp(und, "1") && wrank == wsize - 1 && wrank > 0) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    mc_ctx_t *ctx;
    mc_shm_t *sh = NULL;
    if (mc_ctx_get(MPI_COMM_WORLD, &ctx) != MPI_SUCCESS || mc_shm_get(ctx, &sh) != MPI_SUCCESS || !sh) {
        if (wrank == 0) printf("shared memory unavailable: nothing to test\nALL PASSED\n");
        MPI_Finalize();
        return 0;
    }
    const char *heap_env = getenv("MCOLL_HEAP_SIZE");
    int heap_on = !(heap_env && !strcmp(heap_env, "0"));
    mc_path_t mode = mc_shm_path();
    int me = sh->r, p = sh->p;
    size_t n = len_of(me);

    char *h = NULL, *m = malloc(n);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096");
    MPI_Alloc_mem((MPI_Aint)n, info, &h);
    MPI_Info_free(&info);
    uint64_t id;
    int64_t off;
    int in_heap = mc_heap_lookup(h, &id, &off);
    EXPECT(in_heap == heap_on, "MPI_Alloc_mem memory in the heap: %d", in_heap);
    if (in_heap) EXPECT((uintptr_t)h % 4096 == 0, "alignment from the info: %p", (void *)h);
    fill(h, me, 0);
    fill(m, me, 1);
    int shareable = mc_heap_shareable();
    if (wrank == 0)
        printf("node of %d ranks: mode %d, cma %d, heap %d, heap shareable %d\n", p, (int)mode, sh->cma,
               heap_on, shareable);

    mc_shm_begin(sh);
    mc_shm_quiesce(sh);
    mc_shm_post(sh, 0, h, n);
    mc_shm_post(sh, 1, m, n);
    mc_shm_set(sh, MC_F_STEP, 1);
    mc_shm_wait_all(sh, MC_F_STEP, 1);

    /* every peer's posts: the promised path, and the data through it */
    int reach[2] = {1, 1};
    char *buf = malloc(len_of(p));
    for (int j = 0; j < p; j++) {
        for (int s = 0; s < 2; s++) {
            int ref = mc_post(sh, j, s)->heap_off >= 0;
            EXPECT(ref == (s == 0 && heap_on && shareable), "rank %d slot %d heap reference %d", j, s, ref);
            mc_path_t want = j == me ? MC_PATH_ZERO : expected(mode, ref, sh->cma);
            mc_path_t got = mc_peer_path(sh, j, s);
            EXPECT(got == want, "path to rank %d slot %d: %d, expected %d", j, s, (int)got, (int)want);
            EXPECT((mc_peer_ptr(sh, j, s) != NULL) == (got == MC_PATH_ZERO), "pointer to rank %d slot %d", j,
                   s);
            if (j != me && want == MC_PATH_COPY) reach[s] = 0;
            int rc = mc_peer_read(sh, j, s, 5, buf, len_of(j) - 5);
            if (got == MC_PATH_COPY) {
                EXPECT(rc == MPI_ERR_INTERN, "read without a path: %d", rc);
                continue;
            }
            EXPECT(rc == MPI_SUCCESS, "read rank %d slot %d: %d", j, s, rc);
            size_t b = bad(buf, j, s, 5, len_of(j) - 5);
            EXPECT(b == 0, "read rank %d slot %d: %zu bad bytes", j, s, b);
            EXPECT(mc_peer_read(sh, j, s, 6, buf, len_of(j) - 5) == MPI_ERR_INTERN, "read past the end");
        }
    }
    for (int s = 0; s < 2; s++)
        EXPECT(mc_shm_all_reachable(sh, s) == (p < 2 || reach[s]), "all reachable slot %d", s);

    /* writes: rank me stores its mark into bytes [8 me, 8 me + 8) of every reachable post */
    mc_shm_set(sh, MC_F_STEP, 2);
    mc_shm_wait_all(sh, MC_F_STEP, 2);
    for (int j = 0; j < p; j++)
        for (int s = 0; s < 2; s++) {
            if (j == me || mc_peer_path(sh, j, s) == MC_PATH_COPY) continue;
            char mark[8];
            memset(mark, 'A' + me % 26, sizeof mark);
            int rc = mc_peer_write(sh, j, s, 8 * (size_t)me, mark, sizeof mark);
            EXPECT(rc == MPI_SUCCESS, "write rank %d slot %d: %d", j, s, rc);
        }
    mc_shm_set(sh, MC_F_STEP, 3);
    mc_shm_wait_all(sh, MC_F_STEP, 3);
    for (int i = 0; i < p; i++)
        for (int s = 0; s < 2; s++) {
            if (i == me) continue;
            /* rank i reached my post s the way I reach its post s (same mode, same kind) */
            int ref = s == 0 && heap_on && shareable;
            if (expected(mode, ref, sh->cma) == MC_PATH_COPY) continue;
            char *mine = s == 0 ? h : m;
            int ok = 1;
            for (int k = 0; k < 8; k++) ok &= mine[8 * i + k] == 'A' + i % 26;
            EXPECT(ok, "rank %d's write into my slot %d", i, s);
        }
    mc_shm_end(sh);
    free(buf);

    /* the writes are complete everywhere before anyone frees */
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT(MPI_Free_mem(h) == MPI_SUCCESS, "MPI_Free_mem");
    free(m);
    char *z = NULL;
    EXPECT(MPI_Alloc_mem(0, MPI_INFO_NULL, &z) == MPI_SUCCESS, "MPI_Alloc_mem(0)");
    EXPECT(MPI_Free_mem(z) == MPI_SUCCESS, "MPI_Free_mem of a 0-byte block");

    long total = 0;
    MPI_Reduce(&fails, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0) printf(total ? "%ld failures\n" : "ALL PASSED\n", total);
    MPI_Finalize();
    return total != 0;
}
