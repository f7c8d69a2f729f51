// The sandbox policy a bundle carries in its annotations (dev.ocirun.*):
// parsed and checked before anything is created. Every key is known, every
// value checked; a key whose enforcement has not landed yet is refused with
// "not implemented yet" rather than ignored (fail closed). The paths become
// operations of the mount plan (runtime/mount_plan.hpp).
#pragma once

#include "network_policy.hpp"
#include "oci/error.hpp"
#include "oci/spec.hpp"
#include "seccomp.hpp"

#include <span>
#include <string>
#include <vector>

namespace ocirun {

struct SandboxPolicy {
    bool present = false;                     // some dev.ocirun.* key is set
    std::vector<std::string> deny;            // hidden for read and write
    std::vector<std::string> deny_write;      // read-only, recursively
    std::vector<std::string> deny_rename;     // pinned: a mount point onto itself
    std::vector<std::string> protected_paths; // host paths no writable mount may reach
    bool strict = true;                       // dev.ocirun.enforcement: strict | report
    bool trace = false;                       // dev.ocirun.trace: the process runs under strace
    NetworkPolicy net;                        // dev.ocirun.network and the keys that go with it

    // Paths to hide, make read-only or pin: the init then locks its mounts.
    bool masks() const { return !deny.empty() || !deny_write.empty() || !deny_rename.empty(); }
};

inline constexpr const char *kAnnotationPrefix = "dev.ocirun.";
// Shown by `state` (the runtime adds it): the strace log's path.
inline constexpr const char *kTraceLogAnnotation = "dev.ocirun.trace-log";

// Who may set a key: the bundle's author, or only the runtime (in its own
// state; such a key in config.json is refused).
enum class PolicyKeySetter { bundle, runtime };
// One dev.ocirun.* key: its name after the prefix, who may set it, and the
// parser of its value (null for a key only the runtime sets).
struct PolicyKey {
    const char *name;
    PolicyKeySetter set_by;
    Status (*parse)(SandboxPolicy &, const std::string &key, const std::string &value);
};
// Every key the runtime knows: the one table parse_sandbox_policy reads.
std::span<const PolicyKey> policy_keys();
// Paths one of deny, deny-write, deny-rename or protected may list: each is
// a mount or a check in the container, and the policy checks compare them
// with every mount (a 16 MiB config could otherwise hold millions).
inline constexpr size_t kMaxPolicyPaths = 1024;

// The policy of a bundle's annotations: every dev.ocirun.* key from the
// table, each value checked; an unknown key or one only the runtime sets is
// refused, naming it.
Result<SandboxPolicy> parse_sandbox_policy(const oci::StringMap &annotations);

// dev.ocirun.protected is checked with the runtime's state directory, on
// what each mount reaches of the host (runtime/host_reach.hpp).

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
};
HostFacts detect_host_facts();

// A policy needs a PID namespace other than the host's (new, or joined by
// path): in the host's, /proc/PID/root of host processes reaches the host's
// files whatever the mount namespace. Refused in both enforcement modes.
Status check_policy_pid_namespace(const SandboxPolicy &policy, const oci::Spec &spec);

Status check_policy_gaps(const SandboxPolicy &policy, const oci::Spec &spec, const HostFacts &host);

} // namespace ocirun
