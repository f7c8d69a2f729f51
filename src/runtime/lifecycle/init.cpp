#include "runtime/lifecycle/init.hpp"

#include "oci/fd.hpp"
#include "oci/json.hpp"
#include "oci/spec_io.hpp"
#include "oci/state.hpp"
#include "oci/text.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/fault.hpp"
#include "runtime/filesystem/fs_policy.hpp"
#include "runtime/filesystem/mount_api.hpp"
#include "runtime/filesystem/rootfs.hpp"
#include "runtime/lifecycle/exec_stage.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/lifecycle/sync.hpp"
#include "runtime/network/netlink.hpp"
#include "runtime/process/namespaces.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/process/process_setup.hpp"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/nsfs.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace ocirun {

namespace {

// Nothing happens in the container until the runtime has written the id maps
// and this process is in the container's cgroup.
// `sources`: the binds' sources the runtime passes first (Msg::bind_source).
// The v1 hierarchies' cgroups it joins itself, each as its tasks file
// arrives (Msg::cgroup_join), which is closed at once: no host cgroup file
// stays open in the container (CVE-2024-21626).
Status wait_for_parent(const InitConfig &cfg, std::vector<Fd> &sources) {
    auto p = sync::receive(cfg.sync_fd, "the runtime");
    while (p && (p->type == sync::Msg::bind_source || p->type == sync::Msg::cgroup_join)) {
        if (p->type == sync::Msg::cgroup_join) {
            Fd tasks(p->fd);
            if (!tasks.valid()) return fail("sync: a cgroup's tasks file did not arrive");
            OCI_CHECK(join_self(tasks.get(), p->text));
        } else {
            sources.emplace_back(p->fd);
            if (!sources.back().valid()) return fail("sync: a bind's source did not arrive");
        }
        p = sync::receive(cfg.sync_fd, "the runtime");
    }
    if (!p) return forward(std::move(p.error()));
    if (p->type != sync::Msg::proceed) return fail("sync: unexpected message before setup");
    if (cfg.new_userns) {
        OCI_CHECK(set_dumpable(false));
        // Become root of the new user namespace.
        if (::setresgid(0, 0, 0) < 0) return fail_errno("setresgid 0 in the user namespace");
        if (::setresuid(0, 0, 0) < 0) return fail_errno("setresuid 0 in the user namespace");
        // The credential change cleared the death signal (and, from
        // fs.suid_dumpable, maybe set dumpable: that waits for the id maps).
        OCI_CHECK(set_death_signal(SIGKILL));
    }
    // Unshared here, not at clone: the namespace's root is the cgroup the
    // process is in, which is now the container's.
    if (cfg.new_cgroupns && ::unshare(CLONE_NEWCGROUP) < 0)
        return fail_errno("unshare cgroup namespace");
    return {};
}

Status join_namespaces(const InitConfig &cfg) {
    for (auto [fd, type] : cfg.join_ns)
        if (::setns(fd, type) < 0)
            return fail_errno(std::string("linux.namespaces: join the ") + ns_flag_name(type) +
                              " namespace");
    return {};
}

// A time namespace takes its offsets only before a process enters it, and
// clone(CLONE_NEWTIME) would enter at once: unshare (which creates it for
// children), write linux.timeOffsets, then move this process in through
// time_for_children, before anything reads a clock inside the container.
Status enter_time_namespace(const InitConfig &cfg) {
    if (!cfg.new_timens) return {};
    if (::unshare(CLONE_NEWTIME) < 0) return fail_errno("unshare time namespace");
    std::string offsets = time_offsets_text(*cfg.spec);
    if (!offsets.empty() && cfg.in_userns) {
        // This process is not dumpable: its /proc files belong to the host's
        // root, whom the runtime is (the kernel checks CAP_SYS_TIME in the
        // namespace's owner, which the host's root has).
        OCI_CHECK(sync::send(cfg.sync_fd, sync::Msg::time_offsets));
        auto r = sync::receive(cfg.sync_fd, "the runtime");
        if (!r) return forward(std::move(r.error()), "linux.timeOffsets");
        if (r->type != sync::Msg::proceed)
            return fail("linux.timeOffsets: sync: unexpected answer from the runtime");
    } else if (!offsets.empty()) {
        OCI_CHECK(write_existing_file("/proc/self/timens_offsets", offsets, "linux.timeOffsets"));
    }
    int ns = ::open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
    if (ns < 0) return fail_errno("open /proc/self/ns/time_for_children");
    int r = ::setns(ns, CLONE_NEWTIME);
    int e = errno;
    ::close(ns);
    if (r < 0) return fail_code(e, "setns into the new time namespace");
    return {};
}

Status new_session_keyring(const InitConfig &cfg) {
    if (cfg.no_new_keyring) return {};
    // A private session keyring so the container cannot read the host's keys.
    if (::syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, nullptr) < 0 && errno != ENOSYS &&
        errno != EACCES && errno != EPERM)
        return fail_errno("join a new session keyring");
    return {};
}

