#include "confine.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ocirun::shim {

namespace {

std::string failed(const std::string &what, int err) {
    return what + ": " + std::strerror(err);
}

// This thread's bounding set emptied, where it may be (CAP_SETPCAP; an
// unprivileged helper has no capability to lose), and its capabilities cut
// to `keep`. Capabilities and the bounding set are per thread.
int drop_thread_capabilities(uint64_t keep) {
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct d[2] = {};
    if (::syscall(SYS_capget, &h, d) < 0) return errno;
    if (d[0].effective & (1u << CAP_SETPCAP))
        for (int c = 0; c <= CAP_LAST_CAP; c++)
            // EINVAL past the kernel's last capability (this build's
            // headers may know more than the kernel does).
            if (::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 &&
                !(errno == EINVAL && ::prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0))
                return errno;
    d[0] = d[1] = {};
    d[0].effective = d[0].permitted = static_cast<uint32_t>(keep);
    d[1].effective = d[1].permitted = static_cast<uint32_t>(keep >> 32);
    return ::syscall(SYS_capset, &h, d) < 0 ? errno : 0;
}

// The uid and gid change keeps CAP_SETUID and CAP_SETGID to the end, in
// every thread: glibc makes each thread do the call and aborts the process
// when one of them fails. The change clears them with the rest.
constexpr uint64_t kSetIds = (1ull << CAP_SETUID) | (1ull << CAP_SETGID);

// Requests to the SocketMaker's thread, one byte each; else the byte is an
// address family. The answer is an int: the socket, 0, or -errno.
constexpr char kDropToSetIds = 'B', kDropAll = 'C';

struct MakerStart {
    int netns_fd, sock;
};

void *maker_thread(void *arg) {
    auto *start = static_cast<MakerStart *>(arg);
    int sock = start->sock;
    int r = ::setns(start->netns_fd, CLONE_NEWNET) < 0 ? -errno : 0;
    (void)!::write(sock, &r, sizeof r);
    if (r < 0) return nullptr;
    for (;;) {
        unsigned char req;
        ssize_t n = ::read(sock, &req, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return nullptr; // the helper's end closed
        if (req == kDropToSetIds || req == kDropAll) {
            int err = drop_thread_capabilities(req == kDropAll ? 0 : kSetIds);
            r = -err;
        } else {
            r = ::socket(req, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (r < 0) r = -errno;
        }
        (void)!::write(sock, &r, sizeof r);
    }
}

// The maker's answer to `req`: >= 0, or -1 with errno.
int ask(int fd, unsigned char req) {
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    ssize_t n;
    do
        n = ::write(fd, &req, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) return -1;
    int r = 0;
    do
        n = ::read(fd, &r, sizeof r);
    while (n < 0 && errno == EINTR);
    if (n != sizeof r) {
        if (n >= 0) errno = EPIPE;
        return -1;
    }
    if (r < 0) {
        errno = -r;
        return -1;
    }
    return r;
}

// The uid and gid change, for every thread (glibc). EINVAL: nobody has no
// mapping in the user namespace the helper runs in (an unprivileged
// user's), where uid 0 is not the host's root: it stays as it is.
std::string become_nobody() {
    if (::setgroups(0, nullptr) < 0) {
        // In a user namespace whose setgroups is "deny" (an unprivileged
        // user's), the groups cannot change and were not the host's root's.
        char buf[8] = {};
        int fd = ::open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
        bool deny =
            fd >= 0 && ::read(fd, buf, sizeof buf - 1) > 0 && std::strncmp(buf, "deny", 4) == 0;
        if (fd >= 0) ::close(fd);
        if (errno != EPERM || !deny) return failed("setgroups to none", errno);
    }
    if (::setresgid(kHelperGid, kHelperGid, kHelperGid) < 0 && errno != EINVAL)
        return failed("setresgid " + std::to_string(kHelperGid), errno);
    if (::setresuid(kHelperUid, kHelperUid, kHelperUid) < 0 && errno != EINVAL)
        return failed("setresuid " + std::to_string(kHelperUid), errno);
    return "";
}

// The allow-list. Everything not named fails with EPERM; clone3 with
// ENOSYS, so that glibc makes its threads with clone, whose flags a filter
// can read.
std::string load_filter() {
    scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx) return "seccomp_init failed";
    int rc = ::seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
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
    // Signals to itself only (abort), limits read, not set.
    allow(SCMP_SYS(tgkill), {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(::getpid()))});
    allow(SCMP_SYS(prlimit64), {SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A2(SCMP_CMP_EQ, 0)});
    if (rc == 0) rc = ::seccomp_load(ctx);
    ::seccomp_release(ctx);
    return rc < 0 ? failed("seccomp allow-list", -rc) : "";
}

} // namespace

