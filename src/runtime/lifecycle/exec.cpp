#include "runtime/lifecycle/exec.hpp"

#include "oci/fd.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/cgroups/systemd_driver.hpp"
#include "runtime/fault.hpp"
#include "runtime/process/caps.hpp"

#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "oci/text.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/lifecycle/exec_stage.hpp"
#include "runtime/lifecycle/exec_stage_protocol.hpp"
#include "runtime/lifecycle/store.hpp"
#include "runtime/lifecycle/sync.hpp"
#include "runtime/lifecycle/tty_relay.hpp"
#include "runtime/log.hpp"
#include "runtime/process/namespaces.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/process/process_setup.hpp"
#include "runtime/security/sandbox_policy.hpp"
#include "runtime/security/seccomp.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
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

// Whether the init's namespace `name` is this process's own; none when that
// cannot be told.
std::optional<bool> same_namespace(pid_t init, const char *name) {
    struct stat theirs, ours;
    std::string link = concat("/proc/", std::to_string(init), "/ns/", name);
    std::string self = concat("/proc/self/ns/", name);
    if (::stat(link.c_str(), &theirs) < 0 || ::stat(self.c_str(), &ours) < 0) return std::nullopt;
    return theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev;
}

// Whether `id` (outside) is mapped in the init's user namespace, by its
// uid_map or gid_map (read from this namespace, the outside IDs are ours);
// unreadable counts as mapped.
bool id_mapped(pid_t init, const char *map, unsigned id) {
    auto text = oci::read_file("/proc/" + std::to_string(init) + "/" + map, 0, 1 << 16);
    if (!text) return true;
    bool mapped = false;
    for_each_line(*text, [&](std::string_view line) {
        auto w = words(line);
        if (w.size() != 3) return;
        auto outside = number<uint64_t>(w[1]), count = number<uint64_t>(w[2]);
        if (outside && count && id >= *outside && id - *outside < *count) mapped = true;
    });
    return mapped;
}

// Whether the init has a user namespace of its own that maps this
// process's uid or gid (or whether that cannot be told).
bool runtime_mapped_in_userns(pid_t init) {
    std::optional<bool> same = same_namespace(init, "user");
    if (!same) return true;
    return !*same &&
           (id_mapped(init, "uid_map", ::geteuid()) || id_mapped(init, "gid_map", ::getegid()));
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
            // And ambient where inheritable allows it (as runc), so that a
            // program without file capabilities keeps it across its exec.
            if (std::find(p.capabilities->inheritable.begin(), p.capabilities->inheritable.end(),
                          c) != p.capabilities->inheritable.end())
                add_unique(p.capabilities->ambient, c);
        }
    }
    if (p.capabilities) capability_notes(*p.capabilities, "exec: process.capabilities");
    if (o.no_new_privs) p.no_new_privileges = true;
    if (p.terminal && o.console_socket.empty() && o.detach)
        return fail("exec: a terminal with --detach needs --console-socket");
    return p;
}

struct Child {
    const oci::Process *proc;
    const SeccompFilter *seccomp;        // the container's filter, or null
    const SeccompFilter *guard;          // the sandbox guard, or null
    std::vector<std::pair<int, int>> ns; // fd, flag (user first), joined in this order
    int pidns_fd;                        // the container's PID namespace, or -1
    int sync_fd;
    int console_fd;
    bool clear_onlcr; // relayed to an output that is not a terminal
    int preserve_fds;
    bool in_userns;
    bool detach;          // the process outlives the runtime
    const oci::Linux *lx; // linux.personality, linux.memoryPolicy
    // The init's root, chrooted into once in its namespaces, where its mount
    // namespace is not the container's own (setns sets that one's root); or -1.
    int root_fd = -1;
    // The sealed exec stage, which forks the process (exec_through_stage),
    // and the process's filter for it to load; or -1.
    int stage = -1;
    int stage_filters = -1;
};