// The plan's hostname, domainname and sysctl operations. Sysctls go
// through a private procfs instance opened before the masks go on: a mount
// the configuration put over /proc/sys cannot redirect these writes
// (CVE-2025-52881).
Status set_names_and_sysctls(const std::vector<MountOp> &plan, int proc) {
    for (const MountOp &op : plan) {
        if (op.kind == MountOpKind::hostname &&
            ::sethostname(op.source.c_str(), op.source.size()) < 0)
            return fail_errno(op.what + ": sethostname");
        if (op.kind == MountOpKind::domainname &&
            ::setdomainname(op.source.c_str(), op.source.size()) < 0)
            return fail_errno(op.what + ": setdomainname");
        if (op.kind != MountOpKind::sysctl) continue;
        auto fd = open_proc_file(proc, op.dest, O_WRONLY);
        if (!fd) return forward(std::move(fd.error()), op.what);
        ssize_t n = ::write(fd->get(), op.source.data(), op.source.size());
        if (n < 0) return fail_errno(op.what + ": write /proc/" + op.dest);
    }
    return {};
}

bool plans(const std::vector<MountOp> &plan, MountOpKind k) {
    for (const MountOp &op : plan)
        if (op.kind == k) return true;
    return false;
}

// The plan's personality, for the init (the process inherits it).
Status set_planned_personality(const std::vector<MountOp> &plan) {
    for (const MountOp &op : plan)
        if (op.kind == MountOpKind::personality && ::personality(op.persona) < 0)
            return fail_errno(op.what);
    return {};
}

// terminal: a pty from the container's devpts; the master goes to the
// console socket (SCM_RIGHTS, as runc), the slave becomes stdio and the
// controlling terminal.
Status setup_terminal(const InitConfig &cfg) {
    const oci::Process &p = *cfg.spec->process;
    if (!p.terminal) return {};
    if (cfg.console_fd < 0) return fail("process.terminal: needs --console-socket");
    OCI_CHECK_CTX(attach_terminal(cfg.console_fd, p.console_size, p.user.uid, cfg.clear_onlcr),
                  "process.terminal");
    // /dev/console is a mount, made only in the container's own namespace.
    if (!shares_mount_ns(*cfg.mounts))
        OCI_CHECK_CTX(bind_console(STDIN_FILENO, dev_bound(*cfg.mounts)), "process.terminal");
    ::close(cfg.console_fd);
    return {};
}

// The state hooks read: the init's host PID comes from the runtime.
std::string hook_state(const InitConfig &cfg, oci::ContainerStatus status, int host_pid) {
    oci::State st;
    st.oci_version = oci::kSpecVersion;
    st.id = cfg.id;
    st.status = status;
    st.pid = host_pid;
    st.bundle = cfg.bundle;
    st.annotations = cfg.spec->annotations;
    return oci::write_state(st);
}

// Mounts are in place, pivot_root has not happened: the runtime runs prestart
// and createRuntime in its namespaces, then createContainer runs here, in the
// container's namespaces with host paths still reachable (runtime-spec).
Status create_hooks(const InitConfig &cfg, int &host_pid) {
    if (!cfg.create_hooks) return {};
    OCI_CHECK(sync::send(cfg.sync_fd, sync::Msg::hooks));
    auto p = sync::receive(cfg.sync_fd, "the runtime");
    if (!p) return forward(std::move(p.error()));
    if (p->type != sync::Msg::hooks_done) return fail("sync: unexpected message while in hooks");
    host_pid = p->value;
    // In the rootfs, as runc: hooks find ./lib and the like relative to it.
    return run_hooks(cfg.spec->hooks->create_container, "createContainer",
                     hook_state(cfg, oci::ContainerStatus::creating, host_pid), cfg.rootfs);
}

