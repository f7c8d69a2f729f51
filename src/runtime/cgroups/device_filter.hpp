// Device rules on cgroup v2: an eBPF program (BPF_PROG_TYPE_CGROUP_DEVICE)
// attached to the container's cgroup, with the v1 semantics runc keeps: the
// rules in config.json order, then the runtime's defaults, the last rule that
// matches a request decides, and a request no rule matches is allowed (as a
// fresh v1 devices cgroup). An allow rule matches when it grants every access
// asked for; a deny rule when it names any of them.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"

#include <linux/bpf.h>

#include <vector>

namespace ocirun {

// The program's instructions (pure; unit tested by running them through a
// small interpreter).
std::vector<struct bpf_insn> device_program(const std::vector<oci::DeviceRule> &rules);

// Load the program and attach it to the cgroup directory `cgroup_dir`; with
// `replace`, the device programs attached there before are detached after
// it (update: for a moment both hold, never neither).
Status attach_device_program(const std::vector<oci::DeviceRule> &rules,
                             const std::string &cgroup_dir, bool replace = false);

} // namespace ocirun
