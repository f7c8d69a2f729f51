// The system calls that set up and change a mount namespace's root (the
// rootfs isolated and bound onto itself, pivot_root, the --no-pivot move,
// the chroot of a container without a mount namespace of its own, the
// root's read-only remount and propagation), behind a narrow interface: the real calls, and a
// recording fake the unit tests pass in (never swapped globally), so the order and flags of these
// steps are tested without root. Each returns what the system call does (-1 and errno on failure).
#pragma once

#include "oci/error.hpp"
#include "runtime/filesystem/mount_table.hpp"

#include <sys/statvfs.h>

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
    // Whether two fds are the same object (device and inode).
    virtual bool same_object(int a, int b) = 0;
    // This process's mount table.
    virtual Result<std::vector<MountEntry>> mounts() = 0;
};

// The real calls.
RootSys &real_root_sys();

} // namespace ocirun
