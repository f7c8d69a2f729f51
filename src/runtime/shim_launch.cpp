#include "shim_launch.hpp"

#include "build_config.h"
#include "fd.hpp"
#include "log.hpp"
#include "oci/state.hpp"
#include "proc.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

extern char **environ;

namespace ocirun {

namespace {

std::string publish_arg(const PortPublish &p) {
    std::string a = egress::to_string(p.host_addr);
    if (p.host_addr.family == AF_INET6) a = "[" + a + "]";
    return a + ":" + std::to_string(p.host_port) + ":" + std::to_string(p.container_port);
}

// In the grandchild: the passed fds at 3, 4, ... in order, nothing else open
// but stdio (to /dev/null and shim.log), then exec. Never returns.
[[noreturn]] void exec_shim(const std::string &path, std::vector<std::string> &args,
                            std::vector<int> pass, int ready_fd, const std::string &log,
                            const std::vector<std::string> &cgroups) {
    auto die = [&](const char *what) {
        std::string line = std::string("error ") + what + ": " + std::strerror(errno) + "\n";
        (void)!::write(ready_fd, line.data(), line.size());
        ::_exit(127);
    };
    for (const auto &dir : cgroups) {
        std::string procs = dir + "/cgroup.procs";
        int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0 || ::write(fd, "0", 1) != 1) die(("enter cgroup " + procs).c_str());
        ::close(fd);
    }
    // Out of the way of the targets first (just above them: a fixed floor
    // such as 100 fails under a lower RLIMIT_NOFILE), then into place.
    for (int &fd : pass) {
        fd = ::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(3 + pass.size()));
        if (fd < 0) die("dup");
    }
    ready_fd = pass[1];
    int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    int logfd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (null < 0 || logfd < 0) die("open /dev/null and shim.log");
    if (::dup2(null, 0) < 0 || ::dup2(null, 1) < 0 || ::dup2(logfd, 2) < 0) die("dup2 stdio");
    for (size_t i = 0; i < pass.size(); i++)
        if (::dup2(pass[i], static_cast<int>(3 + i)) < 0) die("dup2");
    ready_fd = 4;
    if (::syscall(SYS_close_range, 3 + pass.size(), ~0U, 0) < 0) die("close_range");
    std::vector<char *> argv;
    for (auto &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execve(path.c_str(), argv.data(), environ);
    die(("exec " + path).c_str());
    ::_exit(127);
}

} // namespace

std::string shim_path() {
    const char *env = std::getenv("OCI_RUN_SHIM");
    if (env && *env) return env;
    // Next to this binary: the same directory, the build tree (src/ and
    // shim/ side by side), or a prefix (bin/ or sbin/ beside libexec/).
    std::string self = own_binary_path();
    if (size_t slash = self.rfind('/'); slash != std::string::npos) {
        std::string dir = self.substr(0, slash + 1);
        for (const char *rel :
             {"oci-run-shim", "../shim/oci-run-shim", "../libexec/oci-run/oci-run-shim"})
            if (std::string p = dir + rel; ::access(p.c_str(), X_OK) == 0) return p;
    }
    return OCIRUN_SHIM_PATH;
}

