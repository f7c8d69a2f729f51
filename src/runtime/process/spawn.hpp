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
    // A v2 cgroup directory it is born in (clone_into_cgroup); entered as
    // those in `cgroups` where it cannot be. In `cgroups` a directory with
    // a tasks file (v1) is entered by writing 0 there, which spares the
    // kernel's wait for an RCU grace period (runtime/cgroups/cgroup.hpp
    // join_self); cgroup.procs otherwise.
    std::string born_in;
    // Its own session and not the caller's child: a grandchild whose parent
    // exits at once (init or a subreaper reaps it). Otherwise the caller's
    // child, for the caller to reap.
    bool detach = false;
    // RLIMIT_FSIZE for the program, with SIGXFSZ ignored; 0: as ours.
    long max_file_size = 0;
    // Not 0: the program runs as nobody (kNobody) with this one capability
    // (CAP_SYS_PTRACE for strace), ambient, and no other.
    int as_nobody_with = 0;
};

inline constexpr unsigned kNobody = 65534;

// A child (clone `flags`, exit signal SIGCHLD) born in the v2 cgroup
// `cgroup_fd` (clone3 CLONE_INTO_CGROUP), so that it is accounted there from
// its first page and no write to cgroup.procs moves it (join_self says why
// that matters). Where that cannot be (no clone3 or CLONE_INTO_CGROUP, or
// pids.max refuses a birth: EAGAIN, a limit of 0 in runtime-spec 1.3), or
// `cgroup_fd` is -1, a plain clone, which the caller then moves in (a move
// pids.max does not limit, as runc places its init). `born_in`: whether the
// child was born in the cgroup. Returns as clone does.
long clone_into_cgroup(unsigned long flags, int cgroup_fd, bool &born_in);

// The program's PID once its exec succeeded. Errors start with `what`; a
// child that failed has been reaped.
Result<pid_t> spawn_program(const SpawnSpec &s, const std::string &what);

} // namespace ocirun
