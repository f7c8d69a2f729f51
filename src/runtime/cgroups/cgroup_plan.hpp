// linux.resources -> the cgroup files to write, for the hierarchies this host
// has (v1, v2 or hybrid). Pure: no file is touched, so the mapping is unit
// tested on any machine. A resource the host cannot apply is an error naming
// the field and the reason; unset fields produce nothing.
#pragma once

#include "oci/spec.hpp"
#include "runtime/cgroups/cgroup_host.hpp"

#include <string>
#include <vector>

namespace ocirun {

struct CgroupWrite {
    std::string controller; // selects the hierarchy: v1 controller, or "" for the v2 one
    std::string file;       // relative to the container's cgroup directory
    std::string value;
    std::string field;    // the config.json field, for errors
    std::string alt_file; // written instead when `file` does not exist (BFQ weights)
    // EINVAL: write the next one first, then this again. The v1 pairs whose
    // order depends on the current values: the memory limit before memsw
    // (raising it above memory+swap), the CFS period before the quota (a
    // shorter period with the old quota may exceed the parent's limit).
    bool retry_after_next = false;
    // file == kDeviceProgram: attach these rules as the v2 eBPF device program
    std::vector<oci::DeviceRule> device_rules;
    bool replace_programs = false; // and detach the ones attached before (update)
};

// The pseudo file of the v2 device program (runtime/cgroups/device_filter.hpp).
inline constexpr const char *kDeviceProgram = "<eBPF device program>";

// linux.devices adds nodes, not rules: a device resources.devices denies
// stays denied (as runc).
Result<std::vector<CgroupWrite>> plan_resources(const oci::Resources &r, const CgroupHost &host);

// update's device rules, from `current` (what create applied) to `target`:
// on v2 a new program that replaces the old (attached first, then the old
// detached: for a moment both hold, never neither); on v1, where both lists
// start by denying everything and then only allow (the shape clients send),
// the new entries are allowed first and the dropped ones denied after, so
// a device in both stays usable throughout; any other shape is written
// whole, deny-all first, as create does.
Result<std::vector<CgroupWrite>> plan_device_update(const std::vector<oci::DeviceRule> &current,
                                                    const std::vector<oci::DeviceRule> &target,
                                                    const CgroupHost &host);

// The device rules a container's cgroup holds for resources.devices
// `spec_rules` (not empty): them, then the devices every container may use
// (as runc: mknod of any node, the standard character devices, ptys,
// /dev/net/tun).
std::vector<oci::DeviceRule> effective_device_rules(const std::vector<oci::DeviceRule> &spec_rules);

// Whether `r` sets cpu.cpus or cpu.mems (the container then needs a cpuset
// cgroup of its own: runtime/cgroups/cgroup.hpp v1_cpuset_only).
bool sets_cpuset(const std::optional<oci::Resources> &r);

// pids.max for a (runtime-spec 1.3) pids.limit: "max" below 0, else the
// number (0 included).
std::string pids_max_value(int64_t limit);

// The hierarchy a write goes to, or nullptr.
const Hierarchy *hierarchy_for(const CgroupWrite &w, const CgroupHost &host);

// runc's conversions for v2 (cpu shares -> weight, blkio weight -> io weight).
uint64_t cpu_shares_to_weight(uint64_t shares);
uint64_t blkio_weight_to_io_weight(uint64_t weight);

} // namespace ocirun
