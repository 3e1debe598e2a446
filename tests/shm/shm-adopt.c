/* Adoption of malloc buffers (src/shm/adopt.c), run with MCOLL_SHM_ADOPT=2; the program fixes
 * glibc's mmap threshold at 128 KiB (larger blocks mapped alone). Every round, each rank posts a
 * buffer in slot 1 with a pattern of the round, every peer reads it through the path it gets
 * and checks the bytes, writes a mark into it, and the owner checks the marks. Checked:
 *  - a whole malloc block (and a posix_memalign'd one) is adopted at its second post, and the
 *    path to it is then zero copy; a part of a block, a small block and a static array never;
 *  - the bytes stay right when the adopted block is freed and a new one (often at the same
 *    address) is posted, when it is grown by realloc (mremap), and when madvise splits it:
 *    each must drop the adoption, never let a peer read the old pages;
 *  - after fork() the child's writes to an adopted block (and to a remnant of one) never
 *    reach the parent, and the child sees the parent's bytes;
 *  - eighty blocks adopted and freed in turn: peers keep at most their bound of mappings.
 * Without adoption (ASan's allocator, or no shareable heap) the same rounds check the bytes.
 * Prints "ALL PASSED" on rank 0 when every rank passed. */
#include "mcoll.h"
#include "shm/heap.h"
#include "shm/shm.h"
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define GLIBC_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GLIBC_MALLOC 0
#endif
#endif
#ifndef GLIBC_MALLOC
#define GLIBC_MALLOC 1
#endif

static long fails;
static int wrank, adopting;
static mc_shm_t *sh;
#include "expect.h"

static unsigned char pat(int rank, int round, size_t i)
{
    return (unsigned char)(rank * 31 + round * 101 + i * 7 + (i >> 9));
}

static void fill(char *p, size_t n, int round)
{
    for (size_t i = 0; i < n; i++) p[i] = (char)pat(wrank, round, i);
}

static size_t bad(const char *p, size_t n, int rank, int round)
{
    size_t b = 0;
    for (size_t i = 0; i < n; i++) b += (unsigned char)p[i] != pat(rank, round, i);
    return b;
}

/* One round: post buf (n bytes, filled with the pattern of `round`), every peer reads it
 * and writes its mark into bytes [8 r, 8 r + 8); returns whether this rank's post was
 * adopted (a heap reference to memory that is not the heap's). */
static int round_of(char *buf, size_t n, int round)
{
    fill(buf, n, round);
    mc_shm_begin(sh);
    mc_shm_quiesce(sh);
    mc_shm_post(sh, 1, buf, n);
    int adopted = mc_post(sh, sh->r, 1)->heap_off >= 0;
    mc_shm_set(sh, MC_F_STEP, 1);
    mc_shm_wait_all(sh, MC_F_STEP, 1);
    int p = sh->p;
    for (int j = 0; j < p; j++) {
        if (j == sh->r) continue;
        const mc_post_t *q = mc_post(sh, j, 1);
        size_t len = q->len;
        mc_path_t path = mc_peer_path(sh, j, 1);
        if (q->heap_off >= 0)
            EXPECT(path == MC_PATH_ZERO, "round %d: path to rank %d's adopted post %d", round, j, (int)path);
        if (path == MC_PATH_COPY) continue;
        char *tmp = malloc(len);
        int rc = mc_peer_read(sh, j, 1, 0, tmp, len);
        EXPECT(rc == MPI_SUCCESS, "round %d: read rank %d: %d", round, j, rc);
        size_t b = bad(tmp, len, j, round);
        EXPECT(b == 0, "round %d: %zu bad bytes from rank %d (adopted %d)", round, b, j, q->heap_off >= 0);
        free(tmp);
    }
    mc_shm_set(sh, MC_F_STEP, 2);
    mc_shm_wait_all(sh, MC_F_STEP, 2);
    for (int j = 0; j < p; j++) {
        if (j == sh->r || mc_peer_path(sh, j, 1) == MC_PATH_COPY) continue;
        char mark[8];
        memset(mark, 'A' + sh->r % 26, sizeof mark);
        int rc = mc_peer_write(sh, j, 1, 8 * (size_t)sh->r, mark, sizeof mark);
        EXPECT(rc == MPI_SUCCESS, "write rank %d: %d", j, rc);
    }
    mc_shm_set(sh, MC_F_STEP, 3);
    mc_shm_wait_all(sh, MC_F_STEP, 3);
    for (int j = 0; j < p; j++) {
        if (j == sh->r || mc_peer_path(sh, j, 1) == MC_PATH_COPY) continue;
        int ok = 1;
        for (int k = 0; k < 8; k++) ok &= buf[8 * j + k] == 'A' + j % 26;
        EXPECT(ok, "round %d: rank %d's mark", round, j);
    }
    mc_shm_end(sh);
    return adopted;
}

static int rounds_done;
/* k rounds of buf; the adoption state of each, as a bit string (round 1 = bit 0). */
static unsigned rounds(char *buf, size_t n, int k)
{
    unsigned bits = 0;
    for (int i = 0; i < k; i++) bits |= (unsigned)round_of(buf, n, ++rounds_done) << i;
    return bits;
}

/* fork: the child checks it sees the parent's bytes, writes its own over them and exits;
 * the parent's bytes must not change. */
