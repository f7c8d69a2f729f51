// What the container's mounts reach of the host's filesystems, compared by
// region (runtime/filesystem/mount_table.hpp) with what they must not reach: the
// runtime's state directory (no mount at all: the records in it decide what
// delete and kill act on) and a sandbox policy's protected paths (nothing
// writable). The runtime checks the objects it opened before anything is
// made; the init checks again what it mounted when that is not the object
// the runtime saw (a source path that now leads through an earlier mount of
// the container's, or a swap), with the same function.
#pragma once

#include "oci/error.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/filesystem/mount_table.hpp"

#include <sys/stat.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ocirun {

struct SandboxPolicy;

// One thing a mount shows of a host filesystem.
struct Reach {
    std::string what; // "mounts[3] (source /a, destination /b, options rbind,ro)"
    std::string via;  // "" for the mount itself, else " through its submount /a/sub"
    FsRegion region;
    bool writable = false;
    std::string host_path = ""; // where the host shows it (runtime side), for check_linked_reach
};

// What no mount may reach (any_mount), or no writable one.
struct ReachGuard {
    std::string key;  // "annotations[dev.ocirun.protected]: /repo/.git", "--root /run/oci-run"
    std::string noun; // "the protected path", "the runtime's state directory"
    FsRegion region;
    bool any_mount = false;
    std::string within = "";    // or " (the host's mount at /var/lib in it)"
    std::string host_path = ""; // where the host shows it, for check_linked_reach
};

// The guards of a create: the state directory `root` (no writable mount;
// with a policy, no mount at all) and, with a policy, each protected path
// (one that does not exist yet guards where it would be made: fail closed).
Result<std::vector<ReachGuard>> reach_guards(const std::string &root, const SandboxPolicy *policy,
                                             const std::vector<MountEntry> &host);

// The first reach a guard refuses, as one line; nothing refused: ok.
Status check_reach(const std::vector<Reach> &reaches, const std::vector<ReachGuard> &guards);

// The files in guards (any but directories) with more links than the guards
// hold: another name (a hard link) of one, outside the guards on the same
// filesystem, that a writable mount shows is the file reached writable.
struct LinkedFiles {
    struct File {
        const ReachGuard *guard = nullptr;
        nlink_t links = 0;
        // Its names in the guards (a set: guards may overlap, one inside
        // another, and a name is counted once).
        std::set<std::string> names;
        std::string path;
    };
    std::map<std::pair<dev_t, ino_t>, File> files;
    std::set<dev_t> devices; // the filesystems they are on
};

// Whether the tree at `top` (any descriptor; `top_path` names it, `what`
// the mount) shows another name of a linked file, not crossing into another
// filesystem: the first found refuses, as one line, and so does a search
// cut short (`budget` entries, shared by the searches of one check, or a
// directory that could not be read).
Status search_linked(const LinkedFiles &linked, int top, const std::string &top_path,
                     const std::string &what, size_t &budget);

// search_linked over each writable reach, one budget for all: each opened
// at its host_path, except, with `top` (a descriptor; `top_path` names it),
// the top mount of the reaches (tree_reach's, as the init mounted it).
Status search_writable(const LinkedFiles &linked, const std::vector<Reach> &reaches, int top = -1,
                       const std::string &top_path = "");

// Runtime side, after check_reach: each writable reach searched for other
// names of the guards' linked files, on the filesystems a writable reach
// shows. `for_init`: the init searches what it mounts that the runtime
// did not see (check_mounted), which may be on any filesystem: the guards
// on every one are walked, and the result is for it.
Result<LinkedFiles> check_linked_reach(const std::vector<Reach> &reaches,
                                       const std::vector<ReachGuard> &guards, bool for_init);

// Runtime side: what the plan's mounts reach, from the host's mount table:
// the rootfs (`rootfs_fd`, writable unless root.readonly, and every host
// mount below it, which the rootfs bind copies), each bind (its source_fd,
// with the attributes attr_plan gives it, and for rbind each host mount
// below the source), and each overlay's upperdir and workdir (writable) and
// lowerdirs.
Result<std::vector<Reach>> plan_reach(const std::vector<MountOp> &plan, int rootfs_fd,
                                      const std::string &rootfs, bool root_readonly,
                                      const std::vector<MountEntry> &host);

// Init side: what the mount `top_id` of `mounts` (the init's own table) and
// every mount below it reach, as mounted (host_path: each one's mount point
// in the init's namespace).
std::vector<Reach> tree_reach(const std::vector<MountEntry> &mounts, int top_id,
                              const std::string &what);

// "mounts[3] (source /a, destination /b, options rbind,ro)": a mount in
// errors.
std::string describe_mount(const MountOp &op);

// The host directories an overlay's data names, in order: upperdir and
// workdir are written to, each lowerdir (lowerdir+, datadir+) read.
struct OverlayDir {
    std::string key, path;
    bool writable;
};
std::vector<OverlayDir> overlay_dirs(const std::string &data);
// `data` with the directories overlay_dirs names replaced, in its order, by
// `paths` (the init's /proc/self/fd/N of each, opened and checked).
std::string overlay_data_at(const std::string &data, const std::vector<std::string> &paths);

// A host directory an overlay of the container's shows (a layer), as the
// init opened and mounted it: another way to what a sandbox rule names.
struct OverlayLayer {
    std::string point; // the overlay's destination in the container
    std::string what;  // "mounts[2] (...) (its lowerdir /a)"
    FsRegion region;
    bool writable = false; // upperdir, workdir
};

} // namespace ocirun
