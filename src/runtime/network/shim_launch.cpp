#include "runtime/network/shim_launch.hpp"

#include "runtime/process/spawn.hpp"

#include "build_config.h"
#include "oci/fd.hpp"
#include "oci/policy/helper_config.hpp"
#include "oci/state.hpp"
#include "runtime/lifecycle/sealed_binary.hpp"
#include "runtime/log.hpp"
#include "runtime/process/proc.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

namespace ocirun {

oci::Hook helper_program(std::string path, std::vector<std::string> args) {
    oci::Hook h;
    h.path = std::move(path);
    h.args = std::move(args);
    for (const char *var : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
        if (const char *v = std::getenv(var)) h.env.push_back(std::string(var) + "=" + v);
    h.timeout = 30;
    return h;
}

std::string helper_path(const std::string &name, const char *installed) {
    // Next to this binary: the same directory, the build tree (src/ and
    // shim/ side by side), or a prefix (bin/ or sbin/ beside libexec/).
    std::string self = own_binary_path();
    if (size_t slash = self.rfind('/'); slash != std::string::npos) {
        std::string dir = self.substr(0, slash + 1);
        for (const std::string &rel : {name, "../shim/" + name, "../libexec/oci-run/" + name})
            if (std::string p = dir + rel; ::access(p.c_str(), X_OK) == 0) return p;
    }
    return installed;
}

std::string shim_path() {
    const char *env = std::getenv("OCI_RUN_SHIM");
    if (env && *env) return env;
    return helper_path("oci-run-shim", OCIRUN_SHIM_PATH);
}

Result<ShimProcess> spawn_shim(const ShimLaunch &l) {
    const NetworkPolicy &net = *l.net;
    std::string path = shim_path();
    Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, l.init, 0)));
    if (!pidfd.valid()) return fail_errno("network helper: pidfd_open of the init");
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) < 0) return fail_errno("network helper: pipe");
    Fd ready_r(ready[0]), ready_w(ready[1]);

    // fds 3, 4, 5: the init's pidfd, the ready pipe, the configuration;
    // then the netns and the listeners it names.
    std::vector<int> pass = {pidfd.get(), ready_w.get(), -1};
    auto next = [&](int fd) {
        pass.push_back(fd);
        return static_cast<int>(2 + pass.size());
    };
    HelperConfig config;
    if (!net.publish.empty()) {
        config.netns_fd = next(l.netns_fd);
        config.publish = net.publish;
    }
    size_t i = 0;
    for (const auto &f : net.local_ports)
        config.forwards.push_back({next(l.listeners.at(i++)), f.host_port});
    if (net.proxy()) {
        config.proxy_fd = next(l.listeners.at(i++));
        if (net.intercept) {
            config.intercept_http_fd = next(l.listeners.at(i++));
            config.intercept_tls_fd = next(l.listeners.at(i++));
        }
        if (i + 2 <= l.listeners.size()) {
            config.dns_fd = next(l.listeners.at(i++));
            config.dns_tcp_fd = next(l.listeners.at(i++));
        }
        config.allow = net.allow;
        config.deny = net.deny;
        config.observe = net.observe;
        config.max_connections = net.max_connections;
    }
    config.forward_max_connections = net.forward_max_connections;
    config.total_max_connections = net.total_max_connections;
    Fd config_fd = OCI_TRY(sealed_memfd("oci-run-helper-config", write_helper_config(config),
                                        "network helper: its configuration"));
    pass[2] = config_fd.get();
    std::vector<std::string> args = {"oci-run-shim",
                                     "--id",
                                     l.id,
                                     "--state-dir",
                                     l.state_dir,
                                     "--init-pidfd",
                                     "3",
                                     "--ready-fd",
                                     "4",
                                     "--config-fd",
                                     "5"};

    // Its own session, and not the runtime's child: no signal of the
    // caller's terminal or process group reaches it, and a subreaper such as
    // containerd's shim, or init, reaps it. Its cgroups (entered before the
    // exec) charge everything it allocates to the container.
    Fd log(::open((l.state_dir + "/shim.log").c_str(),
                  O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!log.valid()) return fail_errno("network helper: open " + l.state_dir + "/shim.log");
    SpawnSpec spec;
    spec.path = path;
    spec.args = std::move(args);
    spec.err = log.get();
    spec.pass = pass;
    spec.cgroups = l.cgroups;
    spec.born_in = l.born_in;
    spec.detach = true;
    OCI_TRY(spawn_program(spec, "network helper " + path));
    ready_w.reset();

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
    // A helper that has begun to exit is waited for below (not alive, but
    // still the recorded process).
    if (pid <= 0 || process_start_time(pid) != start_time) return;
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
    // The helper on its way out (it leaves with the init) has an empty
    // command line from the moment its memory is gone: waited for, not
    // signalled, and no warning (a foreground run met this one time in
    // eight).
    if (!ours && cmdline && cmdline->empty() && wait_process_gone(pid, 2000)) return;
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
