#include "runtime/filesystem/mount_plan.hpp"

#include "oci/fd.hpp"
#include "oci/text.hpp"
#include "runtime/filesystem/mount_api.hpp"
#include "runtime/filesystem/mount_table.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/process/process_setup.hpp"
#include "runtime/process/userns.hpp"
#include "runtime/security/sandbox_policy.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

namespace ocirun {

namespace {

struct DefaultDevice {
    const char *name;
    unsigned major, minor;
};

constexpr DefaultDevice kDevices[] = {
    {"null", 1, 3},   {"zero", 1, 5},    {"full", 1, 7},
    {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0},
};

struct Link {
    const char *name, *to;
};

constexpr Link kLinks[] = {{"fd", "/proc/self/fd"},       {"stdin", "/proc/self/fd/0"},
                           {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
                           {"core", "/proc/kcore"},       {"ptmx", "pts/ptmx"}};

// An idmapped mount's mapping: its own (uidMappings and gidMappings go
// together), else the container's user namespace's. plan_mounts checks it,
// make_idmap_namespaces writes it.
struct IdmapMaps {
    const std::vector<oci::IdMapping> &uids, &gids;
};
IdmapMaps idmap_maps(const oci::Spec &spec, const oci::Mount &m) {
    if (!m.uid_mappings.empty()) return {m.uid_mappings, m.gid_mappings};
    return {spec.linux_->uid_mappings, spec.linux_->gid_mappings};
}

MountOp op(MountOpKind k, std::string what, std::string dest = {}) {
    MountOp o;
    o.kind = k;
    o.what = std::move(what);
    o.dest = std::move(dest);
    return o;
}

} // namespace

const char *mount_op_name(MountOpKind k) {
    switch (k) {
    case MountOpKind::isolate:
        return "isolate";
    case MountOpKind::mount:
        return "mount";
    case MountOpKind::device:
        return "device";
    case MountOpKind::dev_link:
        return "dev-link";
    case MountOpKind::dev_check:
        return "dev-check";
    case MountOpKind::pivot:
        return "pivot";
    case MountOpKind::mask:
        return "mask";
    case MountOpKind::deny:
        return "deny";
    case MountOpKind::deny_write:
        return "deny-write";
    case MountOpKind::pin:
        return "pin";
    case MountOpKind::readonly:
        return "readonly";
    case MountOpKind::dev_readonly:
        return "dev-readonly";
    case MountOpKind::root_readonly:
        return "root-readonly";
    case MountOpKind::root_propagation:
        return "root-propagation";
    case MountOpKind::chroot:
        return "chroot";
    case MountOpKind::hostname:
        return "hostname";
    case MountOpKind::domainname:
        return "domainname";
    case MountOpKind::sysctl:
        return "sysctl";
    case MountOpKind::personality:
        return "personality";
    }
    return "?";
}

namespace {

// The identity part, after the filesystem: hostname, domainname, each
// sysctl (its /proc path under a private procfs: key dots as slashes), the
// personality (the init's own; an exec'd process sets the configuration's
// itself, runtime/lifecycle/exec.cpp).
void add_identity_ops(const oci::Spec &spec, std::vector<MountOp> &plan) {
    if (!spec.hostname.empty()) {
        MountOp h = op(MountOpKind::hostname, "hostname " + spec.hostname);
        h.source = spec.hostname;
        plan.push_back(std::move(h));
    }
    if (!spec.domainname.empty()) {
        MountOp d = op(MountOpKind::domainname, "domainname " + spec.domainname);
        d.source = spec.domainname;
        plan.push_back(std::move(d));
    }
    for (const auto &[key, value] : spec.linux_->sysctl) {
        std::string rel = "sys/" + key;
        for (size_t i = 4; i < rel.size(); i++)
            if (rel[i] == '.') rel[i] = '/';
        MountOp s = op(MountOpKind::sysctl, "linux.sysctl." + key, rel);
        s.source = value;
        plan.push_back(std::move(s));
    }
    if (const auto &p = spec.linux_->personality) {
        MountOp k = op(MountOpKind::personality, "linux.personality " + p->domain);
        k.persona = persona_of(*p);
        plan.push_back(std::move(k));
    }
}

// The runtime-spec lets a namespace type missing from linux.namespaces be
// inherited (MUST), and a mount namespace be joined by path; either way it is
// not the container's: nothing is mounted in it (that would change the
// host's, or another container's, filesystem), so what needs a mount is
// refused, each naming its field. The process is chrooted into the rootfs.
Result<std::vector<MountOp>> plan_shared(const oci::Spec &spec, const MountFacts &facts) {
    const oci::Linux &lx = *spec.linux_;
    const std::string why =
        std::string(" needs a mount namespace of the container's own (linux.namespaces ") +
        (facts.mount_ns == MountNs::joined ? "joins one by path)" : "has no mount entry)");
    if (!spec.mounts.empty())
        return fail("config.json: mounts[0] " + spec.mounts[0].destination + ":" + why);
    if (!lx.masked_paths.empty()) return fail("config.json: linux.maskedPaths" + why);
    if (!lx.readonly_paths.empty()) return fail("config.json: linux.readonlyPaths" + why);
    if (!lx.devices.empty())
        return fail("config.json: linux.devices[0] " + lx.devices[0].path + ":" + why);
    if (spec.root->readonly) return fail("config.json: root.readonly" + why);
    if (!lx.rootfs_propagation.empty()) return fail("config.json: linux.rootfsPropagation" + why);
    if (!lx.mount_label.empty()) return fail("config.json: linux.mountLabel" + why);
    // Its paths are mounts, and its guard assumes a filesystem of the
    // container's own.
    if (facts.policy) return fail("annotations: the dev.ocirun sandbox policy" + why);
    std::vector<MountOp> plan;
    plan.push_back(op(MountOpKind::chroot,
                      facts.mount_ns == MountNs::joined
                          ? "chroot into root.path (in the joined mount namespace)"
                          : "chroot into root.path (in the runtime's mount namespace)",
                      "/"));
    add_identity_ops(spec, plan);
    return plan;
}

// After the pivot and after /proc and /sys are mounted: masks, then
// read-only paths (a masked path inside a read-only one still gets its
// mask), the sandbox policy, then /dev and the root turn read-only, and the
// identity.
void add_after_pivot(const oci::Spec &spec, const MountFacts &facts,
                     const std::string &dev_readonly, std::vector<MountOp> &plan) {
    const oci::Linux &lx = *spec.linux_;
    // A path listed twice is masked once (a second mask over the first
    // would only stack another mount).
    std::vector<std::string_view> masked;
    masked.reserve(lx.masked_paths.size());
    for (const auto &p : lx.masked_paths) {
        if (std::find(masked.begin(), masked.end(), p) != masked.end()) continue;
        masked.push_back(p);
        plan.push_back(op(MountOpKind::mask, "maskedPaths " + p, p));
    }
    for (const auto &p : lx.readonly_paths)
        plan.push_back(op(MountOpKind::readonly, "readonlyPaths " + p, p));
    // The sandbox policy after the configuration's own masks, before the
    // root turns read-only (its placeholders may need to be made).
    if (facts.policy) {
        for (const auto &p : facts.policy->deny)
            plan.push_back(op(MountOpKind::deny, "annotations[dev.ocirun.deny] " + p, p));
        for (const auto &p : facts.policy->deny_write)
            plan.push_back(
                op(MountOpKind::deny_write, "annotations[dev.ocirun.deny-write] " + p, p));
        for (const auto &p : facts.policy->deny_rename)
            plan.push_back(op(MountOpKind::pin, "annotations[dev.ocirun.deny-rename] " + p, p));
    }
    if (!dev_readonly.empty()) plan.push_back(op(MountOpKind::dev_readonly, dev_readonly, "/dev"));
    if (spec.root->readonly) plan.push_back(op(MountOpKind::root_readonly, "root.readonly", "/"));
    if (!lx.rootfs_propagation.empty()) {
        MountOp p = op(MountOpKind::root_propagation, "linux.rootfsPropagation", "/");
        p.options = parse_mount_options({lx.rootfs_propagation});
        plan.push_back(std::move(p));
    }
    add_identity_ops(spec, plan);
}

// A cgroup mount shows the container's own cgroup (CgroupShow).
void plan_cgroup(MountOp &o, const MountFacts &f) {
    if (f.cgroups.empty()) {
        o.cgroup_show = CgroupShow::host_tree;
        return;
    }
    if (f.cgroups.size() == 1 && f.cgroups[0].version == 2) {
        o.cgroup_show = f.cgroupns ? CgroupShow::cgroup2 : CgroupShow::bind_dir;
        o.cgroup_parts.push_back({f.cgroups[0], f.cgroupns, {}});
        return;
    }
    o.cgroup_show = CgroupShow::per_hierarchy;
    o.cgroup_parts.reserve(f.cgroups.size());
    for (const CgroupView &v : f.cgroups) {
        CgroupPart part{v, f.cgroupns && (v.version == 2 || !f.in_userns), {}};
        if (v.name.find(',') != std::string::npos)
            for (const auto &one : split(v.name, ','))
                part.aliases.push_back(one);
        o.cgroup_parts.push_back(std::move(part));
    }
}

const char *cgroup_show_name(CgroupShow s) {
    switch (s) {
    case CgroupShow::host_tree:
        return "the host's /sys/fs/cgroup read-only (the container has no cgroup)";
    case CgroupShow::cgroup2:
        return "cgroup2 in its cgroup namespace";
    case CgroupShow::bind_dir:
        return "its cgroup directory bound";
    case CgroupShow::per_hierarchy:
        return "a tmpfs with its directory in each hierarchy";
    }
    return "?";
}

// A destination as the path it names ("//dev/./" -> "/dev"; ".." above the
// root stays at the root, as inside it).
std::string lexical(std::string_view dest) {
    std::string out;
    for_each_field(dest, '/', [&](std::string_view p) {
        if (p.empty() || p == ".") return;
        if (p == "..") {
            out.resize(std::min(out.size(), out.rfind('/'))); // nothing above "/"
            return;
        }
        out += '/';
        out += p;
    });
    return out.empty() ? "/" : out;
}

bool is_dev(const std::string &dest) {
    return lexical(dest) == "/dev";
}

} // namespace

MountNs mount_ns_of(const oci::Linux &lx) {
    const oci::Namespace *mnt = lx.find_namespace(oci::NsType::mount);
    return !mnt ? MountNs::inherited : mnt->path.empty() ? MountNs::own : MountNs::joined;
}

bool shares_mount_ns(const std::vector<MountOp> &plan) {
    return !plan.empty() && plan[0].kind == MountOpKind::chroot;
}

bool dev_bound(const std::vector<MountOp> &plan) {
    return std::any_of(plan.begin(), plan.end(),
                       [](const MountOp &o) { return o.kind == MountOpKind::dev_check; });
}

Result<std::vector<MountOp>> plan_mounts(const oci::Spec &spec, const MountFacts &facts) {
    if (facts.mount_ns != MountNs::own) return plan_shared(spec, facts);
    const oci::Linux &lx = *spec.linux_;
    std::vector<MountOp> plan;
    // Every operation in one allocation (no copy of a half-grown plan).
    size_t policy_ops = facts.policy ? facts.policy->deny.size() + facts.policy->deny_write.size() +
                                           facts.policy->deny_rename.size()
                                     : 0;
    size_t optional_ops = spec.root->readonly + !lx.rootfs_propagation.empty() +
                          !spec.hostname.empty() + !spec.domainname.empty() +
                          lx.personality.has_value();
    for (const auto &m : spec.mounts) // room for dev_readonly: a /dev that asks for ro
        optional_ops +=
            is_dev(m.destination) && std::ranges::find(m.options, "ro") != m.options.end();
    plan.reserve(1 + spec.mounts.size() + std::size(kDevices) + lx.devices.size() +
                 std::size(kLinks) + 1 + lx.masked_paths.size() + lx.readonly_paths.size() +
                 policy_ops + optional_ops + lx.sysctl.size());
    std::string dev_readonly; // the /dev mount that asks for ro, if any
    bool devpts = false;      // a devpts on /dev/pts: /dev/ptmx links to its ptmx
    bool dev_bound = false;   // /dev is a bind: nothing is made in it
    // sysfs and mqueue are one superblock per network and IPC namespace:
    // outside a new one of the container's, the host's own (or a pod's)
    // mounts may show it.
    auto made = [&](oci::NsType t) {
        const oci::Namespace *n = lx.find_namespace(t);
        return n && n->path.empty();
    };
    const bool new_net = made(oci::NsType::network), new_ipc = made(oci::NsType::ipc);
    plan.push_back(op(MountOpKind::isolate, "rootfs"));
    for (size_t i = 0; i < spec.mounts.size(); i++) {
        const oci::Mount &m = spec.mounts[i];
        std::string what = "mounts[" + std::to_string(i) + "] " + m.destination;
        MountOp o = op(MountOpKind::mount, what, m.destination);
        o.index = i;
        o.options = parse_mount_options(m.options);
        for (const auto &x : m.options)
            o.option_list += (o.option_list.empty() ? "" : ",") + x;
        if (o.option_list.empty()) o.option_list = "none";
        o.type = m.type.empty() && o.options.bind ? "bind" : m.type;
        o.bind = o.options.bind || o.type == "bind";
        o.source = m.source;
        if (!m.uid_mappings.empty() || !m.gid_mappings.empty() || o.options.idmap) {
            if (!o.bind) return fail(what + ": idmapped mounts must be bind mounts");
            if (m.uid_mappings.empty() != m.gid_mappings.empty())
                return fail(what + ": uidMappings and gidMappings go together");
            // In a user namespace joined by path, that namespace's own
            // mapping (make_idmap_namespaces uses it).
            bool joined = facts.joined_userns && m.uid_mappings.empty();
            IdmapMaps maps = idmap_maps(spec, m);
            if (!joined && (maps.uids.empty() || maps.gids.empty()))
                return fail(what + ": idmap without uidMappings needs the container's user "
                                   "namespace mappings");
            o.options.idmap = true;
        }
        if (o.bind) {
            if (m.source.empty()) return fail(what + ": bind mount without a source");
            // A bind takes no filesystem data, which the kernel ignores for
            // it: key=value options ("mode=755", "size=1k") are passed on,
            // as runc does (config.md: unknown options SHOULD be data). A
            // bare word it does not know is most likely a flag misspelt
            // ("noexce"), which would otherwise be dropped without a word.
            for (const auto &u : m.options)
                if (!known_mount_option(u) && u.find('=') == std::string::npos)
                    return fail(what + ": unknown mount option \"" + u + "\"");
        }
        if (o.options.tmpcopyup && o.type != "tmpfs")
            return fail(what + ": tmpcopyup needs a tmpfs mount");
        // A second procfs would show what maskedPaths and readonlyPaths
        // cover on /proc: /proc/sys writable again (core_pattern runs a
        // program as the host's root where there is no user namespace).
        if (o.type == "proc" && !o.bind && lexical(m.destination) != "/proc")
            return fail(what + ": a proc mount other than /proc would show what maskedPaths and "
                               "readonlyPaths hide there");
        if (o.type == "cgroup") plan_cgroup(o, facts);
        // sysfs needs the network namespace's owner (the kernel's
        // net_current_may_mount): a user namespace that is not gets the
        // host's /sys read-only, as with runc.
        if (o.type == "sysfs" && !o.bind && facts.in_userns && !facts.userns_owns_netns)
            o.sysfs_from_host = true;
        if ((o.type == "sysfs" && !new_net) || (o.type == "mqueue" && !new_ipc))
            o.shared_superblock = true;
        if (o.type == "devpts" && lexical(m.destination) == "/dev/pts") devpts = true;
        // A /dev bound from elsewhere (the host's) is used as it is: no
        // node is made in it, nor a link (runc's needsSetupDev), since they
        // would change the directory bound.
        if (o.bind && is_dev(m.destination)) dev_bound = true;
        // A read-only /dev is made writable first and read-only at the end:
        // its device nodes, links, submounts and console go in it first (as
        // runc's finalizeRootfs).
        if (!o.bind && is_dev(m.destination) && (o.options.flags & MS_RDONLY)) {
            o.options.flags &= ~MS_RDONLY;
            dev_readonly = "mounts[" + std::to_string(i) + "] /dev (ro)";
        }
        plan.push_back(std::move(o));
    }
    // Devices after every mount (the configuration may put its own /dev).
    auto device = [&](const std::string &name, mode_t type, unsigned major, unsigned minor,
                      mode_t mode, uid_t uid, gid_t gid, std::string what) {
        MountOp d = op(MountOpKind::device, std::move(what), "/dev/" + name);
        d.node_type = type;
        d.major = major;
        d.minor = minor;
        d.mode = mode;
        d.uid = uid;
        d.gid = gid;
        d.bind_host_node = facts.in_userns;
        plan.push_back(std::move(d));
    };
    if (dev_bound) {
        if (!lx.devices.empty())
            return fail("config.json: linux.devices[0] " + lx.devices[0].path +
                        ": /dev is a bind mount, which is used as it is (no device is made in it)");
        // What it has of the default devices must be them (a symlink to a
        // host file or a regular file at /dev/null is refused, not used).
        for (const auto &d : kDevices) {
            MountOp c = op(MountOpKind::dev_check, std::string("device /dev/") + d.name,
                           std::string("/dev/") + d.name);
            c.node_type = S_IFCHR;
            c.major = d.major;
            c.minor = d.minor;
            plan.push_back(std::move(c));
        }
        plan.push_back(
            op(MountOpKind::pivot, facts.no_pivot ? "MS_MOVE + chroot" : "pivot_root", "/"));
        add_after_pivot(spec, facts, dev_readonly, plan);
        return plan;
    }
    for (const auto &d : kDevices) {
        // A default device the configuration lists itself is made as it says.
        bool configured = false;
        for (const auto &c : lx.devices)
            if (c.path == std::string("/dev/") + d.name) configured = true;
        if (!configured)
            device(d.name, S_IFCHR, d.major, d.minor, 0666, 0, 0,
                   std::string("device /dev/") + d.name);
    }
    for (size_t i = 0; i < lx.devices.size(); i++) {
        const auto &d = lx.devices[i];
        std::string what = "linux.devices[" + std::to_string(i) + "] " + d.path;
        if (d.path.rfind("/dev/", 0) != 0 || d.path.find("/../") != std::string::npos)
            return fail(what + ": not a path under /dev");
        mode_t type = d.type == "b" ? S_IFBLK : d.type == "p" ? S_IFIFO : S_IFCHR;
        device(d.path.substr(5), type, static_cast<unsigned>(d.major),
               static_cast<unsigned>(d.minor), d.file_mode.value_or(0666), d.uid.value_or(0),
               d.gid.value_or(0), what);
    }
    for (const auto &l : kLinks) {
        if (std::string(l.name) == "ptmx" && !devpts) continue;
        MountOp d =
            op(MountOpKind::dev_link, std::string("/dev/") + l.name, std::string("/dev/") + l.name);
        d.link_to = l.to;
        plan.push_back(std::move(d));
    }
    plan.push_back(op(MountOpKind::pivot, facts.no_pivot ? "MS_MOVE + chroot" : "pivot_root", "/"));
    add_after_pivot(spec, facts, dev_readonly, plan);
    return plan;
}

namespace {

// The detached, idmapped copy of the object open_bind_sources opened (and
// the checks saw), mapped through `userns`, with every option in the order
// the checks assumed (host_reach.cpp).
Status idmap_copy(MountOp &op, int userns) {
    if (op.source_fd < 0) return fail(op.what + ": idmap: the source was not opened");
    Fd tree = OCI_TRY(clone_mount(op.source_fd, op.options.recursive, op.what));
    struct mount_attr a {};
    a.attr_set = MOUNT_ATTR_IDMAP;
    a.userns_fd = static_cast<uint64_t>(userns);
    if (::mount_setattr(tree.get(), "",
                        AT_EMPTY_PATH | (op.options.idmap_recursive ? AT_RECURSIVE : 0), &a,
                        sizeof a) < 0)
        return fail_errno(op.what + ": idmap: mount_setattr (does the filesystem of " + op.source +
                          " support idmapped mounts?)");
    OCI_CHECK(apply_attr_plan(tree.get(), attr_plan(op.options), op.what));
    op.idmap_tree_fd = tree.release();
    return {};
}

} // namespace

Status make_idmap_namespaces(std::vector<MountOp> &plan, const oci::Spec &spec, int joined_userns) {
    for (MountOp &op : plan) {
        if (op.kind != MountOpKind::mount || !op.options.idmap) continue;
        if (op.index >= spec.mounts.size())
            return fail(op.what + ": idmap: not a mount of this configuration");
        IdmapMaps mapping = idmap_maps(spec, spec.mounts[op.index]);
        if (mapping.uids.empty() && joined_userns >= 0) {
            OCI_CHECK(idmap_copy(op, joined_userns));
            continue;
        }
        int go[2];
        if (::pipe2(go, O_CLOEXEC) < 0) return fail_errno(op.what + ": idmap: pipe");
        pid_t child = static_cast<pid_t>(
            ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
        if (child == 0) {
            // Held in the new namespace until the runtime has its fd.
            char c;
            ::close(go[1]);
            (void)!::read(go[0], &c, 1);
            ::_exit(0);
        }
        ::close(go[0]);
        if (child < 0) {
            int e = errno;
            ::close(go[1]);
            return fail_code(e, op.what + ": idmap: clone a user namespace");
        }
        oci::Linux maps;
        maps.uid_mappings = mapping.uids;
        maps.gid_mappings = mapping.gids;
        Status st = write_id_mappings(child, maps);
        Fd userns;
        if (st) {
            auto ns = open_namespace(child, "user");
            if (ns)
                userns = std::move(*ns);
            else
                st = forward(std::move(ns.error())); // given its context below
        }
        ::close(go[1]);
        while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
        }
        if (!st) return forward(std::move(st.error()), op.what + ": idmap");
        OCI_CHECK(idmap_copy(op, userns.get()));
    }
    return {};
}

bool passes_source(const MountOp &op) {
    return op.kind == MountOpKind::mount && op.bind && !op.options.idmap && !op.source_in_rootfs &&
           op.source_fd >= 0;
}

Status open_bind_sources(std::vector<MountOp> &plan, const std::string &rootfs) {
    for (MountOp &op : plan) {
        if (op.kind != MountOpKind::mount || !op.bind || op.source_fd >= 0) continue;
        if (!op.options.idmap && !rootfs.empty() && rootfs != "/" &&
            path_under(op.source, rootfs) && op.source != rootfs) {
            op.source_in_rootfs = true;
            op.source = op.source.substr(rootfs.size());
            continue;
        }
        op.source_fd = ::open(op.source.c_str(), O_PATH | O_CLOEXEC);
        if (op.source_fd < 0) return fail_errno(op.what + ": open the source " + op.source);
        struct stat st;
        if (::fstat(op.source_fd, &st) < 0)
            return fail_errno(op.what + ": stat the source " + op.source);
        op.bind_file = !S_ISDIR(st.st_mode);
    }
    return {};
}

void close_plan_fds(std::vector<MountOp> &plan) {
    for (MountOp &op : plan)
        for (int *fd : {&op.idmap_tree_fd, &op.source_fd})
            if (*fd >= 0) {
                ::close(*fd);
                *fd = -1;
            }
}

std::string describe_plan(const std::vector<MountOp> &plan) {
    std::string out;
    for (size_t i = 0; i < plan.size(); i++) {
        const MountOp &o = plan[i];
        out += std::to_string(i) + " " + mount_op_name(o.kind) + " " + o.what;
        if (o.kind == MountOpKind::mount)
            out += " (" + o.type + (o.source.empty() ? "" : " from " + o.source) + ")";
        if (o.kind == MountOpKind::sysctl) out += " = " + o.source + " (/proc/" + o.dest + ")";
        if (o.kind == MountOpKind::mount && o.type == "cgroup") {
            out += std::string(": ") + cgroup_show_name(o.cgroup_show);
            for (const CgroupPart &c : o.cgroup_parts)
                out += std::string(" [") + c.view.name + (c.mount_fs ? " mounted" : " bound") + "]";
        }
        if (o.sysfs_from_host)
            out += ": the host's /sys read-only (no netns of its user namespace)";
        if (o.bind_file) out += " (a file)";
        out += "\n";
    }
    return out;
}

} // namespace ocirun
