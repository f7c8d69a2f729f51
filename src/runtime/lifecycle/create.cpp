#include "runtime/lifecycle/container.hpp"
#include "runtime/lifecycle/container_impl.hpp"

#include "oci/fd.hpp"
#include "oci/json.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "oci/text.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/cgroups/systemd_driver.hpp"
#include "runtime/fault.hpp"
#include "runtime/filesystem/host_reach.hpp"
#include "runtime/filesystem/mount_api.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/filesystem/mount_table.hpp"
#include "runtime/lifecycle/exec_stage.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/lifecycle/init.hpp"
#include "runtime/lifecycle/pod_network.hpp"
#include "runtime/lifecycle/store.hpp"
#include "runtime/lifecycle/sync.hpp"
#include "runtime/lifecycle/tty_relay.hpp"
#include "runtime/log.hpp"
#include "runtime/network/firewall.hpp"
#include "runtime/network/netlink.hpp"
#include "runtime/network/shim_launch.hpp"
#include "runtime/process/caps.hpp"
#include "runtime/process/namespaces.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/process/spawn.hpp"
#include "runtime/process/userns.hpp"
#include "runtime/security/report.hpp"
#include "runtime/security/sandbox_policy.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>

namespace ocirun {

namespace {

Result<std::string> absolute_path(const std::string &path, const std::string &what) {
    char *r = ::realpath(path.c_str(), nullptr);
    if (!r) return fail_errno(what + " " + path);
    std::string s = r;
    free(r);
    return s;
}

// The first limit linux.resources sets (a device rule is none), or "".
std::string first_limit(const oci::Linux &lx) {
    if (!lx.resources) return "";
    const oci::Resources &r = *lx.resources;
    for (auto [set, name] : {std::pair{bool(r.memory), "memory"},
                             {bool(r.cpu), "cpu"},
                             {bool(r.pids), "pids"},
                             {bool(r.block_io), "blockIO"},
                             {!r.hugepage_limits.empty(), "hugepageLimits"},
                             {bool(r.network), "network"},
                             {!r.rdma.empty(), "rdma"},
                             {!r.unified.empty(), "unified"}})
        if (set) return name;
    return "";
}

// Every container gets its cgroup, but a rootless one only when the
// configuration asks for one (it needs a delegated subtree), as in runc.
bool wants_cgroup(const oci::Spec &spec, bool rootless) {
    const oci::Linux &lx = *spec.linux_;
    if (!rootless) return true;
    if (!lx.cgroups_path.empty()) return true;
    return !first_limit(lx).empty();
}

// In a user namespace the init resolves a bind's source as the container's
// root, which a host directory may refuse (0700 of the host's root): each
// source is opened here, as the host's root, through /proc/<init>/root (so
// it is a mount of the init's namespace, its flags locked there), checked to
// be the object the checks saw, and sent to the init in plan order.
Status pass_bind_sources(int sync_fd, pid_t init, const std::vector<MountOp> &plan) {
    for (const MountOp &op : plan) {
        if (!passes_source(op)) continue;
        std::string path = OCI_TRY(path_of_fd(op.source_fd));
        std::string in_init = "/proc/" + std::to_string(init) + "/root" + path;
        Fd fd(::open(in_init.c_str(), O_PATH | O_CLOEXEC));
        if (!fd.valid()) return fail_errno(op.what + ": open the source " + op.source);
        struct stat a, b;
        if (::fstat(fd.get(), &a) < 0 || ::fstat(op.source_fd, &b) < 0 || a.st_dev != b.st_dev ||
            a.st_ino != b.st_ino)
            return fail(op.what + ": the source " + op.source + " changed after it was checked");
        OCI_CHECK(sync::send_with_fd(sync_fd, sync::Msg::bind_source, fd.get()));
    }
    return {};
}

// `cap` in the process's bounding set.
bool holds_capability(const oci::Spec &spec, const char *cap) {
    if (!spec.process || !spec.process->capabilities) return false;
    for (const auto &c : spec.process->capabilities->bounding)
        if (c == cap) return true;
    return false;
}

bool holds_admin(const oci::Spec &spec) {
    return holds_capability(spec, "CAP_SYS_ADMIN");
}

// An idmapped bind is a copy the runtime makes of the host's mount, and the
// kernel locks no flag of it in the container's user namespace (it locks
// them only when it copies a mount namespace): a process there with
// CAP_SYS_ADMIN could remount a host read-only (nosuid, nodev, noexec)
// mount writable through it. Refused then, unless the sandbox policy's
// nested namespace locks every mount (runtime/lifecycle/init.cpp lock_mounts).
Status check_idmap_locks(const std::vector<MountOp> &plan, const oci::Spec &spec, bool in_userns,
                         bool locked) {
    if (!in_userns || locked || !holds_admin(spec)) return {};
    for (const MountOp &op : plan) {
        if (op.kind != MountOpKind::mount || !op.options.idmap || op.source_fd < 0) continue;
        struct statvfs sv;
        if (::fstatvfs(op.source_fd, &sv) < 0)
            return fail_errno(op.what + ": idmap: statvfs the source " + op.source);
        uint64_t attrs = statvfs_attrs(sv.f_flag);
        std::string flags;
        for (auto [bit, name] :
             {std::pair{MOUNT_ATTR_RDONLY, "ro"}, std::pair{MOUNT_ATTR_NOSUID, "nosuid"},
              std::pair{MOUNT_ATTR_NODEV, "nodev"}, std::pair{MOUNT_ATTR_NOEXEC, "noexec"}})
            if (attrs & bit) flags += (flags.empty() ? "" : ",") + std::string(name);
        if (!flags.empty())
            return fail(op.what + ": idmap: the source " + op.source + " is " + flags +
                        " on the host, which the container's user namespace would not keep " +
                        "locked on an idmapped copy, and the process holds CAP_SYS_ADMIN there " +
                        "(it could clear them); refused (drop idmap, or CAP_SYS_ADMIN)");
    }
    return {};
}

// CAP_SYS_ADMIN without a user namespace: such a container can mount the
// cpuset hierarchy, whose root in its cgroup namespace would be the caller's
// cgroup if it had none of its own, so it always gets one.
bool admin_on_host(const oci::Spec &spec) {
    return !spec.linux_->find_namespace(oci::NsType::user) && holds_admin(spec);
}

// What the runtime refuses before anything is created.
Status check_supported(const oci::Spec &spec, const CreateOptions &o) {
    const oci::Linux &lx = *spec.linux_;
    if (::geteuid() != 0 && !lx.find_namespace(oci::NsType::user))
        return fail("config.json: linux.namespaces: an unprivileged user needs a user namespace "
                    "(oci-run spec --rootless writes one)");
    if (spec.process->terminal && o.console_socket.empty() && o.console_fd < 0)
        return fail("config.json: process.terminal is true: --console-socket is required "
                    "(or run in the foreground)");
    if (!spec.process->terminal && !o.console_socket.empty())
        return fail("--console-socket given but process.terminal is false");
    // What is not enforced yet is refused, never skipped (fail closed).
    auto pending = [](const char *field) {
        return fail(std::string("config.json: ") + field + ": not implemented yet");
    };
    if (lx.intel_rdt) {
        // The spec's MUST: no resctrl mounted here is an error.
        bool resctrl = false;
        if (auto info = oci::read_file("/proc/self/mountinfo"))
            for_each_line(*info, [&](std::string_view line) {
                size_t dash = line.find(" - ");
                if (dash != line.npos && line.substr(dash + 3).starts_with("resctrl "))
                    resctrl = true;
            });
        if (!resctrl)
            return fail("config.json: linux.intelRdt: no resctrl filesystem is mounted on this "
                        "host (mount -t resctrl resctrl /sys/fs/resctrl)");
        return pending("linux.intelRdt");
    }
    if (!lx.net_devices.empty()) {
        if (!lx.find_namespace(oci::NsType::network))
            return fail("config.json: linux.netDevices needs a network namespace in "
                        "linux.namespaces (the devices would stay in the host's)");
        if (!host_root())
            return fail("config.json: linux.netDevices: moving a host interface needs root");
        auto bad_name = [](const std::string &n) {
            return n.empty() || n.size() >= IFNAMSIZ || n == "." || n == ".." ||
                   n.find_first_of("/: \t\n") != std::string::npos;
        };
        for (const auto &[name, dev] : lx.net_devices)
            if (bad_name(name) || (!dev.name.empty() && bad_name(dev.name)))
                return fail("config.json: linux.netDevices[" + name + "]: \"" +
                            (bad_name(name) ? name : dev.name) + "\" is not an interface name");
    }
    // An LSM the host does not have is refused, naming it (as runc's
    // validator); applying one where the host has it is not implemented yet.
    // The host is asked only when a field names one (each lookup in /sys
    // waits on the lock other creates take to add their network devices).
    auto apparmor = [] {
        return oci::read_file("/sys/module/apparmor/parameters/enabled", 0, 64)
            .value_or("")
            .starts_with("Y");
    };
    auto selinux = [] { return ::access("/sys/fs/selinux/enforce", F_OK) == 0; };
    auto lsm = [&](const char *field, const std::string &value, bool (*on)(),
                   const char *name) -> Status {
        if (value.empty()) return {};
        if (!on())
            return fail(std::string("config.json: ") + field + " \"" + value + "\": " + name +
                        " is not enabled on this host");
        return pending(field);
    };
    OCI_CHECK(lsm("linux.mountLabel", lx.mount_label, selinux, "SELinux"));
    OCI_CHECK(lsm("process.apparmorProfile", spec.process->apparmor_profile, apparmor, "AppArmor"));
    OCI_CHECK(lsm("process.selinuxLabel", spec.process->selinux_label, selinux, "SELinux"));
    return {};
}

struct Fds {
    std::vector<int> fds;
    ~Fds() {
        for (int fd : fds)
            if (fd >= 0) ::close(fd);
    }
    int add(int fd) {
        fds.push_back(fd);
        return fd;
    }
    // Close `fd` now (it is then skipped by the destructor).
    void close_now(int fd) {
        for (int &f : fds)
            if (f == fd) {
                ::close(f);
                f = -1;
            }
    }
};

// The network helper, with the init's listening sockets and (for published
// ports) a handle on its network namespace.
Result<ShimProcess> start_network_helper(const std::string &id, const std::string &state_dir,
                                         pid_t init, const std::vector<Fd> &listeners,
                                         const NetworkPolicy &net, const CgroupHost &host,
                                         const std::vector<std::string> &cgroup_dirs) {
    ShimLaunch l;
    // Its cgroup under the container's (removed with it by destroy_cgroup).
    SpawnSpec where;
    OCI_CHECK(place_in_helper_cgroup(where, host, cgroup_dirs, "network helper"));
    l.cgroups = std::move(where.cgroups);
    l.born_in = std::move(where.born_in);
    l.id = id;
    l.state_dir = state_dir;
    l.init = init;
    l.net = &net;
    for (const auto &f : listeners)
        l.listeners.push_back(f.get());
    Fd netns;
    if (!net.publish.empty()) {
        auto fd = open_namespace(init, "net");
        if (!fd) return forward(std::move(fd.error()), "network helper");
        netns = std::move(*fd);
        l.netns_fd = netns.get();
    }
    return spawn_shim(l);
}

// linux.netDevices: into the container's network namespace, renamed on the
// way, with the addresses they had, and up. One joined by path (`net_fd`,
// the init enters it only after proceed) is named to the helper through this
// process's descriptor of it, the namespace that was checked: the path in
// config.json may lead elsewhere by now.
Status move_net_devices(const oci::Linux &lx, pid_t init, int net_fd) {
    if (lx.net_devices.empty()) return {};
    std::string netns =
        net_fd >= 0 ? "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(net_fd)
                    : "/proc/" + std::to_string(init) + "/ns/net";
    for (const auto &[name, dev] : lx.net_devices)
        OCI_CHECK(move_net_device(name, dev.name, netns));
    return {};
}

// Start the container's init: one clone into all new namespaces or, with a
// user namespace joined by path (or a new one and namespaces joined by path),
// through an intermediate that joins them first.
// `runtime_fds`: the runtime's own ends (sync socket, run's start channel),
// closed in the child. `born_in_v2`: whether the init was born in the v2
// cgroup `cgroup_fd`.
Result<pid_t> spawn_init(const InitConfig &cfg, ContainerDir &dir, Fds &fds, int parent_sock,
                         std::initializer_list<int> runtime_fds, int user_ns_fd, int pid_ns_fd,
                         unsigned long flags, int cgroup_fd, bool &born_in_v2) {
    const bool via = spawns_through_intermediate(cfg, user_ns_fd);
    pid_t pid =
        static_cast<pid_t>(clone_into_cgroup(via ? 0 : flags, via ? -1 : cgroup_fd, born_in_v2));
    if (pid < 0) return fail_errno("clone");
    if (pid == 0) {
        ::close(dir.fd()); // the lock belongs to the runtime, not the container
        ::close(parent_sock);
        for (int fd : runtime_fds)
            if (fd >= 0) ::close(fd);
        if (via) spawn_init_in_user_ns(cfg, user_ns_fd, pid_ns_fd, flags);
        run_init(cfg);
    }
    // The child's end: closed here so a child that dies reads as EOF.
    fds.close_now(cfg.sync_fd);
    if (!via) return pid;
    // The intermediate exits once it has forked the init (our child too).
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    auto hello = sync::receive(parent_sock, "the container's init");
    if (!hello) return forward(std::move(hello.error()));
    if (hello->type == sync::Msg::error) return fail_code(hello->value, hello->text);
    if (hello->type != sync::Msg::init_hello || hello->sender <= 0)
        return fail("sync: the init did not say hello");
    // Our child (the intermediate forks it with CLONE_PARENT), as exec
    // checks: a process that took the socket could name another sender.
    siginfo_t own{};
    if (::waitid(P_PID, static_cast<id_t>(hello->sender), &own, WEXITED | WNOHANG | WNOWAIT) < 0)
        return fail("sync: the hello came from process " + std::to_string(hello->sender) +
                    ", which is not this runtime's child: refused");
    return hello->sender;
}

// What the init found of the policy's filesystem rules (fs_rule, fs_way,
// fs_made: runtime/filesystem/fs_policy.hpp), into the record. A way to an object is
// logged (report mode: strict refused it in the init); a placeholder is
// recorded by its host path, found from the host's mount table, so that
// delete removes it (one on a filesystem the host does not show, such as a
// tmpfs of the container's, goes with the container anyway).
Status record_fs_note(ContainerRecord &rec, const sync::Packet &msg) {
    auto doc = json::Document::parse(std::string_view(msg.text));
    if (!doc) return forward(std::move(doc.error()), "sync: a filesystem rule from the init");
    yajl_val o = doc->root();
    json::Path p;
    if (msg.type == sync::Msg::fs_rule) {
        FsRuleRecord r;
        OCI_CHECK(json::get_string(o, p, "kind", r.kind, true));
        OCI_CHECK(json::get_string(o, p, "path", r.path, true));
        OCI_CHECK(json::get_string(o, p, "resolved", r.resolved, true));
        OCI_CHECK(json::get_bool(o, p, "made", r.made));
        rec.fs_rules.push_back(std::move(r));
        return {};
    }
    if (msg.type == sync::Msg::fs_way) {
        if (msg.value < 0 || static_cast<size_t>(msg.value) >= rec.fs_rules.size())
            return fail("sync: a way to an unknown filesystem rule");
        FsRuleRecord &r = rec.fs_rules[static_cast<size_t>(msg.value)];
        FsWayRecord w;
        OCI_CHECK(json::get_string(o, p, "path", w.path));
        OCI_CHECK(json::get_string(o, p, "how", w.how, true));
        log::warning("sandbox policy (dev.ocirun.enforcement=report): " + r.kind + " " + r.path +
                     " is not enforced: " +
                     (w.path.empty() ? w.how : "reachable at " + w.path + ": " + w.how));
        r.ways.push_back(std::move(w));
        return {};
    }
    FsRegion region;
    std::string path;
    uint64_t ino = 0;
    OCI_CHECK(json::get_string(o, p, "path", path, true));
    OCI_CHECK(json::get_uint(o, p, "major", region.major, UINT32_MAX, true));
    OCI_CHECK(json::get_uint(o, p, "minor", region.minor, UINT32_MAX, true));
    OCI_CHECK(json::get_string(o, p, "fsPath", region.path, true));
    OCI_CHECK(json::get_uint(o, p, "ino", ino, UINT64_MAX, true));
    std::vector<MountEntry> host = OCI_TRY(own_mounts());
    for (const auto &m : host) {
        if (m.major != region.major || m.minor != region.minor || !path_under(region.path, m.root))
            continue;
        std::string at = path_in_mount(m, region.path);
        struct stat st;
        if (::lstat(at.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_ino == ino) {
            rec.placeholders.push_back({at, static_cast<uint64_t>(st.st_dev), ino});
            return {};
        }
    }
    log::debug("placeholder " + path +
               ": not on a filesystem the host shows; goes with the container");
    return {};
}

// `here`: run's start channel, and where the record goes.
// Everything create decides before it makes anything (runc's validate
// pass): the configuration read once, every refusal, the mount plan, the
// init's configuration. The init's configuration points into it, so it
// stays where create_impl made it.
struct CreatePlan {
    std::string bundle, rootfs;
    oci::Spec spec;
    std::string stage; // the exec stage, or "" (the runtime runs sealed)
    std::optional<SeccompFilter> filter, guard;
    SandboxPolicy policy;
    HostFacts host_facts;
    Fds fds; // namespaces joined by path
    InitConfig cfg;
    unsigned long flags = 0; // CLONE_NEW* of the new namespaces
    int pid_ns_fd = -1, user_ns_fd = -1;
    std::vector<MountOp> mounts;
    int sync_fd = -1; // the runtime's end of the sync socket (in fds)
    Fd rootfs_fd;
    std::vector<ReachGuard> reach_guard;
    LinkedFiles linked_files; // for the init's checks (InitConfig::linked_files)
    bool has_hooks = false, want_shim = false;
    uint64_t release_pipe = 0, result_pipe = 0; // inodes of the init's pipes for `start`
    // A network namespace joined by path (in fds) and its identity; whether
    // this container installs its firewall, or else whose network policy it
    // is held to there, and that policy's keys.
    int net_fd = -1;
    uint64_t netns_dev = 0, netns_ino = 0;
    bool install_firewall = false;
    std::string network_owner;
    // The dev.ocirun.* keys the policy is made of, recorded when they are
    // not config.json's (the runtime configuration, the pod).
    bool record_policy = false;
    oci::StringMap policy_keys;
    // This process's mount table, read once (the cgroup hierarchies, what
    // the mounts reach of the host).
    std::vector<MountEntry> host_mounts;
    // The container's cgroup (none when cgroup_dirs is empty): decided here,
    // made by create_impl.
    CgroupHost cgroup_host;
    std::vector<CgroupWrite> cgroup_writes;
    std::vector<std::string> cgroup_dirs;
    // --systemd-cgroup: the scope systemd makes the cgroup as (started once
    // the init exists) and the properties it is started with.
    std::optional<SystemdScope> scope;
    std::vector<UnitProperty> scope_props;

    CreatePlan() = default;
    CreatePlan(const CreatePlan &) = delete;
    CreatePlan &operator=(const CreatePlan &) = delete;
    ~CreatePlan() { close_plan_fds(mounts); }
};

// The container's cgroup: its directories, what is written in them, and what
// its cgroup mount shows of each hierarchy
// (runtime/filesystem/mount_plan.hpp CgroupView).
Result<std::vector<CgroupView>> plan_container_cgroup(const CreateOptions &o, CreatePlan &p) {
    const oci::Linux &lx = *p.spec.linux_;
    if (o.no_cgroup) {
        // (As crun, whose option it is; a limit it would not hold is refused.)
        if (std::string limit = first_limit(lx); !limit.empty())
            return fail("config.json: linux.resources." + limit +
                        ": --cgroup-manager disabled: no cgroup would hold it");
        return std::vector<CgroupView>{};
    }
    if (!o.systemd_cgroup && !wants_cgroup(p.spec, o.rootless)) return std::vector<CgroupView>{};
    CgroupHost &host = p.cgroup_host;
    host = OCI_TRY(detect_cgroup_host(p.host_mounts));
    const bool user = !host_root();
    // An unprivileged user can neither load a device program nor make
    // device nodes the rules would guard.
    oci::Resources r = lx.resources ? *lx.resources : oci::Resources{};
    if (user) r.devices.clear();
    if (lx.resources) p.cgroup_writes = OCI_TRY(plan_resources(r, host));
    if (o.systemd_cgroup) {
        // As an unprivileged user, the user's own systemd manager (as runc),
        // which is given the v2 hierarchy alone.
        if (user && !host.pure_v2())
            return fail("--systemd-cgroup: as an unprivileged user, through the user's systemd "
                        "manager, which needs a host whose cgroups are v2 alone (this one has "
                        "v1 hierarchies: a user's manager is given none of them)");
        // The scope's cgroup, where systemd puts it in each hierarchy it
        // manages; the runtime makes the same path in the others.
        p.scope = OCI_TRY(systemd_scope(lx.cgroups_path, o.id, user));
        if (user) p.scope->cgroup = OCI_TRY(user_manager_cgroup()) + p.scope->cgroup;
        p.scope_props = scope_properties(*p.scope, o.id);
        if (lx.resources) {
            auto more = OCI_TRY(resource_properties(r, host));
            p.scope_props.insert(p.scope_props.end(), more.begin(), more.end());
        }
        p.cgroup_dirs.reserve(host.hierarchies.size());
        for (const auto &h : host.hierarchies)
            p.cgroup_dirs.push_back(h.dir_of(p.scope->cgroup));
    } else {
        p.cgroup_dirs = OCI_TRY(cgroup_dirs_for(host, lx.cgroups_path, o.id));
        if (lx.cgroups_path.empty() && !sets_cpuset(lx.resources) && !admin_on_host(p.spec))
            leave_out_v1_cpuset(host, p.cgroup_dirs);
    }
    std::vector<CgroupView> views;
    views.reserve(p.cgroup_dirs.size());
    for (const auto &d : p.cgroup_dirs) {
        const Hierarchy &h = *hierarchy_of(host, d);
        CgroupView v;
        v.version = h.version;
        v.dir = d;
        v.mount = h.mount;
        v.name = h.mount.substr(h.mount.rfind('/') + 1);
        for (const auto &c : h.controllers)
            v.options += (v.options.empty() ? "" : ",") + c;
        if (v.options.rfind("name=", 0) == 0) v.options = "none," + v.options;
        views.push_back(std::move(v));
    }
    return views;
}

// In a user namespace: whether it owns the container's network namespace
// (a new one is made in it; one joined by path is looked up).
bool userns_owns_netns(const CreatePlan &p) {
    if (p.flags & CLONE_NEWNET) return true;
    if (p.user_ns_fd < 0) return false; // inherited or joined: older than a new user namespace
    struct stat user;
    if (::fstat(p.user_ns_fd, &user) < 0) return false;
    for (const auto &[fd, type] : p.cfg.join_ns)
        if (type == CLONE_NEWNET) return owned_within(fd, user);
    return false;
}

// A network namespace joined by path: held to the policy of the container
// that installed its firewall, when one runs there (a pod's), or else this
// container's firewall to install, for a network need
// (runtime/lifecycle/pod_network.hpp).
Status plan_joined_network(const CreateOptions &o, CreatePlan &p) {
    for (const auto &[fd, type] : p.cfg.join_ns)
        if (type == CLONE_NEWNET) p.net_fd = fd;
    if (p.net_fd < 0) return {};
    // (A network namespace: open_namespace_path checked its type.)
    struct stat st;
    if (::fstat(p.net_fd, &st) < 0)
        return fail_errno("config.json: linux.namespaces: the network namespace's path: fstat");
    p.netns_dev = st.st_dev;
    p.netns_ino = st.st_ino;
    auto owner = OCI_TRY(find_network_owner(o.root, o.id, p.net_fd));
    fault_point("create:owner-found");
    if (!owner) {
        p.install_firewall = p.policy.net.own_namespace();
        return {};
    }
    auto held = inherit_network(owner->net, p.policy.net);
    if (!held)
        return forward(std::move(held.error()),
                       "config.json: in the network namespace of container \"" + owner->id +
                           "\" (its pod's)");
    p.policy.net = std::move(*held);
    p.policy.present = true;
    p.network_owner = owner->id;
    for (const char *name : kNetworkKeys)
        p.policy_keys.erase(std::string(kAnnotationPrefix) + name);
    for (const auto &[name, v] : p.policy.net.given)
        p.policy_keys[kAnnotationPrefix + name] = v;
    p.record_policy = true;
    return {};
}

// The bundle and its configuration, and what the runtime refuses of it at
// once.
Status load_bundle(const CreateOptions &o, CreatePlan &p) {
    fault_point("create:dir");
    std::string &bundle = p.bundle, &rootfs = p.rootfs;
    oci::Spec &spec = p.spec;
    bundle = OCI_TRY(absolute_path(o.bundle, "bundle"));
    spec = OCI_TRY(oci::load_bundle_spec(bundle));
    OCI_CHECK(check_supported(spec, o));
    if (spec.process->terminal && !spec.process->console_size && o.console_size)
        spec.process->console_size = o.console_size;
    std::string rootfs_in =
        spec.root->path[0] == '/' ? spec.root->path : bundle + "/" + spec.root->path;
    rootfs = OCI_TRY(absolute_path(rootfs_in, "root.path"));
    return {};
}

// Every other check, and the plan they leave.
Status plan_create(const CreateOptions &o, CreatePlan &p) {
    oci::Spec &spec = p.spec;
    const oci::Linux &lx = *spec.linux_;
    const std::string &bundle = p.bundle, &rootfs = p.rootfs, &stage = p.stage;
    std::optional<SeccompFilter> &filter = p.filter, &guard = p.guard;
    SandboxPolicy &policy = p.policy;
    HostFacts &host_facts = p.host_facts;
    Fds &fds = p.fds;
    InitConfig &cfg = p.cfg;
    unsigned long &flags = p.flags;
    int &pid_ns_fd = p.pid_ns_fd, &user_ns_fd = p.user_ns_fd;
    std::vector<MountOp> &mount_plan = p.mounts;
    Fd &rootfs_fd = p.rootfs_fd;
    std::vector<ReachGuard> &reach_guard = p.reach_guard;
    bool &has_hooks = p.has_hooks, &want_shim = p.want_shim;
    if (lx.seccomp) {
        static const std::vector<std::string> none;
        const auto &caps = spec.process->capabilities ? spec.process->capabilities->bounding : none;
        filter = OCI_TRY(compile_seccomp(*lx.seccomp, caps));
    }
    // The sandbox policy from the annotations: checked below, then part of
    // the plan.
    // Under the operator's baseline, which the bundle's keys may only tighten.
    const RuntimeConfig &config = *OCI_TRY(runtime_config());
    {
        auto a = apply_runtime_config(config, spec.annotations);
        if (!a) return forward(std::move(a.error()), "config.json");
        policy = OCI_TRY(parse_sandbox_policy(*a));
        for (const auto &[k, v] : *a)
            if (k.rfind(kAnnotationPrefix, 0) == 0) p.policy_keys[k] = v;
        p.record_policy = !config.path.empty();
    }
    if (spec.process->capabilities)
        capability_notes(*spec.process->capabilities, "config.json: process.capabilities");

    if (filter) cfg.seccomp = &*filter;
    cfg.exec_stage = stage;
    has_hooks = spec.hooks && !spec.hooks->empty();
    cfg.spec = &spec;
    cfg.id = o.id;
    cfg.bundle = bundle;
    cfg.rootfs = rootfs;
    cfg.create_hooks = has_hooks;
    cfg.clear_onlcr = o.clear_onlcr;
    cfg.preserve_fds = o.preserve_fds;
    cfg.no_pivot = o.no_pivot;
    cfg.no_new_keyring = o.no_new_keyring;
    for (size_t i = 0; i < lx.namespaces.size(); i++) {
        const auto &ns = lx.namespaces[i];
        if (ns.path.empty()) {
            if (ns.type == oci::NsType::time)
                cfg.new_timens = true; // the init unshares it (offsets first)
            else if (ns.type == oci::NsType::cgroup)
                cfg.new_cgroupns = true; // the init unshares it once in its cgroup
            else
                flags |= static_cast<unsigned long>(clone_flag(ns.type));
            continue;
        }
        auto opened =
            open_namespace_path(ns.path, clone_flag(ns.type),
                                "config.json: linux.namespaces[" + std::to_string(i) + "].path");
        if (!opened) return std::unexpected(std::move(opened.error()));
        int fd = fds.add(opened->release());
        if (ns.type == oci::NsType::pid)
            pid_ns_fd = fd;
        else if (ns.type == oci::NsType::user)
            user_ns_fd = fd;
        else
            cfg.join_ns.push_back({fd, clone_flag(ns.type)});
    }
    cfg.new_userns = flags & CLONE_NEWUSER;
    cfg.in_userns = cfg.new_userns || user_ns_fd >= 0;
    cfg.passes_sources = cfg.in_userns && ::geteuid() == 0;
    // An unprivileged runtime reaches a process that is not dumpable only
    // with CAP_SYS_PTRACE in the user namespace its memory was made in: the
    // init's was made in the runtime's, until it execs (the stage execs
    // before it waits for start). Without the stage, `state`, `start`,
    // `report` and the rule probe need the init's /proc files (pipes,
    // namespaces) while it waits: it is dumpable from ready until released,
    // as runc's init. The user's own processes could reach it then (they own
    // its user namespace anyway); nothing runs in the container yet (`exec`
    // waits for the process: exec.cpp). Not in a PID namespace joined by
    // path, whose other processes (another container's) would see it: a
    // separate `start` cannot reach that init (create_impl refuses it).
    cfg.dumpable_until_start = ::geteuid() != 0 && stage.empty() && pid_ns_fd < 0;
    // The filesystem is decided here, before anything exists: a bad mount
    // is refused now, not half-way through the init's setup.
    OCI_CHECK(plan_joined_network(o, p));
    if (policy.net.intercept && p.net_fd < 0)
        return fail(std::string("annotations[") + kAnnotationPrefix +
                    "intercept]: needs a network namespace joined by path (a pod's or a "
                    "bridge network's): in a new one, loopback is all there is, with no route "
                    "to redirect");
    host_facts = policy.present ? detect_host_facts() : HostFacts{};
    host_facts.devices_cgroup = !o.no_cgroup;
    if (policy.present) {
        OCI_CHECK(check_policy_pid_namespace(policy, spec));
        OCI_CHECK(check_policy_gaps(policy, spec, host_facts));
        if (!host_facts.firewall) p.install_firewall = false;
        // What the helper cannot do here was refused above in strict mode; in
        // report mode the container runs without it (and so without a way out).
        if (!host_facts.privileged) policy.net.publish.clear();
    }
    MountFacts facts;
    // (Root of another user namespace than the host's makes no device node
    // either.)
    facts.in_userns = cfg.in_userns || !in_initial_user_namespace();
    facts.no_pivot = o.no_pivot;
    facts.policy = policy.present ? &policy : nullptr;
    facts.joined_userns = user_ns_fd >= 0;
    facts.mount_ns = mount_ns_of(lx);
    p.host_mounts = OCI_TRY(own_mounts());
    facts.cgroups = OCI_TRY(plan_container_cgroup(o, p));
    facts.cgroupns = cfg.new_cgroupns;
    facts.userns_owns_netns = facts.in_userns && userns_owns_netns(p);
    mount_plan = OCI_TRY(plan_mounts(spec, facts));
    if (shares_mount_ns(mount_plan) && holds_capability(spec, "CAP_SYS_CHROOT"))
        log::warning("config.json: linux.namespaces: no mount namespace of the container's own: "
                     "root.path is a chroot, which a process holding CAP_SYS_CHROOT can leave");
    OCI_CHECK(open_bind_sources(mount_plan, rootfs));
    if (policy.present) OCI_CHECK(close_device_nodes(policy, mount_plan, host_facts));
    OCI_CHECK(check_idmap_locks(mount_plan, spec, cfg.in_userns, policy.masks()));
    // What the mounts reach of the host, checked on the objects just opened
    // (the init checks again what it mounts where that differs): no mount
    // reaches the state directory, no writable one a protected path.
    rootfs_fd.reset(::open(rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!rootfs_fd.valid()) return fail_errno("root.path: open " + rootfs);
    reach_guard = OCI_TRY(reach_guards(o.root, policy.present ? &policy : nullptr, p.host_mounts));
    auto reaches = OCI_TRY(
        plan_reach(mount_plan, rootfs_fd.get(), rootfs, spec.root->readonly, p.host_mounts));
    OCI_CHECK(check_reach(reaches, reach_guard));
    // The init checks again a bind whose object it mounts is not the one
    // opened here (a source in the rootfs, resolved after earlier mounts,
    // or one swapped since): for other names of protected files too, on any
    // filesystem.
    const bool init_searches =
        policy.present && std::any_of(mount_plan.begin(), mount_plan.end(), [](const MountOp &op) {
            return op.kind == MountOpKind::mount && op.bind;
        });
    p.linked_files = OCI_TRY(check_linked_reach(reaches, reach_guard, init_searches));
    cfg.reach_guards = &reach_guard;
    if (init_searches) cfg.linked_files = &p.linked_files;
    cfg.rootfs_fd = rootfs_fd.get();
    OCI_CHECK(make_idmap_namespaces(mount_plan, spec, user_ns_fd));
    if (log::debug_enabled()) log::debug("mount plan:\n" + describe_plan(mount_plan));
    cfg.mounts = &mount_plan;
    cfg.lock_mounts = policy.masks();
    cfg.policy_strict = policy.strict;
    // A new network namespace gets its loopback up, as with runc and crun.
    // In a pod's namespace, its owner has done that, and runs the helper.
    const bool owns_net = policy.net.own_namespace() && p.network_owner.empty();
    cfg.loopback_up = owns_net || (flags & CLONE_NEWNET) != 0;
    if (owns_net) cfg.listen_ports = policy.net.listen_ports();
    // Under https in a joined namespace, its firewall sends DNS to the stub.
    if (owns_net && p.install_firewall && policy.net.proxy()) cfg.dns_port = kDnsStubPort;
    // The proxy is the only way out: the process is told where it is.
    if (policy.net.proxy()) add_proxy_env(spec.process->env);
    want_shim = policy.net.helper() && host_facts.shim && p.network_owner.empty();
    // The host interfaces to move in (after the clone): there now.
    if (!lx.net_devices.empty() && policy.net.own_namespace())
        return fail("config.json: linux.netDevices: dev.ocirun.network=" + policy.net.mode +
                    " allows loopback only");
    for (const auto &[name, dev] : lx.net_devices)
        OCI_CHECK(check_interface(name));
    if (!lx.net_devices.empty()) OCI_CHECK(check_net_device_helper());
    if (policy.present) {
        static const std::vector<std::string> none;
        guard = OCI_TRY(compile_sandbox_guard(
            spec.process->capabilities ? spec.process->capabilities->bounding : none, policy.net));
        cfg.guard = &*guard;
    }
    return {};
}

// The channels between the runtime, the init and the caller: the exec fifo
// and start fifo (pipes the init holds, or run's start channel `here`), the
// sync socket, the caller's console socket. The first side effects.
Status open_channels(const CreateOptions &o, StartHere *here, CreatePlan &p) {
    InitConfig &cfg = p.cfg;
    Fds &fds = p.fds;
    if (here) {
        int rel[2], res[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rel) < 0)
            return fail_errno("socketpair");
        here->release.reset(rel[0]);
        cfg.fifo_read_fd = fds.add(rel[1]);
        if (::pipe2(res, O_CLOEXEC) < 0) return fail_errno("pipe");
        here->result.reset(res[0]);
        cfg.start_result_fd = fds.add(res[1]);
    } else {
        // The exec fifo and the start fifo, as pipes the init holds: `start`
        // opens its own ends through /proc/PID/fd (start.cpp), so the state
        // directory gets no inode for them (on ext4 without a journal each
        // new one scans past those freed in the last minutes).
        int rel[2], res[2];
        if (::pipe2(rel, O_CLOEXEC) < 0) return fail_errno("exec fifo: pipe");
        cfg.fifo_read_fd = fds.add(rel[0]);
        cfg.fifo_write_fd = fds.add(rel[1]);
        if (::fcntl(cfg.fifo_read_fd, F_SETFL, O_NONBLOCK) < 0)
            return fail_errno("exec fifo: O_NONBLOCK");
        if (::pipe2(res, O_CLOEXEC) < 0) return fail_errno("start fifo: pipe");
        Fd res_read(res[0]), res_write(res[1]);
        // Both ends in one descriptor, as the start fifo opened O_RDWR: the
        // init's error line never meets EPIPE, and its exec ends the pipe.
        std::string both = "/proc/self/fd/" + std::to_string(res[0]);
        cfg.start_result_fd = fds.add(::open(both.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
        if (cfg.start_result_fd < 0) return fail_errno("start fifo: open " + both);
        struct stat st;
        if (::fstat(cfg.fifo_write_fd, &st) < 0) return fail_errno("exec fifo: fstat");
        p.release_pipe = st.st_ino;
        if (::fstat(cfg.start_result_fd, &st) < 0) return fail_errno("start fifo: fstat");
        p.result_pipe = st.st_ino;
    }
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return fail_errno("socketpair");
    p.sync_fd = fds.add(sv[0]);
    cfg.sync_fd = fds.add(sv[1]);
    cfg.console_fd = o.console_fd;
    if (!o.console_socket.empty())
        cfg.console_fd = fds.add(OCI_TRY(sync::connect_unix(o.console_socket, "--console-socket")));
    fault_point("create:fifos");
    cfg.report_pid = spawns_through_intermediate(cfg, p.user_ns_fd);
    if (cfg.report_pid) {
        int on = 1;
        if (::setsockopt(p.sync_fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0)
            return fail_errno("sync socket: SO_PASSCRED");
    }
    return {};
}

ContainerRecord new_record(const CreateOptions &o, const CreatePlan &p) {
    ContainerRecord rec;
    rec.state.oci_version = oci::kSpecVersion;
    rec.state.id = o.id;
    rec.state.status = oci::ContainerStatus::creating;
    rec.state.bundle = p.bundle;
    rec.state.annotations = p.spec.annotations;
    rec.created = oci::rfc3339_now();
    rec.rootfs = p.rootfs;
    rec.owner = ::geteuid();
    rec.has_hooks = p.has_hooks;
    rec.sandboxed = p.policy.present;
    rec.trace = p.policy.trace;
    rec.netns_dev = p.netns_dev;
    rec.netns_ino = p.netns_ino;
    if (p.release_pipe) {
        rec.release_fd = static_cast<uint32_t>(p.cfg.fifo_write_fd);
        rec.release_pipe = p.release_pipe;
        rec.result_fd = static_cast<uint32_t>(p.cfg.start_result_fd);
        rec.result_pipe = p.result_pipe;
    }
    rec.network_owner = p.network_owner;
    rec.policy_recorded = p.record_policy;
    if (p.record_policy) rec.policy_keys = p.policy_keys;
    return rec;
}

// A container held to its network owner's policy: recorded as the owner's
// (a create in progress that names it keeps the owner's delete from taking
// the firewall away, remove_network_firewall), then the owner looked for
// again. One deleted since it was found may have taken the firewall already:
// refused rather than run without it.
Status join_network_owner(const CreateOptions &o, ContainerDir &dir, const CreatePlan &p,
                          ContainerRecord &rec) {
    if (p.network_owner.empty()) return {};
    OCI_CHECK(dir.save(rec));
    fault_point("create:owner-recorded");
    auto owner = OCI_TRY(find_network_owner(o.root, o.id, p.net_fd));
    if (!owner || owner->id != p.network_owner)
        return fail("config.json: in the network namespace of container \"" + p.network_owner +
                    "\" (its pod's): that container went while this one was made, and its "
                    "firewall with it: refused rather than run without it");
    return {};
}

// The firewall of a joined network namespace: recorded first (delete
// --force removes it after a crash), then installed.
Status install_network_firewall(ContainerDir &dir, const CreatePlan &p, ContainerRecord &rec) {
    rec.firewall = true;
    OCI_CHECK(dir.save(rec));
    fault_point("create:firewall-recorded");
    OCI_CHECK(install_firewall(p.net_fd, rec.state.id, p.policy.net.firewall_need()));
    fault_point("create:firewall");
    return {};
}

// The cgroup is recorded first, so that a crash from here on leaves it where
// delete --force finds it. Its v2 directory is made before the init exists
// (clone3 puts the init there; returned, if any); the v1 hierarchies' by
// make_v1_cgroups.
Result<Fd> make_cgroup(ContainerDir &dir, const CreatePlan &p, ContainerRecord &rec) {
    if (p.cgroup_dirs.empty()) return Fd();
    rec.cgroup_dirs = p.cgroup_dirs;
    rec.cgroups_path = p.spec.linux_->cgroups_path;
    rec.systemd_cgroup = p.scope.has_value();
    rec.systemd_user = p.scope && p.scope->user;
    OCI_CHECK(dir.save(rec));
    fault_point("create:recorded");
    // systemd makes a scope for a process: once the init exists
    // (prepare_init).
    if (p.scope) return Fd();
    std::string u = unified_dir(p.cgroup_host, rec.cgroup_dirs);
    if (u.empty()) return Fd();
    const std::vector<std::string> dirs = {u};
    OCI_CHECK(create_cgroup(p.cgroup_host, dirs, p.cgroup_writes, &rec.cgroup_dirs));
    fault_point("create:cgroup");
    Fd fd = open_in_cgroup(p.cgroup_host, u, O_RDONLY | O_DIRECTORY);
    if (!fd.valid()) {
        int e = errno;
        (void)destroy_cgroup(p.cgroup_host, dirs);
        return fail_code(e, "cgroup: open " + u);
    }
    return fd;
}

// The v1 hierarchies' directories (all of them where clone3 had no v2 one
// to put the init in), made while the init starts: it joins them in
// prepare_init, before it runs anything of the container's. On a hybrid host
// that is about half a millisecond less before the init can set up.
// On failure what create_cgroup made is gone again.
Status make_v1_cgroups(const CreatePlan &p, const ContainerRecord &rec) {
    if (p.scope || rec.cgroup_dirs.empty()) return {};
    std::string u = unified_dir(p.cgroup_host, rec.cgroup_dirs);
    std::vector<std::string> rest;
    for (const auto &d : rec.cgroup_dirs)
        if (d != u) rest.push_back(d);
    OCI_CHECK(create_cgroup(p.cgroup_host, rest, p.cgroup_writes, &rec.cgroup_dirs));
    fault_point("create:cgroup-v1");
    return {};
}

// The init into the systemd scope: the transient unit started with it (and
// its properties), the same path made in the hierarchies systemd leaves
// alone, then what systemd does not manage written to the files.
Status join_scope(const CreatePlan &p, const ContainerRecord &rec, pid_t pid) {
    OCI_CHECK(start_scope(*p.scope, p.scope_props, pid));
    fault_point("create:scope");
    if (p.scope->user) {
        // A user's manager has the one hierarchy: the init is in the
        // scope's cgroup where the plan says, or the plan is wrong (nothing
        // is made in its stead).
        OCI_CHECK(check_in_cgroup(p.cgroup_host, rec.cgroup_dirs, pid));
    } else {
        std::vector<std::string> missing;
        for (const auto &d : rec.cgroup_dirs)
            if (::access(d.c_str(), F_OK) != 0) missing.push_back(d);
        if (!missing.empty()) OCI_CHECK(create_cgroup(p.cgroup_host, missing, {}));
        OCI_CHECK(enter_cgroup(rec.cgroup_dirs, pid));
    }
    return apply_cgroup_writes(p.cgroup_host, rec.cgroup_dirs, p.cgroup_writes);
}

// The init into the container's cgroup. The v1 hierarchies' it joins itself
// (the runtime passes their tasks files, runtime/cgroups/cgroup.hpp
// join_self), which spares it the kernel's wait for an RCU grace period that
// a write to cgroup.procs costs; the v2 one it was born in (clone3), or the
// runtime moves it there.
Status send_init_to_cgroup(pid_t pid, const CreatePlan &p, const ContainerRecord &rec,
                           bool born_in_v2) {
    std::string u = unified_dir(p.cgroup_host, rec.cgroup_dirs);
    if (!u.empty() && !born_in_v2) OCI_CHECK(enter_cgroup({u}, pid));
    for (const auto &d : rec.cgroup_dirs) {
        if (d == u) continue;
        Fd tasks = OCI_TRY(open_tasks(p.cgroup_host, d));
        OCI_CHECK(sync::send_with_fd(p.sync_fd, sync::Msg::cgroup_join, tasks.get(), d.c_str()));
    }
    return {};
}

// What the runtime does to the spawned init before it lets it set up: its
// oom_score_adj (before the init turns non-dumpable, after which only root
// could write its /proc files), its ID maps, its cgroup, the netDevices, the
// bind sources it cannot reach itself; then proceed.
Status prepare_init(pid_t pid, const CreatePlan &p, const ContainerRecord &rec, bool born_in_v2) {
    const oci::Spec &spec = p.spec;
    if (spec.process->oom_score_adj)
        OCI_CHECK(write_proc_file(pid, "oom_score_adj",
                                  std::to_string(*spec.process->oom_score_adj),
                                  "process.oomScoreAdj"));
    if (p.cfg.new_userns) OCI_CHECK(write_id_mappings(pid, *spec.linux_));
    if (p.scope)
        OCI_CHECK(join_scope(p, rec, pid));
    else if (!rec.cgroup_dirs.empty())
        OCI_CHECK(send_init_to_cgroup(pid, p, rec, born_in_v2));
    OCI_CHECK(move_net_devices(*spec.linux_, pid, p.net_fd));
    // (An unprivileged runtime's init reaches what the runtime does.)
    if (p.cfg.passes_sources) OCI_CHECK(pass_bind_sources(p.sync_fd, pid, p.mounts));
    fault_point("create:joined");
    OCI_CHECK(sync::send(p.sync_fd, sync::Msg::proceed));
    fault_point("create:proceeded");
    return {};
}

// What the init asks of the runtime while it sets up (the time offsets, the
// policy's filesystem notes, its listening sockets, the hooks before
// pivot_root, the seccomp notify fd), until it is ready.
// `hooks_started`: set once prestart began (a failure then runs poststop).
Status serve_init(pid_t pid, CreatePlan &p, ContainerRecord &rec, std::vector<Fd> &listeners,
                  bool &hooks_started) {
    const oci::Spec &spec = p.spec;
    for (;;) {
        sync::Packet msg = OCI_TRY(sync::receive(p.sync_fd, "the container's init"));
        switch (msg.type) {
        case sync::Msg::ready:
            fault_point("create:ready");
            return {};
        case sync::Msg::error:
            return fail_code(msg.value, msg.text);
        case sync::Msg::time_offsets: {
            // The init's new time namespace, before anything entered it.
            std::string file = "/proc/" + std::to_string(pid) + "/timens_offsets";
            OCI_CHECK(write_existing_file(file, time_offsets_text(spec), "linux.timeOffsets"));
            OCI_CHECK(sync::send(p.sync_fd, sync::Msg::proceed));
            break;
        }
        case sync::Msg::fs_rule:
        case sync::Msg::fs_way:
        case sync::Msg::fs_made:
            OCI_CHECK(record_fs_note(rec, msg));
            break;
        case sync::Msg::listener:
            listeners.emplace_back(msg.fd);
            if (!listeners.back().valid()) return fail("sync: a listening socket did not arrive");
            break;
        case sync::Msg::hooks: {
            // Mounts done, before pivot_root: prestart and createRuntime run
            // here, in the runtime's namespaces.
            hooks_started = true;
            fault_point("create:hooks");
            std::string st = hook_state(rec, oci::ContainerStatus::creating);
            OCI_CHECK(run_hooks(spec.hooks->prestart, "prestart", st));
            OCI_CHECK(run_hooks(spec.hooks->create_runtime, "createRuntime", st));
            OCI_CHECK(sync::send(p.sync_fd, sync::Msg::hooks_done, pid));
            break;
        }
        case sync::Msg::seccomp_notify: {
            // The init's seccomp notify fd, for the listener.
            Fd notify(msg.fd);
            if (!notify.valid()) return fail("sync: the seccomp notify fd did not arrive");
            OCI_CHECK(send_seccomp_listener(*spec.linux_->seccomp, notify.get(), pid, rec.state));
            break;
        }
        default:
            return fail("sync: unexpected message from the container's init");
        }
    }
}

// The init is ready: the network helper, the record (created), the pid
// file; then wait until the init has exec'd the exec stage.
Status finish_create(const CreateOptions &o, ContainerDir &dir, StartHere *here, CreatePlan &p,
                     pid_t pid, ContainerRecord &rec, std::vector<Fd> &listeners) {
    if (p.want_shim) {
        size_t want = p.cfg.listen_ports.size() + (p.cfg.dns_port ? 2 : 0);
        if (listeners.size() != want)
            return fail("sync: the init sent " + std::to_string(listeners.size()) +
                        " listening sockets, not " + std::to_string(want));
        ShimProcess shim = OCI_TRY(start_network_helper(
            o.id, dir.path(), pid, listeners, p.policy.net, p.cgroup_host, rec.cgroup_dirs));
        rec.shim_pid = shim.pid;
        rec.shim_start_time = shim.start_time;
        fault_point("create:shim");
    }
    listeners.clear();
    rec.state.status = oci::ContainerStatus::created;
    // run goes on to start under the same lock, which records it running:
    // no one can see it created in between (a run that dies here leaves it
    // creating, which delete --force removes).
    if (!here) OCI_CHECK(dir.save(rec));
    fault_point("create:created");
    if (auto r = write_pid_file(o.pid_file, pid); !r) return forward(r.error().wrap("--pid-file"));
    // Through the exec stage, the init runs the runtime's binary until it
    // execs the stage, right after ready: create returns once it has (its
    // end of the sync socket closes with that exec, or with the init), so
    // nothing that joins the container's namespaces afterwards meets it.
    if (!p.stage.empty()) {
        for (;;) {
            char b;
            ssize_t n = ::recv(p.sync_fd, &b, 1, 0);
            if (n == 0 || (n < 0 && errno != EINTR)) break;
        }
    }
    return {};
}

} // namespace

Result<pid_t> create_impl(const CreateOptions &o, ContainerDir &dir, StartHere *here) {
    CreatePlan p;
    OCI_CHECK(load_bundle(o, p));
    // CVE-2019-5736: the init execs the process through the exec stage, or
    // this process re-executes from its sealed view first (exec_stage.hpp).
    // Only the empty state directory exists yet: the sealed runtime makes it
    // again.
    if (!o.sealed) {
        p.stage = exec_stage_for(p.spec);
        if (p.stage.empty()) {
            (void)dir.remove();
            if (!o.reseal) return fail("CVE-2019-5736 protection: no way to run sealed");
            return forward(o.reseal());
        }
    }
    OCI_CHECK(plan_create(o, p));
    // An unprivileged runtime's init that waits without the stage is
    // dumpable, for a later `start` to reach it, but not in a PID namespace
    // joined by path (another container's processes would see it): there a
    // separate start could not reach it. `run` holds what it needs.
    if (!here && ::geteuid() != 0 && p.stage.empty() && p.pid_ns_fd >= 0)
        return fail("config.json: linux.namespaces: in a PID namespace joined by path, an "
                    "unprivileged runtime can only `run` the container: a separate `start` "
                    "could not reach its init, which waits without the exec stage");
    // Every refusal is above: from here on the runtime makes things (the
    // fifos in the state directory, the connection to the caller's console
    // socket, the cgroup, the init).
    OCI_CHECK(open_channels(o, here, p));
    // A PID namespace joined by path takes the init only (left right after
    // the init is spawned). With a user namespace joined by path, the
    // intermediate that joins it enters the PID namespace from there.
    ChildPidNamespace child_pidns;
    const bool pidns_from_userns = p.pid_ns_fd >= 0 && p.user_ns_fd >= 0;
    if (p.pid_ns_fd >= 0 && !pidns_from_userns) OCI_CHECK(child_pidns.enter(p.pid_ns_fd));
    ContainerRecord rec = new_record(o, p);
    OCI_CHECK(join_network_owner(o, dir, p, rec));
    Fd cgroup_fd = OCI_TRY(make_cgroup(dir, p, rec));
    // What a failure removes: the directories made (or found reusable) so
    // far, never one make_v1_cgroups has yet to look at, which may be
    // someone else's (a cgroup with processes in it, refused). The record
    // names them all from the start, for delete --force after a crash.
    std::vector<std::string> guarded;
    if (p.scope)
        guarded = rec.cgroup_dirs;
    else if (std::string u = unified_dir(p.cgroup_host, rec.cgroup_dirs); !u.empty())
        guarded.push_back(std::move(u));
    struct CgroupGuard {
        const CgroupHost &host;
        const std::vector<std::string> &dirs;
        const std::optional<SystemdScope> &scope;
        bool keep = false;
        ~CgroupGuard() {
            if (keep) return;
            // A unit of that name that is not this container's (its start
            // failed: the name was taken) is left alone, and its cgroup.
            if (scope && !check_scope_owner(*scope)) return;
            if (!dirs.empty()) (void)destroy_cgroup(host, dirs);
            if (scope) (void)stop_scope(*scope);
        }
    } cgroup_guard{p.cgroup_host, guarded, p.scope};

    // Before the init exists: nothing of the bundle's (createContainer
    // hooks included) runs in the namespace without it.
    if (p.install_firewall) OCI_CHECK(install_network_firewall(dir, p, rec));
    struct FirewallGuard {
        const CreatePlan &p;
        const std::string &id;
        bool keep = false;
        ~FirewallGuard() {
            if (!keep && p.install_firewall) (void)remove_firewall(p.net_fd, id);
        }
    } firewall_guard{p, o.id};

    p.cfg.cgroup_fd = cgroup_fd.get();
    close_cgroup_mounts(); // not the init's
    bool born_in_v2 = false;
    auto spawned =
        spawn_init(p.cfg, dir, p.fds, p.sync_fd,
                   {here ? here->release.get() : -1, here ? here->result.get() : -1}, p.user_ns_fd,
                   pidns_from_userns ? p.pid_ns_fd : -1, p.flags, cgroup_fd.get(), born_in_v2);
    if (auto r = child_pidns.leave(); !r) {
        if (spawned) kill_and_reap(*spawned);
        return forward(std::move(r.error()));
    }
    pid_t pid = OCI_TRY(std::move(spawned));
    fault_point("create:spawned");

    bool hooks_started = false;
    auto abort_child = [&](Error e) -> Result<pid_t> {
        kill_and_reap(pid);
        remove_placeholders(rec);
        stop_shim(rec.shim_pid, rec.shim_start_time, o.id, dir.path());
        // A failed create hook stops the container, which ends with the
        // poststop hooks (runtime-spec Lifecycle steps 3-5 -> 12-13).
        if (hooks_started) run_poststop(p.spec, rec);
        return forward(std::move(e));
    };
    // The init named before it may proceed: once it is ready it no longer
    // dies with this process, and this process may die before it would
    // otherwise have saved the record (then delete --force finds the init
    // by this). Until proceed it waits, and dies with the runtime (its
    // death signal, or its sync socket's end).
    rec.state.pid = pid;
    rec.init_start_time = process_start_time(pid);
    if (struct stat ns; ::stat(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), &ns) == 0)
        rec.init_pidns = ns.st_ino;
    rec.own_pidns = (p.flags & CLONE_NEWPID) != 0;
    if (auto r = dir.save(rec); !r) return abort_child(r.error());
    fault_point("create:pid-saved");
    if (auto r = make_v1_cgroups(p, rec); !r) return abort_child(r.error());
    guarded = rec.cgroup_dirs;
    if (auto r = prepare_init(pid, p, rec, born_in_v2); !r) return abort_child(r.error());
    // exec reads the container's configuration from here, not from a bundle
    // that may have changed since.
    {
        json::Writer spec_json(false); // (scoped: the next writer reuses its generator)
        oci::write_spec(spec_json, p.spec);
        if (auto r = oci::write_file_atomic(dir.path() + "/config.json", spec_json.view()); !r)
            return abort_child(r.error());
    }
    if (here) here->spec = p.spec;
    // (Not with filesystem rules either: the init reports them below.)
    if (here && !p.want_shim && !p.cfg.lock_mounts) {
        ContainerRecord running = rec;
        mark_running(running);
        auto staged = dir.stage(running);
        if (!staged) return abort_child(staged.error());
        here->running.emplace(std::move(*staged));
    }
    std::vector<Fd> listeners; // the init's sockets for the network helper
    if (auto r = serve_init(pid, p, rec, listeners, hooks_started); !r)
        return abort_child(r.error());
    if (auto r = finish_create(o, dir, here, p, pid, rec, listeners); !r)
        return abort_child(r.error());
    cgroup_guard.keep = true;
    firewall_guard.keep = true;
    log::debug("created container " + o.id + " with init " + std::to_string(pid));
    if (here) {
        here->rec = rec;
        here->host = std::move(p.cgroup_host); // (the guards are done with it)
    }
    return pid;
}

Result<pid_t> create_container(const CreateOptions &o) {
    ContainerDir dir = OCI_TRY(ContainerDir::create(o.root, o.id));
    auto pid = create_impl(o, dir);
    if (!pid) {
        (void)dir.remove();
        return forward(std::move(pid.error()), "create");
    }
    return pid;
}

} // namespace ocirun
