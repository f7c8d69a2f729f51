#include "runtime/filesystem/mount_api.hpp"

#include "runtime/log.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ocirun {

Result<Fd> detached_fs(const char *type, uint64_t attrs, const std::string &what,
                       const std::vector<std::pair<std::string, std::string>> &params) {
    Fd fs(::fsopen(type, FSOPEN_CLOEXEC));
    if (!fs.valid()) return fail_errno(what + ": fsopen " + type);
    for (const auto &[key, value] : params)
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, key.c_str(), value.c_str(), 0) < 0)
            return fail_errno(what + ": " + type + " " + key + "=" + value);
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
        return fail_errno(what + ": create a " + type + " instance");
    Fd m(::fsmount(fs.get(), FSMOUNT_CLOEXEC, static_cast<unsigned>(attrs)));
    if (!m.valid()) return fail_errno(what + ": fsmount " + type);
    return m;
}

Result<Fd> clone_mount(int fd, bool recursive, const std::string &what) {
    Fd t(::open_tree(fd, "",
                     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                         (recursive ? AT_RECURSIVE : 0)));
    if (!t.valid()) return fail_errno(what + ": open_tree");
    return t;
}

Status set_mount_attrs(int tree, uint64_t attrs, bool recursive, const std::string &what) {
    struct mount_attr a {};
    a.attr_set = attrs;
    if (::mount_setattr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof a) < 0)
        return fail_errno(what + ": mount_setattr");
    return {};
}

namespace {

Status set_attrs(int fd, const AttrChange &c, bool recursive, const std::string &what) {
    if (!c.any()) return {};
    struct mount_attr a {};
    a.attr_set = c.set;
    a.attr_clr = c.clear;
    if (::mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof a) < 0)
        return fail_errno(what +
                          (recursive ? ": mount_setattr (recursive options)" : ": mount_setattr"));
    return {};
}

} // namespace

uint64_t statvfs_attrs(unsigned long f_flag) {
    uint64_t a = 0;
    if (f_flag & ST_RDONLY) a |= MOUNT_ATTR_RDONLY;
    if (f_flag & ST_NOSUID) a |= MOUNT_ATTR_NOSUID;
    if (f_flag & ST_NODEV) a |= MOUNT_ATTR_NODEV;
    if (f_flag & ST_NOEXEC) a |= MOUNT_ATTR_NOEXEC;
    if (f_flag & ST_NOATIME) a |= MOUNT_ATTR_NOATIME;
    if (f_flag & ST_NODIRATIME) a |= MOUNT_ATTR_NODIRATIME;
    return a;
}

Status apply_attr_plan(int fd, const MountAttrPlan &p, const std::string &what) {
    auto top = set_attrs(fd, p.top, false, what);
    if (!top && top.error().code == EPERM && p.top.clear) {
        // In a user namespace, the flags a more privileged mount namespace
        // set on the source are locked (mount_namespaces(7)): they stay, as
        // runc keeps them, and the rest of the change applies.
        struct statvfs sv;
        if (::fstatvfs(fd, &sv) < 0) return fail_errno(what + ": statvfs");
        uint64_t locked = statvfs_attrs(sv.f_flag);
        AttrChange keep = p.top;
        keep.clear &= ~locked;
        if (locked & MOUNT_ATTR_NOATIME) keep.clear &= ~MOUNT_ATTR__ATIME;
        if (keep.clear != p.top.clear) {
            log::debug(what + ": flags locked by the source's mount namespace kept");
            top = set_attrs(fd, keep, false, what);
        }
    }
    OCI_CHECK(std::move(top));
    return set_attrs(fd, p.tree, true, what);
}

Status attach_mount(int tree, int target, const std::string &what) {
    if (::move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        return fail_errno(what + ": move_mount");
    return {};
}

Result<Fd> private_proc() {
    return detached_fs("proc", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                       "private procfs");
}

Result<Fd> open_proc_file(int proc, const std::string &rel, int flags) {
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC | O_NOFOLLOW;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    Fd fd(static_cast<int>(::syscall(SYS_openat2, proc, rel.c_str(), &how, sizeof how)));
    if (!fd.valid()) return fail_errno("open /proc/" + rel);
    return fd;
}

} // namespace ocirun
