// A static test program for the seccomp suite: calls each system call the
// sandbox guard profile denies, with harmless arguments, and prints
// "name=0" or "name=ERRNO" per line. `syscall-probe tty` only pushes "echo
// INJECTED\n" into the terminal on fd 0 (TIOCSTI, also with bits above the
// 32 the kernel reads set) and asks it for TIOCLINUX, then prints whether
// this process leads its own session ("session=own" or "session=shared").
// `syscall-probe sockets` makes a socket of each family (and a vsock one
// bound and listening, socketpairs, the i386 entry points on x86-64) and
// prints "NAME=0" or "NAME=ERRNO" per line. `syscall-probe nr N...` calls
// system call N with zero arguments (`nr32`: the i386 one, on x86-64) and
// prints "N=ERRNO" (0 when it succeeded). Where the machine has no i386
// entry point (int $0x80 faults: a kernel without IA32 emulation, or a
// hypervisor that does not pass it on), each i386 call prints "NAME=fault"
// and the probe goes on. `syscall-probe nestproc DIR`
// makes a user, mount and PID namespace of its own (root mapped to its
// uid) and tries to mount a fresh procfs on DIR there, printing
// "nestproc=ERRNO" (the kernel allows it only where a procfs is fully
// visible in the mount namespace).
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/vm_sockets.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <string>

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

// socket(family, type, protocol) through syscall(2): the fd is closed again.
static void try_socket(const char *name, long family, long type, long protocol) {
    long fd = syscall(SYS_socket, family, type, protocol);
    report(name, fd);
    if (fd >= 0) close(static_cast<int>(fd));
}

#if defined(__x86_64__)
static sigjmp_buf i386_fault;

static void on_i386_fault(int) {
    siglongjmp(i386_fault, 1);
}

// kI386Fault: the machine has no i386 entry point (int $0x80 faulted).
constexpr long kI386Fault = -100000;

// An i386 system call from this x86-64 process (int $0x80): 32-bit arguments.
static long call_i386(long nr, long a, long b, long c) {
    struct sigaction sa{}, old{};
    sa.sa_handler = on_i386_fault;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old);
    long ret = kI386Fault;
    if (sigsetjmp(i386_fault, 1) == 0)
        asm volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
    sigaction(SIGSEGV, &old, nullptr);
    return ret;
}

// "NAME=ERRNO" for an i386 call's result (0 when it succeeded), or
// "NAME=fault".
static void report_i386(const char *name, long r) {
    if (r == kI386Fault)
        std::printf("%s=fault\n", name);
    else
        std::printf("%s=%ld\n", name, r < 0 && r > -4096 ? -r : 0);
}
#endif

