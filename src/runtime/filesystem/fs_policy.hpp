// The sandbox policy's filesystem rules (dev.ocirun.deny, deny-write and
// deny-rename) held for the object, not the path. In the container's init,
// after pivot_root and before any rule is applied, each path is resolved
// inside the container's root (symlinks followed: the rule is on what the
// path names, as a user means it; a missing one is made there, empty, as a
// placeholder), and every other way the container has to each object is
// found: a mount that shows the object or part of it at another path (by
// region, from the kernel's mount table), and a hard link of a file in it.
// In strict mode any such way refuses the container, naming both paths; in
// report mode the container runs and the ways are recorded, and `report`
// (and `start`, in strict mode) tries each from inside the container's
// namespaces.
#pragma once

#include "oci/error.hpp"
#include "oci/fd.hpp"
#include "runtime/filesystem/host_reach.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/filesystem/mount_table.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ocirun {

// One rule as the init found it.
struct FsRule {
    MountOpKind kind = MountOpKind::deny; // deny, deny_write or pin
    std::string what;                     // "annotations[dev.ocirun.deny] /root/.ssh"
    std::string path;                     // as the policy names it
    std::string resolved;                 // what it names in the container's root
    bool dir = false;
    bool made = false;           // a placeholder: the path was not there
    FsRegion region;             // the object's
    std::vector<FsRegion> below; // of the mounts below `resolved`, which the rule covers
};

// The policy's name of a rule's kind: "deny", "deny-write", "deny-rename".
const char *fs_rule_kind(MountOpKind k);

// Another way to a rule's object than its own path.
struct FsWay {
    size_t rule = 0;
    std::string path; // in the container; "" when the search could not finish
    std::string how;
};

// The mounts of `mounts` that show a rule's object, or part of it, at a
// path outside the rule's own and not hidden under another mount. A
// read-only one counts for deny (it still shows the content), not for
// deny-write; deny-rename needs none (a mount point cannot be renamed
// through any path of its mount namespace). An overlay's superblock is its
// own: its layers (`layers`, as the init mounted them) are compared instead,
// every layer for deny, upperdir and workdir for deny-write. Pure:
// unit-tested on text.
std::vector<FsWay> mount_ways(const std::vector<MountEntry> &mounts,
                              const std::vector<FsRule> &rules,
                              const std::vector<OverlayLayer> &layers = {});

// A directory the init made for a placeholder, for delete to remove.
struct MadeDir {
    std::string path; // in the container
    FsRegion region;
    uint64_t ino = 0;
};

struct FsPlan {
    std::vector<FsRule> rules;
    std::vector<Fd> objects; // each rule's object (O_PATH), in the same order
    std::vector<FsWay> ways;
    std::vector<MadeDir> made; // parents first
};

// Entries walked at most to find the other links of hard-linked files (in
// the objects, then in the container's view of their filesystems); a search
// cut short is a way ("cannot tell"), which strict mode refuses.
inline constexpr size_t kHardLinkBudget = 200000;

// Init side, after pivot_root (`root` the container's root, `procfs` the
// init's private procfs): the plan's deny, deny_write and pin operations
// resolved, placeholders made, every way found (`layers`: the overlays'
// layers, which the mount table does not show).
Result<FsPlan> prepare_fs_rules(int root, int procfs, const std::vector<MountOp> &plan,
                                const std::vector<OverlayLayer> &layers = {});

// openat2 of `path` (absolute, in the container) beneath `root` with
// RESOLVE_IN_ROOT and RESOLVE_NO_MAGICLINKS, plus `resolve` (such as
// RESOLVE_NO_SYMLINKS); O_CLOEXEC added. The fd, or -1 with errno.
int open_in_root(int root, const std::string &path, int flags, uint64_t resolve = 0);

// Resolve `path` (absolute, in the container) inside `root`, following
// symlinks, never out of it: RESOLVE_IN_ROOT, no magic links. With `make`,
// what is missing is made as directories (a dangling symlink is followed to
// where it points) and listed in `made` by their paths in the root (read
// through `procfs`); without it, ENOENT gives an empty Fd.
Result<Fd> resolve_in_root(int root, int procfs, const std::string &path, bool make,
                           std::vector<std::string> *made, const std::string &what);

} // namespace ocirun
