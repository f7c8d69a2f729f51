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
// Otherwise create and run re-execute from the sealed runtime, as exec
// always does, and the init execs the process itself.
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