// The process the container sees (the intermediate's child, born in its PID
// namespace): a new session and its terminal, the container's filter, the
// identity, the exec. It holds only what it will keep plus what the identity
// change needs (exec_intermediate), is not dumpable, and is in every
// namespace of the container from its first instruction.
// `proc`: the child's copy of the process, which gets HOME where it has none.
Status exec_child(const Child &c, oci::Process &proc) {
    // Inherited from the intermediate; a process the container can see must
    // not be dumpable (CVE-2016-9962).
    if (::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
        return fail("exec: the process would be dumpable while the container can see it");
    // Dies with the runtime until its exec (unless detached); the runtime
    // may be gone already, which its end of the sync socket tells (its PID
    // is out of sight in the container's PID namespace).
    OCI_CHECK(set_death_signal(SIGKILL));
    struct pollfd hup = {c.sync_fd, POLLRDHUP, 0};
    if (::poll(&hup, 1, 0) < 0) return fail_errno("exec: poll the sync socket");
    if (hup.revents & (POLLHUP | POLLRDHUP | POLLERR)) return fail("exec: the runtime is gone");
    fault_point("exec-child:visible");
    if (c.in_userns) OCI_CHECK(apply_rlimits(*c.proc, Rlimits::nproc));
    if (::setsid() < 0) return fail_errno("setsid");
    if (c.proc->terminal)
        OCI_CHECK(
            attach_terminal(c.console_fd, c.proc->console_size, c.proc->user.uid, c.clear_onlcr));
    OCI_CHECK(reset_signals());
    // In the container's cgroup by now (the intermediate was moved before it
    // forked this process).
    OCI_CHECK(apply_final_cpu_affinity(*c.proc));
    OCI_CHECK(set_memory_policy(c.lx->memory_policy));
    OCI_CHECK(apply_scheduling(*c.proc));
    // The container's /etc/passwd (this process is in its mount namespace),
    // read before the identity change.
    set_home(proc);
    // As in the init: what the runtime does itself first, then the filter
    // before the identity without no_new_privs (it needs CAP_SYS_ADMIN
    // then), else last.
    bool in_cwd = OCI_TRY(apply_cwd_umask(*c.proc, true));
    OCI_CHECK(mark_fds_cloexec(c.preserve_fds));
    bool nnp = c.proc->no_new_privileges;
    if (c.seccomp && !nnp) OCI_CHECK(load_seccomp_and_pass(c.sync_fd, *c.seccomp));
    OCI_CHECK(apply_identity(*c.proc));
    // The identity change cleared it.
    OCI_CHECK(set_death_signal(SIGKILL));
    if (!in_cwd) in_cwd = OCI_TRY(apply_cwd_umask(*c.proc, false));
    if (c.seccomp && nnp) OCI_CHECK(load_seccomp_and_pass(c.sync_fd, *c.seccomp));
    return {};
}

std::string hex(uint64_t v) {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
    return buf;
}

// The intermediate's end where the exec stage forks the process
// (exec_stage.hpp): what exec_child sets up before the identity change is
// set here, where the process inherits it through the stage's exec and
// fork (signals, CPU affinity, memory policy, scheduling, HOME, cwd and
// umask, the terminal's pty, no fd but its own beyond the preserved ones);
// the stage drops the bounding set and the capabilities, forks the process
// as the runtime's child and says its PID; the process takes its session,
// terminal, filter and identity (src/exec_stage/main.cpp join_child).
[[noreturn]] void exec_through_stage(const Child &c) {
    auto die = [&](const Error &e) {
        sync::send_error(c.sync_fd, e);
        ::_exit(1);
    };
    auto check = [&](Status st) {
        if (!st) die(st.error());
    };
    oci::Process proc = *c.proc;
    check(reset_signals());
    check(apply_final_cpu_affinity(proc));
    check(set_memory_policy(c.lx->memory_policy));
    check(apply_scheduling(proc));
    // The container's /etc/passwd (this process is in its mount namespace).
    set_home(proc);
    auto in_cwd = apply_cwd_umask(proc, true);
    if (!in_cwd) die(in_cwd.error());
    int tty = -1;
    if (proc.terminal) {
        auto peer = open_terminal(c.console_fd, proc.console_size, proc.user.uid, c.clear_onlcr);
        if (!peer) die(peer.error());
        tty = *peer;
    }
    check(mark_fds_cloexec(c.preserve_fds));

    oci::Capabilities none;
    CapMasks m = capability_masks(proc.capabilities ? *proc.capabilities : none);
    bool early = c.stage_filters >= 0 && !proc.no_new_privileges;
    uint64_t limit = m.permitted | m.effective | 1ull << CAP_SETUID | 1ull << CAP_SETGID |
                     1ull << CAP_SETPCAP | (early ? 1ull << CAP_SYS_ADMIN : 0);
    std::string nproc = "-", groups;
    if (c.in_userns)
        for (const auto &r : proc.rlimits)
            if (r.resource == RLIMIT_NPROC)
                nproc = std::to_string(r.soft) + ":" + std::to_string(r.hard);
    for (uint32_t g : proc.user.additional_gids)
        groups += (groups.empty() ? "" : ",") + std::to_string(g);
    ExecCandidates files = exec_candidates(proc);
    std::vector<std::string> args = {
        exec_stage::kJoinName,
        std::to_string(c.sync_fd),
        std::to_string(c.stage_filters),
        early ? "1" : "0",
        hex(m.bounding),
        hex(limit),
        hex(m.effective),
        hex(m.permitted),
        hex(m.inheritable),
        hex(m.ambient),
        std::to_string(proc.user.uid),
        std::to_string(proc.user.gid),
        groups,
        groups.empty() && setgroups_denied() ? "1" : "0",
        proc.no_new_privileges ? "1" : "0",
        nproc,
        std::to_string(tty),
        *in_cwd ? "" : proc.cwd,
        c.detach ? "1" : "0",
        fault_action("exec-child:visible"),
        proc.args[0],
        files.dirs,
        std::to_string(files.files.size()),
    };
    args.insert(args.end(), files.files.begin(), files.files.end());
    args.insert(args.end(), proc.args.begin(), proc.args.end());
    // These outlive the exec; the stage closes them or marks them.
    for (int fd : {c.sync_fd, c.stage_filters, tty})
        if (fd >= 0 && ::fcntl(fd, F_SETFD, 0) < 0)
            die(Error{errno, "exec stage: keep fd " + std::to_string(fd) + " open"});
    std::vector<char *> argv = exec_strings(args), envp = exec_strings(proc.env);
    ::syscall(SYS_execveat, c.stage, "", argv.data(), envp.data(), AT_EMPTY_PATH);
    die(Error{errno, "exec stage: execute oci-run-exec-stage"});
    ::_exit(1);
}

// The runtime's child, in the host's PID namespace, where nothing in the
// container can see it: it waits for the runtime (which moves it into the
// container's cgroup), joins the container's PID namespace for its children
// and every other namespace, user first, then sets up what its child
// inherits (rlimits, the sandbox guard, the bounding set, capabilities cut
// down to what the process will hold plus CAP_SETUID, CAP_SETGID and
// CAP_SETPCAP for the identity change, and CAP_SYS_ADMIN only where the
// container's filter must go in before that change) and forks the process
// as the runtime's child (CLONE_PARENT). Its PID goes to the runtime in an
// init_hello. Never returns.
[[noreturn]] void exec_intermediate(const Child &c) {
    auto die = [&](const Error &e) {
        sync::send_error(c.sync_fd, e);
        ::_exit(1);
    };
    auto check = [&](Status st) {
        if (!st) die(st.error());
    };
    check(set_death_signal(SIGKILL));
    check(set_dumpable(false));
    auto go = sync::receive(c.sync_fd, "exec");
    if (!go) die(go.error());
    if (go->type != sync::Msg::proceed) die(Error{0, "sync: unexpected message"});
    // The PID namespace first, while this process is still in the host's
    // user namespace (as root, it owns every other). An unprivileged
    // runtime may enter it only from the container's user namespace, which
    // owns it: right after that one.
    auto join_pidns = [&] {
        if (::setns(c.pidns_fd, CLONE_NEWPID) < 0)
            die(Error{errno, "setns into the container's PID namespace"});
    };
    bool joins_user = std::any_of(c.ns.begin(), c.ns.end(),
                                  [](const auto &n) { return n.second == CLONE_NEWUSER; });
    bool pid_after_user = c.pidns_fd >= 0 && joins_user && ::geteuid() != 0;
    if (c.pidns_fd >= 0 && !pid_after_user) join_pidns();
    for (auto [fd, flag] : c.ns) {
        if (::setns(fd, flag) < 0)
            die(Error{errno, "setns " + std::string(ns_flag_name(flag)) + " namespace"});
        if (flag == CLONE_NEWUSER && pid_after_user) join_pidns();
    }
    for (auto [fd, flag] : c.ns)
        ::close(fd);
    if (c.pidns_fd >= 0) ::close(c.pidns_fd);
    if (c.root_fd >= 0) {
        if (::fchdir(c.root_fd) < 0 || ::chroot(".") < 0 || ::chdir("/") < 0)
            die(Error{errno, "exec: chroot into the init's root"});
        ::close(c.root_fd);
    }
    fault_point("exec-child:joined");
    if (c.in_userns) {
        if (::setresgid(0, 0, 0) < 0 || ::setresuid(0, 0, 0) < 0)
            die(Error{errno, "become root in the container's user namespace"});
        // A change of credentials resets both: dumpable from
        // fs.suid_dumpable, the death signal to none.
        check(set_dumpable(false));
        check(set_death_signal(SIGKILL));
    }
    // RLIMIT_NPROC is checked when this process forks, against its user:
    // in a user namespace that is the container's root, whatever its
    // capabilities there, so the process sets that one itself.
    check(apply_rlimits(*c.proc, c.in_userns ? Rlimits::but_nproc : Rlimits::all));
    // linux.personality, which the process inherits: before the guard, which
    // allows only the default.
    check(set_personality(c.lx->personality));
    // The guard while this process holds CAP_SYS_ADMIN, so the process is
    // born under it; it allows what is left of the setup.
    if (c.guard)
        if (auto g = load_seccomp(*c.guard); !g) die(g.error());
    if (c.stage >= 0) exec_through_stage(c);
    oci::Capabilities none;
    const oci::Capabilities &caps = c.proc->capabilities ? *c.proc->capabilities : none;
    check(drop_bounding(caps));
    uint64_t extra = 1ull << CAP_SETUID | 1ull << CAP_SETGID | 1ull << CAP_SETPCAP;
    if (c.seccomp && !c.proc->no_new_privileges) extra |= 1ull << CAP_SYS_ADMIN;
    if (c.proc->terminal) extra |= 1ull << CAP_CHOWN; // the pty to the process's uid
    // process.scheduler and ioPriority, which a real-time class needs.
    if (c.proc->scheduler || c.proc->io_priority) extra |= 1ull << CAP_SYS_NICE;
    check(limit_capabilities(caps, extra));
    // The process waits on `release` until the runtime has its PID: nothing it
    // says (a notify fd, an error) may come before this process's hello.
    int release[2];
    if (::pipe2(release, O_CLOEXEC) < 0) die(Error{errno, "exec: pipe"});
    long pid = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid < 0) die(Error{errno, "exec: clone"});
    if (pid == 0) {
        ::close(release[1]);
        char b;
        if (::read(release[0], &b, 1) != 1) ::_exit(1);
        ::close(release[0]);
        oci::Process proc = *c.proc;
        auto r = exec_child(c, proc);
        if (r && c.detach) r = set_death_signal(0);
        if (!r) {
            sync::send_error(c.sync_fd, r.error());
            ::_exit(1);
        }
        Error e = exec_process(proc);
        sync::send_error(c.sync_fd, e);
        ::_exit(127);
    }
    ::close(release[0]);
    check(sync::send(c.sync_fd, sync::Msg::init_hello, static_cast<int32_t>(pid)));
    if (::write(release[1], "g", 1) != 1) die(Error{errno, "exec: release the process"});
    ::_exit(0);
}

} // namespace

