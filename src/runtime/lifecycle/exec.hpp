// exec: a new process inside a running container, joining all its
// namespaces (user first) and taking its security settings.
#pragma once

#include "oci/error.hpp"
#include "oci/fd.hpp"
#include "oci/spec.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ocirun {

struct ExecOptions {
    std::string root, id;
    std::string process_file; // --process
    std::vector<std::string> args;
    bool tty = false;
    std::string console_socket;
    bool detach = false;
    std::string pid_file;
    std::vector<std::string> env;
    std::string cwd;
    std::optional<uint32_t> uid, gid; // --user UID[:GID]; the config's gid without GID
    std::vector<std::string> caps;
    bool no_new_privs = false;
    bool ignore_paused = false; // exec into a frozen cgroup anyway (the process waits there)
    int preserve_fds = 0;
    std::vector<uint32_t> additional_gids;
    // CVE-2019-5736 (runtime/lifecycle/exec_stage.hpp): `sealed` when this
    // process already runs from a sealed view of the runtime. Otherwise the
    // process is forked by the exec stage where it can be, and `reseal`
    // (which returns only on failure) re-executes this process sealed where
    // it cannot.
    bool sealed = true;
    std::function<Error()> reseal;
};

// Returns the process's exit status (128 + signal), or 0 once started with detach.
Result<int> exec_in_container(const ExecOptions &o);

// The namespaces of the container's init, in the order a process joins them
// to end up where the init is (user first; with `nested`, a sandbox
// policy's masks, the nested user namespace right before the mount one).
// Not the PID namespace, which applies to children.
struct NamespaceFd {
    Fd fd;
    int flag; // CLONE_NEW*
};
Result<std::vector<NamespaceFd>> container_namespaces(pid_t init, const oci::Linux &lx,
                                                      bool nested);

} // namespace ocirun