// Where the filter goes in: without no_new_privs it must be loaded while
// the init still holds CAP_SYS_ADMIN (before the identity); with it, as late
// as possible: right before exec, or before `ready` when the runtime must
// pass a notify fd on.
enum class FilterPoint { before_identity, before_ready, before_exec };
FilterPoint filter_point(const oci::Process &p, const SeccompFilter &f) {
    if (!p.no_new_privileges) return FilterPoint::before_identity;
    return f.notify ? FilterPoint::before_ready : FilterPoint::before_exec;
}

bool filter_at(const InitConfig &cfg, FilterPoint at) {
    return cfg.seccomp && filter_point(*cfg.spec->process, *cfg.seccomp) == at;
}

StageFds stage_fds(const InitConfig &cfg) {
    return {cfg.fifo_read_fd, cfg.fifo_write_fd, cfg.start_result_fd};
}

// A sandbox policy's masks must survive a process that holds every
// capability in its user namespace. The init moves into a nested user
// namespace and a new mount namespace owned by it: every mount, copied from
// the more privileged namespace, is then locked by the kernel (no umount, no
// move, no remount of locked flags), as bubblewrap does. The id maps of the
// nested namespace (the identity over the container's ids) are written by a
// helper left in the outer namespace, through the private procfs opened
// before any mask.
Status lock_mounts(const InitConfig &cfg, int procfs) {
    if (!cfg.lock_mounts) return {};
    std::string me = std::to_string(::getpid());
    // The identity over every id of the namespace this process is in (the
    // container's, or, without one, the runtime's: the host's, or the one
    // rootless Podman runs it in), from the inside column of its own maps.
    auto identity = [&](const char *file) -> Result<std::string> {
        Fd f = OCI_TRY(open_proc_file(procfs, me + "/" + file, O_RDONLY));
        auto text = oci::read_fd(f.get(), "/proc/" + me + "/" + file);
        if (!text) return forward(std::move(text.error()), "lock mounts");
        std::string t;
        for_each_line(*text, [&](std::string_view line) {
            auto w = words(line);
            if (w.size() == 3)
                t += std::string(w[0]) + " " + std::string(w[0]) + " " + std::string(w[2]) + "\n";
        });
        if (t.empty()) return fail(std::string("lock mounts: ") + file + ": no mapping");
        return t;
    };
    std::string uids = OCI_TRY(identity("uid_map")), gids = OCI_TRY(identity("gid_map"));
    // The helper is root of the container's user namespace, not of the
    // host's: it can open our /proc files only while we are dumpable. No
    // other process exists in the container yet.
    OCI_CHECK_CTX(set_dumpable(true), "lock mounts");
    int go[2];
    if (::pipe2(go, O_CLOEXEC) < 0) return fail_errno("lock mounts: pipe");
    pid_t helper = ::fork();
    if (helper == 0) {
        ::close(go[1]);
        char c;
        if (::read(go[0], &c, 1) != 1) ::_exit(2);
        for (auto [file, text] : {std::pair{"/uid_map", &uids}, std::pair{"/gid_map", &gids}}) {
            auto fd = open_proc_file(procfs, me + file, O_WRONLY);
            if (!fd) ::_exit(100 + (fd.error().code & 63));
            if (::write(fd->get(), text->data(), text->size()) < 0) ::_exit(160 + (errno & 63));
        }
        ::_exit(0);
    }
    ::close(go[0]);
    if (helper < 0) {
        ::close(go[1]);
        return fail_errno("lock mounts: fork");
    }
    int r = ::unshare(CLONE_NEWUSER | CLONE_NEWNS);
    int e = errno;
    (void)!::write(go[1], "x", 1);
    ::close(go[1]);
    int status = 0;
    while (::waitpid(helper, &status, 0) < 0 && errno == EINTR) {
    }
    if (r < 0) return fail_code(e, "lock mounts: unshare a nested user and mount namespace");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fail("lock mounts: the id maps of the nested user namespace were not written (" +
                    std::string(WIFEXITED(status) && WEXITSTATUS(status) >= 160
                                    ? std::strerror(WEXITSTATUS(status) - 160)
                                : WIFEXITED(status) && WEXITSTATUS(status) >= 100
                                    ? std::strerror(WEXITSTATUS(status) - 100)
                                    : "the helper failed") +
                    ")");
    if (::setresgid(0, 0, 0) < 0 || ::setresuid(0, 0, 0) < 0)
        return fail_errno("lock mounts: become root of the nested user namespace");
    // After the credential change, which sets dumpable from
    // fs.suid_dumpable and clears the death signal.
    OCI_CHECK_CTX(set_dumpable(false), "lock mounts");
    OCI_CHECK_CTX(set_death_signal(SIGKILL), "lock mounts");
    return {};
}

