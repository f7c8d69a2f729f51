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
#include "runtime/process/spawn.hpp"
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
#include <functional>

namespace ocirun {

// process.execCPUAffinity.initial on `pid` (0: this process), if any.
Status apply_initial_cpu_affinity(pid_t pid, const oci::Process &p);

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
    // The v1 hierarchies' tasks files the intermediate moves itself into
    // first (runtime/cgroups/cgroup.hpp join_self); the runtime moves it
    // into what is left of the container's cgroup once the stage is ready.
    std::vector<std::pair<int, const char *>> cgroup_tasks = {}; // fd, directory
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

// Allocates nothing unless it fails (the vfork'ed intermediate calls it).
Status set_own_oom_score_adj(int32_t value) {
    char text[16];
    int n = std::snprintf(text, sizeof text, "%d", value);
    int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return fail_errno("process.oomScoreAdj: open /proc/self/oom_score_adj");
    ssize_t w = ::write(fd, text, static_cast<size_t>(n));
    int e = errno;
    ::close(fd);
    if (w != n)
        return fail_code(w < 0 ? e : EIO, "process.oomScoreAdj: write " + std::string(text) +
                                              " to /proc/self/oom_score_adj");
    return {};
}

std::string hex(uint64_t v) {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
    return buf;
}

// What the intermediate uses where the exec stage forks the process,
// computed by the runtime before the intermediate starts: vfork'ed, it runs
// on the runtime's memory, and what it allocated there on its way to the
// exec would never be freed. So it allocates nothing unless something
// fails (and frees that before it exits: intermediate_failed).
struct StagePlan {
    StagePlan() = default;
    StagePlan(const StagePlan &) = delete; // argv points into it
    oci::Process proc;                     // HOME set from the container's /etc/passwd
    MemoryPolicyPlan memory_policy;
    std::vector<unsigned long> initial_cpus; // execCPUAffinity.initial as a mask, or none
    std::vector<std::string> args;
    std::vector<char *> argv, envp;
    char tty[16] = "-1"; // argv[kJTerminal]: the pty peer's fd, once there is one
};

// The stage's arguments (exec_stage_protocol.hpp JoinArg), into `plan` where
// it stays (its argv points into it). `init_root`: the init's root, through
// which HOME is looked up.
Status plan_stage(const Child &c, pid_t init, int init_root, StagePlan &plan) {
    plan.proc = *c.proc;
    oci::Process &proc = plan.proc;
    set_home(proc, init_root);
    plan.memory_policy = OCI_TRY(memory_policy_plan(c.lx->memory_policy));
    if (auto cpus = OCI_TRY(initial_cpus(proc))) plan.initial_cpus = oci::bit_mask(*cpus);
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
    // The final CPU affinity, which the stage takes once in the cgroup.
    auto cpus = OCI_TRY(final_cpu_mask(proc));
    std::string affinity = cpus ? "" : "-";
    for (unsigned long word : cpus.value_or(std::vector<unsigned long>()))
        affinity += (affinity.empty() ? "" : ",") + hex(word);
    // setgroups in the container's user namespace, as its init has it.
    bool groups_may = groups.empty() && setgroups_denied(init);
    ExecCandidates files = exec_candidates(proc);
    plan.args = {
        exec_stage::kJoinName,
        std::to_string(c.sync_fd),
        std::to_string(c.stage_filters),
        !early                                               ? "0"
        : (m.bounding >> CAP_SYS_PTRACE & 1) && !c.in_userns ? "2"
                                                             : "1",
        hex(m.bounding),
        hex(limit),
        hex(m.effective),
        hex(m.permitted),
        hex(m.inheritable),
        hex(m.ambient),
        std::to_string(proc.user.uid),
        std::to_string(proc.user.gid),
        groups,
        groups_may ? "1" : "0",
        proc.no_new_privileges ? "1" : "0",
        nproc,
        "",       // kJTerminal: plan.tty
        proc.cwd, // kJCwd: "" once the intermediate has entered it
        c.detach ? "1" : "0",
        fault_action("exec-child:visible"),
        affinity,
        proc.args[0],
        files.dirs,
        std::to_string(files.files.size()),
    };
    plan.args.insert(plan.args.end(), files.files.begin(), files.files.end());
    plan.args.insert(plan.args.end(), proc.args.begin(), proc.args.end());
    plan.argv = exec_strings(plan.args);
    plan.argv[exec_stage::kJTerminal] = plan.tty;
    plan.envp = exec_strings(proc.env);
    return {};
}

// The intermediate's end where the exec stage forks the process
// (exec_stage.hpp): what exec_child sets up before the identity change is
// set here, where the process inherits it through the stage's exec and
// fork (signals, memory policy, scheduling, cwd and umask, the terminal's
// pty, no fd but its own beyond the preserved ones). The stage drops the
// bounding set and the capabilities, says ready, waits while the runtime
// moves it into what is left of the container's cgroup (where the
// intermediate was not born in it nor moved itself in), takes the final CPU
// affinity, forks
// the process as the runtime's child and says its PID; the process takes
// its session, terminal, filter and identity (src/exec_stage/main.cpp
// join_child). Returns only on failure; allocates nothing until then.
Status exec_through_stage(const Child &c, StagePlan &plan) {
    OCI_CHECK(reset_signals());
    OCI_CHECK(apply_memory_policy(plan.memory_policy));
    OCI_CHECK(apply_scheduling(plan.proc));
    if (OCI_TRY(apply_cwd_umask(plan.proc, true)))
        plan.argv[exec_stage::kJCwd] = const_cast<char *>("");
    int tty = -1;
    if (plan.proc.terminal) {
        tty = OCI_TRY(
            open_terminal(c.console_fd, plan.proc.console_size, plan.proc.user.uid, c.clear_onlcr));
        std::snprintf(plan.tty, sizeof plan.tty, "%d", tty);
    }
    OCI_CHECK(mark_fds_cloexec(c.preserve_fds));
    // These outlive the exec; the stage closes them or marks them.
    for (int fd : {c.sync_fd, c.stage_filters, tty})
        if (fd >= 0 && ::fcntl(fd, F_SETFD, 0) < 0)
            return fail_errno("exec stage: keep fd " + std::to_string(fd) + " open");
    ::syscall(SYS_execveat, c.stage, "", plan.argv.data(), plan.envp.data(), AT_EMPTY_PATH);
    return fail_errno("exec stage: execute oci-run-exec-stage");
}

// The intermediate's failure to the runtime, then its end: the message is
// copied out and `st` freed first (vfork'ed, what it holds is the
// runtime's memory).
[[noreturn]] void intermediate_failed(int sync_fd, Status st) {
    int code = st.error().code;
    char text[sizeof(sync::Packet::text)];
    std::snprintf(text, sizeof text, "%s", st.error().msg.c_str());
    st = Status{};
    (void)sync::send(sync_fd, sync::Msg::error, code, text);
    ::_exit(1);
}

// The runtime's child, in the host's PID namespace, where nothing in the
// container can see it. Without the exec stage: it waits for the runtime
// (which moves it into the container's cgroup), joins the container's PID
// namespace for its children and every other namespace, user first, then
// sets up what its child inherits (rlimits, the sandbox guard, the bounding
// set, capabilities cut down to what the process will hold plus
// CAP_SETUID, CAP_SETGID and CAP_SETPCAP for the identity change, and
// CAP_SYS_ADMIN only where the container's filter must go in before that
// change) and forks the process as the runtime's child (CLONE_PARENT). Its
// PID goes to the runtime in an init_hello. With the stage (`plan`,
// vfork_intermediate, or forked into the v2 cgroup): it moves itself into
// the v1 cgroups it was given (Child::cgroup_tasks), takes
// execCPUAffinity.initial, joins the namespaces, sets the rlimits and the
// guard as above, and ends in exec_through_stage; the stage waits for what
// is left of the cgroup. Returns only on failure.
Status intermediate(const Child &c, StagePlan *plan) {
    OCI_CHECK(set_death_signal(SIGKILL));
    for (auto [fd, dir] : c.cgroup_tasks) {
        OCI_CHECK(join_self(fd, dir));
        ::close(fd);
    }
    // process.oomScoreAdj, which the process inherits (as runc): first, as
    // the runtime's child in the host's namespaces.
    if (c.proc->oom_score_adj) OCI_CHECK(set_own_oom_score_adj(*c.proc->oom_score_adj));
    OCI_CHECK(set_dumpable(false));
    if (plan) {
        // The stage waits for proceed, once the runtime has moved it into
        // the cgroup.
        if (!plan->initial_cpus.empty() &&
            ::sched_setaffinity(0, plan->initial_cpus.size() * sizeof(unsigned long),
                                reinterpret_cast<cpu_set_t *>(plan->initial_cpus.data())) < 0)
            return fail_errno("process.execCPUAffinity.initial \"" +
                              plan->proc.exec_cpu_affinity->initial + "\": sched_setaffinity");
    } else {
        auto go = OCI_TRY(sync::receive(c.sync_fd, "exec"));
        if (go.type != sync::Msg::proceed) return fail("sync: unexpected message");
    }
    // The PID namespace first, while this process is still in the host's
    // user namespace (as root, it owns every other). An unprivileged
    // runtime may enter it only from the container's user namespace, which
    // owns it: right after that one.
    bool joins_user = std::any_of(c.ns.begin(), c.ns.end(),
                                  [](const auto &n) { return n.second == CLONE_NEWUSER; });
    bool pid_after_user = c.pidns_fd >= 0 && joins_user && ::geteuid() != 0;
    if (c.pidns_fd >= 0 && !pid_after_user && ::setns(c.pidns_fd, CLONE_NEWPID) < 0)
        return fail_errno("setns into the container's PID namespace");
    for (auto [fd, flag] : c.ns) {
        if (::setns(fd, flag) < 0)
            return fail_errno("setns " + std::string(ns_flag_name(flag)) + " namespace");
        // (After the first: a nested one, a sandbox policy's, comes later,
        // and holds no capability over the PID namespace.)
        if (flag == CLONE_NEWUSER && pid_after_user) {
            if (::setns(c.pidns_fd, CLONE_NEWPID) < 0)
                return fail_errno("setns into the container's PID namespace");
            pid_after_user = false;
        }
    }
    for (auto [fd, flag] : c.ns)
        ::close(fd);
    if (c.pidns_fd >= 0) ::close(c.pidns_fd);
    if (c.root_fd >= 0) {
        if (::fchdir(c.root_fd) < 0 || ::chroot(".") < 0 || ::chdir("/") < 0)
            return fail_errno("exec: chroot into the init's root");
        ::close(c.root_fd);
    }
    fault_point("exec-child:joined");
    if (c.in_userns) {
        if (::setresgid(0, 0, 0) < 0 || ::setresuid(0, 0, 0) < 0)
            return fail_errno("become root in the container's user namespace");
        // A change of credentials resets both: dumpable from
        // fs.suid_dumpable, the death signal to none.
        OCI_CHECK(set_dumpable(false));
        OCI_CHECK(set_death_signal(SIGKILL));
    }
    // RLIMIT_NPROC is checked when this process forks, against its user:
    // in a user namespace that is the container's root, whatever its
    // capabilities there, so the process sets that one itself.
    OCI_CHECK(apply_rlimits(*c.proc, c.in_userns ? Rlimits::but_nproc : Rlimits::all));
    // linux.personality, which the process inherits: before the guard, which
    // allows only the default.
    OCI_CHECK(set_personality(c.lx->personality));
    // The guard while this process holds CAP_SYS_ADMIN, so the process is
    // born under it; it allows what is left of the setup.
    if (c.guard) OCI_TRY(load_seccomp(*c.guard));
    if (plan) return exec_through_stage(c, *plan);
    oci::Capabilities none;
    const oci::Capabilities &caps = c.proc->capabilities ? *c.proc->capabilities : none;
    OCI_CHECK(drop_bounding(caps));
    uint64_t extra = 1ull << CAP_SETUID | 1ull << CAP_SETGID | 1ull << CAP_SETPCAP;
    if (c.seccomp && !c.proc->no_new_privileges) extra |= 1ull << CAP_SYS_ADMIN;
    if (c.proc->terminal) extra |= 1ull << CAP_CHOWN; // the pty to the process's uid
    // process.scheduler and ioPriority, which a real-time class needs.
    if (c.proc->scheduler || c.proc->io_priority) extra |= 1ull << CAP_SYS_NICE;
    OCI_CHECK(limit_capabilities(caps, extra));
    // The process waits on `release` until the runtime has its PID: nothing it
    // says (a notify fd, an error) may come before this process's hello.
    int release[2];
    if (::pipe2(release, O_CLOEXEC) < 0) return fail_errno("exec: pipe");
    long pid = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid < 0) return fail_errno("exec: clone");
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
    OCI_CHECK(sync::send(c.sync_fd, sync::Msg::init_hello, static_cast<int32_t>(pid)));
    if (::write(release[1], "g", 1) != 1) return fail_errno("exec: release the process");
    ::_exit(0);
}

