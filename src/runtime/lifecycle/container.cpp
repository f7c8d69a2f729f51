#include "runtime/lifecycle/container.hpp"

#include "oci/fd.hpp"
#include "oci/json.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "oci/text.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/fault.hpp"
#include "runtime/filesystem/host_reach.hpp"
#include "runtime/filesystem/mount_api.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/filesystem/mount_table.hpp"
#include "runtime/lifecycle/exec_stage.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/lifecycle/init.hpp"
#include "runtime/lifecycle/store.hpp"
#include "runtime/lifecycle/sync.hpp"
#include "runtime/lifecycle/tty_relay.hpp"
#include "runtime/log.hpp"
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

constexpr const char *kFifo = "exec.fifo";       // init blocks on it until `start`
constexpr const char *kStartFifo = "start.fifo"; // init -> `start`: EOF at exec, or an error
constexpr const char *kTraceLog = "trace.log";   // dev.ocirun.trace: strace's output

Result<std::string> absolute_path(const std::string &path, const std::string &what) {
    char *r = ::realpath(path.c_str(), nullptr);
    if (!r) return fail_errno(what + " " + path);
    std::string s = r;
    free(r);
    return s;
}

// Every container gets its cgroup, but a rootless one only when the
// configuration asks for one (it needs a delegated subtree), as in runc.
bool wants_cgroup(const oci::Spec &spec, bool rootless) {
    const oci::Linux &lx = *spec.linux_;
    if (!rootless) return true;
    if (!lx.cgroups_path.empty()) return true;
    if (!lx.resources) return false;
    const oci::Resources &r = *lx.resources;
    return r.memory || r.cpu || r.pids || r.block_io || !r.hugepage_limits.empty() || r.network ||
           !r.rdma.empty() || !r.unified.empty();
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
        if (::geteuid() != 0)
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
    bool apparmor = oci::read_file("/sys/module/apparmor/parameters/enabled", 0, 64)
                        .value_or("")
                        .starts_with("Y");
    bool selinux = ::access("/sys/fs/selinux/enforce", F_OK) == 0;
    auto lsm = [&](const char *field, const std::string &value, bool on,
                   const char *name) -> Status {
        if (value.empty()) return {};
        if (!on)
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

std::string hook_state(const ContainerRecord &rec, oci::ContainerStatus status) {
    oci::State st = rec.state;
    st.status = status;
    return oci::write_state(st);
}

// poststop failures are warnings (runtime-spec Lifecycle step 13).
void run_poststop(const oci::Spec &spec, const ContainerRecord &rec) {
    if (!spec.hooks) return;
    run_hooks_warning(spec.hooks->poststop, "poststop",
                      hook_state(rec, oci::ContainerStatus::stopped));
}

// Status from the live process, never from the record alone.
// `host` is needed only for a record with cgroup directories (paused).
oci::ContainerStatus live_status(const ContainerDir &dir, const CgroupHost &host,
                                 const ContainerRecord &rec) {
    // A create still running (it holds the lock) may not have an init yet.
    if (rec.state.status == oci::ContainerStatus::creating && dir.busy())
        return oci::ContainerStatus::creating;
    if (!process_alive(rec.state.pid, rec.init_start_time)) return oci::ContainerStatus::stopped;
    if (rec.state.status == oci::ContainerStatus::creating) return oci::ContainerStatus::creating;
    if (!rec.cgroup_dirs.empty() && cgroup_frozen(host, rec.cgroup_dirs))
        return oci::ContainerStatus::paused;
    struct stat st;
    if (::fstatat(dir.fd(), kFifo, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return oci::ContainerStatus::created;
    return oci::ContainerStatus::running;
}

// The record's init, and with `members` every other process of its own PID
// namespace, signalled only when it is the container's: the process that
// started at the recorded time and, when the record has a cgroup, is in it
// (the PID is read back from the state directory).
Status signal_init(const CgroupHost &host, const ContainerRecord &rec, int sig,
                   bool members = false) {
    if (!process_alive(rec.state.pid, rec.init_start_time))
        return fail_code(ESRCH, "container not running (its init is gone)");
    if (!rec.cgroup_dirs.empty() && !init_in_cgroup(host, rec) && !init_in_own_pid_namespace(rec))
        return fail_code(ESRCH, "container not running (process " + std::to_string(rec.state.pid) +
                                    " is not in its cgroup: gone, or not its init)");
    if (members) signal_pidns_members(rec.state.pid, sig);
    return signal_process(rec.state.pid, rec.init_start_time, sig);
}

// The host's hierarchies when the record has a cgroup (else an empty map),
// with the record's cgroup checked to be the container's own before any
// command acts on it.
Result<CgroupHost> host_for(const ContainerRecord &rec) {
    if (rec.cgroup_dirs.empty()) return CgroupHost{};
    CgroupHost host = OCI_TRY(detect_cgroup_host());
    OCI_CHECK(check_own_cgroup(host, rec));
    return host;
}

// clone, or clone3 with CLONE_INTO_CGROUP when there is a v2 cgroup to be born
// in (so the child is accounted there from its first page).
long clone_into(unsigned long flags, int cgroup_fd) {
    if (cgroup_fd >= 0) {
        struct clone_args args {};
        args.flags = flags | CLONE_INTO_CGROUP;
        args.exit_signal = SIGCHLD;
        args.cgroup = static_cast<uint64_t>(cgroup_fd);
        long pid = ::syscall(SYS_clone3, &args, sizeof args);
        if (pid >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EINVAL)) return pid;
    }
    return ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
}

// The network helper, with the init's listening sockets and (for published
// ports) a handle on its network namespace.
Result<ShimProcess> start_network_helper(const std::string &id, const std::string &state_dir,
                                         pid_t init, const std::vector<Fd> &listeners,
                                         const NetworkPolicy &net, const CgroupHost &host,
                                         const std::vector<std::string> &cgroup_dirs) {
    ShimLaunch l;
    // Its cgroup under the container's (removed with it by destroy_cgroup).
    l.cgroups = helper_cgroup_dirs(host, cgroup_dirs);
    for (const auto &d : l.cgroups)
        if (::mkdir(d.c_str(), 0755) < 0) return fail_errno("network helper: cgroup: make " + d);
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
// way, with the addresses they had, and up. One joined by path is named by
// that path: the init enters it only after proceed.
Status move_net_devices(const oci::Linux &lx, pid_t init) {
    if (lx.net_devices.empty()) return {};
    const oci::Namespace *net = lx.find_namespace(oci::NsType::network);
    std::string netns =
        net && !net->path.empty() ? net->path : "/proc/" + std::to_string(init) + "/ns/net";
    for (const auto &[name, dev] : lx.net_devices)
        OCI_CHECK(move_net_device(name, dev.name, netns));
    return {};
}

// Start the container's init: one clone into all new namespaces or, with a
// user namespace joined by path (or a new one and namespaces joined by path),
// through an intermediate that joins them first.
// `runtime_fds`: the runtime's own ends (sync socket, run's start channel),
// closed in the child.
Result<pid_t> spawn_init(const InitConfig &cfg, ContainerDir &dir, Fds &fds, int parent_sock,
                         std::initializer_list<int> runtime_fds, int user_ns_fd,
                         unsigned long flags, int cgroup_fd) {
    const bool via = spawns_through_intermediate(cfg, user_ns_fd);
    pid_t pid = static_cast<pid_t>(clone_into(via ? 0 : flags, via ? -1 : cgroup_fd));
    if (pid < 0) return fail_errno("clone");
    if (pid == 0) {
        ::close(dir.fd()); // the lock belongs to the runtime, not the container
        ::close(parent_sock);
        for (int fd : runtime_fds)
            if (fd >= 0) ::close(fd);
        if (via) spawn_init_in_user_ns(cfg, user_ns_fd, flags);
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
    return hello->sender;
}

// A record as start writes it (create stages run's from the same function).
void mark_running(ContainerRecord &rec) {
    rec.started = true;
    rec.state.status = oci::ContainerStatus::running;
}

// run starts the container itself: instead of the exec and start fifos in
// the state directory, which a separate `start` opens, a socket and a pipe
// it holds (two files fewer to make and remove on the state directory's
// filesystem; with the socket, an init that dies before start makes the
// release fail with EPIPE).
struct StartHere {
    Fd release;          // one byte releases the init
    Fd result;           // EOF once the process is exec'd, or "ERRNO TEXT"
    ContainerRecord rec; // as create left it, for start under the same lock
    // The running record, written while the init sets up (not with a network
    // helper, whose PID comes later): start only renames it into place.
    std::optional<oci::StagedFile> running;
    // config.json as create wrote it to the state directory: run reads it
    // once, for start's hooks and policy and delete's poststop hooks.
    std::optional<oci::Spec> spec;
};

// The placeholder directories the init made (deepest first), each only if
// it is still the directory recorded and empty: the record is read back from
// the state directory, and what the container put there is not ours.
void remove_placeholders(const ContainerRecord &rec) {
    for (auto it = rec.placeholders.rbegin(); it != rec.placeholders.rend(); ++it) {
        size_t slash = it->path.rfind('/');
        if (slash == std::string::npos || slash + 1 >= it->path.size()) continue;
        std::string parent = slash == 0 ? "/" : it->path.substr(0, slash);
        std::string name = it->path.substr(slash + 1);
        struct open_how how {};
        how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
        how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        Fd dir(
            static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, parent.c_str(), &how, sizeof how)));
        struct stat st;
        if (!dir.valid() || ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode) || st.st_ino != it->ino ||
            static_cast<uint64_t>(st.st_dev) != it->dev) {
            log::debug("placeholder " + it->path + " is not the one made: left");
            continue;
        }
        if (::unlinkat(dir.get(), name.c_str(), AT_REMOVEDIR) < 0)
            log::debug("placeholder " + it->path + " not removed: " + std::strerror(errno));
    }
}

// What the init found of the policy's filesystem rules (fs_rule, fs_way,
// fs_made: runtime/filesystem/fs_policy.hpp), into the record. A way to an object is
// logged (report mode: strict refused it in the init); a placeholder is
// recorded by its host path, found from the host's mount table, so that
// delete removes it (one on a filesystem the host does not show, such as a
// tmpfs of the container's, goes with the container anyway).
Status record_fs_note(ContainerRecord &rec, const sync::Packet &msg) {
    auto doc = json::Document::parse(msg.text);
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
Result<pid_t> create_impl(const CreateOptions &o, ContainerDir &dir, StartHere *here = nullptr) {
    fault_point("create:dir");
    std::string bundle = OCI_TRY(absolute_path(o.bundle, "bundle"));
    oci::Spec spec = OCI_TRY(oci::load_bundle_spec(bundle));
    OCI_CHECK(check_supported(spec, o));
    if (spec.process->terminal && !spec.process->console_size && o.console_size)
        spec.process->console_size = o.console_size;
    std::string rootfs_in =
        spec.root->path[0] == '/' ? spec.root->path : bundle + "/" + spec.root->path;
    std::string rootfs = OCI_TRY(absolute_path(rootfs_in, "root.path"));
    const oci::Linux &lx = *spec.linux_;
    // CVE-2019-5736: the init execs the process through the exec stage, or
    // this process re-executes from its sealed view first (exec_stage.hpp).
    // Only the empty state directory exists yet: the sealed runtime makes it
    // again.
    std::string stage;
    if (!o.sealed) {
        stage = exec_stage_for(spec);
        if (stage.empty()) {
            (void)dir.remove();
            if (!o.reseal) return fail("CVE-2019-5736 protection: no way to run sealed");
            return forward(o.reseal());
        }
    }
    std::optional<SeccompFilter> filter;
    if (lx.seccomp) {
        static const std::vector<std::string> none;
        const auto &caps = spec.process->capabilities ? spec.process->capabilities->bounding : none;
        filter = OCI_TRY(compile_seccomp(*lx.seccomp, caps));
    }
    // The sandbox policy from the annotations: checked below, then part of
    // the plan.
    SandboxPolicy policy = OCI_TRY(parse_sandbox_policy(spec.annotations));
    if (spec.process->capabilities)
        capability_notes(*spec.process->capabilities, "config.json: process.capabilities");

    Fds fds;
    int sv[2] = {-1, -1}; // the sync socket: ours, the init's

    InitConfig cfg;
    if (filter) cfg.seccomp = &*filter;
    cfg.exec_stage = stage;
    const bool has_hooks = spec.hooks && !spec.hooks->empty();
    cfg.spec = &spec;
    cfg.id = o.id;
    cfg.bundle = bundle;
    cfg.rootfs = rootfs;
    cfg.create_hooks = has_hooks;
    cfg.clear_onlcr = o.clear_onlcr;
    cfg.preserve_fds = o.preserve_fds;
    cfg.no_pivot = o.no_pivot;
    cfg.no_new_keyring = o.no_new_keyring;
    unsigned long flags = 0;
    int pid_ns_fd = -1, user_ns_fd = -1;
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
        int fd = fds.add(::open(ns.path.c_str(), O_RDONLY | O_CLOEXEC));
        if (fd < 0)
            return fail_errno("config.json: linux.namespaces[" + std::to_string(i) +
                              "].path: open " + ns.path);
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
    // The filesystem is decided here, before anything exists: a bad mount
    // is refused now, not half-way through the init's setup.
    const HostFacts host_facts = policy.present ? detect_host_facts() : HostFacts{};
    if (policy.present) {
        OCI_CHECK(check_policy_pid_namespace(policy, spec));
        OCI_CHECK(check_policy_gaps(policy, spec, host_facts));
        // What the helper cannot do here was refused above in strict mode; in
        // report mode the container runs without it (and so without a way out).
        if (!host_facts.privileged) policy.net.publish.clear();
    }
    std::vector<MountOp> mount_plan =
        OCI_TRY(plan_mounts(spec, {cfg.in_userns, o.no_pivot, policy.present ? &policy : nullptr,
                                   user_ns_fd >= 0, mount_ns_of(lx)}));
    if (shares_mount_ns(mount_plan) && holds_capability(spec, "CAP_SYS_CHROOT"))
        log::warning("config.json: linux.namespaces: no mount namespace of the container's own: "
                     "root.path is a chroot, which a process holding CAP_SYS_CHROOT can leave");
    struct PlanFds {
        std::vector<MountOp> &plan;
        ~PlanFds() { close_plan_fds(plan); }
    } plan_fds{mount_plan};
    OCI_CHECK(open_bind_sources(mount_plan, rootfs));
    OCI_CHECK(check_idmap_locks(mount_plan, spec, cfg.in_userns, policy.masks()));
    // What the mounts reach of the host, checked on the objects just opened
    // (the init checks again what it mounts where that differs): no mount
    // reaches the state directory, no writable one a protected path.
    Fd rootfs_fd(::open(rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!rootfs_fd.valid()) return fail_errno("root.path: open " + rootfs);
    std::vector<ReachGuard> reach_guard;
    {
        std::vector<MountEntry> host_mounts = OCI_TRY(own_mounts());
        reach_guard =
            OCI_TRY(reach_guards(o.root, policy.present ? &policy : nullptr, host_mounts));
        auto reaches = OCI_TRY(
            plan_reach(mount_plan, rootfs_fd.get(), rootfs, spec.root->readonly, host_mounts));
        OCI_CHECK(check_reach(reaches, reach_guard));
    }
    cfg.reach_guards = &reach_guard;
    cfg.rootfs_fd = rootfs_fd.get();
    OCI_CHECK(make_idmap_namespaces(mount_plan, user_ns_fd));
    if (log::debug_enabled()) log::debug("mount plan:\n" + describe_plan(mount_plan));
    cfg.mounts = &mount_plan;
    cfg.lock_mounts = policy.masks();
    cfg.policy_strict = policy.strict;
    // A new network namespace gets its loopback up, as with runc and crun.
    cfg.loopback_up = policy.net.own_namespace() || (flags & CLONE_NEWNET) != 0;
    if (policy.net.own_namespace()) cfg.listen_ports = policy.net.listen_ports();
    // The proxy is the only way out: the process is told where it is.
    if (policy.net.proxy()) add_proxy_env(spec.process->env);
    const bool want_shim = policy.net.helper() && host_facts.shim;
    // The host interfaces to move in (after the clone): there now.
    if (!lx.net_devices.empty() && policy.net.own_namespace())
        return fail("config.json: linux.netDevices: dev.ocirun.network=" + policy.net.mode +
                    " allows loopback only");
    for (const auto &[name, dev] : lx.net_devices)
        OCI_CHECK(check_interface(name));
    if (!lx.net_devices.empty()) OCI_CHECK(check_net_device_helper());
    std::optional<SeccompFilter> guard;
    if (policy.present) {
        static const std::vector<std::string> none;
        guard = OCI_TRY(compile_sandbox_guard(
            spec.process->capabilities ? spec.process->capabilities->bounding : none, policy.net));
        cfg.guard = &*guard;
    }
    // Every refusal is above: from here on the runtime makes things (the
    // fifos in the state directory, the connection to the caller's console
    // socket, the cgroup, the init).
    int fifo_r, fifo_w = -1, start_result;
    if (here) {
        int rel[2], res[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rel) < 0)
            return fail_errno("socketpair");
        here->release.reset(rel[0]);
        fifo_r = fds.add(rel[1]);
        if (::pipe2(res, O_CLOEXEC) < 0) return fail_errno("pipe");
        here->result.reset(res[0]);
        start_result = fds.add(res[1]);
    } else {
        std::string fifo = dir.path() + "/" + kFifo;
        if (::mkfifo(fifo.c_str(), 0600) < 0) return fail_errno("mkfifo " + fifo);
        fifo_r = fds.add(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
        fifo_w = fds.add(::open(fifo.c_str(), O_WRONLY | O_CLOEXEC));
        if (fifo_r < 0 || fifo_w < 0) return fail_errno("open " + fifo);
        std::string start_fifo = dir.path() + "/" + kStartFifo;
        if (::mkfifo(start_fifo.c_str(), 0600) < 0) return fail_errno("mkfifo " + start_fifo);
        start_result = fds.add(::open(start_fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
        if (start_result < 0) return fail_errno("open " + start_fifo);
    }
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return fail_errno("socketpair");
    fds.add(sv[0]);
    fds.add(sv[1]);
    int console = o.console_fd;
    if (!o.console_socket.empty())
        console = fds.add(OCI_TRY(sync::connect_unix(o.console_socket, "--console-socket")));
    fault_point("create:fifos");
    cfg.start_result_fd = start_result;
    cfg.sync_fd = sv[1];
    cfg.fifo_read_fd = fifo_r;
    cfg.fifo_write_fd = fifo_w;
    cfg.console_fd = console;
    cfg.report_pid = spawns_through_intermediate(cfg, user_ns_fd);
    // A PID namespace joined by path takes the init only (left right after
    // the init is spawned).
    ChildPidNamespace child_pidns;
    if (pid_ns_fd >= 0) OCI_CHECK(child_pidns.enter(pid_ns_fd));
    if (cfg.report_pid) {
        int on = 1;
        if (::setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0)
            return fail_errno("sync socket: SO_PASSCRED");
    }

    ContainerRecord rec;
    rec.state.oci_version = oci::kSpecVersion;
    rec.state.id = o.id;
    rec.state.status = oci::ContainerStatus::creating;
    rec.state.bundle = bundle;
    rec.state.annotations = spec.annotations;
    rec.created = oci::rfc3339_now();
    rec.rootfs = rootfs;
    rec.owner = ::geteuid();
    rec.has_hooks = has_hooks;
    rec.sandboxed = policy.present;
    rec.trace = policy.trace;

    // The cgroup is made before the init exists, and recorded first, so that
    // a crash from here on leaves it where delete --force finds it.
    CgroupHost host;
    Fd cgroup_fd;
    if (wants_cgroup(spec, o.rootless)) {
        host = OCI_TRY(detect_cgroup_host());
        std::vector<CgroupWrite> writes;
        if (lx.resources) {
            oci::Resources r = *lx.resources;
            // An unprivileged user can neither load a device program nor make
            // device nodes the rules would guard.
            if (::geteuid() != 0) r.devices.clear();
            writes = OCI_TRY(plan_resources(r, host));
        }
        rec.cgroup_dirs = OCI_TRY(cgroup_dirs_for(host, lx.cgroups_path, o.id));
        rec.cgroups_path = lx.cgroups_path;
        if (lx.cgroups_path.empty() && !sets_cpuset(lx.resources) && !admin_on_host(spec))
            leave_out_v1_cpuset(host, rec.cgroup_dirs);
        OCI_CHECK(dir.save(rec));
        fault_point("create:recorded");
        OCI_CHECK(create_cgroup(host, rec.cgroup_dirs, writes));
        fault_point("create:cgroup");
        // What the container's cgroup mount shows: its own directory in each
        // hierarchy it has one in (runtime/filesystem/rootfs.cpp mount_cgroup).
        for (const auto &d : rec.cgroup_dirs) {
            const Hierarchy &h = *hierarchy_of(host, d);
            CgroupView v;
            v.version = h.version;
            v.dir = d;
            v.name = h.mount.substr(h.mount.rfind('/') + 1);
            for (const auto &c : h.controllers)
                v.options += (v.options.empty() ? "" : ",") + c;
            if (v.options.rfind("name=", 0) == 0) v.options = "none," + v.options;
            cfg.cgroups.push_back(std::move(v));
        }
        std::string u = unified_dir(host, rec.cgroup_dirs);
        if (!u.empty()) cgroup_fd.reset(::open(u.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    }
    struct CgroupGuard {
        const CgroupHost &host;
        const std::vector<std::string> &dirs;
        bool keep = false;
        ~CgroupGuard() {
            if (!keep && !dirs.empty()) (void)destroy_cgroup(host, dirs);
        }
    } cgroup_guard{host, rec.cgroup_dirs};

    cfg.cgroup_fd = cgroup_fd.get();
    auto spawned = spawn_init(cfg, dir, fds, sv[0],
                              {here ? here->release.get() : -1, here ? here->result.get() : -1},
                              user_ns_fd, flags, cgroup_fd.get());
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
        if (hooks_started) run_poststop(spec, rec);
        return forward(std::move(e));
    };

    // Before proceed: the init turns non-dumpable once it has it, and from
    // then on only root could write its /proc files.
    if (spec.process->oom_score_adj) {
        if (auto r =
                write_proc_file(pid, "oom_score_adj", std::to_string(*spec.process->oom_score_adj),
                                "process.oomScoreAdj");
            !r)
            return abort_child(r.error());
    }
    if (cfg.new_userns)
        if (auto r = write_id_mappings(pid, lx); !r) return abort_child(r.error());
    if (!rec.cgroup_dirs.empty())
        if (auto r = enter_cgroup(rec.cgroup_dirs, pid); !r) return abort_child(r.error());
    if (auto r = move_net_devices(lx, pid); !r) return abort_child(r.error());
    // (An unprivileged runtime's init reaches what the runtime does.)
    if (cfg.passes_sources)
        if (auto r = pass_bind_sources(sv[0], pid, mount_plan); !r) return abort_child(r.error());
    fault_point("create:joined");
    if (auto r = sync::send(sv[0], sync::Msg::proceed); !r) return abort_child(r.error());
    fault_point("create:proceeded");
    // While the init sets up (until then it dies with this process, which
    // leaves the record without a PID: delete --force knows that case).
    rec.state.pid = pid;
    rec.init_start_time = process_start_time(pid);
    if (struct stat ns; ::stat(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), &ns) == 0)
        rec.init_pidns = ns.st_ino;
    if (auto r = dir.save(rec); !r) return abort_child(r.error());
    fault_point("create:pid-saved");
    // exec reads the container's configuration from here, not from a bundle
    // that may have changed since.
    if (auto r = oci::write_file_atomic(dir.path() + "/config.json", oci::write_spec(spec, false));
        !r)
        return abort_child(r.error());
    if (here) here->spec = spec;
    // (Not with filesystem rules either: the init reports them below.)
    if (here && !want_shim && !cfg.lock_mounts) {
        ContainerRecord running = rec;
        mark_running(running);
        auto staged = dir.stage(running);
        if (!staged) return abort_child(staged.error());
        here->running.emplace(std::move(*staged));
    }
    auto msg = sync::receive(sv[0], "the container's init");
    std::vector<Fd> listeners; // the init's sockets for the network helper
    while (msg && (msg->type == sync::Msg::hooks || msg->type == sync::Msg::seccomp_notify ||
                   msg->type == sync::Msg::listener || msg->type == sync::Msg::fs_rule ||
                   msg->type == sync::Msg::fs_way || msg->type == sync::Msg::fs_made ||
                   msg->type == sync::Msg::time_offsets)) {
        if (msg->type == sync::Msg::time_offsets) {
            // The init's new time namespace, before anything entered it.
            std::string file = "/proc/" + std::to_string(pid) + "/timens_offsets";
            if (auto r = write_existing_file(file, time_offsets_text(spec), "linux.timeOffsets");
                !r)
                return abort_child(r.error());
            if (auto r = sync::send(sv[0], sync::Msg::proceed); !r) return abort_child(r.error());
        } else if (msg->type == sync::Msg::fs_rule || msg->type == sync::Msg::fs_way ||
                   msg->type == sync::Msg::fs_made) {
            if (auto r = record_fs_note(rec, *msg); !r) return abort_child(r.error());
        } else if (msg->type == sync::Msg::listener) {
            listeners.emplace_back(msg->fd);
            if (!listeners.back().valid())
                return abort_child(Error{0, "sync: a listening socket did not arrive"});
        } else if (msg->type == sync::Msg::hooks) {
            // Mounts done, before pivot_root: prestart and createRuntime run
            // here, in the runtime's namespaces.
            hooks_started = true;
            fault_point("create:hooks");
            std::string st = hook_state(rec, oci::ContainerStatus::creating);
            if (auto r = run_hooks(spec.hooks->prestart, "prestart", st); !r)
                return abort_child(r.error());
            if (auto r = run_hooks(spec.hooks->create_runtime, "createRuntime", st); !r)
                return abort_child(r.error());
            if (auto r = sync::send(sv[0], sync::Msg::hooks_done, pid); !r)
                return abort_child(r.error());
        } else {
            // The init's seccomp notify fd, for the listener.
            Fd notify(msg->fd);
            if (!notify.valid())
                return abort_child(Error{0, "sync: the seccomp notify fd did not arrive"});
            if (auto r = send_seccomp_listener(*lx.seccomp, notify.get(), pid, rec.state); !r)
                return abort_child(r.error());
        }
        msg = sync::receive(sv[0], "the container's init");
    }
    if (!msg) return abort_child(msg.error());
    if (msg->type == sync::Msg::error) return abort_child(Error{msg->value, msg->text});
    if (msg->type != sync::Msg::ready)
        return abort_child(Error{0, "sync: unexpected message from the container's init"});
    fault_point("create:ready");

    if (want_shim) {
        if (listeners.size() != cfg.listen_ports.size())
            return abort_child(Error{0, "sync: the init sent " + std::to_string(listeners.size()) +
                                            " listening sockets, not " +
                                            std::to_string(cfg.listen_ports.size())});
        auto shim = start_network_helper(o.id, dir.path(), pid, listeners, policy.net, host,
                                         rec.cgroup_dirs);
        if (!shim) return abort_child(shim.error());
        rec.shim_pid = shim->pid;
        rec.shim_start_time = shim->start_time;
        fault_point("create:shim");
    }
    listeners.clear();

    rec.state.status = oci::ContainerStatus::created;
    // run goes on to start under the same lock, which records it running:
    // no one can see it created in between (a run that dies here leaves it
    // creating, which delete --force removes).
    if (!here)
        if (auto r = dir.save(rec); !r) return abort_child(r.error());
    fault_point("create:created");
    if (auto r = write_pid_file(o.pid_file, pid); !r)
        return abort_child(r.error().wrap("--pid-file"));
    // Through the exec stage, the init runs the runtime's binary until it
    // execs the stage, right after ready: create returns once it has (its
    // end of the sync socket closes with that exec, or with the init), so
    // nothing that joins the container's namespaces afterwards meets it.
    if (!stage.empty()) {
        for (;;) {
            char b;
            ssize_t n = ::recv(sv[0], &b, 1, 0);
            if (n == 0 || (n < 0 && errno != EINTR)) break;
        }
    }
    cgroup_guard.keep = true;
    log::debug("created container " + o.id + " with init " + std::to_string(pid));
    if (here) here->rec = rec;
    return pid;
}

// Everything written to a non-blocking fifo until its last writer closes.
std::string read_until_eof(int fd) {
    std::string out;
    for (;;) {
        char buf[4096];
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            out.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n == 0) return out;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return out;
        struct pollfd p = {fd, POLLIN, 0};
        ::poll(&p, 1, -1);
    }
}

// dev.ocirun.trace: strace (from the host) attached to the init before it is
// released, following every process. Its log is trace.log in the container's
// state directory, opened here (never a path from the bundle) and given to
// strace as its stderr, where it writes without -o: no file name, and no
// "|command" pipe, is ever passed to it.
Status attach_strace(const ContainerDir &dir, pid_t init) {
    Fd log(
        ::openat(dir.fd(), kTraceLog, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!log.valid()) return fail_errno("trace: create " + dir.path() + "/" + kTraceLog);
    // Detached from `start`: it outlives it.
    SpawnSpec strace;
    strace.path = "/usr/bin/strace";
    strace.args = {"strace", "-f", "-qq", "-p", std::to_string(init)};
    strace.err = log.get();
    strace.detach = true;
    OCI_TRY(spawn_program(strace, "trace"));
    // Released only once strace has attached (bounded: 5 s).
    std::string status_path = "/proc/" + std::to_string(init) + "/status";
    for (int i = 0; i < 500; i++) {
        auto text = oci::read_file(status_path);
        if (!text) return forward(std::move(text.error()), "trace");
        auto at = text->find("TracerPid:");
        if (at != std::string::npos && std::strtol(text->c_str() + at + 10, nullptr, 10) > 0)
            return {};
        struct timespec ts = {0, 10 * 1000000};
        ::nanosleep(&ts, nullptr);
    }
    return fail("trace: strace did not attach to the init within 5 s");
}

// `here`: run's, with the record straight from create under the same lock
// (an init that died since shows when the release finds no reader).
Status start_locked(ContainerDir &dir, StartHere *here = nullptr) {
    ContainerRecord rec;
    if (here) {
        rec = std::move(here->rec);
    } else {
        rec = OCI_TRY(dir.load());
        CgroupHost host = OCI_TRY(host_for(rec));
        oci::ContainerStatus st = live_status(dir, host, rec);
        if (st != oci::ContainerStatus::created)
            return fail("container \"" + dir.id() + "\" is " + oci::status_name(st) +
                        ", not created");
    }
    if (rec.trace) OCI_CHECK(attach_strace(dir, rec.state.pid));
    // config.json, read once, where the policy or the hooks need it.
    std::optional<oci::Spec> spec;
    SandboxPolicy policy;
    if (here && here->spec)
        spec = *here->spec;
    else if (rec.sandboxed || rec.has_hooks)
        spec = OCI_TRY(oci::load_bundle_spec(dir.path()));
    if (rec.sandboxed) policy = OCI_TRY(parse_sandbox_policy(spec->annotations));
    auto not_enforced = [&](const ReportRow &r) {
        return "sandbox policy of " + dir.id() + ": " + r.dimension + " is not enforced (" +
               r.detail + ")";
    };
    // The filesystem rules, tried from inside before the process runs: in
    // strict mode a rule the container could get round refuses the start.
    bool fs_measured = false;
    if (rec.sandboxed && !rec.fs_rules.empty()) {
        for (const auto &r : OCI_TRY(measure_fs_rules(rec, *spec, policy))) {
            if (r.state != "degraded") continue;
            if (policy.strict) return fail(not_enforced(r) + " (dev.ocirun.enforcement=strict)");
            log::error(not_enforced(r));
        }
        fs_measured = true;
    }
    // The running record is written before the init is released: once it
    // runs, nothing (not a full --root) may leave it recorded as created.
    mark_running(rec);
    oci::StagedFile running =
        here && here->running ? std::move(*here->running) : OCI_TRY(dir.stage(rec));
    std::string answer;
    if (here) {
        char c = '0';
        if (::send(here->release.get(), &c, 1, MSG_NOSIGNAL) != 1) {
            if (errno == EPIPE) return fail("container \"" + dir.id() + "\": its init is gone");
            return fail_errno("start: release the init");
        }
        here->release.reset();
        fault_point("start:released");
        answer = read_until_eof(here->result.get());
        here->result.reset();
    } else {
        std::string fifo = dir.path() + "/" + kFifo;
        std::string start_fifo = dir.path() + "/" + kStartFifo;
        // Opened before the init is released, so that its answer cannot be
        // missed.
        int result = ::open(start_fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (result < 0) return fail_errno("open " + start_fifo);
        int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            ::close(result);
            if (e == ENXIO) return fail("container \"" + dir.id() + "\": its init is gone");
            return fail_code(e, "open " + fifo);
        }
        char c = '0';
        ssize_t n = ::write(fd, &c, 1);
        int e = errno;
        ::close(fd);
        if (n != 1) {
            ::close(result);
            return fail_code(e, "start: write " + fifo);
        }
        ::unlink(fifo.c_str());
        fault_point("start:released");
        // The init closes the start fifo by exec'ing the process (CLOEXEC),
        // or writes "ERRNO TEXT" first when startContainer hooks or exec fail.
        answer = read_until_eof(result);
        ::close(result);
        ::unlink(start_fifo.c_str());
    }
    OCI_CHECK(running.commit());
    if (!answer.empty()) {
        char *end = nullptr;
        long code = std::strtol(answer.c_str(), &end, 10);
        std::string text = *end == ' ' ? end + 1 : answer;
        while (!text.empty() && text.back() == '\n')
            text.pop_back();
        return fail_code(static_cast<int>(code), text);
    }
    // A sandbox policy is measured once the process runs: what contradicts
    // it is an error in the log (and shows in `report`).
    if (rec.sandboxed) {
        if (auto rows = measure_container(rec, *spec, policy, !fs_measured)) {
            for (const auto &r : *rows)
                if (r.state == "degraded") log::error(not_enforced(r));
        }
    }
    if (rec.has_hooks) {
        if (spec->hooks) {
            auto r = run_hooks(spec->hooks->poststart, "poststart",
                               hook_state(rec, oci::ContainerStatus::running));
            if (!r) {
                // runtime-spec Lifecycle step 9: stop the container.
                if (auto h = host_for(rec)) (void)signal_init(*h, rec, SIGKILL);
                return forward(std::move(r.error()));
            }
        }
    }
    return {};
}

} // namespace

Result<pid_t> create_container(const CreateOptions &o) {
    ContainerDir dir = OCI_TRY(ContainerDir::create(o.root, o.id));
    auto pid = create_impl(o, dir);
    if (!pid) {
        (void)dir.remove();
        return forward(std::move(pid.error()), "create");
    }
    return pid;
}

Status start_container(const std::string &root, const std::string &id) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    auto r = start_locked(dir);
    if (!r) return forward(std::move(r.error()), "start");
    return {};
}

// A foreground run without --console-socket keeps the pty master itself
// (runtime/lifecycle/tty_relay.hpp): the init sends it over this pair. It is sent
// before the init reports ready, so after create it is there or never comes.
struct ForegroundConsole {
    int ours = -1, theirs = -1;
    ~ForegroundConsole() {
        if (ours >= 0) ::close(ours);
        if (theirs >= 0) ::close(theirs);
    }
    int master() {
        ::close(theirs);
        theirs = -1;
        ::fcntl(ours, F_SETFL, O_NONBLOCK);
        auto fd = sync::receive_fd(ours);
        return fd ? *fd : -1;
    }
};

// `known`: config.json as the caller has it already (run), or null.
Status remove_container(ContainerDir &dir, bool force, const oci::Spec *known = nullptr);

Result<int> run_container(const CreateOptions &o, bool detach, bool keep) {
    pid_t pid;
    CreateOptions opts = o;
    ForegroundConsole console;
    if (!detach && o.console_socket.empty()) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
            return fail_errno("run: socketpair");
        console.ours = sv[0];
        console.theirs = opts.console_fd = sv[1];
        opts.clear_onlcr = !::isatty(STDOUT_FILENO);
        opts.console_size = own_terminal_size();
    }
    int master = -1;
    std::optional<oci::Spec> spec; // read once, by create
    {
        ContainerDir dir = OCI_TRY(ContainerDir::create(o.root, o.id));
        StartHere here;
        auto p = create_impl(opts, dir, &here);
        if (!p) {
            (void)dir.remove();
            return forward(std::move(p.error()), "run");
        }
        pid = *p;
        if (console.ours >= 0) master = console.master();
        if (!detach) forward_signals_to(pid);
        if (auto r = start_locked(dir, &here); !r) {
            if (master >= 0) ::close(master);
            kill_and_reap(pid);
            if (auto d = remove_container(dir, true, here.spec ? &*here.spec : nullptr); !d)
                log::warning(d.error().text());
            return forward(std::move(r.error()), "run");
        }
        spec = std::move(here.spec);
    }
    if (detach) return 0;
    auto code = master >= 0 ? relay_terminal(master, pid) : wait_exit_status(pid);
    forward_signals_to(0);
    if (!code) return forward(std::move(code.error()), "run");
    if (!keep) {
        auto r = delete_container(o.root, o.id, true, spec ? &*spec : nullptr);
        if (!r) log::warning(r.error().text());
    }
    return code;
}

Result<oci::State> container_state(const std::string &root, const std::string &id) {
    ContainerDir dir = OCI_TRY(ContainerDir::observe(root, id));
    ContainerRecord rec = OCI_TRY(dir.load());
    CgroupHost host = OCI_TRY(host_for(rec));
    rec.state.status = live_status(dir, host, rec);
    if (rec.state.status == oci::ContainerStatus::stopped) rec.state.pid = 0;
    if (rec.trace) rec.state.annotations[kTraceLogAnnotation] = dir.path() + "/" + kTraceLog;
    return rec.state;
}

Status kill_container(const std::string &root, const std::string &id, int sig, bool all) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    ContainerRecord rec = OCI_TRY(dir.load());
    CgroupHost host = OCI_TRY(host_for(rec));
    oci::ContainerStatus st = live_status(dir, host, rec);
    if (st == oci::ContainerStatus::stopped) {
        // As runc: --all still reaches what is left in the cgroup, and is
        // not an error (containerd's `task delete --force` sends it); a
        // signal for the init alone is, worded as the runc shim expects.
        if (all && !rec.cgroup_dirs.empty()) (void)signal_cgroup(host, rec.cgroup_dirs, sig);
        if (all) return {};
        return fail("kill: container not running (\"" + id + "\" has stopped)");
    }
    if (all) {
        // Every process of the container: its cgroup, or without one (an
        // unprivileged user's container) its own PID namespace.
        if (!rec.cgroup_dirs.empty()) {
            // The init with the rest.
            if (auto r = signal_cgroup(host, rec.cgroup_dirs, sig); !r)
                return forward(std::move(r.error()), "kill --all");
            return {};
        } else if (!has_own_pid_namespace(rec.state.pid)) {
            return fail("kill --all: container \"" + id +
                        "\" has no cgroup and shares the runtime's PID namespace: its "
                        "processes cannot be told from the host's");
        } else {
            signal_pidns_members(rec.state.pid, sig);
        }
    }
    auto r = signal_init(host, rec, sig);
    if (!r) return forward(std::move(r.error()), "kill");
    return {};
}

namespace {

// A container's record and cgroup for the commands that need the cgroup.
struct WithCgroup {
    ContainerDir dir;
    ContainerRecord rec;
    CgroupHost host;
    oci::ContainerStatus status;
};

Result<WithCgroup> open_with_cgroup(const std::string &root, const std::string &id,
                                    const char *cmd) {
    WithCgroup w;
    w.dir = OCI_TRY(ContainerDir::open(root, id));
    w.rec = OCI_TRY(w.dir.load());
    if (w.rec.cgroup_dirs.empty())
        return fail(std::string(cmd) + ": container \"" + id +
                    "\" has no cgroup (an unprivileged user's container without resources)");
    w.host = OCI_TRY(host_for(w.rec));
    w.status = live_status(w.dir, w.host, w.rec);
    return w;
}

Status set_frozen(const std::string &root, const std::string &id, bool frozen) {
    const char *cmd = frozen ? "pause" : "resume";
    WithCgroup w = OCI_TRY(open_with_cgroup(root, id, cmd));
    auto want = frozen ? oci::ContainerStatus::running : oci::ContainerStatus::paused;
    if (w.status != want)
        return fail(std::string(cmd) + ": container \"" + id + "\" is " +
                    oci::status_name(w.status) + ", not " + oci::status_name(want));
    auto r = freeze_cgroup(w.host, w.rec.cgroup_dirs, frozen);
    if (!r) return forward(std::move(r.error()), cmd);
    return {};
}

} // namespace

Status pause_container(const std::string &root, const std::string &id) {
    return set_frozen(root, id, true);
}

Status resume_container(const std::string &root, const std::string &id) {
    return set_frozen(root, id, false);
}

Result<std::vector<pid_t>> container_pids(const std::string &root, const std::string &id) {
    WithCgroup w = OCI_TRY(open_with_cgroup(root, id, "ps"));
    auto pids = cgroup_pids(w.host, w.rec.cgroup_dirs);
    if (!pids) return forward(std::move(pids.error()), "ps");
    return pids;
}

// delete with the container's directory already open and locked.
Status remove_container(ContainerDir &dir, bool force, const oci::Spec *known) {
    const std::string id = dir.id();
    auto rec = dir.load();
    CgroupHost host;
    if (rec) {
        auto h = host_for(*rec);
        if (!h && !force) return forward(std::move(h.error()), "delete");
        if (!h) {
            // --force: the state goes, but nothing the record names is
            // killed or removed.
            log::warning("delete --force: " + h.error().text() +
                         "; nothing it names is killed or removed");
            rec = std::unexpected(h.error());
        } else {
            host = std::move(*h);
        }
    }
    if (rec) {
        oci::ContainerStatus st = live_status(dir, host, *rec);
        if (st != oci::ContainerStatus::stopped) {
            if ((st == oci::ContainerStatus::running || st == oci::ContainerStatus::paused) &&
                !force)
                return fail("delete: container \"" + id + "\" is " + oci::status_name(st) +
                            ": stop it first or use --force");
            if (!rec->cgroup_dirs.empty()) (void)signal_cgroup(host, rec->cgroup_dirs, SIGKILL);
            (void)signal_init(host, *rec, SIGKILL, true);
            if (st == oci::ContainerStatus::paused)
                (void)freeze_cgroup(host, rec->cgroup_dirs, false);
            if (!wait_process_gone(rec->state.pid, 10000))
                return fail("delete: container \"" + id + "\": init " +
                            std::to_string(rec->state.pid) + " did not exit after SIGKILL");
            fault_point("delete:killed");
        }
        if (!rec->cgroup_dirs.empty())
            if (auto r = destroy_cgroup(host, rec->cgroup_dirs); !r)
                return forward(std::move(r.error()), "delete");
        fault_point("delete:cgroup");
    } else if (!force) {
        return forward(std::move(rec.error()), "delete");
    }
    // The network helper leaves with the init; make sure it has.
    if (rec) stop_shim(rec->shim_pid, rec->shim_start_time, id, dir.path());
    fault_point("delete:shim");
    std::optional<oci::Spec> spec;
    if (rec && rec->has_hooks && known) {
        spec = *known;
    } else if (rec && rec->has_hooks) {
        auto s = oci::load_bundle_spec(dir.path());
        if (s)
            spec = std::move(*s);
        else
            log::warning("delete: poststop hooks not run: " + s.error().text());
    }
    if (rec) remove_placeholders(*rec);
    auto r = dir.remove();
    if (!r) return forward(std::move(r.error()), "delete");
    if (spec) run_poststop(*spec, *rec);
    return {};
}

Status delete_container(const std::string &root, const std::string &id, bool force,
                        const oci::Spec *known) {
    // runc's behaviour, which Podman relies on after a failed create:
    // --force of a container that is not there is done already.
    struct stat st;
    if (force && validate_id(id) && ::lstat((root + "/" + id).c_str(), &st) < 0 && errno == ENOENT)
        return {};
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    return remove_container(dir, force, known);
}

Result<std::vector<ContainerInfo>> list_containers(const std::string &root) {
    std::vector<ContainerInfo> out;
    CgroupHost host;
    for (const auto &id : OCI_TRY(list_ids(root))) {
        auto dir = ContainerDir::observe(root, id);
        if (!dir) continue;
        auto rec = dir->load();
        if (!rec) continue;
        ContainerInfo info;
        info.state = rec->state;
        if (!rec->cgroup_dirs.empty() && host.hierarchies.empty())
            if (auto h = detect_cgroup_host()) host = std::move(*h);
        info.state.status = live_status(*dir, host, *rec);
        if (info.state.status == oci::ContainerStatus::stopped) info.state.pid = 0;
        info.created = rec->created;
        info.owner = rec->owner;
        out.push_back(std::move(info));
    }
    return out;
}

} // namespace ocirun