static void fork_check(char *buf, size_t n, const char *what)
{
    char *before = malloc(n);
    memcpy(before, buf, n);
    pid_t pid = fork();
    if (pid == 0) {
        int ok = !memcmp(buf, before, n);
        for (size_t i = 0; i < n; i++) buf[i] = (char)~before[i];
        _exit(ok ? 0 : 3);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child saw other bytes (status %d)", what, st);
    size_t b = 0;
    for (size_t i = 0; i < n; i++) b += buf[i] != before[i];
    EXPECT(b == 0, "%s: the child's writes reached the parent (%zu bytes)", what, b);
    free(before);
}

static char static_buf[256 << 10];

/* Whether glibc gave p a mapping of its own (IS_MMAPPED in its chunk header): only such a
 * block can be adopted. A free chunk left in the heap may serve a large request first. */
static int mapped_block(const void *p)
{
    size_t h;
    memcpy(&h, (const void *)((uintptr_t)p - sizeof h), sizeof h);
    return (h & 7) == 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    mc_ctx_t *ctx;
    if (mc_ctx_get(MPI_COMM_WORLD, &ctx) != MPI_SUCCESS || mc_shm_get(ctx, &sh) != MPI_SUCCESS || !sh) {
        if (wrank == 0) printf("shared memory unavailable: nothing to test\nALL PASSED\n");
        MPI_Finalize();
        return 0;
    }
    adopting = GLIBC_MALLOC && mc_heap_shareable() && sh->p > 1;
    if (wrank == 0) printf("%d ranks, adoption expected: %d\n", sh->p, adopting);
    size_t n = (1 << 20) + (size_t)wrank * 4160 + 17;
    /* every block from 128 KiB its own mapping, as glibc does until a free raises its
     * threshold (and the ctest environment's mmap_max=0 would stop it) */
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
    mallopt(M_MMAP_MAX, 1 << 20);

    /* a whole block: adopted at its second post, and kept */
    char *m = malloc(n);
    EXPECT(!GLIBC_MALLOC || mapped_block(m), "a block of %zu bytes not a mapping of its own", n);
    unsigned got = rounds(m, n, 4);
    EXPECT(got == (adopting ? 0xeu : 0u), "malloc block: adopted in rounds %#x", got);
    /* a part of it, once adopted: served from the adoption */
    got = rounds(m + 4096, n - 8192, 2);
    EXPECT(got == (adopting ? 0x3u : 0u), "part of an adopted block: adopted in rounds %#x", got);

    /* a part of a block, small blocks, static arrays: never */
    char *q = malloc(n);
    EXPECT(rounds(q + 4096, n - 8192, 3) == 0, "part of a block adopted");
    char *s = malloc(64 << 10);
    EXPECT(rounds(s, 64 << 10, 3) == 0, "small block adopted");
    EXPECT(rounds(static_buf, sizeof static_buf, 3) == 0, "static array adopted");
    free(s);
    free(q);

    /* posix_memalign'd: adopted too */
    void *al = NULL;
    EXPECT(posix_memalign(&al, 4096, n) == 0, "posix_memalign");
    got = rounds(al, n, 3);
    EXPECT(got == (adopting && mapped_block(al) ? 0x6u : 0u), "aligned block: adopted in rounds %#x", got);

    /* fork after adoption */
    fork_check(m, n, "adopted block");
    rounds(m, n, 1);

    /* freed and allocated again: the new block's bytes, never the old pages' */
    free(m);
    m = malloc(n);
    got = rounds(m, n, 3);
    EXPECT(got == (adopting && mapped_block(m) ? 0x6u : 0u), "a new block (at %p): adopted in rounds %#x",
           (void *)m, got);

    /* grown by realloc (glibc: mremap of the adopted mapping): dropped, and no longer
     * anonymous memory, never adopted again */
    char *g = realloc(m, 3 * n);
    EXPECT(g != NULL, "realloc");
    m = g;
    got = rounds(m, 3 * n, 4);
    EXPECT(got == 0, "a grown block: adopted in rounds %#x", got);
    fork_check(m, 3 * n, "grown adopted block");

    /* advice on one page splits the mapping: dropped; the remnants stay private after fork */
    char *page = (char *)(((uintptr_t)al + n / 2) & ~(uintptr_t)4095);
    EXPECT(madvise(page, 4096, MADV_NOHUGEPAGE) == 0, "madvise");
    got = rounds(al, n, 1);
    EXPECT(got == 0, "a split mapping kept its adoption");
    fork_check(al, n, "remnant of an adoption");
    rounds(al, n, 2);
    free(al);
    free(m);

    /* many blocks in turn, each adopted then freed: peers' mappings stay bounded */
    int adopted_blocks = 0, mapped = 0;
    for (int b = 0; b < 80; b++) {
        size_t nb = (256 << 10) + (size_t)b * 8192 + (size_t)wrank * 64;
        char *x = malloc(nb);
        int want = adopting && mapped_block(x), any = 0, all = 0;
        for (int k = 0; k < 4 && !all; k++) {
            any |= round_of(x, nb, ++rounds_done);
            int done = any || !want;
            MPI_Allreduce(&done, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        }
        adopted_blocks += any;
        mapped += want;
        free(x);
    }
    int own = 0, peers = 0;
    unsigned long made = 0;
    mc_adopt_counts(&own, &peers, &made);
    EXPECT(adopted_blocks == mapped, "%d of %d mapped blocks adopted", adopted_blocks, mapped);
    if (adopting) EXPECT(mapped >= 70, "only %d of 80 blocks were mappings of their own", mapped);
    EXPECT(peers <= 64, "%d peer mappings kept", peers);
    EXPECT(own <= 16, "%d adoptions kept", own);
    EXPECT(made >= (unsigned long)adopted_blocks, "%lu adoptions counted, %d blocks adopted", made,
           adopted_blocks);

    long total = 0;
    MPI_Reduce(&fails, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0) printf(total ? "%ld failures\n" : "ALL PASSED\n", total);
    MPI_Finalize();
    return total != 0;
}