[[noreturn]] void exec_intermediate(const Child &c, StagePlan *plan) {
    intermediate_failed(c.sync_fd, intermediate(c, plan));
}

// The intermediate for the exec stage, vfork'ed: it runs on this process's
// memory (which saves copying it and every copy-on-write fault after)
// while this process waits, until it execs the stage or dies. Nothing it
// does changes what this process uses afterwards: it works on copies (the
// fd table, the filesystem context, signal handlers and credentials are its
// own) and on `plan`, allocates nothing it does not free, never returns
// from here, and ends in exec or _exit.
pid_t vfork_intermediate(const Child &c, StagePlan &plan, int lock_fd, int our_end) {
    pid_t pid = ::vfork();
    if (pid == 0) {
        ::close(lock_fd);
        ::close(our_end);
        exec_intermediate(c, &plan);
    }
    return pid;
}

// The seccomp programs of an exec'd process (the profile of the
// config.json in the state directory, or the sandbox guard of the policy
// recorded there): the first exec of a container compiles them and keeps
// them beside those; a later exec whose key (this runtime's build,
// libseccomp's version, the process's bounding set and, for the guard, its
// socket families) is the same loads them. Keeping them is an
// optimization: when that fails, the next exec compiles again.
Result<SeccompFilter> kept_or_compiled(const ContainerDir &dir, KeptFilter which,
                                       const std::string &key,
                                       const std::function<Result<SeccompFilter>()> &compile) {
    if (auto kept = dir.load_compiled(which)) {
        if (auto f = read_compiled(*kept, key)) return std::move(*f);
        log::debug("exec: " + dir.path() + "/" + kept_filter_file(which) +
                   ": another build's or process's programs: compiled again");
    }
    auto f = compile();
    if (!f) return forward(std::move(f.error()), "exec");
    if (auto w = dir.save_compiled(which, write_compiled(*f, key)); !w)
        log::debug("exec: " + w.error().text() + " (the next exec compiles again)");
    return f;
}

} // namespace

