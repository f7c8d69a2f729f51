// Process identity: a PID plus its start time, so that a reused PID is never
// mistaken for the container's process.
#pragma once

#include "oci/error.hpp"
#include "oci/fd.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ocirun {

// Field 22 of /proc/PID/stat (clock ticks since boot); 0 if the PID is gone.
uint64_t process_start_time(pid_t pid);

// True when `pid` exists, started at `start_time`, and has not begun to
// exit (a zombie, or a namespace's PID 1 waiting in its exit for the
// processes of its namespace to be reaped).
bool process_alive(pid_t pid, uint64_t start_time);

// /proc/PID opened as a directory when PID is still the process that started
// at `start_time` (ESRCH otherwise): what is opened below it afterwards is
// that process's, since the directory of a process gone fails every lookup
// and so a PID reused since cannot answer.
Result<Fd> open_process_dir(pid_t pid, uint64_t start_time);

// /proc/PID/ns/NAME opened (close-on-exec) as a handle for setns; errors
// name the path.
Result<Fd> open_namespace(pid_t pid, const char *name);

// Joining a PID namespace (setns CLONE_NEWPID) places the children made next,
// not the caller. enter() places them in `ns_fd` for one spawn; leave() puts
// this process's own namespace back, so hooks, the network helper and a
// sanitizer's exit-time helper are not born in the container's. leave() is a
// no-op when enter() was not called.
class ChildPidNamespace {
  public:
    Status enter(int ns_fd);
    Status leave();

  private:
    Fd own_;
};

// True while the process, below its open /proc/PID (`dirfd`), runs what it
// was forked with: it has not exec'd since (field 9 of /proc/PID/stat, the
// task's flags, holds PF_FORKNOEXEC; set by fork, cleared by exec, never set
// again). Readable by anyone who can see the process.
bool forked_not_execed(pid_t pid, int dirfd);

// State letter from /proc/PID/stat ('R', 'S', 'Z', ...), or 0 if gone.
char process_state(pid_t pid);

// Signal the process only if it is still the one that started at start_time,
// through a pidfd so the check and the kill refer to the same process.
Status signal_process(pid_t pid, uint64_t start_time, int sig);

// Wait until the process is gone (pidfd poll), up to timeout_ms.
bool wait_process_gone(pid_t pid, int timeout_ms);

// For children of this process: SIGKILL and reap.
void kill_and_reap(pid_t pid);
// Wait for a child of this process: its exit status, or 128 + signal.
Result<int> wait_exit_status(pid_t pid);
// Forward SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2 and SIGWINCH received by
// this process to `pid` (0 stops forwarding), as runc does in the foreground.
void forward_signals_to(pid_t pid);

// The value of line `key` ("Uid", "NSpid", ...) of a /proc/PID/status text,
// without the white space after the colon; "" when there is none.
std::string status_field(const std::string &status, const std::string &key);

// Whether `pid`'s namespace `name` ("pid", "user", ...) is this process's
// own; none when that cannot be told.
std::optional<bool> same_namespace(pid_t pid, const char *name);
// True when `init` is in a PID namespace other than this process's (known
// to be) and is its PID 1 (not one joined by path, another container's):
// only then do "the processes in its PID namespace" mean the container's.
bool has_own_pid_namespace(pid_t init);

// Send `sig` to every other process in `init`'s PID namespace (kill --all and
// delete without a cgroup to walk). Does nothing unless has_own_pid_namespace
// (the host's namespace, or another container's, is not the container's), nor
// unless `init` is still the process that started at `start_time` once its
// namespace was read (a PID read back from the state directory). SIGKILL
// goes to none of them: the caller sends it to `init`, and as PID 1 of the
// namespace exits the kernel kills the rest (without a walk of every
// process on the host, a quarter of the time of 100 deletes at once).
void signal_pidns_members(pid_t init, uint64_t start_time, int sig);

// The interfaces of `pid`'s network namespace from /proc/PID/net/dev: the
// name and its 16 counters (rx bytes, packets, errs, drop, ..., tx bytes at 8).
struct NetDevice {
    std::string name;
    uint64_t counters[16] = {};
};
std::vector<NetDevice> net_devices(pid_t pid);

// Write `value` to the existing file `path` in one write (kernel files:
// /proc, cgroups); errors start with `what`, and name the value too when
// `show_value` is set.
Status write_existing_file(const std::string &path, const std::string &value,
                           const std::string &what, bool show_value = false);

// Write `value` to /proc/PID/<file> in one write; errors start with `what`.
Status write_proc_file(pid_t pid, const char *file, const std::string &value,
                       const std::string &what);

// Write `pid` to `path` atomically; nothing when path is empty.
Status write_pid_file(const std::string &path, pid_t pid);

// The path of this process's binary (/proc/self/exe), or "" when it has
// none; in a sealed copy, the binary it was made from (set_own_binary_path).
std::string own_binary_path();
void set_own_binary_path(const std::string &path);

} // namespace ocirun
