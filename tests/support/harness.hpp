// Integration-test plumbing shared by the suites: a registry of what a test
// made (removed by cleanup_all, which the suites also run as .fini so a failed
// assertion leaves nothing behind, and which runs at the test process's exit
// so a test that skips itself does not either), oci-run runs with stdio on
// files and a time bound, and small text and directory helpers.
#pragma once

#include "process.hpp"

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace test {

// Containers (force-deleted), cgroup parents and temp directories (removed)
// made by a test; track, track_dir and the spawners below may be called from
// several threads.
void track(const std::string &root, const std::string &id);
std::string track_dir(const std::string &dir);
// A cgroup parent (leftovers.hpp cgroup_parent, which calls this): removed
// in every hierarchy after the containers, so a test that stops half-way
// (a failed assertion) leaves no empty parent behind.
void track_cgroup_parent(const std::string &parent);
void cleanup_all();

// oci-run with stdin on /dev/null and stdout/stderr on files (a `create`
// hands its stdio to the container's init, so a pipe would stay open as long
// as the container lives). `fd3` >= 0 is passed to the child as fd 3.
struct Spawned {
    pid_t pid = -1;
    std::string out_path, err_path;
};
Spawned spawn_oci(const std::vector<std::string> &args, int fd3 = -1);
// The same for any program: argv[0] is looked up in PATH.
Spawned spawn_files(const std::vector<std::string> &argv, int fd3 = -1);

// Exit status (128 + signal when killed), or -1 after `timeout_ms` (the child,
// ours, is then SIGKILLed and reaped).
int wait_bounded(pid_t pid, int timeout_ms);

struct FileRun {
    int status = -1;
    std::string out, err, out_path;
};
// spawn_oci + wait_bounded + the files read back.
FileRun oci_files(const std::vector<std::string> &args, int fd3 = -1, int timeout_ms = 10000);
// The same for any program (spawn_files + wait_bounded).
FileRun run_files(const std::vector<std::string> &argv, int fd3 = -1, int timeout_ms = 10000);

// Seconds elapsed since `t` on the steady clock (figures the suites print).
using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

bool contains(const std::string &hay, const std::string &needle);
size_t count_lines(const std::string &s);
// `s` as a skip message: its first line, double quotes made single
// (Criterion writes messages into its JSON report unescaped, and a newline
// or a quote there makes the report unreadable).
std::string skip_reason(const std::string &s);
// Entries of a directory, without . and ..; empty when it does not exist.
std::vector<std::string> dir_entries(const std::string &path);
// The IDs of the mounts this process sees now, sorted.
std::vector<std::string> mount_ids();
// The mountinfo lines of mounts present now and not in `before` that name
// one of `needles` (a test's own paths and IDs: others may mount and unmount
// beside it), one per line; "" when there are none.
std::string new_mounts(const std::vector<std::string> &before,
                       const std::vector<std::string> &needles);

} // namespace test