Status apply_initial_cpu_affinity(pid_t pid, const oci::Process &p) {
    auto cpus = OCI_TRY(initial_cpus(p));
    if (!cpus) return {};
    return set_cpu_affinity(
        pid, *cpus, "process.execCPUAffinity.initial \"" + p.exec_cpu_affinity->initial + "\"");
}

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
    auto spec = dir.load_spec();
    if (!spec) return forward(std::move(spec.error()), "exec");
    oci::Process proc = OCI_TRY(build_process(o, *spec));
    const oci::Linux &lx = *spec->linux_;
    pid_t init = rec.state.pid;
    // An unprivileged runtime's init that has not exec'd (no stage) is
    // dumpable until start releases it (create.cpp dumpable_until_start):
    // a process joined now could ptrace it, before its seccomp filter and
    // capability drop. (It stays exec'd once it has.)
    if (::geteuid() != 0) {
        Fd at = OCI_TRY(open_process_dir(init, rec.init_start_time));
        if (forked_not_execed(init, at.get()))
            return fail("exec: container \"" + o.id +
                        "\" is created and an unprivileged runtime's init is open to its "
                        "user's processes until start: exec once it has started");
    }
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

    // The process's bounding set, which both filters' rules may depend on.
    static const std::vector<std::string> no_caps;
    const auto &caps = proc.capabilities ? proc.capabilities->bounding : no_caps;
    std::optional<SeccompFilter> filter;
    if (lx.seccomp)
        filter = OCI_TRY(kept_or_compiled(dir, KeptFilter::profile, seccomp_cache_key(caps),
                                          [&] { return compile_seccomp(*lx.seccomp, caps); }));
    // A container with a sandbox policy: its exec'd processes get the guard too.
    SandboxPolicy policy = OCI_TRY(container_policy(rec, *spec));
    // Its way out is the egress proxy, as for the container's process.
    if (policy.net.proxy()) add_proxy_env(proc.env);
    // In a joined namespace its firewall holds the need: no process there
    // may change it (as create refuses for the container's process).
    if (policy.net.own_namespace() && rec.netns_ino != 0 &&
        std::find(caps.begin(), caps.end(), "CAP_NET_ADMIN") != caps.end())
        return fail(
            "exec: process.capabilities: CAP_NET_ADMIN: dev.ocirun.network=" + policy.net.mode +
            " is held by the network namespace's firewall, which it could change");
    std::optional<SeccompFilter> guard;
    if (policy.present) {
        guard = OCI_TRY(kept_or_compiled(dir, KeptFilter::guard,
                                         seccomp_cache_key(caps) + " sockets " +
                                             socket_families(policy.net).text(),
                                         [&] { return compile_sandbox_guard(caps, policy.net); }));
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
    // The init's root, opened with its namespaces (before the liveness
    // recheck below, so that it is the container's): HOME is looked up
    // below it, and where the init chrooted into its rootfs in a mount
    // namespace not its own, the intermediate chroots into it.
    std::string root_link = "/proc/" + std::to_string(init) + "/root";
    Fd init_root(::open(root_link.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!init_root.valid()) return fail_errno("exec: open " + root_link);
    if (mount_ns_of(lx) != MountNs::own) c.root_fd = init_root.get();
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
    std::optional<StagePlan> plan;
    if (c.stage >= 0) {
        // HOME from the container's /etc/passwd, read below the init's root.
        OCI_CHECK(plan_stage(c, init, init_root.get(), plan.emplace()));
    }
    // The container's cgroup: every directory, and the init's cpuset cgroup
    // where the container has none of its own (runtime/cgroups/cgroup.hpp
    // v1_cpuset_only), which is not ours to assume.
    std::vector<std::string> join = rec.cgroup_dirs;
    if (!join.empty()) {
        std::string cs = borrowed_v1_cpuset(host, rec.cgroup_dirs, rec.state.pid);
        if (!cs.empty() && cs != borrowed_v1_cpuset(host, rec.cgroup_dirs, ::getpid()))
            join.push_back(cs);
    }
    // Through the stage the intermediate gets there without a write to
    // cgroup.procs, whose kernel lock waits for an RCU grace period (10-30
    // ms on an idle machine): born in the v2 directory (clone3), it moves
    // itself into the v1 ones first (their tasks files). Without the stage
    // (a sealed runtime: the container's user namespace maps this one's uid)
    // the same, before it waits for proceed. Not into a frozen cgroup (it
    // would stop before it said ready), not before execCPUAffinity.initial
    // (taken before the move), nor into a user's systemd scope (its manager
    // may have to move it): there the runtime moves the stage once it is
    // ready, or the intermediate before proceed, as it does with whatever is
    // left.
    Fd born_dir;
    std::vector<Fd> tasks;
    std::vector<std::string> self_joined; // (reserved: c.cgroup_tasks points into it)
    bool has_initial_cpus =
        c.stage >= 0 ? !plan->initial_cpus.empty()
                     : proc.exec_cpu_affinity && !proc.exec_cpu_affinity->initial.empty();
    if (!join.empty() && !paused && !rec.systemd_user && !has_initial_cpus) {
        std::string u = unified_dir(host, join);
        self_joined.reserve(join.size());
        for (auto &d : join)
            if (d != u) {
                tasks.push_back(OCI_TRY(open_tasks(host, d)));
                self_joined.push_back(std::move(d));
                c.cgroup_tasks.push_back({tasks.back().get(), self_joined.back().c_str()});
            }
        join.clear();
        if (!u.empty()) {
            born_dir = open_in_cgroup(host, u, O_PATH | O_DIRECTORY);
            if (!born_dir.valid()) return fail_errno("exec: cgroup: open " + u);
            join.push_back(std::move(u)); // unless clone3 puts it there
        }
    }
    // The intermediate (exec_intermediate) joins the container; the process
    // it (or the stage it execs) forks is our child.
    // Through the stage it runs on our memory (vfork_intermediate), unless
    // it is born in the v2 cgroup (a clone3 copy), or joins a time
    // namespace, which only a process with memory of its own may (the
    // kernel maps its clock pages: EUSERS).
    bool joins_time = std::any_of(c.ns.begin(), c.ns.end(),
                                  [](const auto &n) { return n.second == CLONE_NEWTIME; });
    int dumpable = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    close_cgroup_mounts(); // not the child's
    bool born_in_v2 = false;
    pid_t mid =
        born_dir.valid() ? static_cast<pid_t>(clone_into_cgroup(0, born_dir.get(), born_in_v2))
        : c.stage >= 0 && !joins_time
            ? vfork_intermediate(c, *plan, dir.fd(), sv[0])
            : static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
    if (mid < 0) return fail_errno("exec: clone");
    if (mid == 0) {
        ::close(dir.fd());
        ::close(sv[0]);
        if (born_dir.valid()) ::close(born_dir.get()); // the host's cgroup directory
        // Into a frozen cgroup it would stop where it is, and its copy of
        // the container's lock (this flock'ed fd, closed just above) would
        // hold resume off for good: it says so first.
        // (Through the stage, the stage says ready once this has exec'd it.)
        if (paused && c.stage < 0 && !sync::send(c.sync_fd, sync::Msg::ready)) ::_exit(1);
        exec_intermediate(c, plan ? &*plan : nullptr);
    }
    if (c.stage >= 0) {
        // Where it shared this process's memory until its exec, what it did
        // to its credentials reset the memory's dumpable flag: back as it was.
        if (dumpable >= 0) (void)::prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
        // The stage says ready; or the intermediate failed before its exec
        // and said why, or was killed (the socket's EOF).
        theirs.reset();
        auto said = sync::receive(ours.get(), "exec");
        if (!said || said->type != sync::Msg::ready) {
            if (said && said->type != sync::Msg::error) {
                kill_and_reap(mid);
                return fail("exec: sync: the exec stage did not start");
            }
            int status = 0;
            while (::waitpid(mid, &status, 0) < 0 && errno == EINTR) {
            }
            if (said) return forward(Error{said->value, said->text}, "exec");
            if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
            return forward(std::move(said.error()), "exec");
        }
    }
    theirs.reset();
    console.reset();
    ns_fds.clear();
    pidns.reset();
    init_root.reset();
    stage.reset();
    stage_filters_fd.reset();
    if (paused && c.stage < 0) {
        auto unlocked = sync::receive(ours.get(), "exec");
        if (!unlocked || unlocked->type != sync::Msg::ready) {
            kill_and_reap(mid);
            return fail("exec: sync: the intermediate did not start");
        }
    }
    fault_point("exec:cloned");
    // process.execCPUAffinity.initial: where the intermediate runs until it
    // is in the container's cgroup (runtime-spec 1.2.1); through the stage,
    // it took that itself first.
    if (c.stage < 0)
        if (Status st = apply_initial_cpu_affinity(mid, proc); !st) {
            kill_and_reap(mid);
            return forward(std::move(st.error()), "exec");
        }
    tasks.clear();                // (the intermediate's copies went with its exec)
    if (born_in_v2) join.clear(); // (it held the v2 directory alone)
    if (!join.empty()) {
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
    // Said by whoever holds the socket's other end: the process holds it
    // until its exec, and a container process with CAP_SYS_PTRACE could
    // take it (pidfd_getfd) and name any process. Only our own child (the
    // process is cloned with CLONE_PARENT) is waited for, signalled or
    // killed; our child's PID cannot be reused while we have not reaped it.
    siginfo_t own{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &own, WEXITED | WNOHANG | WNOWAIT) < 0)
        return fail("exec: sync: the hello named process " + std::to_string(pid) +
                    ", which is not this runtime's child: refused");
    // The process is in the container's cgroup and namespaces: the lock
    // goes now, not at its exec, which the container can hold off for good
    // (SIGSTOP from inside) and with it kill and delete.
    dir = ContainerDir();
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
    forward_signals_to(pid);
    auto status = master.valid() ? relay_terminal(master.release(), pid) : wait_exit_status(pid);
    forward_signals_to(0);
    if (!status) return forward(std::move(status.error()), "exec");
    return status;
}

} // namespace ocirun
