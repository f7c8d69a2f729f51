// The system calls that set up and change a mount namespace's root (the
// rootfs isolated and bound onto itself, pivot_root, the --no-pivot move,
// the chroot of a container without a mount namespace of its own, the
// root's read-only remount and propagation), behind a narrow interface: the real calls, and a
// recording fake the unit tests pass in (never swapped globally), so the order and flags of these
// steps are tested without root. Each returns what the system call does (-1 and errno on failure).
#pragma once

#include "oci/error.hpp"
#include "runtime/filesystem/mount_table.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cstdint>

#include <string>
#include <vector>

namespace ocirun {

class RootSys {
  public:
    virtual ~RootSys() = default;
    virtual int chdir(const char *path) = 0;
    virtual int fchdir(int fd) = 0;
    virtual int open(const char *path, int flags) = 0;
    virtual int close(int fd) = 0;
    virtual int chroot(const char *path) = 0;
    virtual int pivot_root(const char *new_root, const char *put_old) = 0;
    virtual int mount(const char *source, const char *target, const char *type, unsigned long flags,
                      const char *data) = 0;
    virtual int umount2(const char *target, int flags) = 0;
    virtual int statvfs(const char *path, struct statvfs *out) = 0;
    // The fd-based calls of the masks and read-only paths (each returns a
    // new fd, close-on-exec, or -1): `rel` opened inside `root` (openat2
    // RESOLVE_IN_ROOT, no magic links), fstat, a detached copy of the mount
    // tree at `fd` (open_tree OPEN_TREE_CLONE), attached onto `target`
    // (move_mount), attributes set on a detached tree (mount_setattr), and
    // a new detached filesystem without options (fsopen, fsmount).
    virtual int open_in_root(int root, const char *rel, int flags) = 0;
    virtual int fstat(int fd, struct stat *out) = 0;
    virtual int clone_tree(int fd, bool recursive) = 0;
    virtual int attach_tree(int tree, int target) = 0;
    virtual int set_tree_attrs(int tree, uint64_t attrs, bool recursive) = 0;
    virtual int new_fs(const char *type, uint64_t attrs) = 0;
    // Whether two fds are the same object (device and inode).
    virtual bool same_object(int a, int b) = 0;
    // This process's mount table.
    virtual Result<std::vector<MountEntry>> mounts() = 0;
};

// The real calls.
RootSys &real_root_sys();

} // namespace ocirun