Result<std::vector<NamespaceFd>> container_namespaces(pid_t init, const oci::Linux &lx,
                                                      bool nested) {
    std::vector<NamespaceFd> out;
    auto open_ns = [&](const char *name) -> Result<Fd> {
        auto fd = open_namespace(init, name);
        if (!fd) return forward(std::move(fd.error()), "exec");
        return fd;
    };
    // A sandbox policy with masks moved the init into a nested user namespace
    // (runtime/lifecycle/init.cpp lock_mounts) that owns only its mount namespace: the
    // others belong to the user namespace above it. Join that one (unless it
    // is ours), the other namespaces, then the nested one and the mount
    // namespace, so a process ends up exactly where the init is.
    Fd inner;
    if (nested) {
        inner = OCI_TRY(open_ns("user"));
        Fd outer(::ioctl(inner.get(), NS_GET_PARENT));
        if (!outer.valid()) return fail_errno("exec: the user namespace above the init's");
        struct stat a, b;
        if (::fstat(outer.get(), &a) == 0 && ::stat("/proc/self/ns/user", &b) == 0 &&
            (a.st_ino != b.st_ino || a.st_dev != b.st_dev))
            out.push_back({std::move(outer), CLONE_NEWUSER});
    }
    for (const auto &j : kOrder) {
        if (!lx.find_namespace(j.type)) continue;
        if (nested && j.type == oci::NsType::user) continue; // handled above and below
        if (nested && j.type == oci::NsType::mount)
            out.push_back({std::move(inner), CLONE_NEWUSER});
        out.push_back({OCI_TRY(open_ns(j.proc_name)), clone_flag(j.type)});
    }
    // A namespace the container's user namespace does not own (one its
    // configuration joined by path, a pod's network namespace) is joined
    // before it, as the host's root, as the init did.
    if (!nested && !out.empty() && out[0].flag == CLONE_NEWUSER) {
        struct stat userns;
        if (::fstat(out[0].fd.get(), &userns) < 0) return fail_errno("exec: the user namespace");
        std::stable_partition(out.begin(), out.end(), [&](const NamespaceFd &n) {
            return n.flag != CLONE_NEWUSER && !owned_within(n.fd.get(), userns);
        });
    }
    return out;
}

