// `report`: what a running container is held to, measured: from outside
// where that shows it (its init's /proc/PID status, limits and namespaces,
// its cgroup, the helper), and each filesystem rule from inside the
// container's namespaces, through every way to its object
// (runtime/filesystem/fs_probe.hpp). One row per dimension of one list of what the
// policy promises: the state (enforced, degraded, off), the mechanism, the
// source (measured or declared) and what was seen.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"
#include "oci/state.hpp"
#include "runtime/lifecycle/record.hpp"

#include <string>
#include <vector>

namespace ocirun {

struct ReportRow {
    std::string dimension, state, mechanism, source, detail;
};

Result<std::vector<ReportRow>> container_report(const std::string &root, const std::string &id);

class ContainerDir;
struct SandboxPolicy;
// The same, for a container whose directory the caller holds locked.
Result<std::vector<ReportRow>> measure_container(const ContainerDir &dir,
                                                 const ContainerRecord &rec);
// The same from its config.json as parsed (`policy`: container_policy);
// without `with_fs`, no row of the filesystem rules (start has just
// measured them: measure_fs_rules).
Result<std::vector<ReportRow>> measure_container(const ContainerDir &dir,
                                                 const ContainerRecord &rec, const oci::Spec &spec,
                                                 const SandboxPolicy &policy, bool with_fs);

// The rows of the sandbox policy's filesystem rules alone, each tried from
// inside the container's namespaces (runtime/filesystem/fs_probe.hpp).
Result<std::vector<ReportRow>> measure_fs_rules(const ContainerRecord &rec, const oci::Spec &spec,
                                                const SandboxPolicy &policy);

// Before create: what the bundle asks for and whether this host can give
// it (declared rows: enforced, off, or unsupported here).
Result<std::vector<ReportRow>> bundle_report(const std::string &bundle);

std::string report_table(const std::vector<ReportRow> &rows);
std::string report_json(const std::vector<ReportRow> &rows);

} // namespace ocirun
