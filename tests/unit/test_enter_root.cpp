// How the init sets up and enters the container's root
// (runtime/filesystem/rootfs.hpp prepare_rootfs, enter_rootfs,
// finish_rootfs), through a recording fake of its system calls: the order
// and flags of the rootfs's isolation, pivot_root, --no-pivot, the chroot of
// a shared mount namespace and the root's read-only remount and
// propagation, without root.
#include "oci/spec_io.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/filesystem/root_sys.hpp"
#include "runtime/filesystem/rootfs.hpp"
#include "unit_support.hpp"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

using namespace ocirun;

namespace {

std::string flag_text(unsigned long f) {
    std::string out;
    for (auto [bit, name] : {std::pair{MS_REMOUNT, "MS_REMOUNT"}, std::pair{MS_BIND, "MS_BIND"},
                             std::pair{MS_MOVE, "MS_MOVE"}, std::pair{MS_SLAVE, "MS_SLAVE"},
                             std::pair{MS_REC, "MS_REC"}, std::pair{MS_RDONLY, "MS_RDONLY"},
                             std::pair{MS_NOSUID, "MS_NOSUID"}, std::pair{MS_NODEV, "MS_NODEV"},
                             std::pair{MS_NOEXEC, "MS_NOEXEC"}})
        if (f & bit) out += (out.empty() ? "" : "|") + std::string(name);
    return out.empty() ? "0" : out;
}

// Records each call as one line; `fail` makes the call whose line starts
// with it fail with `fail_errno`.
class Recorder final : public RootSys {
  public:
    std::vector<std::string> calls;
    std::vector<MountEntry> table;
    std::string fail;
    int fail_errno = EPERM;
    bool same = true;
    unsigned long vfs_flags = 0; // what statvfs reports

    int chdir(const char *p) override { return rec("chdir " + std::string(p)); }
    int fchdir(int fd) override { return rec("fchdir " + std::to_string(fd)); }
    int open(const char *p, int) override {
        int r = rec("open " + std::string(p));
        return r < 0 ? r : next_fd++;
    }
    int close(int fd) override { return rec("close " + std::to_string(fd)); }
    int chroot(const char *p) override { return rec("chroot " + std::string(p)); }
    int pivot_root(const char *n, const char *o) override {
        return rec("pivot_root " + std::string(n) + " " + o);
    }
    int mount(const char *s, const char *t, const char *type, unsigned long f,
              const char *) override {
        return rec("mount " + std::string(s ? s : "-") + " " + t + " " + (type ? type : "-") + " " +
                   flag_text(f));
    }
    int umount2(const char *t, int f) override {
        return rec("umount2 " + std::string(t) + (f & MNT_DETACH ? " MNT_DETACH" : ""));
    }
    int statvfs(const char *p, struct statvfs *out) override {
        *out = {};
        out->f_flag = vfs_flags;
        return rec("statvfs " + std::string(p));
    }
    // The fd-based calls hand out real fds (of /dev/null: harmless to close
    // or leak), recorded by a label; fstat answers from `kinds`, by the path
    // an fd was opened for.
    int open_in_root(int, const char *rel, int) override {
        if (rec("open_in_root " + std::string(rel)) < 0) return -1;
        if (!kinds.count(rel)) {
            errno = ENOENT;
            return -1;
        }
        return labelled(rel);
    }
    int fstat(int fd, struct stat *out) override {
        *out = {};
        auto k = kinds.find(label(fd));
        if (k == kinds.end()) return rec("fstat " + label(fd));
        out->st_mode = k->second.first;
        out->st_rdev = k->second.second;
        return rec("fstat " + label(fd));
    }
    int clone_tree(int fd, bool recursive) override {
        if (rec("clone_tree " + label(fd) + (recursive ? " recursive" : "")) < 0) return -1;
        return labelled("copy of " + label(fd));
    }
    int attach_tree(int tree, int target) override {
        return rec("attach_tree " + label(tree) + " -> " + label(target));
    }
    int set_tree_attrs(int tree, uint64_t attrs, bool recursive) override {
        std::string a;
        for (auto [bit, name] :
             {std::pair{MOUNT_ATTR_RDONLY, "RDONLY"}, std::pair{MOUNT_ATTR_NOSUID, "NOSUID"},
              std::pair{MOUNT_ATTR_NODEV, "NODEV"}, std::pair{MOUNT_ATTR_NOEXEC, "NOEXEC"}})
            if (attrs & bit) a += (a.empty() ? "" : "|") + std::string(name);
        return rec("set_tree_attrs " + label(tree) + " " + a + (recursive ? " recursive" : ""));
    }
    int new_fs(const char *type, uint64_t attrs) override {
        if (rec(std::string("new_fs ") + type + (attrs & MOUNT_ATTR_RDONLY ? " RDONLY" : "")) < 0)
            return -1;
        return labelled(std::string("new ") + type);
    }
    bool same_object(int, int) override { return same; }
    Result<std::vector<MountEntry>> mounts() override { return table; }