// Another way to a rule's object refuses the container in strict mode,
// naming both paths. Otherwise the runtime records every rule, way and
// placeholder (for `report`, and for delete to remove the placeholders).
Status report_fs_rules(const InitConfig &cfg, const FsPlan &fs) {
    auto rule_name = [&](const FsRule &r) {
        return r.what + (r.resolved != r.path ? " (" + r.resolved + ")" : "");
    };
    auto send = [&](sync::Msg type, int32_t value, json::Writer &w) -> Status {
        if (w.view().size() >= sizeof(sync::Packet::text))
            return fail("sandbox policy: a path too long to report to the runtime");
        return sync::send(cfg.sync_fd, type, value, std::string(w.view()).c_str());
    };
    // First what was made on the host, which the runtime removes if the
    // container does not come to be.
    for (const MadeDir &m : fs.made) {
        json::Writer w(false);
        w.begin_object()
            .kv("path", m.path)
            .kv_u64("major", m.region.major)
            .kv_u64("minor", m.region.minor)
            .kv("fsPath", m.region.path)
            .kv_u64("ino", m.ino)
            .end_object();
        OCI_CHECK(send(sync::Msg::fs_made, 0, w));
    }
    if (cfg.policy_strict && !fs.ways.empty()) {
        const FsWay &w = fs.ways[0];
        return fail(
            rule_name(fs.rules[w.rule]) +
            (w.path.empty() ? ": " + w.how : " is also reachable at " + w.path + ": " + w.how) +
            " (dev.ocirun.enforcement=strict)");
    }
    for (size_t i = 0; i < fs.rules.size(); i++) {
        const FsRule &r = fs.rules[i];
        json::Writer w(false);
        w.begin_object()
            .kv("kind", fs_rule_kind(r.kind))
            .kv("path", r.path)
            .kv("resolved", r.resolved)
            .kv_bool("made", r.made)
            .end_object();
        OCI_CHECK(send(sync::Msg::fs_rule, static_cast<int32_t>(i), w));
    }
    for (const FsWay &way : fs.ways) {
        json::Writer w(false);
        w.begin_object().kv("path", way.path).kv("how", way.how).end_object();
        OCI_CHECK(send(sync::Msg::fs_way, static_cast<int32_t>(way.rule), w));
    }
    return {};
}

