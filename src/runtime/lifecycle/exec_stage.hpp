// CVE-2019-5736 without re-executing the runtime. The container's init is a
// fork of oci-run: until it execs, /proc/self/exe (its own, and
// /proc/<init>/exe for anyone who can see it) is the runtime's binary on the
// host. Where nothing else can see the init while it sets up, it needs no
// sealed runtime for that: only the exec must not come from the host binary
// (a `#!/proc/self/exe` entry point would run it in the container). So the
// init ends by exec'ing oci-run-exec-stage (src/exec_stage/) from a sealed
// memfd copy (runtime/lifecycle/sealed_binary.hpp), which waits for `start`, loads the last
// seccomp filters and execs the process. That is one small exec instead of
// the whole runtime's sealed re-execution before anything else.
//
// The stage is used when (exec_stage_for):
//  - the container has a new PID namespace (in a joined one, or the host's,
//    other processes could open /proc/<init>/exe while it sets up);
//  - no createContainer or startContainer hook runs in the container's
//    namespaces (a hook forked from the init could reach its binary);
//  - no seccomp filter goes in before the stage's exec (without
//    noNewPrivileges, or with a notify rule): the stage's own system calls
//    would be filtered by rules written for the container's process;
//  - the stage is installed: $OCI_RUN_EXEC_STAGE, else next to the running
//    oci-run (the same directory, or ../libexec/oci-run/ of its prefix),
//    else $libexecdir/oci-run/oci-run-exec-stage.
// Otherwise create and run re-execute from the sealed runtime, and the init
// execs the process itself.
//
// `exec` the same way (exec_stage_for_join): the runtime and its
// intermediate, which joins the container's namespaces, run from the host's
// binary while the container cannot see them (its PID namespace is not the
// runtime's); the intermediate execs the stage, and the stage forks the
// process into the container's PID namespace (runtime/lifecycle/exec.cpp has
// the steps). The intermediate is vfork'ed (unless it joins a time
// namespace): it runs on the runtime's memory, which waits, until its exec
// (no copy of the runtime's pages and no copy-on-write fault on either
// side), on what the runtime worked out beforehand, allocating nothing; the
// stage waits for the cgroup. Used when the container's PID namespace is not
// the runtime's, process.scheduler does not reset on fork (the stage forks
// after it is set), the container's user namespace (if any) does not map
// the runtime's uid or gid (open_join_stage), and the stage is installed;
// otherwise exec re-executes from the sealed runtime first, and its own
// child enters the container.
#pragma once

#include "oci/error.hpp"
#include "oci/fd.hpp"
#include "oci/spec.hpp"
#include "runtime/security/seccomp.hpp"

#include <string>
#include <vector>

namespace ocirun {

// The stage's path for this container, or "" (see above); decided from the
// spec alone, before anything is compiled or made. (A sandbox policy's guard
// filters none of the stage's system calls, wherever it goes in:
// seccomp-profiles/sandbox-guard.json.)
std::string exec_stage_for(const oci::Spec &spec);

// The init's side. Made before the init sets up (`view`: the sealed stage)
// and completed once the process is known (prepare_exec_stage).
struct ExecStage {
    Fd view;
    Fd filters; // the filters to load after start, or none
    std::vector<std::string> args;
};

// exec's decision (see above): the stage's path, or "". `runtime_mapped`:
// the container has a user namespace of its own in which this process's uid
// or gid is mapped (a rootless container): the stage's memory would belong
// to that namespace, where the container's CAP_SYS_PTRACE reaches it
// (open_join_stage).
std::string exec_stage_for_join(const oci::Process &p, bool pid_namespace_is_ours,
                                bool runtime_mapped);

// The sealed stage for exec: a memfd copy, execute-only, so that when the
// intermediate execs it in the container's user namespace the kernel counts
// it unreadable there and gives the new memory to the first namespace above
// where the copy's owner is mapped (the host's for a container whose user
// namespace does not map the runtime's uid), and a process in the container
// needs CAP_SYS_PTRACE there, not in its own namespace, to reach it.
Result<Fd> open_join_stage(const std::string &path);

// The filters the stage loads, in order, in a sealed memfd (the layout of
// exec_stage_protocol.hpp kFilters).
Result<Fd> stage_filters(const std::vector<const SeccompFilter *> &filters);

// A sealed copy of the stage at `path`.
Result<Fd> open_exec_stage(const std::string &path);

struct StageFds {
    int fifo_read = -1, fifo_write = -1, result = -1;
};

// The stage's arguments; `filters` are loaded by it after start, in order.
Status prepare_exec_stage(ExecStage &stage, const oci::Process &p,
                          const std::vector<const SeccompFilter *> &filters, StageFds fds);

// Exec the stage; returns only on failure.
Error enter_exec_stage(ExecStage &stage, const oci::Process &p, StageFds fds);

} // namespace ocirun
