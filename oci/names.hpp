// Name tables shared by the parser, the runtime and `features`: each maps the
// spelling used in config.json to the kernel's number.
#pragma once

#include "spec.hpp"

#include <optional>
#include <span>
#include <string_view>

namespace ocirun::oci {

struct NamedValue {
    const char *name;
    int value;
};

std::span<const NamedValue> capability_names(); // CAP_CHOWN = 0 ... CAP_CHECKPOINT_RESTORE = 40
std::span<const NamedValue> rlimit_names();     // RLIMIT_CPU ...
std::span<const NamedValue> signal_names();     // SIGHUP ... (without RT signals)

std::optional<int> capability_from_name(std::string_view name);
std::optional<int> rlimit_from_name(std::string_view name);
// Accepts "TERM", "SIGTERM", "15", "sigterm", "RTMIN+2".
std::optional<int> signal_from_name(std::string_view name);

std::optional<NsType> ns_type_from_name(std::string_view name);

// Enumerations from the runtime-spec whose values are plain strings.
bool is_rootfs_propagation(std::string_view s);
bool is_seccomp_action(std::string_view s);
bool is_seccomp_operator(std::string_view s);
bool is_seccomp_arch(std::string_view s);
bool is_seccomp_flag(std::string_view s);
bool is_personality_domain(std::string_view s);
bool is_personality_flag(std::string_view s);
bool is_io_priority_class(std::string_view s);
bool is_scheduler_policy(std::string_view s);
bool is_scheduler_flag(std::string_view s);

std::span<const char *const> seccomp_actions();
std::span<const char *const> seccomp_operators();
std::span<const char *const> seccomp_archs();
std::span<const char *const> seccomp_flags();
bool is_memory_policy_mode(std::string_view s);
bool is_memory_policy_flag(std::string_view s);
std::span<const char *const> memory_policy_modes();
std::span<const char *const> memory_policy_flags();

} // namespace ocirun::oci
