#include "mount_plan.hpp"

#include <sys/stat.h>

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
    case MountOpKind::pivot:
        return "pivot";
    case MountOpKind::mask:
        return "mask";
    case MountOpKind::readonly:
        return "readonly";
    case MountOpKind::root_readonly:
        return "root-readonly";
    case MountOpKind::root_propagation:
        return "root-propagation";
    }
    return "?";
}

Result<std::vector<MountOp>> plan_mounts(const oci::Spec &spec, const MountFacts &facts) {
    const oci::Linux &lx = *spec.linux_;
    std::vector<MountOp> plan;
    plan.push_back(op(MountOpKind::isolate, "rootfs"));
    for (size_t i = 0; i < spec.mounts.size(); i++) {
        const oci::Mount &m = spec.mounts[i];
        std::string what = "mounts[" + std::to_string(i) + "] " + m.destination;
        MountOp o = op(MountOpKind::mount, what, m.destination);
        o.options = parse_mount_options(m.options);
        o.type = m.type.empty() && o.options.bind ? "bind" : m.type;
        o.bind = o.options.bind || o.type == "bind";
        o.source = m.source;
        if (!m.uid_mappings.empty() || !m.gid_mappings.empty() || o.options.idmap)
            return fail(what + ": idmapped mounts (idmap, uidMappings) are not implemented yet");
        if (o.bind) {
            if (m.source.empty()) return fail(what + ": bind mount without a source");
            // A bind takes no filesystem data: an option it does not know
            // would otherwise be dropped without a word.
            if (!o.options.unknown.empty())
                return fail(what + ": unknown mount option \"" + o.options.unknown[0] + "\"");
        }
        if (o.options.tmpcopyup && o.type != "tmpfs")
            return fail(what + ": tmpcopyup needs a tmpfs mount");
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
        plan.push_back(std::move(d));
    };
    for (const auto &d : kDevices)
        device(d.name, S_IFCHR, d.major, d.minor, 0666, 0, 0, std::string("device /dev/") + d.name);
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
        MountOp d =
            op(MountOpKind::dev_link, std::string("/dev/") + l.name, std::string("/dev/") + l.name);
        d.link_to = l.to;
        plan.push_back(std::move(d));
    }
    plan.push_back(op(MountOpKind::pivot, facts.no_pivot ? "MS_MOVE + chroot" : "pivot_root", "/"));
    // After the pivot and after /proc and /sys are mounted: masks, then
    // read-only paths (a masked path inside a read-only one still gets its
    // mask), then the root itself.
    for (const auto &p : lx.masked_paths)
        plan.push_back(op(MountOpKind::mask, "maskedPaths " + p, p));
    for (const auto &p : lx.readonly_paths)
        plan.push_back(op(MountOpKind::readonly, "readonlyPaths " + p, p));
    if (spec.root->readonly) plan.push_back(op(MountOpKind::root_readonly, "root.readonly", "/"));
    if (!lx.rootfs_propagation.empty()) {
        MountOp p = op(MountOpKind::root_propagation, "linux.rootfsPropagation", "/");
        p.options = parse_mount_options({lx.rootfs_propagation});
        plan.push_back(std::move(p));
    }
    (void)facts.in_userns; // the applier decides mknod or bind from it
    return plan;
}

std::string describe_plan(const std::vector<MountOp> &plan) {
    std::string out;
    for (size_t i = 0; i < plan.size(); i++) {
        const MountOp &o = plan[i];
        out += std::to_string(i) + " " + mount_op_name(o.kind) + " " + o.what;
        if (o.kind == MountOpKind::mount)
            out += " (" + o.type + (o.source.empty() ? "" : " from " + o.source) + ")";
        out += "\n";
    }
    return out;
}

} // namespace ocirun
