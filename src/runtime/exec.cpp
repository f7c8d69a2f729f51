#include "exec.hpp"

#include "cgroup.hpp"
#include "fault.hpp"
#include "fd.hpp"

#include "log.hpp"
#include "namespaces.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "proc.hpp"
#include "process_setup.hpp"
#include "sandbox_policy.hpp"
#include "seccomp.hpp"
#include "store.hpp"
#include "sync.hpp"
#include "tty_relay.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
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

Result<std::string> read_text(const std::string &path, const char *what,
                              size_t limit = static_cast<size_t>(-1)) {
    auto text = oci::read_file(path, 0, limit);
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
        std::string text = OCI_TRY(read_text(o.process_file, "--process", oci::kMaxConfigSize));
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
    if (o.uid) p.user.uid = *o.uid;
    if (o.gid) p.user.gid = *o.gid;
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
    if (p.terminal && o.console_socket.empty() && o.detach)
        return fail("exec: a terminal with --detach needs --console-socket");
    return p;
}

struct Child {
    const oci::Process *proc;
    const SeccompFilter *seccomp;        // the container's filter, or null
    const SeccompFilter *guard;          // the sandbox guard, or null
    std::vector<std::pair<int, int>> ns; // fd, flag
    int sync_fd;
    int console_fd;
    int preserve_fds;
    bool in_userns;
};

