// CVE-2019-5736: a process in the container must never reach the runtime's
// binary on the host, neither through /proc/PID/exe of a runtime process that
// is inside the container's namespaces (the init before exec, `exec`'s child)
// nor by exec'ing /proc/self/exe from there (a `#!/proc/self/exe` entry point).
// The commands that put a process into a container therefore re-execute
// themselves from a view of the binary that cannot be written, so that
// /proc/self/exe is that view:
//
//  - as root, the binary through a private overlayfs whose only layers are
//    the binary's directory and /sys/fs/cgroup, both lower (read-only) layers:
//    the superblock itself is read-only, so no remount or mount_setattr of a
//    reachable mount makes it writable, and the mount is detached (never in
//    any mount table). Nothing is copied: the new image maps the binary's own
//    page cache. Its mappings show the overlay's file too, so
//    /proc/PID/map_files leads to the read-only view, not to the file below
//    (the test checks; older kernels mapped the file below, reachable
//    there only with CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE on the host).
//  - otherwise (no overlayfs, no privilege for it, or the overlay refused the
//    layers), a copy in a memfd sealed against writes (F_SEAL_WRITE,
//    F_SEAL_GROW, F_SEAL_SHRINK, F_SEAL_SEAL).
//
// OCI_RUN_SEAL=memfd in the environment forces the copy (both are safe; the
// benchmark and the tests compare them).
#pragma once

#include "oci/error.hpp"
#include "oci/fd.hpp"

#include <string>
#include <string_view>

namespace ocirun {

// The seals a memfd copy made by reexec_sealed carries.
int sealed_binary_seals();

// True when this process already runs from a sealed view made by
// reexec_sealed: a sealed memfd, or the overlay view (an overlayfs file on a
// read-only superblock, with the marker the re-exec put in the environment).
// Removes that marker from the environment either way.
bool running_sealed();

// Execute the binary of /proc/self/exe from a sealed view with `argv` and
// the current environment. Returns only on failure.
Error reexec_sealed(char *const argv[]);

// A sealed memfd copy of another program (the exec stage,
// runtime/lifecycle/exec_stage.hpp), named `memfd_name`, for execveat: for a program of
// a few KB it is cheaper than the overlay, whose teardown when the
// container's process exits waits for an RCU grace period. The overlay view
// only where no memfd can be made (vm.memfd_noexec=2), as root.
Result<Fd> sealed_copy_of(const std::string &path, const char *memfd_name);
// The memfd copy alone (none where memfds cannot be executed).
Result<Fd> memfd_copy_of(const std::string &path, const char *memfd_name);

// A memfd named `name` holding `data`, sealed (sealed_binary_seals) and read
// from its start: what the runtime hands another program to read (the exec
// stage's seccomp filters, the network helper's configuration). Errors
// start with `what`.
Result<Fd> sealed_memfd(const char *name, std::string_view data, const std::string &what);

} // namespace ocirun