Result<ShimProcess> spawn_shim(const ShimLaunch &l) {
    const NetworkPolicy &net = *l.net;
    std::string path = shim_path();
    Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, l.init, 0)));
    if (!pidfd.valid()) return fail_errno("network helper: pidfd_open of the init");
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) < 0) return fail_errno("network helper: pipe");
    Fd ready_r(ready[0]), ready_w(ready[1]);

    // fds 3, 4, ...: the init's pidfd, the ready pipe, the netns, the listeners.
    std::vector<int> pass = {pidfd.get(), ready_w.get()};
    std::vector<std::string> args = {
        "oci-run-shim", "--id", l.id, "--state-dir", l.state_dir, "--init-pidfd", "3",
        "--ready-fd",   "4"};
    if (!net.publish.empty()) {
        args.insert(args.end(), {"--netns-fd", std::to_string(3 + pass.size())});
        pass.push_back(l.netns_fd);
        for (const auto &p : net.publish)
            args.insert(args.end(), {"--publish", publish_arg(p)});
    }
    size_t i = 0;
    for (const auto &f : net.local_ports) {
        args.insert(args.end(), {"--forward", std::to_string(3 + pass.size()) + ":" +
                                                  std::to_string(f.host_port)});
        pass.push_back(l.listeners.at(i++));
    }
    if (net.proxy()) {
        args.insert(args.end(), {"--proxy", std::to_string(3 + pass.size())});
        pass.push_back(l.listeners.at(i++));
        if (!net.domains.empty()) args.insert(args.end(), {"--domains", net.domains});
        if (!net.deny_domains.empty())
            args.insert(args.end(), {"--deny-domains", net.deny_domains});
        if (net.observe) args.push_back("--observe");
        args.insert(args.end(), {"--max-connections", std::to_string(net.max_connections)});
    }

    args.insert(args.end(),
                {"--forward-max-connections", std::to_string(net.forward_max_connections),
                 "--total-max-connections", std::to_string(net.total_max_connections)});

    pid_t child = ::fork();
    if (child < 0) return fail_errno("network helper: fork");
    if (child == 0) {
        // Its own session, and its parent gone: no signal of the caller's
        // terminal or process group reaches it, and the runtime is not its
        // parent (a subreaper such as containerd's shim, or init, reaps it).
        if (::setsid() < 0) ::_exit(1);
        pid_t grandchild = ::fork();
        if (grandchild == 0)
            exec_shim(path, args, pass, ready_w.get(), l.state_dir + "/shim.log", l.cgroups);
        ::_exit(grandchild < 0 ? 1 : 0);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    ready_w.reset();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return fail("network helper: fork failed");

    // "ready PID" or "error TEXT", then EOF.
    std::string said;
    char buf[512];
    for (;;) {
        struct pollfd p = {ready_r.get(), POLLIN, 0};
        int n = ::poll(&p, 1, 10000);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) return fail("network helper " + path + ": no answer within 10 s");
        ssize_t r = ::read(ready_r.get(), buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        said.append(buf, static_cast<size_t>(r));
    }
    while (!said.empty() && said.back() == '\n')
        said.pop_back();
    if (said.rfind("ready ", 0) != 0) {
        if (said.rfind("error ", 0) == 0) said = said.substr(6);
        if (said.empty()) said = "exited without a word (see " + l.state_dir + "/shim.log)";
        return fail("network helper " + path + ": " + said);
    }
    ShimProcess sp;
    sp.pid = static_cast<pid_t>(std::atoi(said.c_str() + 6));
    sp.start_time = process_start_time(sp.pid);
    if (sp.pid <= 0 || sp.start_time == 0)
        return fail("network helper: exited right after it started");
    return sp;
}

void stop_shim(pid_t pid, uint64_t start_time, const std::string &id,
               const std::string &state_dir) {
    if (pid <= 0 || !process_alive(pid, start_time)) return;
    // argv as spawn_shim made it: oci-run-shim --id ID --state-dir DIR ...,
    // DIR the same directory as `state_dir` (however --root was spelled).
    std::string want =
        std::string("oci-run-shim") + '\0' + "--id" + '\0' + id + '\0' + "--state-dir" + '\0';
    auto cmdline = oci::read_file("/proc/" + std::to_string(pid) + "/cmdline", 0, 65536);
    bool ours = cmdline && cmdline->compare(0, want.size(), want) == 0;
    if (ours) {
        std::string dir = cmdline->c_str() + want.size();
        struct stat a, b;
        ours = ::stat(dir.c_str(), &a) == 0 && ::stat(state_dir.c_str(), &b) == 0 &&
               a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    }
    if (!ours) {
        log::warning("network helper " + std::to_string(pid) + " of " + id +
                     " not stopped: its command line is not the helper's of " + state_dir);
        return;
    }
    (void)signal_process(pid, start_time, SIGTERM);
    if (wait_process_gone(pid, 2000)) return;
    (void)signal_process(pid, start_time, SIGKILL);
    (void)wait_process_gone(pid, 2000);
}

} // namespace ocirun