Status child_setup(const Child &c) {
    // The runtime first moves this process into the container's cgroup.
    auto go = sync::receive(c.sync_fd, "exec");
    if (!go) return forward(std::move(go.error()));
    if (go->type != sync::Msg::proceed) return fail("sync: unexpected message");
    for (auto [fd, flag] : c.ns)
        if (::setns(fd, flag) < 0) return fail_errno(std::string("setns ") + std::to_string(flag));
    for (auto [fd, flag] : c.ns)
        ::close(fd);
    fault_point("exec-child:joined");
    if (c.in_userns) {
        if (::setresgid(0, 0, 0) < 0 || ::setresuid(0, 0, 0) < 0)
            return fail_errno("become root in the container's user namespace");
    }
    if (::setsid() < 0) return fail_errno("setsid");
    if (c.proc->terminal) OCI_CHECK(attach_terminal(c.console_fd, c.proc->console_size));
    OCI_CHECK(apply_rlimits(*c.proc));
    // As in the init: before the identity without no_new_privs (it needs
    // CAP_SYS_ADMIN then), else last.
    bool nnp = c.proc->no_new_privileges;
    if (c.seccomp && !nnp) OCI_CHECK(load_seccomp_and_pass(c.sync_fd, *c.seccomp));
    if (c.guard && !nnp) OCI_CHECK(load_seccomp(*c.guard));
    OCI_CHECK(apply_identity(*c.proc));
    OCI_CHECK(apply_cwd_umask(*c.proc));
    OCI_CHECK(mark_fds_cloexec(c.preserve_fds));
    if (c.seccomp && nnp) OCI_CHECK(load_seccomp_and_pass(c.sync_fd, *c.seccomp));
    if (c.guard && nnp) OCI_CHECK(load_seccomp(*c.guard));
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

    std::optional<SeccompFilter> filter;
    if (lx.seccomp) {
        static const std::vector<std::string> none;
        auto f =
            compile_seccomp(*lx.seccomp, proc.capabilities ? proc.capabilities->bounding : none);
        if (!f) return forward(std::move(f.error()), "exec");
        filter = std::move(*f);
    }
    // A container with a sandbox policy: its exec'd processes get the guard too.
    SandboxPolicy policy = OCI_TRY(parse_sandbox_policy(spec->annotations));
    // Its way out is the egress proxy, as for the container's process.
    if (policy.net.proxy()) add_proxy_env(proc.env);
    std::optional<SeccompFilter> guard;
    if (policy.present) {
        static const std::vector<std::string> none;
        auto g = compile_sandbox_guard(proc.capabilities ? proc.capabilities->bounding : none);
        if (!g) return forward(std::move(g.error()), "exec");
        guard = std::move(*g);
    }
    Child c{
        &proc, filter ? &*filter : nullptr, guard ? &*guard : nullptr, {}, -1, -1, o.preserve_fds,
        false};
    std::vector<Fd> ns_fds;
    Fd pidns;
    // A sandbox policy with masks moved the init into a nested user namespace
    // (runtime/init.cpp lock_mounts) that owns only its mount namespace: the
    // others belong to the user namespace above it. Join that one (unless it
    // is ours), the other namespaces, then the nested one and the mount
    // namespace, so an exec'd process ends up exactly where the init is.
    bool nested = policy.masks();
    auto add = [&](Fd fd, int flag) {
        c.ns.push_back({fd.get(), flag});
        ns_fds.push_back(std::move(fd));
        if (flag == CLONE_NEWUSER) c.in_userns = true;
    };
    auto open_ns = [&](const char *name) -> Result<Fd> {
        auto fd = open_namespace(init, name);
        if (!fd) return forward(std::move(fd.error()), "exec");
        return fd;
    };
    Fd inner;
    if (nested) {
        inner = OCI_TRY(open_ns("user"));
        Fd outer(::ioctl(inner.get(), NS_GET_PARENT));
        if (!outer.valid()) return fail_errno("exec: the user namespace above the init's");
        struct stat a, b;
        if (::fstat(outer.get(), &a) == 0 && ::stat("/proc/self/ns/user", &b) == 0 &&
            (a.st_ino != b.st_ino || a.st_dev != b.st_dev))
            add(std::move(outer), CLONE_NEWUSER);
    }
    for (const auto &j : kOrder) {
        if (!lx.find_namespace(j.type)) continue;
        if (nested && j.type == oci::NsType::user) continue; // handled above and below
        if (nested && j.type == oci::NsType::mount) add(std::move(inner), CLONE_NEWUSER);
        add(OCI_TRY(open_ns(j.proc_name)), clone_flag(j.type));
    }
    if (lx.find_namespace(oci::NsType::pid)) pidns = OCI_TRY(open_ns("pid"));
    // The container could have exited between the check and the opens.
    if (!process_alive(init, rec.init_start_time))
        return fail("exec: container \"" + o.id + "\" is not running");
    Fd console;
    if (!o.console_socket.empty())
        console.reset(OCI_TRY(sync::connect_unix(o.console_socket, "--console-socket")));
    // In the foreground without --console-socket the pty master comes back
    // to us over this pair (runtime/tty_relay.hpp).
    Fd relay;
    if (proc.terminal && o.console_socket.empty()) {
        int pair[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
            return fail_errno("exec: socketpair");
        relay.reset(pair[0]);
        console.reset(pair[1]);
    }
    c.console_fd = console.get();
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return fail_errno("exec: socketpair");
    Fd ours(sv[0]), theirs(sv[1]);
    c.sync_fd = sv[1];
    // Joining the PID namespace applies to children: the forked process is
    // born inside it.
    ChildPidNamespace child_pidns;
    if (pidns.valid())
        if (auto r = child_pidns.enter(pidns.get()); !r)
            return forward(std::move(r.error()), "exec");
    pid_t pid =
        static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
    if (pid != 0)
        if (auto r = child_pidns.leave(); !r) {
            if (pid > 0) kill_and_reap(pid);
            return forward(std::move(r.error()), "exec");
        }
    if (pid < 0) return fail_errno("exec: clone");
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
    theirs.reset();
    console.reset();
    ns_fds.clear();
    fault_point("exec:cloned");
    if (!rec.cgroup_dirs.empty()) {
        // And the init's cpuset cgroup where the container has none of its
        // own (runtime/cgroup.hpp v1_cpuset_only), which is not ours to assume.
        std::vector<std::string> join = rec.cgroup_dirs;
        auto host = detect_cgroup_host();
        if (!host) {
            kill_and_reap(pid);
            return forward(std::move(host.error()), "exec");
        }
        std::string cs = borrowed_v1_cpuset(*host, rec.cgroup_dirs, rec.state.pid);
        if (!cs.empty() && cs != borrowed_v1_cpuset(*host, rec.cgroup_dirs, ::getpid()))
            join.push_back(cs);
        if (auto r = enter_cgroup(join, pid); !r) {
            kill_and_reap(pid);
            return forward(std::move(r.error()), "exec");
        }
    }
    fault_point("exec:joined");
    if (auto r = sync::send(ours.get(), sync::Msg::proceed); !r) {
        kill_and_reap(pid);
        return forward(std::move(r.error()), "exec");
    }
    // EOF (the sync socket closed on exec) means the program is running.
    auto msg = sync::receive(ours.get(), "exec");
    while (msg && msg->type == sync::Msg::seccomp_notify) {
        Fd notify(msg->fd);
        oci::State st = rec.state;
        st.status = oci::ContainerStatus::running;
        if (auto r = send_seccomp_listener(*lx.seccomp, notify.get(), pid, st); !r) {
            kill_and_reap(pid);
            return forward(std::move(r.error()), "exec");
        }
        msg = sync::receive(ours.get(), "exec");
    }
    Fd master;
    if (relay.valid()) {
        // Sent before exec, so it is queued by now (or the setup failed).
        ::fcntl(relay.get(), F_SETFL, O_NONBLOCK);
        if (auto m = sync::receive_fd(relay.get())) master.reset(*m);
    }
    if (msg) {
        kill_and_reap(pid); // it has exited or is about to
        Error e{msg->value, msg->text};
        return forward(std::move(e), "exec");
    }
    if (auto r = write_pid_file(o.pid_file, pid); !r)
        return forward(std::move(r.error()), "--pid-file");
    fault_point("exec:running");
    if (o.detach) return 0;
    dir = ContainerDir(); // release the lock while the process runs
    forward_signals_to(pid);
    auto status = master.valid() ? relay_terminal(master.release(), pid) : wait_exit_status(pid);
    forward_signals_to(0);
    if (!status) return forward(std::move(status.error()), "exec");
    return status;
}

} // namespace ocirun