Result<int> exec_in_container(const ExecOptions &o) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(o.root, o.id));
    ContainerRecord rec = OCI_TRY(dir.load());
    if (!process_alive(rec.state.pid, rec.init_start_time))
        return fail("exec: container \"" + o.id + "\" is not running");
    // A frozen cgroup would hold the process (and this command) in the
    // kernel until resume; refused at once unless asked for (as runc).
    // The host's cgroups, found once: for this check and for joining below.
    bool paused = false;
    CgroupHost host;
    if (!rec.cgroup_dirs.empty()) {
        host = OCI_TRY(detect_cgroup_host());
        OCI_CHECK(check_own_cgroup(host, rec));
        paused = cgroup_frozen(host, rec.cgroup_dirs);
        if (paused && !o.ignore_paused)
            return fail("exec: container \"" + o.id +
                        "\" is paused: resume it first, or use --ignore-paused");
    }
    // The copy create wrote, opened as a bundle's is (a regular file, not
    // through a symlink out, of bounded size).
    auto spec = oci::load_bundle_spec(dir.path());
    if (!spec) return forward(std::move(spec.error()), "exec");
    oci::Process proc = OCI_TRY(build_process(o, *spec));
    const oci::Linux &lx = *spec->linux_;
    pid_t init = rec.state.pid;
    // CVE-2019-5736: the exec stage forks the process where it can, or this
    // process re-executes from its sealed view first (exec_stage.hpp).
    // Nothing is made yet.
    Fd stage;
    if (!o.sealed) {
        std::string stage_path;
        bool ours =
            !lx.find_namespace(oci::NsType::pid) || same_namespace(init, "pid").value_or(true);
        // The stage is exec'd in the container's user namespace, execute-only
        // to it, so that its memory belongs to the namespace above where the
        // copy's owner (this process) is mapped: not the container's, where
        // CAP_SYS_PTRACE would reach it.
        bool mapped = runtime_mapped_in_userns(init);
        stage_path = exec_stage_for_join(proc, ours, mapped);
        if (!stage_path.empty()) {
            auto view = open_join_stage(stage_path);
            if (view)
                stage = std::move(*view);
            else
                log::debug("exec stage not used: " + view.error().msg);
        }
        if (!stage.valid()) {
            if (!o.reseal) return fail("CVE-2019-5736 protection: no way to run sealed");
            dir = ContainerDir(); // its lock, which the sealed runtime takes again
            return forward(o.reseal());
        }
    }

    std::optional<SeccompFilter> filter;
    if (lx.seccomp) {
        static const std::vector<std::string> none;
        auto f =
            compile_seccomp(*lx.seccomp, proc.capabilities ? proc.capabilities->bounding : none);
        if (!f) return forward(std::move(f.error()), "exec");
        filter = std::move(*f);
    }
    // A container with a sandbox policy: its exec'd processes get the guard too.
    SandboxPolicy policy = OCI_TRY(container_policy(rec, *spec));
    // Its way out is the egress proxy, as for the container's process.
    if (policy.net.proxy()) add_proxy_env(proc.env);
    // In a joined namespace its firewall holds the need: no process there
    // may change it (as create refuses for the container's process).
    if (policy.net.own_namespace() && rec.netns_ino != 0 && proc.capabilities) {
        const auto &b = proc.capabilities->bounding;
        if (std::find(b.begin(), b.end(), "CAP_NET_ADMIN") != b.end())
            return fail(
                "exec: process.capabilities: CAP_NET_ADMIN: dev.ocirun.network=" + policy.net.mode +
                " is held by the network namespace's firewall, which it could change");
    }
    std::optional<SeccompFilter> guard;
    if (policy.present) {
        static const std::vector<std::string> none;
        auto g = compile_sandbox_guard(proc.capabilities ? proc.capabilities->bounding : none,
                                       policy.net);
        if (!g) return forward(std::move(g.error()), "exec");
        guard = std::move(*g);
    }
    Fd stage_filters_fd;
    if (stage.valid() && filter) stage_filters_fd = OCI_TRY(stage_filters({&*filter}));
    Child c{&proc,
            filter ? &*filter : nullptr,
            guard ? &*guard : nullptr,
            {},
            -1,
            -1,
            -1,
            false,
            o.preserve_fds,
            false,
            o.detach,
            &lx};
    std::vector<NamespaceFd> ns_fds = OCI_TRY(container_namespaces(init, lx, policy.masks()));
    for (const auto &n : ns_fds) {
        c.ns.push_back({n.fd.get(), n.flag});
        if (n.flag == CLONE_NEWUSER) c.in_userns = true;
    }
    Fd pidns;
    if (lx.find_namespace(oci::NsType::pid)) {
        auto fd = open_namespace(init, "pid");
        if (!fd) return forward(std::move(fd.error()), "exec");
        pidns = std::move(*fd);
    }
    // The init chrooted into its rootfs in a mount namespace not its own.
    Fd init_root;
    if (mount_ns_of(lx) != MountNs::own) {
        std::string link = "/proc/" + std::to_string(init) + "/root";
        init_root.reset(::open(link.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!init_root.valid()) return fail_errno("exec: open " + link);
        c.root_fd = init_root.get();
    }
    // The container could have exited between the check and the opens.
    if (!process_alive(init, rec.init_start_time))
        return fail("exec: container \"" + o.id + "\" is not running");
    Fd console;
    if (!o.console_socket.empty())
        console.reset(OCI_TRY(sync::connect_unix(o.console_socket, "--console-socket")));
    // In the foreground without --console-socket the pty master comes back
    // to us over this pair (runtime/lifecycle/tty_relay.hpp).
    Fd relay;
    if (proc.terminal && o.console_socket.empty()) {
        // The caller's size, on the pty before the process runs.
        if (!proc.console_size) proc.console_size = own_terminal_size();
        int pair[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
            return fail_errno("exec: socketpair");
        relay.reset(pair[0]);
        console.reset(pair[1]);
    }
    c.console_fd = console.get();
    c.clear_onlcr = relay.valid() && !::isatty(STDOUT_FILENO);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return fail_errno("exec: socketpair");
    Fd ours(sv[0]), theirs(sv[1]);
    c.sync_fd = sv[1];
    c.pidns_fd = pidns.get();
    c.stage = stage.get();
    c.stage_filters = stage_filters_fd.get();
    // The intermediate (exec_intermediate) joins the container; the process
    // it forks is our child.
    pid_t mid =
        static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
    if (mid < 0) return fail_errno("exec: clone");
    if (mid == 0) {
        ::close(dir.fd());
        ::close(sv[0]);
        // Into a frozen cgroup it would stop where it is, and its copy of
        // the container's lock (this flock'ed fd, closed just above) would
        // hold resume off for good: it says so first.
        if (paused && !sync::send(c.sync_fd, sync::Msg::ready)) ::_exit(1);
        exec_intermediate(c);
    }
    theirs.reset();
    console.reset();
    ns_fds.clear();
    pidns.reset();
    init_root.reset();
    stage.reset();
    stage_filters_fd.reset();
    if (paused) {
        auto unlocked = sync::receive(ours.get(), "exec");
        if (!unlocked || unlocked->type != sync::Msg::ready) {
            kill_and_reap(mid);
            return fail("exec: sync: the intermediate did not start");
        }
    }
    fault_point("exec:cloned");
    // process.execCPUAffinity.initial: where the intermediate runs until it
    // is in the container's cgroup (runtime-spec 1.2.1).
    if (proc.exec_cpu_affinity && !proc.exec_cpu_affinity->initial.empty()) {
        const std::string &initial = proc.exec_cpu_affinity->initial;
        auto cpus = oci::parse_cpu_list(initial);
        Status st = cpus ? set_cpu_affinity(mid, *cpus,
                                            "process.execCPUAffinity.initial \"" + initial + "\"")
                         : fail("process.execCPUAffinity.initial: " + cpus.error().msg);
        if (!st) {
            kill_and_reap(mid);
            return forward(std::move(st.error()), "exec");
        }
    }
    if (!rec.cgroup_dirs.empty()) {
        // And the init's cpuset cgroup where the container has none of its
        // own (runtime/cgroups/cgroup.hpp v1_cpuset_only), which is not ours to assume.
        std::vector<std::string> join = rec.cgroup_dirs;
        std::string cs = borrowed_v1_cpuset(host, rec.cgroup_dirs, rec.state.pid);
        if (!cs.empty() && cs != borrowed_v1_cpuset(host, rec.cgroup_dirs, ::getpid()))
            join.push_back(cs);
        // The process it forks is born there. A user's systemd manager's
        // scope may be beyond what this user may move a process into (its
        // manager's cgroup is not a parent of ours): the manager moves it.
        Status joined = enter_cgroup(join, mid);
        if (!joined && rec.systemd_user &&
            (joined.error().code == EACCES || joined.error().code == EPERM)) {
            auto scope = recorded_scope(rec);
            joined = scope ? attach_to_scope(*scope, mid) : Status(std::unexpected(scope.error()));
            if (joined) joined = check_in_cgroup(host, rec.cgroup_dirs, mid);
        }
        if (!joined) {
            kill_and_reap(mid);
            return forward(std::move(joined.error()), "exec");
        }
    }
    // --ignore-paused: the intermediate is frozen from here until resume,
    // which needs the lock.
    if (paused) dir = ContainerDir();
    fault_point("exec:joined");
    if (auto r = sync::send(ours.get(), sync::Msg::proceed); !r) {
        kill_and_reap(mid);
        return forward(std::move(r.error()), "exec");
    }
    // The intermediate names the process it forked, then exits.
    auto hello = sync::receive(ours.get(), "exec");
    int mid_status = 0;
    while (::waitpid(mid, &mid_status, 0) < 0 && errno == EINTR) {
    }
    // Killed before it said (a crash, an OOM kill): what killed it, as for
    // the process itself.
    if (!hello && WIFSIGNALED(mid_status)) return 128 + WTERMSIG(mid_status);
    if (!hello) return forward(std::move(hello.error()), "exec");
    if (hello->type == sync::Msg::error) return forward(Error{hello->value, hello->text}, "exec");
    if (hello->type != sync::Msg::init_hello || hello->value <= 0)
        return fail("exec: sync: the intermediate did not name the process");
    pid_t pid = hello->value;
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
