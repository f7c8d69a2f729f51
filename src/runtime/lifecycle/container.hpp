// Container lifecycle, runtime side: the library calls behind create, start,
// run, state, kill, delete and list.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"
#include "oci/state.hpp"

#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ocirun {

struct CgroupHost; // runtime/cgroups/cgroup_host.hpp

struct CreateOptions {
    std::string root;
    std::string id;
    std::string bundle = ".";
    std::string pid_file;
    std::string console_socket;
    int console_fd = -1; // instead of console_socket: a connected socket (run in the foreground)
    bool clear_onlcr = false; // the relay's output is not a terminal: "\n" stays "\n"
    // The pty's size when config.json gives none (run in the foreground: the
    // caller's terminal's, set before the process runs).
    std::optional<oci::Box> console_size;
    bool no_pivot = false;
    bool no_new_keyring = false;
    int preserve_fds = 0;
    // --rootless: a cgroup only when the configuration asks for one (limits
    // or cgroupsPath), as an unprivileged user without a delegated subtree
    // needs; otherwise every container gets one.
    bool rootless = false;
    // --systemd-cgroup: the cgroup is a transient scope systemd makes
    // (runtime/cgroups/systemd_unit.hpp), linux.cgroupsPath "slice:prefix:name".
    bool systemd_cgroup = false;
    // --cgroup-manager disabled: no cgroup at all (a limit is refused).
    bool no_cgroup = false;
    // CVE-2019-5736 (runtime/lifecycle/exec_stage.hpp): `sealed` when this process
    // already runs from a sealed view of the runtime. Otherwise the init
    // execs the process through the exec stage where it can, and `reseal`
    // (which returns only on failure) re-executes this process sealed where
    // it cannot.
    bool sealed = true;
    std::function<Error()> reseal;
};

// Set everything up and leave the init waiting for start. Returns its PID.
Result<pid_t> create_container(const CreateOptions &opts);
Status start_container(const std::string &root, const std::string &id);

// create + start; in the foreground wait for the init and return its exit
// status (128 + signal when killed), removing the container unless `keep`.
Result<int> run_container(const CreateOptions &opts, bool detach, bool keep);

// The OCI state with the status derived from the live process.
Result<oci::State> container_state(const std::string &root, const std::string &id);

Status kill_container(const std::string &root, const std::string &id, int sig, bool all);

// Freeze / thaw every process of a running container (its cgroup's freezer).
Status pause_container(const std::string &root, const std::string &id);
Status resume_container(const std::string &root, const std::string &id);

// Host PIDs of every process in the container's cgroup.
Result<std::vector<pid_t>> container_pids(const std::string &root, const std::string &id);
// The init of the container a foreground run made, as create recorded it.
struct RunInit {
    pid_t pid = 0;
    uint64_t start_time = 0;
};

// `known`: the container's config.json as the caller read it already (run),
// or null: read from the state directory where its poststop hooks need it.
// `known_host`: the cgroup hierarchies as the caller found them (run), or
// null: read from the mount table. `made` (run's): only while the record
// still names that init; a container made under the ID since (deleted and
// made again by another command) is left, with a warning.
Status delete_container(const std::string &root, const std::string &id, bool force,
                        const oci::Spec *known = nullptr, const CgroupHost *known_host = nullptr,
                        const RunInit *made = nullptr);

struct ContainerInfo {
    oci::State state;
    std::string created;
    uint32_t owner = 0;
};
Result<std::vector<ContainerInfo>> list_containers(const std::string &root);

} // namespace ocirun
