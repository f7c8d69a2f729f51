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

} // namespace ocirun
