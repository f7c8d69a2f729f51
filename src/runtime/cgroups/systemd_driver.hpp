// The systemd cgroup driver's calls (--systemd-cgroup): each runs
// oci-run-systemd (shim/systemd.cpp, found next to this binary), which talks
// to systemd over D-Bus. Errors name the unit and the D-Bus error.
#pragma once

#include "oci/error.hpp"
#include "runtime/cgroups/systemd_unit.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace ocirun {

// The helper program: helper_path("oci-run-systemd").
std::string systemd_helper_path();

// systemd_properties for `r` on this host (its /proc/devices read here).
Result<std::vector<UnitProperty>> resource_properties(const oci::Resources &r,
                                                      const CgroupHost &host);

// The cgroup a user's manager keeps its units below (the helper's root
// verb), for SystemdScope::cgroup: "/user.slice/user-1000.slice/
// user@1000.service".
Result<std::string> user_manager_cgroup();

// StartTransientUnit of `scope` holding `pid`, with `props`; returns once
// systemd's job is done.
Status start_scope(const SystemdScope &scope, const std::vector<UnitProperty> &props, pid_t pid);
// SetUnitProperties (update). Like stop_scope, only on a unit that has the
// container's description (scope_description): the name comes from the
// state file.
Status set_scope_properties(const SystemdScope &scope, const std::vector<UnitProperty> &props);
// An error unless the scope's unit is not loaded or has the container's
// description (before delete kills what its cgroup holds).
Status check_scope_owner(const SystemdScope &scope);
// StopUnit, waiting for it (delete); a unit already gone is stopped.
Status stop_scope(const SystemdScope &scope);
// The unit's Result as systemd keeps it once the unit has stopped
// ("oom-kill" when the kernel's OOM killer ended it), "" when the unit is
// not loaded; only on a unit with the container's description.
Result<std::string> scope_result(const SystemdScope &scope);
// AttachProcessesToUnit (exec, where the runtime may not move the process
// itself: a user's manager, which asks the system's where it may not
// either), on a unit with the container's description.
Status attach_to_scope(const SystemdScope &scope, pid_t pid);

} // namespace ocirun
