// What a command left behind on the host: entries under its --root, the
// container's cgroup at the default path in any hierarchy, processes it
// orphaned, mounts, and runtime files in /tmp. The bad-input suites assert
// that a refused command leaves none of these.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace test {

// Make this test process the reaper of every process its children orphan, so
// a daemon that oci-run leaves behind becomes our child and can be found
// (and killed) by leftover_children().
void become_subreaper();

// This test process in a mount namespace of its own (once; mounts private
// from then on): the mount count then changes only through what this test
// and its oci-run runs do, not through tests running beside it, and what the
// test mounts is gone with it.
void private_mount_namespace();

// Our children still alive (zombies are reaped on the way).
std::vector<pid_t> leftover_children();

// Every directory the default cgroupsPath (oci-run/<id>) can land in that
// exists: under each hierarchy, relative to our cgroup or (v2) its parent.
std::vector<std::string> default_cgroups_of(const std::string &id);

// Entries of /tmp that oci-run could have made: oci-run-UID (the default
// --root without XDG_RUNTIME_DIR) and .tmp-* (write_file_atomic).
std::vector<std::string> runtime_tmp_entries();

// What is on the host before a command, to compare with after it: the IDs
// of the mounts this process sees (others may mount and unmount beside the
// test: only a new mount that names the test's own paths counts) and the
// runtime's files in /tmp.
struct HostSnapshot {
    std::vector<std::string> mount_ids; // sorted
    std::vector<std::string> tmp;
};
HostSnapshot snapshot_host();

// "" when nothing is left, else one line per leftover: `root` not empty
// (entries other than `keep`), a cgroup for `id` (not checked when
// `keep_pid`, the live container's init, is given), an orphaned process other
// than `keep_pid` (killed with SIGKILL and reaped here, since it is ours), a
// mount added since `before` whose line names `root` or `id`, a
// new runtime file in /tmp.
std::string left_behind(const HostSnapshot &before, const std::string &root, const std::string &id,
                        const std::vector<std::string> &keep = {}, pid_t keep_pid = -1);

} // namespace test
