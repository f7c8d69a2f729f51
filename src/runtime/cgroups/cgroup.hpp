// One container's cgroup: a directory in every hierarchy the host has
// (runtime/cgroups/cgroup_host.hpp), made at create, filled with linux.resources
// (runtime/cgroups/cgroup_plan.hpp), joined by the init and by exec'd processes, and
// removed at delete after whatever still runs in it is killed.
#pragma once

#include "oci/fd.hpp"
#include "oci/state.hpp"
#include "runtime/cgroups/cgroup_host.hpp"
#include "runtime/cgroups/cgroup_plan.hpp"
#include "runtime/cgroups/systemd_unit.hpp"
#include "runtime/lifecycle/record.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace ocirun {

// Where the container's cgroup goes, one directory per hierarchy:
// cgroupsPath "/a/b" is absolute in each hierarchy; "a/b" is relative to this
// process's cgroup (v1) or to its parent (v2, whose own cgroup has processes
// and so cannot enable controllers for a child: runc does the same); empty
// means "oci-run/<id>" relative. ".." is refused.
Result<std::vector<std::string>>
cgroup_dirs_for(const CgroupHost &host, const std::string &cgroups_path, const std::string &id);

// A v1 hierarchy with the cpuset controller alone. The first cgroup made in
// one flips a kernel static key machine-wide (text patching on every CPU,
// milliseconds; again when the last is removed), so a container that takes
// the default path (oci-run/<id> under the caller's cgroup) and sets no cpus
// or mems has no cpuset cgroup of its own: it stays in the caller's, which its
// own would only copy. `update` adds one when it sets cpus or mems.
bool v1_cpuset_only(const Hierarchy &h);

// Drop the directory in such a hierarchy from `dirs`.
void leave_out_v1_cpuset(const CgroupHost &host, std::vector<std::string> &dirs);

// The directory of `pid`'s cgroup in v1 hierarchy `h`, or "" (no such process).
std::string v1_dir_of(const Hierarchy &h, pid_t pid);

// For a container without a cpuset cgroup of its own: the init's cpuset
// cgroup (the create caller's), which exec'd processes join too; "" when the
// host has no v1 hierarchy of cpuset alone or `dirs` has a directory in it.
std::string borrowed_v1_cpuset(const CgroupHost &host, const std::vector<std::string> &dirs,
                               pid_t init);

// Make `cpuset_dir` (in such a hierarchy; recorded by the caller first) if it
// is not there yet, and move every process of the container (`dirs`, the
// cgroup it has elsewhere) into it, frozen meanwhile so that none forks past
// the move; thawed again on every way out (unless it was paused before).
// Safe to repeat after a failure.
Status add_v1_cpuset(const CgroupHost &host, const std::vector<std::string> &dirs,
                     const std::string &cpuset_dir);

// Make the directories (an existing leaf is reused only when empty and
// thawed, as runc does; else refused: it is someone else's), enable on v2 the
// controllers `writes` need, inherit cpuset.cpus/mems on v1, then apply
// `writes`. On error, removes what it made.
// `all`: the container's directories when `dirs` are some of them, made in
// two steps: a write for a hierarchy of another of them is that step's.
Status create_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs,
                     const std::vector<CgroupWrite> &writes,
                     const std::vector<std::string> *all = nullptr);

// Apply writes to an existing cgroup (update). `all`: as for create_cgroup.
Status apply_cgroup_writes(const CgroupHost &host, const std::vector<std::string> &dirs,
                           const std::vector<CgroupWrite> &writes,
                           const std::vector<std::string> *all = nullptr);

// The container's directory in the v2 hierarchy, or "" (for CLONE_INTO_CGROUP).
std::string unified_dir(const CgroupHost &host, const std::vector<std::string> &dirs);

// `path`, a file or directory in one of `host`'s hierarchies, opened
// (O_CLOEXEC added) below the hierarchy's mount, which a process opens once:
// each lookup through sysfs or a hierarchy waits on a lock that other
// containers' creates take for writing. A path outside them is opened as is.
Fd open_in_cgroup(const CgroupHost &host, const std::string &path, int flags);
// Close those mounts (opened again when next needed): before a process is
// cloned that runs in the container before it execs (the init, exec's
// child), which must not hold the host's directories (CVE-2024-21626).
void close_cgroup_mounts();