    std::map<std::string, std::pair<mode_t, dev_t>> kinds; // path -> (st_mode, st_rdev)

  private:
    int next_fd = 10;
    std::map<int, std::string> labels;
    int labelled(const std::string &what) {
        int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        labels[fd] = what;
        return fd;
    }
    std::string label(int fd) {
        auto l = labels.find(fd);
        return l == labels.end() ? std::to_string(fd) : l->second;
    }
    int rec(std::string line) {
        calls.push_back(line);
        if (!fail.empty() && line.rfind(fail, 0) == 0) {
            errno = fail_errno;
            return -1;
        }
        return 0;
    }
};

std::string joined(const std::vector<std::string> &v) {
    std::string out;
    for (const auto &l : v)
        out += l + "\n";
    return out;
}

std::vector<MountOp> default_plan() {
    auto p = plan_mounts(oci::default_spec(false, 0, 0), {});
    cr_assert(p.has_value());
    return *p;
}

// The default configuration without mounts, masks, read-only paths or a
// read-only root: each test adds what it looks at.
oci::Spec bare_spec() {
    oci::Spec s = oci::default_spec(false, 0, 0);
    s.mounts.clear();
    s.linux_->masked_paths.clear();
    s.linux_->readonly_paths.clear();
    s.root->readonly = false;
    return s;
}

std::vector<MountOp> plan_of(const oci::Spec &s, MountFacts f = {}) {
    auto p = plan_mounts(s, f);
    cr_assert(p.has_value(), "%s", p ? "" : p.error().text().c_str());
    return *p;
}

MountEntry entry(const char *point, const char *fstype) {
    MountEntry m;
    m.point = point;
    m.fstype = fstype;
    return m;
}

} // namespace

// pivot_root(".", "."), then through the old root's own fd: rslave before the
// detach (the detach must not propagate to the host), back to "/".
Test(enter_root, pivot_root_makes_the_old_root_rslave_before_detaching_it) {
    Recorder r;
    RootfsContext ctx;
    ctx.rootfs = "/b/rootfs";
    auto st = enter_rootfs(default_plan(), ctx, r);
    cr_assert(st.has_value(), "%s", st ? "" : st.error().text().c_str());
    unit::expect_eq(joined(r.calls), "chdir /b/rootfs\n"
                                     "open /\n"
                                     "pivot_root . .\n"
                                     "fchdir 10\n"
                                     "mount - . - MS_SLAVE|MS_REC\n"
                                     "umount2 . MNT_DETACH\n"
                                     "close 10\n"
                                     "chdir /\n");
}

// A failing step stops there, names it, and closes what it opened.
Test(enter_root, a_failing_step_stops_and_names_it) {
    Recorder r;
    r.fail = "mount - . -";
    RootfsContext ctx;
    ctx.rootfs = "/b/rootfs";
    auto st = enter_rootfs(default_plan(), ctx, r);
    cr_assert(!st.has_value());
    unit::expect_eq(st.error().text(), "make old root rslave: Operation not permitted");
    cr_assert(std::find(r.calls.begin(), r.calls.end(), "umount2 . MNT_DETACH") == r.calls.end(),
              "detached a shared old root: %s", joined(r.calls).c_str());
    unit::expect_eq(r.calls.back(), "close 10");
}

