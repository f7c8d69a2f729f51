// linux.resources -> the cgroup files to write, for the hierarchies this host
// has (v1, v2 or hybrid). Pure: no file is touched, so the mapping is unit
// tested on any machine. A resource the host cannot apply is an error naming
// the field and the reason; unset fields produce nothing.
#pragma once

#include "cgroup_host.hpp"
#include "oci/spec.hpp"

#include <string>
#include <vector>

namespace ocirun {

struct CgroupWrite {
    std::string controller; // selects the hierarchy: v1 controller, or "" for the v2 one
    std::string file;       // relative to the container's cgroup directory
    std::string value;
    std::string field;      // the config.json field, for errors
    std::string alt_file;   // written instead when `file` does not exist (BFQ weights)
    bool swap_pair = false; // v1 memory limit followed by memsw: if EINVAL, write memsw first
    // file == kDeviceProgram: attach these rules as the v2 eBPF device program
    std::vector<oci::DeviceRule> device_rules;
};

// The pseudo file of the v2 device program (runtime/device_filter.hpp).
inline constexpr const char *kDeviceProgram = "<eBPF device program>";

// linux.devices adds nodes, not rules: a device resources.devices denies
// stays denied (as runc).
Result<std::vector<CgroupWrite>> plan_resources(const oci::Resources &r, const CgroupHost &host);

// Whether `r` sets cpu.cpus or cpu.mems (the container then needs a cpuset
// cgroup of its own: runtime/cgroup.hpp v1_cpuset_only).
bool sets_cpuset(const std::optional<oci::Resources> &r);

// The hierarchy a write goes to, or nullptr.
const Hierarchy *hierarchy_for(const CgroupWrite &w, const CgroupHost &host);

// runc's conversions for v2 (cpu shares -> weight, blkio weight -> io weight).
uint64_t cpu_shares_to_weight(uint64_t shares);
uint64_t blkio_weight_to_io_weight(uint64_t weight);

} // namespace ocirun
