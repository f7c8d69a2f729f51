// The runtime's side of the sandbox policy (the model and its parser are
// oci/policy/annotations.hpp): the sandbox guard it loads, what the host
// offers, and what it cannot enforce for a configuration. The paths become
// operations of the mount plan (runtime/filesystem/mount_plan.hpp).
#pragma once

#include "oci/error.hpp"
#include "oci/policy/annotations.hpp"
#include "oci/policy/runtime_config.hpp"
#include "oci/spec.hpp"
#include "runtime/security/seccomp.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ocirun {

// dev.ocirun.protected is checked with the runtime's state directory, on
// what each mount reaches of the host (runtime/filesystem/host_reach.hpp).

// The sandbox-guard profile (seccomp-profiles/sandbox-guard.json, compiled
// in), for every container with a policy and every process exec'd into it,
// with the socket-family rules of its network need (socket_families).
Result<SeccompFilter> compile_sandbox_guard(const std::vector<std::string> &caps,
                                            const NetworkPolicy &net);

// What this build cannot enforce for the policy on this configuration: with
// dev.ocirun.enforcement strict (the default) every gap is listed in one
// error; with report each is logged as a warning and the container runs.

// What the host offers that a policy may need, found once (tests pass a fake).
struct HostFacts {
    bool strace = false;        // /usr/bin/strace, for dev.ocirun.trace
    bool mount_setattr = false; // the new mount API (kernel 5.12+), for masks and locking
    bool shim = false;          // the network helper (oci-run-shim), for forwards and the proxy
    bool privileged = false;    // euid 0: the helper can open sockets in the container's netns
    bool firewall = false;      // oci-run-firewall, for a network need in a joined netns
    // The character majors that reach disks or memory raw (device_reach.hpp),
    // from /proc/devices; none when it could not be read (`devices_unread`
    // says why), and then the rules on files cannot be checked.
    std::optional<std::vector<int64_t>> raw_char_majors;
    std::string devices_unread;
    // The container has a devices cgroup holding linux.resources.devices
    // (set by create: not with --cgroup-manager disabled; by report: the
    // record has cgroups).
    bool devices_cgroup = true;
};
HostFacts detect_host_facts();

// A policy needs a PID namespace other than the host's (new, or joined by
// path): in the host's, /proc/PID/root of host processes reaches the host's
// files whatever the mount namespace. Refused in both enforcement modes.
Status check_policy_pid_namespace(const SandboxPolicy &policy, const oci::Spec &spec);

// What the policy needs that the host or the configuration does not give:
// refused in strict mode, a warning in report mode. A network need in a
// network namespace joined by path is held by that namespace's firewall,
// which a process with CAP_NET_ADMIN there could change (its traffic
// control too): the bounding set must not hold it.
Status check_policy_gaps(const SandboxPolicy &policy, const oci::Spec &spec, const HostFacts &host);

// What leaves the host's disks open to the container, which the rules on
// files need closed (one of check_policy_gaps' gaps, and what `report`
// says of those rules), or "".
std::string disks_open(const oci::Spec &spec, const HostFacts &host);

// The same for the mounts of an unprivileged runtime, whose container opens
// device nodes with the user's permissions (no devices cgroup), under the
// rules on files, in one pass over the plan: a bind whose source (as
// opened, MountOp::source_fd) is a block device, or a character device
// reaching disks or memory raw, is a gap (check_policy_gaps' way: refused
// in strict mode); the rootfs and every bind whose source is not itself a
// device node are mounted nodev, recursively (rnodev; the sandbox guard
// forbids remounting), and rprivate (what the host mounts below them later
// does not come in): a node inside a bound directory or in the rootfs,
// made by the host's root, does not open. The device binds of
// linux.devices and /dev's defaults come after, as mounts of their own.
struct MountOp;
Status close_device_nodes(const SandboxPolicy &policy, std::vector<MountOp> &plan,
                          const HostFacts &host);

// The operator's runtime configuration (oci/policy/runtime_config.hpp) for
// the name this process was run as: set once from argv[0], read on first
// use. A file that is there but unreadable or malformed is an error for
// every command that needs it.
void set_runtime_name(const char *argv0);
Result<const RuntimeConfig *> runtime_config();

struct ContainerRecord;
// The sandbox policy a created container runs under: its annotations', with
// the network keys its pod holds it to (ContainerRecord::network_keys) in
// place of its own network keys.
Result<SandboxPolicy> container_policy(const ContainerRecord &rec, const oci::Spec &spec);

} // namespace ocirun
