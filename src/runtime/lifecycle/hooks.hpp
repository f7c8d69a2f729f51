// OCI hooks (config.json `hooks`): each hook runs with the container's state
// JSON on stdin, its timeout honoured, its output kept for the error message.
// Who calls which list, and where, follows runtime-spec "Lifecycle":
// prestart/createRuntime by the runtime and createContainer by the init during
// create, startContainer by the init after start, poststart by `start`,
// poststop by `delete`.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"

#include <string>
#include <vector>

namespace ocirun {

// Run `hooks` in order, in directory `cwd` ("": where the caller is). The
// first one that fails to start, exits non-zero, is killed or times out
// stops the list; its error reads
// "hooks.<kind>[i] <path>: exited with status N: <last output line>", or for
// one that could not be started "hooks.<kind>[i] <path>: exec <path>: <errno>".
Status run_hooks(const std::vector<oci::Hook> &hooks, const char *kind,
                 const std::string &state_json, const std::string &cwd = "");

// poststop: every hook runs even after one failed (runtime-spec Lifecycle
// step 13: a failure is logged as a warning and the rest still run).
void run_hooks_warning(const std::vector<oci::Hook> &hooks, const char *kind,
                       const std::string &state_json);

// Run one program the way a hook runs (`input` on stdin, output kept for the
// error, timeout honoured); errors start with `what`. The runtime's own helper
// programs (newuidmap, newgidmap) go through here too.
Status run_program(const oci::Hook &program, const std::string &what, const std::string &input,
                   const std::string &cwd = "");

// The same with nothing on stdin and `pass` as fds 3, 4, ...; the exit
// status and what it printed (stdout and stderr, the last 4 KiB) are the
// caller's to judge. A timeout or a signal is an error.
struct ProgramRun {
    int status = 0;
    std::string output;
};
Result<ProgramRun> run_program_status(const oci::Hook &program, const std::string &what,
                                      const std::vector<int> &pass);

} // namespace ocirun
