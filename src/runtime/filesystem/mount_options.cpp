#include "runtime/filesystem/mount_options.hpp"

#include <sys/mount.h>

#include <cstring>

namespace ocirun {

namespace {

struct FlagOpt {
    const char *name;
    bool clear; // true: the option clears the flag
    unsigned long flag;
};

constexpr FlagOpt kFlags[] = {
    {"ro", false, MS_RDONLY},
    {"rw", true, MS_RDONLY},
    {"nosuid", false, MS_NOSUID},
    {"suid", true, MS_NOSUID},
    {"nodev", false, MS_NODEV},
    {"dev", true, MS_NODEV},
    {"noexec", false, MS_NOEXEC},
    {"exec", true, MS_NOEXEC},
    {"sync", false, MS_SYNCHRONOUS},
    {"async", true, MS_SYNCHRONOUS},
    {"dirsync", false, MS_DIRSYNC},
    {"remount", false, MS_REMOUNT},
    {"mand", false, MS_MANDLOCK},
    {"nomand", true, MS_MANDLOCK},
    {"atime", true, MS_NOATIME},
    {"noatime", false, MS_NOATIME},
    {"diratime", true, MS_NODIRATIME},
    {"nodiratime", false, MS_NODIRATIME},
    {"relatime", false, MS_RELATIME},
    {"norelatime", true, MS_RELATIME},
    {"strictatime", false, MS_STRICTATIME},
    {"nostrictatime", true, MS_STRICTATIME},
    {"lazytime", false, MS_LAZYTIME},
    {"nolazytime", true, MS_LAZYTIME},
    {"silent", false, MS_SILENT},
    {"loud", true, MS_SILENT},
    {"nosymfollow", false, MS_NOSYMFOLLOW},
    {"symfollow", true, MS_NOSYMFOLLOW},
};

// The recursive forms, applied with mount_setattr(AT_RECURSIVE).
struct RecOpt {
    const char *name;
    bool clear;
    uint64_t attr;
};

constexpr RecOpt kRec[] = {
    {"rro", false, MOUNT_ATTR_RDONLY},
    {"rrw", true, MOUNT_ATTR_RDONLY},
    {"rnosuid", false, MOUNT_ATTR_NOSUID},
    {"rsuid", true, MOUNT_ATTR_NOSUID},
    {"rnodev", false, MOUNT_ATTR_NODEV},
    {"rdev", true, MOUNT_ATTR_NODEV},
    {"rnoexec", false, MOUNT_ATTR_NOEXEC},
    {"rexec", true, MOUNT_ATTR_NOEXEC},
    {"rnodiratime", false, MOUNT_ATTR_NODIRATIME},
    {"rdiratime", true, MOUNT_ATTR_NODIRATIME},
    {"rnoatime", false, MOUNT_ATTR_NOATIME},
    // Clearing an atime setting leaves the default, relatime (as runc).
    {"ratime", true, MOUNT_ATTR_NOATIME},
    {"rnostrictatime", true, MOUNT_ATTR_STRICTATIME},
    {"rnorelatime", true, MOUNT_ATTR__ATIME},
    // MOUNT_ATTR_RELATIME is 0: relatime is the atime field cleared.
    {"rrelatime", true, MOUNT_ATTR__ATIME},
    {"rstrictatime", false, MOUNT_ATTR_STRICTATIME},
    {"rnosymfollow", false, MOUNT_ATTR_NOSYMFOLLOW},
    {"rsymfollow", true, MOUNT_ATTR_NOSYMFOLLOW},
};

struct PropOpt {
    const char *name;
    unsigned long flags;
};

constexpr PropOpt kProp[] = {
    {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
    {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
    {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
    {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
};

} // namespace

bool MountOptions::readonly() const {
    return flags & MS_RDONLY;
}

namespace {

// Applies one option to `m`; false when it is none the runtime knows (then
// it is filesystem data).
bool apply_option(MountOptions &m, std::string_view o) {
    if (o == "bind") {
        m.bind = true;
        return true;
    }
    if (o == "rbind") {
        m.bind = true;
        m.recursive = true;
        return true;
    }
    if (o == "tmpcopyup") {
        m.tmpcopyup = true;
        return true;
    }
    if (o == "idmap" || o == "ridmap") {
        m.idmap = true;
        m.idmap_recursive = o == "ridmap";
        return true;
    }
    for (const auto &f : kFlags)
        if (o == f.name) {
            if (f.clear) {
                m.flags &= ~f.flag;
                m.clear |= f.flag;
            } else {
                m.flags |= f.flag;
                m.clear &= ~f.flag;
            }
            return true;
        }
    for (const auto &p : kProp)
        if (o == p.name) {
            m.propagation = p.flags;
            return true;
        }
    for (const auto &r : kRec)
        if (o == r.name) {
            if (r.clear) {
                m.rec_clear |= r.attr;
                m.rec_set &= ~r.attr;
            } else {
                m.rec_set |= r.attr;
                m.rec_clear &= ~r.attr;
            }
            return true;
        }
    return false;
}

} // namespace

MountOptions parse_mount_options(const std::vector<std::string> &options) {
    MountOptions m;
    for (const auto &o : options) {
        if (apply_option(m, o)) continue;
        if (!m.data.empty()) m.data += ',';
        m.data += o;
    }
    return m;
}

bool known_mount_option(std::string_view option) {
    MountOptions scratch;
    return apply_option(scratch, option);
}

MountAttrPlan attr_plan(const MountOptions &o) {
    MountAttrPlan p;
    const unsigned long f = o.flags & ~MS_REMOUNT;
    constexpr unsigned long kPerMount = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME |
                                        MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME |
                                        MS_NOSYMFOLLOW;
    // Clearing one of these on a bind is a change too ("dev" on a nodev
    // source); "rw" alone is not (the source's state stays).
    constexpr unsigned long kClearable =
        MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NODIRATIME | MS_NOSYMFOLLOW;
    if ((f & kPerMount) || (o.clear & kClearable)) {
        auto bit = [&](unsigned long ms, uint64_t attr) {
            if (f & ms) p.top.set |= attr;
        };
        bit(MS_RDONLY, MOUNT_ATTR_RDONLY);
        bit(MS_NOSUID, MOUNT_ATTR_NOSUID);
        bit(MS_NODEV, MOUNT_ATTR_NODEV);
        bit(MS_NOEXEC, MOUNT_ATTR_NOEXEC);
        bit(MS_NODIRATIME, MOUNT_ATTR_NODIRATIME);
        bit(MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW);
        // What the options clear ("suid", "dev", "exec", "diratime",
        // "symfollow"): a bind of a nosuid source with "suid" is suid (as
        // runc; locked flags of a source from a more privileged mount
        // namespace stay, see the applier).
        auto off = [&](unsigned long ms, uint64_t attr) {
            if (o.clear & ms) p.top.clear |= attr;
        };
        off(MS_NOSUID, MOUNT_ATTR_NOSUID);
        off(MS_NODEV, MOUNT_ATTR_NODEV);
        off(MS_NOEXEC, MOUNT_ATTR_NOEXEC);
        off(MS_NODIRATIME, MOUNT_ATTR_NODIRATIME);
        // A remount sets read-only and nosymfollow to what it is given.
        if (!(f & MS_RDONLY)) p.top.clear |= MOUNT_ATTR_RDONLY;
        if (!(f & MS_NOSYMFOLLOW)) p.top.clear |= MOUNT_ATTR_NOSYMFOLLOW;
        if (f & (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)) {
            p.top.clear |= MOUNT_ATTR__ATIME;
            p.top.set |= (f & MS_NOATIME)       ? MOUNT_ATTR_NOATIME
                         : (f & MS_STRICTATIME) ? MOUNT_ATTR_STRICTATIME
                                                : MOUNT_ATTR_RELATIME;
        }
    }
    p.tree.set = o.rec_set;
    p.tree.clear = o.rec_clear;
    // The atime settings are one field of three values (relatime is 0):
    // setting or clearing any clears the field first.
    if ((o.rec_set | o.rec_clear) & MOUNT_ATTR__ATIME) p.tree.clear |= MOUNT_ATTR__ATIME;
    return p;
}

uint64_t attrs_after(const MountAttrPlan &p, uint64_t current, bool top) {
    uint64_t a = current;
    if (top) a = (a & ~p.top.clear) | p.top.set;
    return (a & ~p.tree.clear) | p.tree.set;
}

const std::vector<const char *> &known_mount_flag_names() {
    static const std::vector<const char *> names = [] {
        std::vector<const char *> v{"bind", "rbind", "tmpcopyup", "idmap", "ridmap"};
        for (const auto &f : kFlags)
            v.push_back(f.name);
        for (const auto &r : kRec)
            v.push_back(r.name);
        for (const auto &p : kProp)
            v.push_back(p.name);
        return v;
    }();
    return names;
}

} // namespace ocirun
