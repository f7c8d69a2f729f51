// The runtime's side of the per-container network helper (oci-run-shim,
// shim/): finding it, starting it detached from the runtime with the sockets
// the container's init made, and stopping it on delete. The helper itself
// relays and filters; see shim/main.cpp.
#pragma once

#include "oci/error.hpp"
#include "oci/policy/network_policy.hpp"
#include "oci/spec.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace ocirun {

// A helper program of the runtime: next to this binary (the same directory,
// ../shim/ in the build tree, ../libexec/oci-run/ of a prefix), else
// `installed` (the configured $libexecdir/oci-run/NAME).
std::string helper_path(const std::string &name, const char *installed);
// A run of helper program `path` with `args` (argv[0] first) as
// run_program takes it: a 30 s timeout, and the sanitizer options of a
// sanitized build passed on, so its reports go where the runner reads.
oci::Hook helper_program(std::string path, std::vector<std::string> args);
// $OCI_RUN_SHIM, else helper_path("oci-run-shim").
std::string shim_path();

struct ShimLaunch {
    std::string id;
    std::string state_dir; // egress.jsonl and shim.log go here
    pid_t init = 0;        // the helper exits when this process does
    // Made by the init, in NetworkPolicy::listen_ports() order, then the DNS
    // stub's UDP socket when there is one.
    std::vector<int> listeners;
    int netns_fd = -1; // the container's netns, for published ports
    const NetworkPolicy *net = nullptr;
    // Where it runs (the caller's place_in_helper_cgroup: the helpers'
    // cgroup below the container's, so everything it allocates is charged to
    // the container): born in `born_in` (v2), entering `cgroups` first.
    std::vector<std::string> cgroups;
    std::string born_in;
};

struct ShimProcess {
    pid_t pid = 0;
    uint64_t start_time = 0;
};

// Start the helper in its own session, reparented away from the runtime (its
// parent exits), and wait until it says it listens, or why it cannot.
Result<ShimProcess> spawn_shim(const ShimLaunch &launch);

// SIGTERM (the helper closes its connections and logs them), then SIGKILL if
// it is still there after a moment; a helper already gone is fine.
// Only the helper create started for container `id` with `state_dir` (its
// command line says so: the PID comes from the state directory), and only
// while it is the process that started at `start_time`.
void stop_shim(pid_t pid, uint64_t start_time, const std::string &id, const std::string &state_dir);

// The egress log in a container's state directory (JSON lines).
inline constexpr const char *kEgressLog = "egress.jsonl";

} // namespace ocirun