// --no-pivot: every procfs and sysfs outside the rootfs detached (deepest
// first) or, where the kernel keeps it locked, covered by an empty read-only
// tmpfs; then the move and the chroot (runc's msMoveRoot).
Test(enter_root, no_pivot_hides_kernel_filesystems_outside_the_rootfs) {
    Recorder r;
    r.table = {entry("/", "ext4"), entry("/proc", "proc"), entry("/sys", "sysfs"),
               entry("/b/rootfs/proc", "proc"), entry("/run/x/proc", "proc")};
    r.fail = "umount2 /sys";
    RootfsContext ctx;
    ctx.rootfs = "/b/rootfs";
    ctx.no_pivot = true;
    auto st = enter_rootfs(default_plan(), ctx, r);
    cr_assert(st.has_value(), "%s", st ? "" : st.error().text().c_str());
    unit::expect_eq(joined(r.calls),
                    "chdir /b/rootfs\n"
                    "umount2 /run/x/proc MNT_DETACH\n"
                    "umount2 /sys MNT_DETACH\n"
                    "mount tmpfs /sys tmpfs MS_RDONLY|MS_NOSUID|MS_NODEV|MS_NOEXEC\n"
                    "umount2 /proc MNT_DETACH\n"
                    "mount /b/rootfs / - MS_MOVE\n"
                    "chroot .\n"
                    "chdir /\n");
}

// Without a mount namespace of its own: nothing mounted, the rootfs opened
// and checked to be the object the runtime checked, then the chroot.
Test(enter_root, shared_mount_namespace_is_a_checked_chroot) {
    oci::Spec s = bare_spec();
    MountFacts f;
    f.mount_ns = MountNs::joined;
    auto plan = plan_mounts(s, f);
    cr_assert(plan.has_value(), "%s", plan ? "" : plan.error().text().c_str());
    RootfsContext ctx;
    ctx.rootfs = "/b/rootfs";
    ctx.rootfs_fd = 3;
    Recorder r;
    auto st = enter_rootfs(*plan, ctx, r);
    cr_assert(st.has_value(), "%s", st ? "" : st.error().text().c_str());
    unit::expect_eq(joined(r.calls), "open /b/rootfs\nfchdir 10\nchroot .\nchdir /\nclose 10\n");
    Recorder other;
    other.same = false;
    auto refused = enter_rootfs(*plan, ctx, other);
    cr_assert(!refused.has_value());
    cr_assert(refused.error().text().find("is not the directory the runtime checked") !=
                  std::string::npos,
              "%s", refused.error().text().c_str());
    cr_assert(std::find(other.calls.begin(), other.calls.end(), "chroot .") == other.calls.end());
}

// Isolating the rootfs: / made rslave first (nothing done after may
// propagate to the host), then the rootfs bound onto itself (pivot_root
// needs a mount), opened, and checked to be the directory the runtime
// checked; a plan without mounts stops at the pivot.
Test(enter_root, the_rootfs_is_isolated_then_bound_and_checked) {
    std::vector<MountOp> plan(2);
    plan[0].kind = MountOpKind::isolate;
    plan[1].kind = MountOpKind::pivot;
    RootfsContext ctx;
    ctx.rootfs = "/b/rootfs";
    ctx.rootfs_fd = 3;
    Recorder r;
    auto st = prepare_rootfs(plan, ctx, r);
    cr_assert(st.has_value(), "%s", st ? "" : st.error().text().c_str());
    unit::expect_eq(joined(r.calls), "mount - / - MS_SLAVE|MS_REC\n"
                                     "mount /b/rootfs /b/rootfs - MS_BIND|MS_REC\n"
                                     "open /b/rootfs\n"
                                     "close 10\n");
    Recorder swapped;
    swapped.same = false;
    auto refused = prepare_rootfs(plan, ctx, swapped);
    cr_assert(!refused.has_value());
    unit::expect_eq(refused.error().text(),
                    "root.path /b/rootfs: changed after it was checked (what was bound is another "
                    "directory)");
    Recorder shared;
    shared.fail = "mount - / -";
    auto failed = prepare_rootfs(plan, ctx, shared);
    cr_assert(!failed.has_value());
    unit::expect_eq(failed.error().text(), "make / rslave: Operation not permitted");
    unit::expect_eq(joined(shared.calls), "mount - / - MS_SLAVE|MS_REC\n");
}

