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

// StartTransientUnit of `scope` holding `pid`, with `props`; returns once
// systemd's job is done.
Status start_scope(const SystemdScope &scope, const std::vector<UnitProperty> &props, pid_t pid);
// SetUnitProperties (update).
Status set_scope_properties(const SystemdScope &scope, const std::vector<UnitProperty> &props);
// StopUnit, waiting for it (delete); a unit already gone is stopped.
Status stop_scope(const SystemdScope &scope);

} // namespace ocirun
