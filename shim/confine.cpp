#include "confine.hpp"

#include "helper_filter.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace ocirun::shim {

namespace {

std::string failed(const std::string &what, int err) {
    return what + ": " + std::strerror(err);
}

// Whether this user namespace's setgroups is "deny" (an unprivileged
// user's): the groups cannot change, and are not the host's root's.
bool setgroups_denied() {
    char buf[8] = {};
    int fd = ::open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
    bool deny = fd >= 0 && ::read(fd, buf, sizeof buf - 1) > 0 && std::strncmp(buf, "deny", 4) == 0;
    if (fd >= 0) ::close(fd);
    return deny;
}

// The calling thread's credentials, by raw system calls, which change this
// thread only (glibc's wrappers make every thread repeat each call, a
// signal and a wake-up each): its bounding set emptied where it may be
// (CAP_SETPCAP), then as root no groups and nobody (EINVAL: nobody has no
// mapping in the user namespace the helper runs in, an unprivileged
// user's, where uid 0 is not the host's root: the ids stay), then no
// capability. "" or what failed.
std::string confine_thread() {
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct d[2] = {};
    if (::syscall(SYS_capget, &h, d) < 0) return failed("capget", errno);
    if (d[0].effective & (1u << CAP_SETPCAP))
        for (int c = 0; c <= CAP_LAST_CAP; c++)
            // EINVAL past the kernel's last capability (this build's
            // headers may know more than the kernel does).
            if (::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 &&
                !(errno == EINVAL && ::prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0))
                return failed("drop capability " + std::to_string(c) + " from the bounding set",
                              errno);
    if (::geteuid() == 0) {
        if (::syscall(SYS_setgroups, 0, nullptr) < 0 && !(errno == EPERM && setgroups_denied()))
            return failed("setgroups to none", errno);
        if (::syscall(SYS_setresgid, kHelperGid, kHelperGid, kHelperGid) < 0 && errno != EINVAL)
            return failed("setresgid " + std::to_string(kHelperGid), errno);
        if (::syscall(SYS_setresuid, kHelperUid, kHelperUid, kHelperUid) < 0 && errno != EINVAL)
            return failed("setresuid " + std::to_string(kHelperUid), errno);
    }
    // A change of uid cleared them; where there was none, cleared here.
    d[0] = d[1] = {};
    if (::syscall(SYS_capset, &h, d) < 0) return failed("capset to none", errno);
    return "";
}

// Requests to the SocketMaker's thread: kConfine (the answer a text: "+",
// or "-" and what failed), or a number N of sockets to make (each answer
// an int: the socket or -errno).
constexpr unsigned char kConfine = 0;

// Sockets the thread makes ahead, asked for in batches once half are
// taken, so that a connection neither waits for the thread nor wakes it
// each time: asking for each took 90 us a connection on the 2-vCPU
// benchmark machine (a wake-up on the other CPU), and asking for the next
// one each time 28 us, against 40 us for all of a published connection
// made from the helper's own thread before.
constexpr int kMadeAhead = 16;

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
        if (req == kConfine) {
            std::string said = "+";
            if (std::string err = confine_thread(); !err.empty()) said = "-" + err;
            (void)!::write(sock, said.data(), said.size());
            continue;
        }
        for (int i = 0; i < req; i++) {
            r = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (r < 0) r = -errno;
            (void)!::write(sock, &r, sizeof r);
        }
    }
}

bool send_request(int fd, unsigned char req) {
    ssize_t n;
    do
        n = ::write(fd, &req, 1);
    while (n < 0 && errno == EINTR);
    return n == 1;
}

// The allow-list (filter_gen.cpp) for every thread, with no_new_privs.
std::string load_filter() {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return failed("no_new_privs", errno);
    sock_fprog prog{static_cast<unsigned short>(std::size(kHelperFilter)),
                    const_cast<sock_filter *>(kHelperFilter)};
    long r = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    if (r > 0) return "seccomp allow-list: thread " + std::to_string(r) + " could not be synced";
    return r < 0 ? failed("seccomp allow-list", errno) : "";
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

void SocketMaker::make_ahead() {
    if (send_request(fd_, kMadeAhead)) ahead_ = kMadeAhead;
}

int SocketMaker::take() {
    int r = 0;
    ssize_t n;
    do
        n = ::read(fd_, &r, sizeof r);
    while (n < 0 && errno == EINTR);
    if (n != sizeof r) {
        if (n >= 0) errno = EPIPE;
        return -1;
    }
    if (--ahead_ <= kMadeAhead / 2 && send_request(fd_, kMadeAhead - ahead_)) ahead_ = kMadeAhead;
    if (r < 0) {
        errno = -r;
        return -1;
    }
    return r;
}

bool SocketMaker::begin_confine() {
    return send_request(fd_, kConfine);
}

std::string SocketMaker::end_confine() {
    char buf[512];
    ssize_t n;
    do
        n = ::read(fd_, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return failed("no answer", n < 0 ? errno : EPIPE);
    if (buf[0] == '+') return "";
    return std::string(buf + 1, static_cast<size_t>(n - 1));
}

// Not dumpable, but in a sanitizer build: LeakSanitizer's tracer, nobody's
// process too, reads the helper's /proc/PID/task and ptraces it.
#ifdef OCI_RUN_SANITIZED
constexpr int kDumpable = 1;
#else
constexpr int kDumpable = 0;
#endif

std::string confine(SocketMaker *maker) {
    // Both threads at once (the socket thread's answer read after this
    // one's own).
    bool asked = maker && maker->begin_confine();
    if (maker && !asked) return failed("the socket thread", errno);
    std::string err = confine_thread();
    if (asked)
        if (std::string its = maker->end_confine(); err.empty() && !its.empty())
            err = "the socket thread: " + its;
    if (!err.empty()) return err;
    if (maker) maker->make_ahead();
    // A change of ids sets "dumpable" back to the system's default.
    if (::prctl(PR_SET_DUMPABLE, kDumpable, 0, 0, 0) < 0)
        return failed("prctl PR_SET_DUMPABLE " + std::to_string(kDumpable), errno);
    return load_filter();
}

#ifdef OCI_RUN_FAULT_INJECTION
void probe_confinement() {
    const char *want = std::getenv("OCI_RUN_SHIM_PROBE");
    if (!want || std::strcmp(want, "1") != 0) return;
#ifdef OCI_RUN_SANITIZED
    std::string out = "probe sanitized"; // filter_gen.cpp's --sanitized
#else
    std::string out = "probe";
#endif
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
