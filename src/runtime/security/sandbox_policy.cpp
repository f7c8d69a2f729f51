#include "runtime/security/sandbox_policy.hpp"

#include "build_config.h"
#include "oci/spec_io.hpp"
#include "oci/text.hpp"
#include "runtime/filesystem/mount_options.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/lifecycle/record.hpp"
#include "runtime/log.hpp"
#include "runtime/network/firewall.hpp"
#include "runtime/network/shim_launch.hpp"
#include "runtime/process/userns.hpp"
#include "runtime/security/device_reach.hpp"
#include "sandbox_guard.h"

#include <fcntl.h>
#include <linux/net.h>
#include <linux/netlink.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

namespace ocirun {

namespace {

// socket(2) and socketpair(2) of a family outside `f` answer EAFNOSUPPORT.
// libseccomp compares an argument once per rule, so each value outside the
// allowed set is a rule of its own (below the first, each gap, above the
// last); the comparison is of all 64 bits, so a family with bits set above
// the 32 the kernel reads is refused too.
void add_family_rules(oci::Seccomp &s, const SocketFamilies &f) {
    if (!f.restricted || f.allowed.empty()) return;
    auto rule = [&](std::vector<std::string> names, int err, std::vector<oci::SeccompArg> args) {
        oci::Syscall sc;
        sc.names = std::move(names);
        sc.action = "SCMP_ACT_ERRNO";
        sc.errno_ret = static_cast<uint32_t>(err);
        sc.args = std::move(args);
        s.syscalls.push_back(std::move(sc));
    };
    auto arg = [](uint32_t index, uint64_t v, const char *op) {
        oci::SeccompArg a;
        a.index = index;
        a.value = v;
        a.op = op;
        return a;
    };
    const std::vector<std::string> calls = {"socket", "socketpair"};
    const std::vector<int> &ok = f.allowed;
    if (ok.front() > 0)
        rule(calls, EAFNOSUPPORT, {arg(0, static_cast<uint64_t>(ok.front()), "SCMP_CMP_LT")});
    for (size_t i = 0; i + 1 < ok.size(); i++)
        for (int v = ok[i] + 1; v < ok[i + 1]; v++)
            rule(calls, EAFNOSUPPORT, {arg(0, static_cast<uint64_t>(v), "SCMP_CMP_EQ")});
    rule(calls, EAFNOSUPPORT, {arg(0, static_cast<uint64_t>(ok.back()), "SCMP_CMP_GT")});
    if (f.netlink_route_only)
        rule({"socket"}, EPROTONOSUPPORT,
             {arg(0, AF_NETLINK, "SCMP_CMP_EQ"), arg(2, NETLINK_ROUTE, "SCMP_CMP_NE")});
    // i386: socketcall(SYS_SOCKET or SYS_SOCKETPAIR, args): the family is
    // behind a pointer.
    rule({"socketcall"}, EAFNOSUPPORT, {arg(0, SYS_SOCKET, "SCMP_CMP_EQ")});
    rule({"socketcall"}, EAFNOSUPPORT, {arg(0, SYS_SOCKETPAIR, "SCMP_CMP_EQ")});
}

// How a gap of the rules on files begins.
const std::string kDisksClosed = "the filesystem rules need the host's disks closed: ";

// One line for every gap: refused in strict mode, a warning in report mode.
Status report_gaps(const SandboxPolicy &policy, const std::vector<std::string> &gaps) {
    if (gaps.empty()) return {};
    std::string all;
    for (const auto &g : gaps)
        all += (all.empty() ? "" : "; ") + g;
    if (policy.strict)
        return fail("sandbox policy (dev.ocirun.enforcement=strict): cannot enforce: " + all);
    log::warning("sandbox policy (dev.ocirun.enforcement=report): not enforced: " + all);
    return {};
}

} // namespace

Result<SeccompFilter> compile_sandbox_guard(const std::vector<std::string> &caps,
                                            const NetworkPolicy &net) {
    auto spec = oci::parse_spec(std::string("{\"ociVersion\": \"1.2.1\", \"linux\": "
                                            "{\"seccomp\": ") +
                                kSandboxGuardJson + "}}");
    if (!spec) return forward(std::move(spec.error()), "sandbox-guard profile");
    add_family_rules(*spec->linux_->seccomp, socket_families(net));
    auto f = compile_seccomp(*spec->linux_->seccomp, caps);
    if (!f) return forward(std::move(f.error()), "sandbox-guard profile");
    return f;
}

HostFacts detect_host_facts() {
    HostFacts h;
    h.strace = ::access("/usr/bin/strace", X_OK) == 0;
    h.shim = ::access(shim_path().c_str(), X_OK) == 0;
    h.firewall = ::access(firewall_path().c_str(), X_OK) == 0;
    h.privileged = host_root();
    // An empty change on no fd: only a kernel without the call says ENOSYS.
    struct mount_attr a {};
    h.mount_setattr = ::mount_setattr(-1, "", AT_EMPTY_PATH, &a, sizeof a) == 0 || errno != ENOSYS;
    if (auto devices = oci::read_file("/proc/devices"))
        h.raw_char_majors = raw_char_majors(*devices);
    else
        h.devices_unread = devices.error().text();
    return h;
}

Status check_policy_pid_namespace(const SandboxPolicy &policy, const oci::Spec &spec) {
    if (!policy.present) return {};
    const oci::Namespace *pid = spec.linux_->find_namespace(oci::NsType::pid);
    bool hosts = !pid;
    if (pid && !pid->path.empty()) {
        // Joined by path: someone else's (a pod's) is fine, the runtime's own is not.
        struct stat theirs, ours;
        if (::stat(pid->path.c_str(), &theirs) < 0)
            return fail_errno("config.json: linux.namespaces: pid path " + pid->path);
        hosts = ::stat("/proc/self/ns/pid", &ours) == 0 && theirs.st_ino == ours.st_ino &&
                theirs.st_dev == ours.st_dev;
    }
    if (hosts)
        return fail("config.json: linux.namespaces: a sandbox policy (dev.ocirun.*) needs a PID "
                    "namespace other than the host's: in the host's, /proc/PID/root of the "
                    "host's processes reaches the host's files");
    return {};
}

std::string disks_open(const oci::Spec &spec, const HostFacts &host) {
    const std::string need = kDisksClosed;
    if (!host.raw_char_majors)
        return need + "which character devices reach them is not known (" +
               (host.devices_unread.empty() ? "/proc/devices not read" : host.devices_unread) + ")";
    // Root with no devices cgroup: every node opens, and one can be made.
    if (host.privileged && !host.devices_cgroup)
        return need + "the container has no devices cgroup (--cgroup-manager disabled), so every "
                      "device, the host's disks among them, opens";
    if (std::string open = disk_device_access(*spec.linux_, *host.raw_char_majors, host.privileged);
        !open.empty())
        return need + open;
    return "";
}

Status check_policy_gaps(const SandboxPolicy &policy, const oci::Spec &spec,
                         const HostFacts &host) {
    std::vector<std::string> gaps;
    // Rules on files hold only while the disks under them stay closed.
    if (policy.file_rules())
        if (std::string open = disks_open(spec, host); !open.empty()) gaps.push_back(open);
    if (policy.net.own_namespace()) {
        const oci::Namespace *net = spec.linux_->find_namespace(oci::NsType::network);
        const std::string need = "dev.ocirun.network=" + policy.net.mode;
        const auto &caps = spec.process->capabilities;
        if (!net)
            gaps.push_back(need + " needs a network namespace other than the host's in "
                                  "linux.namespaces (a new one, or a pod's joined by path)");
        else if (!net->path.empty() && !host.firewall)
            gaps.push_back(need +
                           " in a network namespace joined by path needs the firewall "
                           "program oci-run-firewall (not found: " +
                           firewall_path() + ")");
        else if (!net->path.empty() && caps &&
                 std::find(caps->bounding.begin(), caps->bounding.end(), "CAP_NET_ADMIN") !=
                     caps->bounding.end())
            gaps.push_back(need + " in a network namespace joined by path: "
                                  "process.capabilities.bounding holds CAP_NET_ADMIN, with which "
                                  "the container could change that namespace's firewall, routes "
                                  "and traffic control");
    }
    if (policy.net.helper() && !host.shim)
        gaps.push_back("dev.ocirun.network=" + policy.net.mode +
                       " needs the network helper oci-run-shim (not found: install it or set "
                       "OCI_RUN_SHIM)");
    if (!policy.net.publish.empty() && !host.privileged)
        gaps.push_back("dev.ocirun.publish needs root: the helper opens each connection in the "
                       "container's network namespace");
    if (policy.trace && !host.strace)
        gaps.push_back("dev.ocirun.trace needs /usr/bin/strace (Debian package strace)");
    // The masks (locked by a nested user namespace: runtime/lifecycle/init.cpp
    // lock_mounts) are applied through the new mount API.
    if (policy.masks() && !host.mount_setattr)
        gaps.push_back("the kernel has no mount_setattr (5.12+): masks cannot be applied "
                       "through file descriptors");
    return report_gaps(policy, gaps);
}

Status close_device_nodes(const SandboxPolicy &policy, std::vector<MountOp> &plan,
                          const HostFacts &host) {
    if (host.privileged || !host.raw_char_majors || !policy.file_rules())
        return {}; // (the devices cgroup, or check_policy_gaps refused)
    std::vector<std::string> gaps;
    for (MountOp &op : plan) {
        bool bind = op.kind == MountOpKind::mount && op.bind;
        if (!bind && op.kind != MountOpKind::isolate) continue;
        struct stat st;
        if (bind && op.source_fd >= 0 && ::fstat(op.source_fd, &st) == 0 &&
            (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))) {
            if (reaches_disks_raw(st.st_mode, st.st_rdev, *host.raw_char_majors))
                gaps.push_back(kDisksClosed + op.what + " binds " + op.source + " (" +
                               (S_ISBLK(st.st_mode) ? "block" : "character") + " device " +
                               std::to_string(major(st.st_rdev)) + ":" +
                               std::to_string(minor(st.st_rdev)) +
                               "), which reaches the host's disks or memory");
            continue;
        }
        op.options.rec_set |= MOUNT_ATTR_NODEV;
        op.options.rec_clear &= ~static_cast<uint64_t>(MOUNT_ATTR_NODEV);
        // Private: a mount the host makes below it later would come in as
        // a slave's does, without the nodev.
        op.options.propagation = MS_PRIVATE | MS_REC;
    }
    return report_gaps(policy, gaps);
}

