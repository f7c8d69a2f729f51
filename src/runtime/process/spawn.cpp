#include "runtime/process/spawn.hpp"

#include "oci/fd.hpp"
#include "runtime/process/process_setup.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char **environ;

namespace ocirun {

namespace {

// What the child says on the report pipe: "P<pid>\n" (a detached spawn's
// grandchild, from its parent) and "E<errno> <step>\n" (a step that failed).
[[noreturn]] void child_fails(int report, const std::string &step) {
    int e = errno;
    std::string line = "E" + std::to_string(e) + " " + step + "\n";
    (void)!::write(report, line.data(), line.size());
    ::_exit(127);
}

// Into cgroup directory `dir`: through its tasks file where it has one (v1),
// else cgroup.procs.
void enter(const std::string &dir, int report) {
    std::string file = dir + "/tasks";
    int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        file = dir + "/cgroup.procs";
        fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    }
    if (fd < 0 || ::write(fd, "0", 1) != 1) child_fails(report, "enter the cgroup " + file);
    ::close(fd);
}

// In the child (`born`: in s.born_in): never returns.
[[noreturn]] void become(const SpawnSpec &s, int report, bool born) {
    if (!s.born_in.empty() && !born) enter(s.born_in, report);
    for (const auto &dir : s.cgroups)
        enter(dir, report);
    // Every source out of the way of the targets first (just above them: a
    // fixed floor would fail under a low RLIMIT_NOFILE), then into place.
    const int first_free = static_cast<int>(3 + s.pass.size());
    auto lift = [&](int fd) {
        if (fd < 0) return -1;
        int up = ::fcntl(fd, F_DUPFD_CLOEXEC, first_free);
        if (up < 0) child_fails(report, "move fd " + std::to_string(fd));
        return up;
    };
    report = lift(report);
    int in = lift(s.in), out = lift(s.out), err = lift(s.err);
    std::vector<int> pass;
    for (int fd : s.pass)
        pass.push_back(lift(fd));
    if (in < 0 || out < 0 || err < 0) {
        int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0) child_fails(report, "open /dev/null");
        int up = lift(null);
        ::close(null);
        if (in < 0) in = up;
        if (out < 0) out = up;
        if (err < 0) err = up;
    }
    int targets = 0;
    for (int fd : {in, out, err})
        if (::dup2(fd, targets++) < 0) child_fails(report, "dup2 stdio");
    for (size_t i = 0; i < pass.size(); i++)
        if (::dup2(pass[i], static_cast<int>(3 + i)) < 0)
            child_fails(report, "dup2 fd " + std::to_string(3 + i));
    // Nothing else of the caller's reaches the program (the report pipe is
    // closed by the exec itself).
    if (::syscall(SYS_close_range, static_cast<unsigned>(first_free), ~0U, CLOSE_RANGE_CLOEXEC) < 0)
        child_fails(report, "close_range");
    if (!s.cwd.empty() && ::chdir(s.cwd.c_str()) < 0) child_fails(report, "chdir " + s.cwd);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
    if (s.as_nobody_with) {
        // An unprivileged user keeping one capability across the exec
        // (ambient): nothing else of root's reaches the program.
        const uint64_t keep = 1ull << s.as_nobody_with;
        if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) child_fails(report, "prctl PR_SET_KEEPCAPS");
        if (::setgroups(0, nullptr) < 0) child_fails(report, "setgroups");
        if (::setresgid(kNobody, kNobody, kNobody) < 0) child_fails(report, "setresgid nobody");
        if (::setresuid(kNobody, kNobody, kNobody) < 0) child_fails(report, "setresuid nobody");
        __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2] = {
            {static_cast<uint32_t>(keep), static_cast<uint32_t>(keep), static_cast<uint32_t>(keep)},
            {static_cast<uint32_t>(keep >> 32), static_cast<uint32_t>(keep >> 32),
             static_cast<uint32_t>(keep >> 32)}};
        if (::syscall(SYS_capset, &hdr, data) < 0) child_fails(report, "capset");
        if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, s.as_nobody_with, 0, 0) < 0)
            child_fails(report, "raise an ambient capability");
    }
    if (s.max_file_size > 0) {
        // Writes past it fail (EFBIG) instead of killing the program.
        struct rlimit lim = {static_cast<rlim_t>(s.max_file_size),
                             static_cast<rlim_t>(s.max_file_size)};
        if (::setrlimit(RLIMIT_FSIZE, &lim) < 0) child_fails(report, "setrlimit RLIMIT_FSIZE");
        ::signal(SIGXFSZ, SIG_IGN);
    }
    std::vector<std::string> args = s.args.empty() ? std::vector<std::string>{s.path} : s.args;
    std::vector<char *> argv = exec_strings(args);
    std::vector<char *> envp = s.env ? exec_strings(*s.env) : std::vector<char *>{};
    char **env = s.env ? envp.data() : environ;
    if (s.search && s.path.find('/') == std::string::npos)
        ::execvpe(s.path.c_str(), argv.data(), env);
    else
        ::execve(s.path.c_str(), argv.data(), env);
    child_fails(report, "exec " + s.path);
}

} // namespace

