// The systemd cgroup driver's pure half (--systemd-cgroup): the scope a
// cgroupsPath of runc's form "slice:prefix:name" names, where systemd puts
// its cgroup, and linux.resources as the unit properties systemd manages (as
// runc sets them). The other half, oci-run-systemd (shim/systemd.cpp), sends
// them to systemd over D-Bus; what systemd does not manage is written to the
// scope's cgroup files as without systemd (runtime/cgroups/cgroup_plan.hpp).
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"
#include "runtime/cgroups/cgroup_host.hpp"

#include <string>
#include <vector>

namespace ocirun {

struct SystemdScope {
    std::string id;    // the container's
    std::string slice; // "system.slice"; "-.slice": the root slice
    std::string unit;  // "prefix-name.scope"
    // The scope's cgroup in every hierarchy systemd manages, below the
    // manager's own: "/system.slice/prefix-name.scope" (a slice "a-b.slice"
    // is below "a.slice", as systemd nests them). A user's manager's units
    // are below its service's cgroup ("/user.slice/user-1000.slice/
    // user@1000.service"), which the caller puts in front once it knows it.
    std::string cgroup;
    // The caller's user manager (an unprivileged runtime, as runc), not the
    // system's.
    bool user = false;
};

// linux.cgroupsPath under --systemd-cgroup: "slice:prefix:name" (an empty
// slice is system.slice, or user.slice in a user's manager; an empty path
// is SLICE:oci-run:ID). The scope is "prefix-name.scope" ("name.scope"
// without a prefix). Errors name linux.cgroupsPath: not three fields, a
// slice not ending in ".slice" or not a valid slice name, a name ending in
// ".slice" (a slice of its own, which oci-run does not make), characters
// systemd refuses in a unit name.
Result<SystemdScope> systemd_scope(const std::string &cgroups_path, const std::string &id,
                                   bool user = false);

// The cgroup path of a slice: "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice",
// "-.slice" -> "". Refused: a name systemd would refuse ("-a.slice",
// "a--b.slice", "a-.slice", not ending in ".slice").
Result<std::string> slice_cgroup(const std::string &slice);

// One unit property as oci-run-systemd sends it: D-Bus signature `type`
// ("t", "b", "s", "ay" or "a(ss)") and its value: t as a decimal string, b
// as "true"/"false", s as is, ay in `bytes`, a(ss) in `pairs`.
struct UnitProperty {
    std::string name, type, value;
    std::vector<uint8_t> bytes;
    std::vector<std::pair<std::string, std::string>> pairs;
};

// The properties for `r` on `host` (v2 names where the controller is on the
// unified hierarchy, v1 names where it is on a v1 one): MemoryMax,
// MemoryLow, MemorySwapMax / MemoryLimit; CPUWeight / CPUShares;
// CPUQuotaPerSecUSec (rounded up to 10 ms, as systemd keeps it) and
// CPUQuotaPeriodUSec; TasksMax; AllowedCPUs and AllowedMemoryNodes (v2);
// IOWeight / BlockIOWeight; DevicePolicy and DeviceAllow. `/proc/devices`
// text maps a wildcard minor to the driver's name (DeviceAllow takes
// "char-NAME"). Errors name the field.
Result<std::vector<UnitProperty>>
systemd_properties(const oci::Resources &r, const CgroupHost &host, std::string_view proc_devices);

// The Description a container's scope is started with ("oci-run container
// ID"): update and delete act on a unit only when it has it.
std::string scope_description(const std::string &id);

// What a transient scope is started with besides its resources: Slice,
// Description, Delegate=yes (the container's runtime writes below it), the
// accounting that makes its controllers exist, and no default dependencies.
std::vector<UnitProperty> scope_properties(const SystemdScope &s, const std::string &id);

// The document oci-run-systemd reads on stdin: {"pid": N (0: none),
// "properties": [{"name", "type", "value" | "bytes" | "pairs"}]}.
std::string systemd_request(const std::vector<UnitProperty> &props, int pid);

} // namespace ocirun
