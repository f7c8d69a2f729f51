// Reading, validating and writing config.json.
#pragma once

#include "error.hpp"
#include "spec.hpp"

#include <string>
#include <string_view>

namespace ocirun::oci {

// Parse config.json text into a Spec: JSON syntax, types, required fields,
// ranges and enumerations. Unknown keys are ignored, as the spec requires.
// Errors name the JSON path: "linux.namespaces[2].type: unknown namespace \"pidd\"".
Result<Spec> parse_spec(std::string_view text);

// Parse a process.json (the "process" object alone), as `exec --process` takes.
Result<Process> parse_process(std::string_view text);

// Parse a linux.resources object alone, as `update --resources` takes.
Result<Resources> parse_resources(std::string_view text);

// Checks across fields that a single-field parse cannot see: duplicate
// namespaces and rlimits, absolute paths, id mappings versus the user
// namespace, time offsets versus the time namespace, and the fields a Linux
// container needs (root, process). Run before anything is created.
Status validate_spec(const Spec &spec);

// parse_spec + validate_spec on `<bundle>/config.json`, refusing a config
// that is not a regular file (FIFO, device: never opened for reading), that
// is a symlink leading out of the bundle, or that is larger than
// kMaxConfigSize (checked before reading). Errors start with "config.json: ".
Result<Spec> load_bundle_spec(const std::string &bundle);

inline constexpr size_t kMaxConfigSize = 16u << 20;

// Serialise a Spec (pretty with tabs, like runc spec).
std::string write_spec(const Spec &spec, bool pretty = true);

// The default configuration `oci-run spec` writes (runc's default shape).
Spec default_spec(bool rootless, uint32_t euid, uint32_t egid);

// The runtime-spec version this runtime implements.
inline constexpr const char *kSpecVersion = "1.2.1";

} // namespace ocirun::oci