// Block until `start` writes to the exec fifo.
Status wait_for_start(const InitConfig &cfg) {
    int flags = ::fcntl(cfg.fifo_read_fd, F_GETFL);
    ::fcntl(cfg.fifo_read_fd, F_SETFL, flags & ~O_NONBLOCK);
    char c;
    ssize_t n;
    while ((n = ::read(cfg.fifo_read_fd, &c, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) return fail_errno("wait for start");
    // Before anything runs in the container (a startContainer hook is forked
    // from this process).
    if (cfg.dumpable_until_start) OCI_CHECK_CTX(set_dumpable(false), "start");
    ::close(cfg.fifo_read_fd);
    ::close(cfg.fifo_write_fd);
    return {};
}

// The sockets the network helper accepts on: made here, in the container's
// network namespace, which a listening socket keeps wherever it goes.
Status pass_listeners(const InitConfig &cfg) {
    for (uint16_t port : cfg.listen_ports) {
        Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (!s.valid()) return fail_errno("dev.ocirun.network: socket");
        int on = 1;
        (void)::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        struct sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        std::string where = "127.0.0.1:" + std::to_string(port);
        if (::bind(s.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) < 0)
            return fail_errno("dev.ocirun.network: bind " + where);
        if (::listen(s.get(), SOMAXCONN) < 0)
            return fail_errno("dev.ocirun.network: listen on " + where);
        OCI_CHECK(sync::send_with_fd(cfg.sync_fd, sync::Msg::listener, s.get()));
    }
    // The DNS stub's: UDP, and TCP (a client retries a truncated answer
    // there, and some ask there first).
    for (int type : {SOCK_DGRAM, SOCK_STREAM}) {
        if (!cfg.dns_port) break;
        const char *proto = type == SOCK_DGRAM ? "udp" : "tcp";
        Fd s(::socket(AF_INET, type | SOCK_CLOEXEC, 0));
        if (!s.valid()) return fail_errno(std::string("dev.ocirun.network: DNS stub: ") + proto);
        struct sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_port = htons(cfg.dns_port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        std::string where = std::string(proto) + " 127.0.0.1:" + std::to_string(cfg.dns_port);
        if (::bind(s.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) < 0)
            return fail_errno("dev.ocirun.network: DNS stub: bind " + where);
        if (type == SOCK_STREAM && ::listen(s.get(), SOMAXCONN) < 0)
            return fail_errno("dev.ocirun.network: DNS stub: listen on " + where);
        OCI_CHECK(sync::send_with_fd(cfg.sync_fd, sync::Msg::listener, s.get()));
    }
    return {};
}

// The process's exec through oci-run-exec-stage: everything it needs but
// the fds, fixed while the init may still report an error. The filter that
// goes in after start is loaded by the stage (exec_stage_for left it only
// that one; the sandbox guard is in already).
Status prepare_stage(const InitConfig &cfg, const oci::Process &proc, ExecStage &stage) {
    std::vector<const SeccompFilter *> filters;
    if (filter_at(cfg, FilterPoint::before_exec)) filters.push_back(cfg.seccomp);
    return prepare_exec_stage(stage, proc, filters, stage_fds(cfg));
}

// `proc`: the init's copy of process, which gets HOME where it has none.
Status setup(const InitConfig &cfg, oci::Process &proc, int &host_pid, ExecStage &stage,
             Status &stage_view) {
    const oci::Spec &spec = *cfg.spec;
    std::vector<Fd> sources;
    OCI_CHECK(wait_for_parent(cfg, sources));
    if (!stage_view) return forward(std::move(stage_view.error()));
    fault_point("init:setup");
    OCI_CHECK(join_namespaces(cfg));
    OCI_CHECK(enter_time_namespace(cfg));
    if (::setsid() < 0) return fail_errno("setsid");
    OCI_CHECK(new_session_keyring(cfg));
    std::vector<int> passed;
    for (const Fd &s : sources)
        passed.push_back(s.get());
    std::vector<OverlayLayer> layers;
    RootfsContext rootfs{cfg.rootfs,       cfg.no_pivot,      cfg.rootfs_fd,      cfg.reach_guards,
                         cfg.linked_files, std::move(passed), cfg.passes_sources, &layers};
    OCI_CHECK_CTX(prepare_rootfs(*cfg.mounts, rootfs), "rootfs");
    sources.clear();
    // The host objects the runtime opened for its checks: needed no more, and
    // not to stay reachable as /proc/self/fd/N (CVE-2024-21626).
    for (const MountOp &op : *cfg.mounts)
        if (op.source_fd >= 0) ::close(op.source_fd);
    fault_point("init:mounted");
    OCI_CHECK(create_hooks(cfg, host_pid));
    OCI_CHECK_CTX(enter_rootfs(*cfg.mounts, rootfs), "rootfs");
    if (cfg.rootfs_fd >= 0) ::close(cfg.rootfs_fd);
    // Before the masked paths go over parts of /proc (a user namespace may not
    // mount a procfs that is not fully visible).
    Fd procfs;
    if (plans(*cfg.mounts, MountOpKind::sysctl) || cfg.lock_mounts)
        procfs = OCI_TRY(private_proc());
    OCI_CHECK(setup_terminal(cfg));
    // The policy's deny, deny-write and deny-rename on the objects their
    // paths name, with every other way to them (runtime/filesystem/fs_policy.hpp).
    FsPlan fs;
    if (cfg.lock_mounts) {
        Fd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!root.valid()) return fail_errno("open /");
        fs = OCI_TRY(prepare_fs_rules(root.get(), procfs.get(), *cfg.mounts, layers));
        OCI_CHECK(report_fs_rules(cfg, fs));
    }
    OCI_CHECK_CTX(finish_rootfs(*cfg.mounts, cfg.lock_mounts ? &fs : nullptr), "rootfs");
    // The container's /etc/passwd, read as root before the identity change.
    set_home(proc);
    OCI_CHECK(set_names_and_sysctls(*cfg.mounts, procfs.get()));
    if (cfg.loopback_up) OCI_CHECK_CTX(loopback_up(), "network namespace");
    OCI_CHECK(pass_listeners(cfg));
    OCI_CHECK(lock_mounts(cfg, procfs.get()));
    OCI_CHECK(set_planned_personality(*cfg.mounts));
    OCI_CHECK(set_memory_policy(spec.linux_->memory_policy));
    OCI_CHECK(apply_rlimits(proc));
    OCI_CHECK(apply_scheduling(proc));
    // What the runtime does itself comes before the container's filter:
    // without no_new_privs that filter goes in before the identity change
    // (loading it then needs CAP_SYS_ADMIN), and only the change and the
    // exec may run under it (an allow-list need not know close_range).
    OCI_CHECK(reset_signals());
    OCI_CHECK(reset_cpu_affinity());
    bool in_cwd = OCI_TRY(apply_cwd_umask(proc, true));
    bool early_filter = filter_at(cfg, FilterPoint::before_identity);
    if (early_filter) OCI_CHECK(find_executable(proc)); // as root: the filter follows
    OCI_CHECK(mark_fds_cloexec(cfg.preserve_fds));
    if (early_filter) OCI_CHECK(load_seccomp_and_pass(cfg.sync_fd, *cfg.seccomp));
    // The sandbox guard while the init still holds CAP_SYS_ADMIN, with or
    // without no_new_privs: from here on nothing in the container (the init
    // waiting for start, the exec stage) runs without it. It allows what the
    // rest of the setup and the exec need.
    if (cfg.guard) OCI_CHECK(load_seccomp(*cfg.guard));
    OCI_CHECK(apply_identity(proc));
    // The identity change cleared it; until ready the init dies with the
    // runtime.
    OCI_CHECK(set_death_signal(SIGKILL));
    if (!in_cwd) in_cwd = OCI_TRY(apply_cwd_umask(proc, false));
    if (!early_filter) OCI_CHECK(find_executable(proc)); // as the process's user
    if (stage.view.valid()) OCI_CHECK(prepare_stage(cfg, proc, stage));
    if (filter_at(cfg, FilterPoint::before_ready))
        OCI_CHECK(load_seccomp_and_pass(cfg.sync_fd, *cfg.seccomp));
    return {};
}

} // namespace

void run_init(const InitConfig &cfg) {
    // A host cgroup directory must not stay reachable as /proc/self/fd/N
    // (CVE-2024-21626); it was only needed by clone3.
    if (cfg.cgroup_fd >= 0) ::close(cfg.cgroup_fd);
    auto die = [&](const Error &e) {
        sync::send_error(cfg.sync_fd, e);
        ::_exit(1);
    };
    // Die with the runtime while setting up; cleared once ready.
    if (auto r = set_death_signal(SIGKILL); !r) die(r.error());
    // Non-dumpable: no process in the container without CAP_SYS_PTRACE can
    // open /proc/PID/exe or ptrace this process while it sets up. (What the
    // link reaches is the sealed copy anyway: runtime/lifecycle/sealed_binary.hpp.)
    // With a new user namespace this waits until the runtime has written the
    // id maps, which an unprivileged runtime can do only while the init is
    // dumpable; nothing runs in the container before that.
    if (!cfg.new_userns)
        if (auto r = set_dumpable(false); !r) die(r.error());
    int host_pid = 0;
    if (cfg.report_pid && !sync::send(cfg.sync_fd, sync::Msg::init_hello)) ::_exit(1);
    // The stage's sealed view is made now, while the runtime finishes the
    // cgroups and id maps (the init waits for those anyway); a failure is
    // reported once it can be.
    ExecStage stage;
    Status stage_view;
    if (!cfg.exec_stage.empty()) {
        if (auto v = open_exec_stage(cfg.exec_stage))
            stage.view = std::move(*v);
        else
            stage_view = forward(std::move(v.error()));
    }
    oci::Process process = *cfg.spec->process;
    if (auto r = setup(cfg, process, host_pid, stage, stage_view); !r) die(r.error());
    fault_point("init:ready");
    if (auto r = set_death_signal(0); !r) die(r.error());
    if (cfg.dumpable_until_start)
        if (auto r = set_dumpable(true); !r) die(r.error());
    if (!sync::send(cfg.sync_fd, sync::Msg::ready)) {
        ::_exit(1);
    }
    // With the stage, the sync socket stays open until its exec closes it
    // (CLOEXEC): the runtime waits for that before create returns.
    if (!stage.view.valid()) ::close(cfg.sync_fd);
    Error e;
    const oci::Spec &spec = *cfg.spec;
    if (stage.view.valid()) {
        fault_point("init:staging");
        e = enter_exec_stage(stage, process, stage_fds(cfg));
    } else if (auto w = wait_for_start(cfg); !w)
        e = w.error();
    else if (auto h = spec.hooks
                          ? run_hooks(spec.hooks->start_container, "startContainer",
                                      hook_state(cfg, oci::ContainerStatus::created, host_pid))
                          : Status{};
             !h)
        e = h.error();
    else if (auto f = filter_at(cfg, FilterPoint::before_exec) ? load_seccomp(*cfg.seccomp)
                                                               : Result<int>(-1);
             !f)
        e = f.error();
    else
        e = exec_process(process);
    for (char &c : e.msg)
        if (c == '\n') c = ' ';
    // `start` reads this line from the start fifo and fails with it (one
    // write, shorter than PIPE_BUF, so it arrives whole).
    std::string line = std::to_string(e.code) + " " + e.msg.substr(0, 2048) + "\n";
    (void)!::write(cfg.start_result_fd, line.data(), line.size());
    ::_exit(127);
}

bool spawns_through_intermediate(const InitConfig &cfg, int userns_fd) {
    return userns_fd >= 0 || (cfg.new_userns && !cfg.join_ns.empty());
}

void spawn_init_in_user_ns(const InitConfig &given, int userns_fd, int pidns_fd,
                           unsigned long flags) {
    auto die = [&](const Error &e) {
        sync::send_error(given.sync_fd, e);
        ::_exit(1);
    };
    if (auto r = set_death_signal(SIGKILL); !r) die(r.error());
    // A namespace joined by path that the joined user namespace does not own
    // (a network namespace a pod's parent made): once in that user
    // namespace this process holds no capability over it, so it is joined
    // now, as the host's root; the others after, in the init.
    InitConfig cfg = given;
    if (userns_fd < 0) {
        if (auto r = join_namespaces(cfg); !r) die(r.error());
        cfg.join_ns.clear();
        long pid = ::syscall(SYS_clone, CLONE_PARENT | flags, nullptr, nullptr, nullptr, nullptr);
        if (pid == 0) run_init(cfg);
        if (pid < 0) die(Error{errno, "clone the init"});
        ::_exit(0);
    }
    struct stat target;
    if (::fstat(userns_fd, &target) < 0)
        die(Error{errno, "linux.namespaces: stat the user namespace"});
    std::vector<std::pair<int, int>> later;
    // The PID namespace goes first among those joined as the host's root,
    // and last from the joined user namespace: it is not in cfg.join_ns (the
    // init does not join it: only its children would be in it).
    bool pid_later = pidns_fd >= 0 && owned_within(pidns_fd, target);
    if (pidns_fd >= 0 && !pid_later && ::setns(pidns_fd, CLONE_NEWPID) < 0)
        die(Error{errno, "linux.namespaces: join the pid namespace (not owned by the joined "
                         "user namespace)"});
    for (auto [fd, type] : cfg.join_ns) {
        if (owned_within(fd, target)) {
            later.push_back({fd, type});
            continue;
        }
        if (::setns(fd, type) < 0)
            die(Error{errno, std::string("linux.namespaces: join the ") + ns_flag_name(type) +
                                 " namespace (not owned by the joined user namespace)"});
    }
    cfg.join_ns = std::move(later);
    if (::setns(userns_fd, CLONE_NEWUSER) < 0)
        die(Error{errno, "linux.namespaces: join the user namespace"});
    ::close(userns_fd);
    if (::setresgid(0, 0, 0) < 0 || ::setresuid(0, 0, 0) < 0)
        die(Error{errno, "linux.namespaces: become uid/gid 0 in the joined user namespace "
                         "(is 0 mapped there?)"});
    if (pid_later && ::setns(pidns_fd, CLONE_NEWPID) < 0)
        die(Error{errno, "linux.namespaces: join the pid namespace"});
    if (::unshare(static_cast<int>(flags & ~static_cast<unsigned long>(CLONE_NEWPID))) < 0)
        die(Error{errno, "unshare the container's namespaces in the joined user namespace"});
    long pid = ::syscall(SYS_clone, CLONE_PARENT | (flags & CLONE_NEWPID), nullptr, nullptr,
                         nullptr, nullptr);
    if (pid == 0) run_init(cfg);
    if (pid < 0) die(Error{errno, "clone the init"});
    ::_exit(0);
}

} // namespace ocirun
