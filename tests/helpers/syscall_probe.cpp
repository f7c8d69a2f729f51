// A static test program for the seccomp suite: calls each system call the
// sandbox guard profile denies, with harmless arguments, and prints
// "name=0" or "name=ERRNO" per line. `syscall-probe tty` only pushes "echo
// INJECTED\n" into the terminal on fd 0 (TIOCSTI, also with bits above the
// 32 the kernel reads set) and asks it for TIOCLINUX, then prints whether
// this process leads its own session ("session=own" or "session=shared").
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

static void report(const char *name, long r) {
    std::printf("%s=%d\n", name, r < 0 ? errno : 0);
}

#define PROBE(name, ...) report(name, syscall(__VA_ARGS__))

static void push_input() {
    const char text[] = "echo INJECTED\n";
    long first = 0, high = 0;
    for (const char *c = text; *c; c++) {
        long r = syscall(SYS_ioctl, 0L, static_cast<long>(TIOCSTI), c);
        if (r < 0 && !first) first = errno;
        r = syscall(SYS_ioctl, 0L, static_cast<long>((1UL << 32) | TIOCSTI), c);
        if (r < 0 && !high) high = errno;
    }
    std::printf("tiocsti=%ld\ntiocsti_high=%ld\n", first, high);
    char sub = 2; // TIOCL_SETSEL's neighbour: any subcode reaches the check
    report("tioclinux", syscall(SYS_ioctl, 0L, static_cast<long>(TIOCLINUX), &sub));
}

int main(int argc, char **argv) {
    if (argc > 1 && argv[1][0] == 't') {
        push_input();
        std::printf("session=%s\n", getsid(0) == getpid() ? "own" : "shared");
        return 0;
    }
    PROBE("mount", SYS_mount, "none", "/tmp", "tmpfs", 0L, "");
    PROBE("umount2", SYS_umount2, "/tmp", 0L);
    PROBE("pivot_root", SYS_pivot_root, "/nonexistent", "/nonexistent");
    PROBE("move_mount", SYS_move_mount, -1L, "", -1L, "", 0L);
    PROBE("open_tree", SYS_open_tree, -1L, "/nonexistent", 0L);
    PROBE("fsopen", SYS_fsopen, "nonexistentfs", 0L);
    PROBE("fsmount", SYS_fsmount, -1L, 0L, 0L);
    PROBE("fsconfig", SYS_fsconfig, -1L, 0L, 0L, 0L, 0L);
    PROBE("mount_setattr", SYS_mount_setattr, -1L, "", 0L, 0L, 0L);
    PROBE("unshare", SYS_unshare, static_cast<long>(CLONE_NEWUTS));
    PROBE("setns", SYS_setns, -1L, 0L);
    PROBE("bpf", SYS_bpf, 0L, 0L, 0L);
    PROBE("ptrace", SYS_ptrace, 2L /* PEEKDATA */, 999999L, 0L, 0L);
    PROBE("process_vm_readv", SYS_process_vm_readv, 999999L, 0L, 0L, 0L, 0L, 0L);
    PROBE("process_vm_writev", SYS_process_vm_writev, 999999L, 0L, 0L, 0L, 0L, 0L);
    PROBE("keyctl", SYS_keyctl, 0L /* GET_KEYRING_ID */, -3L, 0L);
    PROBE("add_key", SYS_add_key, "user", "probe", "x", 1L, -2L /* process keyring */);
    PROBE("request_key", SYS_request_key, "user", "no-such-key", 0L, 0L);
    PROBE("userfaultfd", SYS_userfaultfd, 0L);
    PROBE("perf_event_open", SYS_perf_event_open, 0L, 0L, -1L, -1L, 0L);
    PROBE("open_by_handle_at", SYS_open_by_handle_at, -1L, 0L, 0L);
    PROBE("name_to_handle_at", SYS_name_to_handle_at, static_cast<long>(AT_FDCWD), "/", 0L, 0L, 0L);
    PROBE("kexec_load", SYS_kexec_load, 0L, 0L, 0L, 0L);
    PROBE("kexec_file_load", SYS_kexec_file_load, -1L, -1L, 0L, "", 0L);
    PROBE("init_module", SYS_init_module, 0L, 0L, "");
    PROBE("finit_module", SYS_finit_module, -1L, "", 0L);
    PROBE("delete_module", SYS_delete_module, "no_such_module", 0L);
    PROBE("io_uring_setup", SYS_io_uring_setup, 0L, 0L);
    PROBE("io_uring_enter", SYS_io_uring_enter, -1L, 0L, 0L, 0L, 0L, 0L);
    PROBE("io_uring_register", SYS_io_uring_register, -1L, 0L, 0L, 0L);
    PROBE("personality", SYS_personality, 0x0040000L /* ADDR_NO_RANDOMIZE */);
    PROBE("clone3", SYS_clone3, 0L, 0L);
    PROBE("ioctl_tiocsti", SYS_ioctl, 0L, static_cast<long>(TIOCSTI), "x");
    PROBE("ioctl_tiocsti_high", SYS_ioctl, 0L, static_cast<long>((1UL << 32) | TIOCSTI), "x");
    char sub = 2;
    PROBE("ioctl_tioclinux", SYS_ioctl, 0L, static_cast<long>(TIOCLINUX), &sub);
    long pid = syscall(SYS_clone, static_cast<long>(CLONE_NEWUTS | SIGCHLD), 0L, 0L, 0L, 0L);
    if (pid == 0) _exit(0);
    report("clone_newuts", pid);
    if (pid > 0) waitpid(static_cast<pid_t>(pid), nullptr, 0);
    return 0;
}
