#include "runtime/process/proc.hpp"

#include "oci/state.hpp"
#include "oci/text.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ocirun {

namespace {

// Read /proc/PID/stat and return the text after the command name's ')'.
// /proc/PID/stat, or `stat` below an open /proc/PID (dirfd >= 0).
bool read_stat(pid_t pid, char *buf, size_t size, const char **after, int dirfd = -1) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = dirfd >= 0 ? ::openat(dirfd, "stat", O_RDONLY | O_CLOEXEC)
                        : ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = ::read(fd, buf, size - 1);
    ::close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char *p = std::strrchr(buf, ')');
    if (!p || p[1] != ' ') return false;
    *after = p + 2; // field 3 (state) starts here
    return true;
}

int pidfd_open(pid_t pid) {
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

} // namespace

std::vector<NetDevice> net_devices(pid_t pid) {
    std::vector<NetDevice> out;
    auto text = oci::read_file("/proc/" + std::to_string(pid) + "/net/dev");
    if (!text) return out;
    for_each_line(*text, [&](std::string_view line) {
        auto colon = line.find(':');
        if (colon == std::string_view::npos) return; // the two header lines
        NetDevice d;
        d.name = line.substr(0, colon);
        d.name.erase(0, d.name.find_first_not_of(' '));
        if (d.name.empty()) return;
        auto fields = words(line.substr(colon + 1));
        for (size_t i = 0; i < fields.size() && i < std::size(d.counters); i++)
            d.counters[i] = number<uint64_t>(fields[i]).value_or(0);
        out.push_back(std::move(d));
    });
    return out;
}

Status write_proc_file(pid_t pid, const char *file, const std::string &value,
                       const std::string &what) {
    return write_existing_file("/proc/" + std::to_string(pid) + "/" + file, value, what);
}

Status write_existing_file(const std::string &path, const std::string &value,
                           const std::string &what, bool show_value) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return fail_errno(what + ": open " + path);
    ssize_t n = ::write(fd, value.data(), value.size());
    int e = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(value.size()))
        return fail_code(e, what + ": write " + (show_value ? "\"" + value + "\" to " : "") + path);
    return {};
}

// Numeric field `n` (from 4 on) of the /proc/PID/stat text whose field 3
// (the state) starts at `p`, or 0.
static uint64_t field_of(const char *p, int n) {
    for (int field = 3; field < n; field++) {
        p = std::strchr(p, ' ');
        if (!p) return 0;
        p++;
    }
    return std::strtoull(p, nullptr, 10);
}

// Numeric field `n` (from 4 on) of /proc/PID/stat, or 0 if the PID is gone.
// (dirfd: /proc/PID opened, or -1.)
static uint64_t stat_field(pid_t pid, int dirfd, int n) {
    char buf[1024];
    const char *p;
    if (pid <= 0 || !read_stat(pid, buf, sizeof buf, &p, dirfd)) return 0;
    return field_of(p, n);
}

static uint64_t start_time_of(pid_t pid, int dirfd) {
    return stat_field(pid, dirfd, 22);
}

bool forked_not_execed(pid_t pid, int dirfd) {
    constexpr uint64_t kForkNoExec = 0x40; // PF_FORKNOEXEC, the kernel's task flag
    return stat_field(pid, dirfd, 9) & kForkNoExec;
}

uint64_t process_start_time(pid_t pid) {
    return start_time_of(pid, -1);
}

Result<Fd> open_process_dir(pid_t pid, uint64_t start_time) {
    std::string path = "/proc/" + std::to_string(pid);
    if (pid <= 0) return fail_code(ESRCH, "process " + std::to_string(pid) + " is gone");
    Fd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid()) {
        if (errno == ENOENT) return fail_code(ESRCH, "process " + std::to_string(pid) + " is gone");
        return fail_errno("open " + path);
    }
    if (start_time_of(pid, dir.get()) != start_time)
        return fail_code(ESRCH, "process " + std::to_string(pid) + " is gone");
    return dir;
}

char process_state(pid_t pid) {
    char buf[1024];
    const char *p;
    if (pid <= 0 || !read_stat(pid, buf, sizeof buf, &p)) return 0;
    return *p;
}

bool process_alive(pid_t pid, uint64_t start_time) {
    constexpr uint64_t kExiting = 0x4; // PF_EXITING, the kernel's task flag
    char buf[1024];
    const char *p;
    if (pid <= 0 || !read_stat(pid, buf, sizeof buf, &p)) return false;
    // PID 1 of a namespace waits in its exit, not yet a zombie, until every
    // process of its namespace is reaped: it has stopped all the same.
    if (*p == 'Z' || *p == 'X' || (field_of(p, 9) & kExiting)) return false;
    return field_of(p, 22) == start_time;
}

Status signal_process(pid_t pid, uint64_t start_time, int sig) {
    int fd = pidfd_open(pid);
    if (fd < 0) {
        if (errno == ESRCH) return fail_code(ESRCH, "process " + std::to_string(pid) + " is gone");
        return fail_errno("pidfd_open " + std::to_string(pid));
    }
    // With the pidfd held, the PID cannot be recycled under us: check identity now.
    if (process_start_time(pid) != start_time) {
        ::close(fd);
        return fail_code(ESRCH, "process " + std::to_string(pid) + " is gone");
    }
    long rc = ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0);
    int e = errno;
    ::close(fd);
    if (rc < 0) return fail_code(e, "signal process " + std::to_string(pid));
    return {};
}

