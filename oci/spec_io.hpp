// Reading, validating and writing config.json.
#pragma once

#include "error.hpp"
#include "spec.hpp"

#include <string>
#include <string_view>

namespace ocirun::json {
class Writer;
}

namespace ocirun::oci {

// Parse config.json text into a Spec: JSON syntax, types, required fields,
// ranges and enumerations. Unknown keys are ignored, as the spec requires.
// Errors name the JSON path: "linux.namespaces[2].type: unknown namespace \"pidd\"".
Result<Spec> parse_spec(std::string_view text);
Result<Spec> parse_spec(const std::string &text); // the same, the text not copied

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
// The same into `w` (written out from w.view(), without a copy).
void write_spec(json::Writer &w, const Spec &spec);

// The default configuration `oci-run spec` writes (runc's default shape).
Spec default_spec(bool rootless, uint32_t euid, uint32_t egid);

// A CPU list as cpuset and process.execCPUAffinity write it ("0-3,7"), each
// CPU below kMaxCpus; "" is the empty list. An empty item ("0,,2", a
// trailing comma) is refused, or with EmptyItems::skip left out (as runc's
// systemd driver reads resources.cpu.cpus and mems).
inline constexpr unsigned kMaxCpus = 8192;
enum class EmptyItems { refuse, skip };
Result<std::vector<unsigned>> parse_cpu_list(std::string_view list,
                                             EmptyItems empty = EmptyItems::refuse);
// Such a list as the kernel takes it (sched_setaffinity's cpu_set_t,
// set_mempolicy's nodemask): words of bits, bit n of the mask for each n.
std::vector<unsigned long> bit_mask(const std::vector<unsigned> &bits);

// Whether a SemVer ociVersion is `major`.`minor` or later ("1.3.0-rc.1" is).
bool version_at_least(std::string_view version, unsigned major, unsigned minor);
// linux.resources.pids.limit 0 of a config older than runtime-spec 1.3
// means no limit, as that spec said: it becomes -1. parse_spec does it; a
// resources object parsed alone (update) gets the container's version.
void normalise_pids_limit(Resources &r, std::string_view oci_version);

// The runtime-spec version this runtime implements.
inline constexpr const char *kSpecVersion = "1.3.0";

} // namespace ocirun::oci
