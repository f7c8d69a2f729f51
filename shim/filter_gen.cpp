// oci-run-shim-filter-gen [--sanitized]: run at build time, prints
// helper_filter.h, the helper's seccomp allow-list (confine.hpp) as the BPF
// program libseccomp makes of it for this machine's architecture
// (--sanitized: with what a sanitizer build's runtime needs, below). The helper loads the
// program as it is: compiling it there took 350 us of every start.
#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <linux/filter.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

namespace {

// The allow-list. Everything not named fails with EPERM; clone3 with
// ENOSYS, so that glibc makes its threads with clone, whose flags a filter
// can read. Another architecture (i386 int 0x80, x32) kills the process.
int build(scmp_filter_ctx ctx, bool sanitized) {
    int rc = ::seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    // A binary tree of the system call numbers: every call the relays make
    // (splice, epoll_wait, ...) runs the filter on each of them, a few
    // comparisons instead of a walk down the list.
    if (rc == 0) rc = ::seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    auto allow = [&](int nr, std::initializer_list<scmp_arg_cmp> args = {}) {
        if (rc < 0) return;
        rc = ::seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, static_cast<unsigned>(args.size()),
                                      args.size() ? args.begin() : nullptr);
    };
    for (int nr :
         {// the loop, relays and connections
          SCMP_SYS(read), SCMP_SYS(readv), SCMP_SYS(pread64), SCMP_SYS(write), SCMP_SYS(writev),
          SCMP_SYS(close), SCMP_SYS(fcntl), SCMP_SYS(pipe2), SCMP_SYS(splice),
          SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait),
          SCMP_SYS(epoll_pwait2), SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(eventfd2),
          SCMP_SYS(timerfd_create), SCMP_SYS(timerfd_settime), SCMP_SYS(timerfd_gettime),
          SCMP_SYS(accept4), SCMP_SYS(accept), SCMP_SYS(connect), SCMP_SYS(bind),
          SCMP_SYS(shutdown), SCMP_SYS(setsockopt), SCMP_SYS(getsockopt), SCMP_SYS(getsockname),
          SCMP_SYS(getpeername), SCMP_SYS(sendto), SCMP_SYS(recvfrom), SCMP_SYS(sendmsg),
          SCMP_SYS(recvmsg), SCMP_SYS(sendmmsg), SCMP_SYS(recvmmsg),
          // files (the resolver's /etc/hosts, resolv.conf, nsswitch.conf)
          SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(lseek),
          // memory, threads, signals, time
          SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise), SCMP_SYS(futex),
          SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(sched_yield), SCMP_SYS(rt_sigaction),
          SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
          SCMP_SYS(restart_syscall), SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres),
          SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday),
          SCMP_SYS(getrandom), SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid),
          SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(uname),
          SCMP_SYS(getrlimit), SCMP_SYS(exit), SCMP_SYS(exit_group)})
        allow(nr);
    // Files read-only: no O_WRONLY, O_RDWR, O_CREAT or O_TRUNC.
    constexpr scmp_datum_t kWriting = O_ACCMODE | O_CREAT | O_TRUNC;
    allow(SCMP_SYS(openat), {SCMP_A2(SCMP_CMP_MASKED_EQ, kWriting, O_RDONLY)});
    allow(SCMP_SYS(open), {SCMP_A1(SCMP_CMP_MASKED_EQ, kWriting, O_RDONLY)});
    // No executable memory but a file's mapping: the libraries loaded
    // later (libidn2 on the first international name, glibc's NSS modules
    // from nsswitch.conf) load; code written into memory does not run.
    allow(SCMP_SYS(mmap), {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)});
    allow(SCMP_SYS(mmap), {SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, 0)});
    allow(SCMP_SYS(mprotect), {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)});
    // Threads only (the resolver's): the same memory, no new namespace, no
    // exit signal (a child process has one).
    constexpr scmp_datum_t kNamespaces = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                         CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP;
    constexpr scmp_datum_t kThread = CLONE_VM | CLONE_THREAD;
    allow(SCMP_SYS(clone), {SCMP_A0(SCMP_CMP_MASKED_EQ, kThread | kNamespaces | CSIGNAL, kThread)});
    if (rc == 0) rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    // Sockets of the internet families (the relays, the resolver's DNS) and
    // rtnetlink (glibc's getaddrinfo reads the host's addresses).
    allow(SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_EQ, AF_INET)});
    allow(SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_EQ, AF_INET6)});
    allow(SCMP_SYS(socket),
          {SCMP_A0(SCMP_CMP_EQ, AF_NETLINK), SCMP_A2(SCMP_CMP_EQ, NETLINK_ROUTE)});
    // ioctl: bytes waiting (the resolver), non-blocking, is-a-terminal.
    for (scmp_datum_t req : std::initializer_list<scmp_datum_t>{FIONREAD, FIONBIO, TCGETS})
        allow(SCMP_SYS(ioctl), {SCMP_A1(SCMP_CMP_EQ, req)});
    // Limits read, not set. No signal at all, not even to itself: abort()
    // still ends the process when raise() fails.
    allow(SCMP_SYS(prlimit64), {SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A2(SCMP_CMP_EQ, 0)});
    // A sanitizer build (the test suites' second run): the runtime writes
    // its report to a file it opens then (log_path), and LeakSanitizer's
    // check at exit stops the threads from a process it clones, which
    // ptraces them, reading /proc/self/task. Never in a product build.
    if (sanitized)
        for (int nr : {SCMP_SYS(openat), SCMP_SYS(open), SCMP_SYS(clone), SCMP_SYS(ptrace),
                       SCMP_SYS(wait4), SCMP_SYS(prctl), SCMP_SYS(getppid), SCMP_SYS(getdents),
                       SCMP_SYS(getdents64), SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(readlink)})
            allow(nr);
    return rc;
}

} // namespace

int main(int argc, char **argv) {
    bool sanitized = argc == 2 && std::strcmp(argv[1], "--sanitized") == 0;
    if (argc > 1 && !sanitized) {
        std::fprintf(stderr, "usage: oci-run-shim-filter-gen [--sanitized]\n");
        return 2;
    }
    scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx) {
        std::fprintf(stderr, "oci-run-shim-filter-gen: seccomp_init failed\n");
        return 1;
    }
    int rc = build(ctx, sanitized);
    FILE *bpf = std::tmpfile();
    if (rc == 0 && !bpf) rc = -errno;
    if (rc == 0) rc = ::seccomp_export_bpf(ctx, ::fileno(bpf));
    ::seccomp_release(ctx);
    if (rc < 0) {
        std::fprintf(stderr, "oci-run-shim-filter-gen: %s\n", std::strerror(-rc));
        return 1;
    }
    std::rewind(bpf);
    std::printf("// Made at build time by shim/filter_gen.cpp: the helper's seccomp\n"
                "// allow-list (shim/confine.hpp) as a BPF program.\n"
                "#pragma once\n#include <linux/filter.h>\n\n"
                "namespace ocirun::shim {\n\n"
                "inline constexpr sock_filter kHelperFilter[] = {\n");
    sock_filter f;
    size_t n = 0;
    while (std::fread(&f, sizeof f, 1, bpf) == 1) {
        std::printf("    {0x%04x, %u, %u, 0x%08x},\n", f.code, f.jt, f.jf, f.k);
        n++;
    }
    std::printf("};\n\n} // namespace ocirun::shim\n");
    if (n == 0 || std::ferror(bpf) || std::fflush(stdout) != 0) {
        std::fprintf(stderr, "oci-run-shim-filter-gen: no program\n");
        return 1;
    }
    return 0;
}