// After the pivot: root.readonly remounts / read-only keeping the flags the
// kernel locked (read back with statvfs), then linux.rootfsPropagation, in
// the plan's order.
Test(enter_root, root_read_only_keeps_locked_flags_then_propagation) {
    oci::Spec s = bare_spec();
    s.root->readonly = true;
    s.linux_->rootfs_propagation = "rslave";
    auto plan = plan_of(s);
    Recorder r;
    r.vfs_flags = ST_NOSUID | ST_NODEV;
    auto st = finish_rootfs(plan, nullptr, r);
    cr_assert(st.has_value(), "%s", st ? "" : st.error().text().c_str());
    unit::expect_eq(joined(r.calls), "open /\n"
                                     "statvfs /\n"
                                     "mount - / - MS_REMOUNT|MS_BIND|MS_RDONLY|MS_NOSUID|MS_NODEV\n"
                                     "mount - / - MS_SLAVE|MS_REC\n"
                                     "close 10\n");
}

// Masks and read-only paths after the pivot, on fds: a file masked by a copy
// of /dev/null (opened once, checked to be char 1:3: CVE-2025-31133), a
// directory by a new read-only tmpfs, a missing path skipped; a read-only
// path is a recursive copy of itself made read-only, nosuid, nodev and
// noexec before it goes on top. A fake /dev/null is refused before anything
// is mounted with it.
Test(enter_root, masks_and_read_only_paths_on_fds) {
    oci::Spec s = bare_spec();
    s.linux_->masked_paths = {"/proc/kcore", "/proc/acpi", "/proc/missing", "/proc/keys"};
    s.linux_->readonly_paths = {"/proc/sys"};
    auto plan = plan_of(s);
    Recorder r;
    r.kinds = {{"proc/kcore", {S_IFREG | 0400, 0}},
               {"proc/keys", {S_IFREG | 0444, 0}},
               {"proc/acpi", {S_IFDIR | 0555, 0}},
               {"proc/sys", {S_IFDIR | 0555, 0}},
               {"dev/null", {S_IFCHR | 0666, makedev(1, 3)}}};
    auto st = finish_rootfs(plan, nullptr, r);
    cr_assert(st.has_value(), "%s", st ? "" : st.error().text().c_str());
    unit::expect_eq(joined(r.calls), "open /\n"
                                     "open_in_root proc/kcore\n"
                                     "fstat proc/kcore\n"
                                     "open_in_root dev/null\n"
                                     "fstat dev/null\n"
                                     "clone_tree dev/null\n"
                                     "attach_tree copy of dev/null -> proc/kcore\n"
                                     "open_in_root proc/acpi\n"
                                     "fstat proc/acpi\n"
                                     "new_fs tmpfs RDONLY\n"
                                     "attach_tree new tmpfs -> proc/acpi\n"
                                     "open_in_root proc/missing\n"
                                     "open_in_root proc/keys\n"
                                     "fstat proc/keys\n"
                                     "clone_tree dev/null\n"
                                     "attach_tree copy of dev/null -> proc/keys\n"
                                     "open_in_root proc/sys\n"
                                     "clone_tree proc/sys recursive\n"
                                     "set_tree_attrs copy of proc/sys "
                                     "RDONLY|NOSUID|NODEV|NOEXEC recursive\n"
                                     "attach_tree copy of proc/sys -> proc/sys\n"
                                     "close 10\n");
    for (mode_t fake : {mode_t(S_IFREG | 0666), mode_t(S_IFLNK | 0777)}) {
        Recorder f;
        f.kinds = r.kinds;
        f.kinds["dev/null"] = {fake, 0};
        auto refused = finish_rootfs(plan, nullptr, f);
        cr_assert(!refused.has_value());
        unit::expect_eq(refused.error().text(),
                        "maskedPaths /proc/kcore: /dev/null is not the null device (char 1:3)");
        for (const auto &c : f.calls)
            cr_assert(c.find("attach_tree copy of dev/null") == std::string::npos, "%s",
                      joined(f.calls).c_str());
    }
}
