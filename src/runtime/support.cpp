#include "support.hpp"

namespace ocirun::support {

// Nothing runs a container yet: the lifecycle issue fills these in.
std::span<const char *const> namespaces() { return {}; }
std::span<const char *const> mount_options() { return {}; }
std::span<const char *const> hooks() { return {}; }
bool capabilities() { return false; }
bool seccomp() { return false; }
bool cgroup_v1() { return false; }
bool cgroup_v2() { return false; }

} // namespace ocirun::support
