// The new mount API (fsopen, fsmount, open_tree, mount_setattr, move_mount)
// on file descriptors: once the container's root is in place, no mount and no
// /proc write goes through a path that the container's configuration could
// have mounted something over (CVE-2025-52881 and its family).
#pragma once

#include "oci/error.hpp"
#include "oci/fd.hpp"
#include "runtime/filesystem/mount_options.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ocirun {

// A new, detached filesystem instance (tmpfs, proc, overlay...) with
// MOUNT_ATTR_* flags, its string parameters ({"lowerdir", "/a:/b"}) set first.
Result<Fd> detached_fs(const char *type, uint64_t attrs, const std::string &what,
                       const std::vector<std::pair<std::string, std::string>> &params = {});

// A detached copy of the mount at `fd` (recursive with submounts).
Result<Fd> clone_mount(int fd, bool recursive, const std::string &what);

// Set MOUNT_ATTR_* flags on a (detached) mount tree.
Status set_mount_attrs(int tree, uint64_t attrs, bool recursive, const std::string &what);

// A bind's attributes as attr_plan (mount_options.hpp) computed them: the
// top mount's change, then the tree's (AT_RECURSIVE), in that order.
// The MOUNT_ATTR_* bits of a statvfs f_flag (read-only, nosuid, nodev,
// noexec, noatime, nodiratime).
uint64_t statvfs_attrs(unsigned long f_flag);

Status apply_attr_plan(int fd, const MountAttrPlan &p, const std::string &what);

// Attach the detached `tree` on top of what `target` (an O_PATH fd) is.
Status attach_mount(int tree, int target, const std::string &what);

// This PID namespace's procfs as a private, detached instance: writes through
// it (open_proc_file) cannot be redirected by mounts in the container.
Result<Fd> private_proc();

// Open `rel` ("sys/kernel/domainname") beneath the private procfs, refusing
// symlinks, magic links and crossing into another mount.
Result<Fd> open_proc_file(int proc, const std::string &rel, int flags);

} // namespace ocirun
