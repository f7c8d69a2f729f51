// The runtime-spec state (what `oci-run state` prints and hooks read on
// stdin), and the file I/O of the runtime's state directory. The record
// oci-run keeps per container is the runtime's (src/runtime/lifecycle/record.hpp).
#pragma once

#include "error.hpp"
#include "spec.hpp"

#include <ctime>
#include <string>

#include <yajl/yajl_tree.h>

namespace ocirun::json {
class Writer;
struct Path;
} // namespace ocirun::json

namespace ocirun::oci {

enum class ContainerStatus { creating, created, running, stopped, paused };

const char *status_name(ContainerStatus s);

// runtime-spec state.md
struct State {
    std::string oci_version;
    std::string id;
    ContainerStatus status = ContainerStatus::creating;
    int pid = 0; // 0 when there is no process (stopped)
    std::string bundle;
    StringMap annotations;
};

// The OCI state document (runtime-spec state schema).
std::string write_state(const State &st, bool pretty = false);
// The state's members, into an object the caller has begun (for documents
// that embed the state, such as the seccomp listener's message).
void write_state_members(json::Writer &w, const State &st);
// The state's members from an object (`p` its path in errors), for documents
// that embed the state.
Status parse_state_members(yajl_val obj, const json::Path &p, State &st);
Result<State> parse_state(std::string_view text);

// Read a whole file; `flags` are added to O_RDONLY | O_CLOEXEC (O_NOFOLLOW, ...).
// Errors keep the errno (ENOENT for a missing file) and name the path. More
// than `limit` bytes (a pipe or a device that never ends, say) is an error
// (EFBIG), found while reading, never after reading it all.
Result<std::string> read_file(const std::string &path, int flags = 0,
                              size_t limit = static_cast<size_t>(-1));
// The same from an open `fd`, to its end (`path` names it in errors).
Result<std::string> read_fd(int fd, const std::string &path,
                            size_t limit = static_cast<size_t>(-1));

// The current time as RFC 3339 UTC with nanoseconds ("2026-01-02T03:04:05.123456789Z").
std::string rfc3339_now();

// `ts` (CLOCK_REALTIME) the same way.
std::string rfc3339(const struct timespec &ts);

// Write `path` atomically: a temp file in the same directory, then rename.
// A reader sees the old or the new content, never a mix. No fsync: what these
// files describe (processes, cgroups, mounts) does not outlive a reboot, and
// each fsync cost a disk flush on `create`'s critical path.
Status write_file_atomic(const std::string &path, std::string_view content, int mode = 0600);

// The first half of write_file_atomic: the new content in a temp file beside
// `path`, not yet in place. commit() renames it over `path`, which needs no
// room on the filesystem; otherwise the destructor removes it. For a change
// that must be recorded if it is made: stage the record, make the change,
// commit (update on a full --root fails before touching the cgroup).
class StagedFile {
  public:
    StagedFile(std::string path, std::string tmp) : path_(std::move(path)), tmp_(std::move(tmp)) {}
    StagedFile(StagedFile &&o) noexcept : path_(std::move(o.path_)), tmp_(std::move(o.tmp_)) {
        o.tmp_.clear();
    }
    StagedFile(const StagedFile &) = delete;
    StagedFile &operator=(const StagedFile &) = delete;
    ~StagedFile();
    Status commit();

  private:
    std::string path_, tmp_;
};
Result<StagedFile> stage_file(const std::string &path, std::string_view content, int mode = 0600);

} // namespace ocirun::oci
