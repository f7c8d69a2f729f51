#include "runtime/cgroups/systemd_driver.hpp"

#include "build_config.h"
#include "oci/state.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/network/shim_launch.hpp"

#include <unistd.h>

namespace ocirun {

namespace {

Status run_helper(const char *verb, const SystemdScope &scope, const std::string &input) {
    std::string path = systemd_helper_path();
    if (::access(path.c_str(), X_OK) < 0)
        return fail_errno("--systemd-cgroup: the systemd helper " + path);
    oci::Hook h =
        helper_program(path, {"oci-run-systemd", verb, scope.unit, scope_description(scope.id)});
    return run_program(h, "systemd: " + scope.unit, input);
}

} // namespace

Result<std::vector<UnitProperty>> resource_properties(const oci::Resources &r,
                                                      const CgroupHost &host) {
    auto devices = oci::read_file("/proc/devices");
    return systemd_properties(r, host, devices.value_or(""));
}

std::string systemd_helper_path() {
    return helper_path("oci-run-systemd", OCIRUN_SYSTEMD_PATH);
}

Status start_scope(const SystemdScope &scope, const std::vector<UnitProperty> &props, pid_t pid) {
    return run_helper("start", scope, systemd_request(props, pid));
}

Status set_scope_properties(const SystemdScope &scope, const std::vector<UnitProperty> &props) {
    return run_helper("set", scope, systemd_request(props, 0));
}

Status check_scope_owner(const SystemdScope &scope) {
    return run_helper("check", scope, "");
}

Status stop_scope(const SystemdScope &scope) {
    return run_helper("stop", scope, "");
}

} // namespace ocirun
