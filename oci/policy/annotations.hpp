// The sandbox policy a bundle carries in its annotations (dev.ocirun.*), as
// data: parsed and checked before anything is created. Every key is known,
// every value checked; a key whose enforcement has not landed yet is refused
// with "not implemented yet" rather than ignored (fail closed). The runtime
// turns the paths into operations of its mount plan and the network need
// into the helper's configuration (oci/policy/helper_config.hpp); the model
// itself makes no system call.
#pragma once

#include "oci/error.hpp"
#include "oci/policy/network_policy.hpp"
#include "oci/spec.hpp"

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
    // Rules on files (masks or protected paths): they need the host's disks
    // closed.
    bool file_rules() const { return masks() || !protected_paths.empty(); }
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

} // namespace ocirun
