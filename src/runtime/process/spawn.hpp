// The one way the runtime starts another program (hooks, newuidmap, the
// network helper, strace, ps): the child's fds are exactly stdio plus the
// ones passed, at 3, 4, ... in order (everything else is closed on exec), its
// signal mask and dispositions are the defaults, and every step that fails
// in the child (entering a cgroup, an fd move, chdir, the exec itself) comes
// back to the caller as an error with its errno, through a close-on-exec
// pipe that reads EOF once the exec succeeded.
#pragma once

#include "oci/error.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace ocirun {

struct SpawnSpec {
    std::string path;              // the program; looked up in PATH when `search` and it has no '/'
    bool search = false;           //
    std::vector<std::string> args; // argv; empty: {path}
    const std::vector<std::string> *env = nullptr; // exactly this environment; null: ours
    int in = -1, out = -1, err = -1;               // stdio; -1: /dev/null
    std::vector<int> pass;                         // become fds 3, 4, ... in this order
    std::string cwd;                               // "": where the caller is
    std::vector<std::string> cgroups;              // cgroup directories it enters first
    // Its own session and not the caller's child: a grandchild whose parent
    // exits at once (init or a subreaper reaps it). Otherwise the caller's
    // child, for the caller to reap.
    bool detach = false;
};

// The program's PID once its exec succeeded. Errors start with `what`; a
// child that failed has been reaped.
Result<pid_t> spawn_program(const SpawnSpec &s, const std::string &what);

} // namespace ocirun
