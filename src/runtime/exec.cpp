#include "exec.hpp"

#include "log.hpp"
#include "namespaces.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "proc.hpp"
#include "process_setup.hpp"
#include "store.hpp"
#include "sync.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace ocirun {

namespace {

struct NsJoin {
    oci::NsType type;
    const char *proc_name; // under /proc/PID/ns
};
// User first: the other namespaces belong to it.
constexpr NsJoin kOrder[] = {
    {oci::NsType::user, "user"},   {oci::NsType::ipc, "ipc"},       {oci::NsType::uts, "uts"},
    {oci::NsType::network, "net"}, {oci::NsType::cgroup, "cgroup"}, {oci::NsType::time, "time"},
    {oci::NsType::mount, "mnt"},
};

Result<std::string> read_text(const std::string &path, const char *what) {
    auto text = oci::read_file(path);
    if (!text) return forward(std::move(text.error()), what);
    return text;
}

void add_unique(std::vector<std::string> &v, const std::string &s) {
    for (const auto &x : v)
        if (x == s) return;
    v.push_back(s);
}

Result<oci::Process> build_process(const ExecOptions &o, const oci::Spec &spec) {
    oci::Process p;
    if (!o.process_file.empty()) {
        std::string text = OCI_TRY(read_text(o.process_file, "--process"));
        auto parsed = oci::parse_process(text);
        if (!parsed) return forward(std::move(parsed.error()), "--process " + o.process_file);
        p = std::move(*parsed);
    } else {
        p = *spec.process;
        p.terminal = o.tty;
        p.console_size.reset();
        if (o.args.empty()) return fail("exec: missing the command to run");
        p.args = o.args;
    }
    for (const auto &e : o.env) {
        if (e.find('=') == std::string::npos)
            return fail("--env: expected KEY=VALUE, got \"" + e + "\"");
        std::string key = e.substr(0, e.find('=') + 1);
        bool replaced = false;
        for (auto &x : p.env)
            if (x.rfind(key, 0) == 0) {
                x = e;
                replaced = true;
            }
        if (!replaced) p.env.push_back(e);
    }
    if (!o.cwd.empty()) p.cwd = o.cwd;
    if (o.user) {
        p.user.uid = o.user->first;
        p.user.gid = o.user->second;
    }
    for (auto g : o.additional_gids)
        p.user.additional_gids.push_back(g);
    if (!o.caps.empty()) {
        if (!p.capabilities) p.capabilities.emplace();
        for (const auto &c : o.caps) {
            if (!oci::capability_from_name(c))
                return fail("--cap: unknown capability \"" + c + "\"");
            add_unique(p.capabilities->bounding, c);
            add_unique(p.capabilities->effective, c);
            add_unique(p.capabilities->permitted, c);
        }
    }
    if (o.no_new_privs) p.no_new_privileges = true;
    if (p.terminal && o.console_socket.empty())
        return fail("exec: a terminal needs --console-socket");
    return p;
}

struct Child {
    const oci::Process *proc;
    std::vector<std::pair<int, int>> ns; // fd, flag
    int sync_fd;
    int console_fd;
    int preserve_fds;
    bool in_userns;
};

Status child_setup(const Child &c) {
    for (auto [fd, flag] : c.ns)
        if (::setns(fd, flag) < 0) return fail_errno(std::string("setns ") + std::to_string(flag));
    for (auto [fd, flag] : c.ns)
        ::close(fd);
    if (c.in_userns) {
        if (::setresgid(0, 0, 0) < 0 || ::setresuid(0, 0, 0) < 0)
            return fail_errno("become root in the container's user namespace");
    }
    if (::setsid() < 0) return fail_errno("setsid");
    if (c.proc->terminal) OCI_CHECK(attach_terminal(c.console_fd, c.proc->console_size));
    OCI_CHECK(apply_rlimits(*c.proc));
    OCI_CHECK(apply_identity(*c.proc));
    OCI_CHECK(apply_cwd_umask(*c.proc));
    OCI_CHECK(mark_fds_cloexec(c.preserve_fds));
    return {};
}

} // namespace

