#include "runtime/support.hpp"

#include "runtime/filesystem/mount_options.hpp"

namespace ocirun::support {

namespace {
constexpr const char *kNamespaces[] = {"cgroup", "ipc",  "mount", "network",
                                       "pid",    "time", "user",  "uts"};
} // namespace

std::span<const char *const> namespaces() {
    return kNamespaces;
}
std::span<const char *const> mount_options() {
    const auto &v = known_mount_flag_names();
    return {v.data(), v.size()};
}
std::span<const char *const> hooks() {
    static constexpr const char *kHooks[] = {"prestart",       "createRuntime", "createContainer",
                                             "startContainer", "poststart",     "poststop"};
    return kHooks;
}
bool capabilities() {
    return true;
}
bool seccomp() {
    return true;
}
bool cgroup_v1() {
    return true;
}
bool cgroup_v2() {
    return true;
}

} // namespace ocirun::support
