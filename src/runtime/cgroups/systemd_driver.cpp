#include "runtime/cgroups/systemd_driver.hpp"

#include "build_config.h"
#include "oci/state.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/network/shim_launch.hpp"

#include <unistd.h>

namespace ocirun {

namespace {

Result<oci::Hook> helper(bool user, std::vector<std::string> args) {
    std::string path = systemd_helper_path();
    if (::access(path.c_str(), X_OK) < 0)
        return fail_errno("--systemd-cgroup: the systemd helper " + path);
    if (user) args.insert(args.begin(), "--user");
    args.insert(args.begin(), "oci-run-systemd");
    oci::Hook h = helper_program(path, std::move(args));
    // Where the user's bus is: the caller's session says (as for runc).
    if (user)
        for (const char *var : {"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"})
            if (const char *v = std::getenv(var)) h.env.push_back(std::string(var) + "=" + v);
    return h;
}

// The one line the helper prints (an error with its last line when it
// fails).
Result<std::string> helper_line(bool user, std::vector<std::string> args, const std::string &what) {
    oci::Hook h = OCI_TRY(helper(user, std::move(args)));
    ProgramRun ran = OCI_TRY(run_program_status(h, what, {}));
    std::string out = ran.output;
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    if (ran.status != 0) return fail(what + ": " + out.substr(out.rfind('\n') + 1));
    if (out.find('\n') != std::string::npos) return fail(what + ": more than one line");
    return out;
}

Status run_helper(const char *verb, const SystemdScope &scope, const std::string &input) {
    oci::Hook h = OCI_TRY(helper(scope.user, {verb, scope.unit, scope_description(scope.id)}));
    return run_program(h, std::string(scope.user ? "systemd (user): " : "systemd: ") + scope.unit,
                       input);
}

} // namespace

Result<std::vector<UnitProperty>> resource_properties(const oci::Resources &r,
                                                      const CgroupHost &host) {
    auto devices = oci::read_file("/proc/devices");
    return systemd_properties(r, host, devices.value_or(""));
}

Result<std::string> user_manager_cgroup() {
    const std::string what = "--systemd-cgroup: the user's systemd manager's cgroup";
    auto line = helper_line(true, {"root"}, what);
    if (!line) return line;
    const std::string &out = *line;
    if (out.empty() || out[0] != '/' || out.find("/../") != std::string::npos ||
        out.ends_with("/.."))
        return fail(what + ": not a cgroup path: \"" + out + "\"");
    return out == "/" ? std::string() : out;
}

Result<std::string> scope_result(const SystemdScope &scope) {
    return helper_line(scope.user, {"result", scope.unit, scope_description(scope.id)},
                       "systemd: the Result of " + scope.unit);
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

Status attach_to_scope(const SystemdScope &scope, pid_t pid) {
    return run_helper("attach", scope, systemd_request({}, pid));
}

} // namespace ocirun
