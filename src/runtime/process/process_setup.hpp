// Turning process.* of the spec into the running process's credentials,
// limits and program: shared by the container's init and by exec.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"

#include <sys/types.h>

namespace ocirun {

// A pty from the devpts on the container's /dev/pts (its ptmx, not what
// /dev/ptmx is in the rootfs): the master goes to the console
// socket over SCM_RIGHTS (as runc), the peer becomes stdio and the
// controlling terminal of the (new session's) process. The peer is owned by
// `uid` (its group the tty group devpts gives it), as runc; with
// `clear_onlcr` its output keeps "\n" as written (the runtime relays it to
// an output that is not a terminal, as runc's ClearONLCR).
Status attach_terminal(int console_fd, const std::optional<oci::Box> &size, uint32_t uid,
                       bool clear_onlcr);
// Its first half: the pty made, its master sent; returns the peer (open
// across exec), which attach_terminal then makes stdio and the controlling
// terminal (the exec stage does that part itself).
Result<int> open_terminal(int console_fd, const std::optional<oci::Box> &size, uint32_t uid,
                          bool clear_onlcr);

// The null-terminated char* array execve takes, pointing into `strings`.
std::vector<char *> exec_strings(const std::vector<std::string> &strings);

// PR_SET_DUMPABLE, read back with PR_GET_DUMPABLE: an error when the kernel
// did not take it (a process the container can see must never stay dumpable
// by mistake).
Status set_dumpable(bool on);
// PR_SET_PDEATHSIG (0 clears it), checked.
Status set_death_signal(int sig);

// Every signal's disposition back to the default and the signal mask
// emptied (an exec keeps what is ignored and what is blocked: under conmon
// SIGPIPE would stay ignored in the container's process). Before the
// container's filter, like everything the runtime does itself.
Status reset_signals();

// Every CPU back in the affinity mask (the kernel keeps it within the
// cgroup's cpuset): the container's process does not inherit the caller's
// pinning (as runc since 1.2).
Status reset_cpu_affinity();
// `cpus` (every CPU when empty) as the affinity of `pid` (0: this process).
Status set_cpu_affinity(pid_t pid, const std::vector<unsigned> &cpus, const std::string &what);
// An exec'd process's affinity once it is in the container's cgroup
// (runtime-spec 1.2.1 process.execCPUAffinity): `final`, else what
// `initial` left (the kernel keeps it within the cpuset), else every CPU.
Status apply_final_cpu_affinity(const oci::Process &p);
// The same as a set: none to leave it as it is, every CPU the machine has,
// or `final`'s (as oci::bit_mask makes it).
Result<std::optional<std::vector<unsigned long>>> final_cpu_mask(const oci::Process &p);
// process.execCPUAffinity.initial's CPUs, or none (not set).
Result<std::optional<std::vector<unsigned>>> initial_cpus(const oci::Process &p);
// process.scheduler (sched_setattr) and process.ioPriority (ioprio_set) on
// this process, before its identity change (a real-time policy needs
// CAP_SYS_NICE in the host's user namespace).
Status apply_scheduling(const oci::Process &p);
// linux.memoryPolicy (runtime-spec 1.3): set_mempolicy(2) on this process,
// which its children and its exec keep; for the init and exec'd processes.
Status set_memory_policy(const std::optional<oci::MemoryPolicy> &m);
// The same in two steps: what set_mempolicy gets, then the call (which
// allocates nothing unless it fails: exec's vfork'ed intermediate).
struct MemoryPolicyPlan {
    const oci::MemoryPolicy *policy = nullptr; // none: nothing to set
    int mode = 0;
    std::vector<unsigned long> mask;
};
Result<MemoryPolicyPlan> memory_policy_plan(const std::optional<oci::MemoryPolicy> &m);
Status apply_memory_policy(const MemoryPolicyPlan &plan);
// linux.personality's execution domain, for the init and for exec'd
// processes alike.
Status set_personality(const std::optional<oci::Personality> &p);
// personality(2)'s value for linux.personality (PER_LINUX32 or PER_LINUX).
unsigned long persona_of(const oci::Personality &p);

// HOME, where process.env has none or an empty one: the home directory of
// process.user.uid in the container's /etc/passwd, else "/" (as runc).
// Called inside the container's root, before the identity change; or from
// outside, with `root_fd` the container's root (O_PATH) to read it below.
void set_home(oci::Process &p, int root_fd = -1);

// rlimits (before dropping privileges): all, or all but RLIMIT_NPROC, or
// only that one (which a fork checks against the forking process's user).
enum class Rlimits { all, but_nproc, nproc };
Status apply_rlimits(const oci::Process &p, Rlimits which = Rlimits::all);
// Whether setgroups(2) is denied in the user namespace of `pid` (0: this
// process; /proc/PID/setgroups), where a rootless self-mapping has no groups.
bool setgroups_denied(pid_t pid = 0);
// Bounding set, groups, gid, uid, then capability sets and no_new_privs.
Status apply_identity(const oci::Process &p);
// umask, cwd (checked to be inside the container's root: CVE-2024-21626).
// As runc, first before the identity change (a uid that cannot search the
// path still starts there); with `may_retry`, a chdir refused then (EACCES,
// EPERM: a directory only the process's uid may enter, where root's
// capabilities do not reach) returns false, to be tried again after it.
Result<bool> apply_cwd_umask(const oci::Process &p, bool may_retry);
// Close every fd from 3 + preserve on exec.
Status mark_fds_cloexec(int preserve_fds);
// Look the program up as exec_process will (PATH from the process env),
// so a missing or non-executable program fails `create`, as in runc, and
// not only `start`.
Status find_executable(const oci::Process &p);
// The process's PATH (or the default), and the files exec_process tries for
// args[0], in order: the name itself when it has a slash (dirs is then "").
struct ExecCandidates {
    std::string dirs;
    std::vector<std::string> files;
};
ExecCandidates exec_candidates(const oci::Process &p);
// Look args[0] up in the process's PATH and execve; returns only on error.
Error exec_process(const oci::Process &p);

} // namespace ocirun