// Move `pid` into every directory (cgroup.procs).
Status enter_cgroup(const std::vector<std::string> &dirs, pid_t pid);

// A process that moves itself into a v1 hierarchy's cgroup: its `tasks`
// file, opened here for writing (the kernel checks the opener's
// credentials), into which the process writes "0" (join_self). Moving the
// writer's own thread is the one migration the kernel makes without its
// global cgroup_threadgroup_rwsem, whose write side waits for an RCU grace
// period whenever the lock was idle: 10-30 ms on an idle 2-vCPU VM, paid by
// every write to cgroup.procs. For a single-threaded process only (the
// others of a thread group would stay behind).
Result<Fd> open_tasks(const CgroupHost &host, const std::string &dir);
// In the process to move: "0" into `tasks_fd`; errors name `dir`.
Status join_self(int tasks_fd, const char *dir);

// Host PIDs of every process in the container's cgroup and the cgroups the
// container made below it (not the helper's).
Result<std::vector<pid_t>> cgroup_pids(const CgroupHost &host,
                                       const std::vector<std::string> &dirs);

// Signal every process in it (SIGKILL through cgroup.kill where v2 has it).
Status signal_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs, int sig);

// Freeze or thaw (v1 freezer, v2 cgroup.freeze), waiting until done.
Status freeze_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs, bool frozen);
bool cgroup_frozen(const CgroupHost &host, const std::vector<std::string> &dirs);

// The helpers' cgroup (the network helper's, and dev.ocirun.trace's
// strace): a child of the container's, in the v2 hierarchy and the v1
// memory and pids ones, so that their memory (relay pipes, socket buffers)
// and tasks are charged to the container's limits
// (a cgroup without controllers of its own is charged to its parent). Not
// in cpuset (a child needs cpus and mems of its own), devices or freezer
// on v1. cgroup.procs of the container's cgroup does not list it.
inline constexpr const char *kHelperCgroup = "oci-run-helper";
std::vector<std::string> helper_cgroup_dirs(const CgroupHost &host,
                                            const std::vector<std::string> &dirs);

// The helpers' cgroup below the container's `dirs`, made (one already there
// is kept: the network helper's, which dev.ocirun.trace's strace joins), and
// `s` placed in it: born in its v2 directory, entering the v1 ones before
// its exec. `what` names the helper in errors.
struct SpawnSpec;
Status place_in_helper_cgroup(SpawnSpec &s, const CgroupHost &host,
                              const std::vector<std::string> &dirs, const std::string &what);

// Kill what is left, wait for it, remove every directory (the cgroups below
// it first, the helper's and any the container made, deepest first; and the
// default "oci-run" parent once it is empty). Missing directories are not
// errors. With `kill_left` false nothing is signalled (what is left cannot
// be the container's: outlives_init in lifecycle/record.hpp), and a cgroup
// that does not empty within a second stays, an error naming it.
Status destroy_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs,
                      bool kill_left = true);

// The record's cgroup directories, checked before anything acts on them
// (the record is read back from the state directory): each below a
// hierarchy of this host (never its root, no ".."), named by the container's
// cgroupsPath (absolute, or relative under any parent; oci-run/<id> by
// default; a systemd scope's slice and unit, below a user's manager's
// cgroup in its), never holding this process's own cgroup. An error names
// the directory and why.
Status check_own_cgroup(const CgroupHost &host, const ContainerRecord &rec);

// An error unless `pid` is in each of `dirs` (where someone else put it:
// systemd).
Status check_in_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs, pid_t pid);

// The systemd scope a container's record names (--systemd-cgroup: its
// cgroupsPath, in the manager it was made in); errors name the state file.
Result<SystemdScope> recorded_scope(const ContainerRecord &rec);

// The record's init is in every one of its cgroup directories: only then is
// the PID read back from the state directory the container's to signal (an
// exiting init, already out of its cgroups, is not signalled either).
bool init_in_cgroup(const CgroupHost &host, const ContainerRecord &rec);
// Or: it is PID 1 of the PID namespace recorded as the init's at create,
// which is not this process's own (an init that moved out of its cgroup is
// still the container's; a host process is never excused this way).
bool init_in_own_pid_namespace(const ContainerRecord &rec);

// The hierarchy a directory belongs to (by mount point), or nullptr.
const Hierarchy *hierarchy_of(const CgroupHost &host, const std::string &dir);

} // namespace ocirun