namespace {

std::string runtime_name = "oci-run";

} // namespace

void set_runtime_name(const char *argv0) {
    if (!argv0 || !*argv0) return;
    std::string_view n = argv0;
    if (size_t slash = n.rfind('/'); slash != std::string_view::npos) n = n.substr(slash + 1);
    // A name a file can have in the configuration directory.
    if (n.empty() || n[0] == '.' || n.size() > 200) return;
    runtime_name = std::string(n);
}

Result<const RuntimeConfig *> runtime_config() {
    static std::optional<Result<RuntimeConfig>> loaded;
    if (!loaded) {
        auto load = [&]() -> Result<RuntimeConfig> {
            for (const std::string &name : {runtime_name, std::string("default")}) {
                std::string path = std::string(OCIRUN_CONFIG_DIR) + "/" + name + ".json";
                auto text = oci::read_file(path, O_NOFOLLOW, oci::kMaxConfigSize);
                if (!text && text.error().code == ENOENT) continue;
                if (!text) return forward(std::move(text.error()), "runtime configuration");
                return parse_runtime_config(*text, path);
            }
            return RuntimeConfig{};
        };
        loaded.emplace(load());
    }
    if (!*loaded) return std::unexpected(loaded->error());
    return &**loaded;
}

Result<SandboxPolicy> container_policy(const ContainerRecord &rec, const oci::Spec &spec) {
    if (!rec.policy_recorded) return parse_sandbox_policy(spec.annotations);
    // As create worked it out (the runtime configuration's baseline, the
    // pod's network policy), not as the files say now.
    oci::StringMap a;
    for (const auto &[k, v] : spec.annotations)
        if (k.rfind(kAnnotationPrefix, 0) != 0) a[k] = v;
    for (const auto &[k, v] : rec.policy_keys)
        a[k] = v;
    return parse_sandbox_policy(a);
}

} // namespace ocirun