static void probe_sockets() {
    try_socket("unix", AF_UNIX, SOCK_STREAM, 0);
    try_socket("inet", AF_INET, SOCK_STREAM, 0);
    try_socket("inet6", AF_INET6, SOCK_DGRAM, 0);
    try_socket("netlink_route", AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
    try_socket("netlink_audit", AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
    try_socket("netlink_uevent", AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT);
    try_socket("packet", AF_PACKET, SOCK_DGRAM, 0);
    try_socket("key", AF_KEY, SOCK_RAW, 2 /* PF_KEY_V2 */);
    try_socket("bluetooth", AF_BLUETOOTH, SOCK_RAW, 0);
    try_socket("alg", AF_ALG, SOCK_SEQPACKET, 0);
    try_socket("tipc", AF_TIPC, SOCK_RDM, 0);
    try_socket("xdp", AF_XDP, SOCK_RAW, 0);
    try_socket("unspec", AF_UNSPEC, SOCK_STREAM, 0);
    try_socket("unix_high_bits", (1L << 32) | AF_UNIX, SOCK_STREAM, 0);
    try_socket("vsock_high_bits", (1L << 32) | AF_VSOCK, SOCK_STREAM, 0);
    long v = syscall(SYS_socket, static_cast<long>(AF_VSOCK), static_cast<long>(SOCK_STREAM), 0L);
    report("vsock", v);
    if (v >= 0) {
        sockaddr_vm a{};
        a.svm_family = AF_VSOCK;
        a.svm_cid = VMADDR_CID_ANY;
        a.svm_port = 5749;
        report("vsock_bind", syscall(SYS_bind, v, &a, static_cast<long>(sizeof a)));
        report("vsock_listen", syscall(SYS_listen, v, 4L));
        close(static_cast<int>(v));
    }
    int sv[2];
    long r =
        syscall(SYS_socketpair, static_cast<long>(AF_UNIX), static_cast<long>(SOCK_STREAM), 0L, sv);
    report("socketpair_unix", r);
    r = syscall(SYS_socketpair, static_cast<long>(AF_TIPC), static_cast<long>(SOCK_RDM), 0L, sv);
    report("socketpair_tipc", r);
#if defined(__x86_64__)
    // socketcall(2)'s arguments sit in memory below 4 GiB.
    void *low =
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED) return;
    auto *args = static_cast<unsigned int *>(low);
    auto socketcall = [&](const char *name, unsigned call, unsigned family, unsigned type) {
        args[0] = family;
        args[1] = type;
        args[2] = 0;
        args[3] = static_cast<unsigned>(reinterpret_cast<unsigned long>(args + 8));
        long fd = call_i386(102 /* socketcall */, call, reinterpret_cast<long>(args), 0);
        report_i386(name, fd);
        if (fd >= 0 && call == 1) close(static_cast<int>(fd));
    };
    socketcall("i386_socketcall_vsock", 1 /* SYS_SOCKET */, AF_VSOCK, SOCK_STREAM);
    socketcall("i386_socketcall_unix", 1, AF_UNIX, SOCK_STREAM);
    socketcall("i386_socketcall_pair_unix", 8 /* SYS_SOCKETPAIR */, AF_UNIX, SOCK_STREAM);
    long fd = call_i386(359 /* socket */, AF_VSOCK, SOCK_STREAM, 0);
    report_i386("i386_socket_vsock", fd);
    if (fd >= 0) close(static_cast<int>(fd));
    fd = call_i386(359, AF_UNIX, SOCK_STREAM, 0);
    report_i386("i386_socket_unix", fd);
    if (fd >= 0) close(static_cast<int>(fd));
#endif
}

static void probe_numbers(bool i386, int argc, char **argv) {
    for (int i = 2; i < argc; i++) {
        long nr = std::strtol(argv[i], nullptr, 10);
        if (i386) {
#if defined(__x86_64__)
            report_i386(argv[i], call_i386(nr, 0, 0, 0));
#else
            std::printf("%ld=-1\n", nr);
#endif
            continue;
        }
        long r = syscall(nr, 0L, 0L, 0L, 0L, 0L, 0L);
        std::printf("%ld=%d\n", nr, r < 0 ? errno : 0);
    }
}

static bool write_all(const char *path, const std::string &text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
    return ok;
}

static int nested_proc(const char *dir) {
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER) < 0) return std::printf("nestproc_userns=%d\n", errno), 0;
    if (!write_all("/proc/self/setgroups", "deny"))
        return std::printf("nestproc_setgroups=%d\n", errno), 0;
    if (!write_all("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1"))
        return std::printf("nestproc_uid_map=%d\n", errno), 0;
    if (!write_all("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1"))
        return std::printf("nestproc_gid_map=%d\n", errno), 0;
    if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0)
        return std::printf("nestproc_unshare=%d\n", errno), 0;
    pid_t child = fork();
    if (child == 0) {
        int r = mount("proc", dir, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
        std::printf("nestproc=%d\n", r < 0 ? errno : 0);
        std::fflush(stdout);
        _exit(0);
    }
    if (child > 0) waitpid(child, nullptr, 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && std::string(argv[1]) == "nestproc") return nested_proc(argv[2]);
    if (argc > 1 && argv[1][0] == 'n') {
        probe_numbers(argv[1][2] == '3', argc, argv);
        return 0;
    }
    if (argc > 1 && argv[1][0] == 's') {
        probe_sockets();
        return 0;
    }
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
