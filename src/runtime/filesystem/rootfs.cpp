#include "runtime/filesystem/rootfs.hpp"
#include "runtime/filesystem/root_sys.hpp"

#include "oci/fd.hpp"
#include "runtime/filesystem/fs_policy.hpp"
#include "runtime/filesystem/mount_api.hpp"
#include "runtime/filesystem/mount_options.hpp"
#include "runtime/filesystem/mount_plan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstring>
#include <linux/magic.h>

namespace ocirun {

namespace {

int openat2_in_root(int rootfd, const char *path, int flags) {
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    return static_cast<int>(::syscall(SYS_openat2, rootfd, path, &how, sizeof how));
}

// A container path relative to the root ("." for the root itself).
std::string in_root(const std::string &path) {
    size_t at = path.find_first_not_of('/');
    return at == std::string::npos ? "." : path.substr(at);
}

std::string fd_path(int fd) {
    return "/proc/self/fd/" + std::to_string(fd);
}

// One pass of open_dest over `rel` (relative to the root): the fd, or, where
// a component is a symlink to something missing, the path to try instead
// (its target, relative to the symlink's directory unless absolute, with
// the rest of `rel` after it).
struct DestPass {
    int fd = -1;
    std::string retry;
};

Result<DestPass> open_dest_once(int rootfd, const std::string &rel, bool file) {
    const std::string dest = "/" + rel;
    if (rel.empty()) {
        int fd = openat2_in_root(rootfd, ".", O_PATH);
        if (fd < 0) return fail_errno("open rootfs");
        return DestPass{fd, {}};
    }
    int fd = openat2_in_root(rootfd, rel.c_str(), O_PATH);
    if (fd >= 0) return DestPass{fd, {}};
    if (errno != ENOENT) return fail_errno("open " + dest + " in the rootfs");
    // Create each missing component, relative to the already-resolved parent.
    size_t pos = 0;
    int cur = openat2_in_root(rootfd, ".", O_PATH | O_DIRECTORY);
    if (cur < 0) return fail_errno("open rootfs");
    while (pos <= rel.size()) {
        size_t next = rel.find('/', pos);
        if (next == std::string::npos) next = rel.size();
        std::string comp = rel.substr(pos, next - pos);
        pos = next + 1;
        if (comp.empty() || comp == ".") continue;
        bool last = pos > rel.size();
        std::string sofar = rel.substr(0, next);
        int child = openat2_in_root(rootfd, sofar.c_str(), O_PATH);
        if (child < 0 && errno == ENOENT) {
            struct stat st;
            if (::fstatat(cur, comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISLNK(st.st_mode)) {
                // A dangling symlink: make what it names, in the root.
                char target[PATH_MAX];
                ssize_t n = ::readlinkat(cur, comp.c_str(), target, sizeof target - 1);
                int e = errno;
                ::close(cur);
                if (n < 0) return fail_code(e, "readlink /" + sofar + " in the rootfs");
                target[n] = 0;
                std::string parent = rel.substr(0, next - comp.size());
                std::string rest = pos > rel.size() ? "" : "/" + rel.substr(pos);
                std::string to = target[0] == '/' ? std::string(target) : parent + target;
                return DestPass{-1, to + rest};
            }
            // Create in the resolved parent (cur), which lies inside the root.
            if (last && file) {
                int f = ::openat(cur, comp.c_str(),
                                 O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
                if (f < 0 && errno != EEXIST) {
                    int e = errno;
                    ::close(cur);
                    return fail_code(e, "create /" + sofar + " in the rootfs");
                }
                if (f >= 0) ::close(f);
            } else if (::mkdirat(cur, comp.c_str(), 0755) < 0 && errno != EEXIST) {
                int e = errno;
                ::close(cur);
                return fail_code(e, "mkdir /" + sofar + " in the rootfs");
            }
            child = openat2_in_root(rootfd, sofar.c_str(), O_PATH);
        }
        ::close(cur);
        if (child < 0) return fail_errno("open /" + sofar + " in the rootfs");
        cur = child;
    }
    return DestPass{cur, {}};
}

// Open `dest` (absolute, container view) inside the root, creating missing
// components (directories, and the last one as a file when `file`), all
// resolved with RESOLVE_IN_ROOT so a symlink can never lead out of it. A
// dangling symlink on the way is followed inside the root and what it names
// is made (as runc's MkdirAll in the root), at most 40 of them (ELOOP).
Result<int> open_dest(int rootfd, const std::string &dest, bool file) {
    std::string rel = dest;
    for (int links = 0;; links++) {
        while (!rel.empty() && rel[0] == '/')
            rel.erase(0, 1);
        auto r = open_dest_once(rootfd, rel, file);
        if (!r) return forward(std::move(r.error()));
        if (r->fd >= 0) return r->fd;
        if (links == 40)
            return fail_code(ELOOP, "open " + dest + " in the rootfs: too many symlinks");
        rel = std::move(r->retry);
    }
}

// The same file: (st_dev, st_ino) of both fds.
bool same_object(int a, int b) {
    struct stat x, y;
    return ::fstat(a, &x) == 0 && ::fstat(b, &y) == 0 && x.st_dev == y.st_dev &&
           x.st_ino == y.st_ino;
}

// An fd RootSys opened, closed through it.
struct SysFd {
    RootSys &sys;
    int fd;
    ~SysFd() {
        if (fd >= 0) sys.close(fd);
    }
};

class RealRootSys final : public RootSys {
  public:
    int chdir(const char *path) override { return ::chdir(path); }
    int fchdir(int fd) override { return ::fchdir(fd); }
    int open(const char *path, int flags) override { return ::open(path, flags); }
    int close(int fd) override { return ::close(fd); }
    int chroot(const char *path) override { return ::chroot(path); }
    int pivot_root(const char *new_root, const char *put_old) override {
        return static_cast<int>(::syscall(SYS_pivot_root, new_root, put_old));
    }
    int mount(const char *source, const char *target, const char *type, unsigned long flags,
              const char *data) override {
        return ::mount(source, target, type, flags, data);
    }
    int umount2(const char *target, int flags) override { return ::umount2(target, flags); }
    int statvfs(const char *path, struct statvfs *out) override { return ::statvfs(path, out); }
    int open_in_root(int root, const char *rel, int flags) override {
        return openat2_in_root(root, rel, flags);
    }
    int fstat(int fd, struct stat *out) override { return ::fstat(fd, out); }
    int clone_tree(int fd, bool recursive) override {
        return ::open_tree(fd, "",
                           OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                               (recursive ? AT_RECURSIVE : 0));
    }
    int attach_tree(int tree, int target) override {
        return ::move_mount(tree, "", target, "",
                            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
    }
    int set_tree_attrs(int tree, uint64_t attrs, bool recursive) override {
        struct mount_attr a {};
        a.attr_set = attrs;
        return ::mount_setattr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a,
                               sizeof a);
    }
    int new_fs(const char *type, uint64_t attrs) override {
        Fd fs(::fsopen(type, FSOPEN_CLOEXEC));
        if (!fs.valid() || ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
            return -1;
        return ::fsmount(fs.get(), FSMOUNT_CLOEXEC, static_cast<unsigned>(attrs));
    }
    bool same_object(int a, int b) override { return ocirun::same_object(a, b); }
    Result<std::vector<MountEntry>> mounts() override { return own_mounts(); }
};

} // namespace

RootSys &real_root_sys() {
    static RealRootSys sys;
    return sys;
}

namespace {

Status do_mount(const char *src, const std::string &target, const char *type, unsigned long flags,
                const char *data, const std::string &what) {
    if (::mount(src, target.c_str(), type, flags, data) < 0) return fail_errno(what);
    return {};
}

// Remount a bind mount with `flags`, keeping the flags the kernel locked
// (nosuid, nodev, noexec, atime) on the source as they are.
Status remount_bind(const std::string &target, unsigned long flags, const std::string &what,
                    RootSys &sys = real_root_sys()) {
    struct statvfs sv;
    unsigned long keep = 0;
    if (sys.statvfs(target.c_str(), &sv) == 0) {
        if (sv.f_flag & ST_NOSUID) keep |= MS_NOSUID;
        if (sv.f_flag & ST_NODEV) keep |= MS_NODEV;
        if (sv.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
        if (sv.f_flag & ST_NOATIME) keep |= MS_NOATIME;
        if (sv.f_flag & ST_NODIRATIME) keep |= MS_NODIRATIME;
        if (sv.f_flag & ST_RELATIME) keep |= MS_RELATIME;
    }
    if (sys.mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | MS_BIND | flags | keep, nullptr) <
        0)
        return fail_errno(what);
    return {};
}

// Bind `source` (named `shown` in errors) onto `target`, the fd path of
// `dest` in the root. The new mount is then re-opened (`open_flags` as the
// first open used), so that `remount` flags, when any, and whatever the caller
// does next apply to it and not to what lies under it.
Result<Fd> bind_and_remount(int rootfd, const std::string &dest, int open_flags,
                            const std::string &target, const char *source, const std::string &shown,
                            bool recursive, unsigned long remount, const std::string &what) {
    OCI_CHECK(do_mount(source, target, nullptr, MS_BIND | (recursive ? MS_REC : 0), nullptr,
                       what + ": bind " + shown));
    Fd now(openat2_in_root(rootfd, dest.c_str() + 1, O_PATH | open_flags));
    if (now.get() < 0) return fail_errno(what + ": reopen after bind");
    if (remount) OCI_CHECK(remount_bind(fd_path(now.get()), remount, what + ": remount"));
    return now;
}

// The cgroup mount, as planned (runtime/filesystem/mount_plan.hpp CgroupShow):
// read-only unless the mount asks for rw.
Status mount_cgroup(int rootfd, const MountOp &op, int dest, unsigned long flags) {
    const std::string &destination = op.dest, &what = op.what;
    std::string target = fd_path(dest);
    unsigned long ro = flags & MS_RDONLY;
    unsigned long base = MS_NOSUID | MS_NODEV | MS_NOEXEC;
    switch (op.cgroup_show) {
    case CgroupShow::host_tree: {
        Fd now = OCI_TRY(bind_and_remount(rootfd, destination, 0, target, "/sys/fs/cgroup",
                                          "/sys/fs/cgroup", true, MS_RDONLY | flags, what));
        return {};
    }
    case CgroupShow::cgroup2: {
        Status mounted = do_mount("cgroup2", target, "cgroup2", flags, nullptr, what);
        // Under a /sys bound from the host (a user namespace that may not
        // mount a sysfs of its own), /sys/fs/cgroup on a host whose cgroups
        // are v2 alone is the host's cgroup2 mount itself, and the kernel
        // refuses the same filesystem again at a mount's root (EBUSY): the
        // container's cgroup directory is bound there instead, which shows
        // what the cgroup namespace's mount would (as runc does).
        if (mounted || mounted.error().code != EBUSY) return mounted;
        [[fallthrough]];
    }
    case CgroupShow::bind_dir: {
        const std::string &dir = op.cgroup_parts.at(0).view.dir;
        Fd now = OCI_TRY(bind_and_remount(rootfd, destination, 0, target, dir.c_str(), dir, false,
                                          base | ro, what));
        return {};
    }
    case CgroupShow::per_hierarchy:
        break;
    }
    OCI_CHECK(do_mount("tmpfs", target, "tmpfs", base, "mode=755", what + ": tmpfs"));
    Fd top(openat2_in_root(rootfd, destination.c_str() + 1, O_RDONLY | O_DIRECTORY));
    if (!top.valid()) return fail_errno(what + ": reopen the tmpfs");
    // The binds' sources, opened below the hierarchies' common parent
    // (/sys/fs/cgroup), which is walked once: each lookup through sysfs
    // waits on the lock other creates take to add their network devices.
    std::string parent;
    Fd parent_fd;
    auto open_source = [&](const CgroupView &c) -> Fd {
        auto slash = c.mount.rfind('/');
        bool below = slash != std::string::npos && slash > 0 && c.dir.starts_with(c.mount) &&
                     (c.dir.size() == c.mount.size() || c.dir[c.mount.size()] == '/');
        if (!below) return Fd(::open(c.dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!parent_fd.valid() || parent != c.mount.substr(0, slash)) {
            parent = c.mount.substr(0, slash);
            parent_fd.reset(::open(parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!parent_fd.valid()) return Fd();
        }
        return Fd(
            ::openat(parent_fd.get(), c.dir.c_str() + slash + 1, O_PATH | O_DIRECTORY | O_CLOEXEC));
    };
    for (const CgroupPart &part : op.cgroup_parts) {
        const CgroupView &c = part.view;
        if (::mkdirat(top.get(), c.name.c_str(), 0755) < 0)
            return fail_errno(what + ": mkdir " + c.name);
        Fd sub(::openat(top.get(), c.name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub.valid()) return fail_errno(what + ": open " + c.name);
        std::string sub_path = fd_path(sub.get());
        std::string w = what + ": " + c.name;
        if (part.mount_fs) {
            if (c.version == 2)
                OCI_CHECK(do_mount("cgroup2", sub_path, "cgroup2", base | ro, nullptr, w));
            else
                OCI_CHECK(do_mount("cgroup", sub_path, "cgroup", base | ro, c.options.c_str(), w));
        } else {
            Fd source = open_source(c);
            if (!source.valid()) return fail_errno(w + ": open " + c.dir);
            OCI_CHECK(do_mount(fd_path(source.get()).c_str(), sub_path, nullptr, MS_BIND, nullptr,
                               w + ": bind " + c.dir));
        }
        for (const auto &alias : part.aliases)
            if (::symlinkat(c.name.c_str(), top.get(), alias.c_str()) < 0)
                return fail_errno(w + ": symlink " + alias);
    }
    // The binds' flags, and the tmpfs's read-only, in one change over the
    // tmpfs and every hierarchy on it (a remount of each bind took four
    // system calls more per hierarchy: nine hierarchies on a v1 host). Only
    // set, never cleared: what the kernel locked on a source stays. Nothing
    // in the container runs before it.
    uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
    if (ro) attrs |= MOUNT_ATTR_RDONLY;
    return set_mount_attrs(top.get(), attrs, true, what);
}

// tmpcopyup: what the destination held before the tmpfs went over it,
// copied into the tmpfs (files, directories, symlinks, nodes; modes and
// owners kept). `from` and `to` are directory fds.
Status copy_tree(int from, int to, const std::string &what, int depth = 0) {
    if (depth > 64) return fail(what + ": tmpcopyup: deeper than 64 levels");
    int dup = ::fcntl(from, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup >= 0 ? ::fdopendir(dup) : nullptr;
    if (!d) {
        if (dup >= 0) ::close(dup);
        return fail_errno(what + ": tmpcopyup: read the directory");
    }
    ::rewinddir(d);
    Status result;
    while (struct dirent *e = ::readdir(d)) {
        const char *n = e->d_name;
        if (std::strcmp(n, ".") == 0 || std::strcmp(n, "..") == 0) continue;
        struct stat st;
        if (::fstatat(from, n, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            result = fail_errno(what + ": tmpcopyup: stat " + n);
            break;
        }
        mode_t type = st.st_mode & S_IFMT;
        if (type == S_IFDIR) {
            if (::mkdirat(to, n, st.st_mode & 07777) < 0 && errno != EEXIST) {
                result = fail_errno(what + ": tmpcopyup: mkdir " + n);
                break;
            }
            Fd a(::openat(from, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            Fd b(::openat(to, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!a.valid() || !b.valid()) {
                result = fail_errno(what + ": tmpcopyup: open " + n);
                break;
            }
            if (auto r = copy_tree(a.get(), b.get(), what, depth + 1); !r) {
                result = r;
                break;
            }
        } else if (type == S_IFREG) {
            Fd src(::openat(from, n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
            Fd dst(::openat(to, n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            st.st_mode & 07777));
            if (!src.valid() || !dst.valid()) {
                result = fail_errno(what + ": tmpcopyup: copy " + n);
                break;
            }
            // Whole, or an error: a short copy (a full tmpfs, a read error)
            // is never left as if it were the file.
            off_t left = st.st_size;
            while (left > 0) {
                ssize_t c = ::sendfile(dst.get(), src.get(), nullptr, static_cast<size_t>(left));
                if (c < 0 && errno == EINTR) continue;
                if (c < 0) {
                    result = fail_errno(what + ": tmpcopyup: copy " + n);
                    break;
                }
                if (c == 0) {
                    result = fail(what + ": tmpcopyup: copy " + n + ": " + std::to_string(left) +
                                  " bytes short (the file shrank)");
                    break;
                }
                left -= c;
            }
            if (!result) break;
        } else if (type == S_IFLNK) {
            char buf[4096];
            ssize_t len = ::readlinkat(from, n, buf, sizeof buf - 1);
            if (len < 0) {
                result = fail_errno(what + ": tmpcopyup: readlink " + n);
                break;
            }
            buf[len] = '\0';
            if (::symlinkat(buf, to, n) < 0) {
                result = fail_errno(what + ": tmpcopyup: symlink " + n);
                break;
            }
        } else if (::mknodat(to, n, st.st_mode, st.st_rdev) < 0) {
            result = fail_errno(what + ": tmpcopyup: mknod " + n);
            break;
        }
        if (::fchownat(to, n, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
            result = fail_errno(what + ": tmpcopyup: chown " + n + " to " +
                                std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid));
            break;
        }
        // After the chown, which clears set-id bits.
        if (type != S_IFLNK && ::fchmodat(to, n, st.st_mode & 07777, 0) < 0) {
            result = fail_errno(what + ": tmpcopyup: chmod " + n);
            break;
        }
    }
    ::closedir(d);
    return result;
}

// Recursive attributes (rro, rnosuid...) on the mount at `fd` and below it.
Status set_recursive_attrs(int fd, const MountOptions &o, const std::string &what) {
    MountAttrPlan p;
    p.tree = attr_plan(o).tree;
    return apply_attr_plan(fd, p, what);
}

// A bind whose source path led to another object than the one the runtime
// opened and checked (through an earlier mount of the container's, or a
// swap since): what is mounted, read back from this namespace's mount table
// with its submounts and final attributes, checked by the same function.
Status check_mounted(int now, const MountOp &op, const RootfsContext &ctx) {
    if (!ctx.guards) return fail(op.what + ": the source changed after it was checked");
    auto id = mount_id_of(now);
    if (!id) return forward(std::move(id.error()), op.what);
    std::vector<MountEntry> mounts = OCI_TRY(own_mounts());
    std::vector<Reach> reach = tree_reach(mounts, *id, describe_mount(op));
    OCI_CHECK(check_reach(reach, *ctx.guards));
    // Other names of the guards' files in a writable bind (where the
    // runtime searched the object it opened, this is another), and in each
    // writable mount below it (another filesystem, which a walk of the top
    // one does not enter).
    if (!ctx.linked || !op.bind) return {};
    return search_writable(*ctx.linked, reach, now, op.dest);
}

// A filesystem the kernel makes afresh for each mount, or one per namespace
// of the container's own (sysfs, mqueue: MountOp::shared_superblock says
// when not), which shows nothing of the host's files (an overlay's layers
// are checked on their own; the cgroup mounts show the container's own
// cgroup).
bool kernel_filesystem(const std::string &type) {
    static const char *const kTypes[] = {"tmpfs",  "proc",    "sysfs", "mqueue",  "devpts",
                                         "cgroup", "cgroup2", "ramfs", "overlay", "bpf"};
    for (const char *t : kTypes)
        if (type == t) return true;
    return false;
}

// A config.json mount (planned: options parsed and checked).
// `passed`: the source the runtime opened in this mount namespace, or -1.
Status apply_mount(int rootfd, const MountOp &op, const RootfsContext &ctx, int passed) {
    const std::string &what = op.what;
    const MountOptions &o = op.options;
    const std::string &type = op.type;
    const bool bind = op.bind;
    // A source under the rootfs, resolved now (after the mounts before this
    // one) and inside the root, never through a symlink out of it.
    Fd in_root_source;
    int source_fd = op.source_fd;
    std::string source = op.source;
    if (bind && op.source_in_rootfs) {
        in_root_source = Fd(openat2_in_root(rootfd, in_root(op.source).c_str(), O_PATH));
        if (!in_root_source.valid())
            return fail_errno(what + ": open the source " + op.source + " in the rootfs");
        source_fd = in_root_source.get();
        source = fd_path(source_fd);
    } else if (bind && passed >= 0) {
        source = fd_path(passed);
    }
    bool file = op.bind_file;
    if (bind && op.source_in_rootfs) {
        // What is there now (an earlier mount may have put it there).
        struct stat st;
        if (::fstat(source_fd, &st) < 0) return fail_errno(what + ": stat the source " + op.source);
        file = !S_ISDIR(st.st_mode);
    }
    // A kernel filesystem (procfs above all) mounted through a symlink could
    // land anywhere in the rootfs and later writes with it (CVE-2019-19921):
    // its destination may not be or pass through a symlink.
    if (type == "proc" || type == "sysfs" || type == "devpts" || type == "mqueue" ||
        type == "cgroup" || type == "cgroup2") {
        std::string rel = in_root(op.dest);
        struct open_how how {};
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS;
        int probe = static_cast<int>(::syscall(SYS_openat2, rootfd, rel.c_str(), &how, sizeof how));
        if (probe >= 0) ::close(probe);
        if (probe < 0 && errno == ELOOP)
            return fail(what +
                        ": the destination is or passes through a symlink in the rootfs, "
                        "refused for a " +
                        type + " mount");
    }
    // A tmpfs without mode= takes the mode of the directory it covers, when
    // there is one (as runc); one the runtime makes gets tmpfs's own 1777.
    std::string data_with_mode = o.data;
    if (type == "tmpfs" && !bind && o.data.find("mode=") == std::string::npos) {
        Fd existing(openat2_in_root(rootfd, in_root(op.dest).c_str(), O_PATH | O_DIRECTORY));
        struct stat st;
        if (existing.valid() && ::fstat(existing.get(), &st) == 0) {
            char mode[16];
            std::snprintf(mode, sizeof mode, "mode=%04o", st.st_mode & 07777);
            data_with_mode += (data_with_mode.empty() ? "" : ",") + std::string(mode);
        }
    }
    auto fd = open_dest(rootfd, op.dest, file);
    if (!fd) return forward(std::move(fd.error()), what);
    Fd dest(*fd);
    std::string target = fd_path(dest.get());
    unsigned long flags = o.flags & ~MS_REMOUNT;

    if (bind && o.idmap) {
        // Made by the runtime, which may set an idmapping (make_idmap_namespaces).
        if (op.idmap_tree_fd < 0) return fail(what + ": idmap: the idmapped copy is missing");
        OCI_CHECK(attach_mount(op.idmap_tree_fd, dest.get(), what));
        // Its propagation ("shared", "rslave", ...) once it is in this
        // mount namespace (a detached copy has none to set).
        if (o.propagation) {
            Fd now(openat2_in_root(rootfd, in_root(op.dest).c_str(), O_PATH));
            if (!now.valid()) return fail_errno(what + ": reopen after attach");
            OCI_CHECK(do_mount(nullptr, fd_path(now.get()), nullptr, o.propagation, nullptr,
                               what + ": set propagation"));
        }
        return {};
    }
    if (bind) {
        Fd now = OCI_TRY(bind_and_remount(rootfd, op.dest, 0, target, source.c_str(), op.source,
                                          o.recursive, 0, what));
        OCI_CHECK(apply_attr_plan(now.get(), attr_plan(o), what));
        // What the runtime did not check (a source in the rootfs, which an
        // earlier mount may have put there, or one swapped since) is
        // checked as mounted.
        if (op.source_in_rootfs || (op.source_fd >= 0 && !same_object(now.get(), op.source_fd)))
            OCI_CHECK(check_mounted(now.get(), op, ctx));
        if (o.propagation)
            OCI_CHECK(do_mount(nullptr, fd_path(now.get()), nullptr, o.propagation, nullptr,
                               what + ": set propagation"));
        return {};
    }
    if (type == "cgroup") return mount_cgroup(rootfd, op, dest.get(), flags);
    if (op.sysfs_from_host) {
        Fd now = OCI_TRY(bind_and_remount(rootfd, op.dest, 0, target, "/sys", "/sys", true,
                                          MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, what));
        return {};
    }
    // An overlay's layers are opened here, checked, and mounted through
    // their fds: what is checked is what the kernel mounts (a path could
    // lead elsewhere by then).
    std::vector<Fd> layers;
    if (type == "overlay") {
        std::vector<MountEntry> mounts = OCI_TRY(own_mounts());
        std::vector<std::string> at;
        for (const auto &d : overlay_dirs(o.data)) {
            Fd fd(::open(d.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!fd.valid()) return fail_errno(what + ": open its " + d.key + " " + d.path);
            auto r = region_of(fd.get(), mounts);
            if (!r) return forward(std::move(r.error()), what + ": its " + d.key + " " + d.path);
            std::string layer = describe_mount(op) + " (its " + d.key + " " + d.path + ")";
            if (ctx.guards) OCI_CHECK(check_reach({{layer, "", *r, d.writable}}, *ctx.guards));
            if (ctx.layers) ctx.layers->push_back({op.dest, layer, *r, d.writable});
            at.push_back(fd_path(fd.get()));
            layers.push_back(std::move(fd));
        }
        data_with_mode = overlay_data_at(data_with_mode, at);
    }
    const char *data = data_with_mode.empty() ? nullptr : data_with_mode.c_str();
    const char *src = op.source.empty() ? type.c_str() : op.source.c_str();
    // The directory the tmpfs will cover, held open to copy from afterwards.
    Fd under;
    if (o.tmpcopyup) {
        under = Fd(::openat(dest.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!under.valid()) return fail_errno(what + ": tmpcopyup: open the destination");
    }
    OCI_CHECK(do_mount(src, target, type.c_str(), flags, data, what + ": mount " + type));
    layers.clear();
    // A filesystem from a device (ext4 on /dev/vda...): the host's mounts of
    // it share its superblock, so what it reaches is read from the mount
    // table as mounted, and checked as a bind is.
    if (!kernel_filesystem(type) || op.shared_superblock) {
        Fd now(openat2_in_root(rootfd, in_root(op.dest).c_str(), O_PATH | O_DIRECTORY));
        if (!now.valid()) return fail_errno(what + ": reopen after mount");
        if (!ctx.guards) return fail(what + ": nothing to check what it reaches against");
        OCI_CHECK(check_mounted(now.get(), op, ctx));
    }
    if (o.tmpcopyup || o.rec_set || o.rec_clear || o.propagation) {
        // The new mount's root (the fd opened before it refers to what it covers).
        Fd top(openat2_in_root(rootfd, op.dest.c_str() + 1, O_RDONLY | O_DIRECTORY));
        if (!top.valid()) return fail_errno(what + ": reopen after mount");
        if (o.tmpcopyup) OCI_CHECK(copy_tree(under.get(), top.get(), what));
        OCI_CHECK(set_recursive_attrs(top.get(), o, what));
        if (o.propagation)
            OCI_CHECK(do_mount(nullptr, fd_path(top.get()), nullptr, o.propagation, nullptr,
                               what + ": set propagation"));
    }
    return {};
}

// A device node. Whatever the rootfs has at the name (a symlink to a host
// file, a regular file) is removed first, and every later step works on fds
// of what we made, never on a path that could be swapped (CVE-2025-31133).
Status apply_device(int rootfd, const MountOp &op) {
    const std::string &rel = op.dest;
    auto slash = rel.rfind('/');
    auto p = open_dest(rootfd, rel.substr(0, slash), false);
    if (!p) return forward(std::move(p.error()), op.what);
    Fd parent(*p);
    std::string base = rel.substr(slash + 1);
    if (::unlinkat(parent.get(), base.c_str(), 0) < 0 && errno != ENOENT)
        return fail_errno(op.what + ": remove what the rootfs has there");
    if (op.bind_host_node) {
        // mknod is not allowed in a user namespace: bind the host's node.
        int f = ::openat(parent.get(), base.c_str(),
                         O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (f < 0) return fail_errno(op.what + ": create the mount point");
        ::close(f);
    } else if (::mknodat(parent.get(), base.c_str(), op.node_type | (op.mode & 07777),
                         makedev(op.major, op.minor)) < 0) {
        return fail_errno(op.what + ": mknod");
    }
    Fd node(::openat(parent.get(), base.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!node.valid()) return fail_errno(op.what + ": open");
    // A FIFO has no device numbers: whatever the entry says of them is not compared.
    bool numbered = op.node_type == S_IFCHR || op.node_type == S_IFBLK;
    auto is_asked = [&](int fd) {
        struct stat st;
        return ::fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == op.node_type &&
               (!numbered || st.st_rdev == makedev(op.major, op.minor));
    };
    if (op.bind_host_node) {
        // The host's node of that name (its /dev links, such as
        // /dev/char/1:3, followed: the host's own), bound only if it is the
        // device asked for (/dev/stdin leads to whatever the init's fd 0 is),
        // through the fd that was checked.
        Fd host(::open(rel.c_str(), O_PATH | O_CLOEXEC));
        if (!host.valid()) return fail_errno(op.what + ": open the host's " + rel);
        if (!is_asked(host.get()))
            return fail(op.what + ": the host's " + rel + " is not the device asked for");
        if (::mount(fd_path(host.get()).c_str(), fd_path(node.get()).c_str(), nullptr, MS_BIND,
                    nullptr) < 0)
            return fail_errno(op.what + ": bind " + rel);
        return {};
    }
    if (!is_asked(node.get())) return fail(op.what + ": what was made is not the device asked for");
    // The magic link reaches the node itself, not a path that could move.
    if (::chmod(fd_path(node.get()).c_str(), op.mode & 07777) < 0)
        return fail_errno(op.what + ": chmod");
    if (::fchownat(node.get(), "", op.uid, op.gid, AT_EMPTY_PATH) < 0)
        return fail_errno(op.what + ": chown");
    return {};
}

// A default device in a /dev bound from elsewhere: used as it is, if it is
// that device (checked on what the name is, never followed).
Status check_bound_device(int rootfd, const MountOp &op) {
    Fd node(openat2_in_root(rootfd, op.dest.c_str() + 1, O_PATH | O_NOFOLLOW));
    if (!node.valid()) {
        if (errno == ENOENT) return {};
        return fail_errno(op.what + ": open");
    }
    struct stat st;
    if (::fstat(node.get(), &st) < 0) return fail_errno(op.what + ": stat");
    if ((st.st_mode & S_IFMT) != op.node_type || st.st_rdev != makedev(op.major, op.minor))
        return fail(op.what + ": /dev is a bind mount, and what it has there is not the device " +
                    "(char " + std::to_string(op.major) + ":" + std::to_string(op.minor) + ")");
    return {};
}

// /dev/fd, /dev/stdin, ...; /dev/ptmx (planned over a devpts only)
// replaces what the rootfs has there.
Status apply_dev_link(int rootfd, const MountOp &op) {
    auto dev = open_dest(rootfd, "/dev", false);
    if (!dev) return forward(std::move(dev.error()), op.what);
    Fd devfd(*dev);
    std::string name = op.dest.substr(5);
    if (name == "ptmx" && ::unlinkat(devfd.get(), "ptmx", 0) < 0 && errno != ENOENT)
        return fail_errno(op.what + ": remove what the rootfs has there");
    if (::symlinkat(op.link_to, devfd.get(), name.c_str()) < 0 && errno != EEXIST)
        return fail_errno("symlink " + op.what);
    return {};
}

// --no-pivot keeps the old root under the new one, and with it the host's
// procfs and sysfs mounts: a nested user namespace could then mount a fresh
// procfs, with none of the masks (the kernel allows that where one is fully
// visible). Each outside the rootfs is detached first, or, where the kernel
// will not (locked in a user namespace), covered by an empty tmpfs, which a
// nested namespace inherits locked, so that it is no longer fully visible
// (as runc's msMoveRoot).
Status hide_outside_kernel_filesystems(const std::string &rootfs, RootSys &sys) {
    std::vector<MountEntry> mounts = OCI_TRY(sys.mounts());
    // The deepest first: a submount goes before what it is on.
    for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
        const MountEntry &m = *it;
        if (m.fstype != "proc" && m.fstype != "sysfs") continue;
        if (path_under(m.point, rootfs)) continue;
        if (sys.umount2(m.point.c_str(), MNT_DETACH) == 0) continue;
        if (errno != EINVAL && errno != EPERM)
            return fail_errno("--no-pivot: detach " + m.point + " (" + m.fstype + ")");
        if (sys.mount("tmpfs", m.point.c_str(), "tmpfs",
                      MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=555") < 0)
            return fail_errno("--no-pivot: cover " + m.point + " (" + m.fstype + ")");
    }
    return {};
}

Status pivot(const std::string &rootfs, bool no_pivot, RootSys &sys) {
    if (sys.chdir(rootfs.c_str()) < 0) return fail_errno("chdir " + rootfs);
    if (no_pivot) {
        OCI_CHECK(hide_outside_kernel_filesystems(rootfs, sys));
        if (sys.mount(rootfs.c_str(), "/", nullptr, MS_MOVE, nullptr) < 0)
            return fail_errno("move " + rootfs + " to /");
        if (sys.chroot(".") < 0) return fail_errno("chroot " + rootfs);
    } else {
        SysFd oldroot{sys, sys.open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC)};
        if (oldroot.fd < 0) return fail_errno("open the old root");
        if (sys.pivot_root(".", ".") < 0) return fail_errno("pivot_root " + rootfs);
        // The old root is now stacked on top of the new one. Through its own
        // fd (not ".", which the kernel does not promise to be either), make
        // its tree rslave, so the detach does not propagate to the host, and
        // detach it. The new root's mounts keep their propagation.
        if (sys.fchdir(oldroot.fd) < 0) return fail_errno("fchdir to the old root");
        if (sys.mount(nullptr, ".", nullptr, MS_SLAVE | MS_REC, nullptr) < 0)
            return fail_errno("make old root rslave");
        if (sys.umount2(".", MNT_DETACH) < 0) return fail_errno("detach old root");
    }
    if (sys.chdir("/") < 0) return fail_errno("chdir /");
    return {};
}

} // namespace

// The plan's operations up to the pivot, in order.
Status prepare_rootfs(const std::vector<MountOp> &plan, const RootfsContext &ctx, RootSys &sys) {
    SysFd root{sys, -1};
    size_t next_passed = 0;
    for (const MountOp &op : plan) {
        switch (op.kind) {
        case MountOpKind::isolate:
            // Nothing done here may propagate back to the host.
            if (sys.mount(nullptr, "/", nullptr, MS_SLAVE | MS_REC, nullptr) < 0)
                return fail_errno("make / rslave");
            // pivot_root needs the rootfs to be a mount point.
            if (sys.mount(ctx.rootfs.c_str(), ctx.rootfs.c_str(), nullptr, MS_BIND | MS_REC,
                          nullptr) < 0)
                return fail_errno("bind rootfs " + ctx.rootfs);
            root.fd = sys.open(ctx.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (root.fd < 0) return fail_errno("open rootfs " + ctx.rootfs);
            if (ctx.rootfs_fd >= 0 && !sys.same_object(root.fd, ctx.rootfs_fd))
                return fail("root.path " + ctx.rootfs +
                            ": changed after it was checked (what was bound is another directory)");
            // (nodev, rprivate: sandbox_policy.hpp close_device_nodes.)
            if (op.options.rec_set && sys.set_tree_attrs(root.fd, op.options.rec_set, true) < 0)
                return fail_errno("root.path " + ctx.rootfs + ": mount_setattr");
            if (op.options.propagation && sys.mount(nullptr, ctx.rootfs.c_str(), nullptr,
                                                    op.options.propagation, nullptr) < 0)
                return fail_errno("root.path " + ctx.rootfs + ": set propagation");
            break;
        case MountOpKind::mount: {
            int passed = -1;
            if (ctx.passes_sources && passes_source(op)) {
                if (next_passed >= ctx.passed_sources.size())
                    return fail(op.what + ": the runtime did not pass its source");
                passed = ctx.passed_sources[next_passed++];
            }
            OCI_CHECK(apply_mount(root.fd, op, ctx, passed));
            break;
        }
        case MountOpKind::device:
            OCI_CHECK(apply_device(root.fd, op));
            break;
        case MountOpKind::dev_link:
            OCI_CHECK(apply_dev_link(root.fd, op));
            break;
        case MountOpKind::dev_check:
            OCI_CHECK(check_bound_device(root.fd, op));
            break;
        case MountOpKind::pivot:
        case MountOpKind::chroot:
            return {};
        default:
            return fail(op.what + ": planned before the pivot by mistake");
        }
    }
    return {};
}

Status enter_rootfs(const std::vector<MountOp> &plan, const RootfsContext &ctx, RootSys &sys) {
    if (!shares_mount_ns(plan)) return pivot(ctx.rootfs, ctx.no_pivot, sys);
    // The path as this mount namespace (the joined one) has it, which must
    // be the directory the runtime checked (a copy of a mount keeps its
    // inodes).
    const std::string &what = plan[0].what;
    SysFd dir{sys, sys.open(ctx.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (dir.fd < 0) return fail_errno(what + ": open " + ctx.rootfs);
    if (ctx.rootfs_fd >= 0 && !sys.same_object(dir.fd, ctx.rootfs_fd))
        return fail(what + ": " + ctx.rootfs +
                    " is not the directory the runtime checked in its own mount namespace");
    if (sys.fchdir(dir.fd) < 0) return fail_errno(what + ": fchdir " + ctx.rootfs);
    if (sys.chroot(".") < 0) return fail_errno(what + ": chroot " + ctx.rootfs);
    if (sys.chdir("/") < 0) return fail_errno(what + ": chdir /");
    return {};
}

Status bind_console(int peer, bool dev_bound) {
    Fd dev(::open("/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dev.valid()) return fail_errno("/dev/console: open /dev (a symlink is refused)");
    // A node or a file there is covered as it is (it may be the host's, in a
    // /dev bound from it); anything else (a symlink) is replaced by a file,
    // but not in a bound /dev, which would change the directory bound.
    Fd target(::openat(dev.get(), "console", O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st;
    bool absent = !target.valid() && errno == ENOENT;
    if (!target.valid() || ::fstat(target.get(), &st) < 0 ||
        !(S_ISCHR(st.st_mode) || S_ISREG(st.st_mode))) {
        if (dev_bound)
            return fail(std::string("/dev/console: /dev is a bind mount, and it has ") +
                        (absent ? "no console" : "something other than a node or file") +
                        " there, which the runtime does not replace");
        target.reset();
        if (::unlinkat(dev.get(), "console", 0) < 0 && errno != ENOENT)
            return fail_errno("/dev/console: remove what the rootfs has there");
        int f = ::openat(dev.get(), "console", O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
                         0600);
        if (f < 0) return fail_errno("/dev/console: create the mount point");
        ::close(f);
        target = Fd(::openat(dev.get(), "console", O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!target.valid()) return fail_errno("/dev/console: open");
    }
    Fd tree = OCI_TRY(clone_mount(peer, false, "/dev/console"));
    return attach_mount(tree.get(), target.get(), "/dev/console");
}

// Hide what `t` is: a directory under an empty read-only tmpfs, anything else
// under the verified /dev/null (opened and checked once into `null`, every
// file mask binds that fd: CVE-2025-31133). Through fds only: the paths under
// /proc/self/fd are the container's now, and its configuration may have
// mounted over them.
Status mask_target(int root, int t, Fd &null, const std::string &what, RootSys &sys) {
    struct stat st;
    if (sys.fstat(t, &st) < 0) return fail_errno(what);
    Fd cover;
    if (S_ISDIR(st.st_mode)) {
        cover = Fd(sys.new_fs("tmpfs", MOUNT_ATTR_RDONLY));
        if (!cover.valid()) return fail_errno(what + ": a read-only tmpfs");
    } else {
        if (null.get() < 0) {
            null = Fd(sys.open_in_root(root, "dev/null", O_PATH | O_NOFOLLOW));
            struct stat ns;
            if (null.get() < 0 || sys.fstat(null.get(), &ns) < 0 || !S_ISCHR(ns.st_mode) ||
                major(ns.st_rdev) != 1 || minor(ns.st_rdev) != 3)
                return fail(what + ": /dev/null is not the null device (char 1:3)");
        }
        cover = Fd(sys.clone_tree(null.get(), false));
        if (!cover.valid()) return fail_errno(what + ": open_tree");
    }
    if (sys.attach_tree(cover.get(), t) < 0) return fail_errno(what + ": move_mount");
    return {};
}

// The mount tree at `t`, recursively read-only, on top of it, with `attrs`
// added: nosuid, nodev and noexec for linux.readonlyPaths (kernel
// interfaces under /proc); none for dev.ocirun.deny-write, which means
// read-only and nothing else (each mount's exec, suid and dev as they were:
// deny-write=/usr still runs /usr/bin).
Status readonly_tree(int t, uint64_t attrs, const std::string &what, RootSys &sys) {
    Fd tree(sys.clone_tree(t, true));
    if (!tree.valid()) return fail_errno(what + ": open_tree");
    if (sys.set_tree_attrs(tree.get(), MOUNT_ATTR_RDONLY | attrs, true) < 0)
        return fail_errno(what + ": mount_setattr");
    if (sys.attach_tree(tree.get(), t) < 0) return fail_errno(what + ": move_mount");
    return {};
}

// `path` (a directory, no symlinks) bound onto itself.
Status pin_at(int root, const std::string &path, const std::string &what) {
    Fd a(open_in_root(root, path, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS));
    if (!a.valid()) return fail_errno(what + ": pin " + path);
    Fd tree = OCI_TRY(clone_mount(a.get(), true, what + ": pin " + path));
    return attach_mount(tree.get(), a.get(), what + ": pin " + path);
}

// Every ancestor of `path` but the root, top-down.
Status pin_ancestors(int root, const std::string &path, const std::string &what) {
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1))
        OCI_CHECK(pin_at(root, path.substr(0, slash), what));
    return {};
}

// The object a maskedPaths or readonlyPaths entry names, as an O_PATH fd:
// its symlinks followed inside the root (as runc; a symlink never leads
// out of it, and a magic link is refused); a missing path is skipped (an
// empty Fd). Masking or freezing the symlink itself would leave what it
// names as it was.
Result<Fd> open_target(int root, const MountOp &op, RootSys &sys) {
    Fd t(sys.open_in_root(root, op.dest.c_str() + 1, O_PATH));
    if (t.valid()) return t;
    if (errno != ENOENT) return fail_errno(op.what);
    return Fd();
}

Status finish_rootfs(const std::vector<MountOp> &plan, const FsPlan *fs, RootSys &sys) {
    size_t next_rule = 0; // the policy's operations take fs->rules in order
    SysFd root{sys, sys.open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (root.fd < 0) return fail_errno("open /");
    // /dev/null is opened and checked once, when the first file is masked; every
    // file mask binds that verified fd (CVE-2025-31133).
    Fd null;
    bool after_pivot = false;
    for (const MountOp &op : plan) {
        if (op.kind == MountOpKind::pivot) {
            after_pivot = true;
            continue;
        }
        if (!after_pivot || identity_op(op.kind)) continue;
        switch (op.kind) {
        case MountOpKind::mask: {
            Fd t = OCI_TRY(open_target(root.fd, op, sys));
            if (!t.valid()) continue;
            OCI_CHECK(mask_target(root.fd, t.get(), null, op.what, sys));
            break;
        }
        case MountOpKind::readonly: {
            Fd t = OCI_TRY(open_target(root.fd, op, sys));
            if (!t.valid()) continue;
            OCI_CHECK(readonly_tree(
                t.get(), MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, op.what, sys));
            break;
        }
        case MountOpKind::deny:
        case MountOpKind::deny_write:
        case MountOpKind::pin: {
            // On the object the policy's path names (runtime/filesystem/fs_policy.hpp),
            // reopened now: an earlier rule may have stacked a mount on it.
            if (!fs || next_rule >= fs->rules.size())
                return fail(op.what + ": not prepared (runtime/filesystem/fs_policy.hpp)");
            const FsRule &r = fs->rules[next_rule];
            const Fd &object = fs->objects[next_rule];
            next_rule++;
            // Under a path an earlier deny hid: nothing there to reach.
            bool covered = false;
            for (size_t i = 0; i + 1 < next_rule; i++)
                if (fs->rules[i].kind == MountOpKind::deny &&
                    path_under(r.resolved, fs->rules[i].resolved))
                    covered = true;
            if (covered) continue;
            Fd t(open_in_root(root.fd, r.resolved, O_PATH, RESOLVE_NO_SYMLINKS));
            if (!t.valid()) return fail_errno(op.what + ": reopen " + r.resolved);
            if (!same_object(t.get(), object.get()))
                return fail(op.what + ": " + r.resolved + " is no longer the object it named");
            if (op.kind == MountOpKind::deny)
                OCI_CHECK(mask_target(root.fd, t.get(), null, op.what, sys));
            if (op.kind == MountOpKind::deny_write)
                OCI_CHECK(readonly_tree(t.get(), 0, op.what, sys));
            // A mount point cannot be renamed, removed or replaced; what is
            // inside stays as writable as it was. Every ancestor is pinned
            // too (top-down), or renaming a parent would carry the directory
            // elsewhere; so are a placeholder's, or renaming a parent and
            // making the path again would defeat it.
            if (op.kind == MountOpKind::pin || r.made)
                OCI_CHECK(pin_ancestors(root.fd, r.resolved, op.what));
            if (op.kind == MountOpKind::pin) OCI_CHECK(pin_at(root.fd, r.resolved, op.what));
            break;
        }
        case MountOpKind::dev_readonly: {
            // The /dev mount itself, not its submounts (as runc remounts it).
            Fd dev(::open("/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!dev.valid()) return fail_errno(op.what + ": open /dev");
            OCI_CHECK(set_mount_attrs(dev.get(), MOUNT_ATTR_RDONLY, false, op.what));
            break;
        }
        case MountOpKind::root_readonly:
            OCI_CHECK(remount_bind("/", MS_RDONLY, "root.readonly: remount /", sys));
            break;
        case MountOpKind::root_propagation:
            if (sys.mount(nullptr, "/", nullptr, op.options.propagation, nullptr) < 0)
                return fail_errno(op.what);
            break;
        default:
            return fail(op.what + ": planned after the pivot by mistake");
        }
    }
    return {};
}

} // namespace ocirun