Result<int> exec_in_container(const ExecOptions &o) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(o.root, o.id));
    oci::ContainerRecord rec = OCI_TRY(dir.load());
    if (!process_alive(rec.state.pid, rec.init_start_time))
        return fail("exec: container \"" + o.id + "\" is not running");
    std::string text = OCI_TRY(read_text(dir.path() + "/config.json", "exec"));
    auto spec = oci::parse_spec(text);
    if (!spec) return forward(std::move(spec.error()), "exec: " + dir.path() + "/config.json");
    oci::Process proc = OCI_TRY(build_process(o, *spec));
    const oci::Linux &lx = *spec->linux_;
    pid_t init = rec.state.pid;

    Child c{&proc, {}, -1, -1, o.preserve_fds, false};
    std::vector<int> to_close;
    auto close_all = [&] {
        for (int fd : to_close)
            ::close(fd);
    };
    int pidns = -1;
    for (const auto &j : kOrder) {
        if (!lx.find_namespace(j.type)) continue;
        std::string path = "/proc/" + std::to_string(init) + "/ns/" + j.proc_name;
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            close_all();
            return fail_code(e, "exec: open " + path);
        }
        to_close.push_back(fd);
        c.ns.push_back({fd, clone_flag(j.type)});
        if (j.type == oci::NsType::user) c.in_userns = true;
    }
    if (lx.find_namespace(oci::NsType::pid)) {
        std::string path = "/proc/" + std::to_string(init) + "/ns/pid";
        pidns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (pidns < 0) {
            close_all();
            return fail_errno("exec: open " + path);
        }
        to_close.push_back(pidns);
    }
    // The container could have exited between the check and the opens.
    if (!process_alive(init, rec.init_start_time)) {
        close_all();
        return fail("exec: container \"" + o.id + "\" is not running");
    }
    if (!o.console_socket.empty()) {
        auto fd = sync::connect_unix(o.console_socket, "--console-socket");
        if (!fd) {
            close_all();
            return forward(std::move(fd.error()));
        }
        c.console_fd = *fd;
        to_close.push_back(*fd);
    }
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        close_all();
        return fail_errno("exec: socketpair");
    }
    c.sync_fd = sv[1];
    // Joining the PID namespace applies to children: the forked process is
    // born inside it.
    if (pidns >= 0 && ::setns(pidns, CLONE_NEWPID) < 0) {
        int e = errno;
        close_all();
        ::close(sv[0]);
        ::close(sv[1]);
        return fail_code(e, "exec: setns pid namespace");
    }
    pid_t pid =
        static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
    if (pid < 0) {
        int e = errno;
        close_all();
        return fail_code(e, "exec: clone");
    }
    if (pid == 0) {
        ::close(dir.fd());
        ::close(sv[0]);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        auto r = child_setup(c);
        if (!r) {
            sync::send_error(sv[1], r.error());
            ::_exit(1);
        }
        if (o.detach) ::prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
        Error e = exec_process(proc);
        sync::send_error(sv[1], e);
        ::_exit(127);
    }
    ::close(sv[1]);
    close_all();
    // EOF (the sync socket closed on exec) means the program is running.
    auto msg = sync::receive(sv[0], "exec");
    ::close(sv[0]);
    if (msg) {
        kill_and_reap(pid); // it has exited or is about to
        Error e{msg->value, msg->text};
        return forward(std::move(e), "exec");
    }
    if (auto r = write_pid_file(o.pid_file, pid); !r)
        return forward(std::move(r.error()), "--pid-file");
    if (o.detach) return 0;
    dir = ContainerDir(); // release the lock while the process runs
    forward_signals_to(pid);
    auto status = wait_exit_status(pid);
    forward_signals_to(0);
    if (!status) return forward(std::move(status.error()), "exec");
    return status;
}

} // namespace ocirun
