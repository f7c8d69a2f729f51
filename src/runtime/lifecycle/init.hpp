// The container's init, child side: everything that runs inside the new
// namespaces before the user's program. One function per step; run_init reads
// as the checklist.
#pragma once

#include "oci/spec.hpp"
#include "runtime/filesystem/host_reach.hpp"
#include "runtime/filesystem/rootfs.hpp"
#include "runtime/security/seccomp.hpp"

#include <string>
#include <vector>

namespace ocirun {

struct InitConfig {
    const oci::Spec *spec = nullptr;
    const SeccompFilter *seccomp = nullptr;       // compiled by the runtime, or null
    const SeccompFilter *guard = nullptr;         // the sandbox guard (a policy is present)
    const std::vector<MountOp> *mounts = nullptr; // planned by the runtime
    std::string id;                               // container ID and absolute bundle path, for the
    std::string bundle;                           // state that hooks read on stdin
    std::string rootfs;                           // absolute host path
    int rootfs_fd = -1; // the rootfs the runtime opened and checked (O_PATH)
    // What no mount may reach (runtime/filesystem/host_reach.hpp), for binds whose source
    // path now leads to another object than the one the runtime checked.
    const std::vector<ReachGuard> *reach_guards = nullptr;
    // With a sandbox policy and binds: the guards' files with other names,
    // which those binds must not show writable (the same binds).
    const LinkedFiles *linked_files = nullptr;
    int sync_fd = -1;          // to the runtime
    int fifo_read_fd = -1;     // exec fifo: blocks until `start` writes
    int fifo_write_fd = -1;    // held so the read above blocks instead of seeing EOF
    int console_fd = -1;       // connected --console-socket, or -1
    bool clear_onlcr = false;  // the runtime relays the pty to an output that is not a terminal
    int cgroup_fd = -1;        // the v2 cgroup directory fd clone3 used: closed first thing
    int start_result_fd = -1;  // start fifo (O_RDWR, CLOEXEC): `start` reads EOF
                               // once the process is exec'd, or an error line
    bool create_hooks = false; // ask the runtime to run hooks before pivot_root
    int preserve_fds = 0;      // fds 3..3+N-1 pass through
    bool new_userns = false;
    bool in_userns = false;    // new or joined: devices are bound, not made
    bool report_pid = false;   // the init is a grandchild: say hello so the
                               // runtime learns its PID from SCM_CREDENTIALS
    bool new_timens = false;   // unshared by the init so offsets can be written first
    bool new_cgroupns = false; // unshared once in the container's cgroup, so that is its root
    bool no_pivot = false;
    bool no_new_keyring = false;
    std::vector<std::pair<int, int>> join_ns; // (fd, CLONE_NEW*) joined by path
    bool passes_sources = false;        // the runtime sends the binds' sources (Msg::bind_source)
    bool lock_mounts = false;           // a sandbox policy masks paths: lock them (nested user ns)
    bool dumpable_until_start = false;  // an unprivileged runtime without the stage: see create.cpp
    bool policy_strict = true;          // dev.ocirun.enforcement: another way to a rule's object
                                        // refuses the container (else it is reported)
    bool loopback_up = false;           // a new netns: bring its lo up
    std::vector<uint16_t> listen_ports; // listen on 127.0.0.1:PORT, pass each to the runtime
    uint16_t dns_port =
        0; // then a UDP socket and a TCP listener on 127.0.0.1:PORT (the DNS stub's)
    std::string exec_stage; // the stage that execs the process (runtime/lifecycle/exec_stage.hpp),
                            // or "": the init execs it (the runtime runs sealed)
};

// Never returns: execs the process or exits after reporting the error.
[[noreturn]] void run_init(const InitConfig &cfg);

// For a user namespace joined by path: this intermediate process joins it
// (becoming uid 0 there), unshares the other new namespaces (`flags`) so that
// they belong to it, and forks the init as a sibling (CLONE_PARENT, with the
// new PID namespace). Namespaces created by the runtime's own clone would be
// owned by the host's user namespace instead.
// With `userns_fd` -1 (a new user namespace, in `flags`): it joins the
// namespaces joined by path first, as the host's root (runc's order: the new
// user namespace owns none of them, so its root could not join them), then
// clones the init into the new ones.
// `pidns_fd`: a PID namespace joined by path, with `userns_fd`, for the init
// to be born in (-1: none, or the runtime entered it itself). One the joined
// user namespace owns is entered from it: an unprivileged runtime has no
// capability over it from the host's.
[[noreturn]] void spawn_init_in_user_ns(const InitConfig &cfg, int userns_fd, int pidns_fd,
                                        unsigned long flags);

// Whether the init is spawned through spawn_init_in_user_ns.
bool spawns_through_intermediate(const InitConfig &cfg, int userns_fd);

} // namespace ocirun
