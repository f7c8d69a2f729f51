// A static test program: `fail-syscall NAME ARG0 ERRNO PROGRAM [ARG...]`
// runs PROGRAM (a path) under a seccomp filter that makes the system call
// NAME fail with ERRNO whenever its first argument is ARG0 ("any": always),
// and lets every other call through. The bad-host suite uses it to show that
// a privileged call the runtime makes is checked: its failure ends the
// command with that errno, and nothing is left behind.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char **argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: fail-syscall NAME ARG0|any ERRNO PROGRAM [ARG...]\n");
        return 2;
    }
    struct {
        const char *name;
        long nr;
    } const known[] = {{"prctl", SYS_prctl},   {"close_range", SYS_close_range},
                       {"setsid", SYS_setsid}, {"capset", SYS_capset},
                       {"setns", SYS_setns},   {"mount_setattr", SYS_mount_setattr}};
    long nr = -1;
    for (const auto &k : known)
        if (std::strcmp(k.name, argv[1]) == 0) nr = k.nr;
    if (nr < 0) {
        std::fprintf(stderr, "fail-syscall: unknown system call %s\n", argv[1]);
        return 2;
    }
    bool any = std::strcmp(argv[2], "any") == 0;
    unsigned arg0 = any ? 0 : static_cast<unsigned>(std::strtoul(argv[2], nullptr, 0));
    unsigned err = static_cast<unsigned>(std::atoi(argv[3]));
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arg0, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    if (any) prog[6] = BPF_STMT(BPF_JMP | BPF_JA | BPF_K, 0);
    struct sock_fprog fprog = {static_cast<unsigned short>(sizeof prog / sizeof prog[0]), prog};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) < 0) {
        std::perror("fail-syscall: seccomp");
        return 2;
    }
    execv(argv[4], argv + 4);
    std::perror("fail-syscall: exec");
    return 127;
}
