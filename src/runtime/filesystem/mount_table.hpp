// The kernel's view of a mount namespace (/proc/PID/mountinfo), and
// filesystem objects compared by what they are rather than by the path a
// string named: a region is a superblock (mountinfo's major:minor) and a
// path from that filesystem's own root. A second mount of the same
// directory, a symlink, or a path with ".." in it all reach the same
// region, so a check made on regions holds for the object.
#pragma once

#include "oci/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

struct MountEntry {
    int id = 0, parent = 0;
    unsigned major = 0, minor = 0;
    std::string root;      // the directory of its filesystem mounted here ("/", "/sub")
    std::string point;     // where it is, in the reader's root
    bool readonly = false; // the per-mount "ro"
    std::string fstype, source, super_options;
};

// Every line of a mountinfo text, in the kernel's order (a mount after the
// one it is mounted on); octal escapes (\040) undone.
std::vector<MountEntry> parse_mountinfo(std::string_view text);
// This process's own mount table (through `procfs` as path_of_fd does).
Result<std::vector<MountEntry>> own_mounts(int procfs = -1);

struct FsRegion {
    unsigned major = 0, minor = 0;
    std::string path; // from the filesystem's root; "/" for the root itself
};

// How `a` relates to `b`: the same object, a directory containing b, inside
// b, or neither (another filesystem, or a sibling).
enum class Overlap { none, same, contains, inside };
Overlap overlap(const FsRegion &a, const FsRegion &b);

// "host:/a/b" for errors: major:minor and the path.
std::string describe(const FsRegion &r);

// The ID of the mount `fd` is on (statx STATX_MNT_ID, Linux 5.8+), as
// mountinfo's first field gives it.
Result<int> mount_id_of(int fd);
// That mount in `mounts`, or null.
const MountEntry *find_mount(const std::vector<MountEntry> &mounts, int id);

// Where mount `m` shows `fs_path` of its filesystem (which must be at or
// below m's root): m's point plus the rest.
std::string path_in_mount(const MountEntry &m, const std::string &fs_path);
// The same for any view of a filesystem's `root` at `point` (an overlay's
// layer, which the mount table does not show).
std::string path_in_view(const std::string &point, const std::string &root,
                         const std::string &fs_path);

// What a mount shows at its mount point.
FsRegion region_of(const MountEntry &m);

// The path `fd` names in this process's root: its /proc/self/fd link, read
// through `procfs` (a procfs instance's fd, such as the init's private one)
// or, with -1, through /proc. Deleted or unreachable objects are errors.
Result<std::string> path_of_fd(int fd, int procfs = -1);

// The region of what `fd` names (O_PATH is enough): its mount found by
// statx(STATX_MNT_ID) in `mounts` (this process's own mount table), and its
// path below that mount's point (path_of_fd through `procfs`).
Result<FsRegion> region_of(int fd, const std::vector<MountEntry> &mounts, int procfs = -1);
// The region of `path`, known to be on mount `mount_id` of `mounts`.
Result<FsRegion> region_at(int mount_id, const std::string &path,
                           const std::vector<MountEntry> &mounts);

// The region `path` names, symlinks followed or, when it does not exist
// (yet), that of its deepest existing ancestor with the rest of the path
// appended: where it would be made. Errors other than ENOENT are errors.
Result<FsRegion> region_of_path(const std::string &path, const std::vector<MountEntry> &mounts);

// The mounts whose point is strictly below `point` (the submounts an rbind
// of it copies), in the table's order.
std::vector<const MountEntry *> mounts_below(const std::vector<MountEntry> &mounts,
                                             const std::string &point);

// `path` is `dir` or below it ("/a/b" is under "/a", "/ab" is not).
bool path_under(const std::string &path, const std::string &dir);
// `dir` + "/" + `rest`, with "/" at most once between them.
std::string path_join(const std::string &dir, const std::string &rest);

} // namespace ocirun
