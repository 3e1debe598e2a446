/* Tests on a node that refuses cross-memory attach: a seccomp filter makes this process's
 * process_vm_readv and process_vm_writev fail with EPERM, as a container's default profile
 * does, so the node region's probe (shm/cma.c) finds no CMA and every single copy has to do
 * without it. Installed after MPI_Init on every rank (the native MPI may have probed CMA for
 * itself: run Open MPI with btl_vader_single_copy_mechanism=none). Returns 0 on success. */
#ifndef MCOLL_TEST_NOCMA_H
#define MCOLL_TEST_NOCMA_H
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static inline int test_forbid_cma(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof *f), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}
#endif