SocketMaker::~SocketMaker() {
    if (fd_ >= 0) ::close(fd_); // the thread sees EOF and ends
}

std::string SocketMaker::start(int netns_fd) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return failed("socketpair", errno);
    fd_ = sv[0];
    static MakerStart start; // read by the thread while it starts
    start = {netns_fd, sv[1]};
    pthread_t t;
    int e = ::pthread_create(&t, nullptr, maker_thread, &start);
    if (e != 0) return failed("pthread_create", e);
    ::pthread_detach(t);
    int r = 0;
    if (::read(fd_, &r, sizeof r) != sizeof r) return failed("its thread", errno);
    if (r < 0) return failed("setns into the container's network namespace", -r);
    return "";
}

int SocketMaker::make(int family) {
    return ask(fd_, static_cast<unsigned char>(family));
}

int SocketMaker::drop_capabilities(bool keep_set_ids) {
    return ask(fd_, keep_set_ids ? kDropToSetIds : kDropAll) < 0 ? errno : 0;
}

std::string confine(SocketMaker *maker) {
    bool root = ::geteuid() == 0;
    if (int e = drop_thread_capabilities(root ? kSetIds : 0)) return failed("capabilities", e);
    if (int e = maker ? maker->drop_capabilities(true) : 0)
        return failed("capabilities of the socket thread", e);
    if (root)
        if (std::string err = become_nobody(); !err.empty()) return err;
    // Where the ids did not change (above), what the change would have
    // cleared.
    if (int e = drop_thread_capabilities(0)) return failed("capabilities", e);
    if (int e = maker ? maker->drop_capabilities(false) : 0)
        return failed("capabilities of the socket thread", e);
    // A change of ids sets "dumpable" back to the system's default.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) return failed("prctl PR_SET_DUMPABLE 0", errno);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return failed("no_new_privs", errno);
    return load_filter();
}

#ifdef OCI_RUN_FAULT_INJECTION
void probe_confinement() {
    const char *want = std::getenv("OCI_RUN_SHIM_PROBE");
    if (!want || std::strcmp(want, "1") != 0) return;
    std::string out = "probe";
    auto said = [&](const char *what, long r) {
        const char *name = r >= 0 ? "allowed" : ::strerrorname_np(errno);
        out += std::string(" ") + what + "=" + (name ? name : "?");
    };
    // Opened for writing, never written: nothing changes if one succeeds.
    long r = ::open("/etc/passwd", O_WRONLY | O_APPEND | O_CLOEXEC);
    said("open-write", r);
    if (r >= 0) ::close(static_cast<int>(r));
    r = ::open("/proc/sys/kernel/core_pattern", O_WRONLY | O_CLOEXEC);
    said("open-sysctl", r);
    if (r >= 0) ::close(static_cast<int>(r));
    r = ::kill(::getpid(), 0);
    said("kill", r);
    r = ::unshare(CLONE_NEWUSER);
    said("unshare-user", r);
    void *m = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    said("mmap-exec", m == MAP_FAILED ? -1 : 0);
    r = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    said("socket-unix", r);
    if (r >= 0) ::close(static_cast<int>(r));
    r = ::setuid(0);
    said("setuid-0", r);
    char *argv[] = {const_cast<char *>("/bin/true"), nullptr};
    r = ::execve("/bin/true", argv, environ);
    said("execve", r);
    std::fprintf(stderr, "oci-run-shim: %s\n", out.c_str());
}
#endif

} // namespace ocirun::shim
