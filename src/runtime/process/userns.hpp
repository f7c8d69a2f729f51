// User namespace id mappings, runtime side. As root they are written to
// /proc/PID/{uid,gid}_map directly. An unprivileged user (rootless) may write
// only a single mapping of its own uid and gid, after denying setgroups;
// anything more goes through the setuid helpers newuidmap/newgidmap (package
// uidmap), which check the ranges against /etc/subuid and /etc/subgid.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"

#include <sys/types.h>

namespace ocirun {

Status write_id_mappings(pid_t pid, const oci::Linux &lx);

// Whether this process is in the host's (initial) user namespace: its
// uid_map is the identity over every id. Root of another (the namespace
// rootless Podman runs its runtime in) is no root of the host: it makes no
// device node, writes no cgroup it was not given, moves no host interface.
bool in_initial_user_namespace();
// Root of the host: euid 0 in the initial user namespace.
bool host_root();

} // namespace ocirun
