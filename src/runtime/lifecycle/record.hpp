// The record oci-run keeps per container in `<root>/<id>/state.json`: the
// OCI state plus what later commands need to find the container's processes,
// cgroups, helper and filesystem rules again without trusting a bare PID.
// The runtime's own (the OCI model in oci/ knows nothing of it); read back,
// it is untrusted input: store.cpp and its callers check what it names.
#pragma once

#include "oci/error.hpp"
#include "oci/state.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

namespace json {
class Writer;
}

// A filesystem rule of the sandbox policy as the container's init resolved
// it (runtime/filesystem/fs_policy.hpp), with the other ways to its object the init
// found (report mode only: strict refuses them). `report` tries each.
struct FsWayRecord {
    std::string path, how;
};
struct FsRuleRecord {
    std::string kind; // deny, deny-write, deny-rename
    std::string path, resolved;
    bool made = false; // a placeholder
    std::vector<FsWayRecord> ways;
};
// A directory the init made for a placeholder, as the host sees it: delete
// removes it if it is still that directory, and empty.
struct PlaceholderRecord {
    std::string path;
    uint64_t dev = 0, ino = 0;
};

// What the runtime persists: the OCI state plus what later commands need to
// find the container's processes again without trusting a bare PID.
struct ContainerRecord {
    oci::State state;
    uint64_t init_start_time = 0;         // /proc/PID/stat field 22, guards against PID reuse
    std::string created;                  // RFC 3339 UTC
    std::string rootfs;                   // absolute host path
    uint32_t owner = 0;                   // uid that created it
    bool started = false;                 // `start` has released the init
    bool has_hooks = false;               // config.json has hooks: start/delete read it back
    std::vector<std::string> cgroup_dirs; // the container's cgroup, one directory per hierarchy
    std::string cgroups_path;             // linux.cgroupsPath as configured ("" for the default)
    bool cgroups_path_recorded = false;   // false in a record older than the field
    // --systemd-cgroup: cgroups_path is "slice:prefix:name", the cgroup the
    // scope systemd made for it (runtime/cgroups/systemd_unit.hpp).
    bool systemd_cgroup = false;
    bool systemd_user = false; // that scope is the user's manager's (rootless)
    uint64_t init_pidns = 0;   // the inode of the init's PID namespace (0: unknown)
    bool own_pidns = false;    // the init is PID 1 of a PID namespace made for it
    // The two pipes `start` reaches through /proc/PID/fd (start.cpp): the
    // init's fd numbers for them and their inodes. 0 in a record from before
    // them, whose init waits on exec.fifo and start.fifo in the state
    // directory instead.
    uint32_t release_fd = 0, result_fd = 0;
    uint64_t release_pipe = 0, result_pipe = 0;
    bool sandboxed = false;                      // config.json has a sandbox policy (dev.ocirun.*)
    std::vector<FsRuleRecord> fs_rules;          // its filesystem rules, as the init found them
    std::vector<PlaceholderRecord> placeholders; // parents first
    bool trace = false;                          // dev.ocirun.trace: start attaches strace
    int32_t shim_pid = 0;                        // the network helper (oci-run-shim), or 0
    uint64_t shim_start_time = 0;                // its /proc/PID/stat field 22
    // A network namespace joined by path (a pod's): its identity, whether
    // this container's create installed its firewall (and so is the pod's
    // network owner), or else the owner whose network policy it holds.
    uint64_t netns_dev = 0, netns_ino = 0;
    bool firewall = false;
    std::string network_owner;
    // The dev.ocirun.* annotations its policy was made of, when they are not
    // config.json's alone (the runtime configuration's baseline, its pod's
    // network policy): exec, start and report use these.
    bool policy_recorded = false;
    oci::StringMap policy_keys;
};

// Whether a process of the container can outlive its init, so that what a
// stopped container's cgroup holds may be its own (delete kills it, kill
// --all signals it, ps lists it, as runc). Not when no init was ever
// recorded (create names it before it may run anything of the
// container's), nor when the init was PID 1 of a PID namespace made for it: the
// kernel ends every process of that namespace with it, and whatever is in
// the cgroup then came from elsewhere (another container that reused the
// empty cgroup, as runc allows).
inline bool outlives_init(const ContainerRecord &rec) {
    return rec.state.pid > 0 && !rec.own_pidns;
}

std::string write_record(const ContainerRecord &rec);
// The same into `w` (written out from w.view(), without a copy).
void write_record(json::Writer &w, const ContainerRecord &rec);
Result<ContainerRecord> parse_record(std::string_view text);

} // namespace ocirun