long clone_into_cgroup(unsigned long flags, int cgroup_fd, bool &born_in) {
    born_in = false;
    if (cgroup_fd >= 0) {
        struct clone_args args {};
        args.flags = flags | CLONE_INTO_CGROUP;
        args.exit_signal = SIGCHLD;
        args.cgroup = static_cast<uint64_t>(cgroup_fd);
        long pid = ::syscall(SYS_clone3, &args, sizeof args);
        born_in = pid >= 0;
        if (pid >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EINVAL && errno != EAGAIN))
            return pid;
    }
    return ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
}

Result<pid_t> spawn_program(const SpawnSpec &s, const std::string &what) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail_errno(what + ": pipe");
    Fd report_r(p[0]), report_w(p[1]);
    Fd born_in;
    if (!s.born_in.empty()) {
        born_in.reset(::open(s.born_in.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!born_in.valid()) return fail_errno(what + ": open " + s.born_in);
    }
    bool born = false;
    pid_t child = static_cast<pid_t>(clone_into_cgroup(0, s.detach ? -1 : born_in.get(), born));
    if (child < 0) return fail_errno(what + ": fork");
    if (child == 0) {
        report_r.release();
        if (s.detach) {
            if (::setsid() < 0) child_fails(report_w.get(), "setsid");
            pid_t grandchild = static_cast<pid_t>(clone_into_cgroup(0, born_in.get(), born));
            if (grandchild < 0) child_fails(report_w.get(), "fork");
            if (grandchild > 0) {
                std::string line = "P" + std::to_string(grandchild) + "\n";
                (void)!::write(report_w.get(), line.data(), line.size());
                ::_exit(0);
            }
        }
        born_in.reset();
        become(s, report_w.get(), born);
    }
    report_w.reset();
    // EOF once every writer is gone: the exec closed the child's end.
    std::string said;
    char buf[512];
    for (;;) {
        ssize_t n = ::read(report_r.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        said.append(buf, static_cast<size_t>(n));
    }
    pid_t pid = child;
    if (s.detach) {
        int status = 0;
        while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
        pid = 0;
        if (size_t at = said.find('P'); at != std::string::npos)
            pid = static_cast<pid_t>(std::atol(said.c_str() + at + 1));
    }
    if (size_t at = said.find('E'); at != std::string::npos) {
        char *end = nullptr;
        long code = std::strtol(said.c_str() + at + 1, &end, 10);
        std::string step = *end == ' ' ? end + 1 : "";
        step = step.substr(0, step.find('\n'));
        if (!s.detach) {
            int status = 0;
            while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
            }
        }
        return fail_code(static_cast<int>(code), what + ": " + step);
    }
    if (pid <= 0) return fail(what + ": the program's parent exited without its PID");
    return pid;
}

} // namespace ocirun
