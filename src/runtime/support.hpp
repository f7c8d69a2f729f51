// What this build implements. `features` and the docs read these tables, so
// they are updated in the same commit that lands (or removes) a feature.
#pragma once

#include <span>

namespace ocirun::support {

// Namespaces the runtime creates or joins.
std::span<const char *const> namespaces();
// Mount options honoured by the mount code.
std::span<const char *const> mount_options();
// Hook kinds run at their lifecycle points.
std::span<const char *const> hooks();
// Whether capability sets are applied to the container process.
bool capabilities();
// Whether linux.seccomp is enforced.
bool seccomp();
// Which cgroup hierarchies the runtime manages.
bool cgroup_v1();
bool cgroup_v2();

} // namespace ocirun::support
