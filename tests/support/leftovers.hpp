// What a test may leave on the host, found from outside: the cgroups under a
// parent of the test's own (given to its containers as linux.cgroupsPath), the
// processes whose command line carries the test's marker, and the mounts that
// name its directories. Used by the suites that push many containers or a
// container's limits, and check that nothing is lost.
#pragma once

#include <string>
#include <vector>

namespace test {

// A cgroup parent for this test process ("/oci-run-test-PID-TAG"): give the
// containers `cgroup_parent(tag) + "/" + id` as linux.cgroupsPath. Tracked:
// cleanup_all removes it.
std::string cgroup_parent(const char *tag);
// The container's directory under `parent`, in every hierarchy of this host.
std::vector<std::string> cgroup_dirs(const std::string &parent, const std::string &id);
// Subdirectories of `parent`, in every hierarchy.
std::vector<std::string> cgroup_children(const std::string &parent);
// rmdir of `parent` in every hierarchy; what could not be removed (something
// left below it) is returned, "" when all went.
std::string remove_cgroup_parent(const std::string &parent);

// PIDs whose command line contains `marker`.
std::vector<long> processes_with(const std::string &marker);

// Lines of this process's mountinfo that contain `path`.
std::vector<std::string> mounts_naming(const std::string &path);

} // namespace test
