// What the lifecycle's files share (create.cpp, start.cpp, container.cpp):
// the state directory's fifos, run's start channel, and the record helpers
// every command uses. Internal to runtime/lifecycle/; the commands are in
// container.hpp.
#pragma once

#include "oci/fd.hpp"
#include "oci/spec.hpp"
#include "oci/state.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/lifecycle/container.hpp"
#include "runtime/lifecycle/record.hpp"
#include "runtime/lifecycle/store.hpp"

#include <sys/types.h>

#include <optional>
#include <string>

namespace ocirun {

// The exec fifo and start fifo are pipes the init holds, which `start`
// opens through /proc/PID/fd (create.cpp open_channels, start.cpp). A record
// from before that (no releasePipe) has them in the state directory:
inline constexpr const char *kFifo = "exec.fifo"; // init blocks on it until `start`

inline constexpr const char *kStartFifo = "start.fifo"; // init -> `start`: EOF at exec, or an error

inline constexpr const char *kTraceLog = "trace.log"; // dev.ocirun.trace: strace's output
inline constexpr long kTraceLogMax = 8L << 20;        // bytes strace may write to it

// run starts the container itself: instead of the exec and start fifos,
// which a separate `start` opens, a socket and a pipe it holds (with the
// socket, an init that dies before start makes the release fail with
// EPIPE).
struct StartHere {
    Fd release;          // one byte releases the init
    Fd result;           // EOF once the process is exec'd, or "ERRNO TEXT"
    ContainerRecord rec; // as create left it, for start under the same lock
    // The running record, written while the init sets up (not with a network
    // helper, whose PID comes later): start only renames it into place.
    std::optional<oci::StagedFile> running;
    // config.json as create wrote it to the state directory: run reads it
    // once, for start's hooks and policy and delete's poststop hooks.
    std::optional<oci::Spec> spec;
    // The cgroup hierarchies create found, for delete.
    CgroupHost host;
};

// The state hooks read on stdin.
std::string hook_state(const ContainerRecord &rec, oci::ContainerStatus status);
// poststop failures are warnings (runtime-spec Lifecycle step 13).
void run_poststop(const oci::Spec &spec, const ContainerRecord &rec);
// Status from the live process, never from the record alone.
// `host` is needed only for a record with cgroup directories (paused).
oci::ContainerStatus live_status(const ContainerDir &dir, const CgroupHost &host,
                                 const ContainerRecord &rec);
// The record's init, and with `members` every other process of its own PID
// namespace, signalled only when it is the container's: the process that
// started at the recorded time and, when the record has a cgroup, is in it
// (the PID is read back from the state directory).
Status signal_init(const CgroupHost &host, const ContainerRecord &rec, int sig,
                   bool members = false);
// That check alone (ESRCH when it fails): the record's init is in the
// record's cgroup, or is PID 1 of the PID namespace recorded.
Status check_init_is_the_containers(const CgroupHost &host, const ContainerRecord &rec);
// The host's hierarchies when the record has a cgroup (else an empty map),
// with the record's cgroup checked to be the container's own before any
// command acts on it. `known`: the hierarchies as this process found them
// already (run's create), or null: read from the mount table.
Result<CgroupHost> host_for(const ContainerRecord &rec, const CgroupHost *known = nullptr);
// A record as start writes it (create stages run's from the same function).
void mark_running(ContainerRecord &rec);
// The placeholder directories the init made (deepest first), each only if
// it is still the directory recorded and empty.
void remove_placeholders(const ContainerRecord &rec);

// create.cpp: the container made in `dir` (validate, plan, apply); with
// `here`, run's start channel instead of the fifos.
Result<pid_t> create_impl(const CreateOptions &o, ContainerDir &dir, StartHere *here = nullptr);
// start.cpp: release the init of a created container, under its lock.
Status start_locked(ContainerDir &dir, StartHere *here = nullptr);
// container.cpp: delete with the container's directory already open and
// locked; `known`, `known_host`, `made`: as delete_container's.
Status remove_container(ContainerDir &dir, bool force, const oci::Spec *known = nullptr,
                        const CgroupHost *known_host = nullptr, const RunInit *made = nullptr);

} // namespace ocirun