bool wait_process_gone(pid_t pid, int timeout_ms) {
    int fd = pidfd_open(pid);
    if (fd < 0) return errno == ESRCH;
    struct pollfd p = {fd, POLLIN, 0};
    int rc;
    while ((rc = ::poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
    }
    ::close(fd);
    if (rc > 0) return true;
    // A zombie whose parent has not reaped it also counts as gone.
    char st = process_state(pid);
    return st == 0 || st == 'Z';
}

void kill_and_reap(pid_t pid) {
    ::kill(pid, SIGKILL);
    int st;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
}

Result<int> wait_exit_status(pid_t pid) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return fail_errno("wait for process " + std::to_string(pid));
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

namespace {
volatile sig_atomic_t g_forward_pid = 0;
void forward_signal(int sig) {
    if (g_forward_pid > 0) ::kill(g_forward_pid, sig);
}
} // namespace

void forward_signals_to(pid_t pid) {
    bool install = g_forward_pid == 0 && pid > 0;
    g_forward_pid = pid;
    if (!install) return;
    struct sigaction sa {};
    sa.sa_handler = forward_signal;
    sa.sa_flags = SA_RESTART;
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH})
        ::sigaction(s, &sa, nullptr);
}

std::optional<bool> same_namespace(pid_t pid, const char *name) {
    char theirs_path[64], ours_path[64];
    std::snprintf(theirs_path, sizeof theirs_path, "/proc/%d/ns/%s", pid, name);
    std::snprintf(ours_path, sizeof ours_path, "/proc/self/ns/%s", name);
    struct stat theirs, ours;
    if (::stat(theirs_path, &theirs) < 0 || ::stat(ours_path, &ours) < 0) return std::nullopt;
    return theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev;
}

std::string status_field(const std::string &status, const std::string &key) {
    std::string found;
    for_each_line(status, [&](std::string_view line) {
        if (found.empty() && line.starts_with(key + ":")) {
            std::string_view v = line.substr(key.size() + 1);
            size_t a = v.find_first_not_of(" \t");
            if (a != std::string_view::npos) found = v.substr(a);
        }
    });
    return found;
}

bool has_own_pid_namespace(pid_t init) {
    if (same_namespace(init, "pid") != false) return false;
    // Its PID 1 (the last NSpid field): a namespace it joined by path is
    // another container's (a pod's), whose processes are not this one's.
    auto status = oci::read_file("/proc/" + std::to_string(init) + "/status", 0, 1 << 16);
    if (!status) return false;
    std::string nspid = status_field(*status, "NSpid");
    size_t last = nspid.find_last_of(" \t");
    return nspid.substr(last == std::string::npos ? 0 : last + 1) == "1";
}

void signal_pidns_members(pid_t init, uint64_t start_time, int sig) {
    // SIGKILL to PID 1 of a namespace kills every process in it (the
    // kernel's, as PID 1 exits): no scan of every process on the host.
    if (sig == SIGKILL || !has_own_pid_namespace(init)) return;
    char buf[64], target[128];
    std::snprintf(buf, sizeof buf, "/proc/%d/ns/pid", init);
    ssize_t n = ::readlink(buf, target, sizeof target - 1);
    // The namespace read is the init's only if the init still runs now.
    if (n <= 0 || !process_alive(init, start_time)) return;
    target[n] = '\0';
    DIR *d = ::opendir("/proc");
    if (!d) return;
    while (struct dirent *e = ::readdir(d)) {
        char *end;
        long pid = std::strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == init) continue;
        // Held by a pidfd first, then checked: the PID cannot be another
        // process's by the time the signal goes.
        int fd = pidfd_open(static_cast<pid_t>(pid));
        if (fd < 0) continue;
        char p[64], t[128];
        std::snprintf(p, sizeof p, "/proc/%ld/ns/pid", pid);
        ssize_t m = ::readlink(p, t, sizeof t - 1);
        if (m > 0) {
            t[m] = '\0';
            if (std::strcmp(t, target) == 0)
                (void)::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0);
        }
        ::close(fd);
    }
    ::closedir(d);
}

Status write_pid_file(const std::string &path, pid_t pid) {
    if (path.empty()) return {};
    return oci::write_file_atomic(path, std::to_string(pid), 0644);
}

Result<Fd> open_namespace(pid_t pid, const char *name) {
    std::string path = "/proc/" + std::to_string(pid) + "/ns/" + name;
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return fail_errno("open " + path);
    return fd;
}

Status ChildPidNamespace::enter(int ns_fd) {
    own_ = OCI_TRY(open_namespace(::getpid(), "pid"));
    if (::setns(ns_fd, CLONE_NEWPID) < 0) return fail_errno("setns pid namespace");
    return {};
}

Status ChildPidNamespace::leave() {
    if (!own_.valid()) return {};
    if (::setns(own_.get(), CLONE_NEWPID) < 0)
        return fail_errno("setns back to the runtime's pid namespace");
    own_.reset();
    return {};
}

namespace {

std::string recorded_binary_path;

} // namespace

void set_own_binary_path(const std::string &path) {
    recorded_binary_path = path;
}

std::string own_binary_path() {
    if (!recorded_binary_path.empty()) return recorded_binary_path;
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0 || static_cast<size_t>(n) >= sizeof buf - 1) return "";
    return std::string(buf, static_cast<size_t>(n));
}

} // namespace ocirun
